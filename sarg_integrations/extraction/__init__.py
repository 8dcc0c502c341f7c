"""Triple extractors: the :class:`TripleExtractor` protocol and the offline default.

Importing this package does not import spaCy; :class:`RuleBasedExtractor` loads its
pipeline on first use.
"""

from __future__ import annotations

from sarg_integrations.extraction.base import TripleExtractor
from sarg_integrations.extraction.rules import RuleBasedExtractor

__all__ = ["RuleBasedExtractor", "TripleExtractor"]
