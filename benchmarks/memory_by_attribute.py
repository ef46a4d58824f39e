"""What each attribute family of a built graph costs FalkorDB: removed one at a time, cumulatively, from a COPY
of the graph (this destroys it), with `GRAPH.MEMORY USAGE` and the server's used memory after each step.

    cp -r DATA_DIR /tmp/copy && .venv/bin/python benchmarks/memory_by_attribute.py /tmp/copy OUT.json [TYPE]

With a relationship TYPE (e.g. MENTIONS), each property of its edges is removed in turn instead, in
alphabetical order: what one property costs on every edge of that type.

The map for issue 45's "half the memory" (docs/benchmarks/indexing.md, "Where the memory goes").
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from indexing import graph_memory

import neoweave

STEPS = [
    ("MENTIONS scalar copies of the first surface form (name, type, context)",
     "MATCH ()-[m:MENTIONS]->() REMOVE m.name, m.type, m.context"),
    ("MENTIONS contexts list", "MATCH ()-[m:MENTIONS]->() REMOVE m.contexts"),
    ("MENTIONS created_at", "MATCH ()-[m:MENTIONS]->() REMOVE m.created_at"),
    ("RELATED descriptions list", "MATCH ()-[r:RELATED]->() REMOVE r.descriptions, r.description"),
    ("LINKS_TO context text", "MATCH ()-[l:LINKS_TO]->() REMOVE l.context"),
    ("LINKS_TO context_embedding", "MATCH ()-[l:LINKS_TO]->() SET l.context_embedding = null"),
    ("Entity embedding", "MATCH (e:Entity) SET e.embedding = null"),
]
out = []
if len(sys.argv) not in (3, 4):
    sys.exit(__doc__)
with neoweave.open(sys.argv[1], limits=neoweave.Limits.unbounded()) as kb:
    store = kb.store
    keys = [r["k"] for r in store.query("MATCH ()-[m:MENTIONS]->() WITH m LIMIT 1 UNWIND keys(m) AS k RETURN k")]
    print("MENTIONS keys", keys)
    keys = [r["k"] for r in store.query("MATCH ()-[m:LINKS_TO]->() WITH m LIMIT 1 UNWIND keys(m) AS k RETURN k")]
    print("LINKS_TO keys", keys)
    base = graph_memory(store)
    print(json.dumps(base)[:1500])
    out.append(("before", base))
    steps = STEPS
    if len(sys.argv) == 4:
        rel_type = sys.argv[3]
        if not rel_type.isidentifier():
            sys.exit(f"not a relationship type: {rel_type!r}")
        properties = [r["k"] for r in store.query(
            f"MATCH ()-[m:{rel_type}]->() UNWIND keys(m) AS k RETURN DISTINCT k ORDER BY k")]
        steps = [(f"{rel_type} {name}", f"MATCH ()-[m:{rel_type}]->() REMOVE m.{name}") for name in properties]
    for label, cypher in steps:
        started = time.time()
        store.query(cypher, write=True)
        usage = graph_memory(store)
        print(label, round(time.time() - started, 1), "s", usage.get("server_used_memory_mb"), flush=True)
        out.append((label, usage))
Path(sys.argv[2]).write_text(json.dumps(out, indent=1) + "\n")
