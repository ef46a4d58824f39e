"""The package's layers point down only: a module imports from its own layer or lower ones, never a higher one.

The order is declared once, below, as data (here rather than in a `neoweave/layers.py`: this test is its only
reader, and a module in the package would itself need a place in the order). Every module under `neoweave/` is
parsed with `ast`, nothing is imported: top-level, nested (inside functions, `TYPE_CHECKING` blocks) and relative
imports all count. The facade `neoweave/__init__.py` is exempt as an importer (its `open()` imports the knowledge
base lazily); importing the facade counts as importing the top layer, so only applications may. `registry.py`
names modules as strings for importlib, which is not an import. A top-level module or subpackage missing from the
order is reported, so a new one must be placed before it can be used.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "neoweave"
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "config", "parameters", "registry", "protocols", "processes", "watchdog", "token_counting", "user_cache",
     "embeddings", "llm", "graph_schema", "cypher", "store", "serialization", "input_formats"),  # 0 core
    ("nlp",),  # 1 shared text tools
    ("ingest",),  # 2
    ("enrich",),  # 3
    ("query",),  # 4
    ("eval", "audit"),  # 5
    ("kb",),  # 6 the knowledge-base object
    ("cli", "server", "integrations", "mcp", "__main__"),  # 7 applications
)
LAYER_OF: dict[str, int] = {name: index for index, names in enumerate(LAYERS) for name in names}
FACADE_LAYER = len(LAYERS) - 1
"""Where importing the package facade itself (`import neoweave`, `from neoweave import __version__`) counts."""
NO_CYCLES = ("eval",)
"""Subpackages whose modules may not import each other in a circle (directly or through others)."""

ROOT = Path(__file__).resolve().parent.parent / PACKAGE


def package_modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the package directory `root` (packages by their
    `__init__.py`)."""
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _known(name: str, modules: dict[str, Path]) -> str:
    """The longest prefix of `name` that is a module of the package below the facade; else its top-level name (a
    module that does not exist yet, such as one imported under `TYPE_CHECKING`, still has a place)."""
    parts = name.split(".")
    for end in range(len(parts), 1, -1):
        if ".".join(parts[:end]) in modules:
            return ".".join(parts[:end])
    return ".".join(parts[:2])


def imports(module: str, path: Path, modules: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """(imported module of the package, line) for every import in the file, at any depth, relative ones resolved;
    `from x import y` names the submodule `x.y` when there is one, else `x`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                       for alias in node.names]
        else:
            continue
        for target in targets:
            if target == PACKAGE or target.startswith(PACKAGE + "."):
                yield _known(target, modules), node.lineno


def layer(module: str) -> int | None:
    """The layer of a module of the package by its top-level name; the facade counts as the top layer."""
    if module == PACKAGE:
        return FACADE_LAYER
    return LAYER_OF.get(module.split(".")[1])


@dataclass(frozen=True)
class Scan:
    """A package's modules (name -> file) and what each imports of it (module, line): parsed once per test."""

    root: Path
    modules: dict[str, Path]
    graph: dict[str, list[tuple[str, int]]]


def scan(root: Path) -> Scan:
    modules = package_modules(root)
    graph = {module: sorted(set(imports(module, path, modules))) for module, path in modules.items()}
    return Scan(root, modules, graph)


def upward_imports(package: Scan) -> list[str]:
    """Every import of a higher layer, and every top-level module or subpackage not in the declared order."""
    graph = package.graph
    problems = sorted({f"{PACKAGE}.{module.split('.')[1]}: not in the declared layer order (place it in LAYERS)"
                       for module in graph if module != PACKAGE and layer(module) is None})
    for module, targets in graph.items():
        low = layer(module)
        if module == PACKAGE or low is None:
            continue
        for target, line in targets:
            high = layer(target)
            if high is not None and high > low:
                where = package.modules[module].relative_to(package.root.parent).as_posix()
                problems.append(f"{module} -> {target} (layer {low} < layer {high}) [{where}:{line}]")
    return problems


def import_cycles(package: Scan, subpackage: str) -> list[str]:
    """One circle of imports (as `a -> b -> a`) per group of the subpackage's modules that import each other."""
    prefix = f"{PACKAGE}.{subpackage}"
    graph = {module: sorted({t for t, _ in targets if t == prefix or t.startswith(prefix + ".")} - {module})
             for module, targets in package.graph.items() if module == prefix or module.startswith(prefix + ".")}
    cycles = []
    for group in _strongly_connected(graph):
        if len(group) > 1:
            cycles.append(" -> ".join(_circle(graph, min(group), group)))
    return sorted(cycles)


def _strongly_connected(graph: dict[str, list[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, []):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def _circle(graph: dict[str, list[str]], start: str, group: set[str]) -> list[str]:
    """The shortest path from `start` back to itself inside `group` (breadth first)."""
    paths = [[start, target] for target in graph[start] if target in group]
    while paths:
        path = paths.pop(0)
        if path[-1] == start:
            return path
        paths += [[*path, target] for target in graph.get(path[-1], []) if target in group and target not in path[1:]]
    raise AssertionError(f"{start} is in a cycle without a path back to itself")


def _write(root: Path, files: dict[str, str]) -> Path:
    """A synthetic package under `root` from {relative path: source}; returns its directory."""
    for relative, source in files.items():
        path = root / PACKAGE / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root / PACKAGE


# the package itself ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def package() -> Scan:
    return scan(ROOT)


def test_layers_point_down(package: Scan) -> None:
    problems = upward_imports(package)
    assert not problems, "imports against the layer order:\n" + "\n".join(problems)


def test_no_import_cycles_inside_eval(package: Scan) -> None:
    for subpackage in NO_CYCLES:
        cycles = import_cycles(package, subpackage)
        assert not cycles, f"import cycles in {PACKAGE}.{subpackage}:\n" + "\n".join(cycles)


# the checker catches what it should -------------------------------------------------------------------------------
def test_a_planted_upward_import_is_reported(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "__init__.py": "def open():\n    from neoweave.kb import open_kb\n",  # the facade: exempt
        "errors.py": "",
        "kb/__init__.py": "from neoweave.query import strategy\n",  # down: fine
        "ingest/__init__.py": "",
        "ingest/writer.py": "from neoweave.errors import Error\nfrom neoweave.query import base\n",
        "ingest/loader.py": "def load():\n    from ..enrich import kg\n",  # nested and relative
        "ingest/old.py": "import neoweave\n",  # the facade counts as the top layer
        "ingest/typing.py": "from neoweave.protocols import Embedder\n",  # not written yet: its layer still counts
        "enrich/__init__.py": "",
        "enrich/kg.py": "from . import base\nfrom neoweave.ingest.writer import write\n",  # own layer, down
        "enrich/base.py": "",
        "query/__init__.py": "",
        "query/base.py": "from neoweave.enrich.kg import step\n",
    })
    assert upward_imports(scan(root)) == [
        "neoweave.ingest.loader -> neoweave.enrich.kg (layer 2 < layer 3) [neoweave/ingest/loader.py:2]",
        "neoweave.ingest.old -> neoweave (layer 2 < layer 7) [neoweave/ingest/old.py:1]",
        "neoweave.ingest.writer -> neoweave.query.base (layer 2 < layer 4) [neoweave/ingest/writer.py:2]",
    ]


def test_an_unplaced_subpackage_is_reported(tmp_path: Path) -> None:
    root = _write(tmp_path, {"__init__.py": "", "widgets/__init__.py": "", "widgets/knob.py": "",
                             "helpers.py": "", "store/__init__.py": ""})
    assert upward_imports(scan(root)) == [
        "neoweave.helpers: not in the declared layer order (place it in LAYERS)",
        "neoweave.widgets: not in the declared layer order (place it in LAYERS)",
    ]


def test_an_import_cycle_inside_eval_is_reported(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "eval/__init__.py": "",
        "eval/runner.py": "from neoweave.eval import metrics\n",
        "eval/metrics.py": "",
        "eval/report.py": "import typing\nif typing.TYPE_CHECKING:\n    from neoweave.eval.runner import Run\n",
        "eval/tables.py": "def table():\n    from .report import write\n",
    })
    assert import_cycles(scan(root), "eval") == []
    (root / "eval" / "runner.py").write_text("from neoweave.eval.tables import table\n", encoding="utf-8")
    assert import_cycles(scan(root), "eval") == [
        "neoweave.eval.report -> neoweave.eval.runner -> neoweave.eval.tables -> neoweave.eval.report"]
