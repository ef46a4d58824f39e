#!/bin/bash
# Each seed paper's method as published (`-P NAME.profile=paper`) beside neoweave's defaults, on graphs already
# built (ingest + enrich kg; the FAQ graph by a neoweave that stores link offsets, 2026-11-27 or later):
#   bash benchmarks/profiles.sh OUT_DIR HOTPOTQA_DATA_DIR FAQ_DATA_DIR FAQ_QA [LLM_QUESTIONS]
# Retrieval without an LLM: larag at k 2,5,10 on both sets, both profiles. With LLM_QUESTIONS > 0 (default 0:
# these runs take hours on two cores), recursive and pank answer the first LLM_QUESTIONS HotpotQA questions with
# the configured model at k 5, both profiles (pank's paper profile searches with GraphRAG local and global
# search: the HotpotQA graph needs `enrich communities` too).
# Tables: docs/strategies/profiles.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: profiles.sh OUT_DIR HOTPOTQA_DATA_DIR FAQ_DATA_DIR FAQ_QA [LLM_QUESTIONS]}
HP=${2:?}; FAQ=${3:?}; FAQ_QA=${4:?}; LLM_QUESTIONS=${5:-0}
HP_QA=examples/hotpotqa/qa.jsonl
mkdir -p "$OUT"
cli() { .venv/bin/python -m neoweave.cli --data-dir "$1" "${@:2}"; }
for profile in neoweave paper; do
  cli "$HP" eval --qa "$HP_QA" --strategies larag --k 2,5,10 -P larag.profile=$profile \
    --out "$OUT/hotpotqa-larag-$profile" > /dev/null
  cli "$FAQ" eval --qa "$FAQ_QA" --type with-links --strategies larag --k 2,5,10 -P larag.profile=$profile \
    --out "$OUT/faq-larag-$profile" > /dev/null
done
if [ "$LLM_QUESTIONS" -gt 0 ]; then
  for profile in neoweave paper; do
    cli "$HP" eval --qa "$HP_QA" --strategies recursive,pank --k 5 --answer --limit "$LLM_QUESTIONS" \
      -P recursive.profile=$profile -P pank.profile=$profile \
      --out "$OUT/hotpotqa-llm-$profile" > /dev/null
  done
fi
for run in "$OUT"/*/; do
  echo "== $run"
  .venv/bin/python -c "import json,sys; rows=json.load(open(sys.argv[1]))['rows']
for r in rows:
    if r['type'] == 'all':
        print(r['strategy'], r['k'], *(f\"{m} {r[m]:.3f}\" for m in ('hit', 'perfect', 'recall', 'exact_match', 'f1') if m in r),
              f\"chunks {r['chunks']:.1f} tokens {r['context_tokens']:.0f} llm_calls {r.get('llm_calls', 0):.1f}\")" "$run/summary.json"
done
