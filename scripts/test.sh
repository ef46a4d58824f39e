#!/usr/bin/env bash
# Everything CI checks: setup, ruff, Neo4j's Cypher linter over every statement, and the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== ruff"
.venv/bin/ruff check .
echo "== cypher lint (Neo4j's linter over every statement the Neo4j backend can send)"
.venv/bin/python -m neoweave.cypher.lint
echo "== tests"
.venv/bin/python -m pytest -q "$@"
