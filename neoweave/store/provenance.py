"""Provenance maintenance: forgetting what enrich steps derived from chunks, by chunk id.

Every per-chunk derivation (mentions, relations, descriptions, inferred links, tags, RST edges) records the
chunk it was read from. Before a step rewrites chunks, and before ingest rewrites or deletes them, those
derivations are removed with the named statements listed here. They live in the store layer because removing
them only queues statements on a `WriteUnit`: ingest can forget a document's derivations without importing
enrich (a higher layer) or loading every step.
"""

from __future__ import annotations

from neoweave.store.base import GraphStore, WriteUnit

CHUNK_DERIVATIONS: dict[str, tuple[str, ...]] = {
    # kg: first the entities the chunks mention are recorded as changed (`enrich.kg_changes`) and their
    # communities marked (their reports become older than their members: `community_mark_changed_chunks`),
    # then relation evidence, inferred links, descriptions and the mentions themselves (MENTIONS: one edge per
    # chunk and entity, so deleting the chunk's edges forgets every surface form) are removed, entities left
    # without a mention with them
    "kg": ("kg_changes_mark_chunks", "community_mark_changed_chunks", "kg_forget_relations",
           "kg_forget_empty_relations", "kg_forget_inferred_links", "kg_forget_descriptions", "kg_forget_mentions"),
    "rst": ("rst_forget_chunks",),
    "tags": ("tags_forget_chunks",),
}
"""Enrich step name -> the statements (each taking `$chunk_ids`) that remove what it derived from chunks, in the
order they run. A step not listed derives nothing per chunk (communities works on the graph as a whole); a
plug-in step that does adds its own entry, so ingest forgets its derivations too."""


AFTER_DELETION: tuple[str, ...] = ("tags_delete_unused",)
"""Statements (without parameters) that remove what a deletion of chunks or documents left without purpose:
run after the DETACH DELETE, when the edges that held them are gone."""


def forget_unused(unit: WriteUnit) -> None:
    """Queue the removal of nodes left without purpose by deleted chunks or documents (unused tags)."""
    for statement in AFTER_DELETION:
        unit.run(statement, {})


def forget_step_chunks(unit: WriteUnit, step: str, chunk_ids: list[str]) -> None:
    """Queue the statements removing what the step `step` derived from chunks (before a rewrite or deletion)."""
    for statement in CHUNK_DERIVATIONS.get(step, ()):
        unit.run(statement, {"chunk_ids": chunk_ids})


RECOUNTED_AFTER_FORGETTING: dict[str, tuple[str, str]] = {
    "kg": ("kg_forgotten_entities", "kg_refresh_entities_of"),
}
"""Enrich step name -> (a statement returning, from `$chunk_ids`, the `id`s of the nodes whose stored counts
forgetting those chunks changes; one writing those counts again from `$ids`). Forgetting outside the step
(ingest deleting or rewriting documents) recounts them at once, so no count outlives its source; the step's own
runs recount its whole graph when they finish."""
RECOUNT_BATCH = 2000
"""Ids per recount statement."""


def counted_by(store: GraphStore, chunk_ids: list[str]) -> dict[str, list[str]]:
    """Per step, the ids of the nodes whose counts forgetting `chunk_ids` will change: read before the unit
    that forgets them, handed to `forget_chunks`."""
    if not chunk_ids:
        return {}
    return {step: [row["id"] for row in store.run(reader, {"chunk_ids": chunk_ids})]
            for step, (reader, _) in RECOUNTED_AFTER_FORGETTING.items()}


def forget_chunks(unit: WriteUnit, chunk_ids: list[str], counted: dict[str, list[str]] | None = None) -> None:
    """Queue the removal of what every step derived from chunks (ingest calls this before deleting them), then
    the recount of the nodes `counted` (`counted_by`, read before) whose counts that changes."""
    if not chunk_ids:
        return
    for step in sorted(CHUNK_DERIVATIONS):
        forget_step_chunks(unit, step, chunk_ids)
    for step, ids in sorted((counted or {}).items()):
        for start in range(0, len(ids), RECOUNT_BATCH):
            unit.run(RECOUNTED_AFTER_FORGETTING[step][1], {"ids": ids[start:start + RECOUNT_BATCH]})
