"""Provenance maintenance: forgetting what enrich steps derived from chunks, by chunk id.

Every per-chunk derivation (mentions, relations, descriptions, inferred links, tags, RST edges) records the
chunk it was read from. Before a step rewrites chunks, and before ingest rewrites or deletes them, those
derivations are removed with the named statements listed here. They live in the store layer because removing
them only queues statements on a `WriteUnit`: ingest can forget a document's derivations without importing
enrich (a higher layer) or loading every step.
"""

from __future__ import annotations

from neoweave.store.base import WriteUnit

CHUNK_DERIVATIONS: dict[str, tuple[str, ...]] = {
    # kg: first the communities of the entities the chunks mention are marked (their reports become older than
    # their members: `community_mark_changed_chunks`), then relation evidence, inferred links, descriptions and
    # the mentions themselves (MENTIONS: one edge per chunk and entity, so deleting the chunk's edges forgets
    # every surface form) are removed, entities left without a mention with them
    "kg": ("community_mark_changed_chunks", "kg_forget_relations", "kg_forget_empty_relations",
           "kg_forget_inferred_links", "kg_forget_descriptions", "kg_forget_mentions"),
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


def forget_chunks(unit: WriteUnit, chunk_ids: list[str]) -> None:
    """Queue the removal of what every step derived from chunks (ingest calls this before deleting them)."""
    if not chunk_ids:
        return
    for step in sorted(CHUNK_DERIVATIONS):
        forget_step_chunks(unit, step, chunk_ids)
