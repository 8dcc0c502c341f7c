"""Triple extractors: the :class:`TripleExtractor` protocol and the offline default.

Importing this package does not import spaCy; :class:`RuleBasedExtractor` loads its
pipeline on first use. :mod:`~sarg_integrations.extraction.runner` schedules an
extractor over a run's documents (batching, async, deadlines).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sarg_integrations.extraction.base import TripleExtractor
from sarg_integrations.extraction.rules import RuleBasedExtractor

if TYPE_CHECKING:
    from sarg_integrations.config import SARGConfig

__all__ = ["RuleBasedExtractor", "TripleExtractor", "default_extractor"]


def default_extractor(config: SARGConfig) -> TripleExtractor:
    """The extractor a pipeline uses when none is given: the offline rule extractor."""
    return RuleBasedExtractor(schema=config.schema)
