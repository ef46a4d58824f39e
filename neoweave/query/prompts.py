"""Named, editable answer prompts; any strategy can use any template.

The templates follow the prompt families compared in the LARAG study (basic, role-based, reasoning, and the
hyperlinked prompt that shows the original context and the linked context as two blocks, with a unified
variant for strategies that have no links) and the thesis's short-answer prompt (one word or entity, yes/no,
or "Insufficient Information"). The wording here is neoweave's; register your own with `register_prompt`.
"""

from __future__ import annotations

from dataclasses import dataclass

from neoweave.errors import NeoweaveError
from neoweave.query.base import ContextItem, RetrievalResult

INSUFFICIENT = "Insufficient Information"
CITE_CLAIMS = ("Cite the numbered passages you use: put their numbers in square brackets right after what they "
               "support, e.g. [1] or [2][3].")
"""What a prompt that writes sentences adds when citations are asked for (the default)."""
CITE_FOLLOW_UP = ("Which of the numbered passages support that answer? Reply with their numbers in square "
                  "brackets only, e.g. [2] or [1][3].")
"""The short-answer prompts' citation request: a turn after the answer, so the answer is the one the model gives
unasked (asked inline, the 1.5B local model's exact match fell from 0.48 to 0.37 on HotpotQA-100)."""


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    system: str
    user: str
    """Formatted with {question}, {context} (every item), {original_context} (seeds) and {linked_context}."""
    about: str = ""
    cite: str = CITE_CLAIMS
    """Appended to `system` when the answer should cite its passages (`neoweave.query.citations`)."""
    cite_follow_up: str = ""
    """When set, citations are asked for in a turn after the answer instead (`neoweave.query.answer`)."""
    short: bool = False
    """Asks for a word or a phrase (exact-match evaluation), not sentences."""


def _block(items: list[ContextItem], numbers: list[int] | None = None) -> str:
    """Numbered passages (`numbers`: each item's number, by default 1, 2, ...); grouped under their sub-question
    with their tags when a strategy searched several (Orion-RAG's structured context), or under the block a
    strategy put them in (KHL-RAG's KG and paragraph graph blocks)."""
    if not items:
        return "(none)"
    numbered = list(zip(numbers or range(1, len(items) + 1), items, strict=True))
    if not any("sub_query" in item.details or "group" in item.details for item in items):
        return "\n\n".join(f"[{index}] {item.section_title or item.doc_id}\n{item.text}"
                           for index, item in numbered)
    groups: dict[str, list[str]] = {}
    for index, item in numbered:
        tags = item.details.get("tag_path")
        head = f"[{index}] {item.section_title or item.doc_id}" + (f" (tags: {tags})" if tags else "")
        group = f"Sub-question: {item.details['sub_query']}" if "sub_query" in item.details \
            else item.details.get("group", "")
        groups.setdefault(group, []).append(f"{head}\n{item.text}")
    return "\n\n".join(f"{group}\n" + "\n\n".join(passages) for group, passages in groups.items())


PROMPTS: dict[str, PromptTemplate] = {}
_SHORT_ANSWER_USER = "Context:\n{context}\n\nQuestion: {question}\nShort answer:"


def register_prompt(template: PromptTemplate) -> PromptTemplate:
    PROMPTS[template.name] = template
    return template


register_prompt(PromptTemplate(
    "basic",
    system="Answer the question using the context.",
    user="Context:\n{context}\n\nQuestion: {question}\nAnswer:",
    about="context and question, nothing else",
))
register_prompt(PromptTemplate(
    "role",
    system="You are an expert technical documentation assistant. You answer developers' questions accurately "
           "and concisely, relying only on the documentation excerpts you are given.",
    user="Documentation excerpts:\n{context}\n\nQuestion: {question}\nAnswer:",
    about="role-based: the model is told who it is and whom it serves",
))
register_prompt(PromptTemplate(
    "reasoning",
    system="Answer the question using the context. Think step by step: first find the passages that are "
           "relevant, then combine what they say, then give the answer.",
    user="Context:\n{context}\n\nQuestion: {question}\nReason step by step, then give the final answer on a "
         "last line starting with 'Answer:'.",
    about="reasoning: step-by-step before the answer",
))
register_prompt(PromptTemplate(
    "hyperlinked",
    system="Answer the question using the documentation. The original context was retrieved for the question; "
           "the linked context comes from pages the original context links to, and may add the missing details.",
    user="Original context:\n{original_context}\n\nLinked context (reached through hyperlinks):\n{linked_context}"
         "\n\nQuestion: {question}\nAnswer:",
    about="hyperlinked: original and linked context in two blocks (LARAG)",
))
register_prompt(PromptTemplate(
    "unified",
    system="Answer the question using the documentation.",
    user="Context:\n{context}\n\nQuestion: {question}\nAnswer:",
    about="the hyperlinked prompt's single-block variant, for strategies without links",
))
register_prompt(PromptTemplate(
    "short_answer",
    system="You answer questions from the given context with a short answer: a single word or entity, "
           f"'yes' or 'no' for yes/no questions, or '{INSUFFICIENT}' if the context does not contain the answer. "
           "Do not explain.",
    user=_SHORT_ANSWER_USER,
    about="the thesis's short-answer prompt (exact-match evaluation)",
    cite="",
    cite_follow_up=CITE_FOLLOW_UP,
    short=True,
))
register_prompt(PromptTemplate(
    "exact_answer",
    system="You answer a question from the given context with the shortest complete answer, written as the "
           "context writes it. A yes/no question (one starting with is, are, was, were, do, does, did, can, has "
           "or have) gets 'yes' or 'no'. A question that names its options ('which is larger, A or B?') gets "
           "one of those options, never yes or no. A question asking which or who gets a name, in full as the "
           "context gives it (first and last name for people). A number or date gets the number or date only. "
           f"If the context does not contain the answer, say '{INSUFFICIENT}'. Do not explain.",
    user=_SHORT_ANSWER_USER,
    about="short_answer with the answer's form spelled out (yes/no only for yes/no questions, one of the "
          "named options, full names): the small local models' commonest exact-match misses",
    cite="",
    cite_follow_up=CITE_FOLLOW_UP,
    short=True,
))


register_prompt(PromptTemplate(
    "global_reduce",
    system="You answer a question about a document collection by combining the key points analysts found in "
           "its community reports. The points are ranked, most important first, each with an importance score "
           "(0-100). Combine what they say into one answer, keeping the facts they give and leaving out what "
           f"does not help. If the points do not answer the question, say '{INSUFFICIENT}'. Do not invent "
           "anything the points do not say.",
    user="{context}\n\nQuestion: {question}\nAnswer:",
    about="community_global's reduce step (graphrag's reduce prompt): a synthesised answer from key points",
))


def get_prompt(name: str) -> PromptTemplate:
    try:
        return PROMPTS[name]
    except KeyError:
        raise NeoweaveError(f"unknown prompt {name!r}; available: {', '.join(sorted(PROMPTS))}") from None


def _facts_block(result: RetrievalResult) -> str:
    """Facts (entity relations) as lines, each citing the context chunks it was read from by number."""
    if not result.facts:
        return ""
    numbers = {item.chunk_id: index for index, item in enumerate(result.items, 1)}
    lines = []
    for fact in result.facts:
        cited = sorted({numbers[c] for c in fact.chunk_ids if c in numbers})
        lines.append(f"- {fact.text()}" + (f" [{', '.join(map(str, cited))}]" if cited else ""))
    return "Facts (relations between entities, from the documents):\n" + "\n".join(lines) + "\n\n"


def _reports_block(result: RetrievalResult) -> str:
    """Community reports, most relevant first."""
    if not result.reports:
        return ""
    return "Community reports (summaries of groups of related entities):\n" + "\n".join(
        f"--- {report.title}\n{report.text.strip()}" for report in result.reports) + "\n\n"


def _points_block(result: RetrievalResult) -> str:
    """Global search's key points, most important first, with their scores."""
    if not result.points:
        return ""
    return "Key points from the community reports (importance 0-100, most important first):\n" + "\n".join(
        f"- ({point.score}) {point.text}" for point in result.points) + "\n\n"


def passages_block(items: list[ContextItem]) -> str:
    """Numbered passages as every answer prompt shows them (for agents that ask about a few passages)."""
    return _block(items)


def _sub_questions_block(result: RetrievalResult) -> str:
    """The sub-questions an iterative strategy asked on the way, with the model's intermediate answers."""
    answered = [step for step in result.sub_questions if step.answer]
    if not answered:
        return ""
    return "Sub-questions answered on the way (from the passages below; check them):\n" + "\n".join(
        f"- {step.asked or step.question} -> {step.answer}" for step in answered) + "\n\n"


def render(template: PromptTemplate, result: RetrievalResult, *, cite: bool = False) -> list[dict[str, str]]:
    """Chat messages for `template` filled with a retrieval result (sub-question answers, key points, reports
    and facts, when any, lead; a result of key points only shows no empty chunk block).

    Passages are numbered by their place in `result.items` in every block (the hyperlinked prompt's two blocks
    too), so a cited number names one item; `cite` asks the model to cite them (when there are any).
    """
    numbered = list(enumerate(result.items, 1))
    seeds = [(number, item) for number, item in numbered if item.origin != "link"]
    linked = [(number, item) for number, item in numbered if item.origin == "link"]
    facts = (_sub_questions_block(result) + _points_block(result) + _reports_block(result)
             + _facts_block(result))
    context = facts.rstrip() if facts and not result.items else facts + _block(result.items)
    original = facts.rstrip() if facts and not seeds else facts + _block(*_unzip(seeds))
    cite = cite and bool(result.items)
    user = template.user.format(question=result.question, context=context, original_context=original,
                                linked_context=_block(*_unzip(linked)))
    system = f"{template.system} {template.cite}" if cite and template.cite else template.system
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _unzip(numbered: list[tuple[int, ContextItem]]) -> tuple[list[ContextItem], list[int]]:
    return [item for _, item in numbered], [number for number, _ in numbered]
