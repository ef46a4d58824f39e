"""The README's first command and its tour, run as written on the shipped corpus (examples/hotpotqa): the README
cannot rot without this failing. Only the interpreter changes (`.venv/bin/neoweave` -> this Python's
`-m neoweave.cli`), `setup.sh` is left out (CI has just run it), and `serve` gets a free port."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from conftest import free_port, lines_until

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- tour: tests/test_readme_tour.py runs this block -->"
NEOWEAVE = ".venv/bin/neoweave"
TOUR_QUESTION_GOLD = {"Leland, North Carolina", "Maximum Overdrive"}


def readme_blocks(text: str) -> tuple[list[list[str]], list[list[str]]]:
    """(the first command's neoweave steps, the tour's commands), each as argv lists."""
    lines = text.splitlines()
    first = next(line for line in lines if line.startswith("bash scripts/setup.sh"))
    main_job = [shlex.split(part) for part in first.split("&&")[1:]]
    start = lines.index(MARKER)
    assert lines[start + 1].strip() == "```bash", "the tour marker must be followed by a bash block"
    end = next(i for i in range(start + 2, len(lines)) if lines[i].strip() == "```")
    tour = [argv for argv in (shlex.split(line, comments=True) for line in lines[start + 2:end]) if argv]
    return main_job, tour


def test_the_readme_names_its_two_commands_and_stays_short():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert "bash scripts/test.sh" in text and (ROOT / ".ci" / "run").read_text().strip().endswith(
        "exec bash scripts/test.sh")
    main_job, tour = readme_blocks(text)
    assert [argv[1] for argv in main_job] == ["ingest", "status"]
    assert all(argv[0] == NEOWEAVE for argv in main_job + tour)
    assert tour[-1][1] == "serve"



@pytest.fixture
def tour_dir(workdir):
    (workdir / "examples").symlink_to(ROOT / "examples")
    return workdir


def test_the_tour_runs_as_written_on_the_shipped_corpus(tour_dir):
    main_job, tour = readme_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}

    def run(argv: list[str]) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "neoweave.cli", *argv[1:]]
        result = subprocess.run(command, cwd=tour_dir, env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, (argv, result.stderr[-2000:])
        return result

    try:
        for argv in main_job:
            run(argv)
        for argv in tour[:-1]:
            result = run(argv)
            if argv[1] == "query" and "--answer" in argv:  # the local model, started from ./.neoweave
                assert "Stephen King" in result.stdout and "[1]" in result.stdout, result.stdout[-2000:]
            elif argv[1] == "query" and "ppr" in argv:
                assert "Maximum Overdrive" in result.stdout  # the bridge page, reached from the town
                found = json.loads(run([*argv, "--json"]).stdout)
                titles = {item["section_title"] for item in found["items"][:5]}
                assert titles >= TOUR_QUESTION_GOLD, titles  # both gold pages in ppr's top 5
            if argv[1] == "explain":
                html = tour_dir / argv[argv.index("--html") + 1]
                page = html.read_text(encoding="utf-8")
                assert "neo4j-viz-data" in page and "Maximum Overdrive" in page and len(page) < 1_000_000
                assert sorted(p.suffix for p in tour_dir.glob("neoweave-viz-*")) == [".css", ".js"]  # beside it
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "neoweave.cli", *tour[-1][1:], "--port", str(port)],
                                  cwd=tour_dir, env={**env, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        try:
            lines_until(server.stdout, "serving", 180)  # type: ignore[arg-type]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=30) as response:
                status = json.loads(response.read())
            assert status["nodes"]["Chunk"] >= 994 and status["nodes"]["Entity"] > 0
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        for stop in (["llm", "stop"], ["server", "stop"]):
            subprocess.run([sys.executable, "-m", "neoweave.cli", *stop], cwd=tour_dir, env=env,
                           capture_output=True, timeout=60)
