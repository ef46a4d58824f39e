"""The benchmark converters on small files written in each dataset's published format (tests/data/datasets),
converted, ingested into a real FalkorDB graph and evaluated: the evidence keys must name what the ingest
stores."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_ingest_documents import _text_pdf

from neoweave.errors import NeoweaveError
from neoweave.eval.datasets.financebench import convert_financebench
from neoweave.eval.datasets.multihop_rag import convert_multihop_rag, stratified_sample
from neoweave.eval.datasets.musique import convert_musique
from neoweave.eval.datasets.ultradomain import convert_ultradomain
from neoweave.eval.runner import RunConfig, load_qa, run

DATA = Path(__file__).parent / "data" / "datasets"


def _ingest(store, embedder, corpus: Path, base_url: str | None = None) -> None:
    from neoweave.ingest import IngestOptions, Ingestor, SourceOptions

    Ingestor(store, embedder, IngestOptions(sources=SourceOptions(base_url=base_url), progress=False)).ingest(corpus)


def _records(store, embedder, qa: Path, k: int) -> dict[str, dict]:
    evaluation = run(store, embedder, load_qa(qa), RunConfig(["naive"], [k], bertscore=None), progress=False)
    return {r["question_id"]: r for r in evaluation.records}


def test_musique_numbers_repeated_titles_and_finds_the_supporting_paragraphs(tmp_path, falkordb_store, embedder):
    converted = convert_musique(DATA / "musique_ans_v1.0_dev.jsonl", tmp_path / "mq")
    corpus = [json.loads(line) for line in converted.corpus_path.read_text().splitlines()]
    assert converted.documents == 6  # "Giant Steps" is in both questions: one record
    assert [r["title"] for r in corpus if r["title"].startswith("Mercury")] == ["Mercury", "Mercury (2)"]
    qa = {q.id: q for q in load_qa(converted.qa_path)}
    assert qa["2hop__13548_13529"].evidence == ["Blue Train (album)", "Blue Note Records"]
    assert qa["2hop__13548_13529"].aliases == ["Lion"] and converted.by_type == {"2hop": 1, "3hop1": 1}
    _ingest(falkordb_store, embedder, converted.corpus_path)
    records = _records(falkordb_store, embedder, converted.qa_path, 6)  # every paragraph comes back
    assert all(r["recall"] == 1.0 for r in records.values())  # titles as stored match the evidence keys


def test_ultradomain_one_record_a_book_and_distinct_titles(tmp_path, falkordb_store, embedder):
    converted = convert_ultradomain([DATA / "agriculture.jsonl", DATA / "cs.jsonl"], tmp_path / "ud")
    books = {r["id"]: r for r in map(json.loads, converted.corpus_path.read_text().splitlines())}
    assert set(books) == {"ctx-agri-1", "ctx-cs-1"}  # two questions over one book: one record
    assert books["ctx-cs-1"]["title"] == "Soil and Seasons (ctx-cs-1)"  # another book with the same title
    assert books["ctx-agri-1"]["metadata"] == {"domain": "agriculture", "authors": "A. Farmer", "language": "en"}
    qa = {q.id: q for q in load_qa(converted.qa_path)}
    assert qa["agri-q2"].answer == "Crop rotation." and qa["agri-q2"].aliases == ["rotating crops"]
    assert qa["cs-q1"].type == "cs" and qa["cs-q1"].evidence == ["Soil and Seasons (ctx-cs-1)"]
    _ingest(falkordb_store, embedder, converted.corpus_path)
    assert _records(falkordb_store, embedder, converted.qa_path, 1)["cs-q1"]["hit"] == 1.0
    with pytest.raises(NeoweaveError, match=r"cs.jsonl:1: a row needs 'input'"):
        bad = tmp_path / "cs.jsonl"
        bad.write_text(json.dumps({"input": "", "context": "x"}) + "\n")
        convert_ultradomain([bad], tmp_path / "bad")


def test_financebench_cites_pages_of_the_filings_as_ingested(tmp_path, falkordb_store, embedder):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "3M_2018_10K.pdf").write_bytes(_text_pdf([
        [(11, 720, "3M annual report 2018. Revenue grew in every segment.")],
        [(11, 720, "Cash flows. Purchases of property, plant and equipment were 1,577 million dollars in 2018.")]]))
    with pytest.raises(NeoweaveError, match=r"1 cited filing\(s\) missing from .*pdfs: ADOBE_2015_10K"):
        convert_financebench(DATA / "financebench_open_source.jsonl", pdfs, tmp_path / "fb")
    (pdfs / "ADOBE_2015_10K.pdf").write_bytes(_text_pdf([
        [(11, 720, "Adobe 2015. Operating income grew faster than revenue in fiscal 2015.")]]))
    base = "https://filings.example.org/pdfs/"
    converted = convert_financebench(DATA / "financebench_open_source.jsonl", pdfs, tmp_path / "fb", base_url=base)
    assert sorted(p.name for p in converted.corpus_path.iterdir()) == ["3M_2018_10K.pdf", "ADOBE_2015_10K.pdf"]
    assert f"--base-url {base}" in converted.summary()
    qa = {q.id: q for q in load_qa(converted.qa_path)}
    question = qa["financebench_id_03029"]
    assert question.evidence == [f"{base}3M_2018_10K.pdf#page=2"]  # evidence_page_num 1 is the second page
    assert question.evidence_text[0].startswith("Purchases of property")
    _ingest(falkordb_store, embedder, converted.corpus_path, base)
    record = _records(falkordb_store, embedder, converted.qa_path, 2)["financebench_id_03029"]
    assert record["doc_hit"] == 1.0 and record["hit"] == 1.0  # the page's section, as the PDF ingest names it
    assert f"{base}3M_2018_10K.pdf#page=2" in [item["evidence"] for item in record["retrieved"]]


def test_multihop_rag_stratified_sample_keeps_the_cited_articles(tmp_path):
    articles = [{"title": f"T{n}", "url": f"https://news.example.org/{n}", "body": f"Body {n}."} for n in range(6)]
    questions = [{"query": f"Q{n}?", "answer": "A", "question_type": kind,
                  "evidence_list": [{"title": f"T{n}", "url": f"https://news.example.org/{n}", "fact": f"F{n}."}]}
                 for n, kind in enumerate(["inference_query", "inference_query", "inference_query",
                                           "comparison_query", "comparison_query"])]
    questions.append({"query": "Q null?", "answer": "Insufficient information.", "question_type": "null_query",
                      "evidence_list": []})
    (tmp_path / "corpus.json").write_text(json.dumps(articles))
    (tmp_path / "MultiHopRAG.json").write_text(json.dumps(questions))
    converted = convert_multihop_rag(tmp_path / "corpus.json", tmp_path / "MultiHopRAG.json", tmp_path / "mh",
                                     per_type=2, seed=7)
    assert converted.by_type == {"comparison_query": 2, "inference_query": 2, "null_query": 1}
    qa = load_qa(converted.qa_path)
    cited = {key for q in qa for key in q.evidence}
    kept = {json.loads(line)["title"] for line in converted.corpus_path.read_text().splitlines()}
    assert kept == cited and converted.documents == 4  # only the sampled questions' articles
    again = convert_multihop_rag(tmp_path / "corpus.json", tmp_path / "MultiHopRAG.json", tmp_path / "mh2",
                                 per_type=2, seed=7)
    assert again.qa_path.read_text() == converted.qa_path.read_text()  # a seed gives the same sample
    assert [q.id for q in qa] == sorted(q.id for q in qa)  # in the file's order
    with pytest.raises(NeoweaveError, match="--per-type must be at least 1"):
        stratified_sample(questions, 0, 0)


def test_converters_name_the_missing_file(tmp_path):
    with pytest.raises(NeoweaveError, match=r"MuSiQue file not found: .*nothing.jsonl"):
        convert_musique(tmp_path / "nothing.jsonl", tmp_path / "out")
    with pytest.raises(NeoweaveError, match=r"PDF folder not found"):
        convert_financebench(DATA / "financebench_open_source.jsonl", tmp_path / "no-pdfs", tmp_path / "out")
    broken = tmp_path / "broken.jsonl"
    shutil.copy(DATA / "musique_ans_v1.0_dev.jsonl", broken)
    broken.write_text(broken.read_text() + "{not json\n")
    with pytest.raises(NeoweaveError, match=r"broken.jsonl:3: not JSON"):
        convert_musique(broken, tmp_path / "out")
