"""Hostile input and interrupted runs: reported, skipped, nothing stored is damaged, re-runs complete."""

import codecs
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import stdlib_corpus

from neoweave.errors import NeoweaveError
from neoweave.ingest.chunking import Chunker, ChunkingOptions
from neoweave.ingest.documents import Document
from neoweave.ingest.sources import SourceOptions, iter_documents
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_store import FalkorDBStore

NOISE = bytes((i * 37 + 11) % 255 + 1 for i in range(4000))  # no NUL byte, yet text in no encoding
NOISE_BAD_BYTE = 4  # the first byte UTF-8 rejects
PAGE = ("<!DOCTYPE html><html><head><title>{title}</title></head><body><div role='main'>"
        "<section id='{anchor}'><h1>{title}</h1><p>{body} <a href='{href}'>{link}</a>.</p></section>"
        "</div></body></html>")


def _cli(data_dir: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    return subprocess.run([sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture
def data_dir(tmp_path):
    path = tmp_path / "store"
    yield path
    EmbeddedFalkorDB(path).stop()


def _store(data_dir: Path) -> FalkorDBStore:
    return FalkorDBStore(server=EmbeddedFalkorDB(data_dir))


def _hostile_corpus(root: Path) -> None:
    root.mkdir()
    (root / "good.html").write_text(PAGE.format(title="Good page", anchor="good", body="Solid content here",
                                                href="loop1.html", link="the loop"))
    (root / "loop1.html").write_text(PAGE.format(title="Loop one", anchor="one", body="First of a loop",
                                                 href="loop2.html#two", link="loop two"))
    (root / "loop2.html").write_text(PAGE.format(title="Loop two", anchor="two", body="Second of a loop",
                                                 href="loop1.html#one", link="loop one"))
    (root / "binary.html").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (root / "empty.txt").write_bytes(b"")
    (root / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))  # read: encodings are detected
    (root / "noise.txt").write_bytes(NOISE)
    (root / "truncated.html").write_text("<html><head><title>T</title></head><body><div role='main'>"
                                         "<section id='t'><h1>T</h1><p>This page was cut off in the mid")
    (root / "huge.txt").write_text("word " * 40_000)
    (root / "records.jsonl").write_text(
        '{"id": "r1", "title": "One", "text": "First record."}\n'
        '["not", "an", "object"]\n'
        '{"id": "r1", "title": "One again", "text": "Duplicate id."}\n'
        '{"id": "r2", "title": "Two", "text": "Second record."}\n'
        '{"id": "r3", "title": "Three", "text": "Broken\n'
        '42\n')


def test_hostile_inputs_are_reported_and_skipped(tmp_path, data_dir):
    # a clean document already in the store must survive the hostile run untouched
    keep = tmp_path / "keep.jsonl"
    keep.write_text('{"id": "keep", "title": "Keep", "text": "Already stored and must survive."}\n')
    assert _cli(data_dir, "ingest", str(keep), "--no-progress").returncode == 0

    corpus = tmp_path / "hostile"
    _hostile_corpus(corpus)
    result = _cli(data_dir, "ingest", str(corpus), "--json", "--max-file-mb", "0.1")
    assert result.returncode == 3, result.stderr  # 3: the run finished but skipped inputs
    report = json.loads(result.stdout)
    skipped = "\n".join(report["skipped"])
    assert f"{corpus / 'binary.html'}: binary file" in skipped
    assert f"{corpus / 'empty.txt'}: empty file" in skipped
    assert f"{corpus / 'noise.txt'}: not text in any encoding found: invalid UTF-8 at byte {NOISE_BAD_BYTE}" in skipped
    assert f"{corpus / 'truncated.html'}: truncated HTML" in skipped
    assert f"{corpus / 'huge.txt'}: file of 200000 bytes exceeds the size limit" in skipped
    assert f"{corpus / 'records.jsonl'}:2: record is a JSON list, not an object" in skipped
    assert f"duplicate document id 'r1' (first seen in {corpus / 'records.jsonl'}:1)" in skipped
    assert f"{corpus / 'records.jsonl'}:5: not valid JSON" in skipped
    assert f"{corpus / 'records.jsonl'}:6: record is a JSON int, not an object" in skipped
    assert len(report["skipped"]) == 9
    assert report["documents_new"] == 6  # good, loop1, loop2, latin1, r1, r2
    assert report["links_resolved"] == 3 and report["links_unresolved"] == 0

    store = _store(data_dir)
    assert store.counts().nodes["Document"] == 7
    kept = store.query("MATCH (d:Document {id: 'keep'})-[:HAS_SECTION]->(:Section)-[:HAS_CHUNK]->(c:Chunk) "
                       "RETURN c.text AS text")
    assert kept == [{"text": "Already stored and must survive."}]
    loop = store.query("MATCH (a:Section {anchor: 'one'})-[:LINKS_TO]->(b:Section)-[:LINKS_TO]->(a) "
                       "RETURN b.anchor AS b")
    assert loop == [{"b": "two"}]
    store.close()


def _expected_chunks(corpus: Path) -> dict[str, int]:
    chunker = Chunker(ChunkingOptions(1200, 100))
    settings = {fmt: {} for fmt in ("html", "text", "markdown", "record")}
    return {d.id: len(chunker.chunk(d).chunks)
            for d in iter_documents(corpus, SourceOptions(), settings) if isinstance(d, Document)}


def test_a_killed_ingest_leaves_no_half_document_and_reruns_to_completion(tmp_path, data_dir):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(stdlib_corpus(300))
    expected = _expected_chunks(corpus)
    assert len(expected) == 300

    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    proc = subprocess.Popen([sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), "ingest",
                             str(corpus), "--no-progress"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    store = _store(data_dir)
    deadline = time.monotonic() + 300
    written = 0
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        if data_dir.joinpath("falkordb.sock").exists():
            try:
                written = store.counts().nodes.get("Document", 0)
            except Exception:
                continue
        if written:
            break
    assert proc.poll() is None, "ingest finished before it could be interrupted"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    # whatever is visible is whole: every stored document has exactly its chunks
    partial = {r["id"]: r["n"] for r in store.query(
        "MATCH (d:Document) OPTIONAL MATCH (d)-[:HAS_SECTION]->(:Section)-[:HAS_CHUNK]->(c:Chunk) "
        "RETURN d.id AS id, count(c) AS n")}
    assert 0 < len(partial) < 300
    assert all(partial[doc_id] == expected[doc_id] for doc_id in partial)

    rerun = _cli(data_dir, "ingest", str(corpus), "--json")
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["documents_unchanged"] == len(partial)
    assert report["documents_new"] == 300 - len(partial)
    final = {r["id"]: r["n"] for r in store.query(
        "MATCH (d:Document) OPTIONAL MATCH (d)-[:HAS_SECTION]->(:Section)-[:HAS_CHUNK]->(c:Chunk) "
        "RETURN d.id AS id, count(c) AS n")}
    assert final == expected
    counts = store.counts()
    assert counts.nodes["Chunk"] == sum(expected.values()) and counts.nodes["Section"] == 300
    orphans = store.query("MATCH (c:Chunk) WHERE NOT ()-[:HAS_CHUNK]->(c) RETURN count(c) AS n")
    assert orphans == [{"n": 0}]
    store.close()


def test_a_killed_enrich_resumes_without_duplicates(tmp_path, data_dir):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(stdlib_corpus(60))
    assert _cli(data_dir, "ingest", str(corpus)).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    proc = subprocess.Popen([sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), "enrich", "kg",
                             "--batch-size", "8", "--no-progress"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    store = _store(data_dir)
    signed = "MATCH (c:Chunk) WHERE any(s IN coalesce(c.enriched, []) WHERE s STARTS WITH 'kg@') RETURN count(c) AS n"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and not store.query(signed)[0]["n"]:
        time.sleep(0.05)
    assert proc.poll() is None, "enrich finished before it could be interrupted"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    total = store.counts().nodes["Chunk"]
    done = store.query(signed)[0]["n"]
    assert 0 < done < total
    # a unit is whole: no chunk holds mentions without the signature written with them
    unsigned = store.query("MATCH (c:Chunk)-[:MENTIONS]->() WHERE NOT any(s IN coalesce(c.enriched, []) "
                           "WHERE s STARTS WITH 'kg@') RETURN count(DISTINCT c) AS n")
    assert unsigned == [{"n": 0}]

    rerun = _cli(data_dir, "enrich", "kg", "--json")
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["chunks"] == total - done
    assert store.query(signed)[0]["n"] == total
    dupes = store.query("MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) WITH c, e, m.origin_id AS o, count(*) AS n "
                        "WHERE n > 1 RETURN count(*) AS n")
    assert dupes == [{"n": 0}]
    store.close()


RUSSIAN = "Москва — столица России, крупнейший по численности населения город страны. " * 4
ENCODED = {  # file -> (its bytes, the encoding the Document records, a phrase of its text read back)
    "utf8.txt": ("Crème brûlée and a naïve café.".encode(), "utf-8", "Crème brûlée"),
    "bom.md": (codecs.BOM_UTF8 + "# Déjà vu\n\nUn café crème.".encode(), "utf-8-sig", "Un café crème"),
    "utf16.txt": (codecs.BOM_UTF16_LE + "Grüße aus München.".encode("utf-16-le"), "utf-16-le", "Grüße aus München"),
    "latin1.txt": ("caf\xe9 cr\xe8me".encode("latin-1"), "cp1252", "café crème"),
    "quotes.md": ("He said \u201chello\u201d \u2014 it\u2019s 5\u20ac.".encode("cp1252"), "cp1252",
                  "\u201chello\u201d \u2014 it\u2019s 5\u20ac"),
    "russian.txt": (RUSSIAN.encode("cp1251"), "cp1251", "Москва — столица России"),
    "declared.html": ('<html><head><meta charset="iso-8859-15"><title>Pr\xe9sentation</title></head><body>'
                      '<p>Le co\xfbt est de 5 \u20ac.</p></body></html>'.encode("iso-8859-15"), "iso8859-15",
                      "Le coût est de 5 €"),
    "japanese.html": ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
                      "<title>日本</title></head><body><p>日本語のページです。</p></body></html>"
                      .encode("shift_jis"), "shift_jis", "日本語のページです"),
    "bom.json": (codecs.BOM_UTF8 + '{"id": "j1", "text": "Ein Bär."}'.encode(), None, "Ein Bär."),
    "utf16.json": ('{"id": "j2", "text": "Ein Kälbchen."}'.encode("utf-16"), None, "Ein Kälbchen."),
    "bom.jsonl": (codecs.BOM_UTF8 + '{"id": "j3", "text": "Ein Äffchen."}\n'.encode(), None, "Ein Äffchen."),
}


def test_text_in_any_common_encoding_is_read_with_its_encoding_recorded(kb, tmp_path):
    corpus = tmp_path / "encodings"
    corpus.mkdir()
    for name, (raw, _, _) in ENCODED.items():
        (corpus / name).write_bytes(raw)
    (corpus / "noise.md").write_bytes(NOISE)
    (corpus / "cp1252.json").write_bytes('{"id": "j4", "text": "Caf\xe9"}'.encode("cp1252"))
    (corpus / "utf16.jsonl").write_bytes('{"id": "j5", "text": "x"}\n'.encode("utf-16"))

    report = kb.ingest(corpus)
    skipped = sorted(str(item) for item in report.skipped)
    assert skipped == [
        f"{corpus / 'cp1252.json'}: invalid UTF-8 at byte 25 (JSON is read as UTF-8, its standard encoding; it "
        "reads as cp1252: convert it, e.g. `iconv -f cp1252 -t utf-8`)",
        f"{corpus / 'noise.md'}: not text in any encoding found: invalid UTF-8 at byte {NOISE_BAD_BYTE}, and no "
        "declared or detected encoding reads it",
        f"{corpus / 'utf16.jsonl'}: JSON Lines are read as UTF-8 and this file is UTF-16-LE (its byte order mark): "
        "convert it, e.g. `iconv -f utf-16 -t utf-8`",
    ]
    assert report.documents_new == len(ENCODED)
    rows = kb.store.query("MATCH (d:Document)-[:HAS_SECTION]->(:Section)-[:HAS_CHUNK]->(c:Chunk) "
                          "RETURN d.path AS path, d.encoding AS encoding, c.text AS text")
    read = {Path(row["path"]).name: (row["encoding"], row["text"]) for row in rows}
    for name, (_, encoding, phrase) in ENCODED.items():
        assert read[name][0] == encoding, name
        assert phrase in read[name][1], (name, read[name][1])

    again = kb.ingest(corpus)  # hashes are over the bytes: nothing is read twice
    assert (again.documents_new, again.documents_changed) == (0, 0)
    assert again.documents_unchanged == len(ENCODED)


def test_a_symlink_loop_is_named_as_one_and_skipped_inside_a_folder(kb, tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "gone")
    for call, verb in ((kb.ingest, "ingest"), (kb.sync, "sync")):
        with pytest.raises(NeoweaveError, match=f"{verb} path is a symlink loop: {re.escape(str(loop))} "):
            call(loop)
        with pytest.raises(NeoweaveError, match=f"{verb} path is a symlink to {re.escape(str(tmp_path / 'gone'))}, "
                                                f"which does not exist: {re.escape(str(dangling))}"):
            call(dangling)
    with pytest.raises(NeoweaveError, match=f"ingest path not found: {re.escape(str(tmp_path / 'nothing'))}$"):
        kb.ingest(tmp_path / "nothing")

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nA note that is really here.")
    (folder / "a.md").symlink_to("b.md")
    (folder / "b.md").symlink_to("a.md")
    (folder / "gone.md").symlink_to("nowhere.md")
    (folder / "again").symlink_to(".")  # a folder loop: not followed, so nothing is read twice
    report = kb.ingest(folder)
    assert sorted(str(item) for item in report.skipped) == [
        f"{folder / 'a.md'}: a symlink loop (its links lead back to themselves, never to a file)",
        f"{folder / 'b.md'}: a symlink loop (its links lead back to themselves, never to a file)",
        f"{folder / 'gone.md'}: a symlink to nowhere.md, which does not exist",
    ]
    assert report.documents_new == 1
    assert kb.store.counts().nodes["Document"] == 1
