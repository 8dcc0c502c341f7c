"""Structuring strategies: turn a query and its extracted triples into reasoning chains.

* :class:`~sarg_integrations.strategies.base.Strategy`: the protocol (one method,
  ``structure(query, documents, triples, ctx) -> Structure``);
* :class:`~sarg_integrations.strategies.sarg.SARGStrategy`: graph → direction → match →
  beam search (the paper);
* :class:`~sarg_integrations.tasr.TaSRStrategy`: decompose → type → step-wise matching
  (TaSR-RAG; in :mod:`sarg_integrations.tasr`).
"""

from __future__ import annotations

from sarg_integrations.strategies.base import RunContext, StageObserver, Strategy, Structure

__all__ = ["RunContext", "StageObserver", "Strategy", "Structure"]
