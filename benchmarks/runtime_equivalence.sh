#!/bin/bash
# Retrieval before and after a change, and with each embedder runtime: HotpotQA-100 built from scratch per
# runtime (ingest + enrich kg fast), then naive/larag/kg/ppr at k 2,5,10, compared record by record.
#   bash benchmarks/runtime_equivalence.sh OUT_DIR [BASE_COMMIT]
# With BASE_COMMIT, the same is run first on that commit (a git worktree, torch embedder: the only runtime
# before ONNX) and each runtime's run is compared with it (benchmarks/same_retrieval.py).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: runtime_equivalence.sh OUT_DIR [BASE_COMMIT]}
BASE=${2:-}
QA=examples/hotpotqa/qa.jsonl
CORPUS=examples/hotpotqa/corpus.jsonl
mkdir -p "$OUT"
build_and_eval() {  # name, source tree, extra env
  local name=$1 tree=$2
  ( cd "$tree" && PYTHONPATH="$tree" "$OLDPWD/.venv/bin/python" -m neoweave.cli --data-dir "$OUT/graph-$name" ingest "$OLDPWD/$CORPUS" --no-progress --json > "$OUT/$name-ingest.json"
    PYTHONPATH="$tree" "$OLDPWD/.venv/bin/python" -m neoweave.cli --data-dir "$OUT/graph-$name" enrich kg --no-progress --json > "$OUT/$name-kg.json"
    PYTHONPATH="$tree" "$OLDPWD/.venv/bin/python" -m neoweave.cli --data-dir "$OUT/graph-$name" eval --qa "$OLDPWD/$QA" --strategies naive,larag,kg,ppr --k 2,5,10 --out "$OUT/eval-$name"
    PYTHONPATH="$tree" "$OLDPWD/.venv/bin/python" -m neoweave.cli --data-dir "$OUT/graph-$name" server stop )
}
if [ -n "$BASE" ]; then
  git worktree add -f "$OUT/tree-base" "$BASE" >/dev/null
  build_and_eval base "$OUT/tree-base"
fi
for runtime in torch onnx; do
  NEOWEAVE_EMBEDDING_RUNTIME=$runtime build_and_eval "$runtime" "$PWD"
done
for runtime in torch onnx; do
  [ -n "$BASE" ] && .venv/bin/python benchmarks/same_retrieval.py "$OUT/eval-base" "$OUT/eval-$runtime"
done
.venv/bin/python benchmarks/same_retrieval.py "$OUT/eval-torch" "$OUT/eval-onnx"
