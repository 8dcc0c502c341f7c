"""Calling async models from sync code: one :class:`SyncRunner` for the whole package."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from sarg_integrations.models.completion import Completion, CompletionRequest, as_completion_model

__all__ = ["SyncModel", "SyncRunner"]

T = TypeVar("T")


class SyncRunner:
    """Runs coroutines to completion from sync code, on a private event-loop thread.

    The one way this package calls async code synchronously (the LLM extractor's sync
    methods, the TaSR model calls, the direction teacher, the evaluation harness).

    Running every call on one long-lived loop in a daemon thread keeps async HTTP
    clients (which bind to the loop that first used them) working across calls, and
    lets sync code run inside a running loop (Jupyter) without nesting loops, where a
    bare ``asyncio.run`` fails.

    Example:
        >>> async def double(x):
        ...     return 2 * x
        >>> runner = SyncRunner()
        >>> runner.run(double(21))
        42
        >>> runner.close()
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the private loop and return its result (or raise its error).

        Raises:
            RuntimeError: Called from the runner's own loop thread (await instead).
        """
        loop = self._ensure()
        if threading.current_thread() is self._thread:
            coro.close()
            msg = (
                "a sync method was called from inside its own event loop (sarg-sync-loop); "
                "await the async method instead"
            )
            raise RuntimeError(msg)
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=serve, name="sarg-sync-loop", daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    def close(self) -> None:
        """Stop the loop thread (a later :meth:`run` starts a new one)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            if not loop.is_running():
                loop.close()


class SyncModel:
    """Calls a LangChain / LlamaIndex / callable model from sync code, in any thread.

    Used by the TaSR decomposer and typer (one synchronous call each).

    The call runs on a :class:`SyncRunner`, so it also works inside a running loop
    (Jupyter) and from ``arun``'s worker.
    """

    def __init__(self, llm: Any) -> None:
        self.model = as_completion_model(llm, structured_output=False, max_workers=2)
        self._loop = SyncRunner()

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
