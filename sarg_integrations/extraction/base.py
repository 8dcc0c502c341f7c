"""The extractor protocol: one document in, reasoning-schema triples out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from sarg_integrations.schema import SourceDocument, Triple

__all__ = ["STOPPED", "ExtractionOutcome", "TripleExtractor", "stopped_outcome"]

STOPPED = "extraction was stopped before the end of the document"
"""The error of a document an extractor stopped reading because its ``stop`` event was set."""


@runtime_checkable
class TripleExtractor(Protocol):
    """Turns one document into triples (paper Eq. 1).

    Implementations return every triple they keep, each with ``document_id`` set to
    ``document.id`` and ``sentence`` set to the verbatim source sentence. They raise
    :class:`~sarg_integrations.errors.ExtractionError` when a document cannot be
    processed; the pipeline records that document as skipped and carries on.

    Optional methods the pipeline uses when present:

    * ``extract_many(documents)`` – batch work; returns one item per document: a list of
      triples, an :class:`ExtractionOutcome`, or an exception instance for that document.
      With a keyword ``stop`` (a ``threading.Event``), it checks the event between the
      pieces it reads (chunks, sentence windows) and, once set, returns after the piece
      in hand: documents not read to the end get :func:`stopped_outcome`. Under a
      deadline the runner then waits for that piece instead of abandoning a thread
      inside native code.
    * ``async aextract(document)`` / ``async aextract_many(documents)`` – native async,
      used by :meth:`SARGPipeline.arun`.
    """

    def extract(self, document: SourceDocument) -> list[Triple]:
        """Return the triples found in ``document``."""
        ...


@dataclass(frozen=True)
class ExtractionOutcome:
    """What extracting one document produced, for extractors that report more.

    Attributes:
        triples: The triples kept.
        error: Why the document could not be extracted (it is then reported as skipped
            with this reason), or ``None``.
        stats: Numeric counters for this document (``llm_calls``, ``cache_hits``,
            ``prompt_tokens``…); the pipeline sums them into ``SARGResult.stats``.
    """

    triples: list[Triple] = field(default_factory=list)
    error: str | None = None
    stats: Mapping[str, float] = field(default_factory=dict)


def stopped_outcome(triples: list[Triple]) -> ExtractionOutcome:
    """The outcome of a document left unfinished because the ``stop`` event was set.

    Example:
        >>> stopped_outcome([]).error == STOPPED
        True
    """
    return ExtractionOutcome(triples=triples, error=STOPPED, stats={"documents_stopped": 1})
