"""Pre-extraction: fill the extraction cache for a corpus ahead of the queries.

:func:`prefill` splits every document exactly as a query-time run does (the extractor's
own :meth:`~sarg_integrations.LLMTripleExtractor.chunk`), sends the distinct chunk texts
in batches to workers, and each worker's extractor extracts the chunks that are not
cached yet (:meth:`~sarg_integrations.LLMTripleExtractor.fill_cache`), so a run that
was interrupted resumes where it stopped. Later queries with the same model, prompt and
cache find every chunk and make no model calls.

Workers cannot share a model object, so they get a *factory*: a picklable zero-argument
callable returning the extractor (:class:`ExtractorRecipe` for the CLI; any top-level
function or ``functools.partial`` of one in your code). Where the batches run is an
injected :class:`BatchExecutor`:

* :class:`LocalExecutor` – ``workers`` processes on this machine (``workers=1`` runs in
  this process);
* :class:`~sarg_integrations.extraction.prefill_ray.RayExecutor` – Ray actors on a
  cluster (the optional ``ray`` extra).

Example:
    >>> from sarg_integrations.extraction.llm.cache import MemoryCache
    >>> from sarg_integrations.extraction.llm import LLMTripleExtractor
    >>> cache = MemoryCache()
    >>> factory = lambda: LLMTripleExtractor(lambda p: "[]", cache=cache)
    >>> report = prefill(["Rain causes floods.", "Heat causes drought."], factory)
    >>> report.chunks, report.extracted, report.cached
    (2, 2, 0)
    >>> prefill(["Rain causes floods."], factory).cached  # resumable: cached chunks skipped
    1
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from sarg_integrations._checks import is_whole
from sarg_integrations.documents import DocumentLike, coerce_documents
from sarg_integrations.errors import ConfigError
from sarg_integrations.schema import SourceDocument

__all__ = [
    "COUNTERS",
    "BatchExecutor",
    "CacheFiller",
    "ExtractorRecipe",
    "LocalExecutor",
    "PrefillReport",
    "chunk_texts",
    "prefill",
]

COUNTERS = (
    "chunks",
    "cached",
    "extracted",
    "failed",
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
    "cache_errors",
    "cache_invalid_entries",
)
"""The counters a :class:`CacheFiller` returns and :class:`PrefillReport` sums."""


@runtime_checkable
class CacheFiller(Protocol):
    """An extractor that can extract chunk texts into its cache (skipping cached ones)."""

    def fill_cache(self, chunk_texts: Iterable[str]) -> Mapping[str, int]:
        """Extract the uncached ``chunk_texts`` into the cache; return the counters."""
        ...


class BatchExecutor(Protocol):
    """Runs ``fill_cache`` over batches of chunk texts, somewhere."""

    def map(
        self, factory: Callable[[], CacheFiller], batches: Sequence[list[str]]
    ) -> Iterator[Mapping[str, int]]:
        """Yield the counters of every batch, in the order the batches finish."""
        ...


@dataclass(frozen=True)
class ExtractorRecipe:
    """A picklable description of the extractor each worker builds (the CLI's factory).

    Args:
        cache: The cache path or URL every worker writes to (``redis://…`` to share it
            between machines).
        llm: ``PROVIDER:MODEL`` (``sarg run --llm``); the model is built in the worker.
        extractor: Or an offline extractor (``tagger``, ``rules``, ``union`` or a trained
            folder), cached per document by
            :class:`~sarg_integrations.extraction.cached.CachedExtractor`.
        schema: The extraction schema (``"reasoning"`` or ``"generic_spo"``).
        max_concurrency: Model calls in flight per worker.
    """

    cache: str
    llm: str | None = None
    extractor: str | None = None
    schema: str = "reasoning"
    max_concurrency: int = 8

    def __call__(self) -> Any:
        """Build the extractor (in the worker)."""
        if self.llm is None:
            from sarg_integrations.extraction.cached import cached_offline_extractor

            return cached_offline_extractor(self.extractor or "tagger", self.cache, self.schema)
        from sarg_integrations.extraction.llm.extractor import LLMTripleExtractor
        from sarg_integrations.models import specs

        return LLMTripleExtractor(
            specs.resolve_llm_spec(self.llm),
            prompt=self.schema,
            cache=self.cache,
            max_concurrency=self.max_concurrency,
        )


@dataclass
class PrefillReport:
    """What a :func:`prefill` run did.

    Distinct chunks, how many were cached already, extracted now or failed, model calls
    and tokens, cache problems, documents, wall time and where it ran.
    """

    chunks: int = 0
    cached: int = 0
    extracted: int = 0
    failed: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_errors: int = 0
    cache_invalid_entries: int = 0
    documents: int = 0
    wall_seconds: float = 0.0
    where: str = ""

    def add(self, counters: Mapping[str, int]) -> None:
        """Add one batch's counters."""
        for name in COUNTERS:
            setattr(self, name, getattr(self, name) + int(counters.get(name, 0)))

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        out: dict[str, Any] = {name: getattr(self, name) for name in COUNTERS}
        out.update(documents=self.documents, wall_seconds=round(self.wall_seconds, 3))
        out["where"] = self.where
        return out

    def lines(self) -> list[str]:
        """The human summary ``sarg extract`` prints."""
        tokens = self.prompt_tokens + self.completion_tokens
        lines = [
            f"Pre-extracted {self.documents} document(s) into {self.chunks} distinct chunk(s) "
            f"on {self.where} in {self.wall_seconds:.1f} s",
            f"  cached already: {self.cached}   extracted: {self.extracted}   "
            f"failed: {self.failed}",
            f"  model calls: {self.llm_calls}   tokens: {tokens} "
            f"({self.prompt_tokens} prompt + {self.completion_tokens} completion)",
        ]
        if self.cache_errors or self.cache_invalid_entries:
            lines.append(
                f"  cache problems: {self.cache_errors} failed read/write(s), "
                f"{self.cache_invalid_entries} unreadable entr(y/ies) replaced; run again to "
                "retry the chunks whose answers were not stored"
            )
        if self.failed:
            lines.append(
                f"  {self.failed} chunk(s) failed (see the warnings); run again to retry them"
            )
        return lines


def chunk_texts(extractor: Any, documents: Sequence[SourceDocument]) -> list[str]:
    """The distinct chunk texts a query-time run would send, in first-seen order.

    Empty documents are skipped (a run skips them too); an extractor without ``chunk``
    extracts whole documents, so each document is one chunk.
    """
    splitter = getattr(extractor, "chunk", None)
    seen: dict[str, None] = {}
    for doc in documents:
        if not doc.text.strip():
            continue
        pieces = [c.text for c in splitter(doc)] if callable(splitter) else [doc.text]
        seen.update(dict.fromkeys(pieces))
    return list(seen)


def prefill(
    documents: Iterable[DocumentLike],
    factory: Callable[[], CacheFiller],
    *,
    executor: BatchExecutor | None = None,
    batch_size: int = 32,
    progress: Callable[[int, int], None] | None = None,
) -> PrefillReport:
    """Extract every chunk of ``documents`` that is not cached yet into the cache.

    Args:
        documents: Strings, ``{"id", "text"}`` dicts or ``SourceDocument`` records.
        factory: Builds the extractor (called once here, to split the documents, and
            once per worker); picklable for process and Ray executors.
        executor: Where the batches run (default: this process).
        batch_size: Chunk texts per batch (a batch is the unit of progress and retry).
        progress: Called as ``progress(done, total)``: once with ``done=0`` when the
            chunks are known, then with the chunk count of every finished batch.

    Raises:
        ConfigError: ``batch_size`` < 1, or the factory's extractor has no
            ``fill_cache`` (it is not a caching extractor).
    """
    if not is_whole(batch_size, 1):
        msg = f"batch_size={batch_size!r} is invalid; use a whole number >= 1, e.g. 32"
        raise ConfigError(msg, field="batch_size", value=batch_size)
    started = time.perf_counter()
    docs = coerce_documents(documents)
    planner = factory()
    if not isinstance(planner, CacheFiller):
        msg = (
            f"the extractor {planner!r} cannot pre-extract: it has no fill_cache method; "
            "use an LLMTripleExtractor with cache=PATH_OR_URL"
        )
        raise ConfigError(msg, field="extractor", value=planner)
    texts = chunk_texts(planner, docs)
    closer = getattr(planner, "close", None)
    if callable(closer):
        closer()
    batches = [texts[i : i + batch_size] for i in range(0, len(texts), batch_size)]
    executor = executor if executor is not None else LocalExecutor(1)
    report = PrefillReport(documents=len(docs), where=str(executor))
    if progress is not None:
        progress(0, len(texts))
    for counters in executor.map(factory, batches):
        report.add(counters)
        if progress is not None:
            progress(int(counters.get("chunks", 0)), len(texts))
    report.wall_seconds = time.perf_counter() - started
    return report


# --------------------------------------------------------------------------- local executor

_WORKER: dict[str, Any] = {}


def _init_worker(factory: Callable[[], CacheFiller]) -> None:
    _WORKER["extractor"] = factory()


def _fill(batch: list[str]) -> dict[str, int]:
    return dict(_WORKER["extractor"].fill_cache(batch))


class LocalExecutor:
    """Runs the batches in ``workers`` processes on this machine (1: in this process).

    Each process builds one extractor from the factory and keeps it for all its
    batches; the processes are started with ``spawn`` (safe with threads and models).

    Args:
        workers: The number of processes.
    """

    def __init__(self, workers: int = 1) -> None:
        if not is_whole(workers, 1):
            msg = f"workers={workers!r} is invalid; use a whole number >= 1, e.g. 4"
            raise ConfigError(msg, field="workers", value=workers)
        self.workers = workers

    def __str__(self) -> str:
        return "this process" if self.workers == 1 else f"{self.workers} local processes"

    def map(
        self, factory: Callable[[], CacheFiller], batches: Sequence[list[str]]
    ) -> Iterator[Mapping[str, int]]:
        """Yield each batch's counters as it finishes."""
        if not batches:
            return
        if self.workers == 1:
            extractor = factory()
            try:
                for batch in batches:
                    yield dict(extractor.fill_cache(batch))
            finally:
                closer = getattr(extractor, "close", None)
                if callable(closer):
                    closer()
            return
        import multiprocessing

        with ProcessPoolExecutor(
            max_workers=min(self.workers, len(batches)),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(factory,),
        ) as pool:
            futures = [pool.submit(_fill, batch) for batch in batches]
            try:
                for future in as_completed(futures):
                    yield future.result()
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
