"""The `rst` step's LLM prompts (KHL-RAG): paragraph features, and rhetorical relations of several pairs per call.

The paper asks about every pair of paragraphs; here the model sees only the candidate pairs (reading-order
neighbours and the most similar paragraphs), `pairs_per_call` at a time, each paragraph shown by its main idea
and its opening text. Answers are schema-validated (repaired, re-asked once); a relation outside the 16 types
or a confidence outside (0, 10] is dropped, and a pair the model did not answer falls back to the fast rules.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from neoweave.enrich.rst_relations import PARAGRAPH_TYPES, RELATIONS
from neoweave.llm.structured import list_answer

PROMPT_VERSION = 1

FEATURES_SYSTEM = f"""You analyse one paragraph of a document.
Answer with a JSON object only:
{{"main_idea": "the paragraph's main idea in one sentence",
 "keywords": ["3 to 6 keywords or key phrases, the names and terms it is about"],
 "type": "one of: {', '.join(PARAGRAPH_TYPES)}",
 "reason": "why this type, in a few words"}}"""

RELATIONS_SYSTEM = f"""You analyse how paragraphs relate rhetorically (Rhetorical Structure Theory).
For each numbered pair, say how paragraph B relates to paragraph A, with one or more of these relations:
{', '.join(RELATIONS[1:])}.
Evidence: B supports A; Elaboration: B adds detail to A; Background: B gives context for A; Purpose: B is the
aim of A; Result / Cause: B is the result / cause of A; Comparison: B compares with A; Concession: B concedes or
contrasts; Sequence: B follows A in time or steps; Summary / Conclusion: B sums up / concludes A; Evaluation: B
judges A; Problem-Solution: B solves the problem in A; Topic: same topic, no closer relation; Example: B is an
example of A. Use "None" alone when they are unrelated.
Give each relation a confidence from 1 (weak) to 10 (certain) and a short reason.
Answer with a JSON list only, one entry per pair:
[{{"pair": 1, "relations": [{{"relation": "Elaboration", "confidence": 7, "reason": "..."}}]}}]"""


class ParagraphFeatures(BaseModel):
    main_idea: str = Field(min_length=3)
    keywords: list[str] = Field(default_factory=list, json_schema_extra={"maxItems": 8})
    type: str = "expository"
    reason: str = ""

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        """A type outside the paper's seven is read as the nearest spelling, else expository."""
        cleaned = value.strip().lower().replace(" ", "-").replace("_", "-")
        return cleaned if cleaned in PARAGRAPH_TYPES else "expository"


class PairRelation(BaseModel):
    relation: str
    confidence: float = 0.0
    reason: str = ""


class PairAnswer(BaseModel):
    pair: int
    relations: list[PairRelation] = Field(default_factory=list)


PairAnswers = list_answer("PairAnswers", "pairs", PairAnswer, max_items=16)


def features_request(text: str, max_chars: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": FEATURES_SYSTEM},
            {"role": "user", "content": f"Paragraph:\n{text[:max_chars]}"}]


def relations_request(pairs: list[tuple[str, str, str, str]], max_chars: int) -> list[dict[str, str]]:
    """pairs: [(main idea A, text A, main idea B, text B)] -> one request numbering them from 1."""
    def shown(idea: str, text: str) -> str:
        return f"(main idea: {idea})\n{text[:max_chars]}" if idea else text[:max_chars]

    body = "\n\n".join(f"Pair {n}\nA: {shown(ia, ta)}\nB: {shown(ib, tb)}"
                       for n, (ia, ta, ib, tb) in enumerate(pairs, 1))
    return [{"role": "system", "content": RELATIONS_SYSTEM}, {"role": "user", "content": body}]


def read_relations(answer: list[PairAnswer], pairs: int) -> dict[int, list[tuple[str, float, str]]]:
    """Pair number (0-based) -> [(relation, weight, reason)] with known relations and weights in (0, 10];
    "None" clears a pair (it excludes the others). Pairs the model did not answer are absent."""
    by_name = {name.lower(): name for name in RELATIONS}
    found: dict[int, list[tuple[str, float, str]]] = {}
    for entry in answer:
        index = entry.pair - 1
        if not 0 <= index < pairs or index in found:
            continue
        relations = []
        for item in entry.relations:
            name = by_name.get(item.relation.strip().lower().replace("_", "-"))
            if name == "None":
                relations = []
                break
            if name and 0 < item.confidence <= 10 and name not in {r[0] for r in relations}:
                relations.append((name, float(item.confidence), item.reason.strip()[:300]))
        found[index] = relations
    return found
