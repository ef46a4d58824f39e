"""The knowledge base: the one object a user holds, and that every front end goes through.

It owns the settings, the store (opened on first use), the embedder (its model loaded on the first text to
embed), the LLM gateway (started only when a step or strategy needs one), and closes what it opened (kb/core.py,
with the guard every write goes through). Its methods, here, are the product's verbs:

    import neoweave
    with neoweave.open(".neoweave") as kb:
        kb.ingest("docs/")
        kb.enrich("kg")
        result = kb.retrieve("How do I cancel a task?", strategy="ppr", k=5)
        kb.explain("How do I cancel a task?", strategy="ppr").to_html("why.html")

The CLI, the HTTP server, evaluations, the LangChain integration and the notebooks wire nothing themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neoweave.errors import NeoweaveError
from neoweave.kb.core import KnowledgeBaseCore
from neoweave.parameters import coerce_parameters, unprefixed

if TYPE_CHECKING:
    from neoweave.audit import Explanation
    from neoweave.enrich import EnrichReport
    from neoweave.eval.pipeline import EvalOutcome
    from neoweave.eval.runner import RunConfig
    from neoweave.ingest import IngestReport
    from neoweave.ingest.sync import SyncReport
    from neoweave.query import RetrievalResult, Strategy
    from neoweave.query.answer import AnswerEvent, AnswerResult

log = logging.getLogger(__name__)

_NOT_PARAMETERS = ("store", "embedder", "llm")


class KnowledgeBase(KnowledgeBaseCore):
    """One graph with everything that reads and writes it. Safe to share between threads for retrieval."""

    # -- building the graph ----------------------------------------------------------------------
    def ingest(self, source: str | Path | Iterable[Mapping[str, Any]], *, source_name: str = "records",
               progress: bool = False, **options: Any) -> IngestReport:
        """Ingest a file or folder (HTML, JSON/JSONL, text, Markdown, PDF, DOCX), or in-memory records
        (`{"id", "title", "text", "url", "metadata"}`). `options` are `IngestOptions` and `SourceOptions`
        fields (format, base_url, chunk_size, chunk_overlap, max_file_bytes, skip_paths, ...). Unchanged
        documents are skipped; every link's context is embedded before it returns. A document of more than
        `large_document_chunks` chunks is written a few sections at a time; Ctrl-C raises `IngestInterrupted`
        (its `report`: what was kept) once the parts already embedded are stored, and the next ingest of the
        same path continues from them."""
        from neoweave.ingest import Ingestor
        from neoweave.ingest.pipeline import ingest_options

        if isinstance(source, str | Path):  # before the store or the model starts
            from neoweave.ingest.sources import unreadable_path

            if (problem := unreadable_path(Path(source).expanduser())) is not None:
                raise NeoweaveError(f"ingest path {problem}")
        built = ingest_options(progress, options, command="ingest")
        with self._writing("ingest"):
            ingestor = Ingestor(self.store, self.embedder, built)
            if isinstance(source, str | Path):
                return ingestor.ingest(source)
            return ingestor.ingest_records(source, source=source_name)

    def delete(self, key: str) -> list[str]:
        """Delete the documents whose id is `key`, or that were read from the file or folder `key`, with what
        was derived from them; returns their ids."""
        from neoweave.ingest import delete_documents

        with self._writing("delete"):
            return delete_documents(self.store, key, self.embedder)

    def sync(self, path: str | Path, *, dry_run: bool = False, allow_empty: bool = False, progress: bool = False,
             **options: Any) -> SyncReport:
        """Mirror a file or folder: documents read from it earlier that are gone (files removed, records no longer
        in their JSONL file) are deleted with everything derived from them, changed ones updated, new ones added,
        unchanged ones left alone. `options` are `ingest`'s (use the same ones the folder was ingested with).
        `dry_run` only reports what would change (allowed on a read-only knowledge base). A path that does not
        exist is refused; one that yields no document while documents were read from it is refused unless
        `allow_empty`. Enrich steps are not re-run: `report.next_steps` names the commands that would."""
        from neoweave.ingest.pipeline import ingest_options
        from neoweave.ingest.sync import resolve_sync_path, sync

        built = ingest_options(progress, options, command="sync")
        resolve_sync_path(path)  # a missing path is refused before the store or the model starts
        if dry_run:
            if self.store.read_meta() is not None:
                self.check_graph()  # another embedding model would make every document look changed
            return sync(self.store, self.embedder, path, built, dry_run=True, allow_empty=allow_empty)
        with self._writing("sync"):
            return sync(self.store, self.embedder, path, built, dry_run=False, allow_empty=allow_empty)

    def embed_link_contexts(self, *, progress: bool = False) -> int:
        """Embed every link context still missing (graphs built before ingest did it); returns how many."""
        from neoweave.ingest.link_contexts import embed_all_link_contexts

        with self._writing("embedding link contexts"):
            return embed_all_link_contexts(self.store, self.embedder, progress=progress)

    def enrich(self, step: str, method: str = "fast", *, limit: int | None = None, doc_ids: list[str] | None = None,
               chunk_ids: list[str] | None = None, progress: bool = False, **parameters: Any) -> EnrichReport:
        """Run an enrich step (kg, communities, tags, rst) over every chunk it has not processed yet.
        `parameters` are the step's fields (text values are parsed like `-P NAME=VALUE`)."""
        from neoweave.enrich import make_step, run
        from neoweave.enrich.base import RUNNER_WRITES
        from neoweave.registry import ENRICH_STEPS

        self._writable(f"enrich {step}")
        typed = coerce_parameters(ENRICH_STEPS.get(step), {"method": method, **parameters},
                                  what=f"enrich step '{step}'")
        chosen = make_step(step, **typed)
        llm = self.llm if chosen.method == "llm" else None
        writes = None if chosen.writes is None else chosen.writes | RUNNER_WRITES
        with self._writing(f"enrich {step}", walk_index=step == "kg", progress=progress, writes=writes):
            return run(chosen, self.store, embedder=self.embedder, llm=llm, limit=limit, doc_ids=doc_ids,
                       chunk_ids=chunk_ids, progress=progress)

    # -- asking it -------------------------------------------------------------------------------
    def strategy(self, name: str, **parameters: Any) -> Strategy:
        """The strategy `name` over this graph with `parameters` (typed like its defaults; the router takes
        its routes from the settings). Limits are not applied here: `retrieve` applies them."""
        from neoweave.registry import STRATEGIES

        typed = coerce_parameters(STRATEGIES.get(name), unprefixed(name, parameters, STRATEGIES.known()),
                                  what=f"strategy '{name}'", skip=_NOT_PARAMETERS)
        return self._build(name, typed)

    def _build(self, name: str, typed: dict[str, Any]) -> Strategy:
        """The strategy over this graph from parameters already typed (`strategy` or `request` typed them once)."""
        from neoweave.query.router import configured
        from neoweave.registry import STRATEGIES

        cls = STRATEGIES.get(name)
        typed = configured(self.settings, name, typed)
        llm = self.llm if cls.wants_llm(typed) else None
        instance = cls(self.store, self.embedder, llm)
        return instance.with_overrides(**typed) if typed else instance

    def strategy_factory(self) -> Callable[..., Strategy]:
        """`make(name, **parameters)`: what an evaluation run builds its strategies with."""
        return lambda name, **parameters: self.strategy(name, **parameters)

    def request(self, strategy: str, k: int | None, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """A request's parameters typed and bounded by `limits` (the CLI, HTTP API and MCP share this)."""
        from neoweave.registry import STRATEGIES

        given = unprefixed(strategy, parameters, STRATEGIES.known())
        if k is not None:
            given["k"] = k
        typed = coerce_parameters(STRATEGIES.get(strategy), given, what=f"strategy '{strategy}'",
                                  skip=_NOT_PARAMETERS)
        return {name: self.limits.parameter(name, value) for name, value in typed.items()}

    def retrieve(self, question: str, strategy: str = "naive", k: int | None = None, *,
                 parameters: Mapping[str, Any] | None = None, **more: Any) -> RetrievalResult:
        """The context for `question` by `strategy`, with where each piece came from, the trace and the cost.
        Strategy parameters come as keywords or as a `parameters` mapping (a request body). Only reads."""
        question = self.limits.question(question)
        chosen = self._build(strategy, self.request(strategy, k, {**(parameters or {}), **more}))
        self.check_graph()
        with self.reading("the retrieval"):
            return chosen.retrieve(question)

    def answer(self, question: str, strategy: str = "naive", k: int | None = None, *, prompt: str = "short_answer",
               max_tokens: int | None = None, cite: bool = True, parameters: Mapping[str, Any] | None = None,
               **more: Any) -> AnswerResult:
        """Retrieve, then answer with the LLM and the named prompt (`neoweave.query.PROMPTS`); with `cite` (the
        default) the answer's `citations` name the retrieved items it used."""
        from neoweave.query.answer import answer

        question, chosen = self._answering(question, strategy, k, prompt, {**(parameters or {}), **more})
        with self.reading("the retrieval"):  # store time only: the model's time is bounded by llm.timeout
            return answer(question, strategy=chosen, llm=self.llm, prompt=prompt, max_tokens=max_tokens, cite=cite)

    def answer_stream(self, question: str, strategy: str = "naive", k: int | None = None, *,
                      prompt: str = "short_answer", max_tokens: int | None = None, cite: bool = True,
                      parameters: Mapping[str, Any] | None = None, **more: Any) -> Iterator[AnswerEvent]:
        """`answer`, step by step (`neoweave.query.answer.AnswerEvent`): the retrieval, the text as the model
        writes it, then the answer with its citations. The request is checked before the first event."""
        from neoweave.query.answer import answer_stream
        from neoweave.store.read_limit import bounded_iterator

        question, chosen = self._answering(question, strategy, k, prompt, {**(parameters or {}), **more})
        events = answer_stream(question, strategy=chosen, llm=self.llm, prompt=prompt, max_tokens=max_tokens,
                               cite=cite)
        with self.reading("the retrieval") as budget:  # made here, applied to each step as the reader resumes it
            return bounded_iterator(budget, events)

    def _answering(self, question: str, strategy: str, k: int | None, prompt: str, given: Mapping[str, Any]
                   ) -> tuple[str, Strategy]:
        """The bounded question and the strategy to answer it with; an unknown prompt, a parameter out of
        bounds or a graph without a step the strategy needs fail before anything runs."""
        from neoweave.query.prompts import get_prompt

        question = self.limits.question(question)
        get_prompt(prompt)
        chosen = self._build(strategy, self.request(strategy, k, given))
        self.check_graph()
        return question, chosen

    def explain(self, question: str, strategy: str = "naive", k: int | None = None, *, answer: bool = False,
                prompt: str = "short_answer", documents: bool = True, parameters: Mapping[str, Any] | None = None,
                **more: Any) -> Explanation:
        """The subgraph behind a retrieval (and answer): `.to_html(path)`, `.to_json()`, `.browser_cypher()`."""
        from neoweave.audit import explain

        given = {**(parameters or {}), **more}
        with self.reading("the explanation"):  # one budget for its retrieval (and answer) and its own reads
            if answer:
                answered = self.answer(question, strategy, k, prompt=prompt, parameters=given)
                return explain(answered.retrieval, self.store, answer=answered.answer, documents=documents,
                               citations=answered.citation_rows())
            return explain(self.retrieve(question, strategy, k, parameters=given), self.store, documents=documents)

    def check(self) -> list[dict[str, Any]]:
        """The graph's invariants (`cypher/explore/integrity_checks.cypher`): one row per check with how many
        elements fail it (0 on a healthy graph) and up to five of them. Reads only."""
        from neoweave.cypher.registry import explore_query

        return self.store.query(explore_query("integrity_checks").text)

    def cypher(self, text: str, params: Mapping[str, Any] | None = None, *, write: bool = False
               ) -> list[dict[str, Any]]:
        """Rows of a Cypher query typed by a person: refused if it writes, unless `write=True`. A read is stopped
        at the read limit (`store.read_timeout`); a write is not bounded."""
        if not write:
            with self.reading("the query"):
                return self.store.query(text, params)
        from neoweave.enrich.kg_changes import forget

        with self._writing("a writing Cypher query"):
            try:
                return self.store.query(text, params, write=True)
            finally:  # whatever it changed, the kg step's next run reads every entity
                forget(self.store)

    def status(self) -> dict[str, Any]:
        """Store health, schema and embedding model, counts per label and relationship type."""
        store = self.store
        counts = store.counts()
        return {"store": store.health(), "meta": store.read_meta(), "nodes": counts.nodes,
                "relationships": counts.relationships}

    def backup(self, dest: str | Path, *, llm_cache: bool = True, progress: Callable[[str], None] | None = None
               ) -> dict[str, Any]:
        """Snapshot the store (every graph, while it serves) and the LLM cache into the new directory `dest`;
        returns the manifest (docs/backup.md). Only reads: allowed read-only."""
        from neoweave.kb.backup import backup

        return backup(self.settings, dest, llm_cache=llm_cache, progress=progress or log.info)

    def restore(self, src: str | Path, *, force: bool = False, progress: Callable[[str], None] | None = None
                ) -> dict[str, Any]:
        """Replace the (empty, or with `force` any) store by the backup `src`, checked before and after."""
        from neoweave.kb.backup import restore
        from neoweave.kb.walk import after_restore

        self._writable("restore")
        self.close()  # the server restarts on the restored files; the store reconnects on next use
        manifest = restore(self.settings, src, force=force, progress=progress or log.info)
        after_restore(self.store)
        return manifest

    def export(self, dest: str | Path, *, batch_size: int | None = None, progress: bool = False,
               on_batch: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Write the whole graph into the new directory `dest`: gzipped JSON Lines per label and relationship type
        and a manifest with counts and checksums (docs/export.md); returns the manifest. Only reads: allowed
        read-only. `on_batch(done, total)` is called after each page."""
        from neoweave.kb.transfer import export_graph

        return export_graph(self.store, dest, batch_size=batch_size, progress=progress, on_batch=on_batch)

    def import_from(self, src: str | Path, *, batch_size: int | None = None, progress: bool = False,
                    on_batch: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Load an export (`export`) into this store, which must be empty, or hold an unfinished import of the same
        export, which then resumes; checksums are verified before anything is written. Either backend: the way from
        the embedded store to Neo4j. `on_batch(done, total)` is called after each batch."""
        from neoweave.kb.transfer import import_graph

        with self._writing("import"):
            report = import_graph(self.store, src, batch_size=batch_size, progress=progress, on_batch=on_batch)
        if report["embedding_model"] != self.settings.embedding.model:
            log.warning("the imported graph's embedding model is %s, the configuration's %s: set embedding.model "
                        "(NEOWEAVE_EMBEDDING_MODEL) to query it", report["embedding_model"],
                        self.settings.embedding.model)
        self._checked = False
        return report

    def strategies(self) -> list[dict[str, Any]]:
        """Every strategy: name, one-line description, whether it calls an LLM, parameters with defaults."""
        from neoweave.query.catalog import strategy_catalog

        return strategy_catalog()

    # -- measuring it ----------------------------------------------------------------------------
    def evaluate(self, qa: str | Path, config: RunConfig, out: str | Path, *, corpus: str | Path | None = None,
                 base_url: str | None = None, limit: int | None = None, types: list[str] | None = None,
                 title: str | None = None, progress: bool = True, resume: bool = True) -> EvalOutcome:
        """Run `config` (strategies x k, answers, judge) over a QA set and write the report to `out`.
        Evaluations are not bounded by `limits` (they ask for what the run configures). Records are kept in
        `out` as they finish: a run stopped part way, run again (`resume`), evaluates only the rest."""
        from neoweave.eval.pipeline import evaluate_graph, select_questions

        questions = select_questions(Path(qa), types=types, limit=limit)  # a bad QA file fails before any ingest
        if corpus is not None:
            ingested = self.ingest(corpus, base_url=base_url, progress=progress)
            log.info("corpus %s: %d new, %d changed, %d unchanged documents", corpus, ingested.documents_new,
                     ingested.documents_changed, ingested.documents_unchanged)
        self.check_graph()
        return evaluate_graph(self.settings, self.store, self.embedder, Path(qa), questions, config, out,
                              llm=lambda: self.llm, judge_llm=lambda: self.judge_llm,
                              make_strategy=self.strategy_factory(), corpus=corpus, limit=limit, types=types,
                              title=title, progress=progress, resume=resume)

    def walk_index(self, *, rebuild: bool = False, background: bool | None = None, progress: bool = False
                   ) -> dict[str, Any]:
        """The state of ppr's walk index (`query.walk_index`): whether one matches the graph's write stamp, where
        it is saved, its size. With `rebuild`, build it first when it does not (reads the graph only). With
        `background` (long-lived processes: the servers), from now on a reader that finds the saved index behind
        the graph rebuilds it in a thread, reading the store meanwhile (and this call starts that at once)."""
        from neoweave.kb.walk import walk_index_state

        return walk_index_state(self.store, rebuild=rebuild, background=background, writable=not self.read_only,
                                progress=progress)
