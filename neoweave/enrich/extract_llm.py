"""LLM extraction: per chunk, schema-constrained JSON of entities and relations, grounded in the text.

The instruction is one fixed system prompt for every chunk (llama.cpp then reuses its evaluated prefix, and
the gateway's response cache keys stay stable); the chunk is the only user message. The JSON schema is in the
prompt; with `grammar` it also goes to the server as `response_format` (llama.cpp turns it into a grammar, so
the output always parses, at a large speed cost there). The gateway repairs common JSON breakage and re-asks
once with the validation error. No worked example in the prompt: the 0.5B copied it. Output is grounded: an
entity none of whose words occur in the chunk is dropped (small models invent), relations must join two kept
entities. A chunk that still fails falls back to the fast extractor, and its `ChunkExtraction` says so
(`method = fast`, `error`), so nothing is silently lost; its chunk signature carries `+fallback`, so the next
`--method llm` run retries it automatically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, create_model, model_validator

from neoweave.errors import NeoweaveError
from neoweave.nlp.extract_fast import FastExtractor
from neoweave.nlp.extraction import ChunkExtraction, Mention, Relation
from neoweave.nlp.link_context import link_context
from neoweave.nlp.names import DEFAULT_TYPES, normalize
from neoweave.protocols import LLMClient

PROMPT_VERSION = 1
MAX_ENTITIES = 15
MAX_RELATIONS = 15
_RELATION_TYPE = re.compile(r"[^a-z0-9]+")

SYSTEM_PROMPT = """You extract a knowledge graph from one passage of text.
List the specific entities the passage names (people, organizations, places, events, works, products, dates,
code objects such as functions, classes and modules, and important concepts) and the relations the passage
states between them.
- Entity name: as written in the passage (the fullest form used). Type: one of {types}.
- Entity description: a few words from what the passage says about it.
- Relation: source and target are entity names from your list; type is a short verb phrase in snake_case
  (born_in, directed, part_of, returns); description says how they are related in the passage; strength is
  1 (weak, implied) to 10 (explicit and central).
- Only what the passage states. At most {max_entities} entities and {max_relations} relations.
Answer with one compact JSON object on a single line, no indentation:
{{"entities": [...], "relations": [...]}}"""


def _bounded(default: Any = ..., **bounds: int) -> Any:
    """A field whose bounds are in the JSON schema (the server's grammar) but not enforced when parsing: a
    server without grammars that sends 25 entities loses the extras, not the whole chunk."""
    return Field(default, json_schema_extra=bounds)


class _Relation(BaseModel):
    source: str = _bounded(maxLength=80)
    target: str = _bounded(maxLength=80)
    type: str = _bounded("related_to", maxLength=40)
    description: str = _bounded("", maxLength=160)
    strength: int = Field(5, ge=1, le=10)


def _bare_list(cls: type, data: Any) -> Any:
    """Small models sometimes answer with just the entity list, or list entities as bare names."""
    if isinstance(data, list):
        data = {"entities": data}
    if isinstance(data, dict) and isinstance(data.get("entities"), list):
        data = {**data, "entities": [{"name": e} if isinstance(e, str) else e for e in data["entities"]]}
    return data


def response_model(types: tuple[str, ...]) -> type[BaseModel]:
    """The extraction schema with entity types restricted to `types`, and every list and string bounded: the
    grammar llama.cpp derives from it stops a small model that would otherwise list entities until the token
    cap (seen with the 0.5B: 90+ entities, then a truncated answer)."""
    entity = create_model("Entity", name=(str, _bounded(maxLength=80)),
                          type=(str, _bounded("concept", enum=list(types))),
                          description=(str, _bounded("", maxLength=160)))
    return create_model("ChunkGraph", __validators__={"_bare_list": model_validator(mode="before")(_bare_list)},
                        entities=(list[entity], _bounded(maxItems=MAX_ENTITIES)),  # type: ignore[valid-type]
                        relations=(list[_Relation], _bounded([], maxItems=MAX_RELATIONS)))


@dataclass
class LLMExtractor:
    """Entities and relations per chunk through the LLM gateway's structured output."""

    llm: LLMClient
    entity_types: tuple[str, ...] = DEFAULT_TYPES
    max_tokens: int = 512
    grammar: bool = False
    """Send the schema as the server's grammar (`response_format`). Off by default: llama-cpp-python's server
    samples ~5x slower under a grammar (measured: 100 tokens in 11-17 s against 2.6-5 s, Qwen 0.5B, 2 cores),
    and the JSON the models write freely is repaired and validated anyway."""
    fallback: FastExtractor = field(default_factory=FastExtractor)

    def __post_init__(self) -> None:
        if self.llm is None:
            raise NeoweaveError("the llm extraction method needs an LLM gateway",
                                hint="configure [llm] or NEOWEAVE_LLM_BASE_URL; the local model is the default")
        self.entity_types = tuple(t.strip().lower() for t in self.entity_types if t.strip())
        if not self.entity_types:
            raise NeoweaveError("the llm extraction method needs at least one entity type")
        self.system = SYSTEM_PROMPT.format(types=", ".join(self.entity_types), max_entities=MAX_ENTITIES,
                                           max_relations=MAX_RELATIONS)
        self.schema = response_model(self.entity_types)

    @property
    def model_name(self) -> str:
        return f"{self.llm.model}/p{PROMPT_VERSION}{'g' if self.grammar else ''}/{'+'.join(self.entity_types)}"

    def extract(self, chunks: list[tuple[str, str]]) -> list[ChunkExtraction]:
        results: list[ChunkExtraction] = []
        failed: list[tuple[int, str]] = []
        for chunk_id, text in chunks:
            reply = self.llm.structured([{"role": "system", "content": self.system},
                                         {"role": "user", "content": f"Passage:\n{text}"}],
                                        self.schema, stage="enrich:kg", max_tokens=self.max_tokens,
                                        mode=None if self.grammar else "prompt")
            result = ChunkExtraction(chunk_id, "llm")
            result.prompt_tokens = sum(c.prompt_tokens for c in reply.calls)
            result.completion_tokens = sum(c.completion_tokens for c in reply.calls)
            if reply.ok:
                self._convert(reply.value, text, result)
            else:
                result.error = (reply.error or "no valid answer")[:300]
                failed.append((len(results), text))
            results.append(result)
        if failed:  # the fast method for chunks the model could not do, recorded as such
            fallbacks = self.fallback.extract([(results[i].chunk_id, text) for i, text in failed])
            for (index, _), fallback in zip(failed, fallbacks, strict=True):
                fallback.error = results[index].error
                fallback.prompt_tokens = results[index].prompt_tokens
                fallback.completion_tokens = results[index].completion_tokens
                results[index] = fallback
        return results

    @staticmethod
    def _endpoint(name: str, text: str, words: set[str], by_name: dict[str, Mention],
                  result: ChunkExtraction) -> Mention | None:
        """A relation end: a listed entity, or a name the passage contains that the model forgot to list
        (small models often do); anything else is not grounded."""
        key = normalize(name)
        if key in by_name:
            return by_name[key]
        if not key or not all(word in words for word in key.split()):
            return None
        start = text.find(name)
        mention = result.add_mention(Mention.of(
            name, "concept", context=link_context(text, start, start + len(name), 12) if start >= 0 else ""))
        if mention is not None:
            by_name[key] = mention
        return mention

    def _convert(self, graph: Any, text: str, result: ChunkExtraction) -> None:
        """Grounded mentions and relations from the model's answer."""
        words = set(normalize(text).split())
        by_name: dict[str, Mention] = {}
        for entity in graph.entities[:MAX_ENTITIES]:
            name = " ".join(entity.name.split())
            key_words = normalize(name).split()
            if not key_words or not any(w in words for w in key_words):
                result.dropped += 1
                continue
            start = text.find(name)
            context = link_context(text, start, start + len(name), 12) if start >= 0 else ""
            entity_type = entity.type.strip().lower()
            if entity_type not in self.entity_types:
                entity_type = "concept"  # free-running models invent types; the grammar would have refused
            mention = result.add_mention(Mention.of(name, entity_type, context=context,
                                                    description=entity.description))
            if mention is not None:
                by_name[normalize(name)] = mention
        for relation in graph.relations[:MAX_RELATIONS]:
            source, target = (self._endpoint(relation.source, text, words, by_name, result),
                              self._endpoint(relation.target, text, words, by_name, result))
            if source is None or target is None or source.id == target.id:
                result.dropped += 1
                continue
            kind = _RELATION_TYPE.sub("_", relation.type.lower()).strip("_")[:40] or "related_to"
            result.add_relation(Relation(source.id, target.id, kind, " ".join(relation.description.split())[:300],
                                         float(relation.strength)))
