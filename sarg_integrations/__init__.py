"""sarg-integrations: Structure-Augmented Reasoning Generation for RAG pipelines.

SARG turns a set of retrieved documents into a small reasoning graph of
``<cause, relation, effect>`` triples, walks it from the query's concepts with a
semantic beam search, and compiles the best chains and their evidence into the prompt.

Example:
    >>> from sarg_integrations import SARGPipeline, SARGConfig
    >>> SARGConfig().beam_width
    3

Names are imported lazily, so ``import sarg_integrations`` stays fast and quiet; models
load on a pipeline's first run.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("sarg-integrations")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

_EXPORTS = {
    "SARGPipeline": "sarg_integrations.pipeline",
    "SARGConfig": "sarg_integrations.config",
    "SARGResult": "sarg_integrations.schema",
    "SourceDocument": "sarg_integrations.schema",
    "Triple": "sarg_integrations.schema",
    "RelationType": "sarg_integrations.schema",
    "Direction": "sarg_integrations.schema",
    "DirectionPrediction": "sarg_integrations.schema",
    "ReasoningChain": "sarg_integrations.schema",
    "ChainHop": "sarg_integrations.schema",
    "EntryNode": "sarg_integrations.schema",
    "EvidencePassage": "sarg_integrations.schema",
    "ReasoningGraph": "sarg_integrations.schema",
    "PromptTemplate": "sarg_integrations.prompting",
    "TripleExtractor": "sarg_integrations.extraction.base",
    "RuleBasedExtractor": "sarg_integrations.extraction.rules",
    "LLMTripleExtractor": "sarg_integrations.extraction.llm.extractor",
    "Embedder": "sarg_integrations.embedding",
    "SentenceTransformerEmbedder": "sarg_integrations.embedding",
    "DirectionPredictor": "sarg_integrations.direction",
    "BaseDirectionClassifier": "sarg_integrations.direction",
    "CueWordDirectionClassifier": "sarg_integrations.direction",
    "FixedDirection": "sarg_integrations.direction",
    "DirectionClassifier": "sarg_integrations.direction.classifier",
    "LLMDirectionTeacher": "sarg_integrations.direction.teacher",
    "KeyphraseExtractor": "sarg_integrations.matching",
    "SARGError": "sarg_integrations.errors",
    "ConfigError": "sarg_integrations.errors",
    "InputError": "sarg_integrations.errors",
    "DocumentLoadError": "sarg_integrations.errors",
    "ExtractionError": "sarg_integrations.errors",
    "MissingDependencyError": "sarg_integrations.errors",
    "ModelLoadError": "sarg_integrations.errors",
    "load_documents": "sarg_integrations.io",
}

__all__ = [*_EXPORTS, "__version__"]

if TYPE_CHECKING:
    from sarg_integrations.config import SARGConfig
    from sarg_integrations.direction import (
        BaseDirectionClassifier,
        CueWordDirectionClassifier,
        DirectionPredictor,
        FixedDirection,
    )
    from sarg_integrations.direction.classifier import DirectionClassifier
    from sarg_integrations.direction.teacher import LLMDirectionTeacher
    from sarg_integrations.embedding import Embedder, SentenceTransformerEmbedder
    from sarg_integrations.errors import (
        ConfigError,
        DocumentLoadError,
        ExtractionError,
        InputError,
        MissingDependencyError,
        ModelLoadError,
        SARGError,
    )
    from sarg_integrations.extraction.base import TripleExtractor
    from sarg_integrations.extraction.llm.extractor import LLMTripleExtractor
    from sarg_integrations.extraction.rules import RuleBasedExtractor
    from sarg_integrations.io import load_documents
    from sarg_integrations.matching import KeyphraseExtractor
    from sarg_integrations.pipeline import SARGPipeline
    from sarg_integrations.prompting import PromptTemplate
    from sarg_integrations.schema import (
        ChainHop,
        Direction,
        DirectionPrediction,
        EntryNode,
        EvidencePassage,
        ReasoningChain,
        ReasoningGraph,
        RelationType,
        SARGResult,
        SourceDocument,
        Triple,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module 'sarg_integrations' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
