"""Evaluation harness: SARG against flat RAG on multi-hop QA (HotpotQA, MuSiQue, 2Wiki),
and the causal evaluation on ESTER questions and ESC event links.

Framework-free. The pieces:

* :mod:`~sarg_integrations.evaluation.datasets`: loaders giving typed
  :class:`EvalQuestion` records (each question carries its own paragraph set).
* :mod:`~sarg_integrations.evaluation.metrics`: the official SQuAD/HotpotQA answer
  normalisation, EM/F1, supporting-paragraph recall/precision, answer-string recall,
  token counting, chain faithfulness.
* :mod:`~sarg_integrations.evaluation.methods`: the compared methods (Direct, flat RAG,
  flat top-k, LongContextReorder, CoT-RAG, SARG and its ablations and sweeps).
* :mod:`~sarg_integrations.evaluation.harness`: the run loop;
  :mod:`~sarg_integrations.evaluation.report`: aggregates and Markdown tables;
  :mod:`~sarg_integrations.evaluation.plots`: PNG figures;
  :mod:`~sarg_integrations.evaluation.records`: the resumable records file (both runs).
* :mod:`~sarg_integrations.evaluation.causal_eval` (:func:`run_causal_evaluation`), with
  its loaders (:mod:`~sarg_integrations.evaluation.causal_qa`), metrics
  (:mod:`~sarg_integrations.evaluation.causal_metrics`) and tables
  (:mod:`~sarg_integrations.evaluation.causal_report`): ``sarg eval --dataset ester|esc``.

Example:
    >>> from sarg_integrations.evaluation import normalize_answer, f1_score
    >>> normalize_answer("The  Eiffel Tower!")
    'eiffel tower'
    >>> round(f1_score("Eiffel Tower in Paris", "the Eiffel Tower"), 3)
    0.667
"""

from __future__ import annotations

from sarg_integrations.evaluation.datasets import (
    DATASETS,
    EvalQuestion,
    default_data_path,
    load_dataset,
)
from sarg_integrations.evaluation.metrics import (
    answer_in_text,
    chain_faithfulness,
    count_tokens,
    exact_match,
    f1_score,
    max_over_answers,
    normalize_answer,
    support_precision,
    support_recall,
)

__all__ = [
    "DATASETS",
    "EvalQuestion",
    "CausalReport",
    "EvalReport",
    "answer_in_text",
    "chain_faithfulness",
    "count_tokens",
    "default_data_path",
    "exact_match",
    "f1_score",
    "load_dataset",
    "max_over_answers",
    "normalize_answer",
    "run_causal_evaluation",
    "run_evaluation",
    "support_precision",
    "support_recall",
]


def __getattr__(name: str):
    if name in ("run_evaluation", "EvalReport"):
        from sarg_integrations.evaluation import harness

        return getattr(harness, name)
    if name in ("run_causal_evaluation", "CausalReport"):
        from sarg_integrations.evaluation import causal_eval

        return getattr(causal_eval, name)
    msg = f"module 'sarg_integrations.evaluation' has no attribute {name!r}"
    raise AttributeError(msg)
