"""The `neoweave` command as a user runs it, against the real embedded store."""

import json
import os
import re
import subprocess
import sys


def test_init_status_and_cypher(cli, workdir):
    status = json.loads(cli("status", "--json").stdout)
    assert status["meta"] is None and status["nodes"] == {}
    assert "initialised" in cli("status").stdout
    out = cli("init").stdout
    assert "schema applied on falkordb" in out
    status = json.loads(cli("status", "--json").stdout)
    assert status["meta"]["embedding_model"] == "all-MiniLM-L6-v2" and status["meta"]["dimension"] == 384
    assert status["nodes"] == {"Meta": 1}
    assert any(i["type"] == "VECTOR" and i["labels"] == ["Chunk"] for i in status["indexes"])
    assert (workdir / ".neoweave" / "appendonly").is_dir()
    rows = cli("cypher", "MATCH (m:Meta {id: $id}) RETURN m.dimension AS d", "--param", "id=meta", "--json")
    assert json.loads(rows.stdout.strip()) == {"d": 384}
    assert "document_outline -p doc_id=..." in cli("cypher", "--list").stdout
    checks = [json.loads(line) for line in cli("cypher", "--file", "integrity_checks", "--json").stdout.splitlines()]
    assert len(checks) == 23 and all(row["failing"] == 0 for row in checks)
    (workdir / "mine.cypher").write_text("MATCH (m:Meta) RETURN count(m) AS metas", encoding="utf-8")
    assert json.loads(cli("cypher", "-f", "mine.cypher", "--json").stdout) == {"metas": 1}
    needs = cli("cypher", "--file", "document_outline", check=False)
    assert needs.returncode == 1 and "needs -p doc_id=..." in needs.stderr
    nothing = cli("cypher", check=False)
    assert nothing.returncode == 1 and "give a query, or --file" in nothing.stderr


def test_writes_need_write_flag(cli):
    cli("init")
    refused = cli("cypher", "CREATE (t:Tag {name: 'x'})", check=False)
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: this query writes") and "Traceback" not in refused.stderr
    cli("cypher", "CREATE (t:Tag {name: 'x'})", "--write")
    assert json.loads(cli("status", "--json").stdout)["nodes"]["Tag"] == 1


def test_errors_are_one_clear_line(cli, workdir):
    bad = cli("cypher", "MATCH (a) RETRUN a", check=False)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr and "RETRUN" in bad.stderr
    (workdir / "neoweave.toml").write_text("[falkordb]\nef_runtime = -1\n")
    bad = cli("status", check=False)
    assert bad.returncode == 1 and "falkordb.ef_runtime" in bad.stderr and "Traceback" not in bad.stderr
    (workdir / "neoweave.toml").unlink()
    bad = cli("--store", "neo4j", "status", check=False)  # nothing listens on the default Neo4j port here
    assert bad.returncode == 1 and "Neo4j at bolt://localhost:7687 is unreachable" in bad.stderr
    bad = cli("cypher", "RETURN 1", "--param", "novalue", check=False)
    assert bad.returncode == 1 and "KEY=VALUE" in bad.stderr
    (workdir / "afile").write_text("x")
    bad = cli("--data-dir", "afile/sub", "status", check=False)
    assert bad.returncode == 1 and "afile is a file" in bad.stderr and "Traceback" not in bad.stderr
    cli("init")
    for question in ("", "  \n "):  # (a NUL cannot reach a command line; the API test sends one)
        bad = cli("query", question, check=False)
        assert bad.returncode == 1 and "the question is empty" in bad.stderr


def test_another_embedding_model_is_refused(cli):
    cli("init")
    bad = subprocess.run([sys.executable, "-m", "neoweave.cli", "init"], capture_output=True, text=True,
                         env={**os.environ, "NEOWEAVE_EMBEDDING_MODEL": "all-mpnet-base-v2"}, cwd=os.getcwd())
    assert bad.returncode == 1 and "cannot be mixed" in bad.stderr


def test_ingest_status_follow_links_and_delete(cli, workdir, site):
    out = cli("ingest", str(site), "--no-progress", "--base-url", "https://docs.example.org/tiny/")
    assert "documents ingested" in out.stdout and "4 resolved, 2 unresolved" in out.stdout
    assert "4 link contexts embedded" in " ".join(out.stdout.split())  # at ingest: retrieval only reads
    again = json.loads(cli("ingest", str(site), "--json", "--base-url", "https://docs.example.org/tiny/").stdout)
    assert again["documents_unchanged"] == 3 and again["chunks"] == 0 and again["link_contexts_embedded"] == 0
    status = json.loads(cli("status", "--json").stdout)
    assert status["nodes"]["Document"] == 3 and status["relationships"]["LINKS_TO"] == 4
    rows = cli("cypher", "MATCH (s:Section {id: $id})-[l:LINKS_TO]->(t:Section) RETURN t.id AS target, l.text AS text",
               "-p", "id=https://docs.example.org/tiny/guide/async.html#event-loop", "--json").stdout.splitlines()
    assert [json.loads(r) for r in rows] == [
        {"target": "https://docs.example.org/tiny/guide/memory.html#garbage-collection", "text": "garbage collection"}]
    deleted = cli("delete", str(site / "guide" / "memory.html"))
    assert "deleted 1 document" in deleted.stdout
    assert json.loads(cli("status", "--json").stdout)["nodes"]["Document"] == 2
    missing = cli("delete", "no-such-doc", check=False)
    assert missing.returncode == 1 and "no document has id or path 'no-such-doc'" in missing.stderr


def test_ingest_bad_options_and_paths(cli, workdir):
    bad = cli("ingest", str(workdir / "nope"), check=False)
    assert bad.returncode == 1 and "ingest path not found" in bad.stderr
    bad = cli("ingest", str(workdir), "--chunk-size", "10", check=False)
    assert bad.returncode == 1 and "chunk_size must be at least 50" in bad.stderr
    bad = cli("ingest", str(workdir), "--format", "rtf", check=False)
    assert bad.returncode == 1 and "unknown --format 'rtf'" in bad.stderr


def test_eval_ingests_and_writes_report_json_and_plot(cli, workdir, site):
    qa = workdir / "qa.jsonl"
    qa.write_text(json.dumps({"id": "q1", "question": "How does the event loop schedule coroutines?", "answer": "x",
                              "evidence": ["https://docs.example.org/tiny/guide/memory.html#garbage-collection"]})
                  + "\n")
    def embedded_link_contexts() -> int:
        return json.loads(cli("cypher", "MATCH ()-[l:LINKS_TO]->() RETURN count(l.context_embedding) AS n",
                              "--json").stdout)["n"]

    # the corpus's ingest embeds every link context: the strategies that rank links by them only read
    cli("eval", "--qa", str(qa), "--corpus", str(site), "--base-url", "https://docs.example.org/tiny/",
        "--strategies", "naive", "--out", "naive-only")
    assert embedded_link_contexts() == 4
    out = cli("eval", "--qa", str(qa), "--corpus", str(site), "--base-url", "https://docs.example.org/tiny/",
              "--k", "1,2", "--out", "report").stdout
    assert embedded_link_contexts() == 4
    assert "| larag | 1 | all | 1 | 1.000 |" in out and "report: report/report.md" in out
    assert {p.name for p in (workdir / "report").iterdir()} == {"report.md", "records.json", "summary.json",
                                                                "plot.png"}
    assert len(json.loads((workdir / "report" / "records.json").read_text())) == 4  # 2 strategies x 2 k
    report = (workdir / "report" / "report.md").read_text()
    assert "## Equal budget" in report and "| chunks:1 | larag | 2 |" in report
    assert "**Unequal context**" in report  # larag returned its linked chunks beside the seeds
    compared = json.loads(cli("eval", "compare", "report", "report", "--a-strategy", "naive", "--b-strategy",
                              "larag", "--json").stdout)
    hit = next(r for r in compared["rows"] if r["metric"] == "recall" and r["k"] == 1)
    assert hit["a"] == 0.0 and hit["b"] == 1.0 and hit["n"] == 1
    assert [f["metric"] for f in compared["flipped"] if f["k"] == 1] == ["hit", "perfect"]
    bad = cli("eval", "compare", "report", "nowhere", check=False)
    assert bad.returncode == 1 and "no evaluation records at nowhere" in bad.stderr
    bad = cli("eval", "--qa", str(qa), "--k", "0", check=False)
    assert bad.returncode == 1 and "--k needs positive integers" in bad.stderr
    bad = cli("eval", "--qa", str(qa), "--prompt", "graphrag=basic", check=False)
    assert bad.returncode == 1 and "--prompt names strategy 'graphrag'" in bad.stderr


def test_enrich_communities_and_inspect_them(cli, workdir):
    from conftest import COMMUNITY_CORPUS as CORPUS

    (workdir / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CORPUS), encoding="utf-8")
    cli("ingest", "corpus.jsonl", "--no-progress")
    none = cli("communities", "list", check=False)
    assert none.returncode == 1 and "run `neoweave enrich communities`" in none.stderr
    cli("enrich", "kg", "--no-progress", "-P", "n_process=1")
    report = json.loads(cli("enrich", "communities", "--json", "-P", "max_cluster_size=6").stdout)
    assert report["counters"]["communities"] >= 2 and report["counters"]["reports_written"] >= 2
    assert "reports" in report["phase_seconds"]
    listed = cli("communities", "list", "--level", "0").stdout
    assert "communities per level" in listed and "community:0:" in listed
    levels = json.loads(cli("status", "--json").stdout)["community_levels"]
    assert levels[0]["level"] == 0 and sum(r["communities"] for r in levels) == report["counters"]["communities"]
    community = json.loads(cli("cypher", "MATCH (c:Community {level: 0}) RETURN c.id AS id ORDER BY c.size DESC "
                                         "LIMIT 1", "--json").stdout)["id"]
    shown = cli("communities", "show", community).stdout
    assert community in shown and "# " in shown and "## Entities" in shown
    missing = cli("communities", "show", "community:9:nope", check=False)
    assert missing.returncode == 1 and "no community 'community:9:nope'" in missing.stderr
    # the graph walk over the same entity graph, from the command line, with its walk in --json
    walk = json.loads(cli("query", "Where did Guido van Rossum create Python?", "-s", "ppr", "--k", "2",
                          "-P", "hops=1", "--json").stdout)
    assert walk["strategy"] == "ppr" and walk["parameters"]["hops"] == 1 and len(walk["items"]) == 2
    assert walk["items"][0]["doc_id"] == "p1" and walk["items"][0]["origin"] == "walk"
    assert any(node.startswith("person:guido") for node in walk["trace"]["seeds"])
    assert walk["trace"]["scores"] and walk["trace"]["relationships"]
    assert set(walk["trace"]["statement_ms"]) == set(walk["trace"]["statements"])
    # the text output names each statement once, with its calls and time
    shown = cli("query", "Where did Guido van Rossum create Python?", "-s", "ppr", "--k", "2").stdout
    assert re.search(r"statements: .*chunk_vector_search [0-9.]+ ms", " ".join(shown.split()))


def test_enrich_tags_edit_them_and_query_orion(cli, workdir):
    from test_orion import BANKS

    (workdir / "banks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in BANKS), encoding="utf-8")
    cli("ingest", "banks.jsonl", "--no-progress")
    report = json.loads(cli("enrich", "tags", "--json", "-P", "master_tags=3").stdout)
    assert report["chunks"] == len(BANKS) and report["counters"]["documents"] == len(BANKS)
    shown = json.loads(cli("tags", "show", "bdo", "--json").stdout)
    assert shown["kind"] == "document" and shown["master"][0]["tag"] == "bdo unibank" and len(shown["master"]) == 3
    edited = json.loads(cli("tags", "add", "bdo", "Diversified business model", "--by", "ana", "--json").stdout)
    assert edited["master"][0]["tag"] == "diversified business model" and edited["master"][0]["by"] == "ana"
    assert "added by ana" in cli("tags", "show", "bdo").stdout
    missing = cli("tags", "remove", "bdo", "no such tag", check=False)
    assert missing.returncode == 1 and "has no tag 'no such tag'" in missing.stderr
    found = json.loads(cli("query", "diversified business model", "-s", "orion", "--k", "1", "-P", "expand=false",
                           "-P", "prune=false", "--json").stdout)
    assert found["items"][0]["doc_id"] == "bdo" and found["items"][0]["details"]["tag_path"].startswith("diversified")
    needs = cli("query", "x", "-s", "orion", "-P", "llm_free=true", check=False)
    assert needs.returncode == 1 and "has no parameter 'llm_free'" in needs.stderr


def test_enrich_rst_and_query_khl(cli, workdir):
    from test_rst import COFFEE

    record = {"id": "coffee", "title": "Coffee", "text": "\n\n".join(COFFEE)}
    (workdir / "coffee.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    cli("ingest", "coffee.jsonl", "--no-progress", "--chunk-size", "200", "--chunk-overlap", "0")
    report = json.loads(cli("enrich", "rst", "--json", "-P", "window=1", "-P", "similar=0").stdout)
    assert report["chunks"] == 5 and report["counters"]["pairs_asked"] == 4
    assert report["counters"]["pairs_all_in_documents"] == 10
    found = json.loads(cli("query", "What happens to coffee farmers as the climate warms?", "-s", "khl", "--k", "1",
                           "-P", "analysis=fast", "-P", "mode=hlpg_filter", "-P", "top_k=1", "-P", "tau=0",
                           "--json").stdout)
    assert [item["origin"] for item in found["items"]][1:] == ["rst"]  # the seed, then its strongest neighbour
    assert found["parameters"]["question_type"] == "knowledge" and "rst_neighbours" in found["trace"]["statements"]
    why = ["explain", "What happens to coffee farmers as the climate warms?", "-s", "khl", "--k", "1", "-P",
           "analysis=fast", "-P", "mode=hlpg_filter", "-P", "top_k=1", "-P", "tau=0"]
    explanation = json.loads(cli(*why, "--json", "--html", "why.html").stdout)
    rst = [rel for rel in explanation["relationships"] if rel["type"] == "RST"]
    assert rst and all(rel["stored"] and rel["traced"] and rel["weight"] > 0 for rel in rst)
    assert {node["role"] for node in explanation["nodes"] if node["label"] == "Chunk"} >= {"rst"}
    assert "neo4j-viz-data" in (workdir / "why.html").read_text(encoding="utf-8")
    browser = cli(*why, "--cypher").stdout
    assert browser.startswith(":params {edges: [") and "MATCH (a:Chunk {id: edge.source})-[r:RST]->" in browser
    assert "nodes" in cli(*why).stdout  # the one-line summary
    bad = cli("enrich", "rst", "-P", "min_weight=12", check=False)
    assert bad.returncode == 1 and "min_weight must be below 10" in bad.stderr


def test_multihop_rag_converts_and_evaluates(cli, workdir):
    articles = [
        {"title": "Nvidia posts record revenue", "author": "A", "source": "TechCrunch", "published_at":
         "2023-11-21T00:00:00+00:00", "category": "technology", "url": "https://example.com/nvidia",
         "body": "Nvidia reported record quarterly revenue of 18 billion dollars, driven by data center chips."},
        {"title": "OpenAI names a new chief", "author": "B", "source": "The Verge", "published_at":
         "2023-11-20T00:00:00+00:00", "category": "technology", "url": "https://example.com/openai",
         "body": "OpenAI's board named Emmett Shear interim chief executive after Sam Altman left."},
    ]
    questions = [
        {"query": "Who did OpenAI's board name interim chief executive?", "answer": "Emmett Shear",
         "question_type": "inference_query", "evidence_list": [
             {"title": "OpenAI names a new chief", "url": "https://example.com/openai", "fact": "..."}]},
        {"query": "What did the Guardian report about tulips in 2021?", "answer": "Insufficient information.",
         "question_type": "null_query", "evidence_list": []},
    ]
    (workdir / "corpus.json").write_text(json.dumps(articles), encoding="utf-8")
    (workdir / "MultiHopRAG.json").write_text(json.dumps(questions), encoding="utf-8")
    out = cli("datasets", "multihop-rag", "corpus.json", "MultiHopRAG.json", "--out", "mh").stdout
    assert "2 questions (inference_query 1, null_query 1)" in out
    qa = [json.loads(line) for line in (workdir / "mh" / "qa.jsonl").read_text().splitlines()]
    assert qa[0]["evidence"] == ["OpenAI names a new chief"] and qa[1]["type"] == "null_query"
    cli("eval", "--qa", "mh/qa.jsonl", "--corpus", "mh/corpus.jsonl", "--strategies", "naive", "--k", "1",
        "--out", "mh-report")
    records = json.loads((workdir / "mh-report" / "records.json").read_text())
    assert records[0]["hit"] == 1.0 and records[0]["retrieved"][0]["evidence"] == "OpenAI names a new chief"
    bad = cli("datasets", "multihop-rag", "MultiHopRAG.json", "missing.json", "--out", "x", check=False)
    assert bad.returncode == 1 and "questions not found: missing.json" in bad.stderr


def test_walk_index_command_status_and_writes_that_leave_it_behind(cli, workdir, site):
    cli("ingest", str(site), "--no-progress", "--base-url", "https://docs.example.org/tiny/")
    cli("enrich", "kg", "--no-progress")  # enrich kg builds ppr's walk index at its end
    walk = json.loads(cli("status", "--json").stdout)["walk_index"]
    assert walk["current"] and walk["chunks"] == json.loads(cli("status", "--json").stdout)["nodes"]["Chunk"]
    assert "walk index: current" in cli("status").stdout
    stamp = walk["stamp"]
    wrote = cli("cypher", "MATCH (c:Chunk) WITH c LIMIT 1 SET c.note = 'x'", "--write")  # any write but enrich kg
    assert "walk index: behind the graph" in wrote.stderr  # ... says the index is now behind it
    walk = json.loads(cli("status", "--json").stdout)["walk_index"]
    assert walk["stamp"] != stamp and walk["saved"] and not walk["current"]  # a new stamp, no rebuild
    assert "walk index: behind the graph" in cli("status").stdout
    out = json.loads(cli("query", "Where does the event loop run?", "-s", "ppr", "--json", "--no-server").stdout)
    assert out["parameters"]["expanded_over"] == "store"
    assert "walk index: current" in cli("walk-index").stdout
    out = json.loads(cli("query", "Where does the event loop run?", "-s", "ppr", "--json", "--no-server").stdout)
    assert out["parameters"]["expanded_over"] == "walk index"
    (workdir / ".neoweave" / "derived").rename(workdir / "elsewhere")  # nothing saved: nothing said
    wrote = cli("cypher", "MATCH (c:Chunk) WITH c LIMIT 1 SET c.note = 'y'", "--write")
    assert "walk index" not in wrote.stderr
    assert "walk index: none" in cli("status").stdout
