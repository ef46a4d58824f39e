"""`neoweave datasets`: build QA sets and corpora from documentation and from the benchmarks the seed papers
evaluate on (as downloaded; nothing ships with neoweave)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neoweave.cli.common import console, group

datasets_app = group("datasets", "Build evaluation datasets (a Sphinx FAQ; MultiHop-RAG, FinanceBench, UltraDomain, "
                     "MuSiQue as downloaded).")
_OUT = typer.Option("--out", help="output directory (qa.jsonl and the corpus)")


@datasets_app.command("sphinx-faq")
def sphinx_faq(
    html_dir: Annotated[Path, typer.Argument(help="root of a Sphinx HTML build (with a faq/ folder)")],
    out: Annotated[Path, typer.Option("--out", help="output directory (qa.jsonl, corpus/)")],
    base_url: Annotated[str | None, typer.Option("--base-url", help="URL the docs are published at")] = None,
) -> None:
    """QA set from the FAQ pages (gold evidence = the sections answers link to); corpus without the FAQ."""
    from neoweave.eval.sphinx_faq import build_sphinx_faq

    result = build_sphinx_faq(html_dir, out, base_url=base_url)
    console.print(f"{result.questions} questions ({result.without_evidence} without links) -> {result.qa_path}; "
                  f"corpus without the FAQ -> {result.corpus_dir}", highlight=False)
    console.print((out / "README.md").read_text(), highlight=False)


@datasets_app.command("multihop-rag")
def multihop_rag(
    corpus: Annotated[Path, typer.Argument(help="MultiHop-RAG's corpus.json")],
    questions: Annotated[Path, typer.Argument(help="MultiHop-RAG's MultiHopRAG.json")],
    out: Annotated[Path, _OUT],
    per_type: Annotated[int | None, typer.Option("--per-type", help="the thesis's stratified sample: this many "
                                                 "questions of each type (50 gave its 200), and only the articles "
                                                 "they cite")] = None,
    seed: Annotated[int, typer.Option("--seed", help="random seed of the sample")] = 0,
) -> None:
    """MultiHop-RAG as downloaded -> qa.jsonl (evidence = article titles, evidence_text = the facts, type =
    question type) + corpus.jsonl."""
    from neoweave.eval.datasets.multihop_rag import convert_multihop_rag

    result = convert_multihop_rag(corpus, questions, out, per_type=per_type, seed=seed)
    console.print(result.summary() + " --answer --prompt short_answer", highlight=False)


@datasets_app.command("financebench")
def financebench(
    questions: Annotated[Path, typer.Argument(help="FinanceBench's data/financebench_open_source.jsonl")],
    pdfs: Annotated[Path, typer.Option("--pdfs", help="FinanceBench's pdfs/ folder")],
    out: Annotated[Path, _OUT],
    base_url: Annotated[str | None, typer.Option("--base-url", help="URL the filings are ingested under (the "
                                                 "evidence keys use it)")] = None,
) -> None:
    """FinanceBench (Orion-RAG) -> qa.jsonl (evidence = the cited filing's page) + corpus/ (the cited PDFs)."""
    from neoweave.eval.datasets.financebench import PDF_BASE_URL, convert_financebench

    console.print(convert_financebench(questions, pdfs, out, base_url=base_url or PDF_BASE_URL).summary(),
                  highlight=False)


@datasets_app.command("ultradomain")
def ultradomain(
    files: Annotated[list[Path], typer.Argument(help="UltraDomain domain files (agriculture.jsonl, cs.jsonl, ...)")],
    out: Annotated[Path, _OUT],
) -> None:
    """UltraDomain (PankRAG; KHL-RAG's domain corpora) -> qa.jsonl (evidence = the book, type = domain) +
    corpus.jsonl (one record a book)."""
    from neoweave.eval.datasets.ultradomain import convert_ultradomain

    console.print(convert_ultradomain(files, out).summary(), highlight=False)


@datasets_app.command("musique")
def musique(
    path: Annotated[Path, typer.Argument(help="a MuSiQue file (musique_ans_v1.0_dev.jsonl)")],
    out: Annotated[Path, _OUT],
    unanswerable: Annotated[bool, typer.Option("--unanswerable", help="keep the full set's unanswerable "
                                               "questions")] = False,
) -> None:
    """MuSiQue -> qa.jsonl (evidence = the supporting paragraphs, type = hop pattern) + corpus.jsonl (every
    distinct paragraph)."""
    from neoweave.eval.datasets.musique import convert_musique

    console.print(convert_musique(path, out, unanswerable=unanswerable).summary(), highlight=False)
