"""The ingest pipeline's progress bars: bytes read, chunks embedded, chunks and sections written."""

from __future__ import annotations

from neoweave.ingest.sources import SourceStats


class IngestProgress:
    """tqdm bars for reading, embedding and writing (silent when disabled). Reading counts bytes of the files
    against their total size (known before the first is parsed; a JSONL file counts line by line), so it has an
    ETA, and parsing runs at most a few documents ahead of embedding (the bottleneck). The chunk bars' totals
    are the chunks parsed so far that need embedding: exact once reading is done, and from the start for one
    large file, which is written a few sections at a time: the written bar says how many of the sections to
    write are stored."""

    def __init__(self, enabled: bool, stats: SourceStats) -> None:
        self.enabled = enabled
        self.stats = stats
        self.documents = 0
        self.sections_total = 0
        self.sections_written = 0
        if enabled:
            from tqdm import tqdm

            self.read = tqdm(desc="read            ", unit="B", unit_scale=True, position=0, dynamic_ncols=True)
            self.embedded = tqdm(total=0, desc="embedded chunks ", unit="chunk", position=1, dynamic_ncols=True)
            self.written = tqdm(total=0, desc="written chunks  ", unit="chunk", position=2, dynamic_ncols=True)

    def parsed(self, documents: int = 1) -> None:
        """A document came out of parsing: move the read bar to the bytes read so far."""
        if not self.enabled:
            return
        if self.read.total is None and self.stats.bytes_total is not None:
            self.read.total = self.stats.bytes_total
        self.documents += documents
        self.read.set_postfix_str(f"{self.documents} documents", refresh=False)
        self.read.update(max(0, self.stats.bytes_read - self.read.n))

    def to_write(self, chunks: int, sections: int) -> None:
        """Chunks and sections of new or changed documents: they will be embedded and written."""
        self.sections_total += sections
        if self.enabled:
            for bar in (self.embedded, self.written):
                bar.total = (bar.total or 0) + chunks
                bar.refresh()
            self._sections()

    def embedded_chunks(self, n: int) -> None:
        if self.enabled:
            self.embedded.update(n)

    def written_part(self, chunks: int, sections: int) -> None:
        self.sections_written += sections
        if self.enabled:
            self._sections()
            self.written.update(chunks)

    def _sections(self) -> None:
        self.written.set_postfix_str(f"{self.sections_written}/{self.sections_total} sections", refresh=False)

    def close(self) -> None:
        if self.enabled:
            if self.stats.bytes_total is not None:
                self.read.update(max(0, self.stats.bytes_read - self.read.n))
            for bar in (self.read, self.embedded, self.written):
                bar.close()
