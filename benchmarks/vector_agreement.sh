#!/bin/bash
# The chunk vector index against exact search after every write command, on both dev sets (HotpotQA-100 and the
# Python 3.11 docs FAQ): ingest, enrich kg, communities, tags, rst (fast methods), then one document changed and
# ingested again with `enrich kg` after it. Each stage appends a record to OUT_DIR/vector_agreement.json
# (benchmarks/vector_agreement.py). Run it alone: the breadth timings are p50s.
#   bash benchmarks/vector_agreement.sh OUT_DIR [hotpotqa|faq ...]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: vector_agreement.sh OUT_DIR [SET ...]}
shift
SETS=${*:-hotpotqa faq}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
source benchmarks/common.sh
PY="$ROOT/.venv/bin/python"

for set in $SETS; do
  data="$OUT/graph-$set"
  cli=("$PY" -m neoweave.cli --data-dir "$data")
  extra=()
  if [ "$set" = hotpotqa ]; then
    corpus=$ROOT/examples/hotpotqa/corpus.jsonl; qa=$ROOT/examples/hotpotqa/qa.jsonl
  else
    python_faq "$OUT"; corpus=$OUT/python-faq/corpus; qa=$OUT/python-faq/qa.jsonl; extra=(--base-url "$FAQ_BASE_URL")
  fi
  measure() { "$PY" benchmarks/vector_agreement.py --data-dir "$data" --qa "$qa" --set "$set" --stage "$1" \
      --out "$OUT/vector_agreement.json"; }
  "${cli[@]}" ingest "$corpus" "${extra[@]}" --no-progress > /dev/null; measure ingest
  for step in kg communities tags rst; do
    "${cli[@]}" enrich "$step" --no-progress > /dev/null; measure "enrich $step"
  done
  # one document changed: its chunks rewritten, then the kg step over them
  if [ "$set" = hotpotqa ]; then
    changed="$OUT/hotpotqa-changed.jsonl"
    "$PY" -c "import json,sys; d=json.loads(open(sys.argv[1]).readline()); d['text']+=' A sentence added later.'; print(json.dumps(d))" \
      "$corpus" > "$changed"
    "${cli[@]}" ingest "$changed" --no-progress > /dev/null
  else
    page=$(find "$corpus" -name '*.html' | sort | head -1)
    sed -i 's#</body>#<p>A paragraph added later.</p></body>#' "$page"
    "${cli[@]}" sync "$corpus" "${extra[@]}" --no-progress > /dev/null
  fi
  "${cli[@]}" enrich kg --no-progress > /dev/null; measure "one document changed + enrich kg"
  "${cli[@]}" server stop > /dev/null
done
