"""One synchronous model call for the TaSR decomposer and typer (any model type)."""

from __future__ import annotations

from typing import Any

from sarg_integrations.llm.extractor import _LoopThread
from sarg_integrations.llm.models import Completion, CompletionRequest, as_completion_model

__all__ = ["SyncModel"]


class SyncModel:
    """Calls a LangChain / LlamaIndex / callable model from sync code, in any thread.

    The call runs on a private event-loop thread (as the LLM extractor's sync methods
    do), so it also works inside a running loop (Jupyter) and from ``arun``'s worker.
    """

    def __init__(self, llm: Any) -> None:
        self.model = as_completion_model(llm, structured_output=False, max_workers=2)
        self._loop = _LoopThread()

    @property
    def identity(self) -> str:
        """The wrapped model's identity."""
        return str(getattr(self.model, "identity", type(self.model).__name__))

    def __call__(self, system: str, user: str) -> Completion:
        """Ask once; returns the completion (model errors propagate)."""
        request = CompletionRequest(messages=(("system", system), ("user", user)))
        return self._loop.run(self._ask(request))

    async def _ask(self, request: CompletionRequest) -> Completion:
        out = await self.model.acomplete(request)
        return out if isinstance(out, Completion) else Completion(str(out or ""))

    def close(self) -> None:
        """Stop the private loop thread (it restarts on the next call)."""
        self._loop.close()
