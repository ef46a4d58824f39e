"""Run an enrich step over the chunks it has not processed: batches of extract -> one write unit each."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tqdm import tqdm

from neoweave.enrich.base import ChunkRow, EnrichReport, EnrichStep, StepContext, phase, timed
from neoweave.enrich.finish_record import FinishRecord, finish_fingerprint
from neoweave.errors import NeoweaveError
from neoweave.protocols import LLMClient, TextEmbedder
from neoweave.registry import ENRICH_STEPS
from neoweave.store.base import GraphStore
from neoweave.store.values import WriteSpan

log = logging.getLogger(__name__)


def make_step(name: str, **parameters: Any) -> EnrichStep:
    """The step `name` with its defaults overridden by `parameters` (unknown names are an error)."""
    cls = ENRICH_STEPS.get(name)
    known = {name for name, f in cls.__dataclass_fields__.items() if f.init}
    unknown = set(parameters) - known
    if unknown:
        raise NeoweaveError(f"enrich step '{name}' has no parameter {sorted(unknown)}; its parameters: "
                            f"{sorted(known)}")
    step = cls(**parameters)
    step.validate()
    return step


def run(step: str | EnrichStep, store: GraphStore, *, embedder: TextEmbedder | None = None,
        llm: LLMClient | None = None, limit: int | None = None,
        doc_ids: list[str] | None = None, chunk_ids: list[str] | None = None, progress: bool = True,
        finish: bool = True, **parameters: Any) -> EnrichReport:
    """Process every chunk the step has not seen with its current signature, then its graph-wide phases.

    `limit` caps the chunks processed in this run; `doc_ids` / `chunk_ids` restrict the run to those.
    """
    if isinstance(step, str):
        step = make_step(step, **parameters)
    elif parameters:
        raise NeoweaveError("pass parameters either in the step object or as keywords, not both")
    if limit is not None and limit < 0:
        raise NeoweaveError(f"limit must be >= 0, got {limit}")
    with store.writing() as span:  # the record of finished phases needs the stamp the outermost span ends with
        return _run(step, store, span, embedder=embedder, llm=llm, limit=limit, doc_ids=doc_ids,
                    chunk_ids=chunk_ids, progress=progress, finish=finish)


def _run(step: EnrichStep, store: GraphStore, span: WriteSpan, *, embedder: TextEmbedder | None,
         llm: LLMClient | None, limit: int | None, doc_ids: list[str] | None, chunk_ids: list[str] | None,
         progress: bool, finish: bool) -> EnrichReport:
    stamp_at_start = store.stamp()
    if created := store.upgrade_schema():
        log.info("created %s (the graph was built by an older neoweave)", ", ".join(created))
    ctx = StepContext(store, embedder, llm, progress)
    signature = step.signature(ctx)
    report = EnrichReport(step.name, step.method, signature)
    started = time.perf_counter()
    if step.graph_wide:
        pending = []
    elif chunk_ids is not None:
        pending = list(dict.fromkeys(chunk_ids))
    else:
        rows = store.run("enrich_pending_chunks", {"signature": signature, "doc_ids": list(doc_ids or []),
                                                   "limit": limit if limit is not None else 2**31 - 1})
        pending = [row["id"] for row in rows]
    if limit is not None:
        pending = pending[:limit]
    log.info("enrich %s (%s): %d chunks to process", step.name, signature, len(pending))
    bar = tqdm(total=len(pending), desc=f"enrich {step.name} ({step.method})", unit="chunk",
               disable=not progress or not pending)
    batches = [pending[start:start + step.chunks_per_unit] for start in range(0, len(pending), step.chunks_per_unit)]

    def extract(ids: list[str]) -> tuple[list[ChunkRow], Any, float]:
        chunks = [ChunkRow(r["id"], r["text"] or "", r["section_id"], r["doc_id"], int(r["order"] or 0))
                  for r in store.run("chunks_by_ids", {"ids": ids})]
        began = time.perf_counter()
        return chunks, step.extract(chunks, ctx, report), time.perf_counter() - began

    try:
        with contextlib.closing(_extracted(batches, extract, step.prefetch)) as extracted_batches:
            for chunks, extracted, seconds in extracted_batches:
                report.extract_seconds += seconds
                with timed(report, "write_seconds"), store.unit() as unit:
                    step.forget(unit, [c.id for c in chunks])
                    step.write(unit, extracted, ctx, report)
                    by_chunk = {getattr(item, "chunk_id", None): item for item in extracted}
                    unit.run("mark_chunks_enriched", {"rows": [
                        {"id": c.id, "prefix": step.prefix,
                         "signature": step.chunk_signature(signature, by_chunk.get(c.id))}
                        for c in chunks]})
                report.chunks += len(chunks)
                report.batches += 1
                bar.update(len(chunks))
    finally:
        step.close()
    bar.close()
    record, fingerprint = FinishRecord(store, step.name), finish_fingerprint(step, signature, ctx)
    if finish and report.chunks == 0 and record.matches(stamp_at_start, fingerprint) \
            and store.stamp() == stamp_at_start:
        report.finish_skipped = True  # the graph is as the last completed phases left it
        log.info("enrich %s: nothing changed since its graph-wide phases last ran; skipped", step.name)
    elif finish:
        with timed(report, "finish_seconds"):
            step.finish(ctx, report)
    if touched := step.touched_vector_labels(report):
        with phase(report, "vector_index_refresh"):
            store.refresh_vector_indexes(touched)
    if finish and not report.finish_skipped and not report.failures:
        span.ended.append(lambda ended: record.save(_final_stamp(store, ended, stamp_at_start), fingerprint))
    report.seconds = time.perf_counter() - started
    return report


def _final_stamp(store: GraphStore, span: WriteSpan, at_start: str | None) -> str | None:
    """The graph's stamp once the outermost write span around a run has ended, when it is the run's own (None
    when another writer's span began or ended meanwhile: its changes were not seen by the phases)."""
    if span.after is not None:
        return None if span.others else span.after
    now = store.stamp()  # the span wrote nothing: the stamp is the one the run started with, or another's
    return now if now == at_start else None


def _extracted(batches: list[list[str]], extract: Callable[[list[str]], Any], prefetch: bool) -> Iterator[Any]:
    """extract(batch) for each batch, in order. With `prefetch`, the next batch is extracted in a background
    thread while the caller writes this one (the two wait on different processes); units are still written
    one at a time, in order. On an error or interrupt the background extraction is abandoned, not awaited."""
    if not prefetch or len(batches) < 2:
        yield from map(extract, batches)
        return
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="enrich-extract")
    try:
        upcoming = pool.submit(extract, batches[0])
        for following in [*batches[1:], None]:
            current = upcoming.result()
            if following is not None:
                upcoming = pool.submit(extract, following)
            yield current
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
