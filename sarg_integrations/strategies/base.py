"""The strategy seam: what a structuring strategy receives and what it returns.

A run of :class:`~sarg_integrations.SARGPipeline` is *extract → structure → compile*.
The middle step is a :class:`Strategy`: it turns the query and the extracted triples
into reasoning chains (SARG: graph, entry nodes, direction, beam search; TaSR:
decomposition, typing, step-wise matching). The pipeline owns everything around it:
validation, extraction, model warm-up, the evidence and prompt, and the one place
where the run's counters and the :class:`~sarg_integrations.schema.SARGResult` are
assembled. A strategy sees the run only through a :class:`RunContext`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from sarg_integrations.graph import ReasoningGraph
    from sarg_integrations.schema import (
        DirectionPrediction,
        EntryNode,
        ReasoningChain,
        SourceDocument,
        Triple,
    )

__all__ = ["RunContext", "StageObserver", "Strategy", "Structure"]


@runtime_checkable
class StageObserver(Protocol):
    """Watches the pipeline's stages (for tracing: LangChain child runs, LlamaIndex spans).

    ``stage(name)`` returns a context manager entered around each stage (``extract``,
    ``load_models``, ``encode``, ``build``, ``direction``, ``match``, ``traverse``,
    ``compile``). It yields a dict
    that the pipeline fills with the stage's counters before the block exits; an
    exception inside the stage propagates through the context manager.
    """

    def stage(self, name: str) -> AbstractContextManager[dict[str, Any]]:
        """Return the context manager for stage ``name``."""
        ...


class RunContext:
    """One run's bookkeeping, handed to the strategy: counters, stage timer, observer.

    Attributes:
        stats: The run's counters; :meth:`stage` adds ``time_<name>_ms`` to it, and a
            strategy may add its own (``evidence_filled`` …).
        observer: The :class:`StageObserver` of the run, or ``None``.
        start: ``time.perf_counter()`` when the run began.
    """

    def __init__(self, observer: StageObserver | None = None) -> None:
        self.stats: dict[str, Any] = {}
        self.observer = observer
        self.start = time.perf_counter()

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[dict[str, Any]]:
        """Time stage ``name`` into ``stats`` and forward it to the observer, if any.

        Yields the dict the stage fills with its counters for the observer.
        """
        with contextlib.ExitStack() as stack:
            summary: dict[str, Any] = (
                stack.enter_context(self.observer.stage(name)) if self.observer else {}
            )
            start = time.perf_counter()
            try:
                yield summary
            finally:
                elapsed = (time.perf_counter() - start) * 1000.0
                key = f"time_{name}_ms"
                self.stats[key] = round(self.stats.get(key, 0.0) + elapsed, 3)


@dataclass
class Structure:
    """What a strategy found: the chains, and the products on the way to them.

    Fields that do not apply to a strategy are ``None`` (TaSR predicts no traversal
    direction and extracts no key phrases).

    Attributes:
        graph: The reasoning graph built from the triples.
        chains: The kept chains, best first.
        fallback_reason: Why no chain could be used (the prompt then holds the flat
            context), or ``None``.
        keyphrases: The query's key phrases, or ``None`` when the strategy has none.
        entry_nodes: The nodes the chains start from, best first.
        direction: The predicted traversal direction, or ``None``.
        candidate_chains: Every chain considered, best first, or ``None``.
        counters: The strategy's own counters, merged into ``SARGResult.stats``.
        trace: The strategy's own record (``SARGResult.trace``).
        query_vector: The query's embedding, shape (1, d), when the strategy computed
            it (the evidence fill reuses it), else ``None``.
    """

    graph: ReasoningGraph
    chains: list[ReasoningChain]
    fallback_reason: str | None = None
    keyphrases: list[str] | None = None
    entry_nodes: list[EntryNode] = field(default_factory=list)
    direction: DirectionPrediction | None = None
    candidate_chains: list[ReasoningChain] | None = None
    counters: dict[str, Any] = field(default_factory=dict)
    trace: Any = None
    query_vector: Any = None


@runtime_checkable
class Strategy(Protocol):
    """Turns a query and its extracted triples into reasoning chains.

    ``name`` is the value of ``SARGConfig.strategy`` (and ``SARGResult.strategy``).
    ``structure`` runs the strategy's stages inside ``ctx.stage(...)`` blocks and
    returns a :class:`Structure`; it must not compile the prompt (the pipeline does).
    """

    name: str

    def structure(
        self,
        query: str,
        documents: Sequence[SourceDocument],
        triples: list[Triple],
        ctx: RunContext,
    ) -> Structure:
        """Return the chains found for ``query`` in ``triples``."""
        ...
