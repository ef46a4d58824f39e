"""Merges that no longer hold are dissolved by extracting their chunks again one group of `chunks_per_unit` at a
time (a reader served meanwhile waits for one group, not for all), and the graph ends as a rebuild's, also when
the command stops between two of those units."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from neoweave.audit.snapshot import diff, snapshot
from neoweave.kb.rebuild_check import graph_opener

COMPUTERS = {"id": "computers", "title": "Computers", "text": "\n\n".join([
    "International Business Machines built mainframes for banks. IBM sold them worldwide.",
    "IBM opened a laboratory in Zurich in 1956. International Business Machines hired physicists there.",
    "In 1981 IBM released the personal computer. Its success surprised IBM.",
    "IBM later sold that division to Lenovo. Lenovo kept the ThinkPad name."])}
BROADCASTING = {"id": "broadcasting", "title": "Broadcasting",  # a second name with the initials IBM
                "text": "Indiana Bell Mobile announced a merger with Verizon. IBM also owns a newspaper."}
CHUNKING = {"chunk_size": 90, "chunk_overlap": 0}


class StoppedHere(Exception):
    pass


class StopsAfterUnits(logging.Handler):
    """Counts the write units sent once resolution said it dissolves merges, and stops the command before
    unit number `stop_before` (as a process killed between two units)."""

    def __init__(self, stop_before: int | None) -> None:
        super().__init__()
        self.stop_before, self.dissolving, self.units = stop_before, False, 0
        self.chunks_marked: list[int] = []  # per unit sent while dissolving: the chunks it marks extracted

    def emit(self, record: logging.LogRecord) -> None:
        if "no longer hold" in record.getMessage():
            self.dissolving = True

    def opening_unit(self) -> None:
        if self.dissolving:
            self.units += 1
            if self.stop_before is not None and self.units == self.stop_before:
                raise StoppedHere(f"stopped before unit {self.units}")

    @contextlib.contextmanager
    def around(self, unit_of: Callable[[], Any]) -> Iterator[Any]:
        self.opening_unit()
        with unit_of() as unit:
            yield unit
        if self.dissolving:
            self.chunks_marked.append(sum(len(params["rows"]) for text, params in unit.queued
                                          if "SET c.enriched" in text))  # mark_chunks_enriched


@pytest.fixture
def opener(falkordb_server, embedder, tmp_path):
    return graph_opener(falkordb_server, embedder, tmp_path / ".neoweave")


def _history(kb, watch: StopsAfterUnits) -> dict[str, int]:
    kb.ingest([COMPUTERS], **CHUNKING)
    first = kb.enrich("kg", batch_size=1)
    assert first.counters.get("merged_acronym") == 1  # IBM -> International Business Machines
    kb.ingest([BROADCASTING], **CHUNKING)
    logger = logging.getLogger("neoweave.enrich.resolution_derived")
    logger.addHandler(watch)
    original = kb.store.unit
    kb.store.unit = lambda: watch.around(original)
    try:
        try:
            return kb.enrich("kg", batch_size=1).counters
        except StoppedHere:
            kb.store.unit = original
            again = kb.enrich("kg", batch_size=1).counters
            return {**again, "stopped": 1}
    finally:
        kb.store.unit = original
        logger.removeHandler(watch)


@pytest.mark.parametrize("stop_before", [None, 1, 2, 4],
                         ids=["whole", "chunks-marked", "after-the-records", "mid-groups"])
def test_dissolved_merges_are_extracted_again_in_units_and_end_as_a_rebuild(opener, caplog, stop_before):
    caplog.set_level(logging.INFO, logger="neoweave.enrich.resolution_derived")
    watch = StopsAfterUnits(stop_before)
    with opener("history") as kb:
        counters = _history(kb, watch)
        incremental = snapshot(kb.store)
        aliases = kb.cypher("MATCH (e:Entity) WHERE e.name = 'International Business Machines' RETURN e.aliases AS a")
    if stop_before is None:
        assert counters.get("merges_dissolved") == 1 and counters.get("chunks_extracted_again") == 5
        # the 5 chunks marked to extract again (statements of their own), the records' unit, then a unit per chunk
        # (batch size 1) rewrites one
        assert watch.chunks_marked[:6] == [0, 1, 1, 1, 1, 1], watch.chunks_marked
    else:
        assert counters.get("stopped") == 1 and watch.units == stop_before
    assert aliases == [{"a": []}]  # IBM is no longer one of its names
    with opener("rebuild") as kb:
        kb.ingest([COMPUTERS], **CHUNKING)
        kb.ingest([BROADCASTING], **CHUNKING)
        kb.enrich("kg", batch_size=1)
        rebuilt = snapshot(kb.store)
    assert diff(incremental, rebuilt) == []

