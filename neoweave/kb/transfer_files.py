"""The export format of `neoweave export` / `neoweave import` (docs/export.md): file and statement names derived from
graph_schema, records in gzipped JSON Lines, the manifest and its checks.

An export is a directory holding `manifest.json`, `nodes/<Label>.jsonl.gz` (one `{"key", "properties"}` per node)
and `relationships/<TYPE>.jsonl.gz` (one `{"start_label", "start", "end_label", "end", "properties"}` per
relationship), vectors as float lists. Kept apart from the export and import loops so each stays small.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from neoweave.errors import NeoweaveError
from neoweave.graph_schema.model import GraphSchema, NodeLabel, RelType
from neoweave.kb.files import verify_checksums

FORMAT = "neoweave-export"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
BATCH_BYTES = 4 << 20
"""Records per load batch stop at this many bytes of JSON too: a batch of chunks with four vectors each is ~17 kB a
chunk, and FalkorDB receives parameters as query text."""


def vector_properties(properties: Sequence[str]) -> tuple[str, ...]:
    """The vector-valued ones among a label's or type's properties: `embedding` and `*_embedding` (every vector
    index's property and LINKS_TO.context_embedding follow the rule; tests/test_transfer.py checks it)."""
    return tuple(name for name in properties if name == "embedding" or name.endswith("_embedding"))


def rel_vectors(schema: GraphSchema, rel_type: str) -> tuple[str, ...]:
    """The vector properties of a relationship type (over every start/end pair it has in the schema)."""
    names: list[str] = []
    for rel in patterns(schema, rel_type):
        names += [name for name in vector_properties(rel.properties) if name not in names]
    return tuple(names)


def patterns(schema: GraphSchema, rel_type: str) -> list[RelType]:
    """The schema's (start, type, end) entries of one type (TAGGED has two: from chunks and from documents)."""
    return [rel for rel in schema.relationships if rel.name == rel_type]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def node_statement(action: str, label: NodeLabel) -> str:
    """`export_node_chunk`, `import_node_entity_merge`: one statement per label, since Cypher cannot take a label
    as a parameter (the files are in neoweave/cypher/)."""
    return f"{action}_node_{_snake(label.name)}"


def keys_statement(label: NodeLabel) -> str:
    """`export_keys_chunk`: one page of a label's keys, for the export to sort before it reads by key."""
    return f"export_keys_{_snake(label.name)}"


def keys_by_node_order(label: NodeLabel) -> bool:
    """Whether `keys_statement` pages with node_after (from `GraphStore.node_page_start`, a cursor of the store's
    choosing: Neo4j's is the node's `id`) or, for a label keyed otherwise (tags, by name; few), in key order
    from ''."""
    return label.key == "id"


def rel_statement(action: str, rel: RelType) -> str:
    """`export_rel_chunk_tagged_tag`: one statement per (start label, type, end label) of the schema."""
    return f"{action}_rel_{_snake(rel.start)}_{rel.name.lower()}_{_snake(rel.end)}"


def node_file(label: str) -> str:
    return f"nodes/{label}.jsonl.gz"


def rel_file(rel_type: str) -> str:
    return f"relationships/{rel_type}.jsonl.gz"


# -- writing ---------------------------------------------------------------------------------------
@contextlib.contextmanager
def record_writer(path: Path) -> Iterator[IO[bytes]]:
    """A gzip file written reproducibly (no name or time in its header: the same graph gives the same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as out:
            yield out
        raw.flush()
        os.fsync(raw.fileno())


def record_line(record: Mapping[str, Any]) -> bytes:
    """One JSON line, keys sorted: the same graph exported from either store gives the same bytes."""
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n").encode("utf-8")


def compact_vectors(properties: dict[str, Any], vectors: Sequence[str]) -> dict[str, Any]:
    """Vectors in 9 significant digits: exact for float32 (what both stores keep), half the text of repr()."""
    for name in vectors:
        value = properties.get(name)
        if isinstance(value, list):
            properties[name] = [float(f"{x:.9g}") for x in value]
    return properties


# -- reading ---------------------------------------------------------------------------------------
def read_manifest(src: Path) -> tuple[dict[str, Any], str]:
    """The export's manifest and the sha256 of its bytes (what an import's resume marker records), refused with an
    error naming the file when it is missing, unreadable or of another format."""
    path = src / MANIFEST
    if not src.is_dir():
        raise NeoweaveError(f"no export at {src}: not a directory")
    try:
        raw = path.read_bytes()
        manifest = json.loads(raw)
    except FileNotFoundError as exc:
        raise NeoweaveError(f"{path} is missing: {src} is not a neoweave export (or an unfinished one)") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NeoweaveError(f"{path} is corrupt: {exc}") from exc
    required = ("format", "format_version", "schema_version", "embedding_model", "dimension", "nodes",
                "relationships", "files")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise NeoweaveError(f"{path} is not the manifest of a neoweave export")
    if any(key not in manifest for key in required):
        raise NeoweaveError(f"{path} is corrupt: it lacks {', '.join(k for k in required if k not in manifest)}")
    if manifest["format_version"] != FORMAT_VERSION:
        raise NeoweaveError(f"{path}: export format version {manifest['format_version']} is not one this neoweave "
                            f"reads (version {FORMAT_VERSION})", hint="import it with the neoweave that exported it, "
                            "or upgrade neoweave")
    return manifest, hashlib.sha256(raw).hexdigest()


def verify_files(src: Path, manifest: dict[str, Any]) -> None:
    """Every data file the manifest names is listed with a checksum, present, and has its size and sha256."""
    named = [entry["file"] for entry in (*manifest["nodes"].values(), *manifest["relationships"].values())]
    for name in named:
        if name not in manifest["files"]:
            raise NeoweaveError(f"{src / MANIFEST} is corrupt: {name} has no checksum")
    verify_checksums(src, manifest["files"], src / MANIFEST, "export", "nothing was written to the store; export again")


def read_records(path: Path, skip: int = 0) -> Iterator[tuple[int, dict[str, Any], int]]:
    """(line number, record, its size in bytes) of a records file, after the first `skip` records."""
    try:
        with gzip.open(path, "rb") as lines:
            for number, line in enumerate(lines, 1):
                if number <= skip:
                    continue
                try:
                    record = json.loads(line)
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise NeoweaveError(f"{path}:{number} is not a JSON record: {exc}") from exc
                if not isinstance(record, dict) or not isinstance(record.get("properties"), dict):
                    raise NeoweaveError(f"{path}:{number} is not a record with properties")
                yield number, record, len(line)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise NeoweaveError(f"{path} cannot be read: {exc}") from exc


def load_row(record: dict[str, Any], vectors: Sequence[str], **ends: Any) -> dict[str, Any]:
    """A record as an import statement's row: properties without vectors (lists of numbers made one type, as Neo4j
    stores only homogeneous lists), the vectors apart (each statement stores them as the backend's vector type)."""
    properties = {name: _homogeneous(value) for name, value in record["properties"].items() if name not in vectors}
    return {**ends, "properties": properties, "vectors": {name: record["properties"].get(name) for name in vectors}}


def _homogeneous(value: Any) -> Any:
    if (isinstance(value, list) and any(type(v) is float for v in value)
            and all(type(v) in (int, float) for v in value)):
        return [float(v) for v in value]
    return value


def check_key(path: Path, number: int, what: str, value: Any) -> None:
    """Keys must be non-empty text without surrounding whitespace (FalkorDB cannot hold such a key: FalkorDB#1340)."""
    if not isinstance(value, str) or not value or value != value.strip():
        raise NeoweaveError(f"{path}:{number}: {what} {value!r} is not a key neoweave can store")
