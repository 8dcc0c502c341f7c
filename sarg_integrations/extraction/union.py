"""Two extractors as one: the primary's triples plus the secondary's that it missed."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Sequence
from typing import Any

from sarg_integrations._text import words
from sarg_integrations.extraction.base import STOPPED, ExtractionOutcome, TripleExtractor, stopped_outcome
from sarg_integrations.schema import SourceDocument, Triple

__all__ = ["UnionExtractor", "same_relation"]


# Words that name nothing by themselves: two arguments sharing only these share nothing.
_FUNCTION_WORDS = frozenset(
    "a an the of in on at to for by with from and or but as its their his her our this that "
    "these those it is are was were be been being has have had will would".split()
)


def _words(text: str) -> set[str]:
    return {w.lower() for w in words(text)} - _FUNCTION_WORDS


def _shares_most(a: set[str], b: set[str]) -> bool:
    """Whether the shorter of two arguments shares at least half its words with the other.

    One shared word is not enough: "concern prepared to outbid Ratners's offer" and
    "Ratners Group PLC" share "Ratners" but name different causes.
    """
    shorter = min(len(a), len(b))
    return shorter > 0 and 2 * len(a & b) >= shorter


def same_relation(a: Triple, b: Triple) -> bool:
    """Whether two triples read the same relation: same sentence, overlapping cause and effect.

    Example:
        >>> x = Triple("heavy rain", "causes", "floods", sentence="Heavy rain causes floods.")
        >>> y = Triple("rain", "leads to", "the floods", sentence="Heavy rain causes floods.")
        >>> same_relation(x, y)
        True
    """
    if a.document_id != b.document_id:
        return False
    if (a.sentence_span, a.sentence) != (b.sentence_span, b.sentence):
        if a.sentence_span is None or b.sentence_span is None:
            return False
        s1, e1 = a.sentence_span
        s2, e2 = b.sentence_span
        if not (s1 < e2 and s2 < e1):
            return False
    return _same_argument(a.cause, a.cause_text, b.cause, b.cause_text) and _same_argument(
        a.effect, a.effect_text, b.effect, b.effect_text
    )


def _same_argument(name_a: str, span_a: str | None, name_b: str, span_b: str | None) -> bool:
    """Whether two arguments name the same thing: their node names, or their whole spans
    (a name where a triple keeps none), share most words (:func:`_shares_most`)."""
    if _shares_most(_words(name_a), _words(name_b)):
        return True
    return _shares_most(_words(span_a or name_a), _words(span_b or name_b))


def _parts(item: Any) -> tuple[list[Triple], str | None, dict[str, float]]:
    if isinstance(item, ExtractionOutcome):
        return list(item.triples), item.error, dict(item.stats)
    if isinstance(item, BaseException):
        return [], f"{type(item).__name__}: {item}", {}
    return list(item), None, {}


class UnionExtractor:
    """The primary extractor's triples, plus each of the secondary's that reads a
    relation the primary did not (:func:`same_relation`).

    Args:
        primary: The extractor whose triples always stay (the learned tagger).
        secondary: The extractor that adds what the primary missed (the rules).

    Example:
        >>> class Fixed:
        ...     def __init__(self, *triples): self.triples = list(triples)
        ...     def extract(self, document): return self.triples
        >>> t = Triple("rain", "causes", "floods", document_id="d", sentence="s")
        >>> u = Triple("floods", "close", "roads", document_id="d", sentence="s")
        >>> [x.effect for x in UnionExtractor(Fixed(t), Fixed(t, u)).extract(SourceDocument("d", "s"))]
        ['floods', 'roads']
    """

    def __init__(self, primary: TripleExtractor, secondary: TripleExtractor) -> None:
        self.primary = primary
        self.secondary = secondary
        self.schema = getattr(primary, "schema", "reasoning")

    def __repr__(self) -> str:
        return f"UnionExtractor({self.primary!r}, {self.secondary!r})"

    def warm_up(self) -> None:
        """Load both extractors' models now."""
        for part in (self.primary, self.secondary):
            warm = getattr(part, "warm_up", None)
            if callable(warm):
                warm()

    def extract(self, document: SourceDocument) -> list[Triple]:
        """Return the merged triples of ``document``."""
        item = self.extract_many([document])[0]
        if isinstance(item, ExtractionOutcome):
            return item.triples
        return item

    def extract_many(
        self, documents: Sequence[SourceDocument], *, stop: threading.Event | None = None
    ) -> list[list[Triple] | ExtractionOutcome]:
        """Merge both extractors' results per document (errors only when both fail).

        ``stop`` is handed to both; a document either of them stopped reading stays
        unfinished (:func:`~sarg_integrations.extraction.base.stopped_outcome`).
        """
        first = _many(self.primary, documents, stop)
        second = _many(self.secondary, documents, stop)
        out: list[list[Triple] | ExtractionOutcome] = []
        for a, b in zip(first, second):
            triples, error_a, stats = _parts(a)
            extra, error_b, stats_b = _parts(b)
            _merge(triples, extra)
            for key, value in stats_b.items():
                stats[key] = max(stats.get(key, 0), value)
            if STOPPED in (error_a, error_b):
                out.append(stopped_outcome(triples))
                continue
            error = error_a if (error_a and error_b and not triples) else None
            if error is None and not stats:
                out.append(triples)
            else:
                out.append(ExtractionOutcome(triples=triples, error=error, stats=stats))
        return out


_SPAN_BLOCK = 2000  # characters per bucket of the sentence-span index in _merge


def _merge(triples: list[Triple], extra: Sequence[Triple]) -> None:
    """Append to ``triples`` each of ``extra`` that reads no relation already there.

    Same result as checking :func:`same_relation` against every kept triple, but only
    the triples that can match are compared: those of the same sentence text and span,
    and those whose sentence span overlaps (looked up in buckets of ``_SPAN_BLOCK``
    characters). Checking all of them made a one-document union quadratic in its
    triples: 7,578 tagger triples at 0.5 MB, ~75,000 at 5 MB.
    """
    exact: dict[tuple[Any, str], list[Triple]] = {}
    blocks: dict[int, list[Triple]] = {}

    def spanned(triple: Triple) -> range:
        """The buckets the triple's sentence span covers (none without a span)."""
        if triple.sentence_span is None:
            return range(0)
        start, end = triple.sentence_span
        return range(start // _SPAN_BLOCK, max(start, end - 1) // _SPAN_BLOCK + 1)

    def add(triple: Triple) -> None:
        exact.setdefault((triple.sentence_span, triple.sentence), []).append(triple)
        for block in spanned(triple):
            blocks.setdefault(block, []).append(triple)

    def candidates(triple: Triple) -> list[Triple]:
        found = list(exact.get((triple.sentence_span, triple.sentence), ()))
        for block in spanned(triple):
            found.extend(blocks.get(block, ()))
        seen: set[int] = set()
        return [t for t in found if not (id(t) in seen or seen.add(id(t)))]

    for kept in triples:
        add(kept)
    for triple in extra:
        if not any(same_relation(triple, kept) for kept in candidates(triple)):
            triples.append(triple)
            add(triple)


def _many(extractor: Any, documents: Sequence[SourceDocument], stop: threading.Event | None) -> list[Any]:
    many = getattr(extractor, "extract_many", None)
    if callable(many):
        takes_stop = stop is not None and "stop" in inspect.signature(many).parameters
        return list(many(documents, stop=stop) if takes_stop else many(documents))
    out: list[Any] = []
    for position, document in enumerate(documents):
        if stop is not None and stop.is_set():
            return out + [stopped_outcome([]) for _ in documents[position:]]
        try:
            out.append(extractor.extract(document))
        except Exception as exc:  # reported per document, like the pipeline does
            out.append(exc)
    return out
