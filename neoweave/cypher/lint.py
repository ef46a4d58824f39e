"""Check every statement neoweave can send to Neo4j with Neo4j's own Cypher linter.

The linter (npm `@neo4j-cypher/language-support`, `lintCypherQuery`) runs in Node from
`tools/cypher-lint/`. It is given a DbSchema built from `graph_schema` (labels, relationship types,
property keys), the parameters each statement declares, and the Neo4j procedures we allow, so misspelled
labels, unknown properties or procedure outputs, undefined variables and syntax errors are all reported.
Any diagnostic fails: `python -m neoweave.cypher.lint` exits 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neoweave.cypher.registry import Statement, all_statements, explore_names, explore_query
from neoweave.graph_schema.model import SCHEMA, GraphSchema
from neoweave.graph_schema.render import all_neo4j_ddl

LINT_DIR = Path(__file__).resolve().parents[2] / "tools" / "cypher-lint"
# Neo4j procedures neoweave may call; anything else (APOC, other GDS procedures, typos) is a lint error.
ALLOWED_PROCEDURES = (
    "db.index.vector.queryNodes",
    "db.index.fulltext.queryNodes",
    "db.awaitIndexes",
    # Graph Data Science, only for the ppr strategy's optional engine 'gds' (neo4j-only statements)
    "gds.pageRank.stream",
    "gds.graph.drop",
)
CYPHER_VERSIONS = ("CYPHER 5", "CYPHER 25")
_EXAMPLE_VALUES: dict[str, Any] = {
    "INTEGER": 1, "FLOAT": 1.0, "STRING": "s", "BOOLEAN": True, "LIST": [], "MAP": {},
    "VECTOR": [0.1, 0.2], "ANY": None,
}


@dataclass(frozen=True)
class LintItem:
    name: str
    text: str
    parameters: dict[str, Any]
    row_keys: tuple[str, ...] = ()
    """Keys of the parameter maps the statement reads (`row.source_id`), declared in its @param docs."""


@dataclass(frozen=True)
class Diagnostic:
    name: str
    version: str
    severity: str
    message: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.name}:{self.line}:{self.column} [{self.version}] {self.severity}: {self.message}"


class LinterUnavailable(RuntimeError):
    """Node or the npm package is missing."""


def db_schema(schema: GraphSchema = SCHEMA) -> dict[str, Any]:
    return {
        "labels": schema.all_label_names,
        "relationshipTypes": schema.relationship_names,
        "propertyKeys": schema.property_keys,
        "procedures": list(ALLOWED_PROCEDURES),
    }


_ROW_SHAPE = re.compile(r"\[\{([^}]*)\}\]")


def statement_item(statement: Statement) -> LintItem:
    row_keys: list[str] = []
    for param in statement.params:
        for shape in _ROW_SHAPE.findall(param.doc):
            row_keys.extend(key.strip() for key in shape.split(",") if key.strip())
    return LintItem(statement.name, statement.text, {p.name: _EXAMPLE_VALUES[p.type] for p in statement.params},
                    tuple(row_keys))


def neo4j_items(dimension: int = 384) -> list[LintItem]:
    """Every statement the Neo4j backend can send: named statements and rendered DDL."""
    statements = all_statements("neo4j")
    items = [statement_item(s) for s in statements]
    items += [dataclasses.replace(statement_item(s), name=f"{s.name}:exact", text=s.exact_text)
              for s in statements if s.exact_text is not None]  # the exact vector search variant
    items += [LintItem(f"ddl:{step.name}", step.cypher, {}) for step in all_neo4j_ddl(dimension)]
    items += [statement_item(explore_query(name)) for name in explore_names()]  # saved Browser queries
    return items


def linter_available() -> bool:
    return shutil.which("node") is not None and (LINT_DIR / "node_modules" / "@neo4j-cypher").is_dir()


def lint(items: list[LintItem], *, schema: GraphSchema = SCHEMA,
         versions: tuple[str, ...] = CYPHER_VERSIONS) -> list[Diagnostic]:
    """Run Neo4j's linter over `items`; returns every diagnostic (an empty list means clean)."""
    if not linter_available():
        raise LinterUnavailable(
            f"Neo4j's Cypher linter is not installed in {LINT_DIR}",
            "run `npm ci --prefix tools/cypher-lint` (needs Node.js >= 20)",
        )
    request = {
        "schema": db_schema(schema),
        "statements": [{"name": i.name, "text": i.text, "parameters": i.parameters, "rowKeys": list(i.row_keys)}
                       for i in items],
        "versions": list(versions),
    }
    # a guard against a hung linter, not a speed target: ~250 statements take minutes on a loaded 2-core machine
    result = subprocess.run(["node", str(LINT_DIR / "lint.mjs")], input=json.dumps(request),
                            capture_output=True, text=True, timeout=1200)
    if result.returncode != 0:
        raise RuntimeError(f"the Cypher linter failed: {result.stderr.strip()[-2000:]}")
    return [Diagnostic(**d) for d in json.loads(result.stdout)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="extra .cypher files to lint (default: all of neoweave)")
    args = parser.parse_args(argv)
    items = [LintItem(str(f), f.read_text(encoding="utf-8"), {}) for f in args.files] or neo4j_items()
    try:
        diagnostics = lint(items)
    except LinterUnavailable as exc:
        print(f"error: {exc.args[0]} ({exc.args[1]})", file=sys.stderr)
        return 2
    for diagnostic in diagnostics:
        print(diagnostic)
    print(f"cypher lint: {len(items)} statements x {len(CYPHER_VERSIONS)} Cypher versions, "
          f"{len(diagnostics)} diagnostics")
    return 1 if diagnostics else 0


if __name__ == "__main__":
    sys.exit(main())
