"""An evaluation stopped part way keeps its finished records (RUN/progress.jsonl); the same run again evaluates
only the rest, and another configuration starts over. Real graph, embedder and files; a scripted LLM that fails
on a chosen call (an endpoint's error mid-run)."""

import json

import pytest
from conftest import ScriptedClient

from neoweave.config import load_settings
from neoweave.eval.checkpoint import PROGRESS_FILE
from neoweave.eval.runner import RunConfig
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.kb import KnowledgeBase
from neoweave.llm import ChatResult, LLMCall, LLMError

QUESTIONS = [("q1", "How does the event loop schedule coroutines?"), ("q2", "What collects reference cycles?"),
             ("q3", "Which module defines tasks?"), ("q4", "How is memory managed?")]


class ScriptedAnswers(ScriptedClient):
    """Replies `reply` to every prompt and records the questions it was asked; fails on call `fail_on`. A reply
    that cites ("[1]") makes one call a question (no follow-up turn asking for citations)."""

    def __init__(self, reply: str, fail_on: int | None = None) -> None:
        self.reply, self.fail_on = reply, fail_on
        self.asked: list[str] = []

    def chat(self, messages, **kwargs):
        if self.fail_on is not None and len(self.asked) + 1 == self.fail_on:
            raise LLMError("HTTP 503 from script: the endpoint went away")
        self.asked.append(messages[-1]["content"])
        return ChatResult(self.reply, LLMCall(stage=kwargs.get("stage", ""), model=self.model, prompt_tokens=50,
                                              completion_tokens=3, latency_ms=2.0))


@pytest.fixture
def qa(falkordb_store, embedder, site, tmp_path):
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps({"id": qid, "question": text, "answer": "the event loop", "aliases": [],
                                        "evidence": ["Memory"], "type": "bridge"}) + "\n"
                            for qid, text in QUESTIONS))
    return path


def _evaluate(store, embedder, workdir, qa, out, llm, *, max_tokens=None, concurrency=1, resume=True):
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": workdir / ".neoweave"}})
    config = RunConfig(["naive"], [2], answer=True, max_tokens=max_tokens, bertscore=None, concurrency=concurrency)
    kb = KnowledgeBase(settings, store=store, embedder=embedder, llm=llm)
    return kb.evaluate(qa, config, out, progress=False, resume=resume)


def _asked(llm):
    return sorted(qid for qid, text in QUESTIONS if any(text in prompt for prompt in llm.asked))


def test_a_stopped_run_keeps_its_records_and_the_same_run_again_does_the_rest(falkordb_store, embedder, workdir,
                                                                              qa):
    out = workdir / "run"
    failing = ScriptedAnswers("First run [1].", fail_on=3)
    with pytest.raises(LLMError, match="went away"):
        _evaluate(falkordb_store, embedder, workdir, qa, out, failing)
    lines = (out / PROGRESS_FILE).read_text().splitlines()
    assert len(lines) == 1 + 2 and not (out / "records.json").exists()
    with (out / PROGRESS_FILE).open("a") as handle:
        handle.write('{"key": ["naive", 2, "q3"], "rec')  # the line the stop cut short

    again = ScriptedAnswers("Second run [1].")
    outcome = _evaluate(falkordb_store, embedder, workdir, qa, out, again, concurrency=2)
    assert _asked(again) == ["q3", "q4"]  # the finished two are not asked again
    records = json.loads((out / "records.json").read_text())
    assert [r["question_id"] for r in records] == ["q1", "q2", "q3", "q4"]
    assert [r["answer"] for r in records] == ["First run."] * 2 + ["Second run."] * 2
    assert outcome.evaluation.resumed == {("naive", 2, "q1"), ("naive", 2, "q2")}
    assert outcome.setup["resumed"].startswith("2 of 4 records")
    assert outcome.rows[0]["questions"] == 4 and not (out / PROGRESS_FILE).exists()
    assert "2 of 4 records" in (out / "report.md").read_text()


def test_another_configuration_graph_or_restart_evaluates_everything(falkordb_store, embedder, workdir, qa):
    out = workdir / "run"
    with pytest.raises(LLMError):
        _evaluate(falkordb_store, embedder, workdir, qa, out, ScriptedAnswers("First [1].", fail_on=4))
    shorter = ScriptedAnswers("Shorter [1].", fail_on=2)
    with pytest.raises(LLMError):  # answers capped at 64 tokens are another run: the first one's are not its
        _evaluate(falkordb_store, embedder, workdir, qa, out, shorter, max_tokens=64)
    assert _asked(shorter) == ["q1"]
    falkordb_store.restamp()  # a write to the graph since: another run, though the configuration is the same
    rewritten = ScriptedAnswers("Rewritten [1].", fail_on=2)
    with pytest.raises(LLMError):
        _evaluate(falkordb_store, embedder, workdir, qa, out, rewritten, max_tokens=64)
    assert _asked(rewritten) == ["q1"]
    restarted = ScriptedAnswers("Restarted [1].")
    outcome = _evaluate(falkordb_store, embedder, workdir, qa, out, restarted, max_tokens=64, resume=False)
    assert _asked(restarted) == ["q1", "q2", "q3", "q4"] and not outcome.evaluation.resumed
    assert "resumed" not in outcome.setup or outcome.setup["resumed"] is None
