"""KHL-RAG: the rhetorical paragraph graph (HLPG) and the knowledge graph, mixed by question type.

1. Analysis (`khl_analysis`): the question's keywords, main idea and type (llm, or fast: keyphrases, the
   question, cue words).
2. Dual-semantic search: top `top_k` paragraphs by keyword embedding (`chunk_keywords_search`) and top `top_k`
   by main-idea embedding (`chunk_main_idea_search`); their union, each scored by its better similarity.
3. Their first-order RST neighbours whose edge weight exceeds `tau` (`rst_neighbours`), scored seed score x
   weight / 10, ranked with the seeds.
4. KG half: the `entities` entities most relevant to the question (60 in the paper: those it names, then the
   nearest entity vectors) and the passages mentioning them, the best entity's first (`khl_kg_chunks`).
5. Mixing: of `k` passages, a share from the KG and the rest from the paragraph graph's seeds by question type
   (knowledge 7:3, reading 5:5, reasoning 3:7 in the paper); a side short of passages leaves its places to the
   other; each kept seed then brings `neighbours_per_seed` RST neighbours (beyond k, as LARAG's links). The
   prompt shows the two blocks.
`mode` runs the paper's ablations: `kg` (KG only), `hlpg` (paragraph graph seeded by plain dense search),
`hlpg_filter` (dual-semantic seeds + RST), `full`. Needs `neoweave enrich rst` (and `kg` for the KG half).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, ClassVar

from neoweave.errors import NeoweaveError
from neoweave.query import khl_analysis as analysis
from neoweave.query.base import ContextItem, Cost, RetrievalResult, Strategy, Trace, register
from neoweave.query.entity_linking import link_question, no_entities
from neoweave.query.ranking import best_first

log = logging.getLogger(__name__)
MODES = ("full", "kg", "hlpg", "hlpg_filter")
KG_BLOCK = "Knowledge-graph passages (about the entities the question names)"
HLPG_BLOCK = "Paragraph-graph passages (matching paragraphs and their rhetorical neighbours)"


@register
@dataclass
class KhlRAG(Strategy):
    name = "khl"
    requires = ("rst",)
    needs_llm: ClassVar[bool] = True
    llm_free: ClassVar[dict[str, Any]] = {"analysis": "fast"}
    paper: ClassVar[dict[str, Any] | None] = {
        "k": 10, "top_k": 5, "tau": 5.0, "entities": 60, "mode": "full", "analysis": "llm", "question_type": "auto",
        "kg_share_knowledge": 7, "kg_share_reading": 5, "kg_share_reasoning": 3, "all_neighbours": True,
        "kg_entities": "vector"}
    paper_source: ClassVar[str] = "KHL-RAG, 003 l. 93-111 (retrieval), 470-476 (k = 60, tau = 5, (l, k) mixes)"

    k: int = 10
    """Passages in the context, KG and paragraph graph together."""
    top_k: int = 5
    """Paragraphs per semantic index (keywords, main idea): the paper's K."""
    tau: float = 5.0
    """RST neighbours are added through edges whose weight exceeds tau (the paper's default 5; ~6 was best)."""
    entities: int = 60
    """Entities nearest the question whose passages form the KG half (the paper's k = 60)."""
    mode: str = "full"
    """full | kg (KG only) | hlpg (paragraph graph, plain dense seeds) | hlpg_filter (dual-semantic seeds)."""
    analysis: str = "llm"
    """llm: the model extracts keywords, main idea and question type; fast: keyphrases and cue words."""
    question_type: str = "auto"
    """auto (from the analysis) or knowledge | reading | reasoning to force the mix."""
    kg_share_knowledge: int = 7
    """KG passages per 10 for knowledge-based questions (the paper's 7:3)."""
    kg_share_reading: int = 5
    """... for reading comprehension (5:5)."""
    kg_share_reasoning: int = 3
    """... for logical reasoning (3:7)."""
    neighbours_per_seed: int = 1
    """RST neighbours each kept paragraph seed brings along, strongest edge first (added beyond k, as LARAG adds
    linked chunks; 0 keeps the context at k, neighbours then only compete with seeds by score)."""
    all_neighbours: bool = False
    """Every first-order RST neighbour above `tau` of each kept seed is added, as the paper does (003 eq. 8, l.
    474: "any first order neighbor ... whose confidence score exceeds 5 is incorporated"), instead of
    `neighbours_per_seed`: the context grows with the seeds' degree."""
    kg_entities: str = "linked"
    """How the entities are chosen: linked (names in the question first, as the kg strategy links them, then the
    nearest entity vectors up to `entities`) or vector (the nearest entity vectors only)."""
    analysis_max_tokens: int = 160

    def validate(self) -> None:
        self._at_least(1, "k", "top_k", "entities")
        self._at_least(0, "tau", "neighbours_per_seed", "kg_share_knowledge", "kg_share_reading", "kg_share_reasoning")
        for name in ("kg_share_knowledge", "kg_share_reading", "kg_share_reasoning"):
            if getattr(self, name) > 10:
                raise NeoweaveError(f"khl: {name} is a share of 10, got {getattr(self, name)}")
        if self.mode not in MODES:
            raise NeoweaveError(f"khl: mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.kg_entities not in ("linked", "vector"):
            raise NeoweaveError(f"khl: kg_entities must be linked or vector, got {self.kg_entities!r}")
        if self.analysis not in ("llm", "fast"):
            raise NeoweaveError(f"khl: analysis must be llm or fast, got {self.analysis!r}")
        if self.question_type not in ("auto", *analysis.TYPES):
            raise NeoweaveError(f"khl: question_type must be auto or one of {', '.join(analysis.TYPES)}, "
                                f"got {self.question_type!r}")
        if self.analysis == "llm" and self.llm is None:
            raise NeoweaveError("khl: analysis=llm needs an LLM", hint="configure [llm], or pass -P khl.analysis=fast")

    @classmethod
    def wants_llm(cls, overrides: dict[str, Any] | None = None) -> bool:
        """Only the question analysis calls the LLM (`-P khl.analysis=fast` needs none)."""
        return {"analysis": cls.analysis, **(overrides or {})}["analysis"] == "llm"

    def kg_count(self, kind: str) -> int:
        """KG passages of k for a question type (half up: 7:3 of 5 is 4:1)."""
        if self.mode == "kg":
            return self.k
        if self.mode != "full":
            return 0
        share = {"knowledge": self.kg_share_knowledge, "reading": self.kg_share_reading,
                 "reasoning": self.kg_share_reasoning}[kind]
        return int(self.k * share / 10 + 0.5)

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        found = self._analyse(question, cost)
        kind = found.type if self.question_type == "auto" else self.question_type
        with cost.timed("embed"):
            texts = [question, found.main_idea, ", ".join(found.keywords) or found.main_idea]
            question_vector, idea_vector, keyword_vector = self.embedder.embed(texts)
        paragraphs = self._paragraphs(question_vector, idea_vector, keyword_vector, trace, cost) \
            if self.mode != "kg" else []
        kg = self._kg(question, question_vector, trace, cost) if self.mode in ("full", "kg") else []
        wanted_kg = self.kg_count(kind)
        taken_kg = kg[:wanted_kg]
        kept_kg = {t.chunk_id for t in taken_kg}
        ranked = [i for i in paragraphs if i.chunk_id not in kept_kg and (
            not (self.neighbours_per_seed or self.all_neighbours) or i.origin != "rst")]
        taken_paragraphs = ranked[:self.k - len(taken_kg)]
        if len(taken_kg) + len(taken_paragraphs) < self.k:  # a short side leaves its places to the other
            chosen = {i.chunk_id for i in [*taken_kg, *taken_paragraphs]}
            taken_kg += [i for i in kg if i.chunk_id not in chosen][:self.k - len(taken_kg) - len(taken_paragraphs)]
        taken_paragraphs += self._neighbours_of(taken_paragraphs, paragraphs, {i.chunk_id for i in taken_kg})
        for item in taken_kg:
            item.details["group"] = KG_BLOCK
        for item in taken_paragraphs:
            item.details["group"] = HLPG_BLOCK
        result.parameters.update(question_type=kind, analysis_method=found.method, type_reason=found.reason,
                                 keywords=found.keywords, main_idea=found.main_idea,
                                 mix={"kg": len(taken_kg), "paragraph_graph": len(taken_paragraphs)},
                                 rst_neighbours=sum(1 for i in taken_paragraphs if i.origin == "rst"))
        return [*taken_kg, *taken_paragraphs]

    # stages -----------------------------------------------------------------------------------------
    def _analyse(self, question: str, cost: Cost) -> analysis.Analysis:
        with cost.timed("analyse"):
            if self.analysis == "fast":
                return analysis.fast(question)
            reply = self.llm.structured(analysis.messages(question), analysis.QuestionAnalysis,
                                        stage=analysis.STAGE, max_tokens=self.analysis_max_tokens)
            cost.count_calls(reply.calls, reply.ok)
            if reply.ok:
                return analysis.from_llm(question, reply.value)
            log.warning("khl: question analysis failed (%s); the fast analysis is used", reply.error)
            return analysis.fast(question)

    def _neighbours_of(self, seeds: list[ContextItem], paragraphs: list[ContextItem], taken: set[str]
                       ) -> list[ContextItem]:
        """Up to `neighbours_per_seed` RST neighbours of each kept seed (all of them with `all_neighbours`),
        strongest edge first, after the seeds."""
        taken = taken | {i.chunk_id for i in seeds}
        added: list[ContextItem] = []
        for seed in seeds:
            linked = [i for i in paragraphs if i.origin == "rst" and seed.chunk_id in i.details["seeds"]
                      and i.chunk_id not in taken]
            cap = None if self.all_neighbours else self.neighbours_per_seed
            strongest = sorted(linked, key=lambda i: best_first(i.details["seeds"][seed.chunk_id], i.chunk_id))
            for item in strongest[:cap]:
                item.details["seed"] = seed.chunk_id
                item.details["weight"] = item.details["seeds"][seed.chunk_id]
                taken.add(item.chunk_id)
                added.append(item)
        return added

    def _kg(self, question: str, vector: list[float], trace: Trace, cost: Cost) -> list[ContextItem]:
        def run(name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
            return self._run(trace, name, params)

        with cost.timed("kg"):
            if self.kg_entities == "linked":
                scores = link_question(run, self.store, question, vector, entity_k=self.entities, min_similarity=0.0,
                                       strategy=self.name)
            else:
                scores = {r["id"]: float(r["score"]) for r in run("kg_entity_vector_search",
                                                                  {"k": self.entities, "embedding": vector})}
                if self.entities and not scores:
                    raise no_entities(self.name)
            best = sorted(scores.items(), key=lambda item: best_first(item[1], item[0]))[:self.entities]
            rows = run("khl_kg_chunks", {"entities": [{"id": i, "score": s} for i, s in best], "embedding": vector,
                                         "limit": self.k}) if best else []
        items = []
        for row in rows:
            trace.chunk(row["section_id"], row["chunk_id"])
            for entity_id in row["entity_ids"]:
                trace.node(entity_id)
                trace.relationship(row["chunk_id"], "MENTIONS", entity_id)
            items.append(ContextItem.from_row(row, "kg", {"entities": row["entity_ids"],
                                                          "entity_count": row["entity_count"]}))
        return items

    def _paragraphs(self, question_vector: list[float], idea_vector: list[float], keyword_vector: list[float],
                    trace: Trace, cost: Cost) -> list[ContextItem]:
        """Seeds (dual-semantic, or dense in `hlpg` mode) and their RST neighbours above tau, best first."""
        seeds: dict[str, tuple[float, str]] = {}
        with cost.timed("seeds"):
            searches = [("chunk_vector_search", question_vector, "dense")] if self.mode == "hlpg" else [
                ("chunk_keywords_search", keyword_vector, "keywords"),
                ("chunk_main_idea_search", idea_vector, "main_idea")]
            for statement, vector, origin in searches:
                for row in self._run(trace, statement, {"k": self.top_k, "embedding": vector}):
                    score = float(row["score"])
                    if row["chunk_id"] not in seeds or seeds[row["chunk_id"]][0] < score:
                        seeds[row["chunk_id"]] = (score, origin)
            if not seeds and self.mode != "hlpg":  # empty feature indexes would silently leave the KG half alone
                raise NeoweaveError("khl: no chunk has paragraph features (main idea, keywords)",
                                    hint="run `neoweave enrich rst`, or seed by the text: -P khl.mode=hlpg")
        neighbours: dict[str, tuple[float, dict[str, Any]]] = {}
        with cost.timed("rst"):
            for row in self._run(trace, "rst_neighbours", {"ids": list(seeds), "min_weight": self.tau}):
                if row["chunk_id"] in seeds:
                    continue
                score = seeds[row["seed_id"]][0] * float(row["weight"]) / 10
                found = neighbours.get(row["chunk_id"])
                linked = found[1]["seeds"] if found else {}
                linked[row["seed_id"]] = max(linked.get(row["seed_id"], 0.0), float(row["weight"]))
                if found is None or found[0] < score:
                    neighbours[row["chunk_id"]] = (score, {
                        "seed": row["seed_id"], "relation": row["relation"], "weight": row["weight"],
                        "source": row["source_id"], "target": row["target_id"], "seeds": linked})
        ranked = sorted([(c, s, o, {}) for c, (s, o) in seeds.items()]
                        + [(c, s, "rst", d) for c, (s, d) in neighbours.items()],
                        key=lambda x: best_first(x[1], x[0]))
        with cost.timed("graph"):
            rows = {r["chunk_id"]: r for r in self._run(trace, "chunk_contexts", {
                "chunk_ids": [c for c, *_ in ranked], "embedding": question_vector})}
        items = []
        for chunk_id, score, origin, details in ranked:
            if chunk_id not in rows:
                continue
            row = rows[chunk_id]
            trace.chunk(row["section_id"], chunk_id)
            if details:
                trace.relationship(details["source"], "RST", details["target"])
            items.append(ContextItem.from_row({**row, "score": score}, origin,
                                              {**details, "question_similarity": row["score"]}))
        return items
