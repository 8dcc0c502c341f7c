"""One chunk through the model, for :class:`~.extractor.LLMTripleExtractor`.

:class:`ChunkCalls` (a mixin of the extractor) sends one chunk's prompt to the model and
turns the answer into items: the call under a semaphore with a per-call timeout, retries
with exponential backoff and jitter (at least the model's ``Retry-After``) on rate-limit
and transient errors, one repair re-ask after an unusable answer, and the write of a
parsed answer to the cache. What a chunk produced is a :class:`ChunkResult`.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sarg_integrations.extraction.llm.parsing import AnswerParseError, ParsedAnswer, parse_answer
from sarg_integrations.models.completion import Completion, CompletionRequest
from sarg_integrations.models.errors import classify_error, retry_after

if TYPE_CHECKING:
    import random
    import threading

    from sarg_integrations.extraction.llm.cache import ExtractionCache
    from sarg_integrations.extraction.llm.prompts import ExtractionPrompt

__all__ = ["ChunkCalls", "ChunkResult"]

# The extractor's logger, so that its records keep the name they had before the split.
log = logging.getLogger("sarg_integrations.extraction.llm.extractor")


@dataclass
class ChunkResult:
    """What one chunk produced (shared by every occurrence of the chunk in a batch)."""

    items: list[dict[str, Any]] | None = None
    error: str | None = None
    raw_output: str | None = None
    stats: collections.Counter[str] = field(default_factory=collections.Counter)
    seconds: float = 0.0
    from_cache: bool = False


class ChunkCalls:
    """The per-chunk model calls of :class:`~.extractor.LLMTripleExtractor` (a mixin).

    It reads the extractor's settings (``model``, ``prompt``, ``cache``, ``timeout``,
    ``max_retries``, ``backoff_base`` / ``backoff_max``, ``repair``,
    ``use_structured_output``) and its jitter generator and lock.
    """

    model: Any
    prompt: ExtractionPrompt
    cache: ExtractionCache | None
    timeout: float | None
    max_retries: int
    backoff_base: float
    backoff_max: float
    repair: bool
    use_structured_output: bool
    model_identity: str
    _rng: random.Random
    _rng_lock: threading.Lock
    _cache_warned_at: float

    async def _extract_chunk(self, text: str, key: str, sem: asyncio.Semaphore) -> ChunkResult:
        started = time.perf_counter()
        result = ChunkResult()
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
        self, text: str, key: str, sem: asyncio.Semaphore, result: ChunkResult
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
