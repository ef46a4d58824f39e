"""Hostile input to every entry point: a clear error naming the parameter, file or id (never a traceback or an
"unexpected error"), and nothing already stored lost or half-written.

The command line runs in-process through `neoweave.cli.main` (the same error handling as the installed
command, without a Python start per case). The dying model server is a scripted local HTTP endpoint that
answers a few requests and then closes its socket, because a real model cannot be made to die on cue; the
enrich step, the store and the embedder around it are real.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest
from conftest import COMMUNITY_CORPUS, ingest_records

from neoweave.cli import main
from neoweave.cypher.registry import explore_query
from neoweave.enrich import run
from neoweave.llm import LLMGateway, LLMUnavailable


@pytest.fixture
def neoweave(workdir, monkeypatch, capsys):
    """`neoweave ARGS` in-process: (exit code, stdout, stderr)."""
    capsys.readouterr()

    def call(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["neoweave", *args])
        code = 0
        try:
            main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.fixture
def graph(neoweave, workdir):
    (workdir / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in COMMUNITY_CORPUS),
                                          encoding="utf-8")
    code, _, err = neoweave("ingest", "corpus.jsonl", "--no-progress")
    assert code == 0, err
    return workdir


BAD_COMMANDS = [
    (["query", "x", "--k", "0"], "k must be between 1 and 50, not 0"),
    (["query", "x", "--k", "1000000000"], "k must be between 1 and 50"),  # the server's bounds
    (["query", "x" * 2001], "at most 2000 are accepted"),
    (["query", "x", "-s", "larag", "-P", "depth=100000"], "must be at most 1000"),
    (["query", "x", "-k", "3"], "No such option: -k"),
    (["query", "x", "-s", "nosuch"], "unknown strategy 'nosuch'"),
    (["query", "x", "-s", "larag", "-P", "depth=-1"], "depth must be >= 0, got -1"),
    (["query", "x", "-s", "larag", "-P", "depth=abc"], "parameter depth takes a int, got 'abc'"),
    (["query", "x", "-s", "larag", "-P", "nonsense=1"], "has no parameter 'nonsense'"),
    (["query", "x", "-s", "larag", "-P", "larag.depth=100000"], "must be at most 1000"),  # eval's form, read
    (["query", "x", "-s", "larag", "-P", "ppr.damping=0.5"], "belongs to strategy 'ppr', but this request runs"),
    (["query", "x", "-s", "ppr", "-P", "damping=7"], "damping"),
    (["query", "Who founded Leland?", "-s", "kg"], "kg: the graph has no entities"),  # not enriched: no silent
    (["query", "Who founded Leland?", "-s", "ppr"], "ppr: the graph has no entities"),  # fallback to dense seeds
    (["query", "Who founded Leland?", "-s", "community_local"], "community_local: the graph has no entities"),
    (["explain", "x", "-s", "nosuch"], "unknown strategy 'nosuch'"),
    (["explain", "", "-s", "naive"], "the question is empty"),
    (["explain", "x", "--html", "no/such/dir/o.html"], "cannot write no/such/dir/o.html: No such file or directory"),
    (["enrich", "nosuch"], "unknown enrich step 'nosuch'"),
    (["enrich", "kg", "--method", "nope"], "method must be one of fast, llm, got 'nope'"),
    (["enrich", "rst", "-P", "window=abc"], "parameter window takes a int, got 'abc'"),
    (["enrich", "kg", "-P", "nope=1"], "has no parameter 'nope'"),
    (["enrich", "communities", "-P", "max_cluster_size=0"], "max_cluster_size"),
    (["entities", "show", "no-such-id"], "no entity named 'no-such-id'"),
    (["entities", "unmerge", "nope"], "no active merge 'nope'"),
    (["tags", "add", "no-such-doc", "foo"], "no document or chunk with id 'no-such-doc'"),
    (["tags", "add", "k1", "  "], "tag"),
    (["tags", "remove", "k1", "never added"], "never added"),
    (["communities", "show", "nope"], "no community 'nope'"),
    (["serve", "--port", "70000"], "--port must be between 1 and 65535, not 70000"),
    (["eval", "--qa", "missing.jsonl"], "QA file not found: missing.jsonl"),
    (["eval", "--qa", "corpus.jsonl", "--k", "-3"], "-3"),
    (["delete", "no-such-doc"], "no-such-doc"),
    (["cypher", "MATCH (n) DETACH DELETE n"], "read-only"),
    (["query", "x", "-s", "router", "-P", "routes=bridge=nope"], "unknown strategy 'nope'"),
    (["query", "x", "-s", "router", "-P", "routes=bridge"], "bad route 'bridge'"),
    (["query", "x", "-s", "router", "-P", "classify=psychic"], "classify must be rules or llm"),
    (["eval", "fit-router", "no-such-run"], "no evaluation records at no-such-run"),
]


def test_bad_commands_get_one_clear_line_and_change_nothing(graph, neoweave):
    before = neoweave("status", "--json")
    assert before[0] == 0
    for args, message in BAD_COMMANDS:
        code, _, err = neoweave(*args)
        assert code in (1, 2), (args, code, err)
        assert message in " ".join(err.split()), (args, err)
        assert "Traceback" not in err and "rerun with --debug" not in err, (args, err)  # no unexpected error
    after = neoweave("status", "--json")
    assert json.loads(after[1])["nodes"] == json.loads(before[1])["nodes"]


def test_malformed_qa_file_names_the_file_and_line(graph, neoweave):
    (graph / "qa.jsonl").write_text('{"id": "q1", "question": "Who?", "answer": "A", "evidence": ["k1"]}\n{not json\n',
                                    encoding="utf-8")
    code, _, err = neoweave("eval", "--qa", "qa.jsonl")
    assert code == 1 and "qa.jsonl:2" in err and "Traceback" not in err


def test_unicode_and_nul_in_questions_and_tags(graph, neoweave):
    code, out, err = neoweave("query", "Lothair — \u202e 王 😀 Waldrada", "--k", "2", "--json")
    assert code == 0, err
    assert json.loads(out)["items"]
    code, _, err = neoweave("tags", "add", "k1", "Frankish\u00a0kings 👑")
    assert code == 0, err
    code, out, _ = neoweave("tags", "show", "k1", "--json")
    assert "frankish kings" in {tag["tag"] for tag in json.loads(out)["master"]}  # canonical form: no symbols


def test_a_data_directory_on_a_read_only_file_system(neoweave, tmp_path):
    code, _, err = neoweave("--data-dir", "/sys/kernel", "status")  # exists, and refuses every write
    assert code == 1 and "the data directory /sys/kernel is not writable" in err and "Traceback" not in err
    code, _, err = neoweave("--data-dir", "/sys/neoweave/graph", "status")
    assert code == 1 and "cannot create the data directory /sys/neoweave/graph" in err


class DyingEndpoint:
    """An OpenAI-compatible endpoint that answers `lives` requests with three tags, then closes its socket
    (later connections are refused, as with a killed server)."""

    def __init__(self, lives: int) -> None:
        self.lives = lives
        self.served = 0
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                endpoint.served += 1
                content = json.dumps({"tags": [f"gist {endpoint.served}", "Lothair II", "history"]})
                body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "stub",
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": content}}],
                                   "usage": {"prompt_tokens": 50, "completion_tokens": 9}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                if endpoint.served >= endpoint.lives:
                    threading.Thread(target=endpoint.die, daemon=True).start()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def die(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def gateway(self) -> LLMGateway:
        client = openai.OpenAI(api_key="k", base_url=self.url, max_retries=0, timeout=5)
        return LLMGateway(client, "stub-model", concurrency=1, max_retries=1, backoff_seconds=0.01)


def _broken(store) -> dict[str, int]:
    return {row["check"]: row["failing"] for row in store.query(explore_query("integrity_checks").text)
            if row["failing"]}


def test_a_model_server_that_dies_mid_run_stops_the_step_and_the_rerun_finishes(falkordb_store, embedder,
                                                                                 tmp_path):
    ingest_records(falkordb_store, embedder, tmp_path / "corpus.jsonl", COMMUNITY_CORPUS)
    chunks = falkordb_store.query("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
    dying = DyingEndpoint(lives=5)  # the first unit (2 documents, 2 chunks) and one more master-tag call
    with pytest.raises(LLMUnavailable, match=f"LLM request to {dying.url}"):
        run("tags", falkordb_store, embedder=embedder, llm=dying.gateway(), method="llm", batch_size=2,
            progress=False)
    assert _broken(falkordb_store) == {}
    tagged = falkordb_store.query("MATCH (c:Chunk) WHERE c.tag_path IS NOT NULL RETURN count(c) AS n")[0]["n"]
    assert 0 < tagged < chunks  # what was committed before the server died is kept, the rest is pending
    machine = falkordb_store.query("MATCH (:Chunk)-[r:TAGGED]->() RETURN collect(DISTINCT r.method) AS m")[0]["m"]
    assert machine == ["llm"]  # nothing was quietly tagged with the fast method instead

    revived = DyingEndpoint(lives=10_000)
    report = run("tags", falkordb_store, embedder=embedder, llm=revived.gateway(), method="llm", batch_size=2,
                 progress=False)
    revived.die()
    assert report.chunks == chunks - tagged  # only the pending chunks were asked again
    assert falkordb_store.query("MATCH (c:Chunk) WHERE c.tag_path IS NULL RETURN count(c) AS n")[0]["n"] == 0
    assert _broken(falkordb_store) == {}


def test_secrets_never_reach_output_or_tracebacks(graph, neoweave, monkeypatch):
    secret = "sk-test-DO-NOT-PRINT-4242"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("NEOWEAVE_LLM_PROVIDER", "openai")
    monkeypatch.setenv("NEOWEAVE_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: every call fails
    monkeypatch.setenv("NEOWEAVE_NEO4J_PASSWORD", "pw-DO-NOT-PRINT")
    for args in (["llm", "check"], ["query", "Who was Waldrada?", "--answer"], ["status", "--json"],
                 ["--debug", "llm", "check"]):
        try:
            _, out, err = neoweave(*args)
        except Exception as exc:  # --debug re-raises: the traceback is what a user would paste in an issue
            import traceback

            out, err = "", "".join(traceback.format_exception(exc))
        assert secret not in out + err and "pw-DO-NOT-PRINT" not in out + err, args
