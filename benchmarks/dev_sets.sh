#!/bin/bash
# A change to what retrieval reads, measured on both development sets before and after: HotpotQA-100 and the
# Python 3.11 docs FAQ (built from Debian's python3.11-doc), each graph built from scratch (ingest + enrich kg
# --method fast), then naive/larag/kg/ppr at k 2,5,10, compared record by record (benchmarks/same_retrieval.py).
#   bash benchmarks/dev_sets.sh OUT_DIR BASE_COMMIT [HEAD_TREE]
# BASE_COMMIT is checked out as a git worktree; HEAD_TREE (default: this checkout) is the code after the change.
# A default changes only when it holds or improves on both sets. Needs `apt-get install python3.11-doc`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: dev_sets.sh OUT_DIR BASE_COMMIT [HEAD_TREE]}
BASE=${2:?usage: dev_sets.sh OUT_DIR BASE_COMMIT [HEAD_TREE]}
HEAD_TREE=${3:-$ROOT}
STRATEGIES=${STRATEGIES:-naive,larag,kg,ppr}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
source benchmarks/common.sh
python_faq "$OUT"

run() {  # name, source tree, set (hotpotqa|faq)
  local name=$1 tree=$2 set=$3 data="$OUT/graph-$1-$3"
  local cli=("$ROOT/.venv/bin/python" -m neoweave.cli --data-dir "$data")
  local corpus qa extra=()
  if [ "$set" = hotpotqa ]; then
    corpus=$ROOT/examples/hotpotqa/corpus.jsonl; qa=$ROOT/examples/hotpotqa/qa.jsonl
  else
    corpus=$OUT/python-faq/corpus; qa=$OUT/python-faq/qa.jsonl; extra=(--base-url "$FAQ_BASE_URL")
  fi
  [ -f "$OUT/eval-$name-$set/summary.json" ] && return 0
  ( cd "$tree"
    export PYTHONPATH="$tree"
    timed "$OUT/$name-$set-ingest.time" "${cli[@]}" ingest "$corpus" "${extra[@]}" \
      --no-progress --json > "$OUT/$name-$set-ingest.json"
    timed "$OUT/$name-$set-kg.time" "${cli[@]}" enrich kg --no-progress --json \
      > "$OUT/$name-$set-kg.json"
    "${cli[@]}" eval --qa "$qa" --strategies "$STRATEGIES" --k 2,5,10 --out "$OUT/eval-$name-$set" > /dev/null
    "${cli[@]}" cypher "$(grep -v "^//" "$ROOT/neoweave/cypher/explore/integrity_checks.cypher")" --json \
      > "$OUT/$name-$set-integrity.json" 2>&1 || true
    "${cli[@]}" server stop > /dev/null )
}

[ -d "$OUT/tree-base" ] || git worktree add -f "$OUT/tree-base" "$BASE" > /dev/null
PHASE=${PHASE:-all}  # base | head | all: build the base graphs while the change is still being written
for set in hotpotqa faq; do
  [ "$PHASE" = head ] || run base "$OUT/tree-base" "$set"
  [ "$PHASE" = base ] || run head "$HEAD_TREE" "$set"
done
[ "$PHASE" = base ] && exit 0
for set in hotpotqa faq; do
  echo "== $set: base $BASE vs head"
  .venv/bin/python benchmarks/same_retrieval.py "$OUT/eval-base-$set" "$OUT/eval-head-$set" | tail -n 20
done
