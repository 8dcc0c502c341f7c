"""``SARGQueryEngine``: retrieve → SARG → the core's prompt → any LlamaIndex LLM."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.base import BaseLLM
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.bridge.pydantic import ConfigDict, Field
from llama_index.core.callbacks import CallbackManager
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.schema import NodeWithScore

from sarg_integrations._adapters import NO_DOCUMENTS, SARGSettings, empty_prompt, result_summary
from sarg_integrations.documents import validate_query
from sarg_integrations.errors import ConfigError
from sarg_integrations.llama_index._convert import (
    arun_sarg,
    evidence_nodes,
    node_ids,
    run_sarg,
)
from sarg_integrations.llama_index._tracing import dispatcher
from sarg_integrations.schema import SARGResult

__all__ = ["SARGQueryEngine"]


class SARGQueryEngine(SARGSettings, CustomQueryEngine):
    """A query engine that answers from SARG's reasoning chains and their evidence.

    For each query it retrieves nodes with ``retriever``, runs the SARG core on them and
    sends the core's compiled prompt (instruction, question, serialized chains, then the
    evidence) to ``llm`` as one completion. The :class:`Response` has the evidence nodes
    as ``source_nodes`` and ``metadata["sarg"]`` with the chains, direction, entry nodes,
    counters, fallback reason, the prompt and stage timings; ``metadata["sarg_result"]``
    is the full :class:`~sarg_integrations.SARGResult`. With ``streaming=True``,
    ``query`` returns a ``StreamingResponse`` and ``aquery`` an
    ``AsyncStreamingResponse``. ``aquery`` is natively async (``aretrieve``, the core's
    ``arun``, ``acomplete``). Every stage emits an instrumentation span and events.

    !!! note "Installation"
        ``pip install "sarg-integrations[llama-index]"``

    Args:
        retriever: Any LlamaIndex retriever (e.g. ``index.as_retriever(similarity_top_k=8)``).
        llm: Any LlamaIndex LLM. It only writes the answer: with ``strategy="tasr"``,
            pass a model as ``query_decomposer=`` / ``entity_typer=`` for TaSR.
        streaming: Stream the answer.
        **kwargs: The same SARG settings as :class:`SARGNodePostprocessor`.

    Raises:
        ConfigError: A setting is invalid, or ``retriever`` / ``llm`` has the wrong type.

    Example:
        ```python
        from sarg_integrations.llama_index import SARGQueryEngine

        engine = SARGQueryEngine.from_args(
            retriever=index.as_retriever(similarity_top_k=8), llm=llm, top_k=3
        )
        response = engine.query("What does a mutation in the GBA1 gene ultimately lead to?")
        print(response, response.metadata["sarg"]["chains"][0]["text"])
        ```
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")
    _sarg_own_fields: ClassVar[frozenset[str]] = frozenset({"llm"})

    retriever: Any = Field(description="The retriever that supplies the nodes.")
    """Any LlamaIndex ``BaseRetriever``."""
    llm: Any = Field(description="The LLM that writes the answer.")
    """Any LlamaIndex LLM."""
    streaming: bool = Field(default=False, description="Stream the answer.")
    """Return streaming responses."""

    def __init__(self, **data: Any) -> None:
        retriever, llm = data.get("retriever"), data.get("llm")
        if not isinstance(retriever, BaseRetriever):
            msg = (
                f"SARGQueryEngine: retriever={retriever!r} is not a LlamaIndex BaseRetriever; "
                "pass e.g. index.as_retriever(similarity_top_k=8)"
            )
            raise ConfigError(msg, field="retriever", value=retriever)
        if not isinstance(llm, BaseLLM):
            msg = (
                f"SARGQueryEngine: llm={llm!r} is not a LlamaIndex LLM; pass e.g. "
                "OpenAI(...), Ollama(...) or a CustomLLM"
            )
            raise ConfigError(msg, field="llm", value=llm)
        super().__init__(**data)

    @classmethod
    def from_args(
        cls,
        retriever: BaseRetriever,
        llm: BaseLLM | None = None,
        *,
        streaming: bool = False,
        callback_manager: CallbackManager | None = None,
        **settings: Any,
    ) -> SARGQueryEngine:
        """Build the engine from a retriever and an LLM (default ``Settings.llm``).

        Args:
            retriever: Any LlamaIndex retriever.
            llm: Any LlamaIndex LLM; ``None`` uses ``llama_index.core.Settings.llm``.
            streaming: Stream the answer.
            callback_manager: The legacy callback manager, if any.
            **settings: SARG settings (``beam_width``, ``top_k``, ``similarity_threshold``,
                ``max_depth``, ``extractor``, ``embedder``, ``direction_classifier``…).
        """
        if llm is None:
            from llama_index.core import Settings

            llm = Settings.llm
        extra = {"callback_manager": callback_manager} if callback_manager is not None else {}
        return cls(retriever=retriever, llm=llm, streaming=streaming, **extra, **settings)

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "SARGQueryEngine"

    def custom_query(self, query_str: str) -> Response | StreamingResponse:
        """Answer ``query_str`` (the ``query`` entry point)."""
        query = validate_query(query_str)
        nodes = self.retriever.retrieve(query)
        result, originals = run_sarg(self.sarg_pipeline, query, nodes, self)
        prompt, sources, metadata = self._context(query, result, originals)
        if self.streaming:
            stream = self.llm.stream_complete(prompt)
            return StreamingResponse(_deltas(stream), source_nodes=sources, metadata=metadata)
        answer = self.llm.complete(prompt).text
        return Response(answer, source_nodes=sources, metadata=metadata)

    @dispatcher.span
    async def acustom_query(self, query_str: str) -> Response | AsyncStreamingResponse:
        """Async :meth:`custom_query` (the ``aquery`` entry point), natively async."""
        query = validate_query(query_str)
        nodes = await self.retriever.aretrieve(query)
        result, originals = await arun_sarg(self.sarg_pipeline, query, nodes, self)
        prompt, sources, metadata = self._context(query, result, originals)
        if self.streaming:
            stream = await self.llm.astream_complete(prompt)
            return AsyncStreamingResponse(_adeltas(stream), source_nodes=sources, metadata=metadata)
        answer = (await self.llm.acomplete(prompt)).text
        return Response(answer, source_nodes=sources, metadata=metadata)

    def _context(
        self, query: str, result: SARGResult | None, originals: Any
    ) -> tuple[str, list[NodeWithScore], dict[str, Any]]:
        if result is None:
            prompt = empty_prompt(self.sarg_pipeline, query)
            summary = {
                "query": query,
                "fallback": True,
                "fallback_reason": NO_DOCUMENTS,
                "chains": [],
                "prompt": prompt,
            }
            return prompt, [], {"sarg": summary, "sarg_result": None}
        timings = {k: v for k, v in result.stats.items() if k.startswith("time_")}
        summary = {
            **result_summary(result),
            "node_ids": node_ids(originals),  # cited id -> LlamaIndex node id
            "prompt": result.prompt,
            "timings_ms": timings,
        }
        sources = evidence_nodes(result, originals)
        return result.prompt, sources, {"sarg": summary, "sarg_result": result}


def _deltas(stream: Iterator[Any]) -> Iterator[str]:
    for chunk in stream:
        if chunk.delta:
            yield chunk.delta


async def _adeltas(stream: AsyncIterator[Any]) -> AsyncIterator[str]:
    async for chunk in stream:
        if chunk.delta:
            yield chunk.delta
