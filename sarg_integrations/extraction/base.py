"""The extractor protocol: one document in, reasoning-schema triples out."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from sarg_integrations.schema import SourceDocument, Triple

__all__ = ["TripleExtractor"]


@runtime_checkable
class TripleExtractor(Protocol):
    """Turns one document into triples (paper Eq. 1).

    Implementations return every triple they keep, each with ``document_id`` set to
    ``document.id`` and ``sentence`` set to the verbatim source sentence. They raise
    :class:`~sarg_integrations.errors.ExtractionError` when a document cannot be
    processed; the pipeline records that document as skipped and carries on.

    An extractor may also define ``extract_many(documents) -> list[list[Triple]]`` to
    batch work (the pipeline uses it when present) and ``async aextract(document)``.
    """

    def extract(self, document: SourceDocument) -> list[Triple]:
        """Return the triples found in ``document``."""
        ...
