"""Each enrich step that declares what it writes (`EnrichStep.writes`) changes nothing else: run on a real graph,
the difference of snapshots before and after is covered by the declaration (the knowledge base relies on it to
keep ppr's walk index across a step instead of rebuilding it)."""

from __future__ import annotations

import pytest

from neoweave.audit.snapshot import changed, snapshot
from neoweave.enrich import make_step, run
from neoweave.enrich.base import RUNNER_WRITES
from neoweave.graph_schema.footprint import check, overlaps
from neoweave.query.walk_build import WALK_READS
from neoweave.registry import ENRICH_STEPS
from tests.conftest import COMMUNITY_CORPUS, ingest_records


def test_every_declared_footprint_names_the_schema():
    declared = {name: ENRICH_STEPS.get(name).writes for name in ENRICH_STEPS.names()}
    assert {name for name, writes in declared.items() if writes is not None} >= {"communities", "tags", "rst"}
    for name, writes in declared.items():
        if writes is not None:
            check(writes, f"enrich {name}")
    check(RUNNER_WRITES, "the enrich runner")
    check(WALK_READS, "the walk index")


def test_footprints_overlap_by_kind_and_property():
    assert overlaps({"Chunk"}, {"Chunk.embedding"})  # chunks created or deleted
    assert overlaps({"Chunk.embedding"}, {"Chunk"}) and overlaps({"RELATED.weight"}, {"RELATED.weight"})
    assert not overlaps({"Chunk.main_idea"}, {"Chunk.embedding", "Chunk.id"})
    assert not overlaps({"Community", "IN_COMMUNITY"}, {"Entity.embedding", "RELATED"})


@pytest.mark.parametrize("step", ["communities", "tags", "rst"])
def test_a_step_changes_only_what_it_declares(falkordb_store, embedder, tmp_path, step):
    store = falkordb_store
    ingest_records(store, embedder, tmp_path / "corpus.jsonl", COMMUNITY_CORPUS)
    run("kg", store, embedder=embedder, progress=False, n_process=1)
    before = snapshot(store)
    chosen = make_step(step)
    run(chosen, store, embedder=embedder, progress=False)
    difference = changed(before, snapshot(store))
    assert difference, f"enrich {step} changed nothing: the check cannot fail"
    assert difference <= chosen.writes | RUNNER_WRITES, sorted(difference - chosen.writes - RUNNER_WRITES)
    assert not overlaps(chosen.writes | RUNNER_WRITES, WALK_READS)  # so the walk index is kept across it
