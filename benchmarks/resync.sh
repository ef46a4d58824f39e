#!/bin/bash
# A sync that changes nothing, before and after a change: BASE_COMMIT (a git worktree) against this checkout, run in
# turn by farm-bench (A = this checkout, B = the base), on a data directory that already holds PATH:
#   bash benchmarks/resync.sh DATA_DIR PATH BASE_COMMIT [extra sync options, e.g. --base-url URL]
# Each run's JSON report is appended to DATA_DIR/../resync-{head,base}.jsonl (every one should say 0 added, 0 updated,
# 0 deleted). Results: docs/benchmarks/small_writes.md, "A sync that changes nothing".
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DATA=$(cd "${1:?usage: resync.sh DATA_DIR PATH BASE_COMMIT [sync options]}" && pwd)
SRC=$(cd "${2:?}" && pwd); BASE=${3:?}; shift 3
OUT=$(dirname "$DATA")
TREE=$(mktemp -d)/base
git worktree add -f "$TREE" "$BASE" > /dev/null
trap 'git -C "$ROOT" worktree remove --force "$TREE"' EXIT
for side in head base; do
  tree=$([ $side = base ] && echo "$TREE" || echo "$ROOT")
  printf '#!/bin/bash\ncd %q && exec %q -m neoweave.cli --data-dir %q sync %q %s --no-progress --json >> %q 2>&1\n' \
    "$tree" "$ROOT/.venv/bin/python" "$DATA" "$SRC" "$*" "$OUT/resync-$side.jsonl" > "$OUT/resync-$side.sh"
done
farm-bench -n 2 --warmup 1 --timeout 3600 --vs "bash $OUT/resync-base.sh" -- bash "$OUT/resync-head.sh"
