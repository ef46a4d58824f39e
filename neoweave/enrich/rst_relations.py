"""KHL-RAG's paragraph vocabulary and the LLM-free rules of the `rst` step.

The paper's 16 rhetorical relations and 7 paragraph types, and the fast method's two rule sets:
- relations from discourse markers at the start of the later paragraph (`However, ...` -> Concession),
  weighted by the marker's strength and the pair's similarity; adjacent paragraphs without a marker
  elaborate each other, similar ones share a topic;
- paragraph types from cue words (past-tense narration, argument words, definitions, ...).
An edge `(a)-[:RST {relation}]->(b)` reads "b is the relation of a": b is the later paragraph (reading order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RELATIONS = ("None", "Evidence", "Elaboration", "Background", "Purpose", "Result", "Cause", "Comparison",
             "Concession", "Sequence", "Summary", "Evaluation", "Problem-Solution", "Conclusion", "Topic",
             "Example")
PARAGRAPH_TYPES = ("narrative", "descriptive", "argumentative", "expository", "lyrical",
                   "narrative-argumentative", "descriptive-narrative")
MAX_WEIGHT = 10.0


@dataclass(frozen=True)
class Marker:
    relation: str
    strength: float
    """The relation's confidence when the marker opens the paragraph right after (0-10)."""
    reaches_back: bool = False
    """Summaries and conclusions relate to every earlier paragraph in the window, not only the previous one."""


# Discourse markers that open a paragraph, longest first when matched (phrases before single words).
MARKERS: dict[str, Marker] = {
    "for example": Marker("Example", 8.5), "for instance": Marker("Example", 8.5), "e.g.": Marker("Example", 7.5),
    "to illustrate": Marker("Example", 8.0), "such as": Marker("Example", 6.0),
    "because": Marker("Cause", 8.0), "since": Marker("Cause", 6.0), "due to": Marker("Cause", 7.5),
    "as a result": Marker("Result", 8.5), "therefore": Marker("Result", 8.0), "thus": Marker("Result", 7.5),
    "consequently": Marker("Result", 8.5), "hence": Marker("Result", 7.5), "so": Marker("Result", 5.5),
    "accordingly": Marker("Result", 7.0),
    "however": Marker("Concession", 8.0), "although": Marker("Concession", 8.0), "though": Marker("Concession", 7.0),
    "but": Marker("Concession", 7.0), "yet": Marker("Concession", 6.5), "nevertheless": Marker("Concession", 8.0),
    "nonetheless": Marker("Concession", 8.0), "despite": Marker("Concession", 7.5),
    "even so": Marker("Concession", 7.5), "still": Marker("Concession", 5.5),
    "in contrast": Marker("Comparison", 8.5), "by contrast": Marker("Comparison", 8.5),
    "on the other hand": Marker("Comparison", 8.0), "similarly": Marker("Comparison", 8.0),
    "likewise": Marker("Comparison", 8.0), "whereas": Marker("Comparison", 7.5), "unlike": Marker("Comparison", 7.0),
    "compared with": Marker("Comparison", 7.5), "compared to": Marker("Comparison", 7.5),
    "first": Marker("Sequence", 6.0), "firstly": Marker("Sequence", 7.0), "second": Marker("Sequence", 6.5),
    "secondly": Marker("Sequence", 7.5), "then": Marker("Sequence", 6.5), "next": Marker("Sequence", 7.0),
    "finally": Marker("Sequence", 7.5), "afterwards": Marker("Sequence", 7.5), "later": Marker("Sequence", 6.5),
    "subsequently": Marker("Sequence", 7.5), "meanwhile": Marker("Sequence", 6.0),
    "in summary": Marker("Summary", 9.0, True), "to summarize": Marker("Summary", 9.0, True),
    "to sum up": Marker("Summary", 9.0, True), "in short": Marker("Summary", 8.0, True),
    "overall": Marker("Summary", 7.0, True), "in brief": Marker("Summary", 8.0, True),
    "in conclusion": Marker("Conclusion", 9.0, True), "to conclude": Marker("Conclusion", 9.0, True),
    "in the end": Marker("Conclusion", 7.0, True),
    "in order to": Marker("Purpose", 7.5), "to this end": Marker("Purpose", 8.0), "so that": Marker("Purpose", 7.0),
    "the solution": Marker("Problem-Solution", 7.5), "to solve": Marker("Problem-Solution", 7.5),
    "to address": Marker("Problem-Solution", 7.0), "to fix": Marker("Problem-Solution", 7.0),
    "the problem": Marker("Problem-Solution", 6.5),
    "in fact": Marker("Evidence", 7.0), "indeed": Marker("Evidence", 7.0), "evidence": Marker("Evidence", 6.5),
    "studies show": Marker("Evidence", 8.0), "according to": Marker("Evidence", 6.5),
    "historically": Marker("Background", 7.0), "originally": Marker("Background", 6.5),
    "background": Marker("Background", 6.5), "previously": Marker("Background", 6.5),
    "fortunately": Marker("Evaluation", 6.5), "unfortunately": Marker("Evaluation", 6.5),
    "importantly": Marker("Evaluation", 6.5), "notably": Marker("Evaluation", 6.0),
    "in addition": Marker("Elaboration", 7.5), "additionally": Marker("Elaboration", 7.5),
    "furthermore": Marker("Elaboration", 7.5), "moreover": Marker("Elaboration", 7.5),
    "also": Marker("Elaboration", 6.0), "specifically": Marker("Elaboration", 7.5),
    "in particular": Marker("Elaboration", 7.5), "note that": Marker("Elaboration", 6.5),
}
_MARKER = re.compile(r"^\W*(" + "|".join(re.escape(m) for m in sorted(MARKERS, key=len, reverse=True))
                     + r")(?![\w])", re.IGNORECASE)


def opening_marker(text: str) -> tuple[str, Marker] | None:
    """The discourse marker the paragraph opens with, if any."""
    found = _MARKER.match(text)
    return (found.group(1).lower(), MARKERS[found.group(1).lower()]) if found else None


@dataclass(frozen=True)
class Relation:
    relation: str
    weight: float
    reason: str


def fast_relation(later_text: str, distance: int | None, similarity: float) -> Relation | None:
    """The rule-based relation of the later paragraph to the earlier one. `distance` is how many paragraphs
    apart they are in one document (None across documents); `similarity` the cosine of their texts.

    A marker at the start of the later paragraph names the relation to the paragraph right before it (and, for
    summaries and conclusions, to every earlier one in the window), at the marker's strength scaled by
    similarity (0.75x for unrelated texts up to 1.25x for near-duplicates) and lowered by a point per extra
    paragraph of distance. Without a marker, adjacent paragraphs elaborate each other and others share a topic,
    both at 10 x similarity.
    """
    similarity = max(0.0, min(1.0, similarity))
    found = opening_marker(later_text) if distance is not None else None
    if found and (distance == 1 or found[1].reaches_back):
        word, marker = found
        weight = marker.strength * (0.75 + 0.5 * similarity) - (distance - 1)
        return Relation(marker.relation, _clip(weight), f"the later paragraph opens with '{word}'")
    if distance == 1:
        return Relation("Elaboration", _clip(10 * similarity), f"adjacent paragraphs (similarity {similarity:.2f})")
    where = "same document" if distance is not None else "another document"
    return Relation("Topic", _clip(10 * similarity), f"similar paragraphs, {where} (similarity {similarity:.2f})")


def _clip(weight: float) -> float:
    return round(max(0.0, min(MAX_WEIGHT, weight)), 2)


# Paragraph-type cues: each a word pattern; a paragraph's type is the one with most cue hits per sentence.
_CUES: dict[str, re.Pattern[str]] = {
    "narrative": re.compile(r"\b(was|were|had|became|went|came|died|born|began|later|then|after|before|when|"
                            r"during|returned|moved|left|won|released|founded|\w{3,}ed|1[0-9]{3}|20[0-9]{2})\b",
                            re.IGNORECASE),
    "descriptive": re.compile(r"\b(located|situated|lies|surrounded|features|consists?|contains|covers|"
                              r"colou?r\w*|shape\w*|size|large|small|tall|wide|long|area|square|appearance|"
                              r"looks?|known for|home to|population)\b", re.IGNORECASE),
    "argumentative": re.compile(r"\b(should|must|ought|therefore|thus|hence|because|however|argue\w*|claim\w*|"
                                r"believe|clearly|evidence|prove\w*|conclude\w*|reason\w*|important|"
                                r"recommend\w*|better|worse|wrong|right)\b", re.IGNORECASE),
    "expository": re.compile(r"\b(is an?|are|refers? to|defined|means|used|uses|function|method|returns?|"
                             r"example|type|called|process|system|allows?|provides?|consists|such as|"
                             r"\w+\(\)|\w+\.\w+)\b", re.IGNORECASE),
    "lyrical": re.compile(r"(\b(i|me|my|oh|heart|soul|love|dream\w*|beauty|tears?|sky|moon|longing)\b|!)",
                          re.IGNORECASE),
}
_WORDS = re.compile(r"\w+")


def fast_paragraph_type(text: str) -> tuple[str, str]:
    """(type, reason) from cue words: the type with the most cue hits per 100 words; narration with argument
    words (or description) at least half as strong gives the mixed types. Expository when nothing stands out."""
    words = max(len(_WORDS.findall(text)), 1)
    hits = {kind: [m.group(0).lower() for m in pattern.finditer(text)] for kind, pattern in _CUES.items()}
    density = {kind: 100 * len(found) / words for kind, found in hits.items()}
    density["lyrical"] *= 1.5 if density["lyrical"] >= 3 else 0.0  # a stray "I" or "!" is not lyricism
    best = max(density, key=lambda kind: density[kind])
    if density[best] < 2:
        return "expository", "no strong cue; informational by default"
    kind = best
    if best == "narrative" and density["argumentative"] >= density["narrative"] / 2:
        kind = "narrative-argumentative"
    elif best in ("narrative", "descriptive"):
        other = "descriptive" if best == "narrative" else "narrative"
        if density[other] >= density[best] / 2 and density[other] >= 4:
            kind = "descriptive-narrative"
    cues = list(dict.fromkeys(w for part in kind.split("-") for w in hits[part]))[:6]
    return kind, f"cue words: {', '.join(cues)}"
