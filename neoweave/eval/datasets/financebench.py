"""FinanceBench (Islam et al., 2023; Orion-RAG's retrieval benchmark, 002 l. 186-188) as its public repository
ships it: `data/financebench_open_source.jsonl` (one question a line: financebench_id, question, answer,
question_type, doc_name, evidence: [{evidence_text, doc_name, evidence_page_num (0-based), ...}]) and the
filings as `pdfs/<doc_name>.pdf`.

The corpus is a folder with the PDFs the questions cite (copied; neoweave's PDF ingest reads them into
sections by outline, else by page). A question's evidence is `<base_url><doc_name>.pdf#page=<n>` (n 1-based,
the anchor the PDF ingest gives a page), so Orion's document-level ground truth (every chunk of the cited
filing) is exact; at chunk level a section that spans pages is named by its first page, so `hit` and `recall`
are approximate where a filing has an outline. The evidence texts are kept as `evidence_text`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from neoweave.errors import NeoweaveError
from neoweave.eval.datasets.common import ConvertedSet, count_types, qa_row, read_jsonl, write_jsonl

PDF_BASE_URL = "https://github.com/patronus-ai/financebench/blob/main/pdfs/"
"""Where the filings are published: the base URL the corpus is ingested under, so evidence keys match."""
_HINT = "download financebench's data/financebench_open_source.jsonl and its pdfs/ folder"


def convert_financebench(questions: Path, pdfs: Path, out: Path, *, base_url: str = PDF_BASE_URL) -> ConvertedSet:
    """Write `out/qa.jsonl` and `out/corpus/` (the cited PDFs) from FinanceBench's files."""
    rows = read_jsonl(questions, "questions", _HINT)
    if not pdfs.is_dir():
        raise NeoweaveError(f"PDF folder not found: {pdfs}", hint=_HINT)
    base = base_url if base_url.endswith("/") else base_url + "/"
    qa, documents = [], set()
    for number, row in enumerate(rows, 1):
        doc_name = str(row.get("doc_name") or "").strip()
        if not str(row.get("question") or "").strip() or not doc_name:
            raise NeoweaveError(f"{questions}:{number}: a question needs 'question' and 'doc_name'", hint=_HINT)
        evidence = [e for e in row.get("evidence") or [] if isinstance(e, dict)]
        pages = [(str(e.get("doc_name") or doc_name), e.get("evidence_page_num")) for e in evidence]
        # without a page the filing itself is the evidence: it counts at document level only
        keys = [f"{base}{name}.pdf#page={page + 1}" if isinstance(page, int) else f"{base}{name}.pdf"
                for name, page in pages] or [f"{base}{doc_name}.pdf"]
        documents.update(name for name, _ in pages or [(doc_name, None)])
        qa.append(qa_row(str(row.get("financebench_id") or f"fb{number:04d}"), str(row["question"]),
                         str(row.get("answer") or ""), keys, str(row.get("question_type") or "all"),
                         evidence_text=[str(e["evidence_text"]) for e in evidence if e.get("evidence_text")]))
    missing = sorted(name for name in documents if not (pdfs / f"{name}.pdf").is_file())
    if missing:
        raise NeoweaveError(f"{len(missing)} cited filing(s) missing from {pdfs}: {', '.join(missing[:5])}"
                            f"{' ...' if len(missing) > 5 else ''}", hint=_HINT)
    corpus = out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for name in sorted(documents):
        shutil.copy2(pdfs / f"{name}.pdf", corpus / f"{name}.pdf")
    qa_path = out / "qa.jsonl"
    write_jsonl(qa_path, qa)
    return ConvertedSet(qa_path, corpus, len(qa), len(documents), count_types(qa), f"--base-url {base}")
