#!/usr/bin/env bash
# Everything CI checks: setup, ruff, Neo4j's Cypher linter over every statement, and the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--long" ]; then  # also the checks that take minutes (LLM lines of the docs, ...)
  shift
  export NEOWEAVE_TEST_LONG=1
fi
bash scripts/setup.sh --local-llm --dev  # the tests answer with the local model; test tools, LangChain, linter
if ! command -v chromium >/dev/null; then  # the web page's browser test drives Debian's chromium
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing chromium (the web page's browser test)"
    apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
  else
    echo "chromium is not installed: the browser test is skipped (sudo apt-get install chromium)"
  fi
fi
echo "== ruff"
.venv/bin/ruff check .
echo "== cypher lint (Neo4j's linter over every statement the Neo4j backend can send)"
.venv/bin/python -m neoweave.cypher.lint
echo "== tests"
.venv/bin/python -m pytest -q --durations=25 "$@"  # the slowest tests listed: CI stays under 30 min
