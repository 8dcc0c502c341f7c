"""LLM triple extraction that survives real models (paper §3.2, Eq. 1).

:class:`LLMTripleExtractor` asks a language model for the reasoning-schema triples of
each retrieved document and keeps only what the document's own words support:

* **any model** – a LangChain chat model or LLM, a LlamaIndex ``LLM``, or a callable
  ``str -> str`` (sync or async); see
  :func:`~sarg_integrations.models.completion.as_completion_model`;
* **structured output** when the model has it (LangChain ``with_structured_output``,
  LlamaIndex function calling), otherwise a tolerant JSON parser; one repair re-ask
  after an unusable answer, then the chunk is reported as failed – never silently;
* **grounding** – triples whose evidence sentence, cause or effect is not in the
  document, or whose evidence addresses the model, are dropped and counted;
* **long documents** are cut into sentence-aligned chunks under a token budget;
* **concurrency** – at most ``max_concurrency`` calls in flight, exponential backoff
  with jitter on rate-limit and transient errors, a per-call timeout; the sync entry
  points also work inside a running event loop (Jupyter);
* **cache** – a persistent per-chunk cache keyed on (chunk text, model identity,
  prompt fingerprint); the same chunk twice in one batch is extracted once;
* **accounting** – every outcome carries ``llm_calls``, ``cache_hits``,
  ``prompt_tokens``, ``completion_tokens``, ``parse_repairs``, ``dropped_ungrounded``
  and ``extraction_seconds`` (plus a few more), which the pipeline sums into
  ``SARGResult.stats``.

``extraction_seconds``: the pipeline sums per-document stats, so the batch's wall time
is shared out over its documents in proportion to the time their own chunks took
(equally when every chunk came from the cache). The shares add up to the batch wall
time, so the summed value is the real extraction time of the run, not the sum of
overlapping call times.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import math
import random
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sarg_integrations._checks import is_whole
from sarg_integrations.config import check_deadline
from sarg_integrations.errors import ConfigError, ExtractionError, InputError
from sarg_integrations.extraction.base import ExtractionOutcome
from sarg_integrations.extraction.chunking import Chunk, estimate_tokens, split_into_chunks
from sarg_integrations.extraction.grounding import DocumentIndex
from sarg_integrations.extraction.llm.cache import (
    ExtractionCache,
    InvalidEntry,
    as_cache,
    cache_key,
    holds_triples,
)
from sarg_integrations.extraction.llm.calls import ChunkCalls, ChunkResult
from sarg_integrations.extraction.llm.outcomes import STATS_KEYS, DocResult, Plan, assemble_outcomes
from sarg_integrations.extraction.llm.prompts import ExtractionPrompt, get_prompt
from sarg_integrations.extraction.prefill import COUNTERS
from sarg_integrations.models.completion import as_completion_model, model_identity
from sarg_integrations.models.errors import classify_error
from sarg_integrations.models.sync import SyncRunner
from sarg_integrations.schema import SourceDocument, Triple

__all__ = ["STATS_KEYS", "LLMTripleExtractor", "classify_error"]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- extractor


class LLMTripleExtractor(ChunkCalls):
    """Few-shot LLM extraction of reasoning-schema triples, grounded in each document.

    Pass it to :class:`~sarg_integrations.SARGPipeline` as ``extractor=``. The pipeline
    calls :meth:`extract_many` (or :meth:`aextract_many` from ``arun``), which returns
    one :class:`~sarg_integrations.extraction.base.ExtractionOutcome` per document:
    the grounded triples, the reason when the document yielded none, and the counters.

    Args:
        llm: A LangChain chat model or LLM, a LlamaIndex ``LLM``, a callable
            ``str -> str`` (sync or async) or a
            :class:`~sarg_integrations.models.completion.CompletionModel`.
        prompt: ``"reasoning"`` (default), ``"generic_spo"`` (the ablation) or an
            :class:`~sarg_integrations.extraction.llm.prompts.ExtractionPrompt` with your examples
            and relation vocabulary.
        cache: ``None`` (no persistent cache), a file path (SQLite), a LangChain
            ``BaseStore[str, bytes]`` or an object with ``get_many`` / ``set_many``.
        max_concurrency: At most this many model calls in flight (default 8).
        max_retries: Retries of a call after a rate-limit or transient error.
        timeout: Seconds per call before it is abandoned and retried (``None``: none).
        backoff_base: First retry delay in seconds; doubles per retry, with jitter.
        backoff_max: The longest delay between retries.
        max_chunk_tokens: Token budget of the document text in one call.
        count_tokens: Counts tokens of a string (default: about 4 characters a token).
        structured_output: ``"auto"`` (native when supported), ``True`` or ``False``.
        repair: Re-ask once after an unparseable answer.
        grounding_window: Sentences around the evidence in which cause and effect must
            occur (``None``: anywhere in the document).
        min_token_overlap: Share of a phrase's content words that must be found.
        evidence_similarity: Minimum similarity for a fuzzy evidence match.
        screen_instructions: Drop triples whose evidence addresses the model.
        model_identity: Overrides the model's cache identity (set it for callables).
        seed: Seeds the retry jitter.

    Raises:
        ConfigError: An invalid argument (the message names it and says the fix).

    Example:
        >>> def model(prompt: str) -> str:  # a scripted stand-in for an LLM
        ...     return ('[{"cause": "heavy rain", "relation": "causes", "effect": "floods", '
        ...             '"relation_type": "causal", "evidence": "Heavy rain causes floods."}]')
        >>> extractor = LLMTripleExtractor(model)
        >>> [(t.cause, t.effect, t.sentence_span) for t in extractor.extract(
        ...     SourceDocument("d1", "Heavy rain causes floods. The museum opened."))]
        [('heavy rain', 'floods', (0, 25))]
    """

    def __init__(
        self,
        llm: Any,
        *,
        prompt: str | ExtractionPrompt = "reasoning",
        cache: Any = None,
        max_concurrency: int = 8,
        max_retries: int = 4,
        timeout: float | None = 120.0,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        max_chunk_tokens: int = 1500,
        count_tokens: Callable[[str], int] | None = None,
        structured_output: bool | str = "auto",
        repair: bool = True,
        grounding_window: int | None = 1,
        min_token_overlap: float = 0.75,
        evidence_similarity: float = 0.85,
        screen_instructions: bool = True,
        model_identity: str | None = None,
        seed: int = 0,
    ) -> None:
        _check_int("max_concurrency", max_concurrency, 1, "e.g. 8")
        _check_int("max_retries", max_retries, 0, "e.g. 4")
        _check_int("max_chunk_tokens", max_chunk_tokens, 16, "e.g. 1500")
        if grounding_window is not None:
            _check_int("grounding_window", grounding_window, 0, "or None for the whole document")
        if timeout is not None:
            _check_float("timeout", timeout, 0.0, open_low=True, hint="seconds > 0, or None")
        _check_float("backoff_base", backoff_base, 0.0, hint="seconds >= 0, e.g. 1.0")
        _check_float("backoff_max", backoff_max, 0.0, hint="seconds >= 0, e.g. 30")
        _check_float(
            "min_token_overlap",
            min_token_overlap,
            0.0,
            high=1.0,
            open_low=True,
            hint="in (0, 1], e.g. 0.75",
        )
        _check_float(
            "evidence_similarity",
            evidence_similarity,
            0.0,
            high=1.0,
            open_low=True,
            hint="in (0, 1], e.g. 0.85",
        )
        if count_tokens is not None and not callable(count_tokens):
            msg = f"count_tokens={count_tokens!r} must be a function str -> int (or None)"
            raise ConfigError(msg, field="count_tokens", value=count_tokens)
        self.prompt = get_prompt(prompt)
        self.model = as_completion_model(
            llm,
            identity=model_identity,
            structured_output=structured_output,
            max_workers=max_concurrency,
        )
        self.cache: ExtractionCache | None = as_cache(cache)
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.max_chunk_tokens = max_chunk_tokens
        self.count_tokens = count_tokens or estimate_tokens
        self.structured_output = structured_output
        self.use_structured_output = bool(
            structured_output and getattr(self.model, "supports_structured_output", False)
        )
        self.repair = bool(repair)
        self.grounding_window = grounding_window
        self.min_token_overlap = float(min_token_overlap)
        self.evidence_similarity = float(evidence_similarity)
        self.screen_instructions = bool(screen_instructions)
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self._cache_warned_at = -math.inf
        self._loop_thread = SyncRunner()
        self._semaphores: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Semaphore
        ] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        cache = type(self.cache).__name__ if self.cache is not None else None
        return (
            f"LLMTripleExtractor(model={self.model_identity!r}, "
            f"prompt={self.prompt.fingerprint!r}, cache={cache}, "
            f"max_concurrency={self.max_concurrency})"
        )

    @property
    def model_identity(self) -> str:
        """The model's cache identity."""
        return model_identity(self.model)

    def close(self) -> None:
        """Stop the private event loop and thread pools (they restart when needed)."""
        self._loop_thread.close()
        closer = getattr(self.model, "close", None)
        if callable(closer):
            closer()

    def __enter__(self) -> LLMTripleExtractor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ public API

    def extract(self, document: SourceDocument) -> list[Triple]:
        """Return the grounded triples of ``document``.

        Raises:
            ExtractionError: Every chunk failed (model error after retries, or an
                unparseable answer after the repair re-ask); ``raw_output`` holds the
                last answer when there was one.
        """
        document = _check_document(document)
        result = self._loop_thread.run(self._run_batch([document]))[0]
        return self._unwrap(result, document.id)

    async def aextract(self, document: SourceDocument) -> list[Triple]:
        """Async :meth:`extract`."""
        document = _check_document(document)
        result = (await self._run_batch([document]))[0]
        return self._unwrap(result, document.id)

    def extract_many(
        self, documents: Iterable[SourceDocument], *, deadline: float | None = None
    ) -> list[ExtractionOutcome]:
        """Extract every document concurrently; one outcome per document, in order.

        Works inside and outside a running event loop (the batch runs on the
        extractor's own loop thread). Never raises for a model or parse failure: those
        are reported in the outcome's ``error``.

        Args:
            documents: The documents.
            deadline: Seconds the whole batch may take (``None``: no limit beyond the
                per-call ``timeout`` and retries). Model calls still running when it
                passes are cancelled; their chunks are reported as failed with the
                reason, and the triples of chunks that finished are kept.

        Example:
            >>> import asyncio
            >>> async def slow(prompt: str) -> str:
            ...     await asyncio.sleep(60)
            ...     return "[]"
            >>> (outcome,) = LLMTripleExtractor(slow).extract_many(
            ...     [SourceDocument("d1", "Rain causes floods.")], deadline=0.05)
            >>> outcome.error
            'LLM extraction failed: deadline of 0.05 s passed before the model answered'
        """
        seconds = None if deadline is None else check_deadline("deadline", deadline)
        docs = [_check_document(d, i) for i, d in enumerate(documents)]
        return [r.outcome for r in self._loop_thread.run(self._run_batch(docs, seconds))]

    async def aextract_many(
        self, documents: Iterable[SourceDocument], *, deadline: float | None = None
    ) -> list[ExtractionOutcome]:
        """Async :meth:`extract_many`, on the caller's event loop (same ``deadline``)."""
        seconds = None if deadline is None else check_deadline("deadline", deadline)
        docs = [_check_document(d, i) for i, d in enumerate(documents)]
        return [r.outcome for r in await self._run_batch(docs, seconds)]

    def chunk(self, document: SourceDocument) -> list[Chunk]:
        """The chunks :meth:`extract` would send for ``document``."""
        return split_into_chunks(
            document.text, self.max_chunk_tokens, count_tokens=self.count_tokens
        )

    def cache_key(self, chunk_text: str) -> str:
        """The cache key of one chunk for this model and prompt (see :func:`.cache.cache_key`)."""
        return cache_key(chunk_text, self.model_identity, self.prompt.fingerprint)

    def fill_cache(self, chunk_texts: Iterable[str]) -> dict[str, int]:
        """Extract the chunks that are not cached yet and store the answers (pre-extraction).

        Chunks already in the cache are skipped (so an interrupted run resumes), the
        same text twice is extracted once, and failures are counted, not raised. Pass
        the texts of :meth:`chunk` so that later queries find them.

        Returns:
            Counters: ``chunks`` (distinct), ``cached``, ``extracted``, ``failed``,
            ``llm_calls``, ``prompt_tokens``, ``completion_tokens``, ``cache_errors``
            (a failed write leaves its chunk uncached) and ``cache_invalid_entries``.

        Raises:
            ConfigError: The extractor has no cache.

        Example:
            >>> from sarg_integrations.extraction.llm.cache import MemoryCache
            >>> extractor = LLMTripleExtractor(lambda p: "[]", cache=MemoryCache())
            >>> extractor.fill_cache(["Rain causes floods."])["extracted"]
            1
            >>> extractor.fill_cache(["Rain causes floods."])["cached"]
            1
        """
        if self.cache is None:
            msg = (
                "fill_cache needs a cache; build the extractor with cache=PATH_OR_URL, "
                "e.g. cache='redis://127.0.0.1:6379/0'"
            )
            raise ConfigError(msg, field="cache", value=None)
        unique = {self.cache_key(text): text for text in chunk_texts}
        results, cache_stats = self._loop_thread.run(self._resolve(unique, None, None))
        counts: collections.Counter[str] = collections.Counter(
            {k: 0 for k in COUNTERS}, chunks=len(unique)
        )
        counts.update(+cache_stats)
        for res in results.values():
            if res.from_cache:
                counts["cached"] += 1
                continue
            counts["extracted" if res.items is not None else "failed"] += 1
            for name in ("llm_calls", "prompt_tokens", "completion_tokens", "cache_errors"):
                counts[name] += res.stats.get(name, 0)
        return {k: int(v) for k, v in counts.items()}

    # ------------------------------------------------------------------ batch

    @staticmethod
    def _unwrap(result: DocResult, document_id: str) -> list[Triple]:
        if result.failed:
            msg = f"document {document_id!r}: {result.outcome.error or 'extraction failed'}"
            raise ExtractionError(
                msg,
                document_id=document_id,
                raw_output=result.raw_output,
            )
        if result.outcome.error:
            log.warning("%s", result.outcome.error)
        return list(result.outcome.triples)

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = asyncio.Semaphore(self.max_concurrency)
            self._semaphores[loop] = sem
        return sem

    async def _run_batch(
        self, documents: Sequence[SourceDocument], deadline: float | None = None
    ) -> list[DocResult]:
        started = time.perf_counter()
        deadline_at = None if deadline is None else started + deadline
        plans = []
        for doc in documents:
            chunks = self.chunk(doc)
            keys = [self.cache_key(c.text) for c in chunks]
            plans.append(Plan(doc, DocumentIndex.build(doc.text), chunks, keys))
        unique: dict[str, str] = {}
        for plan in plans:
            for chunk, key in zip(plan.chunks, plan.keys):
                unique.setdefault(key, chunk.text)
        results, cache_stats = await self._resolve(unique, deadline, deadline_at)
        wall = time.perf_counter() - started
        return assemble_outcomes(
            plans,
            results,
            wall,
            cache_stats,
            prompt=self.prompt,
            window=self.grounding_window,
            min_token_overlap=self.min_token_overlap,
            evidence_similarity=self.evidence_similarity,
            screen_instructions=self.screen_instructions,
        )

    async def _resolve(
        self, unique: dict[str, str], deadline: float | None, deadline_at: float | None
    ) -> tuple[dict[str, ChunkResult], collections.Counter[str]]:
        """The result of every chunk ``{key: text}``: from the cache, else from the model.

        Also returns the cache's counters (``cache_errors``, ``cache_invalid_entries``).
        """
        cache_stats: collections.Counter[str] = collections.Counter()
        cached, cache_stats["cache_errors"] = await self._cache_lookup(
            list(unique), _left(deadline_at)
        )
        results: dict[str, ChunkResult] = {}
        for key, value in cached.items():
            items = _cached_items(value)
            if items is None:
                cache_stats["cache_invalid_entries"] += 1
            else:
                results[key] = ChunkResult(items=items, from_cache=True)
        sem = self._semaphore()
        pending = {
            key: asyncio.ensure_future(self._extract_chunk(text, key, sem))
            for key, text in unique.items()
            if key not in results
        }
        if pending:
            try:
                _, late = await asyncio.wait(pending.values(), timeout=_left(deadline_at))
            except BaseException:
                for task in pending.values():
                    task.cancel()
                raise
            for task in late:
                task.cancel()
            if late:  # let the cancelled calls unwind (briefly; a stuck one is left behind)
                await asyncio.wait(late, timeout=0.1)
            for key, task in pending.items():
                if task in late or task.cancelled():
                    reason = f"deadline of {deadline:g} s passed before the model answered"
                    results[key] = ChunkResult(error=reason)
                else:
                    results[key] = task.result()
        return results, cache_stats

    async def _cache_lookup(
        self, keys: list[str], timeout: float | None = None
    ) -> tuple[dict[str, Any], int]:
        if self.cache is None or not keys:
            return {}, 0
        try:
            lookup = asyncio.to_thread(self.cache.get_many, keys)
            return await asyncio.wait_for(lookup, timeout), 0
        except Exception as exc:
            self._warn_cache("read failed", exc, "extracting without it")
            return {}, 1


# --------------------------------------------------------------------------- helpers


def _left(deadline_at: float | None) -> float | None:
    """Seconds until ``deadline_at`` (a ``perf_counter`` time), never negative."""
    return None if deadline_at is None else max(0.0, deadline_at - time.perf_counter())


def _cached_items(value: Any) -> list[dict[str, Any]] | None:
    if isinstance(value, InvalidEntry):
        return None  # the cache logged it
    if not holds_triples(value):
        log.warning("ignoring a cache entry of unexpected shape")
        return None
    items = [t for t in value["triples"] if isinstance(t, dict)]
    return items


def _check_document(document: Any, position: int | None = None) -> SourceDocument:
    if isinstance(document, SourceDocument):
        return document
    argument = "document" if position is None else f"documents[{position}]"
    msg = (
        f"{argument}={document!r:.80} is not a SourceDocument; build one with "
        "SourceDocument(id, text) (SARGPipeline.run accepts strings and dicts and does this)"
    )
    raise InputError(msg, argument=argument, value=document)


def _check_int(name: str, value: Any, minimum: int, hint: str) -> None:
    if not is_whole(value, minimum):
        msg = f"{name}={value!r} is invalid; use a whole number >= {minimum} ({hint})"
        raise ConfigError(msg, field=name, value=value)


def _check_float(
    name: str,
    value: Any,
    low: float,
    *,
    high: float | None = None,
    open_low: bool = False,
    hint: str,
) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = value > low if open_low else value >= low
        if high is not None:
            ok = ok and value <= high
    if not ok:
        msg = f"{name}={value!r} is invalid; use {hint}"
        raise ConfigError(msg, field=name, value=value)
