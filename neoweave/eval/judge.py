"""An LLM judge for the measures the seed papers score with a model (RAGAS-style, as PankRAG and KHL-RAG report
them): faithfulness, answer relevance, context recall and precision, answer correctness and similarity, and
pairwise preference judged twice with the answers' positions swapped.

Every judgement is one structured call through the gateway (cached, retried, costed in its ledger under the
stage `judge:<measure>`) and keeps the judge's reasons. The judge is any gateway endpoint; reports name it and
warn when it is the same model that answered.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from neoweave.eval.paper_measures import sentence_share
from neoweave.eval.similarity import answer_similarity
from neoweave.nlp.sentences import sentences
from neoweave.protocols import LLMClient, TextEmbedder

MEASURES = ("faithfulness", "answer_relevance", "context_recall", "context_precision", "answer_correctness",
            "context_precision_without_reference", "context_relevancy")
"""RAGAS's judged measures under RAGAS's names: context_precision_without_reference judges each passage against
the generated answer (the thesis's reference-free precision, 001 l. 1040-1050); context_relevancy is the share of
the context's sentences the judge finds relevant to the question (RAGAS's first context measure, which PankRAG
reports as "context recall", 004 eq. 8)."""
PAIRWISE_CRITERIA = ("comprehensiveness", "diversity", "empowerment", "logicality", "relevance", "coherence")
CRITERIA_TEXT = {
    "comprehensiveness": "How much detail does the answer give to cover all aspects of the question?",
    "diversity": "How varied and rich is the answer in offering different perspectives and insights?",
    "empowerment": "How well does the answer help the reader understand the topic and make informed judgements?",
    "logicality": "How logically organised and well reasoned is the answer?",
    "relevance": "How closely does the answer address the question, without digressions?",
    "coherence": "How consistent and well connected are the answer's parts?",
}


class _Claim(BaseModel):
    claim: str = Field(description="one factual statement the answer makes")
    supported: bool = Field(description="true when the context supports the statement")
    reason: str = Field("", description="why, in a few words")


class _Claims(BaseModel):
    claims: list[_Claim] = Field(default_factory=list)


class _Questions(BaseModel):
    questions: list[str] = Field(default_factory=list, description="questions the answer answers")
    noncommittal: bool = Field(False, description="true when the answer is evasive or vague")


class _Statement(BaseModel):
    statement: str
    attributed: bool = Field(description="true when the context contains this statement of the reference")
    reason: str = ""


class _Statements(BaseModel):
    statements: list[_Statement] = Field(default_factory=list)


class _Useful(BaseModel):
    passage: int = Field(description="the passage number")
    useful: bool = Field(description="true when the passage helps reach the reference answer")
    reason: str = ""


class _Usefulness(BaseModel):
    verdicts: list[_Useful] = Field(default_factory=list)


class _RelevantSentences(BaseModel):
    sentences: list[int] = Field(default_factory=list, description="numbers of the sentences needed to answer")


class _Correctness(BaseModel):
    true_positive: list[str] = Field(default_factory=list, description="answer statements the reference supports")
    false_positive: list[str] = Field(default_factory=list, description="answer statements the reference lacks")
    false_negative: list[str] = Field(default_factory=list, description="reference statements the answer misses")


class _Preference(BaseModel):
    winner: Literal["1", "2", "tie"] = Field(description="the better answer on this criterion")
    reason: str = ""


@dataclass
class Verdict:
    """One judged score in [0, 1] (None when the judge gave nothing usable), with its reasons and cost."""

    measure: str
    score: float | None
    rationale: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    calls: int = 0
    tokens: int = 0
    error: str | None = None


def _passages(contexts: list[str], limit: int = 900) -> str:
    return "\n\n".join(f"[{number}] {text[:limit]}" for number, text in enumerate(contexts, 1)) or "(no context)"


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))  # the embedder returns unit vectors


@dataclass
class Judge:
    """Scores answers and contexts with `llm` (a gateway); `embedder` for the similarity halves."""

    llm: LLMClient
    embedder: TextEmbedder
    answer_model: str | None = None
    """The model that produced the answers, to warn when it judges itself."""
    alpha: float = 0.5
    """Answer correctness = alpha x factual F1 + (1 - alpha) x semantic similarity (KHL-RAG's 0.5)."""
    relevance_questions: int = 3
    max_tokens: int = 400

    @property
    def model(self) -> str:
        return str(getattr(self.llm, "model", "unknown"))

    @property
    def judges_itself(self) -> bool:
        return self.answer_model is not None and self.answer_model == self.model

    def _ask(self, measure: str, system: str, user: str, model: type[BaseModel]) -> tuple[Any, Verdict]:
        result = self.llm.structured([{"role": "system", "content": system}, {"role": "user", "content": user}],
                                     model, stage=f"judge:{measure}", max_tokens=self.max_tokens)
        verdict = Verdict(measure, None, calls=len(result.calls),
                          tokens=sum(c.prompt_tokens + c.completion_tokens for c in result.calls),
                          error=result.error)
        return result.value, verdict

    # RAGAS measures -------------------------------------------------------------------------------------
    def faithfulness(self, question: str, answer: str, contexts: list[str]) -> Verdict:
        """Share of the answer's claims the context supports."""
        value, verdict = self._ask(
            "faithfulness",
            "Break the answer into its factual claims and decide for each whether the context supports it.",
            f"Context:\n{_passages(contexts)}\n\nQuestion: {question}\nAnswer: {answer}", _Claims)
        if value is not None:
            claims = value.claims
            verdict.score = (sum(c.supported for c in claims) / len(claims)) if claims else None
            verdict.rationale = "; ".join(f"{'+' if c.supported else '-'} {c.claim}: {c.reason}" for c in claims)
            verdict.details = {"claims": len(claims), "supported": sum(c.supported for c in claims)}
        return verdict

    def answer_relevance(self, question: str, answer: str) -> Verdict:
        """Mean cosine between the question and questions the judge infers from the answer (0 if evasive)."""
        value, verdict = self._ask(
            "answer_relevance",
            f"Write {self.relevance_questions} different questions that this answer answers, and say whether the "
            "answer is noncommittal (evasive, vague, or says it does not know).",
            f"Answer: {answer}", _Questions)
        if value is not None and value.questions:
            vectors = self.embedder.embed([question, *value.questions[:self.relevance_questions]])
            similarity = statistics.fmean(_cosine(vectors[0], other) for other in vectors[1:])
            verdict.score = 0.0 if value.noncommittal else max(0.0, similarity)
            verdict.rationale = " | ".join(value.questions) + (" (noncommittal)" if value.noncommittal else "")
        return verdict

    def context_recall(self, question: str, reference: str, contexts: list[str]) -> Verdict:
        """RAGAS's context recall: the share of the reference answer's statements the retrieved context contains,
        judged (KHL-RAG's C-Rec is lexical: `paper_measures.khl_context_recall`)."""
        value, verdict = self._ask(
            "context_recall",
            "Break the reference answer into statements and decide for each whether the context contains it.",
            f"Context:\n{_passages(contexts)}\n\nQuestion: {question}\nReference answer: {reference}", _Statements)
        if value is not None:
            statements = value.statements
            verdict.score = (sum(s.attributed for s in statements) / len(statements)) if statements else None
            verdict.rationale = "; ".join(f"{'+' if s.attributed else '-'} {s.statement}" for s in statements)
        return verdict

    def context_precision(self, question: str, reference: str, contexts: list[str]) -> Verdict:
        """Average precision of the useful passages over their ranks (RAGAS context precision)."""
        return self._usefulness("context_precision", "the reference answer", f"Reference answer: {reference}",
                                question, contexts)

    def context_precision_without_reference(self, question: str, answer: str, contexts: list[str]) -> Verdict:
        """Average precision of the passages useful to arrive at the generated answer (RAGAS context precision
        without reference: the thesis's check of whether a judge can rate retrieval without gold answers)."""
        return self._usefulness("context_precision_without_reference", "the given answer", f"Answer: {answer}",
                                question, contexts)

    def _usefulness(self, measure: str, target: str, shown: str, question: str, contexts: list[str]) -> Verdict:
        """Each passage judged useful or not to arrive at `target`; the score is their average precision."""
        value, verdict = self._ask(
            measure, f"For each numbered passage decide whether it is useful to arrive at {target}.",
            f"Passages:\n{_passages(contexts)}\n\nQuestion: {question}\n{shown}", _Usefulness)
        if value is not None and contexts:
            useful = {v.passage: v.useful for v in value.verdicts}
            verdict.score = average_precision([bool(useful.get(rank, False)) for rank in range(1, len(contexts) + 1)])
            verdict.rationale = "; ".join(f"[{v.passage}] {'useful' if v.useful else 'not useful'}: {v.reason}"
                                          for v in value.verdicts)
        return verdict

    def context_relevancy(self, question: str, contexts: list[str]) -> Verdict:
        """Share of the context's sentences the judge picks as needed to answer the question (PankRAG's context
        recall, eq. 8: |S_ext| / |c(q)|). The sentences are numbered for the judge; numbers it invents, or gives
        twice, count once or not at all."""
        numbered = [sentence for text in contexts for sentence in sentences(text)]
        if not numbered:
            return Verdict("context_relevancy", None, error="no context to judge")
        listing = "\n".join(f"({number}) {sentence}" for number, sentence in enumerate(numbered, 1))
        value, verdict = self._ask(
            "context_relevancy",
            "List the numbers of the sentences of the context that are needed to answer the question; none when "
            "no sentence is.", f"Question: {question}\n\nContext sentences:\n{listing}", _RelevantSentences)
        if value is not None:
            chosen = {number for number in value.sentences if 1 <= number <= len(numbered)}
            verdict.score = sentence_share(len(chosen), len(numbered))
            verdict.details = {"sentences": len(numbered), "relevant": len(chosen)}
            verdict.rationale = " | ".join(numbered[number - 1][:120] for number in sorted(chosen))
        return verdict

    def answer_similarity(self, answer: str, reference: str) -> float:
        """Cosine of the answer's and the reference's embeddings (KHL's A-Sim)."""
        return answer_similarity(self.embedder, answer, reference)

    def answer_correctness(self, question: str, answer: str, reference: str) -> Verdict:
        """RAGAS's answer correctness: alpha x factual F1 (statements classified against the reference, judged) +
        (1 - alpha) x similarity (KHL-RAG's A-Corr uses token F1: `paper_measures.khl_answer_correctness`)."""
        value, verdict = self._ask(
            "answer_correctness",
            "Compare the answer with the reference answer: list the answer's statements the reference supports "
            "(true_positive), the answer's statements the reference does not support (false_positive), and the "
            "reference's statements the answer misses (false_negative).",
            f"Question: {question}\nAnswer: {answer}\nReference answer: {reference}", _Correctness)
        similarity = self.answer_similarity(answer, reference)
        if value is not None:
            tp, fp, fn = len(value.true_positive), len(value.false_positive), len(value.false_negative)
            factual = tp / (tp + 0.5 * (fp + fn)) if tp else 0.0
            verdict.score = self.alpha * factual + (1 - self.alpha) * similarity
            verdict.details = {"tp": tp, "fp": fp, "fn": fn, "factual_f1": factual, "similarity": similarity}
            verdict.rationale = f"TP {value.true_positive}; FP {value.false_positive}; FN {value.false_negative}"
        return verdict

    def judge(self, measure: str, *, question: str, answer: str, reference: str, contexts: list[str]) -> Verdict:
        if measure == "faithfulness":
            return self.faithfulness(question, answer, contexts)
        if measure == "answer_relevance":
            return self.answer_relevance(question, answer)
        if measure == "context_recall":
            return self.context_recall(question, reference, contexts)
        if measure == "context_precision":
            return self.context_precision(question, reference, contexts)
        if measure == "answer_correctness":
            return self.answer_correctness(question, answer, reference)
        if measure == "context_precision_without_reference":
            return self.context_precision_without_reference(question, answer, contexts)
        if measure == "context_relevancy":
            return self.context_relevancy(question, contexts)
        raise ValueError(f"unknown judged measure {measure!r}; known: {', '.join(MEASURES)}")

    # pairwise ------------------------------------------------------------------------------------------
    def prefer(self, question: str, first: str, second: str, criterion: str) -> Verdict:
        """Which of two answers is better on `criterion` (1, 2 or tie), as shown in this order."""
        value, verdict = self._ask(
            f"pairwise:{criterion}",
            f"You compare two answers to the same question on one criterion: {criterion}. "
            f"{CRITERIA_TEXT[criterion]} Reply with the better answer (1 or 2) or tie, and why.",
            f"Question: {question}\n\nAnswer 1:\n{first}\n\nAnswer 2:\n{second}", _Preference)
        if value is not None:
            verdict.details = {"winner": value.winner}
            verdict.rationale = value.reason
            verdict.score = {"1": 1.0, "2": 0.0, "tie": 0.5}[value.winner]
        return verdict

    def pairwise(self, question: str, answer_a: str, answer_b: str, criterion: str) -> dict[str, Any]:
        """A against B judged twice, B shown second then first; the score is A's (1 win, 0.5 tie, 0 loss)
        averaged over both orders, and `flipped` says whether the verdict changed with the order."""
        forward = self.prefer(question, answer_a, answer_b, criterion)
        backward = self.prefer(question, answer_b, answer_a, criterion)
        a_forward = forward.score
        a_backward = None if backward.score is None else 1.0 - backward.score
        scores = [s for s in (a_forward, a_backward) if s is not None]
        return {"criterion": criterion, "a_score": statistics.fmean(scores) if scores else None,
                "flipped": None if len(scores) < 2 else a_forward != a_backward,
                # the score of whichever answer was shown first, per order: the direction of a position bias
                "first_shown_scores": [v.score for v in (forward, backward) if v.score is not None],
                "rationales": [forward.rationale, backward.rationale],
                "calls": forward.calls + backward.calls, "tokens": forward.tokens + backward.tokens}


def average_precision(useful: list[bool]) -> float:
    """Mean of precision@i over the ranks i of useful items (0 when none is useful)."""
    hits, total = 0, 0.0
    for rank, flag in enumerate(useful, 1):
        if flag:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0
