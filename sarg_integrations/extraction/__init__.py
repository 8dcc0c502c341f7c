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
    """The extractor a pipeline uses when none is given: the learned span tagger
    (:class:`~sarg_integrations.extraction.tagger.TaggerExtractor`), or the rules for
    the ``generic_spo`` ablation schema."""
    from sarg_integrations.extraction.choice import default_extractor as for_schema

    return for_schema(config.schema)
