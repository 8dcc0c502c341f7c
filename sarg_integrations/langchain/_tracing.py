"""Stage tracing for LangChain: each SARG stage becomes a child run of the adapter's run."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForChainRun

from sarg_integrations.schema import to_jsonable

__all__ = ["CallbackStageObserver"]


class CallbackStageObserver:
    """A :class:`~sarg_integrations.pipeline.StageObserver` reporting to LangChain callbacks.

    Every stage (``extract``, ``load_models``, ``encode``, ``build``, ``direction``,
    ``match``, ``traverse``, ``compile``) starts a child chain run named after the stage under
    ``run_manager``, tagged ``sarg`` and ``sarg:<stage>``, and ends it with the stage's
    counters as outputs (or reports the stage's error). The async adapters pass the sync
    twin of their run manager (``get_sync()``) because the core calls observers from a
    worker thread.

    Args:
        run_manager: The adapter's run; ``None`` disables tracing.
    """

    def __init__(self, run_manager: CallbackManagerForChainRun | None) -> None:
        self.run_manager = run_manager

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[dict[str, Any]]:
        """Run stage ``name`` as a child run; yields the dict the pipeline fills."""
        counters: dict[str, Any] = {}
        if self.run_manager is None:
            yield counters
            return
        child = self.run_manager.get_child(tag=f"sarg:{name}")
        child.add_tags(["sarg"], inherit=False)
        child.add_metadata({"sarg_stage": name}, inherit=False)
        stage_run = child.on_chain_start(None, {"stage": name}, name=name)
        try:
            yield counters
        except BaseException as exc:
            stage_run.on_chain_error(exc)
            raise
        stage_run.on_chain_end(to_jsonable(counters))
