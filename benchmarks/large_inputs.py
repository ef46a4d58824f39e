"""Large single files as users have them: one big HTML page full of links, and a long PDF.

    .venv/bin/python benchmarks/large_inputs.py --html-mb 50 --pdf-pages 500 --out docs/benchmarks/large_inputs.json

Each input is generated deterministically (`make_html_page`, `make_pdf`; the tests use the same generator at a
smaller size), then ingested by `neoweave ingest FILE` in a fresh data directory as a child process. The
parent samples the process tree every half second: peak RSS of the neoweave process (its own threads and
any child but the store) and of the FalkorDB server, which is a process of its own. Reported per input: wall
time, the ingest report's counts, both peaks, and the load average while it ran (other work on the machine
slows it, and is noted). `--generate-only DIR` writes the inputs and stops.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_WORDS = ("graph", "section", "chunk", "anchor", "vector", "store", "index", "query", "answer", "model", "token",
          "embedding", "document", "page", "link", "context", "reader", "writer", "parser", "batch", "memory",
          "progress", "signal", "resume", "the", "of", "and", "to", "in", "a", "is", "that", "for", "on", "with",
          "as", "by", "at", "from", "this", "which", "be", "are", "was", "it", "an", "or", "not", "have", "has",
          "had", "its", "we", "they", "one", "two", "three", "data", "method", "result", "table", "figure",
          "value", "system", "process", "time", "level", "node", "edge", "path")


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def make_html_page(target_bytes: int, links: int, *, seed: int = 7, section_every: int = 6) -> str:
    """A page of about `target_bytes` with about `links` hyperlinks: sections (`<section id>`, nested two deep)
    of paragraphs; links point at other sections of the page (most), at anchors of a sibling page that is not
    ingested (unresolved), and at external sites. `section_every=0`: no sections at all (one flat page whose
    links point at its paragraphs). Deterministic for a seed."""
    rng = random.Random(seed)
    paragraphs_estimate = max(1, target_bytes // 330)
    targets = paragraphs_estimate // section_every if section_every else paragraphs_estimate
    prefix = "s" if section_every else "p"
    parts = ["<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>A large generated manual</title></head>\n"
             "<body><nav><a href='index.html'>Home</a></nav><div role='main'>\n"]
    size = sum(len(p) for p in parts)
    section = 0
    made_links = 0
    paragraph = 0
    open_sub = False
    while size < target_bytes:
        first_part = len(parts)
        if section_every and paragraph % section_every == 0:
            if open_sub:
                parts.append("</section>\n")
                open_sub = False
            if section % 4 == 0:
                if section:
                    parts.append("</section>\n")
                parts.append(f"<section id='s{section}'><h2>Chapter {section}: {_sentence(rng, 4)}</h2>\n")
            else:
                parts.append(f"<section id='s{section}'><h3>Part {section}: {_sentence(rng, 3)}</h3>\n")
                open_sub = True
            section += 1
        words = [_sentence(rng, rng.randint(6, 14)) for _ in range(rng.randint(3, 6))]
        due = int(min(1.0, (size + 330) / target_bytes) * links) - made_links  # links spread by bytes
        for _ in range(max(0, due)):
            kind = rng.random()
            if kind < 0.8:
                href = f"#{prefix}{rng.randrange(max(1, targets))}"
            elif kind < 0.9:
                href = f"sibling.html#t{rng.randrange(100)}"
            else:
                href = f"https://example.org/ref/{rng.randrange(1000)}"
            at = rng.randrange(len(words))
            words[at] += f" see <a href='{href}'>{rng.choice(_WORDS)} {rng.choice(_WORDS)}</a>"
            made_links += 1
        parts.append(f"<p id='p{paragraph}'>{' '.join(words)}</p>\n")
        size += sum(len(part) for part in parts[first_part:])
        paragraph += 1
    if open_sub:
        parts.append("</section>\n")
    parts.append(f"{'</section>' if section else ''}\n</div><footer>generated</footer></body></html>\n")
    return "".join(parts)


def _pdf_page_stream(rng: random.Random, number: int) -> str:
    lines = [f"BT /F1 18 Tf 72 740 Td (Chapter {number}) Tj ET"] if number % 5 == 0 else []
    y = 710
    while y > 80:
        text = _sentence(rng, rng.randint(8, 12)).replace("(", "").replace(")", "")
        lines.append(f"BT /F1 10 Tf 72 {y} Td ({text}) Tj ET")
        y -= 14
    return "\n".join(lines) + "\n"


def make_pdf(pages: int, *, seed: int = 11) -> bytes:
    """A `pages`-page PDF of body text with a larger heading every fifth page, an outline entry per chapter
    and a link annotation to the next chapter on each chapter page (pypdf adds them). Deterministic."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.annotations import Link
    from pypdf.generic import Fit

    rng = random.Random(seed)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               f"<< /Type /Pages /Kids [{' '.join(f'{4 + 2 * i} 0 R' for i in range(pages))}] "
               f"/Count {pages} >>".encode(),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"]
    for index in range(pages):
        stream = _pdf_page_stream(rng, index).encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >>"
                       f" >> /Contents {5 + 2 * index} 0 R >>".encode())
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
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(bytes(out))))
    for chapter in range(0, pages, 5):
        writer.add_outline_item(title=f"Chapter {chapter}", page_number=chapter, fit=Fit.xyz(top=760))
        if chapter + 5 < pages:
            writer.add_annotation(chapter, Link(rect=(72, 696, 400, 708), target_page_index=chapter + 5,
                                                fit=Fit.xyz(top=760)))
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def generate(folder: Path, *, html_mb: float, html_links: int, pdf_pages: int) -> dict[str, Path]:
    """The benchmark's inputs in `folder` (each written once; a file already there is reused)."""
    folder.mkdir(parents=True, exist_ok=True)
    made = {}
    if html_mb:
        page = folder / f"page-{html_mb:g}mb-{html_links}links.html"
        if not page.exists():
            page.write_text(make_html_page(int(html_mb * 1024 * 1024), html_links), encoding="utf-8")
        made["html"] = page
    if pdf_pages:
        pdf = folder / f"manual-{pdf_pages}pages.pdf"
        if not pdf.exists():
            pdf.write_bytes(make_pdf(pdf_pages))
        made["pdf"] = pdf
    return made


def _rss(pid: int | None) -> int:
    """Resident memory of a process in bytes (0 when it is gone)."""
    import psutil

    try:
        return psutil.Process(pid).memory_info().rss if pid else 0
    except psutil.Error:
        return 0


def _store_pid(data_dir: Path) -> int | None:
    """The FalkorDB server of `data_dir` (a daemon of its own, not a child of the ingest) from its pid file."""
    try:
        return int((data_dir / "falkordb.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def run_ingest(path: Path, data_dir: Path, extra: list[str], stop_after: float | None = None) -> dict:
    """`neoweave ingest PATH --json` in a fresh data directory, timed, with the peak RSS of the ingest process and
    of the FalkorDB server sampled twice a second; `stop_after` seconds: Ctrl-C (SIGINT) then, as a user would,
    and the report of what was kept."""
    command = [sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), "ingest", str(path), "--json",
               *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    output: dict[str, str] = {}
    reader = threading.Thread(target=lambda: output.update(zip(("out", "err"), process.communicate(), strict=True)),
                              daemon=True)
    reader.start()
    peak_own = peak_store = 0
    loads: list[float] = []
    stopped_at: float | None = None
    while reader.is_alive():
        peak_own = max(peak_own, _rss(process.pid))
        peak_store = max(peak_store, _rss(_store_pid(data_dir)))
        loads.append(os.getloadavg()[0])
        elapsed = time.perf_counter() - started
        if stop_after is not None and stopped_at is None and elapsed >= stop_after:
            process.send_signal(signal.SIGINT)
            stopped_at = elapsed
        reader.join(0.5)
    seconds = time.perf_counter() - started
    if process.returncode not in (0, 3, 130):
        raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}): {output.get('err', '')[-3000:]}")
    report = json.loads(output["out"])
    result = {"file": path.name, "bytes": path.stat().st_size, "seconds": round(seconds, 1),
              "peak_rss_ingest_mb": round(peak_own / 2**20), "peak_rss_falkordb_mb": round(peak_store / 2**20),
              "load_average": {"before": round(load_before, 2), "mean": round(sum(loads) / max(1, len(loads)), 2)},
              "report": {k: report.get(k) for k in ("documents_new", "sections", "chunks", "links_resolved",
                                                    "links_unresolved", "self_links", "link_contexts_embedded",
                                                    "embed_seconds", "seconds", "interrupted", "incomplete")},
              "command": " ".join(["neoweave", "ingest", path.name, "--json", *extra])}
    if stopped_at is not None:
        result["sigint_after_seconds"] = round(stopped_at, 1)
        result["exit_status"] = process.returncode
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--html-mb", type=float, default=50.0, help="size of the HTML page (0: none)")
    parser.add_argument("--html-links", type=int, default=0, help="links in the page (default: 20k per 6 MB)")
    parser.add_argument("--pdf-pages", type=int, default=500, help="pages of the PDF (0: none)")
    parser.add_argument("--inputs", type=Path, default=None, help="folder for the generated inputs (kept)")
    parser.add_argument("--generate-only", action="store_true", help="write the inputs and stop")
    parser.add_argument("--stop-after", type=float, default=None,
                        help="Ctrl-C (SIGINT) each ingest after this many seconds: a run too long to finish "
                             "reports its peak memory and rate so far, and what it kept")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the results as JSON here (results for other files already there are kept)")
    args = parser.parse_args()
    links = args.html_links or int(args.html_mb * 20_000 / 6)
    inputs = args.inputs or Path(tempfile.gettempdir()) / "neoweave-large-inputs"
    made = generate(inputs, html_mb=args.html_mb, html_links=links, pdf_pages=args.pdf_pages)
    if args.generate_only:
        for kind, path in made.items():
            print(f"{kind}: {path} ({path.stat().st_size:,} bytes)")
        return
    results = []
    for kind, path in made.items():
        data_dir = Path(tempfile.mkdtemp(prefix=f"neoweave-large-{kind}-"))
        try:
            size_mb = path.stat().st_size / 2**20
            result = run_ingest(path, data_dir, ["--max-file-mb", str(max(20, int(size_mb) + 1))], args.stop_after)
        finally:
            subprocess.run([sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), "server", "stop"],
                           capture_output=True)
            shutil.rmtree(data_dir, ignore_errors=True)
        result["kind"] = kind
        results.append(result)
        print(json.dumps(result, indent=2), flush=True)
    for result in results:
        result["date"] = time.strftime("%Y-%m-%d")
        result["reproduce"] = " ".join([".venv/bin/python", "benchmarks/large_inputs.py", *sys.argv[1:]])
    if args.out:
        kept = json.loads(args.out.read_text())["results"] if args.out.exists() else []
        names = {result["file"] for result in results}
        summary = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
                   "results": [r for r in kept if r["file"] not in names] + results}
        args.out.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
