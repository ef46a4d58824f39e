"""Docs are tests: every command block in README.md and docs/**/*.md runs in CI as written, or says why not.

The line right before each ```bash, ```sh, ```console, ```python or unlabelled block is a marker:

    <!-- doc-test: run -->                      run as written
    <!-- doc-test: run; substitute "NEW" for "OLD"; expect "TEXT" -->
    <!-- doc-test: run by PATH -->              PATH (a test, CI's script) runs it as written
    <!-- doc-test: illustration: REASON -->     not run, because REASON (Neo4j, a hosted endpoint, a long benchmark)

`run`'s options, separated by `;`:
- `substitute "NEW" for "OLD"`: a smaller input, or a real id for a placeholder (OLD must occur in the block);
- `skip "TEXT" because REASON`: the lines holding TEXT are not run (the one Neo4j line of a block);
- `expect "TEXT"`: the block's output holds TEXT;
- `server`: a `neoweave serve` runs during the block (the other terminal the page has the reader open);
- `long because REASON`: the block runs only in `scripts/test.sh --long` (NEOWEAVE_TEST_LONG=1);
  `long "TEXT" because REASON`: only the lines holding TEXT wait for the long run (a slow LLM line of a block).
The README's tour keeps its own marker (tests/test_readme_tour.py runs it). text, toml and json blocks are outputs
and file contents, not commands: they need no marker.

A page's runnable blocks run in order (a later block relies on an earlier one): bash blocks as bash scripts under
`set -euo pipefail` (every command must exit 0), python blocks as scripts. The working directory is laid out like
the repository root (its folders and `.venv` symlinked, so `.venv/bin/neoweave` runs literally; the checkout's
own `.neoweave` is never touched), the data directory is the default `./.neoweave`, and no NEOWEAVE_* variable is
set. Pages that continue the README run one after another in one directory holding the README's graph (the
sample ingested and `enrich kg` run, as the first command and the tour leave it); the pages in STARTS begin
elsewhere (an empty directory, or a small graph of tests/data/site). A server line (`neoweave serve`, `neoweave
mcp --http`) runs in the background until its block ends and is then stopped with Ctrl-C; it gets a free port
(the block's 8000 and 8001 are that port).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import free_port, repository_layout

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))]
COMMAND_LANGUAGES = {"", "bash", "sh", "shell", "console", "python"}
MARKER = re.compile(r"^<!--\s*doc-test:\s*(?P<body>.*?)\s*-->$")
TOUR_MARKER = "<!-- tour: tests/test_readme_tour.py runs this block -->"
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<language>[\w+-]*)")
STARTS = {"docs/ingest.md": "empty", "docs/python-api.md": "empty", "docs/backup.md": "small",
          "docs/export.md": "small"}
"""Where a page starts when it does not continue the README's graph."""
SERVER_LINE = re.compile(r"^\s*\S*neoweave\b.*\s(serve\b|mcp\b.*--http\b)")
SERVER_PORTS = {"serve": "8000", "mcp": "8001"}
LONG = os.environ.get("NEOWEAVE_TEST_LONG") == "1"
BLOCK_TIMEOUT = 900


@dataclass
class Plan:
    """What a marker says to do with its block."""

    kind: str  # "run", "run by" or "illustration"
    reason: str = ""  # an illustration's reason, or the PATH of "run by"
    substitutions: list[tuple[str, str]] = field(default_factory=list)  # (new, old)
    skips: list[tuple[str, str]] = field(default_factory=list)  # (text of the lines left out, why)
    expects: list[str] = field(default_factory=list)
    server: bool = False
    long: str = ""  # why the block runs only in the long run
    long_lines: list[tuple[str, str]] = field(default_factory=list)  # (text of the lines, why) run only then

    @property
    def runs_now(self) -> bool:
        return self.kind == "run" and (LONG or not self.long)


@dataclass
class Block:
    page: str
    line: int  # the opening fence's line, 1-based
    language: str
    text: str
    marker: str | None  # the line before the fence, when it is an HTML comment

    @property
    def is_command(self) -> bool:
        return self.language in COMMAND_LANGUAGES

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def plan(self) -> Plan:
        if self.marker == TOUR_MARKER:
            return Plan("run by", "tests/test_readme_tour.py")
        match = MARKER.match(self.marker or "")
        if not match:
            raise ValueError(f"{self.where}: no doc-test marker on the line before the block")
        return parse_marker(match["body"], self.where)

    def prepared(self, plan: Plan) -> str:
        """The block's text after the marker's substitutions and skips."""
        text = self.text
        for new, old in plan.substitutions:
            text = text.replace(old, new)
        left_out = [text for text, _ in plan.skips] + ([] if LONG else [text for text, _ in plan.long_lines])
        return "\n".join(line for line in text.splitlines() if not any(s in line for s in left_out))


QUOTED = r'"(?:[^"\\]|\\.)*"'  # a double-quoted string; \" inside it is a quote
OPTIONS = {
    "substitute": re.compile(rf"substitute (?P<new>{QUOTED}) for (?P<old>{QUOTED})"),
    "skip": re.compile(rf"skip (?P<text>{QUOTED}) because (?P<reason>.+)"),
    "expect": re.compile(rf"expect (?P<text>{QUOTED})"),
    "server": re.compile(r"server"),
    "long": re.compile(rf"long (?:(?P<text>{QUOTED}) )?because (?P<reason>.+)"),
}


def unquote(quoted: str) -> str:
    return re.sub(r"\\(.)", r"\1", quoted[1:-1])


def parse_marker(body: str, where: str) -> Plan:
    """`run[; option]...`, `run by PATH` or `illustration: REASON` (the module's docstring)."""
    if body.startswith("illustration:"):
        return Plan("illustration", body.removeprefix("illustration:").strip())
    if body.startswith("run by "):
        return Plan("run by", body.removeprefix("run by ").strip())
    options = [o.group(0).strip() for o in re.finditer(rf'(?:{QUOTED}|[^;"])+', body)]
    if not options or options[0] != "run":
        raise ValueError(f"{where}: a marker is `run ...`, `run by PATH` or `illustration: REASON`, not {body!r}")
    plan = Plan("run")
    for option in options[1:]:
        name, match = next(((n, m) for n, pattern in OPTIONS.items() if (m := pattern.fullmatch(option))),
                           ("", None))
        if match is None:
            raise ValueError(f"{where}: unknown option {option!r} (substitute \"NEW\" for \"OLD\", skip \"TEXT\" "
                             "because REASON, expect \"TEXT\", server, long [\"TEXT\"] because REASON)")
        found = {key: unquote(value) if value.startswith('"') else value
                 for key, value in match.groupdict().items() if value is not None}
        if name == "substitute":
            plan.substitutions.append((found["new"], found["old"]))
        elif name == "skip":
            plan.skips.append((found["text"], found["reason"]))
        elif name == "expect":
            plan.expects.append(found["text"])
        elif name == "server":
            plan.server = True
        elif "text" in found:
            plan.long_lines.append((found["text"], found["reason"]))
        else:
            plan.long = found["reason"]
    return plan


def page_blocks(page: str) -> list[Block]:
    """Every fenced block of `page`, with the line before it."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    blocks, number = [], 0
    while number < len(lines):
        opening = FENCE.match(lines[number].strip())
        if not opening:
            number += 1
            continue
        end = next((i for i in range(number + 1, len(lines)) if lines[i].strip() == opening["fence"]), len(lines))
        before = lines[number - 1].strip() if number else ""
        blocks.append(Block(page, number + 1, opening["language"].lower(), "\n".join(lines[number + 1:end]),
                            before if before.startswith("<!--") else None))
        number = end + 1
    return blocks


def command_blocks(page: str) -> list[Block]:
    return [block for block in page_blocks(page) if block.is_command]


# --- the fast check: every command block is marked, and every marker holds -------------------------------------

def test_every_command_block_has_a_marker_that_holds(capsys):
    problems, not_run = [], []
    for block in (b for page in PAGES for b in command_blocks(page)):
        try:
            plan = block.plan()
        except ValueError as error:
            problems.append(str(error))
            continue
        if plan.kind == "illustration":
            not_run.append(f"{block.where}: {plan.reason}")
            if len(plan.reason.split()) < 2:
                problems.append(f"{block.where}: an illustration says why it is not run")
        not_run += [f"{block.where}, the lines with {text!r}: {why}" for text, why in plan.skips]
        if not LONG:
            not_run += [f"{block.where} (in scripts/test.sh --long only): {plan.long}"] if plan.long else []
            not_run += [f"{block.where}, the lines with {text!r} (in scripts/test.sh --long only): {why}"
                        for text, why in plan.long_lines]
        if plan.kind == "run by" and not (ROOT / plan.reason).is_file():
            problems.append(f"{block.where}: `run by {plan.reason}`: no such file")
        for old in [old for _, old in plan.substitutions] + [text for text, _ in plan.skips + plan.long_lines]:
            if old not in block.text:
                problems.append(f"{block.where}: {old!r} does not occur in the block")
        if plan.kind == "run" and not block.prepared(plan).strip():
            problems.append(f"{block.where}: nothing left to run")
    for page in PAGES:  # a marker not right before a block marks nothing
        lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if MARKER.match(line.strip()) and not (number + 1 < len(lines) and FENCE.match(lines[number + 1].strip())):
                problems.append(f"{page}:{number + 1}: a doc-test marker must be the line right before a block")
    assert not problems, "\n".join(problems)
    with capsys.disabled():  # CI's log lists what the docs show but CI does not run, and why
        print(f"\ndoc commands not run ({len(not_run)}):\n  " + "\n  ".join(not_run))


def test_the_marker_grammar():
    plan = parse_marker('run; substitute "tests/data/site/" for "docs/"; skip "--store neo4j" because needs Neo4j; '
                        'expect "0 failing"; server; long because an hour; long "--method llm" because LLM', "x")
    assert (plan.substitutions, plan.skips, plan.expects, plan.server, plan.long, plan.long_lines) == (
        [("tests/data/site/", "docs/")], [("--store neo4j", "needs Neo4j")], ["0 failing"], True, "an hour",
        [("--method llm", "LLM")])
    assert parse_marker("illustration: needs a live Neo4j", "x") == Plan("illustration", "needs a live Neo4j")
    assert parse_marker("run by tests/test_readme_tour.py", "x") == Plan("run by", "tests/test_readme_tour.py")
    for bad in ('run; replace "a" by "b"', 'run; skip "x"', "run; long"):
        with pytest.raises(ValueError, match="unknown option"):
            parse_marker(bad, "x")
    block = Block("p.md", 1, "bash", "neoweave sync docs/\nneoweave --store neo4j import x\nenrich --method llm", "")
    assert block.prepared(plan) == "neoweave sync tests/data/site/" + ("\nenrich --method llm" if LONG else "")


# --- running the blocks ---------------------------------------------------------------------------------------

BASH_PRELUDE = r"""set -euo pipefail
set -m  # background servers in their own process group, where Ctrl-C (SIGINT) reaches them
__doc_test_pids=()
__doc_test_server() {  # a server line: start it, wait until it says it is serving (its ready line)
  local log="$DOC_TEST_LOGS/server-$$-${#__doc_test_pids[@]}.log"
  "$@" >"$log" 2>&1 &
  local pid=$!
  __doc_test_pids+=("$pid")
  for _ in $(seq 1800); do
    grep -qE "neoweave (mcp )?serving" "$log" && return 0
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$log" >&2; echo "doc-test: the server stopped before serving: $*" >&2; return 1
    fi
    sleep 0.1
  done
  echo "doc-test: no 'serving' after 180 s from: $*" >&2
  return 1
}
__doc_test_stop() {  # at the block's end: Ctrl-C each server; each must stop cleanly (0, or Ctrl-C's 130)
  local status=$? pid code
  for pid in "${__doc_test_pids[@]}"; do
    kill -INT "$pid" 2>/dev/null || true
    code=0; wait "$pid" || code=$?
    if [ "$code" != 0 ] && [ "$code" != 130 ]; then
      echo "doc-test: a server exited $code after Ctrl-C" >&2; status=1
    fi
  done
  exit "$status"
}
trap __doc_test_stop EXIT
trap 'echo "doc-test: exit $? from: $BASH_COMMAND" >&2' ERR
"""


def bash_script(text: str, plan: Plan) -> str:
    """The block as a script: server lines in the background on free ports, the rest as written."""
    ports = {name: str(free_port()) for name in SERVER_PORTS}
    for name, default in SERVER_PORTS.items():
        text = re.sub(rf"\b{default}\b", ports[name], text)
    script = []
    for line in ([".venv/bin/neoweave serve"] if plan.server else []) + text.splitlines():
        if SERVER_LINE.match(line):
            command = re.sub(r"\s+#\s.*$", "", line).strip()
            name = "serve" if re.search(r"\sserve\b", command) else "mcp"
            line = f"__doc_test_server {command}" + ("" if "--port" in command else f" --port {ports[name]}")
        script.append(line)
    return BASH_PRELUDE + "\n".join(script) + "\n"


def run_block(block: Block, plan: Plan, cwd: Path, scratch: Path) -> None:
    """Run one block in `cwd`; assert it exits 0 and prints what its marker expects."""
    text = block.prepared(plan)
    if block.language == "python":
        script = scratch / f"{block.page.replace('/', '_')}-{block.line}.py"
        script.write_text(text + "\n", encoding="utf-8")
        command = [str(cwd / ".venv" / "bin" / "python"), str(script)]
    else:
        command = ["bash", "-c", bash_script(text, plan)]
    process = subprocess.Popen(command, cwd=cwd, env={**clean_env(), "DOC_TEST_LOGS": str(scratch)}, text=True,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=BLOCK_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        out, err = process.communicate()
        pytest.fail(f"{block.where} ran past {BLOCK_TIMEOUT} s:\n{text}\n{err[-3000:]}")
    assert process.returncode == 0, (f"{block.where} exited {process.returncode}:\n{text}\n--- stdout\n"
                                     f"{clip(out)}\n--- stderr\n{clip(err)}")
    for expected in plan.expects:
        assert expected in out, f"{block.where}: {expected!r} not in its output:\n{clip(out)}"


def clip(output: str, keep: int = 2000) -> str:
    """An output's start (where an error usually says what went wrong) and end."""
    return output if len(output) <= 2 * keep else f"{output[:keep]}\n[...]\n{output[-keep:]}"


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")} | {"PYTHONUNBUFFERED": "1"}


def neoweave(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([str(cwd / ".venv" / "bin" / "neoweave"), *args], cwd=cwd, env=clean_env(),
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    assert result.returncode == 0, (args, result.stdout[-2000:], result.stderr[-3000:])
    return result


def stop_servers(cwd: Path) -> None:
    """Stop the store and local model servers of every data directory the page's commands made."""
    for data_dir in {p.parent for p in cwd.rglob("falkordb.pid")} | {p.parent for p in cwd.glob("*/llm")}:
        for stop in (["server", "stop"], ["llm", "stop"]):
            subprocess.run([str(cwd / ".venv" / "bin" / "neoweave"), "--data-dir", str(data_dir), *stop], cwd=cwd,
                           env=clean_env(), capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def readme_dir(tmp_path_factory, readme_graph) -> Iterator[Path]:
    """A directory holding a copy of the README's graph (conftest's `readme_graph`); the pages that continue
    from there run in it, one after another."""
    cwd = repository_layout(tmp_path_factory.mktemp("docs-readme") / "repo")
    shutil.copytree(readme_graph, cwd / ".neoweave", symlinks=True)
    try:
        yield cwd
    finally:
        stop_servers(cwd)


def runnable_pages() -> list[str]:
    pages = []
    for page in PAGES:
        try:
            if any(b.plan().runs_now for b in command_blocks(page)):
                pages.append(page)
        except ValueError:  # a bad marker: the marker check names it
            continue
    return pages


@pytest.mark.parametrize("page", runnable_pages())
def test_the_page_runs_as_written(page, tmp_path, request):
    start = STARTS.get(page, "readme")
    cwd = request.getfixturevalue("readme_dir") if start == "readme" else repository_layout(tmp_path / "repo")
    try:
        if start == "small":
            neoweave(cwd, "ingest", "tests/data/site", "--no-progress")
        for block in command_blocks(page):
            if (plan := block.plan()).runs_now:
                run_block(block, plan, cwd, tmp_path)
    finally:
        if start != "readme":
            stop_servers(cwd)
