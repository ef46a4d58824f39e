"""Stale derived text is never served (issue 74): a community report whose members or cited chunks changed
(`delete`, `sync`, `entities unmerge`) is withdrawn from community search, with a note in the trace naming the
command that rewrites it, until `enrich communities` does; `check` flags it and prints that command. Every state
a strategy cannot serve (a stale report, a link or chunk without its embedding) is planted here: `check` flags
it, every LLM-free strategy answers without serving it and notes what it left out. Real store, embedding model and
files; the fast enrich methods."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import COMMUNITY_CORPUS

from neoweave.query.base import REPORT_REPAIR
from neoweave.registry import llm_free_strategies

QUESTIONS = ("Who founded the Python Software Foundation?", "Who was the wife of Lothair II?",
             "Where did Waldrada and Lothair II live?", "Where did Guido van Rossum create Python?")
REPAIR = "neoweave enrich communities"


def write_corpus(folder: Path) -> Path:
    """COMMUNITY_CORPUS as Markdown files, one a document (so a file can be deleted or removed and synced)."""
    folder.mkdir(parents=True, exist_ok=True)
    for record in COMMUNITY_CORPUS:
        (folder / f"{record['id']}.md").write_text(f"# {record['title']}\n\n{record['text']}\n", encoding="utf-8")
    return folder


def failing_checks(kb) -> dict[str, dict]:
    return {row["check"]: row for row in kb.check() if row["failing"]}


def served_reports(kb, strategy: str = "community_local") -> tuple[str, list[list[str]]]:
    """Every report text community search serves for the questions, and each answer's trace notes."""
    texts, notes = [], []
    for question in QUESTIONS:
        result = kb.retrieve(question, strategy, 3)
        texts += [report.text for report in result.reports]
        notes.append(result.trace.notes)
    return "\n".join(texts), notes


def quoted_sentence(kb) -> tuple[str, str]:
    """A record whose sentence a report quotes word for word: (record id, the sentence)."""
    reports = "\n".join(row["text"] for row in kb.cypher("MATCH (c:Community) RETURN c.full_report AS text"))
    for record in COMMUNITY_CORPUS:
        for sentence in record["text"].split(". "):
            sentence = sentence.rstrip(".")
            if len(sentence) > 30 and sentence in reports:
                return record["id"], sentence
    raise AssertionError("no report quotes a sentence of the corpus")


@pytest.fixture
def reported(kb, tmp_path) -> Path:
    """The corpus ingested from files, with its entity graph and fast community reports; check passes."""
    folder = write_corpus(tmp_path / "corpus")
    kb.ingest(folder)
    kb.enrich("kg")
    kb.enrich("communities")
    assert failing_checks(kb) == {}
    return folder


@pytest.mark.parametrize("write", ["delete", "sync"])
def test_a_report_quoting_a_deleted_sentence_is_withdrawn_until_rewritten(kb, reported, write):
    """Issue 74's probe: after `delete` (or removing the file and `sync`) and `enrich kg`, community_local quoted
    a deleted sentence word for word until `enrich communities` ran. Now the reports citing it are withdrawn (noted,
    flagged by check with the command that rewrites them), and served again once rewritten."""
    record, sentence = quoted_sentence(kb)
    served, notes = served_reports(kb)
    assert sentence in served and not any(notes)  # served while current: the test can fail
    if write == "delete":
        assert len(kb.delete(str(reported / f"{record}.md"))) == 1
    else:
        (reported / f"{record}.md").unlink()
        report = kb.sync(reported)
        assert len(report.deleted) == 1 and any(step.startswith(REPAIR) for step in report.next_steps)
    for then in ("the write", "enrich kg"):
        failing = failing_checks(kb)
        assert "community report older than its members" in failing, then
        assert {row["repair"] for row in failing.values()} == {REPAIR}, (then, failing)
        served, notes = served_reports(kb)
        assert sentence not in served, then
        withdrawn = [note for answer in notes for note in answer]
        assert withdrawn and all(" community report(s) older than their members " in note
                                 and note.endswith(REPORT_REPAIR) for note in withdrawn), withdrawn
        kb.enrich("kg")
    kb.enrich("communities")
    assert failing_checks(kb) == {}
    served, notes = served_reports(kb)
    assert sentence not in served and not any(notes) and served  # rewritten from what remains, served again


def test_global_search_reads_no_withdrawn_report(kb, reported):
    """community_global's statements (its map step needs a model) leave withdrawn reports out and list them; its
    leaf-or-top level choice does not weigh them either."""
    record, _ = quoted_sentence(kb)
    embedding = kb.embedder.embed_query(QUESTIONS[0])
    every = {"level": 9, "min_rating": 0.0, "embedding": embedding, "limit": 1000}
    before = kb.store.run("global_level_reports", every)
    assert before and all(row["withdrawn"] == [] for row in before)
    choice = {"embedding": embedding, "min_rating": 0.0, "m": 1000}
    weighed = sum(len(row["best"]) for row in kb.store.run("community_level_match", choice))
    assert weighed == len(before)
    kb.delete(str(reported / f"{record}.md"))
    after = kb.store.run("global_level_reports", every)
    withdrawn = after[0]["withdrawn"]
    assert withdrawn and {row["id"] for row in after}.isdisjoint(withdrawn)
    assert {row["id"] for row in after} | set(withdrawn) == {row["id"] for row in before}
    stale = set(kb.cypher("MATCH (s:Meta {id: 'communities'}) RETURN s.members_changed AS ids")[0]["ids"])
    assert set(withdrawn) == stale & {row["id"] for row in before}
    assert sum(len(row["best"]) for row in kb.store.run("community_level_match", choice)) == weighed - len(withdrawn)


RANKED_BY_EMBEDDING = ("naive", "larag", "kg", "community_local", "ppr", "orion")
"""LLM-free strategies that rank chunks by their embeddings: a chunk without one is skipped and noted."""
LLM_FREE = llm_free_strategies()
"""Parameters that keep a strategy from calling the LLM."""
BY_TEXT = ("hybrid", "khl")
"""LLM-free strategies that may reach a chunk by its words (BM25) or RST edges: one without an embedding but with
its text is still whole to them; they skip one without text."""


def test_every_state_a_strategy_cannot_serve_is_flagged_and_not_served(kb, reported):
    """Planted together: a report older than its members, a report citing a deleted chunk, links without their
    context embeddings, a chunk without its embedding and one without its text. `check` flags each with the
    command that repairs it; every LLM-free strategy answers, serves none of them and notes what it left out; the
    MCP trace summary carries the notes; the repairs make check pass and the notes go."""
    kb.enrich("tags")
    kb.enrich("rst")
    chunks = {row["doc"]: row["id"] for row in kb.cypher("MATCH (c:Chunk) RETURN c.doc_id AS doc, c.id AS id")}
    unembedded, textless = (next(c for d, c in chunks.items() if d.endswith(f"/{name}.md")) for name in ("k3", "p2"))
    communities = [row["id"] for row in kb.cypher("MATCH (c:Community) RETURN c.id AS id ORDER BY c.level, c.id")]
    stale, citing = communities[0], communities[-1]
    assert kb.cypher("MATCH ()-[l:LINKS_TO]->() RETURN count(l) AS n")[0]["n"] > 0
    kb.cypher("MATCH (s:Meta {id: 'communities'}) SET s.members_changed = [$id]", {"id": stale}, write=True)
    kb.cypher("MATCH (c:Community {id: $id}) SET c.chunk_ids = c.chunk_ids + ['gone#_s0:0']", {"id": citing},
              write=True)
    kb.cypher("MATCH ()-[l:LINKS_TO]->() SET l.context_embedding = null", write=True)
    kb.cypher("MATCH (c:Chunk {id: $id}) SET c.embedding = null", {"id": unembedded}, write=True)
    kb.cypher("MATCH (c:Chunk {id: $id}) SET c.text = null", {"id": textless}, write=True)

    failing = failing_checks(kb)
    assert {name: row["failing"] for name, row in failing.items()} == {
        "community report older than its members": 1, "community report citing a deleted chunk": 1,
        "link without its context embedding": failing["link without its context embedding"]["failing"],
        "chunk without its text or embedding": 2}
    assert all(row["repair"] for row in failing.values())
    assert failing["community report citing a deleted chunk"]["repair"] == REPAIR

    from neoweave.mcp.views import retrieval_data

    noted: dict[str, list[str]] = {}
    for name in (*RANKED_BY_EMBEDDING, *BY_TEXT):
        for question in QUESTIONS:
            result = kb.retrieve(question, name, 5, parameters=LLM_FREE.get(name))  # never an error
            served = {item.chunk_id for item in result.items}
            assert textless not in served and all(item.text for item in result.items), name
            if name in RANKED_BY_EMBEDDING:
                assert unembedded not in served, (name, question)
            assert not {stale, citing} & {report.community_id for report in result.reports}, name
            assert not any(rel == "LINKS_TO" for _, rel, _ in result.trace.relationships), name
            summary = retrieval_data(result)["trace"]
            assert summary["notes"] == result.trace.notes and summary["skipped_links"] == [
                list(link) for link in result.trace.skipped_links]
            assert summary["skipped_chunks"] == result.trace.skipped_chunks
            assert summary["skipped_reports"] == result.trace.skipped_reports
            noted.setdefault(name, []).extend(result.trace.notes)
    assert any("community report(s) older than their members" in note for note in noted["community_local"])
    assert any("chunk(s) without an embedding or text" in note for name in ("kg", "ppr", "community_local")
               for note in noted[name])
    assert any("link(s) without a context embedding" in note for note in noted["larag"])

    kb.enrich("communities")  # the repairs check printed: the reports rewritten, the chunks written again
    assert set(failing_checks(kb)) == {"link without its context embedding", "chunk without its text or embedding"}
    for name in ("k3", "p2"):
        kb.delete(str(reported / f"{name}.md"))
    kb.ingest(reported)  # the two documents written again, every missing link context embedded
    kb.enrich("kg")
    kb.enrich("communities")
    assert failing_checks(kb) == {}
    for name in (*RANKED_BY_EMBEDDING, *BY_TEXT):
        assert not kb.retrieve(QUESTIONS[0], name, 5, parameters=LLM_FREE.get(name)).trace.notes, name


def test_unmerge_withdraws_the_changed_reports_and_prints_the_command(cli, workdir):
    """Issue 74's probe: `entities unmerge` left check failing (community sizes and reports) and printed no next
    step. Now it prints the withdrawn reports and the command; check fails only on what that command repairs, and
    names it; community_local serves none of the withdrawn reports; after the command check passes."""
    folder = write_corpus(workdir / "corpus")
    (folder / "m2.md").write_text("# Lotharingia\n\nKing Lothair II ruled Lotharingia from Aachen. Teutberga married "
                                  "King Lothair II in 855.\n", encoding="utf-8")
    cli("ingest", str(folder), "--no-progress")
    cli("enrich", "kg", "--no-progress")
    cli("enrich", "communities", "--no-progress")
    merged = json.loads(cli("cypher", "MATCH (m:EntityMerge {status: 'merged'}) WHERE m.absorbed_id ENDS WITH "
                                      "'king lothair ii' RETURN m.absorbed_id AS id", "--json").stdout)
    undone = cli("entities", "unmerge", merged["id"]).stdout
    assert f"restored {merged['id']}" in undone
    assert "withdrawn from retrieval until `neoweave enrich communities` rewrites them" in " ".join(undone.split())
    checked = cli("check", check=False)
    failing = [row for row in json.loads(cli("check", "--json", check=False).stdout) if row["failing"]]
    assert checked.returncode == 1 and failing and {row["repair"] for row in failing} == {REPAIR}, failing
    assert f"repair: {REPAIR}" in checked.stdout
    status = cli("status").stdout
    assert " withdrawn)" in status and f"`{REPAIR}`" in " ".join(status.split())
    stale = json.loads(cli("cypher", "MATCH (s:Meta {id: 'communities'}) RETURN s.members_changed AS ids",
                           "--json").stdout)["ids"]
    asked = json.loads(cli("query", "Who did King Lothair II marry?", "-s", "community_local", "--json").stdout)
    assert stale and not set(stale) & {report["community_id"] for report in asked["reports"]}
    assert asked["trace"]["skipped_reports"] and set(asked["trace"]["skipped_reports"]) <= set(stale)
    cli("enrich", "communities", "--no-progress")
    assert "all 23 checks pass" in cli("check").stdout
