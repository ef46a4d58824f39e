"""Question classes the router dispatches on, found by rules (no LLM) or by one LLM call.

single-fact (one thing about one entity), comparison (two or more entities set against each other), temporal
(when, what year, before / after), bridge (a fact about an entity the question names only through another fact:
"the director of the film that ..."), abstract (themes, summaries, overviews of the collection), unanswerable
(the collection cannot say: only the LLM classifier finds these; rules never guess it).
"""

from __future__ import annotations

import re

from pydantic import BaseModel

CLASSES = ("single-fact", "comparison", "temporal", "bridge", "abstract", "unanswerable")
CLASSIFY_STAGE = "router:classify"

_ABSTRACT = re.compile(
    r"^(summari[sz]e|give (me )?an overview|overview of|describe the (overall|main|general))|"
    r"\b(main (themes?|topics?|ideas?)|key (themes?|topics?|ideas?)|overall|in general|trends?|"
    r"what (is|are) .{0,40}\b(about|themes?)\s*\?$)", re.IGNORECASE)
_CHOICE = re.compile(r",\s*[^,?]{1,80}\s+or\s+[^,?]{1,80}\?\s*$", re.IGNORECASE)
_COMPARISON = re.compile(
    r"\b(both|same|neither|either|in common|compared? (to|with)|difference between|more .{1,30} than|"
    r"less .{1,30} than|which was the first)\b|\bbetween .{1,60}\band\b.{0,80}\b(which|who)\b|"
    r"^(are|were|is|was|do|did|does|have|has) .{1,80}\band\b .{1,80}\b(both|same|each)\b",
    re.IGNORECASE)
_COMPARATIVE_CHOICE = re.compile(
    r"^(which|who|what)\b.{0,80}\b(first|older|oldest|younger|youngest|earlier|later|longer|larger|bigger|"
    r"smaller|more|fewer|less|higher|lower|taller|shorter)\b", re.IGNORECASE)
_TEMPORAL = re.compile(
    r"^(when|what year|in what year|which year|what date|on what date|in which year|how long ago|what century)\b|"
    r"\b(what|which) (year|decade|century|date)\b|\bin (what|which) year\b", re.IGNORECASE)
_BRIDGE = re.compile(
    r"\b(the|a|an|his|her|its|their) ([\w'-]+ ){0,3}?[\w'-]+ (who|whom|whose|which|that|where)\b|"
    r"\b\w+ (who|whom|whose|which|that)\s+(is|was|were|are|has|had|have|did|does|\w+ed)\b|"
    r"\b(of|by|in|from|for) the \w+( \w+)? (of|by|in|from|that|who)\b|'s \w+( \w+)? (of|who|that|which)\b|"
    r"\bthe [\w'-]+( and [\w'-]+( [\w'-]+)?)? of (the|a|an)\b|"
    r"\b(based|located|known|developed|produced|created|founded|written|directed|featured|released|published|"
    r"composed|owned|operated|named|headquartered|born|starred) (in|by|for|as|from|on|after)\b",
    re.IGNORECASE)


def classify_rules(question: str) -> str:
    """The question's class by surface cues (abstract > comparison > temporal > bridge > single-fact)."""
    text = " ".join(question.split())
    if _ABSTRACT.search(text):
        return "abstract"
    if _COMPARISON.search(text) or (_CHOICE.search(text) and (" or " in text.lower())) \
            or (_COMPARATIVE_CHOICE.search(text) and " or " in text.lower()):
        return "comparison"
    if _TEMPORAL.search(text):
        return "temporal"
    if _BRIDGE.search(text):
        return "bridge"
    return "single-fact"


class QuestionClass(BaseModel):
    type: str


CLASSIFY_SYSTEM = f"""You sort questions asked of a document collection into one class:
- single-fact: one fact about one named thing;
- comparison: two or more things set against each other (which is older, are both ..., the same ...);
- temporal: asks when, what year or date, or the order of events;
- bridge: asks about something named only through another fact (the director of the film that ...);
- abstract: themes, summaries or overviews rather than a fact;
- unanswerable: a document collection could not answer it (opinions, the future, private facts, nonsense).
Answer with a JSON object only: {{"type": one of {", ".join(f'"{c}"' for c in CLASSES)}}}"""


def classify_messages(question: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": CLASSIFY_SYSTEM}, {"role": "user", "content": f"Question: {question}"}]


def parse_class(text: str) -> str | None:
    """A class name from the model's answer, tolerant of case, spaces and underscores; None if it is none."""
    cleaned = text.strip().lower().replace("_", "-").replace(" ", "-")
    return cleaned if cleaned in CLASSES else None
