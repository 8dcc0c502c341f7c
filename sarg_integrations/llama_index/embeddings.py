"""Embeddings in both directions: LlamaIndex ``BaseEmbedding`` ⇄ SARG ``Embedder``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from llama_index.core.bridge.pydantic import PrivateAttr

from sarg_integrations.embedding import Embedder, SentenceTransformerEmbedder
from sarg_integrations.errors import ConfigError

__all__ = ["LlamaIndexEmbedder", "SARGEmbedding"]


class LlamaIndexEmbedder:
    """Use any LlamaIndex ``BaseEmbedding`` as a SARG embedder.

    The LlamaIndex adapters wrap a ``BaseEmbedding`` passed as ``embedder=``
    automatically; use this class to give one to a core
    :class:`~sarg_integrations.SARGPipeline`.

    Installation:
        ``pip install "sarg-integrations[llama-index]"``

    Args:
        embed_model: The LlamaIndex embedding model; SARG calls
            ``get_text_embedding_batch`` for every text it compares.

    Example:
        ```python
        from llama_index.core import Settings
        from sarg_integrations import SARGPipeline
        from sarg_integrations.llama_index import LlamaIndexEmbedder

        pipeline = SARGPipeline(embedder=LlamaIndexEmbedder(Settings.embed_model))
        ```
    """

    def __init__(self, embed_model: BaseEmbedding) -> None:
        if not callable(getattr(embed_model, "get_text_embedding_batch", None)):
            msg = (
                f"embed_model={embed_model!r} has no get_text_embedding_batch() method; pass a "
                "LlamaIndex BaseEmbedding (e.g. HuggingFaceEmbedding, OpenAIEmbedding)"
            )
            raise ConfigError(msg, field="embed_model", value=embed_model)
        self.embed_model = embed_model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return one row per text, from ``embed_model.get_text_embedding_batch``."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.asarray(self.embed_model.get_text_embedding_batch(texts), dtype=np.float32)

    def __repr__(self) -> str:
        return f"LlamaIndexEmbedder({type(self.embed_model).__name__})"


class SARGEmbedding(BaseEmbedding):
    """A SARG embedder (by default the embedded all-MiniLM-L6-v2) as a LlamaIndex embedding.

    Handy for an offline ``VectorStoreIndex`` that retrieves with the same encoder as
    SARG.

    Installation:
        ``pip install "sarg-integrations[llama-index]"``

    Args:
        embedder: Any SARG :class:`~sarg_integrations.Embedder`; default
            :class:`~sarg_integrations.SentenceTransformerEmbedder` (loaded lazily).
        **kwargs: ``BaseEmbedding`` fields (``embed_batch_size``, ``callback_manager``…).

    Example:
        ```python
        from llama_index.core import VectorStoreIndex
        from sarg_integrations.llama_index import SARGEmbedding

        index = VectorStoreIndex.from_documents(documents, embed_model=SARGEmbedding())
        ```
    """

    _embedder: Any = PrivateAttr(default=None)

    def __init__(self, embedder: Embedder | None = None, **kwargs: Any) -> None:
        if embedder is not None and not callable(getattr(embedder, "embed", None)):
            msg = f"embedder={embedder!r} has no embed(texts) method; pass a SARG Embedder"
            raise ConfigError(msg, field="embedder", value=embedder)
        default_name = "all-MiniLM-L6-v2" if embedder is None else type(embedder).__name__
        kwargs.setdefault("model_name", f"sarg:{default_name}")
        kwargs.setdefault("embed_batch_size", 64)
        super().__init__(**kwargs)
        self._embedder = embedder if embedder is not None else SentenceTransformerEmbedder()

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "SARGEmbedding"

    def _embed(self, texts: list[str]) -> list[Embedding]:
        if not texts:
            return []
        return np.asarray(self._embedder.embed(texts), dtype=np.float64).tolist()

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._embed([query])[0]

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return self._embed(list(texts))
