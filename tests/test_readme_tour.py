"""The README's first command and its tour, run as written on the shipped corpus (examples/hotpotqa): the README
cannot rot without this failing. The commands run literally (`.venv/bin/neoweave ...`) from a directory laid out
like the repository root, with the default `./.neoweave`; `setup.sh` is left out (CI has just run it, with
`--local-llm`, which the tour's `--answer` line needs), and `serve` gets a free port. The first command and the
tour's `enrich kg` build the session's `readme_graph` (conftest), which the docs' pages continue from too; this
test goes on from a copy of it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
from conftest import free_port, lines_until, readme_commands, repository_layout

ROOT = Path(__file__).resolve().parents[1]
NEOWEAVE = ".venv/bin/neoweave"
TOUR_QUESTION_GOLD = {"Leland, North Carolina", "Maximum Overdrive"}


def test_the_readme_names_its_two_commands_and_stays_short():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert "bash scripts/test.sh" in text and (ROOT / ".ci" / "run").read_text().strip().endswith(
        "exec bash scripts/test.sh")
    main_job, tour = readme_commands()
    assert [argv[1] for argv in main_job] == ["ingest", "status"]
    assert all(argv[0] == NEOWEAVE for argv in main_job + tour)
    assert tour[0][1:3] == ["enrich", "kg"] and tour[-1][1] == "serve"
    assert any("--answer" in argv for argv in tour)  # the tour shows an answer, not only retrieval


@pytest.fixture
def tour_dir(tmp_path, readme_graph):
    """The repository's layout holding a copy of the graph the README's first command and `enrich kg` built."""
    cwd = repository_layout(tmp_path / "repo")
    shutil.copytree(readme_graph, cwd / ".neoweave", symlinks=True)
    return cwd


def test_the_tour_runs_as_written_on_the_shipped_corpus(tour_dir):
    _main_job, tour = readme_commands()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}

    def run(argv: list[str]) -> subprocess.CompletedProcess:
        result = subprocess.run(argv, cwd=tour_dir, env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, (argv, result.stderr[-2000:])
        return result

    try:
        for argv in tour[1:-1]:  # tour[0], enrich kg, built the readme_graph
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
        server = subprocess.Popen([*tour[-1], "--port", str(port)], cwd=tour_dir,
                                  env={**env, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        try:
            lines_until(server.stdout, "serving", 180)  # type: ignore[arg-type]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=30) as response:
                status = json.loads(response.read())
            assert status["nodes"]["Chunk"] >= 994 and status["nodes"]["Entity"] > 0
        finally:
            server.terminate()
            server.wait(timeout=30)
        assert not (tour_dir / ".neoweave" / "serve.json").exists()
    finally:
        for stop in (["llm", "stop"], ["server", "stop"]):
            subprocess.run([NEOWEAVE, *stop], cwd=tour_dir, env=env, capture_output=True, timeout=60)
