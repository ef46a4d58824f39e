"""A whole knowledge base out to open files and into an empty store of either backend: `neoweave export DIR`,
`neoweave import DIR` (docs/export.md). The way from the embedded FalkorDB to Neo4j, and a copy any tool can read.

Export lists each label's keys (in the order the store pages cheaply), sorts them, and reads nodes and their
relationships by pages of keys (an index lookup each: never a scan of the label per page, never a whole label's
properties in memory) into gzipped JSON Lines in key order (`transfer_files`), in a hidden sibling of DIR renamed
at the end, so a killed export leaves nothing at DIR. Import checks the manifest and every checksum before it
writes, refuses a store that is not empty, applies the schema, loads nodes then relationships in `UNWIND $rows`
batches and rebuilds the vector indexes once at the end. Each batch is one write unit together with the move of a
marker node (Meta {id: 'import'}), so an interrupted import, run again on the same DIR, resumes after the last
batch applied and reaches the same graph.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from tqdm import tqdm

from neoweave.errors import NeoweaveError
from neoweave.graph_schema.model import BOOKKEEPING, SCHEMA_VERSION, NodeLabel, RelType
from neoweave.kb import transfer_files as files
from neoweave.kb.files import file_entry, neoweave_version, staged_directory
from neoweave.store.base import GraphStore
from neoweave.store.values import Counts, now_iso

log = logging.getLogger(__name__)

OnBatch = Callable[[int, int], None]
"""Called after each batch with (records done, records in all): a progress hook."""


# -- export ----------------------------------------------------------------------------------------
def export_graph(store: GraphStore, dest: str | Path, *, batch_size: int | None = None, progress: bool = False,
                 on_batch: OnBatch | None = None) -> dict[str, Any]:
    """Write every node and relationship of `store` to the new directory `dest`; returns the manifest. Only reads;
    run it while nothing writes (the counts are checked against the graph's), or take a `neoweave backup`."""
    dest = Path(dest).expanduser().resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise NeoweaveError(f"{dest} exists and is not an empty directory", hint="give a new directory for the export")
    unfinished = store.run("import_progress_get")
    if unfinished:
        raise NeoweaveError(f"this store holds an unfinished import of {unfinished[0]['source']}",
                            hint="run that `neoweave import` again to finish it before exporting")
    meta = store.read_meta()
    if meta is None:
        raise NeoweaveError("nothing to export: the graph is empty", hint="run `neoweave ingest PATH` first")
    schema, size = store.schema, batch_size or store.batch_size
    counts = store.counts()
    _check_covered(store, counts)
    total = (sum(counts.nodes.get(label.name, 0) for label in schema.labels)
             + sum(counts.relationships.get(name, 0) for name in schema.relationship_names))
    started = time.monotonic()
    with staged_directory(dest, "export") as partial:
        nodes: dict[str, Any] = {}
        relationships: dict[str, Any] = {}
        with tqdm(total=total, desc="export", unit="record", disable=not progress) as bar:
            def done(count: int) -> None:
                bar.update(count)
                if on_batch is not None:
                    on_batch(bar.n, total)

            keys = {label.name: _sorted_keys(store, label, size) for label in schema.labels}
            for label in schema.labels:
                with files.record_writer(partial / files.node_file(label.name)) as out:
                    written = _export_nodes(store, label, keys[label.name], out, size, done)
                _check_count(f"{label.name} nodes", written, counts.nodes.get(label.name, 0))
                nodes[label.name] = {"file": files.node_file(label.name), "key": label.key, "count": written,
                                     "vector_properties": list(files.vector_properties(label.properties))}
            for rel_type in schema.relationship_names:
                vectors = files.rel_vectors(schema, rel_type)
                with files.record_writer(partial / files.rel_file(rel_type)) as out:
                    found = [{"start": rel.start, "end": rel.end,
                              "count": _export_relationships(store, rel, keys[rel.start], vectors, out, size, done)}
                             for rel in files.patterns(schema, rel_type)]
                written = sum(pattern["count"] for pattern in found)
                _check_count(f"{rel_type} relationships", written, counts.relationships.get(rel_type, 0))
                relationships[rel_type] = {"file": files.rel_file(rel_type), "count": written, "patterns": found,
                                           "vector_properties": list(vectors)}
        manifest = {
            "format": files.FORMAT, "format_version": files.FORMAT_VERSION, "created_at": now_iso(),
            "neoweave_version": neoweave_version(), "schema_version": meta["schema_version"],
            "embedding_model": meta["embedding_model"], "dimension": meta["dimension"],
            "source": _where(store), "seconds": round(time.monotonic() - started, 3),
            "nodes": nodes, "relationships": relationships,
            "files": {entry["file"]: file_entry(partial / entry["file"])
                      for entry in (*nodes.values(), *relationships.values())},
        }
        (partial / files.MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _sorted_keys(store: GraphStore, label: NodeLabel, size: int) -> list[str]:
    """Every key of a label, sorted by code point (the same order whichever store wrote the graph)."""
    statement = files.keys_statement(label)
    start = store.node_page_start if files.keys_by_node_order(label) else ""
    return sorted(row["key"] for rows in store.pages(statement, size, "cursor", start=start) for row in rows)


def _export_nodes(store: GraphStore, label: NodeLabel, keys: list[str], out: IO[bytes], size: int,
                  done: Callable[[int], None]) -> int:
    """Write one label's nodes, `size` keys a read; returns how many."""
    vectors, written = files.vector_properties(label.properties), 0
    for start in range(0, len(keys), size):
        page = keys[start:start + size]
        found = {row["key"]: row for row in store.run(files.node_statement("export", label), {"keys": page})}
        rows = [found[key] for key in page if key in found]  # (a node deleted meanwhile: the count check says so)
        out.writelines(files.record_line({"key": row["key"], "properties": files.compact_vectors(
            {k: v for k, v in row["properties"].items() if k not in BOOKKEEPING}, vectors)}) for row in rows)
        written += len(rows)
        done(len(rows))
    return written


def _export_relationships(store: GraphStore, rel: RelType, keys: list[str], vectors: tuple[str, ...],
                          out: IO[bytes], size: int, done: Callable[[int], None]) -> int:
    """Write one schema pattern's relationships, by pages of start keys in order; returns how many."""
    written = 0
    for start in range(0, len(keys), size):
        page = keys[start:start + size]
        lines: dict[str, list[bytes]] = {}
        for row in store.run(files.rel_statement("export", rel), {"keys": page}):
            if row["end_key"] is not None:
                lines.setdefault(row["start_key"], []).append(files.record_line({
                    "start_label": rel.start, "start": row["start_key"], "end_label": rel.end,
                    "end": row["end_key"], "properties": files.compact_vectors(row["properties"], vectors)}))
        edges = [line for key in page for line in sorted(lines.get(key, ()))]  # any store writes the same bytes
        out.writelines(edges)
        written += len(edges)
        done(len(edges))
    return written


def _check_covered(store: GraphStore, counts: Counts) -> None:
    """Every label and type the graph holds is one the schema declares: an export leaves nothing out silently."""
    schema = store.schema
    labels = sorted(set(counts.nodes) - set(schema.all_label_names))
    types = sorted(set(counts.relationships) - set(schema.relationship_names))
    if labels or types:
        raise NeoweaveError("the graph holds elements outside neoweave's schema, which an export would leave out: "
                            + ", ".join([*(f"label {name} ({counts.nodes[name]})" for name in labels),
                                         *(f"type {name} ({counts.relationships[name]})" for name in types)]),
                            hint="delete them (`neoweave cypher --write`), or back the store up instead")


def _check_count(what: str, written: int, held: int) -> None:
    if written != held:
        raise NeoweaveError(f"exported {written} {what}, but the graph holds {held}: something wrote to it during "
                            "the export, or some lack a key or connect other labels than the schema's",
                            hint="export again while nothing writes (`neoweave backup` takes a consistent snapshot "
                            "while writes go on)")


# -- import ----------------------------------------------------------------------------------------
def import_graph(store: GraphStore, src: str | Path, *, batch_size: int | None = None, progress: bool = False,
                 on_batch: OnBatch | None = None) -> dict[str, Any]:
    """Load the export `src` into `store`, which must be empty or hold an unfinished import of this same export
    (then the import resumes); returns what was loaded. Nothing is written unless every check passes."""
    src = Path(src).expanduser().resolve()
    manifest, fingerprint = files.read_manifest(src)
    files.verify_files(src, manifest)
    _check_compatible(store, manifest, src)
    where = _describe(store)
    unfinished = store.run("import_progress_get")
    if unfinished and unfinished[0]["fingerprint"] != fingerprint:
        raise NeoweaveError(f"{where} holds an unfinished import of another export ({unfinished[0]['source']})",
                            hint="finish that one (run its `neoweave import` again), or import into an empty store")
    if not unfinished:
        held = {label: count for label, count in store.counts().nodes.items() if count}
        if held:
            listed = ", ".join(f"{label} {count}" for label, count in sorted(held.items()))
            raise NeoweaveError(f"{where} is not empty ({listed}): an import loads into an empty store only",
                                hint="use another data directory (--data-dir) or graph, or an empty Neo4j database")
    store.run("import_progress_start", {"fingerprint": fingerprint, "source": str(src), "now": now_iso()}, write=True)
    position = int(unfinished[0]["records_loaded"]) if unfinished else -1
    if position < 0:  # once: applying it again would rewrite the Meta node once that is loaded
        store.apply_schema(manifest["embedding_model"], int(manifest["dimension"]))
        store.run("import_progress_set", {"fingerprint": fingerprint, "position": -1, "loaded": 0, "now": now_iso()},
                  write=True)
        position = 0
    started, size = time.monotonic(), batch_size or store.batch_size
    total = sum(entry["count"] for entry in (*manifest["nodes"].values(), *manifest["relationships"].values()))
    with tqdm(total=total, initial=position, desc="import", unit="record", disable=not progress) as bar:
        loaded = 0  # records before the current file, in the manifest's order
        for kind, name, entry in _load_order(manifest):
            if loaded + entry["count"] > position:
                for statements, count in _batches(store, kind, name, src / entry["file"], max(position - loaded, 0),
                                                  size):
                    before = max(position, loaded)
                    with store.unit() as unit:
                        for statement, rows in statements:
                            unit.run(statement, {"rows": rows, **({"position": before} if kind == "rel" else {})})
                        unit.run("import_progress_set", {"fingerprint": fingerprint, "position": before,
                                                         "loaded": before + count, "now": now_iso()})
                    position = before + count
                    bar.update(count)
                    if on_batch is not None:
                        on_batch(position, total)
            loaded += entry["count"]
    rebuilt = store.refresh_vector_indexes(tuple({index.label for index in store.schema.vector_indexes}))
    if store.backend == "neo4j":
        store.run("await_indexes", write=True)  # Neo4j populates its indexes in the background
    _check_loaded(store, manifest, src)
    if int(manifest["schema_version"]) < SCHEMA_VERSION:
        store.upgrade_schema()  # an export of an older graph: what its schema lacked (`GraphStore.apply_schema`)
    store.run("import_progress_clear", write=True)
    resumed_at = max(int(unfinished[0]["records_loaded"]), 0) if unfinished else None
    return {"source": str(src), "store": where, "resumed_at": resumed_at, "records": total,
            "seconds": round(time.monotonic() - started, 3),
            "nodes": {label: entry["count"] for label, entry in manifest["nodes"].items()},
            "relationships": {name: entry["count"] for name, entry in manifest["relationships"].items()},
            "embedding_model": manifest["embedding_model"], "dimension": manifest["dimension"],
            "vector_indexes_rebuilt": rebuilt}


def _load_order(manifest: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Nodes before relationships, each in the manifest's order (the order the marker's position counts in)."""
    for label, entry in manifest["nodes"].items():
        yield "node", label, entry
    for rel_type, entry in manifest["relationships"].items():
        yield "rel", rel_type, entry


def _batches(store: GraphStore, kind: str, name: str, path: Path, skip: int, size: int
             ) -> Iterator[tuple[list[tuple[str, list[dict[str, Any]]]], int]]:
    """(statements with their rows, records) per batch of a records file, after its first `skip` records: at most
    `size` records and about `BATCH_BYTES` of them; a type with several start labels gets a statement for each."""
    schema = store.schema
    if kind == "node":
        label = schema.label(name)
        vectors, statement = files.vector_properties(label.properties), files.node_statement("import", label)
    else:
        vectors = files.rel_vectors(schema, name)
        by_ends = {(rel.start, rel.end): files.rel_statement("import", rel) for rel in files.patterns(schema, name)}
    grouped: dict[str, list[dict[str, Any]]] = {}
    count = used = 0
    for number, record, length in files.read_records(path, skip):
        if kind == "node":
            files.check_key(path, number, "key", record.get("key"))
            grouped.setdefault(statement, []).append(files.load_row(record, vectors, key=record["key"]))
        else:
            ends = (record.get("start_label"), record.get("end_label"))
            if ends not in by_ends:
                raise NeoweaveError(f"{path}:{number}: a {name} relationship from {ends[0]} to {ends[1]} is not in "
                                    "neoweave's schema")
            files.check_key(path, number, "start", record.get("start"))
            files.check_key(path, number, "end", record.get("end"))
            grouped.setdefault(by_ends[ends], []).append(
                files.load_row(record, vectors, start=record["start"], end=record["end"]))
        count, used = count + 1, used + length
        if count >= size or used >= files.BATCH_BYTES:
            yield list(grouped.items()), count
            grouped, count, used = {}, 0, 0
    if count:
        yield list(grouped.items()), count


def _check_compatible(store: GraphStore, manifest: dict[str, Any], src: Path) -> None:
    """The export's schema is this neoweave's (or older): every label, type and pair of ends is known here."""
    schema = store.schema
    if int(manifest["schema_version"]) > SCHEMA_VERSION:
        raise NeoweaveError(f"{src} holds a graph of schema version {manifest['schema_version']}, newer than this "
                            f"neoweave's ({SCHEMA_VERSION})", hint="upgrade neoweave")
    unknown = [f"label {name}" for name in manifest["nodes"] if name not in {label.name for label in schema.labels}]
    for rel_type, entry in manifest["relationships"].items():
        known = {(rel.start, rel.end) for rel in files.patterns(schema, rel_type)}
        unknown += [f"{pattern['start']}-[:{rel_type}]->{pattern['end']}" for pattern in entry.get("patterns", [])
                    if (pattern["start"], pattern["end"]) not in known]
    if unknown:
        raise NeoweaveError(f"{src / files.MANIFEST} names what this neoweave's schema lacks: {', '.join(unknown)}",
                            hint="upgrade neoweave")


def _check_loaded(store: GraphStore, manifest: dict[str, Any], src: Path) -> None:
    """The store holds exactly the manifest's counts (the marker node aside) before the import is called done."""
    counts = store.counts()
    found = {**counts.nodes, "Meta": counts.nodes.get("Meta", 0) - 1}
    wrong = [f"{label}: {found.get(label, 0)} of {entry['count']}" for label, entry in manifest["nodes"].items()
             if found.get(label, 0) != entry["count"]]
    wrong += [f"{name}: {counts.relationships.get(name, 0)} of {entry['count']}"
              for name, entry in manifest["relationships"].items()
              if counts.relationships.get(name, 0) != entry["count"]]
    if wrong:
        raise NeoweaveError(f"the store does not hold what {src} holds ({'; '.join(wrong)}): something else wrote to "
                            "it during the import, or a relationship's end was missing",
                            hint="import again into a new, empty store")


# -- shared ----------------------------------------------------------------------------------------
def _where(store: GraphStore) -> dict[str, Any]:
    health = store.health()
    return {key: health[key] for key in ("backend", "address", "graph", "database", "data_dir") if key in health}


def _describe(store: GraphStore) -> str:
    where = _where(store)
    if where["backend"] == "neo4j":
        return f"Neo4j database '{where.get('database')}' at {where['address']}"
    return f"FalkorDB graph '{where.get('graph')}'" + (f" in {where['data_dir']}" if "data_dir" in where else "")
