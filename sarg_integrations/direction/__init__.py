"""Direction classification (paper §3.4): forward, backward or bidirectional.

* :mod:`~sarg_integrations.direction.base`: the :class:`DirectionPredictor` protocol,
  the batch API, the cue-word classifier and :class:`FixedDirection`;
* :mod:`~sarg_integrations.direction.classifier`: the shipped student,
  :class:`DirectionClassifier` (a head over sentence embeddings, loaded from JSON);
* :mod:`~sarg_integrations.direction.training`: training it (the SetFit recipe);
* :mod:`~sarg_integrations.direction.teacher`: the LLM teacher and distillation;
* :mod:`~sarg_integrations.direction.data`: the labeled query sets.

The protocol and the rule-based classifiers are imported eagerly (they need no
model); everything else loads on first access, so importing this package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sarg_integrations.direction.base import (
    LABELS,
    MAX_QUERY_CHARS,
    BaseDirectionClassifier,
    CueWordDirectionClassifier,
    DirectionPredictor,
    FixedDirection,
)

_LAZY = {
    "DEFAULT_ENCODER": "classifier",
    "DEFAULT_MARGIN": "classifier",
    "DirectionClassifier": "classifier",
    "default_direction_classifier": "classifier",
    "ngram_features": "classifier",
    "TrainingReport": "training",
    "evaluate_direction_classifier": "training",
    "train_direction_classifier": "training",
    "LLMDirectionTeacher": "teacher",
    "distill_direction": "teacher",
    "parse_direction_answer": "teacher",
    "load_direction_dataset": "data",
    "read_queries": "data",
}

__all__ = [
    "LABELS",
    "MAX_QUERY_CHARS",
    "BaseDirectionClassifier",
    "CueWordDirectionClassifier",
    "DirectionPredictor",
    "FixedDirection",
    *_LAZY,
]

if TYPE_CHECKING:
    from sarg_integrations.direction.classifier import (
        DEFAULT_ENCODER,
        DEFAULT_MARGIN,
        DirectionClassifier,
        default_direction_classifier,
        ngram_features,
    )
    from sarg_integrations.direction.data import load_direction_dataset, read_queries
    from sarg_integrations.direction.teacher import (
        LLMDirectionTeacher,
        distill_direction,
        parse_direction_answer,
    )
    from sarg_integrations.direction.training import (
        TrainingReport,
        evaluate_direction_classifier,
        train_direction_classifier,
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'sarg_integrations.direction' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"sarg_integrations.direction.{module}"), name)
    globals()[name] = value
    return value
