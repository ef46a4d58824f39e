"""A QA set from a Sphinx documentation's FAQ pages, with the FAQ pages held out of the corpus.

Each FAQ question is a section whose title ends with "?"; its answer is the section's text; its gold evidence
is the set of documentation sections the answer links to (outside the FAQ folder), as section URLs. The
corpus written next to the QA set is the documentation without the FAQ pages, so answering needs the
reference sections, reached by retrieval.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urldefrag

from neoweave.errors import NeoweaveError
from neoweave.ingest.documents import Document
from neoweave.ingest.html import HtmlOptions, decode_html, parse_html


@dataclass
class FaqResult:
    questions: int
    without_evidence: int
    corpus_dir: Path
    qa_path: Path


def _parse(path: Path, root: Path, base_url: str) -> Document | None:
    raw = decode_html(path.read_bytes())
    if not isinstance(raw, str):
        return None
    url = base_url + path.relative_to(root).as_posix()
    doc = parse_html(raw, doc_id=url, page_url=url, root_url=base_url, source=str(path), content_hash="",
                     options=HtmlOptions())
    return doc if isinstance(doc, Document) else None


def build_sphinx_faq(html_dir: str | Path, out: str | Path, *, faq_folder: str = "faq",
                     base_url: str | None = None) -> FaqResult:
    root = Path(html_dir).resolve()
    faq_root = root / faq_folder
    if not faq_root.is_dir():
        raise NeoweaveError(f"no FAQ folder {faq_root}", hint="pass the Sphinx HTML root (it has faq/)")
    base = base_url or root.as_uri() + "/"
    base = base if base.endswith("/") else base + "/"
    out = Path(out)
    corpus_dir = out / "corpus"
    anchor_maps: dict[str, dict[str, str]] = {}

    def target_section(url: str, anchor: str) -> str | None:
        if url not in anchor_maps:
            relative = url[len(base):] if url.startswith(base) else None
            path = root / relative if relative else None
            doc = _parse(path, root, base) if path is not None and path.is_file() else None
            anchor_maps[url] = (
                {k: next(s.url for s in doc.sections if s.id == v) for k, v in doc.anchor_map().items()}
                | {"": doc.sections[0].url} if doc else {})
        return anchor_maps[url].get(anchor)

    records = []
    without_evidence = 0
    for page in sorted(faq_root.rglob("*.html")):
        doc = _parse(page, root, base)
        if doc is None:
            continue
        for section in doc.sections:
            if not section.title.strip().endswith("?"):
                continue
            evidence = []
            for link in section.links:
                if not link.internal or urldefrag(link.target_url)[0].startswith(base + faq_folder + "/"):
                    continue
                target = target_section(link.target_url, link.anchor)
                if target and target not in evidence:
                    evidence.append(target)
            without_evidence += not evidence
            answer = section.text[len(section.title):].strip() if section.text.startswith(section.title) \
                else section.text
            records.append({"id": section.id, "question": section.title.strip(), "answer": answer,
                            "aliases": [], "evidence": evidence, "type": "with-links" if evidence else "no-links"})
    if not records:
        raise NeoweaveError(f"no FAQ questions (section titles ending in '?') under {faq_root}")
    if corpus_dir.exists():
        shutil.rmtree(corpus_dir)
    shutil.copytree(root, corpus_dir, ignore=lambda folder, names: names if Path(folder) == faq_root else
                    [name for name in names if Path(folder) / name == faq_root])
    out.mkdir(parents=True, exist_ok=True)
    qa_path = out / "qa.jsonl"
    qa_path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    (out / "README.md").write_text(
        f"Sphinx FAQ QA set built from {root} ({len(records)} questions, {without_evidence} without links).\n"
        f"Ingest the corpus with the same base URL so evidence URLs match:\n\n"
        f"    neoweave eval --corpus {corpus_dir} --base-url {base} --qa {qa_path}\n")
    return FaqResult(len(records), without_evidence, corpus_dir, qa_path)
