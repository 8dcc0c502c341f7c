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
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sarg_integrations.config import check_deadline
from sarg_integrations.errors import ConfigError, ExtractionError, InputError
from sarg_integrations.extraction.base import ExtractionOutcome
from sarg_integrations.extraction.chunking import Chunk, estimate_tokens, split_into_chunks
from sarg_integrations.extraction.grounding import DocumentIndex, ground_items
from sarg_integrations.extraction.llm.cache import (
    ExtractionCache,
    InvalidEntry,
    as_cache,
    cache_key,
)
from sarg_integrations.extraction.llm.parsing import AnswerParseError, ParsedAnswer, parse_answer
from sarg_integrations.extraction.llm.prompts import ExtractionPrompt, get_prompt
from sarg_integrations.extraction.prefill import COUNTERS
from sarg_integrations.models.completion import (
    Completion,
    CompletionRequest,
    as_completion_model,
    model_identity,
)
from sarg_integrations.models.errors import classify_error, retry_after
from sarg_integrations.models.sync import SyncRunner
from sarg_integrations.schema import SourceDocument, Triple

__all__ = ["STATS_KEYS", "LLMTripleExtractor", "classify_error"]

log = logging.getLogger(__name__)
T = TypeVar("T")

STATS_KEYS = (
    "llm_calls",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "parse_repairs",
    "dropped_ungrounded",
    "extraction_seconds",
)
"""The accounting keys every outcome carries (the pipeline sums them per run)."""

# --------------------------------------------------------------------------- records


@dataclass
class _ChunkResult:
    """What one chunk produced (shared by every occurrence of the chunk in a batch)."""

    items: list[dict[str, Any]] | None = None
    error: str | None = None
    raw_output: str | None = None
    stats: collections.Counter[str] = field(default_factory=collections.Counter)
    seconds: float = 0.0
    from_cache: bool = False


@dataclass
class _DocResult:
    outcome: ExtractionOutcome
    failed: bool = False
    raw_output: str | None = None


@dataclass
class _Plan:
    document: SourceDocument
    index: DocumentIndex
    chunks: list[Chunk]
    keys: list[str]


# --------------------------------------------------------------------------- extractor


class LLMTripleExtractor:
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
    def _unwrap(result: _DocResult, document_id: str) -> list[Triple]:
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
    ) -> list[_DocResult]:
        started = time.perf_counter()
        deadline_at = None if deadline is None else started + deadline
        plans = []
        for doc in documents:
            chunks = self.chunk(doc)
            keys = [self.cache_key(c.text) for c in chunks]
            plans.append(_Plan(doc, DocumentIndex.build(doc.text), chunks, keys))
        unique: dict[str, str] = {}
        for plan in plans:
            for chunk, key in zip(plan.chunks, plan.keys):
                unique.setdefault(key, chunk.text)
        results, cache_stats = await self._resolve(unique, deadline, deadline_at)
        wall = time.perf_counter() - started
        return self._assemble(plans, results, wall, cache_stats)

    async def _resolve(
        self, unique: dict[str, str], deadline: float | None, deadline_at: float | None
    ) -> tuple[dict[str, _ChunkResult], collections.Counter[str]]:
        """The result of every chunk ``{key: text}``: from the cache, else from the model.

        Also returns the cache's counters (``cache_errors``, ``cache_invalid_entries``).
        """
        cache_stats: collections.Counter[str] = collections.Counter()
        cached, cache_stats["cache_errors"] = await self._cache_lookup(
            list(unique), _left(deadline_at)
        )
        results: dict[str, _ChunkResult] = {}
        for key, value in cached.items():
            items = _cached_items(value)
            if items is None:
                cache_stats["cache_invalid_entries"] += 1
            else:
                results[key] = _ChunkResult(items=items, from_cache=True)
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
                    results[key] = _ChunkResult(error=reason)
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

    def _warn_cache(self, what: str, exc: BaseException, consequence: str) -> None:
        """Log a cache failure: a warning at most every 30 s, the repeats at debug level."""
        now = time.monotonic()
        with self._rng_lock:
            loud = now - self._cache_warned_at >= 30.0
            if loud:
                self._cache_warned_at = now
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        log.log(
            logging.WARNING if loud else logging.DEBUG,
            "extraction cache %s (%s); %s (counted in stats['cache_errors'])",
            what,
            detail,
            consequence,
        )

    def _assemble(
        self,
        plans: Sequence[_Plan],
        results: dict[str, _ChunkResult],
        wall: float,
        cache_stats: collections.Counter[str],
    ) -> list[_DocResult]:
        owners: set[str] = set()
        busy: list[float] = []
        drafts: list[
            tuple[
                _Plan, collections.Counter[str], list[Triple], list[str], list[str], str | None, int
            ]
        ] = []
        for plan in plans:
            stats: collections.Counter[str] = collections.Counter({k: 0 for k in STATS_KEYS})
            stats["chunks"] = len(plan.chunks)
            doc_busy = 0.0
            triples: list[Triple] = []
            failures: list[str] = []
            drop_examples: list[str] = []
            raw_output: str | None = None
            dropped = 0
            for chunk, key in zip(plan.chunks, plan.keys):
                res = results[key]
                if res.from_cache or key in owners:
                    stats["cache_hits"] += 1
                else:
                    owners.add(key)
                    stats.update(res.stats)
                    doc_busy += res.seconds
                if res.items is None:
                    failures.append(f"chunk {chunk.index + 1}/{len(plan.chunks)}: {res.error}")
                    raw_output = res.raw_output if res.raw_output is not None else raw_output
                    continue
                grounded = ground_items(
                    res.items,
                    document_id=plan.document.id,
                    index=plan.index,
                    chunk=chunk,
                    allowed_types=self.prompt.allowed_types,
                    default_type=self.prompt.default_relation_type,
                    window=self.grounding_window,
                    min_token_overlap=self.min_token_overlap,
                    evidence_similarity=self.evidence_similarity,
                    screen_instructions=self.screen_instructions,
                )
                stats["triples_proposed"] += len(res.items)
                stats["dropped_ungrounded"] += grounded.dropped_ungrounded
                stats["dropped_instruction"] += grounded.dropped_instruction
                stats["dropped_off_schema"] += grounded.dropped_off_schema
                dropped += grounded.dropped_ungrounded + grounded.dropped_off_schema
                drop_examples.extend(grounded.examples)
                triples.extend(grounded.triples)
            if not drafts:  # the batch's cache counters go to its first document
                stats.update(+cache_stats)
            triples = _dedupe(triples, stats)
            busy.append(doc_busy)
            drafts.append((plan, stats, triples, failures, drop_examples, raw_output, dropped))
        total_busy = sum(busy)
        out: list[_DocResult] = []
        for (plan, stats, triples, failures, drop_examples, raw_output, dropped), doc_busy in zip(
            drafts, busy
        ):
            share = wall * (doc_busy / total_busy) if total_busy > 0 else wall / max(1, len(drafts))
            stats["extraction_seconds"] = round(share, 6)
            stats["triples_kept"] = len(triples)
            n = len(plan.chunks)
            error: str | None = None
            failed = False
            if failures and len(failures) == n:
                failed = True
                more = f" (and {n - 1} more chunk(s) failed)" if n > 1 else ""
                error = f"LLM extraction failed: {failures[0].split(': ', 1)[1]}{more}"
            elif failures:
                error = (
                    f"{len(failures)} of {n} chunks failed ({failures[0]}); the triples of the "
                    "other chunks were kept"
                )
            elif not triples and dropped:
                error = (
                    f"all {dropped} triple(s) the model proposed were dropped by grounding "
                    f"(e.g. {drop_examples[0]})"
                )
            elif not triples:
                error = f"the model found no {self.prompt.name}-schema relations ({n} chunk(s))"
            numeric = {k: (int(v) if isinstance(v, int) else float(v)) for k, v in stats.items()}
            out.append(_DocResult(ExtractionOutcome(triples, error, numeric), failed, raw_output))
        return out

    # ------------------------------------------------------------------ one chunk

    async def _extract_chunk(self, text: str, key: str, sem: asyncio.Semaphore) -> _ChunkResult:
        started = time.perf_counter()
        result = _ChunkResult()
        try:
            await self._extract_chunk_into(text, key, sem, result)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("LLM extraction of a chunk failed unexpectedly")
            result.items = None
            result.error = f"unexpected error: {type(exc).__name__}: {exc}"
        result.seconds = time.perf_counter() - started
        return result

    async def _extract_chunk_into(
        self, text: str, key: str, sem: asyncio.Semaphore, result: _ChunkResult
    ) -> None:
        schema = self.prompt.json_schema() if self.use_structured_output else None
        request = CompletionRequest(self.prompt.messages(text), schema)
        completion, error = await self._call(request, sem, result.stats)
        if completion is None:
            result.error = error
            return
        try:
            parsed = self._parse(completion)
        except AnswerParseError as first:
            if not self.repair:
                result.error = f"unusable answer: {first}"
                result.raw_output = completion.text
                return
            result.stats["parse_repairs"] += 1
            repair = CompletionRequest(
                self.prompt.repair_messages(text, completion.text, str(first)), schema
            )
            second, error = await self._call(repair, sem, result.stats)
            if second is None:
                result.error = f"unusable answer ({first}); the repair re-ask failed: {error}"
                result.raw_output = completion.text
                return
            try:
                parsed = self._parse(second)
            except AnswerParseError as again:
                result.error = f"unusable answer after one repair re-ask: {again}"
                result.raw_output = second.text
                return
            completion = second
        result.stats["truncated_answers"] += int(parsed.truncated)
        result.stats["invalid_items"] += parsed.invalid_items
        result.items = parsed.items
        await self._cache_store(key, parsed, completion, result.stats)

    @staticmethod
    def _parse(completion: Completion) -> ParsedAnswer:
        if completion.refusal:
            msg = f"the model refused: {completion.refusal[:160]!r}"
            raise AnswerParseError(msg, kind="refusal", raw_output=completion.refusal)
        return parse_answer(completion.text, completion.data)

    async def _cache_store(
        self,
        key: str,
        parsed: ParsedAnswer,
        completion: Completion,
        stats: collections.Counter[str],
    ) -> None:
        if self.cache is None:
            return
        value = {
            "format": 1,
            "triples": parsed.items,
            "fixes": list(parsed.fixes),
            "truncated": parsed.truncated,
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            "model": self.model_identity,
            "prompt": self.prompt.fingerprint,
        }
        try:
            await asyncio.to_thread(self.cache.set_many, {key: value})
        except Exception as exc:
            stats["cache_errors"] += 1
            self._warn_cache("write failed", exc, "the answer is not cached")

    async def _call(
        self,
        request: CompletionRequest,
        sem: asyncio.Semaphore,
        stats: collections.Counter[str],
    ) -> tuple[Completion | None, str | None]:
        """One model call with timeout and retries; ``(completion, None)`` or ``(None, reason)``."""
        attempt = 0
        while True:
            async with sem:
                try:
                    call = self.model.acomplete(request)
                    if self.timeout is not None:
                        completion = await asyncio.wait_for(call, self.timeout)
                    else:
                        completion = await call
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    error: Exception = exc
                    stats["llm_calls"] += 1
                else:
                    if not isinstance(completion, Completion):
                        completion = Completion(str(completion or ""))
                    stats["llm_calls"] += completion.calls
                    if completion.prompt_tokens is None and completion.completion_tokens is None:
                        stats["llm_calls_without_usage"] += completion.calls
                    stats["prompt_tokens"] += completion.prompt_tokens or 0
                    stats["completion_tokens"] += completion.completion_tokens or 0
                    return completion, None
            kind = classify_error(error)
            if kind == "fatal" or attempt >= self.max_retries:
                return None, self._describe(error, kind, attempt + 1)
            stats["llm_retries"] += 1
            if kind == "rate_limit":
                stats["rate_limited"] += 1
            await asyncio.sleep(self._backoff(attempt, error))
            attempt += 1

    def _backoff(self, attempt: int, error: BaseException) -> float:
        cap = min(self.backoff_max, self.backoff_base * (2**attempt))
        with self._rng_lock:
            delay = cap / 2 + self._rng.uniform(0, cap / 2)
        hint = retry_after(error)
        if hint is not None:
            delay = max(delay, min(hint, self.backoff_max))
        return delay

    def _describe(self, error: BaseException, kind: str, attempts: int) -> str:
        detail = f"{type(error).__name__}: {error}".rstrip(": ")
        if isinstance(error, (asyncio.TimeoutError, TimeoutError)) and not str(error):
            detail = f"no answer within timeout={self.timeout} s"
        if kind == "rate_limit":
            return f"rate limited: gave up after {attempts} attempt(s) ({detail})"
        if kind == "transient":
            return f"model call failed after {attempts} attempt(s) ({detail})"
        return f"model call failed ({detail}); not retried"


# --------------------------------------------------------------------------- helpers


def _left(deadline_at: float | None) -> float | None:
    """Seconds until ``deadline_at`` (a ``perf_counter`` time), never negative."""
    return None if deadline_at is None else max(0.0, deadline_at - time.perf_counter())


def _cached_items(value: Any) -> list[dict[str, Any]] | None:
    if isinstance(value, InvalidEntry):
        return None  # the cache logged it
    if not isinstance(value, dict) or not isinstance(value.get("triples"), list):
        log.warning("ignoring a cache entry of unexpected shape")
        return None
    items = [t for t in value["triples"] if isinstance(t, dict)]
    return items


def _dedupe(triples: list[Triple], stats: collections.Counter[str]) -> list[Triple]:
    seen: set[tuple[str, str, str, tuple[int, int] | None]] = set()
    out = []
    for t in triples:
        key = (t.cause.lower(), t.relation.lower(), t.effect.lower(), t.sentence_span)
        if key in seen:
            stats["duplicates_removed"] += 1
            continue
        seen.add(key)
        out.append(t)
    return out


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
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
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
