"""`neoweave eval`: compare strategies on QA sets (the datasets they run on: `neoweave.cli.datasets`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neoweave.cli.common import app, console, settings
from neoweave.errors import NeoweaveError

eval_app = typer.Typer(invoke_without_command=True, help="Compare strategies on a QA set (`neoweave eval --qa ...`), "
                       "or two runs (`neoweave eval compare RUN_A RUN_B`), or the seed papers' tables over "
                       "several runs (`neoweave eval tables RUN...`).")
app.add_typer(eval_app, name="eval")


@eval_app.callback()
def evaluate(
    ctx: typer.Context,
    qa: Annotated[Path | None, typer.Option("--qa", help="QA set (JSONL: id, question, answer, aliases, evidence, "
                                            "type)")] = None,
    corpus: Annotated[Path | None, typer.Option("--corpus", help="ingest this first (skipped when unchanged)")] = None,
    strategies: Annotated[str, typer.Option("--strategies", help="comma-separated strategy names")] = "naive,larag",
    ks: Annotated[str, typer.Option("--k", help="comma-separated k values")] = "5",
    with_answer: Annotated[bool, typer.Option("--answer", help="also answer and score the answers")] = False,
    prompt: Annotated[str, typer.Option("--prompt", help="answer prompt, or per strategy: "
                                        "naive=unified,larag=hyperlinked")] = "short_answer",
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="answer length cap")] = None,
    cite: Annotated[bool, typer.Option("--cite/--no-cite", help="answer prompts ask for the numbers of the "
                                       "passages used; citation precision and recall against the evidence")] = True,
    bertscore: Annotated[bool, typer.Option("--bertscore/--no-bertscore", help="score answers with BERTScore")] = True,
    bertscore_model: Annotated[str | None, typer.Option("--bertscore-model", help="BERTScore's model: a local "
                                                        "directory (e.g. roberta-large, the papers' setting) or "
                                                        "a bundled model name (default all-MiniLM-L6-v2)")] = None,
    bertscore_layer: Annotated[int | None, typer.Option("--bertscore-layer", help="BERTScore's layer (default the "
                                                        "model's last; roberta-large's standard is 17)")] = None,
    context_bertscore: Annotated[bool, typer.Option("--context-bertscore", help="the thesis's retrieval BERTScore: "
                                                    "the retrieved context against the ground-truth context (the "
                                                    "QA's evidence_text, else the gold evidence's stored text)")
                                 ] = False,
    base_url: Annotated[str | None, typer.Option("--base-url", help="for --corpus")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="first N questions only")] = None,
    types: Annotated[str | None, typer.Option("--type", help="only these question types (comma-separated)")] = None,
    out: Annotated[Path, typer.Option("--out", help="report directory; records are kept there as they finish "
                                      "(progress.jsonl), and the same run again over it evaluates only the "
                                      "questions a stopped run did not finish")] = Path("eval-out"),
    resume: Annotated[bool, typer.Option("--resume/--restart", help="take up the records a stopped run of the "
                                         "same configuration left in --out (--restart: evaluate all again)")
                      ] = True,
    params: Annotated[list[str] | None, typer.Option("--param", "-P", help="STRATEGY.NAME=VALUE (repeatable), "
                                                     "e.g. -P larag.entity_seeds=2")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="questions in flight at once (Orion's runtime "
                                             "setup: 8); the report gives wall time and questions/s")] = 1,
    judge: Annotated[str | None, typer.Option("--judge", help="judged measures on every answer: all, or some of "
                                              "faithfulness,answer_relevance,context_recall,context_precision,"
                                              "answer_correctness,context_precision_without_reference,"
                                              "context_relevancy")] = None,
    judge_model: Annotated[str | None, typer.Option("--judge-model", help="the judge's model (default: "
                                                    "NEOWEAVE_JUDGE_MODEL, else the answering model)")] = None,
    token_budgets: Annotated[str, typer.Option("--token-budgets", help="equal-budget measures at these context "
                                               "token counts (comma-separated)")] = "500,1000,2000",
    fit_router: Annotated[bool, typer.Option("--fit-router", help="after the run, fit the router's routes (per "
                                             "question class, the best strategy) into neoweave.toml's "
                                             "\\[router] section")
                          ] = False,
) -> None:
    """Compare strategies on a QA set: retrieval, answers, latency, memory; report.md, JSON and a plot."""
    if ctx.invoked_subcommand is not None:
        return
    from neoweave.eval.report import markdown_table
    from neoweave.eval.runner import RunConfig
    from neoweave.kb import KnowledgeBase, Limits

    if qa is None:
        raise NeoweaveError("--qa is required", hint="neoweave eval --qa QA.jsonl [--corpus PATH] ..., or "
                            "neoweave eval compare RUN_A RUN_B")
    budgets = _positive_ints(token_budgets, "--token-budgets")
    judged = _judged_measures(judge)
    if not 1 <= concurrency <= 64:
        raise NeoweaveError(f"--concurrency must be between 1 and 64, not {concurrency}")
    if judged and not with_answer:
        raise NeoweaveError("--judge scores answers: add --answer")

    k_values = _positive_ints(ks, "--k")
    names = [s.strip() for s in strategies.split(",") if s.strip()]
    default_prompt, per_strategy = _parse_prompts(prompt, names)
    config = RunConfig(names, k_values, with_answer, default_prompt, per_strategy, max_tokens,
                       parameters=_parse_parameters(params or [], names), token_budgets=budgets, judge=judged,
                       concurrency=concurrency, cite=cite, context_bertscore=context_bertscore)
    if bertscore_model or bertscore_layer:
        config.bertscore = _bertscore_model(bertscore_model, bertscore_layer)
    if not bertscore:
        config.bertscore = None
    cfg = settings()
    if judge_model:
        cfg.judge.model = judge_model
    with KnowledgeBase(cfg, limits=Limits.unbounded()) as kb:
        outcome = kb.evaluate(qa, config, out, corpus=corpus, base_url=base_url, limit=limit,
                              types=[t.strip() for t in types.split(",") if t.strip()] if types else None,
                              resume=resume)
    console.print(markdown_table([r for r in outcome.rows if r["type"] == "all"]), highlight=False, soft_wrap=True)
    console.print(f"report: {outcome.report}", highlight=False)
    if fit_router:
        _fit_router(outcome.evaluation.records, str(out), cfg)


@eval_app.command("fit-router")
def fit_router_command(
    runs: Annotated[list[Path], typer.Argument(help="report directories of runs (records.json) holding the "
                                              "strategies to choose from, in one run or several")],
    k: Annotated[int | None, typer.Option("--k", help="fit on the records at this k (default: the smallest)")] = None,
    metric: Annotated[str | None, typer.Option("--metric", help="exact_match, f1 or recall (default: the first "
                                               "the run holds)")] = None,
    tolerance: Annotated[float, typer.Option("--tolerance", help="near-ties within this much quality go to the "
                                             "strategy with fewer LLM tokens (without answers: context "
                                             "tokens)")] = 0.02,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the fit, do not write neoweave.toml")] = False,
) -> None:
    """Fit the router's routes from an earlier evaluation run and write them to neoweave.toml's router section."""
    from neoweave.eval.compare import load_runs

    _fit_router(load_runs(runs), ", ".join(map(str, runs)), settings(), k=k, metric=metric, tolerance=tolerance,
                write=not dry_run)


def _fit_router(records: list[dict], source: str, cfg, *, k: int | None = None, metric: str | None = None,
                tolerance: float = 0.02, write: bool = True) -> None:
    from neoweave.config import CONFIG_FILENAME
    from neoweave.eval.router_fit import fit_routes, write_router_config

    if not 0 <= tolerance <= 1:
        raise NeoweaveError(f"--tolerance must be between 0 and 1, not {tolerance}")
    fit = fit_routes(records, metric=metric, k=k, tolerance=tolerance, source=source)
    console.print(fit.markdown(), highlight=False, soft_wrap=True)
    if write:
        path = cfg.config_path or Path(CONFIG_FILENAME)
        write_router_config(path, fit, classify=cfg.router.classify)
        console.print(f"routes written to {path} [router]: "
                      + ", ".join(f"{klass} -> {name}" for klass, name in fit.routes.items()), highlight=False,
                      markup=False)


@eval_app.command("compare")
def compare(
    run_a: Annotated[Path, typer.Argument(help="report directory of the first run (records.json)")],
    run_b: Annotated[Path, typer.Argument(help="report directory of the second run (may be the same)")],
    a_strategy: Annotated[str | None, typer.Option("--a-strategy", help="compare this strategy of A ...")] = None,
    b_strategy: Annotated[str | None, typer.Option("--b-strategy", help="... with this one of B")] = None,
    metrics: Annotated[str | None, typer.Option("--metrics", help="comma-separated (default: the retrieval and "
                                                "answer metrics, tokens and time)")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="write the comparison (Markdown) here")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="rows and flipped questions as JSON")] = False,
) -> None:
    """Two runs side by side: per metric and question type, the difference with a bootstrap 95% CI, and the
    questions that flipped."""
    import json

    from neoweave.eval.compare import (
        DEFAULT_METRICS,
        compare_runs,
        comparison_markdown,
        load_bertscore_model,
        load_records,
    )

    chosen = tuple(m.strip() for m in metrics.split(",") if m.strip()) if metrics else DEFAULT_METRICS
    comparison = compare_runs(load_records(run_a), load_records(run_b), a_name=str(run_a), b_name=str(run_b),
                              a_strategy=a_strategy, b_strategy=b_strategy, metrics=chosen)
    comparison.bertscore_models = (load_bertscore_model(run_a), load_bertscore_model(run_b))
    if not comparison.rows:
        raise NeoweaveError(f"the runs share none of the metrics {', '.join(chosen)}")
    text = comparison_markdown(comparison)
    if out is not None:
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise NeoweaveError(f"cannot write --out {out}: {exc.strerror}") from exc
    if as_json:
        print(json.dumps(comparison.as_dict(), indent=1, default=str))
    else:
        console.print(text, highlight=False, soft_wrap=True)


@eval_app.command("tables")
def tables(
    runs: Annotated[list[Path], typer.Argument(help="report directories (summary.json, records.json), one or more")],
    k: Annotated[int | None, typer.Option("--k", help="only this k (default: every k the runs have)")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="write the tables (Markdown) here")] = None,
) -> None:
    """Each seed paper's table over several runs: strategies judged one run at a time, shown side by side in
    LARAG's, the thesis's, Orion-RAG's, KHL-RAG's and PankRAG's own measures."""
    from neoweave.eval.paper_tables import tables_from_runs

    text = tables_from_runs(runs, k=k)
    if out is not None:
        try:
            out.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise NeoweaveError(f"cannot write --out {out}: {exc.strerror}") from exc
    console.print(text, highlight=False, soft_wrap=True)


@eval_app.command("merge")
def merge(
    runs: Annotated[list[Path], typer.Argument(help="report directories of runs over disjoint questions (blocks "
                                              "of one QA set), two or more")],
    out: Annotated[Path, typer.Option("--out", help="write the merged report here")],
    title: Annotated[str | None, typer.Option("--title", help="the report's title")] = None,
) -> None:
    """One report from runs made in blocks of questions: the summary, the equal-budget and per-paper tables over
    all their questions, as one run would give them (wall time and memory stay per run)."""
    from neoweave.eval.merge import write_merged

    console.print(f"report: {write_merged(runs, out, title)}", highlight=False)


@eval_app.command("rescore")
def rescore(
    runs: Annotated[list[Path], typer.Argument(help="report directories (records.json, summary.json) to rescore")],
    qa: Annotated[Path | None, typer.Option("--qa", help="the runs' QA set: also recompute Orion's precision@k "
                                            "from the retrieved evidence keys")] = None,
) -> None:
    """Recompute the measures that need no model or judge (KHL-RAG's C-Rec, A-Corr, A-Rel; with --qa Orion's
    precision@k) in earlier runs, from their records; `neoweave eval tables RUN...` then shows them."""
    from neoweave.eval.rescore import rescore_run
    from neoweave.eval.runner import load_qa

    evidence = {q.id: q.evidence for q in load_qa(qa)} if qa is not None else None
    for run in runs:
        changed = rescore_run(run, evidence)
        console.print(f"{run}: {changed} record(s) rescored", highlight=False)


@eval_app.command("pairwise")
def pairwise(
    run: Annotated[Path, typer.Argument(help="report directory of a run with answers (neoweave eval --answer)")],
    a_strategy: Annotated[str, typer.Option("--a-strategy", help="first strategy")],
    b_strategy: Annotated[str, typer.Option("--b-strategy", help="second strategy")],
    k: Annotated[int | None, typer.Option("--k", help="the k both were answered at (default: the smallest)")] = None,
    criteria: Annotated[str, typer.Option("--criteria", help="comma-separated: comprehensiveness, diversity, "
                                          "empowerment, logicality, relevance, coherence")]
    = "comprehensiveness,diversity,empowerment",
    judge_model: Annotated[str | None, typer.Option("--judge-model", help="the judge's model")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="first N questions only")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="write the verdicts (JSON) here")] = None,
    b_run: Annotated[Path | None, typer.Option("--b-run", help="read the B strategy's answers from this run "
                                               "directory instead (same QA set)")] = None,
) -> None:
    """Win rates of two strategies' answers judged pairwise by an LLM, positions swapped (flip rate reported)."""
    import json

    from neoweave.eval.compare import load_records
    from neoweave.eval.judge import Judge
    from neoweave.eval.pairwise import answer_pairs, pairwise_markdown, pairwise_win_rates
    from neoweave.eval.run_files import summary_path
    from neoweave.kb import KnowledgeBase

    if limit is not None and limit < 1:
        raise NeoweaveError(f"--limit must be at least 1, not {limit}")
    pairs = answer_pairs(load_records(run), a_strategy, b_strategy, k,
                         load_records(b_run) if b_run is not None else None)[:limit]
    cfg = settings()
    if judge_model:
        cfg.judge.model = judge_model
    summary_file = summary_path(run)
    answered_by = json.loads(summary_file.read_text()).get("setup", {}).get("answers", "") if (
        summary_file.is_file()) else ""
    with KnowledgeBase(cfg) as kb:
        gateway = kb.judge_llm
        judge = Judge(gateway, kb.embedder,
                      answer_model=gateway.model if str(answered_by).startswith(f"{gateway.model} ") else None)
        result = pairwise_win_rates(judge, pairs, criteria=tuple(c.strip() for c in criteria.split(",")
                                                                 if c.strip()))
    if out is not None:
        out.write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    console.print(pairwise_markdown(result, a_strategy, b_strategy), highlight=False, soft_wrap=True)


def _bertscore_model(name: str | None, layer: int | None):
    from neoweave.eval.similarity import BertScoreModel

    if layer is not None and layer < 1:
        raise NeoweaveError(f"--bertscore-layer must be at least 1, not {layer}")
    path = Path(name).expanduser() if name else None
    if path is not None and (name.startswith((".", "/", "~")) or path.exists()):  # a path, not a model name
        if not (path / "config.json").is_file():
            raise NeoweaveError(f"--bertscore-model {name!r}: not a model directory (no config.json)",
                                hint="give a directory with the model's config.json and weights, or a bundled "
                                "model name")
        name = str(path.resolve())
    return BertScoreModel(name or BertScoreModel.name, layer)


def _judged_measures(text: str | None) -> list[str]:
    from neoweave.eval.judge import MEASURES

    if not text:
        return []
    chosen = list(MEASURES) if text.strip() == "all" else [m.strip() for m in text.split(",") if m.strip()]
    unknown = sorted(set(chosen) - set(MEASURES))
    if unknown:
        raise NeoweaveError(f"--judge {text!r}: unknown measure(s) {unknown}", hint=f"known: {', '.join(MEASURES)}")
    return chosen


def _positive_ints(text: str, option: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise NeoweaveError(f"{option} must be comma-separated integers, got {text!r}") from exc
    if not values or min(values) < 1:
        raise NeoweaveError(f"{option} needs positive integers, got {text!r}")
    return values


def _parse_parameters(values: list[str], strategies: list[str]) -> dict[str, dict]:
    """['larag.entity_seeds=2', ...] -> {'larag': {'entity_seeds': 2}}, typed by each strategy's defaults."""
    from neoweave.registry import STRATEGIES

    parameters: dict[str, dict] = {}
    for value in values:
        name, dot, assignment = value.partition(".")
        if not dot or name not in strategies:
            raise NeoweaveError(f"--param {value!r}: expected STRATEGY.NAME=VALUE with STRATEGY one of "
                                f"{', '.join(strategies)}")
        key, typed = STRATEGIES.get(name).parse_parameter(assignment)
        if key == "k":
            raise NeoweaveError("--param cannot set k: use --k")
        parameters.setdefault(name, {})[key] = typed
    return parameters


def _parse_prompts(value: str, strategies: list[str]) -> tuple[str, dict[str, str]]:
    """`name` for every strategy, or `strategy=name,...` (strategies not named use short_answer)."""
    from neoweave.query.prompts import get_prompt

    if "=" not in value:
        get_prompt(value)
        return value, {}
    per_strategy = {}
    for part in value.split(","):
        name, _, template = part.partition("=")
        if name.strip() not in strategies:
            raise NeoweaveError(f"--prompt names strategy {name.strip()!r}, which is not in --strategies")
        get_prompt(template.strip())
        per_strategy[name.strip()] = template.strip()
    return "short_answer", per_strategy
