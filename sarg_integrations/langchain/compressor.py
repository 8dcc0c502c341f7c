"""``SARGDocumentCompressor``: SARG as a query-aware ``BaseDocumentCompressor``."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.callbacks import AsyncCallbackManager, CallbackManager, Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from pydantic import ConfigDict

from sarg_integrations._adapters import SARGSettings
from sarg_integrations.langchain._convert import (
    arun_sarg,
    run_sarg,
    to_documents,
)

__all__ = ["SARGDocumentCompressor"]


class SARGDocumentCompressor(SARGSettings, BaseDocumentCompressor):
    """SARG for ``ContextualCompressionRetriever`` and ``DocumentCompressorPipeline``.

    ``compress_documents(documents, query)`` returns the same documents as
    :class:`~sarg_integrations.langchain.SARGDocumentTransformer`: the "reasoning chains"
    document, then the evidence documents with ``metadata["sarg"]`` (or every non-empty
    input document, marked as fallback, when no chain is found). Inputs are never
    modified. The run and its stages are reported to ``callbacks``.

    !!! note "Installation"
        ``pip install "sarg-integrations[langchain]"``

    Args:
        **kwargs: The same settings as ``SARGDocumentTransformer`` (``beam_width``,
            ``top_k``, ``similarity_threshold``, ``max_depth``, ``extractor``,
            ``embedder``, ``direction_classifier``, ``pipeline``, …).

    Raises:
        ConfigError: A setting is out of range, unknown, or of the wrong type.

    Example:
        ```python
        from langchain_classic.retrievers import ContextualCompressionRetriever
        from sarg_integrations.langchain import SARGDocumentCompressor

        retriever = ContextualCompressionRetriever(
            base_compressor=SARGDocumentCompressor(), base_retriever=store.as_retriever()
        )
        documents = retriever.invoke("What does a GBA1 mutation lead to?")
        ```
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> list[Document]:
        """Return the chains document and the evidence behind the kept chains.

        Raises:
            InputError: The query is empty or a document is not a ``Document``.
        """
        manager = CallbackManager.configure(inheritable_callbacks=callbacks)
        run = manager.on_chain_start(
            None, {"query": query, "documents": documents}, name=type(self).__name__
        )
        try:
            result, originals = run_sarg(self.sarg_pipeline, query, documents, run)
            output = [] if result is None else to_documents(result, originals)
        except BaseException as exc:
            run.on_chain_error(exc)
            raise
        run.on_chain_end({"documents": output})
        return output

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> list[Document]:
        """Async :meth:`compress_documents`, through the core's native ``arun``."""
        manager = AsyncCallbackManager.configure(inheritable_callbacks=callbacks)
        run = await manager.on_chain_start(
            None, {"query": query, "documents": documents}, name=type(self).__name__
        )
        try:
            result, originals = await arun_sarg(self.sarg_pipeline, query, documents, run)
            output = [] if result is None else to_documents(result, originals)
        except BaseException as exc:
            await run.on_chain_error(exc)
            raise
        await run.on_chain_end({"documents": output})
        return output
