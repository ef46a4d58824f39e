"""What an extractor returns for one chunk: entity mentions and relations, keyed for the graph.

Both methods (fast NLP, LLM) produce these; the kg step writes them the same way (`enrich/kg_writes.py`), so a
chunk's derivations can always be found, replaced and forgotten by its chunk id. Plain data, no store: query-time
keyphrases use the fast extractor too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from neoweave.nlp.names import entity_id, entity_key, group_of

MAX_DESCRIPTION = 300
_OUTSIDE_BMP = re.compile("[\U00010000-\U0010FFFF]")


def cuttable_up_to(text: str) -> int:
    """How far into `text` a (start, end) offset pair means the same characters to both backends' `substring`:
    FalkorDB counts code points, Neo4j UTF-16 units, which agree until the first character outside the BMP."""
    found = _OUTSIDE_BMP.search(text)
    return found.start() if found else len(text)


@dataclass
class Mention:
    """One entity as it appears in one chunk (all occurrences of the same key folded together)."""

    name: str
    type: str  # the extractor's type (spaCy label or LLM type), lower case
    group: str
    key: str
    count: int = 1
    context: str = ""  # words around the first occurrence (an inferred link's context)
    description: str = ""
    description_at: tuple[int, int] | None = None
    """(start, end) of `description` in the chunk's text when it was cut from it (the fast method's sentence):
    the graph then keeps the offsets, not a copy of the text (`kg_create_mentions`)."""
    target_id: str | None = None  # the entity it is written to (a resolution survivor), when not its own id

    @property
    def id(self) -> str:
        return entity_id(self.key, self.group)

    @classmethod
    def of(cls, name: str, entity_type: str, *, context: str = "", description: str = "",
           description_at: tuple[int, int] | None = None) -> Mention | None:
        """`description_at`: where `description` starts and ends in the chunk's text, if it was cut from it."""
        group = group_of(entity_type)
        key = entity_key(name, group)
        if not key or len(key) < 2 or len(key) > 120:
            return None
        description = description[:MAX_DESCRIPTION]
        if description_at is not None:
            description_at = (description_at[0], description_at[0] + len(description))
        return cls(" ".join(name.split()), entity_type.strip().lower(), group, key, 1, context, description,
                   description_at if description else None)


@dataclass
class Relation:
    source: str  # entity ids
    target: str
    type: str
    description: str
    weight: float = 1.0


@dataclass
class ChunkExtraction:
    chunk_id: str
    method: str  # the method that produced it: fast, llm (a failed llm chunk falls back to fast)
    mentions: list[Mention] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    error: str | None = None  # why the requested method failed (then `method` says what was used)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    dropped: int = 0  # llm: entities not grounded in the text, relations between unknown entities

    def add_mention(self, mention: Mention | None) -> Mention | None:
        """Fold occurrences of one entity; returns the stored mention."""
        if mention is None:
            return None
        for existing in self.mentions:
            if existing.id == mention.id:
                existing.count += mention.count
                if not existing.description and mention.description:
                    existing.description, existing.description_at = mention.description, mention.description_at
                return existing
        self.mentions.append(mention)
        return mention

    def add_relation(self, relation: Relation) -> None:
        if relation.source == relation.target:
            return
        if relation.source > relation.target and relation.type == "co_occurs":
            relation.source, relation.target = relation.target, relation.source  # undirected: one edge
        for existing in self.relations:
            if (existing.source, existing.target, existing.type) == (relation.source, relation.target, relation.type):
                existing.weight += relation.weight
                return
        self.relations.append(relation)


def redirect(results: list[ChunkExtraction], survivors: dict[str, str]) -> None:
    """Point mentions and relations at the entities resolution merged their ids into (`final_survivors`)."""
    for result in results:
        for mention in result.mentions:
            mention.target_id = survivors.get(mention.id, mention.id)
        for relation in result.relations:
            relation.source = survivors.get(relation.source, relation.source)
            relation.target = survivors.get(relation.target, relation.target)

