"""The `kg` enrich step: entities and relations from chunks, resolution, homes, inferred links.

Per batch of chunks: extract (fast: spaCy; llm: the gateway's structured output), redirect entity ids that
resolution merged earlier, and write entities, MENTIONS (one edge per chunk and entity, its surface forms as
parallel lists) and RELATED evidence with the chunks' signature in one unit. Then graph-wide phases, each
resumable by itself: the one-time fold of an older graph's MENTIONS (one edge per surface form) into that shape,
title mentions (the corpus's titles found in chunk text), entity descriptions and mention counts, entity
embeddings (names; LLM entities with their description), resolution (recorded, undoable merges), homes
(DESCRIBED_BY from titles and API anchors) and inferred links for every section marked pending.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

from tqdm import tqdm

from neoweave.enrich import homes, resolution, resolution_derived, resolution_state, title_mentions
from neoweave.enrich.base import (
    EXTRACT_AGAIN_CHUNKS_PER_UNIT,
    ChunkRow,
    EnrichReport,
    EnrichStep,
    StepContext,
    phase,
)
from neoweave.enrich.extract_llm import LLMExtractor
from neoweave.enrich.finish_record import fingerprint_of
from neoweave.enrich.kg_changes import ChangeRecord, load_title_digests, save_title_digests
from neoweave.enrich.kg_writes import compact_mentions, compact_relations, fold_mentions, queue_writes
from neoweave.errors import NeoweaveError
from neoweave.ingest.link_contexts import embed_all_link_contexts
from neoweave.nlp.extract_fast import FastExtractor
from neoweave.nlp.extraction import ChunkExtraction, redirect
from neoweave.nlp.names import DEFAULT_TYPES
from neoweave.registry import register_step
from neoweave.store.base import WriteUnit
from neoweave.store.provenance import CHUNK_DERIVATIONS, RECOUNT_BATCH
from neoweave.store.values import now_iso

ENTITY_EMBED_CHARS = 160
ENTITY_ID_PAGE = 10_000
KEEPING_ENTITIES = {"kg_forget_mentions": "kg_forget_chunk_mentions"}
"""Forgetting a step's chunks before extracting them again in the same unit: entities stay until the unit's end."""


@register_step
@dataclass
class KnowledgeGraphStep(EnrichStep):
    name: ClassVar[str] = "kg"
    vector_labels: ClassVar[tuple[str, ...]] = ("Chunk", "Entity")
    version: ClassVar[int] = 2  # 2: keys drop a leading 'the' (chunks extracted by version 1 are redone)

    noun_phrases: bool = True
    """fast: keep noun phrases as concept entities (FastGraphRAG)."""
    code_names: bool = True
    """fast: keep dotted / called code names (`asyncio.create_task()`) as code entities."""
    title_mentions: bool = True
    """Look for the corpus's document and section titles in chunk text (a gazetteer: mentions the extractor
    missed of entities that have a home)."""
    resolve: bool = True
    """Merge duplicate entities after extraction (recorded; `neoweave entities unmerge` undoes one)."""
    embedding_threshold: float = 0.93
    """Resolution: name embeddings at least this similar (same type group, shared word) are merged."""
    unembedded_types: tuple[str, ...] = ("concept", "date", "time")
    """fast: entity types left without a name vector. Noun-phrase concepts are over half the entities of a
    technical corpus (43k of 78k in the Python docs) and most of the embedding time; resolution never merges
    concepts or dates by embedding, and questions still reach them through the full-text index over names
    (HotpotQA-100 `kg` and `larag` recall unchanged without them). LLM entities are always embedded."""
    max_inferred_links: int = 30
    """Inferred links kept per section (first mentions first)."""
    scoped: bool = True
    """Graph-wide phases read only the entities changed since they last completed (`kg_changes`: recorded by
    neoweave's writes); false reads every entity (after writes made outside neoweave)."""
    spacy_batch_size: int = 64
    n_process: int = 2
    """fast: spaCy worker processes (kept for the run; 1.6x the chunks/s of one on 2 cores, while this process
    writes the previous batch). A script calling `enrich.run` needs the `if __name__ == "__main__":` guard."""
    entity_types: tuple[str, ...] = DEFAULT_TYPES
    """llm: the entity types the model may use (the thesis let it choose; a fixed list keeps types comparable
    and becomes part of the JSON grammar)."""
    llm_max_tokens: int = 512
    """llm: completion cap per chunk; a small model that keeps listing is cut here and its JSON closed."""
    llm_grammar: bool = False
    """llm: also send the JSON schema as a grammar (always parses; ~5x slower sampling in llama-cpp-python)."""
    _llm_extractor: LLMExtractor | None = field(default=None, init=False, repr=False, compare=False)
    _not_redirected: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def validate(self) -> None:
        super().validate()
        if not self.entity_types:
            raise NeoweaveError("enrich kg: entity_types must name at least one type")
        if not 0 < self.embedding_threshold <= 1:
            raise NeoweaveError(f"enrich kg: embedding_threshold must be in (0, 1], got {self.embedding_threshold}")
        self._at_least(1, "n_process")
        self._at_least(0, "max_inferred_links")

    @cached_property
    def fast_extractor(self) -> FastExtractor:
        return FastExtractor(noun_phrases=self.noun_phrases, code_names=self.code_names,
                             batch_size=self.spacy_batch_size, n_process=self.n_process)

    def llm_extractor(self, ctx: StepContext) -> LLMExtractor:
        if self._llm_extractor is None or self._llm_extractor.llm is not ctx.llm:
            self._llm_extractor = LLMExtractor(ctx.llm, self.entity_types, self.llm_max_tokens, self.llm_grammar,
                                               fallback=self.fast_extractor)
        return self._llm_extractor

    def close(self) -> None:
        if "fast_extractor" in self.__dict__:
            self.fast_extractor.close()

    def model_name(self, ctx: StepContext) -> str:
        if self.method == "llm":
            return self.llm_extractor(ctx).model_name
        flags = ("np" if self.noun_phrases else "") + ("code" if self.code_names else "")
        return f"{self.fast_extractor.model_name}/{flags}"

    # extraction ------------------------------------------------------------------------------------
    def extract(self, chunks: list[ChunkRow], ctx: StepContext, report: EnrichReport) -> list[ChunkExtraction]:
        if self.method == "llm":
            results = self.llm_extractor(ctx).extract([(c.id, c.text) for c in chunks])
            for result in results:
                report.llm_calls += 1
                report.prompt_tokens += result.prompt_tokens
                report.completion_tokens += result.completion_tokens
                report.count("llm_dropped", result.dropped)
        else:
            results = self.fast_extractor.extract((c.id, c.text) for c in chunks)
        survivors = resolution.final_survivors(ctx.store, sorted({m.id for r in results for m in r.mentions}))
        redirect(results, {absorbed: survivor for absorbed, survivor in survivors.items()
                           if absorbed not in self._not_redirected})
        return results

    def touched_vector_labels(self, report: EnrichReport) -> tuple[str, ...]:
        """Chunks when extracted; entities whenever mentions, merges, embeddings or their counts changed them
        (a run with nothing to extract still recounts: after a document was deleted, or on an older graph)."""
        if report.chunks or report.counters.get("chunks_title_scanned"):
            return self.vector_labels
        entity_writes = ("title_mentions", "entities_embedded", "merges", "entities_refreshed", "merges_dissolved")
        return ("Entity",) if any(report.counters.get(name) for name in entity_writes) else ()

    def chunk_signature(self, signature: str, extracted: ChunkExtraction | None) -> str:
        """A chunk the LLM failed on (fast fallback written) is marked, so the next llm run asks again (the
        failed answer was not cached; a transient failure recovers, a persistent one keeps the fallback)."""
        return f"{signature}+fallback" if extracted is not None and extracted.error else signature

    # writing ---------------------------------------------------------------------------------------
    def write(self, unit: WriteUnit, extracted: list[ChunkExtraction], ctx: StepContext,
              report: EnrichReport) -> None:
        for result in extracted:
            if result.error:
                report.count("llm_fallbacks")
                report.failures.append(f"{result.chunk_id}: {result.error}")
        mentions, relations = queue_writes(unit, extracted, source=f"{self.prefix}{self.version}:{self.method}",
                                           now=now_iso())
        chunk_ids = [r.chunk_id for r in extracted]
        unit.run("kg_mark_sections_pending", {"chunk_ids": chunk_ids})
        unit.run("kg_mark_chunks_titles_scanned", {"chunk_ids": chunk_ids, "scanned": False})
        report.count("mentions", mentions)
        report.count("relation_evidence", relations)

    def extract_again(self, ctx: StepContext, report: EnrichReport, chunk_ids: list[str], atoms: set[str],
                      record_ids: list[str]) -> None:
        """Extract chunks again: resolution dissolving merges that no longer hold (the chunks mentioning their
        survivors, with `atoms` left as themselves and the merge records `record_ids` removed), and title mentions
        to redo (the chunks come back unscanned). The chunks are first marked to be extracted again, then one unit
        removes the records, then each group of `EXTRACT_AGAIN_CHUNKS_PER_UNIT` chunks (at most `chunks_per_unit`)
        is rewritten in its own unit, so a reader served meanwhile waits for one group, not for thousands of
        chunks. A crash between them leaves the chunks not yet rewritten pending, extracted as new chunks by the
        next run (with the merges, or after the records' unit without them). An entity mentioned again keeps its
        node (its community membership, home and embedding stay, so a community search still finds its report and
        notes it stale); the survivors lose the aliases their merges gave, which the merges still made give back."""
        store = ctx.store
        chunks = [ChunkRow(r["id"], r["text"] or "", r["section_id"], r["doc_id"], int(r["order"] or 0))
                  for r in store.run("chunks_by_ids", {"ids": chunk_ids})]
        self._not_redirected = frozenset(atoms)
        try:
            extracted = self.extract(chunks, ctx, report)
        finally:
            self._not_redirected = frozenset()
            self.close()  # the run's extraction closed its workers already; many chunks here started them again
        signature = self.signature(ctx)
        by_chunk = {item.chunk_id: item for item in extracted}
        size = min(self.chunks_per_unit, EXTRACT_AGAIN_CHUNKS_PER_UNIT)
        with store.writing():
            store.write_batches("mark_chunks_enriched", (  # each chunk written re-inserts its vector: in parts
                {"id": c.id, "prefix": self.prefix, "signature": f"{self.prefix}extracting-again"} for c in chunks),
                batch_size=size)
            with store.unit() as unit:
                unit.run("entity_merge_delete", {"ids": record_ids})
                unit.run("entity_clear_derived_aliases", {"ids": sorted(atoms)})
            for start in range(0, len(chunks), size):
                group = chunks[start:start + size]
                ids = [c.id for c in group]
                mentioned = [row["id"] for row in store.run("kg_forgotten_entities", {"chunk_ids": ids})]
                with store.unit() as unit:
                    for statement in CHUNK_DERIVATIONS[self.name]:
                        unit.run(KEEPING_ENTITIES.get(statement, statement), {"chunk_ids": ids})
                    self.write(unit, [by_chunk[c.id] for c in group if c.id in by_chunk], ctx, report)
                    unit.run("kg_delete_unmentioned", {"entity_ids": mentioned})
                    unit.run("mark_chunks_enriched", {"rows": [
                        {"id": c.id, "prefix": self.prefix,
                         "signature": self.chunk_signature(signature, by_chunk.get(c.id))} for c in group]})
        report.count("chunks_extracted_again", len(chunks))

    # graph-wide phases -----------------------------------------------------------------------------
    FINISH_PARAMETERS: ClassVar[tuple[str, ...]] = ("title_mentions", "resolve", "embedding_threshold",
                                                    "unembedded_types", "max_inferred_links")
    """The parameters the graph-wide phases depend on (extraction's do not change what they do)."""

    def finish_fingerprint(self, ctx: StepContext) -> str:
        """What the phases' result depends on besides the graph, whatever method extracted the chunks."""
        return fingerprint_of({"step": f"{self.prefix}{self.version}",
                               "parameters": {name: getattr(self, name) for name in self.FINISH_PARAMETERS}}, ctx)

    def finish(self, ctx: StepContext, report: EnrichReport) -> None:
        store = ctx.store
        changes = ChangeRecord(store, self.finish_fingerprint(ctx), scoped=self.scoped)
        report.counters["finish_scoped"] = int(changes.scoped)
        if not changes.scoped:  # migrations of older graphs (one scan each when there is nothing to do); a scoped
            with phase(report, "fold_mentions"):  # run follows a completed one of this code: nothing is left
                if folded := fold_mentions(store):
                    report.count("mention_edges_folded", folded)
                if compacted := compact_mentions(store):
                    report.count("mention_edges_compacted", compacted)
                if compacted := compact_relations(store):
                    report.count("relation_edges_compacted", compacted)
        with phase(report, "title_index"):
            index = homes.title_index(store)
            earlier_titles = load_title_digests(store, changes.finished) if changes.scoped else None
        def scan_again(chunk_ids: list[str]) -> None:
            self.extract_again(ctx, report, chunk_ids, set(), [])

        with phase(report, "title_mentions"):
            # mentions of titles that went: their chunks extracted and scanned again, as a rebuild scans them
            stale = title_mentions.chunks_naming_changed_titles(store, index, earlier_titles,
                                                                enabled=self.title_mentions)
            if stale:
                report.count("chunks_naming_changed_titles", len(stale))
                scan_again(stale)
            if self.title_mentions:
                title_mentions.update_title_mentions(store, report, index, prefix=self.prefix,
                                                     source=f"{self.prefix}{self.version}:titles",
                                                     progress=ctx.progress, scan_again=scan_again)
        with phase(report, "entity_embeddings"):
            scope = changes.refresh()
            if not scope.everything:
                report.counters["entities_in_scope"] = len(scope.entity_ids)
            report.count("entities_refreshed", refresh_entities(store, scope.entity_ids))
            embed_entities(ctx, report, self.unembedded_types)
        if self.resolve:
            def redo(chunk_ids: list[str], atoms: set[str], record_ids: list[str]) -> frozenset[str] | None:
                self.extract_again(ctx, report, chunk_ids, atoms, record_ids)
                if self.title_mentions:
                    title_mentions.update_title_mentions(store, report, index, prefix=self.prefix,
                                                         source=f"{self.prefix}{self.version}:titles",
                                                         progress=ctx.progress, scan_again=scan_again)
                again = changes.refresh()
                report.count("entities_refreshed", refresh_entities(store, again.entity_ids))
                embed_entities(ctx, report, self.unembedded_types)
                return again.entity_ids

            with phase(report, "resolution"):
                merged = resolution_derived.resolve(ctx, report, embedding_threshold=self.embedding_threshold,
                                                    changed=scope.entity_ids, unembedded_types=self.unembedded_types,
                                                    redo=redo)
                if merged or report.counters.get("merges_dissolved"):  # resolution's writes: without one, the
                    scope = changes.refresh()  # refresh above still holds
                    report.count("entities_refreshed", refresh_entities(store, scope.entity_ids))
            if merged:
                with phase(report, "entity_embeddings"):
                    embed_entities(ctx, report, self.unembedded_types)
            with phase(report, "resolution"):  # the entities it wrote and refreshed, saved for the next run
                resolution_state.save_state(store)
        with phase(report, "homes"):
            keys = None if earlier_titles is None or scope.everything else index.changed_keys(earlier_titles)
            homes.update_homes(store, report, index, entity_ids=None if keys is None else scope.entity_ids,
                               keys=keys)
        with phase(report, "inferred_links"):
            homes.update_inferred_links(store, report, max_links=self.max_inferred_links, progress=ctx.progress,
                                        embedder=ctx.embedder)
        if ctx.embedder is not None:
            with phase(report, "link_contexts"):  # retrieval ranks inferred links by them and only reads
                report.count("link_contexts_embedded",
                             embed_all_link_contexts(store, ctx.embedder, progress=ctx.progress))
        save_title_digests(store, changes.close(), index.digests())
        for counter, statement in (("entities", "kg_count_entities"), ("relations", "kg_count_relations"),
                                   ("homes", "kg_count_homes")):  # not `store.counts()`: it reads every node and edge
            report.counters[counter] = int(store.run(statement)[0]["count"])


def refresh_entities(store, entity_ids: frozenset[str] | None = None) -> int:
    """Mention and relation counts, missing descriptions, names and merge aliases after mentions or relations
    changed (see the statements' files), of every entity or (`entity_ids`) of those: the number of entity writes
    (each one re-inserts the entity's vector). Every entity is refreshed a part at a time, so that a query served
    meanwhile waits for one part, not for the whole graph. Descriptions and aliases are looked for among all
    entities: only those missing or out of date are read (a few ms)."""
    if entity_ids is None:
        ids = [row["key"] for page in store.pages("kg_entity_ids_page", ENTITY_ID_PAGE) for row in page]
    else:
        ids = sorted(entity_ids)
    parts = [{"ids": ids[start:start + RECOUNT_BATCH]} for start in range(0, len(ids), RECOUNT_BATCH)]
    results = [store.run("kg_refresh_entities_of", part, write=True) for part in parts]
    results.append(store.run("kg_refill_descriptions", write=True))
    results += [store.run("kg_refresh_names_of", part, write=True) for part in parts]
    return sum(int(rows[0]["updated"] or 0) for rows in results if rows) + resolution.refresh_aliases(store)


def entity_text(method: str | None, name: str, description: str | None) -> str:
    """What an entity's embedding encodes: the name, plus the description when an LLM wrote one.

    The fast method's "description" is just the sentence of a first mention: embedding it made vectors
    about that sentence rather than the entity, and cost ~3.5x the time of names alone (the bulk of
    `enrich kg`). Names alone link questions to entities as well, and resolution compares names anyway.
    """
    if method != "llm" or not description:
        return name
    return f"{name}: {description}"[:ENTITY_EMBED_CHARS]


def embed_entities(ctx: StepContext, report: EnrichReport, unembedded_types: tuple[str, ...] = (), *,
                   batch: int = 512) -> None:
    """Embed every entity without an embedding (see `entity_text`; resumable: done ones are skipped), except
    fast-method entities of `unembedded_types`."""
    if ctx.embedder is None:
        raise NeoweaveError("enrich kg needs the embedding model for entity embeddings")
    total = None
    if ctx.progress:  # a count is one scan of the entities: only when a bar shows it
        counted = ctx.store.run("kg_count_entities_missing_embedding", {"unembedded_types": list(unembedded_types)})
        total = int(counted[0]["missing"] or 0) if counted else None
    bar = tqdm(total=total, desc="entity embeddings", unit="entity", disable=not ctx.progress)
    while True:
        rows = ctx.store.run("kg_entities_missing_embedding",
                             {"limit": batch, "unembedded_types": list(unembedded_types)})
        if not rows:
            break
        texts = [entity_text(r["method"], r["name"], r["description"]) for r in rows]
        vectors = ctx.embedder.embed(texts)
        ctx.store.run("set_entity_embeddings", {"rows": [{"id": r["id"], "embedding": v}
                                                         for r, v in zip(rows, vectors, strict=True)]}, write=True)
        report.count("entities_embedded", len(rows))
        bar.update(len(rows))
    bar.close()
