"""Run strategies over a QA set and aggregate retrieval (and optionally answer) metrics side by side.

QA format (canonical, see the data README): {"id", "question", "answer", "aliases", "evidence", "type"}.
Evidence names document titles (record corpora) or section URLs (documentation); a retrieved chunk counts
when its document title, or its section URL, is in the evidence.
"""

from __future__ import annotations

import dataclasses
import logging
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from neoweave.errors import NeoweaveError
from neoweave.eval import measures, metrics
from neoweave.eval.datasets.common import numbered_jsonl
from neoweave.eval.ground_truth import ground_truth_contexts, score_contexts
from neoweave.eval.judge import MEASURES, Judge
from neoweave.eval.paper_measures import khl_scores
from neoweave.eval.resources import ResourceMonitor, ResourceUsage
from neoweave.eval.similarity import BertScoreModel, answer_similarity, bert_scores_prf, rouge_l
from neoweave.protocols import LLMClient, TextEmbedder
from neoweave.registry import STRATEGIES
from neoweave.store.base import GraphStore

if TYPE_CHECKING:
    from neoweave.eval.checkpoint import Checkpoint

log = logging.getLogger(__name__)

__all__ = ["EvalRun", "Question", "RunConfig", "load_qa", "run", "summarize"]


@dataclass
class Question:
    id: str
    question: str
    answer: str
    aliases: list[str]
    evidence: list[str]
    type: str = "all"
    evidence_text: list[str] = field(default_factory=list)
    """The ground-truth context when the QA file gives it (MultiHop-RAG's facts), for the retrieval BERTScore."""


QA_HINT = 'expected one JSON object a line: {"id", "question", "answer", "evidence": [...]}'


def load_qa(path: str | Path) -> list[Question]:
    path = Path(path)
    questions = []
    lines: dict[str, int] = {}  # a question's id names its record in every report, merge and comparison
    for number, row in numbered_jsonl(path, "QA file", QA_HINT):
        try:
            questions.append(Question(str(row["id"]), row["question"], row.get("answer", ""),
                                      list(row.get("aliases") or []), list(row["evidence"]),
                                      row.get("type") or "all", [str(t) for t in row.get("evidence_text") or []]))
        except (KeyError, TypeError) as exc:
            raise NeoweaveError(f"{path}:{number}: not a QA record ({exc})", hint=QA_HINT) from exc
        first = lines.setdefault(questions[-1].id, number)
        if first != number:
            raise NeoweaveError(f"{path}:{number}: id {questions[-1].id!r} is line {first}'s too",
                                hint="every question needs an id of its own")
    if not questions:
        raise NeoweaveError(f"{path}: no questions")
    return questions


@dataclass
class RunConfig:
    strategies: list[str]
    ks: list[int]
    answer: bool = False
    prompt: str = "short_answer"
    prompts: dict[str, str] = field(default_factory=dict)  # per-strategy prompt, overriding `prompt`
    max_tokens: int | None = None  # answer length cap (None: the gateway's llm.max_tokens)
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)  # per-strategy overrides
    bertscore: BertScoreModel | None = field(default_factory=BertScoreModel)  # None: skip BERTScore
    concurrency: int = 1
    """Questions in flight at once per (strategy, k) (Orion's runtime setup: 8); latencies then include the
    contention, and the report's wall time and questions/s show the throughput."""
    judge: list[str] = field(default_factory=list)
    """Judged measures (`neoweave.eval.judge.MEASURES`) scored on every answer by `run(..., judge=...)`."""
    token_budgets: list[int] = field(default_factory=lambda: [500, 1000, 2000])
    """Equal-budget measures: besides the first N chunks for N in `ks`, the chunks that fit these many tokens."""
    cite: bool = True
    """Answer prompts ask for the numbers of the passages used; the citations are scored against the evidence."""
    context_bertscore: bool = False
    """The thesis's retrieval BERTScore: each retrieved context against the ground-truth context
    (`neoweave.eval.ground_truth`), with the `bertscore` model."""

    def prompt_for(self, strategy: str) -> str:
        return self.prompts.get(strategy, self.prompt)


@dataclass
class EvalRun:
    """Everything one evaluation produced: per-question records and per (strategy, k) resource use."""

    records: list[dict[str, Any]]
    resources: dict[tuple[str, int], ResourceUsage] = field(default_factory=dict)
    bertscore_model: str | None = None
    judge_model: str | None = None
    judge_warning: str | None = None
    prompt_warning: str | None = None
    resumed: set[tuple[str, int, str]] = field(default_factory=set)
    """(strategy, k, question id) of the records an earlier, stopped run finished (`eval.checkpoint`): their
    latencies are that run's, and resource use and questions/s measure only the rest."""


def _evidence_keys(store: GraphStore, items: list[Any], by_url: bool, titles: dict[str, str]) -> list[str]:
    if by_url:
        return [item.url for item in items]
    missing = sorted({item.doc_id for item in items} - set(titles))
    if missing:
        titles.update({r["id"]: r["title"] for r in store.run("document_titles", {"ids": missing})})
    return [titles.get(item.doc_id, item.doc_id) for item in items]


def _score_answers(records: list[dict[str, Any]], questions: dict[str, Question], model: BertScoreModel | None) -> None:
    """ROUGE-L per record, then BERTScore in one batch (loading the model once)."""
    answered = [r for r in records if "answer" in r]
    for record in answered:
        question = questions[record["question_id"]]
        record["rouge_l"] = rouge_l(record["answer"], [question.answer, *question.aliases])
    if model is not None and answered:
        scores = bert_scores_prf([r["answer"] for r in answered],
                                 [[questions[r["question_id"]].answer, *questions[r["question_id"]].aliases]
                                  for r in answered], model)
        for record, (precision, recall, f1) in zip(answered, scores, strict=True):
            record.update(bertscore=f1, bertscore_p=precision, bertscore_r=recall)


def run(store: GraphStore, embedder: TextEmbedder, questions: list[Question], config: RunConfig, *,
        llm: LLMClient | None = None, progress: bool = True, pids: dict[str, int | None] | None = None,
        judge: Judge | None = None, make_strategy: Callable[..., Any] | None = None,
        checkpoint: Checkpoint | None = None) -> EvalRun:
    """One record per (strategy, k, question): retrieved ids and scores, metrics, cost, answer.

    `pids` names helper processes (graph server, model server) whose memory and CPU are measured with ours.
    `make_strategy(name, **parameters)` builds each strategy (the knowledge base's factory); without one they
    are built over `store`, `embedder` and `llm`. `checkpoint` keeps each record as it finishes and gives back
    those an earlier, stopped run of the same configuration finished (they are not evaluated again).
    """
    if make_strategy is None:
        from neoweave.query import strategy as build

        def make_strategy(name: str, **parameters: Any) -> Any:
            return build(name, store, embedder, llm, **parameters)

    if llm is None and (config.answer or any(STRATEGIES.get(name).wants_llm(config.parameters.get(name))
                                             for name in config.strategies)):
        raise NeoweaveError("answer evaluation needs an LLM gateway (llm=...), as do strategies that call the LLM "
                            "to retrieve")
    prompt_warning = short_prompt_warning(questions, config)
    if prompt_warning:
        log.warning(prompt_warning)
    by_url = any("://" in e or "#" in e for q in questions for e in q.evidence)
    titles: dict[str, str] = {}
    records: list[dict[str, Any]] = []
    resources: dict[tuple[str, int], ResourceUsage] = {}
    total = len(config.strategies) * len(config.ks) * len(questions)
    bar = tqdm(total=total, desc="evaluating", unit="q", disable=not progress)
    finished = checkpoint.finished if checkpoint else {}
    resumed: set[tuple[str, int, str]] = set()
    for name in config.strategies:
        for k in config.ks:
            done = {q.id: finished[(name, k, q.id)] for q in questions if (name, k, q.id) in finished}
            earlier, pending = set(done), [q for q in questions if q.id not in done]
            bar.update(len(done))
            if pending:
                strategy = make_strategy(name, **{**config.parameters.get(name, {}), "k": k})

                def one(question: Question, strategy=strategy, name=name, k=k) -> dict[str, Any]:
                    record = _evaluate_one(store, strategy, k, question, config, llm, by_url, titles)
                    if checkpoint:
                        checkpoint.add((name, k, question.id), record)
                    bar.update(1)
                    return record

                with ResourceMonitor(pids) as monitor:
                    if config.concurrency > 1:
                        from concurrent.futures import ThreadPoolExecutor

                        with ThreadPoolExecutor(config.concurrency) as pool:
                            done.update(zip([q.id for q in pending], pool.map(one, pending), strict=True))
                    else:
                        for question in pending:
                            done[question.id] = one(question)
                resources[(strategy.name, k)] = monitor.usage  # keyed as the records and `resumed` are
            resumed.update((done[question_id]["strategy"], k, question_id) for question_id in earlier)
            records.extend(done[q.id] for q in questions)
    bar.close()
    if config.answer:
        _score_answers(records, {q.id: q for q in questions}, config.bertscore)
        for record in records:
            record["answer_similarity"] = answer_similarity(embedder, record["answer"], record["gold"])
            record.update(khl_scores(record["answer"], record["gold"], record["question"],
                                     record["answer_similarity"]))
    bertscore_model = config.bertscore or BertScoreModel()  # the retrieval BERTScore runs even with --no-bertscore
    if config.context_bertscore:
        score_contexts(records, ground_truth_contexts(store.run, questions), bertscore_model)
    bertscored = (config.answer and config.bertscore) or config.context_bertscore
    evaluation = EvalRun(records, resources, bertscore_model.describe() if bertscored else None,
                         prompt_warning=prompt_warning, resumed=resumed)
    if config.judge:
        _judge_answers(evaluation, config, judge, progress)
    for record in records:
        record.pop("_contexts", None)
    return evaluation


LONG_REFERENCE_WORDS = 12
"""References longer than this (the median, in words) are sentences: HotpotQA's are ~2 words, the Python docs
FAQ's whole answers ~100."""


def short_prompt_warning(questions: list[Question], config: RunConfig) -> str | None:
    """A warning when answers are asked for with a word-or-phrase prompt (the default, short_answer) but the
    references are sentences: such answers ("Yes", a name) cannot match them, and every answer measure is near 0
    for a reason that is not the strategy."""
    from neoweave.query import get_prompt

    if not config.answer or not questions:
        return None
    words = statistics.median(len(question.answer.split()) for question in questions)
    short = sorted({config.prompt_for(name) for name in config.strategies if get_prompt(config.prompt_for(name)).short})
    if words <= LONG_REFERENCE_WORDS or not short:
        return None
    return (f"the reference answers are sentences (median {words:.0f} words) but the answer prompt "
            f"{' and '.join(short)} asks for a word or a phrase, which cannot match them; give a prompt that "
            "writes sentences, e.g. --prompt unified (hyperlinked for larag)")


def _judge_answers(evaluation: EvalRun, config: RunConfig, judge: Judge | None, progress: bool) -> None:
    """Each judged measure on every answered record; the score, the judge's reasons and cost in the record."""
    unknown = sorted(set(config.judge) - set(MEASURES))
    if unknown:
        raise NeoweaveError(f"unknown judged measure(s) {unknown}; known: {', '.join(MEASURES)}")
    if judge is None or not config.answer:
        raise NeoweaveError("judged measures need answers (--answer) and a judge (the gateway's judge model)")
    evaluation.judge_model = judge.model
    if judge.judges_itself:
        evaluation.judge_warning = (f"the judge ({judge.model}) is the model that answered: it may favour its own "
                                    "answers, and a small model judges unreliably; set a stronger judge with "
                                    "--judge-model or NEOWEAVE_JUDGE_*")
        log.warning(evaluation.judge_warning)
    answered = [r for r in evaluation.records if "answer" in r]
    bar = tqdm(total=len(answered) * len(config.judge), desc="judging", unit="verdict", disable=not progress)
    for record in answered:
        verdicts = {}
        for measure in config.judge:
            verdict = judge.judge(measure, question=record["question"], answer=record["answer"],
                                  reference=record["gold"], contexts=record.get("_contexts", []))
            verdicts[measure] = {"score": verdict.score, "rationale": verdict.rationale, "details": verdict.details,
                                 "calls": verdict.calls, "tokens": verdict.tokens, "error": verdict.error}
            if verdict.score is not None:
                record[measure] = verdict.score
            bar.update(1)
        record["judge"] = verdicts
        record["judge_tokens"] = sum(v["tokens"] for v in verdicts.values())
    bar.close()


def _context_texts(result: Any) -> list[str]:
    """Everything a retrieval puts before the model: passages, facts and community reports."""
    return ([item.text for item in result.items] + [fact.text() for fact in result.facts]
            + [report.text for report in result.reports])


def _evaluate_one(store: GraphStore, strategy, k: int, question: Question, config: RunConfig, llm, by_url: bool,
                  titles: dict[str, str]) -> dict[str, Any]:
    record: dict[str, Any] = {"strategy": strategy.name, "k": k, "question_id": question.id,
                              "type": question.type, "question": question.question,
                              "profile": getattr(strategy, "profile", "neoweave")}
    if config.answer:
        from neoweave.query.answer import answer

        answered = answer(question.question, strategy=strategy, llm=llm, prompt=config.prompt_for(strategy.name),
                          max_tokens=config.max_tokens, cite=config.cite)
        result = answered.retrieval
        golds = [question.answer, *question.aliases]
        record.update(answer=answered.answer, gold=question.answer, prompt=config.prompt_for(strategy.name),
                      exact_match=metrics.exact_match(answered.answer, golds),
                      f1=metrics.token_f1(answered.answer, golds),
                      accuracy=measures.short_answer_accuracy(answered.answer, golds, question.type),
                      insufficient=metrics.is_insufficient(answered.answer),
                      answer_cached=float(answered.call.cached) if answered.call else 0.0,
                      context_dropped=answered.context_dropped)
    else:
        result = strategy.retrieve(question.question)
    keys = _evidence_keys(store, result.items, by_url, titles)
    contexts = _context_texts(result)
    if (config.answer and config.judge) or config.context_bertscore:  # what the judge or BERTScore reads (dropped)
        record["_contexts"] = contexts
    found = metrics.answer_in_context(contexts, [question.answer, *question.aliases])
    if found is not None:
        record["answer_in_context"] = found
    if strategy.returns_passages:  # global search's key points are no passages: no evidence metrics, not zeros
        record.update(measures.retrieval_scores(keys, question.evidence, k))
        if config.answer and config.cite:
            cited = [keys[c.number - 1] for c in answered.citations if c.known]
            record.update(measures.citation_scores(cited, len(answered.unknown_citations), question.evidence),
                          citations=[c.number for c in answered.citations])
            check = answered.citation_check  # the model's own numbers, before the check changed them
            own = check.model if check else record["citations"]
            record.update(measures.model_citation_scores(own, keys, question.evidence), model_citations=own,
                          citations_added=check.added if check else [],
                          citations_dropped=check.dropped if check else [], cited_answer=answered.cited_answer,
                          model_cited_answer=check.model_answer if check else answered.cited_answer)
        record["budgets"] = measures.budget_scores(keys, [i.token_count for i in result.items], question.evidence,
                                                   chunk_budgets=config.ks, token_budgets=config.token_budgets)
    record.update(
        retrieved=[{"chunk_id": i.chunk_id, "evidence": key, "score": i.score, "origin": i.origin}
                   for i, key in zip(result.items, keys, strict=True)],
        chunks=len(result.items), context_tokens=result.context_tokens,
        ms=dict(result.cost.milliseconds), total_ms=result.cost.total_ms,
        statement_ms={name: round(ms, 3) for name, ms in result.trace.statement_ms.items()},
        llm_calls=result.cost.llm_calls, llm_cached_calls=result.cost.cached_calls,
        llm_tokens=result.cost.prompt_tokens + result.cost.completion_tokens + result.cost.cached_tokens,
        prompt_tokens=result.cost.prompt_tokens, completion_tokens=result.cost.completion_tokens)
    if result.sub_questions:  # iterative strategies: every step of the way, in the record
        record["sub_questions"] = [dataclasses.asdict(step) for step in result.sub_questions]
    for key in ("plan", "routed", "stopped", "sub_retriever"):
        if key in result.parameters:
            record[key] = result.parameters[key]
    ledger = getattr(llm, "ledger", None)  # gateways keep a price table; other LLM clients cost nothing known
    if ledger is not None and result.cost.llm_calls:  # what the question cost at the price table's rates
        price_in, price_out = ledger.prices.get(llm.model, (0.0, 0.0))
        record["cost_usd"] = (result.cost.prompt_tokens * price_in + result.cost.completion_tokens * price_out) / 1e6
    return record


_MEAN_FIELDS = ("hit", "perfect", "recall", "mrr", "precision", "doc_hit", "doc_precision", "answer_in_context",
                "chunks", "context_tokens", "llm_calls", "llm_cached_calls", "llm_tokens", "answer_cached",
                "exact_match", "f1", "accuracy",
                "rouge_l", "bertscore", "bertscore_p", "bertscore_r", "answer_similarity", "insufficient", "cites",
                "citation_supported", "citation_precision", "citation_recall", "model_citation_precision",
                "model_citation_recall", *MEASURES,
                "khl_c_rec", "khl_a_corr", "khl_a_rel", "context_bertscore_p", "context_bertscore_r",
                "context_bertscore_f1",
                "judge_tokens", "cost_usd")

# counted since a later version: a merge with older records has no mean of them (a mean of some would pass for all)
_NEWER_FIELDS = ("llm_cached_calls", "model_citation_recall")


def summarize(evaluation: EvalRun) -> list[dict[str, Any]]:
    """Means per (strategy, k, question type) and over all types; latency p50/p95 overall and per stage.

    Resource use (peak RSS, CPU) is measured per (strategy, k), so it appears on the "all" rows only.
    """
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for record in evaluation.records:
        for qtype in ("all", record["type"]) if record["type"] != "all" else ("all",):
            groups.setdefault((record["strategy"], record["k"], qtype), []).append(record)
    rows = []
    for (name, k, qtype), group in sorted(groups.items(), key=lambda item: (item[0][0], item[0][1],
                                                                             item[0][2] != "all", item[0][2])):
        row: dict[str, Any] = {"strategy": name, "k": k, "type": qtype, "questions": len(group),
                               "profile": group[0].get("profile", "neoweave")}
        for key in _MEAN_FIELDS:
            values = [r[key] for r in group if key in r]
            if values and (key not in _NEWER_FIELDS or len(values) == len(group)):
                row[key] = statistics.fmean(values)
        latencies = [r["total_ms"] for r in group]
        row["p50_ms"], row["p95_ms"] = metrics.percentile(latencies, 50), metrics.percentile(latencies, 95)
        stages = sorted({stage for r in group for stage in r["ms"]})
        row["stage_ms"] = {stage: {"p50": metrics.percentile([r["ms"].get(stage, 0.0) for r in group], 50),
                                   "p95": metrics.percentile([r["ms"].get(stage, 0.0) for r in group], 95)}
                           for stage in stages}
        # what the retrieval itself costs: everything but embedding the question and the answer call
        retrieval = [r["total_ms"] - r["ms"].get("embed", 0.0) - r["ms"].get("llm", 0.0) for r in group]
        row["stage_ms"]["retrieval"] = {"p50": metrics.percentile(retrieval, 50),
                                        "p95": metrics.percentile(retrieval, 95)}
        # per named statement, over the questions that sent it (a statement some questions skip is not a 0)
        sent: dict[str, list[float]] = {}
        for r in group:
            for statement, ms in r.get("statement_ms", {}).items():
                sent.setdefault(statement, []).append(ms)
        row["statement_ms"] = {statement: {"questions": len(times), "p50": metrics.percentile(times, 50),
                                           "p95": metrics.percentile(times, 95)}
                               for statement, times in sorted(sent.items())}
        usage = evaluation.resources.get((name, k))
        if usage is not None and qtype == "all":
            row.update(usage.flat())
            measured = [r for r in group if (name, k, r["question_id"]) not in evaluation.resumed]
            row["questions_per_s"] = len(measured) / usage.wall_seconds if usage.wall_seconds else 0.0
        rows.append(row)
    return rows

