"""The thesis's retrieval BERTScore (001, eq. 4.2-4.4, l. 985-1028): the retrieved context compared with the
ground-truth context by BERTScore precision, recall and F1.

The ground-truth context of a question is the evidence text its QA record gives (`evidence_text`: MultiHop-RAG's
facts, written by `neoweave datasets multihop-rag`); without one, the stored text of its gold evidence (every
chunk of a gold document, or of a gold section), read once for the whole run. Every word piece of both texts
counts, as the equations sum over all tokens: bert-score alone would cut each text at the model's input (512
word pieces), where a context of 5 chunks and one of 10 score alike.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

from neoweave.eval.similarity import BertScoreModel, bert_scores_prf

log = logging.getLogger(__name__)


class GoldQuestion(Protocol):
    id: str
    evidence: list[str]
    evidence_text: list[str]


def ground_truth_contexts(run: Any, questions: Sequence[GoldQuestion]) -> dict[str, str]:
    """question id -> its ground-truth context ("" when neither the QA file nor the graph has it). `run(name,
    params)` sends a named statement."""
    wanted = sorted({key for q in questions if not q.evidence_text for key in q.evidence})
    stored: dict[str, str] = {}
    if wanted:
        urls = [key for key in wanted if "://" in key or "#" in key]
        titles = sorted(set(wanted) - set(urls))
        stored = {row["key"]: "\n".join(row["texts"] or []) for row in run("evidence_texts", {
            "titles": titles, "urls": urls})}
        missing = [key for key in wanted if key not in stored]
        if missing:
            log.warning("%d gold evidence key(s) name nothing stored (e.g. %r): their text is left out of the "
                        "ground-truth context", len(missing), missing[0])
    return {q.id: "\n\n".join(q.evidence_text) if q.evidence_text
            else "\n\n".join(stored[key] for key in q.evidence if stored.get(key)) for q in questions}


def score_contexts(records: list[dict[str, Any]], truths: dict[str, str], model: BertScoreModel | None) -> None:
    """`context_bertscore_p`, `_r` and `_f1` on every record with a retrieved context (`_contexts`) and a
    ground-truth context, in one BERTScore batch; records without either get none (not a zero)."""
    # by question, so the records of one question (one per strategy and k) share a BERTScore group and its
    # ground truth is encoded once
    scored = sorted((r for r in records if r.get("_contexts") and truths.get(r["question_id"])),
                    key=lambda r: str(r["question_id"]))
    if not scored:
        return
    scores = bert_scores_prf(["\n\n".join(r["_contexts"]) for r in scored],
                             [[truths[r["question_id"]]] for r in scored], model)
    for record, (precision, recall, f1) in zip(scored, scores, strict=True):
        record.update(context_bertscore_p=precision, context_bertscore_r=recall, context_bertscore_f1=f1)
