"""PDF and DOCX ingest: files made here (a hand-written PDF with pypdf's outline and links on top, a DOCX from
python-docx), parsed by the real parsers and ingested into a real FalkorDB graph."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import docx
import pytest
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from pypdf import PdfReader, PdfWriter
from pypdf.annotations import Link
from pypdf.generic import Fit

from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.ingest.documents import Document, Skipped
from neoweave.ingest.sources import iter_documents

_SETTINGS = {fmt: {} for fmt in ("html", "text", "markdown", "record", "pdf", "docx")}
_PAGES = [
    [(18, 740, "Introduction"), (11, 720, "Neoweave reads PDF files into sections."),
     (11, 705, "See the storage chapter for details."),
     (14, 660, "Background"), (11, 640, "Graphs hold documents."), (11, 625, "Host | Kind | Retention"),
     (11, 610, "wombat-db | koala | 14 days")],
    [(18, 740, "Storage"), (11, 720, "FalkorDB keeps the graph on disk."), (11, 700, "Visit example.org for more.")],
]


def _text_pdf(pages: list[list[tuple[float, float, str]]]) -> bytes:
    """A minimal valid PDF: Helvetica text lines (size, y, text) at x=72, byte offsets computed for the xref."""
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"]
    for index, lines in enumerate(pages):
        escaped = [(size, y, line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)"))
                   for size, y, line in lines]
        stream = "".join(f"BT /F1 {size} Tf 72 {y} Td ({line}) Tj ET\n" for size, y, line in escaped).encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
                       f" /Contents {5 + 2 * index} 0 R >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _written(writer: PdfWriter) -> bytes:
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _manual_pdf(*, password: str | None = None) -> bytes:
    """Two pages with a nested outline (one entry at a line in body type: no font-size heading), a link to the
    storage chapter and a link to a web page."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(_text_pdf(_PAGES))))
    intro = writer.add_outline_item(title="Introduction", page_number=0, fit=Fit.xyz(top=760))
    writer.add_outline_item(title="Background", page_number=0, parent=intro, fit=Fit.xyz(top=675))
    storage = writer.add_outline_item(title="Storage", page_number=1, fit=Fit.xyz(top=760))
    writer.add_outline_item(title="Disk layout", page_number=1, parent=storage, fit=Fit.xyz(top=728))
    writer.add_annotation(0, Link(rect=(72, 700, 300, 716), target_page_index=1, fit=Fit.xyz(top=760)))
    writer.add_annotation(1, Link(rect=(72, 696, 300, 712), url="https://example.org/more"))
    if password is not None:
        writer.encrypt(user_password=password, owner_password="owner", algorithm="AES-256")
    return _written(writer)


def _hyperlink(paragraph, text: str, *, url: str | None = None, anchor: str | None = None) -> None:
    link = OxmlElement("w:hyperlink")
    if url:
        link.set(qn("r:id"), paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True))
    if anchor:
        link.set(qn("w:anchor"), anchor)
    run, words = OxmlElement("w:r"), OxmlElement("w:t")
    words.text = text
    run.append(words)
    link.append(run)
    paragraph._p.append(link)


def _bookmark(paragraph, name: str) -> None:
    start, end = OxmlElement("w:bookmarkStart"), OxmlElement("w:bookmarkEnd")
    start.set(qn("w:id"), "7")
    start.set(qn("w:name"), name)
    end.set(qn("w:id"), "7")
    paragraph._p.insert(0, start)
    paragraph._p.append(end)


def _handbook_docx(path: Path) -> Path:
    document = docx.Document()
    document.core_properties.title = "Operations handbook"
    document.add_paragraph("Handbook", style="Title")
    document.add_paragraph("Who runs what.")
    document.add_heading("Backups", level=1)
    paragraph = document.add_paragraph("Nightly backups run at two. See ")
    _hyperlink(paragraph, "restore steps", anchor="restore")
    paragraph.add_run(" and ")
    _hyperlink(paragraph, "the vendor site", url="https://example.org/vendor")
    paragraph.add_run(".")
    table = document.add_table(rows=2, cols=3)
    for row, values in enumerate([("Host", "Kind", "Retention"), ("quokka-db", "wallaby", "30 days")]):
        for column, value in enumerate(values):
            table.cell(row, column).text = value
    _bookmark(document.add_heading("Restore", level=2), "restore")
    document.add_paragraph("Restore from the latest snapshot.")
    document.save(path)
    return path


def _parse(path: Path) -> list[Document | Skipped]:
    return list(iter_documents(path, SourceOptions(), _SETTINGS))


def test_pdf_outline_gives_nested_sections_with_pages_and_links(tmp_path):
    path = tmp_path / "manual.pdf"
    path.write_bytes(_manual_pdf())
    [doc] = _parse(path)
    url = path.as_uri()
    assert doc.format == "pdf" and doc.title == "Introduction" and doc.metadata == {"page_count": 2}
    assert [(s.title, s.level, s.anchor, s.pages) for s in doc.sections] == [
        ("Introduction", 1, "introduction", (1, 1)), ("Background", 2, "background", (1, 1)),
        ("Storage", 1, "storage", (2, 2)), ("Disk layout", 2, "disk-layout", (2, 2))]
    intro, background, storage, layout = doc.sections
    assert storage.text == "Storage" and layout.text.startswith("FalkorDB keeps the graph on disk.")
    assert intro.url == f"{url}#page=1" and storage.url == f"{url}#page=2"
    assert intro.anchors == ["page=1"] and storage.anchors == ["page=2"]  # `manual.pdf#page=2` resolves
    assert background.text == "Background\nGraphs hold documents.\nHost | Kind | Retention\nwombat-db | koala | 14 days"
    [internal] = intro.links
    assert (internal.url, internal.internal) == (f"{url}#storage", True)
    assert internal.text == "See the storage chapter for details."
    assert internal.context.startswith("Neoweave reads PDF files into sections. See the storage")
    [external] = layout.links
    assert (external.url, external.internal, external.text) == ("https://example.org/more", False,
                                                                "Visit example.org for more.")


def test_pdf_without_outline_sections_by_font_size_else_by_page(tmp_path):
    (tmp_path / "headings.pdf").write_bytes(_text_pdf(_PAGES))
    [doc] = _parse(tmp_path / "headings.pdf")
    assert [(s.title, s.level, s.pages) for s in doc.sections] == [
        ("Introduction", 1, (1, 1)), ("Background", 2, (1, 1)), ("Storage", 1, (2, 2))]
    flat = [[(11, y, text) for _, y, text in page] for page in _PAGES]
    (tmp_path / "flat.pdf").write_bytes(_text_pdf(flat))
    [doc] = _parse(tmp_path / "flat.pdf")
    assert doc.title == "flat.pdf"
    assert [(s.title, s.anchor, s.pages) for s in doc.sections] == [
        ("flat.pdf, page 1", "page=1", (1, 1)), ("flat.pdf, page 2", "page=2", (2, 2))]
    assert doc.sections[1].text.startswith("Storage\nFalkorDB keeps")


def test_docx_headings_tables_bookmarks_and_hyperlinks(tmp_path):
    [doc] = _parse(_handbook_docx(tmp_path / "handbook.docx"))
    url = (tmp_path / "handbook.docx").as_uri()
    assert doc.format == "docx" and doc.title == "Operations handbook"  # core properties win
    assert [(s.title, s.level, s.anchor) for s in doc.sections] == [
        ("Handbook", 1, "handbook"), ("Backups", 1, "backups"), ("Restore", 2, "restore")]
    handbook, backups, restore = doc.sections
    assert handbook.text == "Handbook\n\nWho runs what." and restore.anchors == ["restore"]
    assert backups.text.endswith("vendor site.\n\nHost | Kind | Retention\nquokka-db | wallaby | 30 days")
    internal, external = backups.links
    assert (internal.url, internal.text, internal.internal) == (f"{url}#restore", "restore steps", True)
    assert internal.context == "Nightly backups run at two. See restore steps and the vendor site. Host |"
    assert (external.url, external.text, external.internal) == ("https://example.org/vendor", "the vendor site",
                                                                False)
    assert all(s.pages is None for s in doc.sections)  # Word stores no pages


def _bad_files(folder: Path) -> dict[str, str]:
    """Bad inputs and a phrase their skip reason must contain."""
    manual = _manual_pdf()
    (folder / "locked.pdf").write_bytes(_manual_pdf(password="secret"))
    (folder / "scanned.pdf").write_bytes(_written(_blank_pages(2)))
    (folder / "cut.pdf").write_bytes(manual[: len(manual) // 2])
    (folder / "noise.pdf").write_bytes(b"%PDF-1.4\n" + b"noise " * 50 + b"\n%%EOF\n")
    handbook = _handbook_docx(folder / "whole.docx").read_bytes()
    (folder / "whole.docx").unlink()
    (folder / "cut.docx").write_bytes(handbook[: len(handbook) // 2])
    (folder / "text.docx").write_bytes(b"this is not a word file")
    return {"locked.pdf": "encrypted PDF: it needs a password", "scanned.pdf": "no extractable text in 2 page(s)",
            "cut.pdf": "truncated PDF", "noise.pdf": "corrupt PDF", "cut.docx": "corrupt DOCX",
            "text.docx": "not a DOCX file (not a ZIP archive)"}


def _blank_pages(count: int) -> PdfWriter:
    writer = PdfWriter()
    for _ in range(count):
        writer.add_blank_page(612, 792)
    return writer


def test_bad_pdf_and_docx_files_are_skipped_with_their_reason(tmp_path):
    expected = _bad_files(tmp_path)
    (tmp_path / "open.pdf").write_bytes(_manual_pdf(password=""))  # encrypted, opened by the empty password
    items = _parse(tmp_path)
    skipped = {Path(item.source).name: item.reason for item in items if isinstance(item, Skipped)}
    assert set(skipped) == set(expected)
    for name, phrase in expected.items():
        assert phrase in skipped[name], (name, skipped[name])
    [doc] = [item for item in items if isinstance(item, Document)]
    assert doc.path.endswith("open.pdf") and [s.title for s in doc.sections] == ["Introduction", "Background",
                                                                                  "Storage", "Disk layout"]


def test_missing_libraries_skip_the_file_naming_the_extra(tmp_path):
    (tmp_path / "manual.pdf").write_bytes(_manual_pdf())
    _handbook_docx(tmp_path / "handbook.docx")
    script = ("import sys\nsys.modules['pypdf'] = None\nsys.modules['docx'] = None\n"
              "from neoweave.ingest.sources import iter_documents, SourceOptions\n"
              "settings = {f: {} for f in ('html', 'text', 'markdown', 'record', 'pdf', 'docx')}\n"
              f"for item in iter_documents({str(tmp_path)!r}, SourceOptions(), settings): print(item)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2
    assert "handbook.docx: DOCX support is not installed: pip install 'neoweave[documents]'" in lines[0]
    assert "manual.pdf: PDF support is not installed: pip install 'neoweave[documents]'" in lines[1]


def test_pdf_and_docx_ingest_into_the_graph(falkordb_store, embedder, tmp_path, monkeypatch):
    (tmp_path / "manual.pdf").write_bytes(_manual_pdf())
    _handbook_docx(tmp_path / "handbook.docx")
    (tmp_path / "notes.md").write_text("# Notes\n\nDisks fill up: read the [storage chapter](manual.pdf#page=2) "
                                       "and the [backups](handbook.docx#backups).\n")
    expected = _bad_files(tmp_path)
    ingestor = Ingestor(falkordb_store, embedder, IngestOptions(progress=False))
    report = ingestor.ingest(tmp_path)
    assert (report.documents_new, report.documents_changed) == (3, 0)
    assert sorted(Path(s.source).name for s in report.skipped) == sorted(expected)
    rows = falkordb_store.query("MATCH (a:Section)-[l:LINKS_TO]->(b:Section) "
                                "RETURN a.anchor AS source, b.anchor AS target, l.text AS text")
    links = {(row["source"], row["target"]): row["text"] for row in rows}
    assert links[("introduction", "storage")] == "See the storage chapter for details."  # PDF link annotation
    assert links[("backups", "restore")] == "restore steps"  # DOCX hyperlink to a bookmark
    assert links[("notes", "storage")] == "storage chapter"  # into a PDF by page
    assert links[("notes", "backups")] == "backups"
    assert report.links_unresolved == 0
    storage = falkordb_store.query("MATCH (s:Section {anchor: 'storage'}) "
                                   "RETURN s.page_start AS first, s.page_end AS last, s.url AS url")[0]
    assert (storage["first"], storage["last"]) == (2, 2) and storage["url"].endswith("manual.pdf#page=2")
    external = falkordb_store.query("MATCH (c:Chunk) WHERE c.external_links_json CONTAINS 'example.org/vendor' "
                                    "RETURN c.id AS id")
    assert external and external[0]["id"].endswith("#backups:0")
    # table cells are searchable (words beside a line break are not: FalkorDB's full-text index does not split
    # words at "\n", whatever the format; so the cells searched for here sit mid-row)
    hits = falkordb_store.fulltext_search("chunk_text", "wallaby", 3)  # a DOCX table cell
    assert hits and hits[0].properties["section_id"].endswith("handbook.docx#backups")
    assert falkordb_store.fulltext_search("chunk_text", "koala", 3)  # a PDF table row
    from neoweave.ingest import docx, pdf

    def not_again(*args, **kwargs):
        raise AssertionError(f"{kwargs['source']} is unchanged: its hash matches, so it is not parsed again")

    monkeypatch.setattr(pdf, "parse_pdf", not_again)
    monkeypatch.setattr(docx, "parse_docx", not_again)
    again = ingestor.ingest(tmp_path)
    assert (again.documents_new, again.documents_changed, again.documents_unchanged) == (0, 0, 3)


@pytest.mark.parametrize("name", ["a.pdf", "a.docx"])
def test_an_empty_file_is_skipped_before_parsing(tmp_path, name):
    (tmp_path / name).write_bytes(b"")
    [item] = _parse(tmp_path)
    assert isinstance(item, Skipped) and item.reason == "empty file (0 bytes)"
