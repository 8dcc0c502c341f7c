"""The SARG pipeline: extract → build → match → direction → traverse → compile.

:class:`SARGPipeline` wires the stages together with injected collaborators and
returns one :class:`~sarg_integrations.schema.SARGResult` holding every intermediate
product, the compiled prompt and per-stage timings. When no triples, no entry node or
no chain is found, the prompt falls back to the flat retrieved context and the result
says why (with ``config.evidence_fill`` the fallback context is the documents that
bridge-guided relevance picks; see :mod:`sarg_integrations.evidence`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from sarg_integrations.config import SARGConfig, check_deadline
from sarg_integrations.direction import DirectionPredictor
from sarg_integrations.direction_model import default_direction_classifier
from sarg_integrations.documents import DocumentLike, coerce_documents, validate_query
from sarg_integrations.embedding import (
    CachedEmbedder,
    Embedder,
    SentenceTransformerEmbedder,
    cosine_matrix,
)
from sarg_integrations.errors import ConfigError
from sarg_integrations.extraction.base import ExtractionOutcome, TripleExtractor
from sarg_integrations.graph import build_reasoning_graph
from sarg_integrations.matching import (
    KeyBERTKeyphraseExtractor,
    KeyphraseExtractor,
    match_entry_nodes,
)
from sarg_integrations.prompting import PromptTemplate, compile_flat_prompt, compile_prompt
from sarg_integrations.schema import (
    DirectionPrediction,
    EvidencePassage,
    ReasoningChain,
    SARGResult,
    SkippedDocument,
    SourceDocument,
    Triple,
)
from sarg_integrations.traversal import (
    BeamSearchStats,
    beam_search_chains,
    chain_from_nodes,
    select_chains,
)

__all__ = ["SARGPipeline", "StageObserver"]

NO_TRIPLES = "no reasoning-schema triples were extracted from the documents"
NO_ENTRY_NODES = "no graph node is similar enough to the query (similarity_threshold={tau})"
NO_CHAINS = "no entry node has a neighbour in the {direction} direction, so no chain was found"
PAST_DEADLINE = "deadline of {seconds:g} s passed before extraction finished"
_DEADLINE_BATCH = 8  # documents per extract_many call when a deadline is set
_DEADLINE_GRACE = 0.25  # seconds an extractor that takes deadline= gets to wind down


@runtime_checkable
class StageObserver(Protocol):
    """Watches the pipeline's stages (for tracing: LangChain child runs, LlamaIndex spans).

    ``stage(name)`` returns a context manager entered around each stage (``extract``,
    ``build``, ``match``, ``direction``, ``traverse``, ``compile``). It yields a dict
    that the pipeline fills with the stage's counters before the block exits; an
    exception inside the stage propagates through the context manager.
    """

    def stage(self, name: str) -> AbstractContextManager[dict[str, Any]]:
        """Return the context manager for stage ``name``."""
        ...


class _Stages:
    """Times each stage into ``stats`` and forwards it to the observer, if any."""

    def __init__(self, stats: dict[str, Any], observer: StageObserver | None) -> None:
        self.stats = stats
        self.observer = observer

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[dict[str, Any]]:
        with contextlib.ExitStack() as stack:
            summary: dict[str, Any] = (
                stack.enter_context(self.observer.stage(name)) if self.observer else {}
            )
            start = time.perf_counter()
            try:
                yield summary
            finally:
                elapsed = (time.perf_counter() - start) * 1000.0
                key = f"time_{name}_ms"
                self.stats[key] = round(self.stats.get(key, 0.0) + elapsed, 3)


def _require(obj: Any, method: str, argument: str, hint: str) -> None:
    if obj is not None and not callable(getattr(obj, method, None)):
        msg = f"{argument}={obj!r} has no {method}() method; {hint}"
        raise ConfigError(msg, field=argument, value=obj)


class SARGPipeline:
    """Structure-Augmented Reasoning Generation over a set of retrieved documents.

    Args:
        config: Settings; defaults follow the paper (β = 3, K = 3).
        extractor: A :class:`~sarg_integrations.extraction.TripleExtractor`; default the
            offline spaCy :class:`~sarg_integrations.extraction.RuleBasedExtractor` with
            ``config.schema``.
        embedder: An :class:`~sarg_integrations.embedding.Embedder`; default the
            embedded all-MiniLM-L6-v2. Wrapped in a cache so each text is encoded once.
        direction_classifier: A
            :class:`~sarg_integrations.direction.DirectionPredictor`; default the
            packaged :class:`~sarg_integrations.DirectionClassifier` (a head over the
            shared MiniLM embedding; pass
            :class:`~sarg_integrations.CueWordDirectionClassifier` for the rule-based
            fallback). Ignored when ``config.direction`` is set.
        keyphrase_extractor: A :class:`~sarg_integrations.matching.KeyphraseExtractor`;
            default KeyBERT over the pipeline's embedder.
        prompt_template: Overrides the prompt texts.
        query_decomposer: For ``config.strategy="tasr"``: a
            :class:`~sarg_integrations.tasr.QueryDecomposer`, or a language model
            (LangChain, LlamaIndex, callable) to wrap in an
            :class:`~sarg_integrations.tasr.LLMQueryDecomposer`; default ``llm``'s, else
            the offline :class:`~sarg_integrations.tasr.RuleQueryDecomposer`.
        entity_typer: For TaSR: an :class:`~sarg_integrations.tasr.EntityTyper` or a
            language model; default ``llm``'s, else the offline
            :class:`~sarg_integrations.tasr.OfflineEntityTyper`.
        llm: For TaSR: one language model that both decomposes and types (the
            offline typer stays the fallback for unreadable typing answers).

    Models load lazily on the first run, so constructing a pipeline is cheap.

    Example:
        >>> class Letters:  # a toy embedder: bag of letters
        ...     def embed(self, texts):
        ...         import numpy as np
        ...         return np.array([[t.count(c) for c in "abcdefghijklmnopqrstuvwxyz"]
        ...                          for t in texts], dtype=float)
        >>> class Rules:  # a toy extractor: "X causes Y." sentences
        ...     def extract(self, doc):
        ...         out = []
        ...         for s in doc.text.split("."):
        ...             if " causes " in s:
        ...                 cause, effect = s.strip().split(" causes ")
        ...                 out.append(Triple(cause, "causes", effect, document_id=doc.id,
        ...                                   sentence=s.strip()))
        ...         return out
        >>> class Keywords:
        ...     def extract(self, query):
        ...         return ["storm"]
        >>> from sarg_integrations.direction import CueWordDirectionClassifier
        >>> pipe = SARGPipeline(SARGConfig(similarity_threshold=0.9), extractor=Rules(),
        ...                     embedder=Letters(), keyphrase_extractor=Keywords(),
        ...                     direction_classifier=CueWordDirectionClassifier())
        >>> result = pipe.run("What does a storm lead to?",
        ...                   ["storm causes rain. rain causes flood.", "flood causes damage."])
        >>> result.direction.direction.value, result.chains[0].to_text()
        ('forward', 'storm --[causes]--> rain --[causes]--> flood --[causes]--> damage')
    """

    def __init__(
        self,
        config: SARGConfig | None = None,
        *,
        extractor: TripleExtractor | None = None,
        embedder: Embedder | None = None,
        direction_classifier: DirectionPredictor | None = None,
        keyphrase_extractor: KeyphraseExtractor | None = None,
        prompt_template: PromptTemplate | None = None,
        query_decomposer: Any = None,
        entity_typer: Any = None,
        llm: Any = None,
    ) -> None:
        if config is not None and not isinstance(config, SARGConfig):
            msg = (
                f"config must be a SARGConfig, got {type(config).__name__}; "
                "build one with SARGConfig(...)"
            )
            raise ConfigError(msg, field="config", value=config)
        self.config = config or SARGConfig()
        _require(
            extractor,
            "extract",
            "extractor",
            "pass an object with extract(document) -> list[Triple]",
        )
        _require(embedder, "embed", "embedder", "pass an object with embed(texts) -> array")
        _require(
            direction_classifier,
            "predict_direction",
            "direction_classifier",
            "pass an object with "
            "predict_direction(query, query_embedding=None) -> DirectionPrediction",
        )
        _require(
            keyphrase_extractor,
            "extract",
            "keyphrase_extractor",
            "pass an object with extract(query) -> list[str]",
        )
        if prompt_template is not None and not isinstance(prompt_template, PromptTemplate):
            msg = f"prompt_template must be a PromptTemplate, got {type(prompt_template).__name__}"
            raise ConfigError(msg, field="prompt_template", value=prompt_template)
        if extractor is None:
            from sarg_integrations.extraction.rules import RuleBasedExtractor

            extractor = RuleBasedExtractor(schema=self.config.schema)
        self.extractor = extractor
        self.embedder = CachedEmbedder(
            embedder or SentenceTransformerEmbedder(), max_size=self.config.embedding_cache_size
        )
        self.direction_classifier = direction_classifier or default_direction_classifier(embedder)
        self.keyphrase_extractor = keyphrase_extractor or KeyBERTKeyphraseExtractor(
            self.embedder,
            top_n=self.config.max_keyphrases,
            ngram_max=self.config.keyphrase_ngram_max,
        )
        self.prompt_template = prompt_template or PromptTemplate()
        self.tasr_strategy: Any = None
        if self.config.strategy == "tasr" or query_decomposer or entity_typer or llm:
            from sarg_integrations.tasr.strategy import build_tasr_strategy

            self.tasr_strategy = build_tasr_strategy(
                self, query_decomposer=query_decomposer, entity_typer=entity_typer, llm=llm
            )

    # ------------------------------------------------------------------ public API

    def run(
        self,
        query: str,
        documents: Iterable[DocumentLike],
        *,
        observer: StageObserver | None = None,
        deadline: float | None = None,
    ) -> SARGResult:
        """Run SARG on ``documents`` for ``query`` and return everything it produced.

        Args:
            query: The user's question.
            documents: Strings, ``{"id", "text", ...}`` dicts or
                :class:`~sarg_integrations.schema.SourceDocument` records.
            observer: Receives every stage (for tracing); see :class:`StageObserver`.
            deadline: Seconds extraction may take for this run; ``None`` uses
                ``config.deadline_seconds``. Documents not extracted by then are listed
                in ``skipped_documents`` (:data:`PAST_DEADLINE`) and the run goes on
                with the triples it has. With a deadline, extraction runs in a daemon
                worker thread that is abandoned if it does not return in time, so
                even an extractor that hangs cannot hang the caller.

        Raises:
            InputError: Empty query, no documents, a malformed document or duplicate ids.
            ConfigError: ``deadline`` is not a number of seconds > 0.
        """
        limit = self._deadline(deadline)
        query, docs, stats, stages, start = self._begin(query, documents, observer)
        with stages("extract") as summary:
            if limit is None:
                outcomes = self._extract(docs)
            else:
                stats["deadline_seconds"] = limit
                outcomes = self._extract_until(docs, limit)
            triples, skipped = self._collect(docs, outcomes, stats, summary)
        return self._structure(query, docs, triples, skipped, stats, stages, start)

    async def arun(
        self,
        query: str,
        documents: Iterable[DocumentLike],
        *,
        observer: StageObserver | None = None,
        deadline: float | None = None,
    ) -> SARGResult:
        """Async :meth:`run`, with native async extraction when the extractor has it.

        ``aextract_many`` (or ``aextract`` per document, concurrently) is awaited when
        the extractor defines it; otherwise extraction runs in a worker thread. The CPU
        stages run in a worker thread so the event loop stays responsive. ``deadline``
        works as in :meth:`run`; pending async extractions are cancelled when it passes.
        """
        limit = self._deadline(deadline)
        query, docs, stats, stages, start = self._begin(query, documents, observer)
        with stages("extract") as summary:
            if limit is None:
                outcomes = await self._aextract(docs)
            else:
                stats["deadline_seconds"] = limit
                outcomes = await self._aextract_until(docs, limit)
            triples, skipped = self._collect(docs, outcomes, stats, summary)
        return await asyncio.to_thread(
            self._structure, query, docs, triples, skipped, stats, stages, start
        )

    def warm_up(self) -> None:
        """Load the models now (the encoder, and the extractor's if it has ``warm_up``).

        Runs load models lazily; call this at service start to keep the first query fast.
        """
        for component in (self.extractor, self.embedder):
            warm = getattr(component, "warm_up", None)
            if callable(warm):
                warm()

    # ------------------------------------------------------------------ stages

    @staticmethod
    def _begin(
        query: str, documents: Iterable[DocumentLike], observer: StageObserver | None
    ) -> tuple[str, list[SourceDocument], dict[str, Any], _Stages, float]:
        """Validate the input and start the run's clock and stage bookkeeping."""
        query = validate_query(query)
        docs = coerce_documents(documents)
        stats: dict[str, Any] = {}
        return query, docs, stats, _Stages(stats, observer), time.perf_counter()

    def _extract(self, docs: Sequence[SourceDocument]) -> list[Any]:
        """One outcome per document: triples, an ExtractionOutcome or an exception."""
        usable = [d for d in docs if d.text.strip()]
        outcomes: list[Any] = []
        extract_many = getattr(self.extractor, "extract_many", None)
        if callable(extract_many) and not self.config.show_progress and usable:
            try:
                outcomes = list(extract_many(usable))
            except Exception:
                outcomes = []
            if len(outcomes) != len(usable):
                outcomes = []
        if not outcomes:
            outcomes = [self._extract_one(doc) for doc in self._progress(usable)]
        return _align(docs, usable, outcomes)

    def _deadline(self, deadline: float | None) -> float | None:
        if deadline is None:
            return self.config.deadline_seconds
        return check_deadline("deadline", deadline)

    def _extract_until(self, docs: Sequence[SourceDocument], seconds: float) -> list[Any]:
        """:meth:`_extract` in a daemon worker thread that the caller waits on for ``seconds``.

        An extractor whose ``extract_many`` takes ``deadline=`` gets the whole batch (it
        stops itself); any other is fed small batches so that documents finished
        before the deadline are kept. Documents without an outcome when the time is up
        are reported as past the deadline; a worker that is still busy is abandoned
        (Python cannot stop a thread; it ends when the extractor returns).
        """
        usable = [d for d in docs if d.text.strip()]
        done: dict[int, Any] = {}
        lock = threading.Lock()
        finished, abandoned = threading.Event(), threading.Event()
        many = getattr(self.extractor, "extract_many", None)
        stops_itself = callable(many) and _takes_deadline(many)

        def record(first: int, outcomes: Sequence[Any]) -> None:
            with lock:
                done.update(enumerate(outcomes, start=first))

        def work() -> None:
            try:
                if stops_itself:
                    try:
                        outcomes: list[Any] = list(many(usable, deadline=seconds))
                    except Exception as exc:
                        outcomes = [exc] * len(usable)
                    if len(outcomes) != len(usable):
                        msg = f"extract_many returned {len(outcomes)} outcomes for {len(usable)}"
                        outcomes = [ExtractionOutcome(error=msg)] * len(usable)
                    record(0, outcomes)
                    return
                step = _DEADLINE_BATCH if callable(many) else 1
                for first in range(0, len(usable), step):
                    if abandoned.is_set():
                        return
                    batch = usable[first : first + step]
                    record(first, self._extract(batch))
            except BaseException as exc:  # keep the worker quiet; the caller reports it
                with lock:
                    for i in range(len(usable)):
                        done.setdefault(i, ExtractionOutcome(error=_describe(exc)))
            finally:
                finished.set()

        if usable:
            worker = threading.Thread(target=work, name="sarg-extract", daemon=True)
            worker.start()
            finished.wait(seconds + (_DEADLINE_GRACE if stops_itself else 0.0))
            abandoned.set()
        late = _past_deadline(seconds)
        with lock:
            outcomes = [done.get(i, late) for i in range(len(usable))]
        return _align(docs, usable, outcomes)

    async def _aextract_until(self, docs: Sequence[SourceDocument], seconds: float) -> list[Any]:
        """:meth:`_aextract` under a deadline: late async extractions are cancelled."""
        usable = [d for d in docs if d.text.strip()]
        many = getattr(self.extractor, "aextract_many", None)
        one = getattr(self.extractor, "aextract", None)
        late = _past_deadline(seconds)
        outcomes: list[Any]
        if not usable:
            return _align(docs, usable, [])
        if inspect.iscoroutinefunction(many) and _takes_deadline(many):
            outcomes = await _within(many(usable, deadline=seconds), seconds + _DEADLINE_GRACE)
        elif inspect.iscoroutinefunction(one):
            tasks = [asyncio.ensure_future(one(d)) for d in usable]
            _, pending = await asyncio.wait(tasks, timeout=seconds)
            for task in pending:
                task.cancel()
            outcomes = [
                late if task in pending or task.cancelled() else (task.exception() or task.result())
                for task in tasks
            ]
            return _align(docs, usable, outcomes)
        elif inspect.iscoroutinefunction(many):
            outcomes = await _within(many(usable), seconds)
        else:
            return await asyncio.to_thread(self._extract_until, docs, seconds)
        if outcomes is None:
            outcomes = [late] * len(usable)
        elif isinstance(outcomes, Exception):
            outcomes = [outcomes] * len(usable)
        elif len(outcomes) != len(usable):
            msg = f"aextract_many returned {len(outcomes)} outcomes for {len(usable)} documents"
            outcomes = [ExtractionOutcome(error=msg)] * len(usable)
        return _align(docs, usable, outcomes)

    def _extract_one(self, doc: SourceDocument) -> Any:
        try:
            return list(self.extractor.extract(doc))
        except Exception as exc:
            return exc

    async def _aextract(self, docs: Sequence[SourceDocument]) -> list[Any]:
        usable = [d for d in docs if d.text.strip()]
        many = getattr(self.extractor, "aextract_many", None)
        one = getattr(self.extractor, "aextract", None)
        if usable and many is not None and inspect.iscoroutinefunction(many):
            try:
                outcomes = list(await many(usable))
            except Exception as exc:
                outcomes = [exc] * len(usable)
        elif usable and one is not None and inspect.iscoroutinefunction(one):
            outcomes = list(await asyncio.gather(*(one(d) for d in usable), return_exceptions=True))
        else:
            return await asyncio.to_thread(self._extract, docs)
        if len(outcomes) != len(usable):
            msg = f"aextract_many returned {len(outcomes)} outcomes for {len(usable)} documents"
            outcomes = [ExtractionOutcome(error=msg)] * len(usable)
        return _align(docs, usable, outcomes)

    def _collect(
        self,
        docs: Sequence[SourceDocument],
        outcomes: Sequence[Any],
        stats: dict[str, Any],
        summary: dict[str, Any],
    ) -> tuple[list[Triple], list[SkippedDocument]]:
        triples: list[Triple] = []
        skipped: list[SkippedDocument] = []
        for doc, outcome in zip(docs, outcomes):
            if outcome is None:
                skipped.append(SkippedDocument(doc.id, "empty or whitespace-only text"))
                continue
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, Exception):
                    raise outcome  # KeyboardInterrupt, SystemExit, CancelledError
                outcome = ExtractionOutcome(
                    error=f"extractor error: {type(outcome).__name__}: {outcome}"
                )
            elif not isinstance(outcome, ExtractionOutcome):
                outcome = ExtractionOutcome(triples=list(outcome))
            for key, value in outcome.stats.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    stats[key] = stats.get(key, 0) + value
            kept = [
                t if t.document_id == doc.id else dataclasses.replace(t, document_id=doc.id)
                for t in outcome.triples
                if isinstance(t, Triple) and t.cause.strip() and t.effect.strip()
            ]
            if outcome.error:
                skipped.append(SkippedDocument(doc.id, outcome.error))
            elif not kept:
                skipped.append(SkippedDocument(doc.id, "no reasoning-schema triples found"))
            triples.extend(kept)
        summary.update(documents=len(docs), documents_skipped=len(skipped), triples=len(triples))
        return triples, skipped

    def _progress(self, items: Sequence[SourceDocument]) -> Iterable[SourceDocument]:
        if not self.config.show_progress:
            return items
        from tqdm.auto import tqdm

        return tqdm(items, desc="extracting", unit="doc")

    def _structure(
        self,
        query: str,
        docs: Sequence[SourceDocument],
        triples: list[Triple],
        skipped: list[SkippedDocument],
        stats: dict[str, Any],
        stages: _Stages,
        start: float,
    ) -> SARGResult:
        if self.config.strategy == "tasr":
            return self.tasr_strategy.run(query, docs, triples, skipped, stats, stages, start)
        cfg = self.config
        encode_before = self.embedder.encode_seconds
        misses_before, hits_before = self.embedder.misses, self.embedder.hits
        with stages("load_models"):
            self.embedder.warm_up()
        structuring_start = time.perf_counter()

        with stages("build") as summary:
            graph = build_reasoning_graph(
                triples, embedder=self.embedder, merge_threshold=cfg.merge_threshold
            )
            summary.update(
                nodes=graph.number_of_nodes, edges=graph.number_of_edges, merges=len(graph.merges)
            )
        g = graph.graph
        nodes = sorted(g.nodes)

        with stages("match") as summary:
            keyphrases = self.keyphrase_extractor.extract(query) if nodes else []
            texts = [query, *keyphrases, *nodes]
            vectors = self.embedder.embed(texts)
            query_vec = vectors[:1]
            phrase_vecs = vectors[1 : 1 + len(keyphrases)]
            node_vecs = vectors[1 + len(keyphrases) :]
            entries = match_entry_nodes(
                nodes,
                node_vecs,
                keyphrases,
                phrase_vecs,
                threshold=cfg.similarity_threshold,
                max_nodes=cfg.max_entry_nodes,
            )
            summary.update(
                keyphrases=list(keyphrases),
                entry_nodes=[(e.node, round(e.similarity, 4)) for e in entries],
            )

        with stages("direction") as summary:
            direction = self._direction(query, query_vec[0] if len(query_vec) else None)
            summary.update(
                direction=direction.direction.value,
                confidence=direction.confidence,
                method=direction.method,
            )

        with stages("traverse") as summary:
            query_sim = (
                dict(zip(nodes, cosine_matrix(node_vecs, query_vec)[:, 0].tolist()))
                if nodes
                else {}
            )
            search_stats = BeamSearchStats()
            found = list(
                beam_search_chains(
                    g,
                    [e.node for e in entries],
                    query_sim,
                    direction.direction,
                    width=cfg.beam_width,
                    max_depth=cfg.max_depth,
                    stats=search_stats,
                )
            )
            candidates = [
                chain_from_nodes(g, chain_nodes, score, direction.direction)
                for chain_nodes, score in found
            ]
            kept, candidates = select_chains(candidates, cfg.top_k)
            summary.update(
                chains_considered=len(candidates),
                chains_kept=len(kept),
                beam_expansions=search_stats.expansions,
            )

        with stages("compile") as summary:
            fallback = None
            if not triples:
                fallback = NO_TRIPLES
            elif not entries:
                fallback = NO_ENTRY_NODES.format(tau=cfg.similarity_threshold)
            elif not kept:
                fallback = NO_CHAINS.format(direction=direction.direction.value)
            evidence, prompt = self._compile(query, docs, kept, fallback, query_vec, stats)
            summary.update(
                fallback_reason=fallback,
                evidence_documents=[p.document_id for p in evidence],
                prompt_chars=len(prompt),
            )

        end = time.perf_counter()
        encoder_ms = (self.embedder.encode_seconds - encode_before) * 1000.0
        stats.update(
            {
                "documents": len(docs),
                "documents_skipped": len(skipped),
                "triples": len(triples),
                "nodes": graph.number_of_nodes,
                "edges": graph.number_of_edges,
                "merges": len(graph.merges),
                "self_loops_dropped": graph.self_loops_dropped,
                "keyphrases": len(keyphrases),
                "entry_nodes": len(entries),
                "chains_considered": len(candidates),
                "chains_kept": len(kept),
                "beam_expansions": search_stats.expansions,
                "beam_pruned": search_stats.pruned,
                "chains_capped": search_stats.capped,
                "embeddings_computed": self.embedder.misses - misses_before,
                "embeddings_reused": self.embedder.hits - hits_before,
                "time_encoder_ms": round(encoder_ms, 3),
                "time_structuring_ms": round((end - structuring_start) * 1000.0, 3),
                "time_total_ms": round((end - start) * 1000.0, 3),
            }
        )
        return SARGResult(
            query=query,
            document_ids=[d.id for d in docs],
            triples=triples,
            graph=graph,
            keyphrases=list(keyphrases),
            entry_nodes=entries,
            direction=direction,
            candidate_chains=candidates,
            chains=kept,
            evidence=evidence,
            prompt=prompt,
            fallback_reason=fallback,
            skipped_documents=skipped,
            stats=stats,
            config=cfg.to_dict(),
        )

    def _direction(self, query: str, query_embedding: Any) -> DirectionPrediction:
        if self.config.direction is not None:
            from sarg_integrations.direction import FixedDirection

            return FixedDirection(self.config.direction).predict_direction(query)
        prediction = self.direction_classifier.predict_direction(query, query_embedding)
        if not isinstance(prediction, DirectionPrediction):
            msg = (
                f"direction_classifier.predict_direction returned {type(prediction).__name__}; "
                "it must return a DirectionPrediction"
            )
            raise ConfigError(msg, field="direction_classifier", value=self.direction_classifier)
        return prediction

    def _compile(
        self,
        query: str,
        docs: Sequence[SourceDocument],
        chains: Sequence[ReasoningChain],
        fallback: str | None,
        query_vec: Any,
        stats: dict[str, Any],
    ) -> tuple[list[EvidencePassage], str]:
        """The evidence and the prompt: chains + their evidence (+ fill), or the flat context.

        Shared by both strategies. ``query_vec`` (the query's embedding, shape (1, d)) is
        only needed with ``config.evidence_fill``; ``None`` embeds the query then.
        """
        fill = self.config.evidence_fill is not None
        if fill and query_vec is None:
            query_vec = self.embedder.embed([query])
        if fallback is None:
            evidence = self._evidence(docs, chains)
            if fill:
                evidence += self._fill_evidence(query_vec, docs, evidence, stats)
            return evidence, compile_prompt(query, chains, evidence, self.prompt_template)
        if fill:
            evidence = self._fill_evidence(query_vec, docs, [], stats)
        else:
            evidence = [
                EvidencePassage(d.id, d.text, (), dict(d.metadata)) for d in docs if d.text.strip()
            ]
        return evidence, compile_flat_prompt(query, evidence, self.prompt_template)

    def _evidence(
        self, docs: Sequence[SourceDocument], chains: Sequence[ReasoningChain]
    ) -> list[EvidencePassage]:
        by_id = {d.id: d for d in docs}
        cited: dict[str, list[int]] = {}
        sentences: dict[str, list[str]] = {}
        for number, chain in enumerate(chains, start=1):
            for hop in chain.hops:
                for doc_id, sentence in zip(hop.document_ids, hop.sentences):
                    numbers = cited.setdefault(doc_id, [])
                    if number not in numbers:
                        numbers.append(number)
                    doc_sentences = sentences.setdefault(doc_id, [])
                    if sentence and sentence not in doc_sentences:
                        doc_sentences.append(sentence)
        passages = []
        for doc_id, numbers in cited.items():
            doc = by_id.get(doc_id)
            if doc is None:
                continue
            if self.config.evidence == "sentences" and sentences.get(doc_id):
                text = " ".join(sentences[doc_id])
            else:
                text = doc.text
            passages.append(EvidencePassage(doc_id, text, tuple(numbers), dict(doc.metadata)))
        return passages

    def _fill_evidence(
        self,
        query_vec: Any,
        docs: Sequence[SourceDocument],
        already: Sequence[EvidencePassage],
        stats: dict[str, Any],
    ) -> list[EvidencePassage]:
        """``config.evidence_fill`` more documents, by bridge-guided relevance."""
        from sarg_integrations.evidence import bridge_guided_selection, bridge_links

        taken = {p.document_id for p in already}
        candidates = [d for d in docs if d.text.strip() and d.id not in taken]
        if not candidates:
            return []
        vectors = self.embedder.embed([d.text for d in candidates])
        relevance = dict(
            zip((d.id for d in candidates), cosine_matrix(vectors, query_vec)[:, 0].tolist())
        )
        links = bridge_links(candidates)
        picked = bridge_guided_selection(
            [d.id for d in candidates], relevance, links, self.config.evidence_fill or 0
        )
        by_id = {d.id: d for d in candidates}
        passages = []
        for i, doc_id in enumerate(picked):
            bridged = any(doc_id in links[earlier] for earlier in picked[:i])
            doc = by_id[doc_id]
            passages.append(
                EvidencePassage(
                    doc_id,
                    doc.text,
                    (),
                    dict(doc.metadata),
                    selected_by="bridge" if bridged else "relevance",
                )
            )
        stats["evidence_filled"] = len(passages)
        stats["evidence_bridged"] = sum(p.selected_by == "bridge" for p in passages)
        return passages


def _takes_deadline(method: Any) -> bool:
    """Whether an extractor method accepts ``deadline=`` (it then stops itself in time)."""
    try:
        return "deadline" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


async def _within(call: Any, seconds: float) -> Any:
    """Await ``call`` for at most ``seconds``: its result, the exception it raised, or None."""
    try:
        return list(await asyncio.wait_for(call, seconds))
    except asyncio.TimeoutError:
        return None
    except Exception as exc:
        return exc


def _past_deadline(seconds: float) -> ExtractionOutcome:
    """The outcome of a document that was not extracted within ``seconds``."""
    return ExtractionOutcome(
        error=PAST_DEADLINE.format(seconds=seconds), stats={"documents_past_deadline": 1}
    )


def _describe(exc: BaseException) -> str:
    return f"extractor error: {type(exc).__name__}: {exc}"


def _align(
    docs: Sequence[SourceDocument], usable: Sequence[SourceDocument], outcomes: Sequence[Any]
) -> list[Any]:
    """Spread outcomes of the non-empty documents back over all documents (None = empty)."""
    by_position = dict(zip((id(d) for d in usable), outcomes))
    return [by_position.get(id(d)) for d in docs]
