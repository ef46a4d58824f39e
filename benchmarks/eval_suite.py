"""Naive RAG against LARAG on HotpotQA and on the Python 3.11 documentation FAQ, retrieval and answers.

    .venv/bin/python benchmarks/eval_suite.py --out docs/eval

One command, four evaluations, each in its own graph of the embedded store (`--data-dir`, default a fresh
`.neoweave-eval`), with the answers from the local model (Qwen2.5-Coder-1.5B unless `NEOWEAVE_LLM_*` say
otherwise):

1. HotpotQA (`../shared/data/hotpotqa`), retrieval at k = 2, 5, 8, every question;
2. HotpotQA answers at k = 5 with the short-answer prompt (exact match, F1, ROUGE-L, BERTScore);
3. the Python docs FAQ set (built with `neoweave datasets sphinx-faq` from `--python-docs`, FAQ pages held out
   of the corpus), retrieval at k = 2, 5, 8, every question;
4. FAQ answers at k = 2 for the questions whose answers link to reference sections (`with-links`), the
   unified prompt for naive and the hyperlinked prompt for LARAG, as in the LARAG study.

Each writes report.md, summary.json, records.json and plot.png to its own folder under `--out`; the
combined report is `--out`/README.md. Answers are cached in the data directory's llm.sqlite, so a second run
re-scores without asking the model again (and its LLM latencies are then cache hits: use a fresh data dir
for timings). The Python docs come from Debian's python3.11-doc (`apt-get install python3.11-doc`).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.config import load_settings  # noqa: E402
from neoweave.errors import NeoweaveError  # noqa: E402
from neoweave.eval.pipeline import EvalOutcome  # noqa: E402
from neoweave.eval.report import markdown_table  # noqa: E402
from neoweave.eval.runner import RunConfig  # noqa: E402
from neoweave.eval.sphinx_faq import build_sphinx_faq  # noqa: E402
from neoweave.kb import evaluate  # noqa: E402

PYTHON_DOCS_URL = "https://docs.python.org/3.11/"
STRATEGIES = ["naive", "larag"]


def _settings(data_dir: Path, graph: str):
    return load_settings(overrides={"falkordb": {"data_dir": data_dir, "graph": graph}})


def _section(title: str, outcome: EvalOutcome, folder: str) -> list[str]:
    overall = [r for r in outcome.rows if r["type"] == "all"]
    by_type = [r for r in outcome.rows if r["type"] != "all"]
    lines = [f"## {title}", "", f"Setup: {outcome.setup['QA set']}; {outcome.setup['answers']}.", "",
             markdown_table(overall), ""]
    if by_type:
        lines += ["Per question type:", "", markdown_table(by_type), ""]
    lines += [f"![{title}]({folder}/plot.png)", "", f"Full report (latency per stage, memory and CPU): "
              f"[{folder}/report.md]({folder}/report.md)", ""]
    return lines


def _stop_servers(data_dir: Path) -> None:
    """The suite's own servers (graph store, local model) are not left running when it ends."""
    from neoweave.llm.local import stop_local_servers
    from neoweave.store.falkordb_server import EmbeddedFalkorDB

    stop_local_servers(data_dir)
    EmbeddedFalkorDB(data_dir).stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("eval-report"))
    parser.add_argument("--data-dir", type=Path, default=Path(".neoweave-eval"),
                        help="embedded store and LLM cache for the suite (separate from your own graph)")
    parser.add_argument("--hotpotqa", type=Path, default=ROOT.parent / "shared" / "data" / "hotpotqa",
                        help="folder with corpus.jsonl and qa.jsonl")
    parser.add_argument("--python-docs", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    parser.add_argument("--ks", default="2,5,8", help="k values of the retrieval runs")
    parser.add_argument("--hotpotqa-answers", type=int, default=None, help="questions answered (first N; default all)")
    parser.add_argument("--faq-answers", type=int, default=None,
                        help="with-links FAQ questions answered (first N; default all)")
    parser.add_argument("--faq-answer-k", type=int, default=2)
    parser.add_argument("--faq-max-tokens", type=int, default=128)
    parser.add_argument("--skip-answers", action="store_true", help="retrieval only")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "httpx2", "httpcore", "sentence_transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

    try:
        return _run(args)
    finally:
        _stop_servers(args.data_dir)


def _run(args: argparse.Namespace) -> int:
    for path, what in ((args.hotpotqa / "corpus.jsonl", "HotpotQA corpus"), (args.hotpotqa / "qa.jsonl",
                       "HotpotQA QA set"), (args.python_docs / "faq", "Python docs FAQ folder")):
        if not path.exists():
            hint = " (apt-get install python3.11-doc)" if "Python" in what else " (pass --hotpotqa DIR)"
            print(f"eval_suite: {what} not found at {path}{hint}", file=sys.stderr)
            return 2
    ks = [int(k) for k in args.ks.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    sections: list[str] = []

    hotpot = _settings(args.data_dir, "hotpotqa")
    outcome = evaluate(hotpot, args.hotpotqa / "qa.jsonl", RunConfig(STRATEGIES, ks), args.out / "hotpotqa-retrieval",
                       corpus=args.hotpotqa / "corpus.jsonl", title="HotpotQA: retrieval")
    sections += _section("HotpotQA: retrieval", outcome, "hotpotqa-retrieval")
    if not args.skip_answers:
        config = RunConfig(STRATEGIES, [5], answer=True, prompt="short_answer", max_tokens=32)
        outcome = evaluate(hotpot, args.hotpotqa / "qa.jsonl", config, args.out / "hotpotqa-answers",
                           limit=args.hotpotqa_answers, title="HotpotQA: answers (short-answer prompt)")
        sections += _section("HotpotQA: answers", outcome, "hotpotqa-answers")

    faq_data = args.data_dir / "python-faq"
    faq = build_sphinx_faq(args.python_docs, faq_data, base_url=PYTHON_DOCS_URL)
    logging.info("FAQ set: %d questions (%d without links)", faq.questions, faq.without_evidence)
    pydocs = _settings(args.data_dir, "pydocs")
    outcome = evaluate(pydocs, faq.qa_path, RunConfig(STRATEGIES, ks), args.out / "faq-retrieval",
                       corpus=faq.corpus_dir, base_url=PYTHON_DOCS_URL, title="Python 3.11 docs FAQ: retrieval")
    sections += _section("Python 3.11 docs FAQ: retrieval", outcome, "faq-retrieval")
    if not args.skip_answers:
        config = RunConfig(STRATEGIES, [args.faq_answer_k], answer=True, prompts={"naive": "unified",
                           "larag": "hyperlinked"}, max_tokens=args.faq_max_tokens)
        outcome = evaluate(pydocs, faq.qa_path, config, args.out / "faq-answers", limit=args.faq_answers,
                           types=["with-links"], title="Python 3.11 docs FAQ: answers")
        sections += _section("Python 3.11 docs FAQ: answers", outcome, "faq-answers")

    minutes = (time.perf_counter() - started) / 60
    header = ["# neoweave evaluation: naive RAG vs LARAG", "",
              f"Produced by `python benchmarks/eval_suite.py --out {args.out}` in {minutes:.0f} min "
              f"({outcome.setup['machine']}, neoweave {outcome.setup['neoweave commit']}, {outcome.setup['date']}).",
              "Columns: hit/perfect = any/all gold evidence retrieved, recall = share of gold evidence retrieved, "
              "mrr = reciprocal rank of the first gold chunk, exact_match/f1 = SQuAD-normalised answer match, "
              "rouge_l, bertscore (F1, bundled all-MiniLM-L6-v2, last layer, not rescaled), insufficient = "
              "share of 'Insufficient Information' answers, chunks/context_tokens = context size per question, "
              "llm_tokens = prompt + completion tokens (a call served from the LLM cache counts the tokens its "
              "first call used; llm_cached_calls = such calls per question, answer_cached = share of answers "
              "from the cache), p50/p95_ms = latency per question "
              "(retrieval + answer).",
              ""]
    combined = args.out / "README.md"
    combined.write_text("\n".join(header + sections))
    print(combined.read_text())
    print(f"combined report: {combined}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except NeoweaveError as exc:
        print(f"eval_suite: {exc}", file=sys.stderr)
        sys.exit(1)
