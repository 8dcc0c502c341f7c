"""A persistent cache in front of an offline extractor (tagger, rules, union, a folder).

The LLM extractor caches per chunk itself; the offline extractors read whole documents
(the tagger links sentences), so :class:`CachedExtractor` caches their triples per
document text. Keys hash the text with the extractor's identity (name, schema and
package version, or the trained folder's ``tagger.json``), so a new version or another
model never reads stale triples. Values are JSON. A cache that fails is skipped with a
warning and ``stats["cache_errors"]``; it never fails a run.

``sarg run --extractor NAME --cache URL`` uses it, and ``sarg extract --extractor NAME
--cache URL`` fills it ahead of the queries (:meth:`CachedExtractor.fill_cache`).

Example:
    >>> from sarg_integrations.extraction.llm.cache import MemoryCache
    >>> class Fake:
    ...     def extract(self, document):
    ...         return [Triple("rain", "causes", "floods", document_id=document.id)]
    >>> cached = CachedExtractor(Fake(), MemoryCache(), identity="fake")
    >>> doc = SourceDocument("d1", "Rain causes floods.")
    >>> [o.stats["cache_hits"] for o in cached.extract_many([doc])]
    [0]
    >>> [o.stats["cache_hits"] for o in cached.extract_many([doc])]
    [1]
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sarg_integrations.extraction.base import ExtractionOutcome, TripleExtractor
from sarg_integrations.extraction.llm.cache import (
    ExtractionCache,
    as_cache,
    cache_key,
    holds_triples,
)
from sarg_integrations.extraction.runner import ExtractionRunner
from sarg_integrations.schema import RelationType, SourceDocument, Triple, to_jsonable

__all__ = ["CachedExtractor", "cached_offline_extractor", "offline_identity"]

log = logging.getLogger(__name__)

_FORMAT = "offline-document/1"
"""Part of every key (bumped when the cached value layout changes)."""


class CachedExtractor:
    """Caches the triples an extractor finds in each document text.

    Args:
        extractor: The extractor (``extract``, and ``extract_many`` when it has it).
        cache: A cache path or URL (see :func:`~.llm.cache.as_cache`) or cache object.
        identity: What distinguishes this extractor's answers (default: its ``repr``).
    """

    def __init__(self, extractor: TripleExtractor, cache: Any, *, identity: str | None = None):
        self.extractor = extractor
        self.cache: ExtractionCache | None = as_cache(cache)
        self.identity = identity or repr(extractor)

    def __repr__(self) -> str:
        return f"CachedExtractor({self.extractor!r}, cache={type(self.cache).__name__})"

    def cache_key(self, text: str) -> str:
        """The cache key of one document text."""
        return cache_key(text, self.identity, _FORMAT)

    def extract(self, document: SourceDocument) -> list[Triple]:
        """The triples of ``document`` (from the cache when it has them)."""
        (outcome,) = self.extract_many([document])
        return list(outcome.triples)

    def extract_many(self, documents: Iterable[SourceDocument]) -> list[ExtractionOutcome]:
        """One outcome per document; misses go to the extractor and into the cache."""
        docs = list(documents)
        found, problems = self._lookup([d.text for d in docs])
        misses = [d for d in docs if self.cache_key(d.text) not in found]
        fresh, stored_errors = self._extract_and_store(misses)
        out = []
        for position, doc in enumerate(docs):
            key = self.cache_key(doc.text)
            if key in found:
                outcome = _from_value(found[key], doc.id)
                stats = {**outcome.stats, "cache_hits": 1}
            else:
                outcome = fresh[key]
                stats = {**outcome.stats, "cache_hits": 0}
            if position == 0:
                stats["cache_errors"] = stats.get("cache_errors", 0) + problems[0] + stored_errors
                stats["cache_invalid_entries"] = problems[1]
            out.append(dataclasses.replace(outcome, stats=stats))
        return out

    def fill_cache(self, chunk_texts: Iterable[str]) -> dict[str, int]:
        """Extract the document texts that are not cached yet into the cache.

        Returns the counters of :data:`~sarg_integrations.extraction.prefill.COUNTERS`
        (``llm_calls`` and tokens are 0: offline extractors call no model).
        """
        texts = list(dict.fromkeys(chunk_texts))
        found, problems = self._lookup(texts)
        misses = [
            SourceDocument(f"chunk-{i}", t)
            for i, t in enumerate(texts)
            if self.cache_key(t) not in found
        ]
        fresh, stored_errors = self._extract_and_store(misses)
        failed = sum(1 for o in fresh.values() if o.stats.get("extractor_failed"))
        return {
            "chunks": len(texts),
            "cached": len(texts) - len(misses),
            "extracted": len(misses) - failed,
            "failed": failed,
            "llm_calls": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cache_errors": problems[0] + stored_errors,
            "cache_invalid_entries": problems[1],
        }

    # ------------------------------------------------------------------ helpers

    def _lookup(self, texts: Sequence[str]) -> tuple[dict[str, Any], tuple[int, int]]:
        """The usable cached values by key, and (read errors, invalid entries)."""
        if self.cache is None or not texts:
            return {}, (0, 0)
        try:
            values = self.cache.get_many([self.cache_key(t) for t in texts])
        except Exception as exc:
            log.warning(
                "extraction cache read failed (%s: %s); extracting without it",
                type(exc).__name__,
                exc,
            )
            return {}, (1, 0)
        usable = {k: v for k, v in values.items() if holds_triples(v)}
        return usable, (0, len(values) - len(usable))

    def _extract_and_store(
        self, docs: Sequence[SourceDocument]
    ) -> tuple[dict[str, ExtractionOutcome], int]:
        """Extract ``docs``; cache the outcomes (not the failures); count failed writes."""
        outcomes: dict[str, ExtractionOutcome] = {}
        values: dict[str, Any] = {}
        for doc, raw in zip(docs, ExtractionRunner(self.extractor).run(docs)):
            key = self.cache_key(doc.text)
            if isinstance(raw, BaseException):
                if not isinstance(raw, Exception):
                    raise raw
                error = f"extractor error: {type(raw).__name__}: {raw}"
                outcomes[key] = ExtractionOutcome(error=error, stats={"extractor_failed": 1})
                continue
            if raw is None:
                outcome = ExtractionOutcome()
            elif isinstance(raw, ExtractionOutcome):
                outcome = raw
            else:
                outcome = ExtractionOutcome(triples=list(raw))
            outcomes[key] = outcome
            values[key] = {
                "format": 1,
                "triples": [to_jsonable(t) for t in outcome.triples],
                "error": outcome.error,
                "stats": dict(outcome.stats),
                "extractor": self.identity,
            }
        if self.cache is None or not values:
            return outcomes, 0
        try:
            self.cache.set_many(values)
        except Exception as exc:
            log.warning(
                "extraction cache write failed (%s: %s); the triples are not cached",
                type(exc).__name__,
                exc,
            )
            return outcomes, 1
        return outcomes, 0


def _from_value(value: dict[str, Any], document_id: str) -> ExtractionOutcome:
    triples = []
    for item in value["triples"]:
        span = item.get("sentence_span")
        fields = {**item, "document_id": document_id}
        fields["relation_type"] = RelationType(item.get("relation_type", "causal"))
        fields["sentence_span"] = tuple(span) if span is not None else None
        triples.append(Triple(**fields))
    stats = value.get("stats") if isinstance(value.get("stats"), dict) else {}
    return ExtractionOutcome(triples, value.get("error"), dict(stats))


def offline_identity(spec: str | Path, schema: str = "reasoning") -> str:
    """The cache identity of a named offline extractor (name, schema, package version).

    A trained tagger's folder is identified by the hash of its ``tagger.json``.
    """
    from sarg_integrations import __version__

    name = str(spec)
    folder = Path(name).expanduser()
    if name not in ("tagger", "rules", "union") and (folder / "tagger.json").is_file():
        digest = hashlib.sha256((folder / "tagger.json").read_bytes()).hexdigest()[:16]
        name = f"tagger-folder:{digest}"
    return f"sarg-integrations/{__version__}/{name}/{schema}"


def cached_offline_extractor(spec: str | Path, cache: Any, schema: str = "reasoning") -> Any:
    """``resolve_extractor(spec, schema)`` behind a :class:`CachedExtractor` on ``cache``."""
    from sarg_integrations.extraction.choice import resolve_extractor

    return CachedExtractor(
        resolve_extractor(spec, schema), cache, identity=offline_identity(spec, schema)
    )
