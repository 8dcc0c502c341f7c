"""``SARGDocumentTransformer``: SARG as an LCEL Runnable and a ``BaseDocumentTransformer``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.documents import BaseDocumentTransformer, Document
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from pydantic import ConfigDict

from sarg_integrations._adapters import SARGSettings
from sarg_integrations.errors import InputError
from sarg_integrations.langchain._convert import (
    arun_sarg,
    parse_input,
    run_sarg,
    to_documents,
)

__all__ = ["SARGDocumentTransformer"]


class SARGDocumentTransformer(
    SARGSettings,
    RunnableSerializable[dict[str, Any], list[Document]],
    BaseDocumentTransformer,
):
    """Turn retrieved documents into reasoning chains plus the evidence behind them.

    A ``Runnable`` taking ``{"query": str, "documents": list[Document]}`` (``"question"``
    is accepted for ``"query"``) and returning new documents: first a "reasoning chains"
    document whose text is the serialized chains with ``[id]`` citations, then the
    evidence documents behind the kept chains, in the order the prompt cites them. Each
    carries ``metadata["sarg"]`` (chain ids, hop positions, scores) next to its original
    metadata; the input documents are never modified. When SARG finds no chain it
    returns every non-empty input document (as copies marked ``"fallback": True``), so
    it never hands on less context than flat RAG would; with ``evidence_fill=n`` the
    chain evidence is followed by ``n`` documents picked by bridge-guided relevance,
    which are also the whole output on fallback.

    Each pipeline stage (extract, load_models, encode, build, direction, match, traverse,
    compile) is reported
    as a child run with its counters, so it shows up in callbacks and tracing. Settings
    mirror :class:`~sarg_integrations.SARGConfig` and are validated at construction;
    models load lazily on the first call, once per transformer.

    !!! note "Installation"
        ``pip install "sarg-integrations[langchain]"``

    Args:
        beam_width: Beam width β (default 3).
        top_k: Chains kept (default 3).
        similarity_threshold: Entry-node threshold τ (default 0.5).
        max_depth: Most hops per chain (default 8).
        extractor: A SARG ``TripleExtractor`` (default: the offline spaCy extractor).
        embedder: A SARG ``Embedder`` or a LangChain ``Embeddings`` (default: the
            embedded all-MiniLM-L6-v2).
        direction_classifier: A SARG ``DirectionPredictor`` (default: the shipped
            ``DirectionClassifier``).
        pipeline: A ready ``SARGPipeline`` to share instead of the settings.
        **kwargs: The other :class:`~sarg_integrations.SARGConfig` fields
            (``max_entry_nodes``, ``merge_threshold``, ``schema``, ``direction``,
            ``evidence``, …) and ``keyphrase_extractor`` / ``prompt_template``.

    Raises:
        ConfigError: A setting is out of range, unknown, or of the wrong type.

    Example:
        ```python
        from langchain_core.runnables import RunnablePassthrough
        from sarg_integrations.langchain import SARGDocumentTransformer

        chain = {"query": RunnablePassthrough(), "documents": retriever} | SARGDocumentTransformer(
            top_k=2
        )
        chains_doc, *evidence = chain.invoke("What does a GBA1 mutation lead to?")
        evidence[0].metadata["sarg"]["chain_ids"]  # e.g. [1]
        ```
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Run SARG on ``input["documents"]`` for ``input["query"]``.

        Raises:
            InputError: The input is not a ``{"query", "documents"}`` mapping, the query
                is empty, or a document is not a ``Document``.
        """
        return self._call_with_config(self._invoke, input, config)

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Async :meth:`invoke`, through the core's native :meth:`SARGPipeline.arun`."""
        return await self._acall_with_config(self._ainvoke, input, config)

    def _invoke(
        self, input: dict[str, Any], run_manager: CallbackManagerForChainRun
    ) -> list[Document]:
        query, documents = parse_input(input, type(self).__name__)
        result, originals = run_sarg(self.sarg_pipeline, query, documents, run_manager)
        return [] if result is None else to_documents(result, originals)

    async def _ainvoke(
        self, input: dict[str, Any], run_manager: AsyncCallbackManagerForChainRun
    ) -> list[Document]:
        query, documents = parse_input(input, type(self).__name__)
        result, originals = await arun_sarg(self.sarg_pipeline, query, documents, run_manager)
        return [] if result is None else to_documents(result, originals)

    def transform_documents(self, documents: Sequence[Document], **kwargs: Any) -> list[Document]:
        """``BaseDocumentTransformer`` entry point; the query is the ``query=`` keyword.

        Args:
            documents: The retrieved documents.
            **kwargs: ``query`` (required) and optionally ``config`` (a RunnableConfig).

        Raises:
            InputError: ``query=`` is missing.
        """
        query = self._query_kwarg(kwargs)
        return self.invoke({"query": query, "documents": documents}, kwargs.get("config"))

    async def atransform_documents(
        self, documents: Sequence[Document], **kwargs: Any
    ) -> list[Document]:
        """Async :meth:`transform_documents` (native async, no executor)."""
        query = self._query_kwarg(kwargs)
        return await self.ainvoke({"query": query, "documents": documents}, kwargs.get("config"))

    def _query_kwarg(self, kwargs: dict[str, Any]) -> Any:
        if "query" not in kwargs:
            msg = (
                f"{type(self).__name__}.transform_documents needs the question as query=...; "
                "SARG reasons towards a query (BaseDocumentTransformer has no query argument)"
            )
            raise InputError(msg, argument="query", value=None)
        return kwargs["query"]
