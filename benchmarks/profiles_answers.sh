#!/bin/bash
# A seed strategy's answers as published (`-P NAME.profile=paper`) beside neoweave's defaults, with the configured
# LLM (the local model unless NEOWEAVE_LLM_* name another), in blocks of questions: the runs behind
# docs/strategies/profiles.md's answer tables (orion, recursive, pank, khl, larag).
#   bash benchmarks/profiles_answers.sh OUT_DIR SET STRATEGY [FIRST [LAST [BLOCK]]]
# SET is hotpotqa (examples/hotpotqa, answers by `short_answer`) or faq (the Python 3.11 docs FAQ's `with-links`
# questions, built from Debian's python3.11-doc; its references are whole answers, so answers are sentences:
# `unified`, `hyperlinked` for larag, 128 tokens). Questions FIRST..LAST (default all) in blocks of BLOCK (10), each
# block one report per profile (OUT/SET-STRATEGY-PROFILE-FIRST-LAST), then every finished block merged
# (OUT/SET-STRATEGY-PROFILE-merged). Every step is skipped when its output exists, and a block stopped part way
# takes up its finished questions (`neoweave eval` keeps them in progress.jsonl): run the same command again to go
# on. `touch OUT/stop` stops before the next block (servers stopped, finished blocks merged).
# The graph (OUT/graph-SET, or GRAPH=DIR built already) gets what the seed methods read, each by its fast method:
# ingest, enrich kg, tags (orion), rst (khl), communities (pank). Needs `apt-get install python3.11-doc` for faq.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
usage="usage: profiles_answers.sh OUT_DIR hotpotqa|faq STRATEGY [FIRST [LAST [BLOCK]]]"
OUT=${1:?$usage}; SET=${2:?$usage}; STRATEGY=${3:?$usage}
FIRST=${4:-1}; LAST=${5:-0}; BLOCK=${6:-10}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
GRAPH=${GRAPH:-$OUT/graph-$SET}
source benchmarks/common.sh
CLI=("$ROOT/.venv/bin/python" -m neoweave.cli --data-dir "$GRAPH")
cli() { "${CLI[@]}" "$@"; }
log() { echo "$(date +%T) $*" | tee -a "$OUT/profiles_answers.log"; }

case $SET in
  hotpotqa) corpus=$ROOT/examples/hotpotqa/corpus.jsonl; all_qa=$ROOT/examples/hotpotqa/qa.jsonl; ingest_options=()
            answer_options=() ;;
  faq) python_faq "$OUT"
       corpus=$OUT/python-faq/corpus; all_qa=$OUT/python-faq/qa.jsonl; ingest_options=(--base-url "$FAQ_BASE_URL")
       prompt=unified; [ "$STRATEGY" = larag ] && prompt=hyperlinked
       answer_options=(--prompt "$STRATEGY=$prompt" --max-tokens 128) ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
QA=$OUT/$SET-questions.jsonl  # the questions the blocks number: the FAQ's with-links ones, HotpotQA's all
[ -f "$QA" ] || "$ROOT/.venv/bin/python" -c "import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
sys.stdout.write(''.join(json.dumps(r) + '\n' for r in rows if sys.argv[2] != 'faq' or r['type'] == 'with-links'))
" "$all_qa" "$SET" > "$QA"
TOTAL=$(wc -l < "$QA")
[ "$LAST" -gt 0 ] && [ "$LAST" -le "$TOTAL" ] || LAST=$TOTAL

step() {  # name, neoweave arguments...: once per graph, timed
  [ -f "$GRAPH/.built-$1" ] && return 0
  log "graph: $1"
  timed "$OUT/$SET-$1.time" "${CLI[@]}" "${@:2}" > "$OUT/$SET-$1.log" 2>&1
  touch "$GRAPH/.built-$1"
}
mkdir -p "$GRAPH"
step ingest ingest "$corpus" "${ingest_options[@]}" --no-progress
step kg enrich kg --method fast --no-progress
case $STRATEGY in
  orion) step tags enrich tags --method fast --no-progress ;;
  khl) step rst enrich rst --method fast --no-progress ;;
  pank) step communities enrich communities --method fast --no-progress ;;
esac

for ((start = FIRST; start <= LAST; start += BLOCK)); do
  end=$((start + BLOCK - 1)); [ "$end" -gt "$LAST" ] && end=$LAST
  sed -n "${start},${end}p" "$QA" > "$OUT/$SET-$start-$end.jsonl"
  for profile in paper neoweave; do
    run=$OUT/$SET-$STRATEGY-$profile-$start-$end
    [ -f "$run/summary.json" ] && continue
    [ -f "$OUT/stop" ] && { log "stopped before $run"; break 2; }
    log "$STRATEGY $profile $start-$end"
    cli eval --qa "$OUT/$SET-$start-$end.jsonl" --strategies "$STRATEGY" --k 5 --answer "${answer_options[@]}" \
      -P "$STRATEGY.profile=$profile" --out "$run" > "$run.log" 2>&1
  done
done
cli server stop > /dev/null 2>&1 || true
cli llm stop > /dev/null 2>&1 || true
for profile in paper neoweave; do
  blocks=()
  for run in "$OUT/$SET-$STRATEGY-$profile"-*-*/; do [ -f "$run/summary.json" ] && blocks+=("$run"); done
  [ ${#blocks[@]} -gt 0 ] || continue
  rm -rf "$OUT/$SET-$STRATEGY-$profile-merged"
  cli eval merge "${blocks[@]}" --out "$OUT/$SET-$STRATEGY-$profile-merged" \
    --title "$STRATEGY ($profile) on $SET, ${#blocks[@]} blocks of questions" > /dev/null
  log "merged: $OUT/$SET-$STRATEGY-$profile-merged"
done
