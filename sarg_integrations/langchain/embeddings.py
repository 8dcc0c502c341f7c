"""Embeddings in both directions: LangChain ``Embeddings`` ⇄ SARG ``Embedder``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from sarg_integrations.embedding import Embedder, SentenceTransformerEmbedder
from sarg_integrations.errors import ConfigError

__all__ = ["LangChainEmbedder", "SARGEmbeddings"]


class LangChainEmbedder:
    """Use any LangChain :class:`~langchain_core.embeddings.Embeddings` as a SARG embedder.

    The adapters wrap an ``Embeddings`` object passed as ``embedder=`` automatically; use
    this class to give one to a core :class:`~sarg_integrations.SARGPipeline`.

    Installation:
        ``pip install "sarg-integrations[langchain]"``

    Args:
        embeddings: The LangChain embeddings; SARG calls ``embed_documents`` for every
            text it compares (query, key phrases, graph nodes).

    Example:
        ```python
        from langchain_core.embeddings import DeterministicFakeEmbedding
        from sarg_integrations import SARGPipeline
        from sarg_integrations.langchain import LangChainEmbedder

        pipeline = SARGPipeline(embedder=LangChainEmbedder(DeterministicFakeEmbedding(size=64)))
        ```
    """

    def __init__(self, embeddings: Embeddings) -> None:
        if not callable(getattr(embeddings, "embed_documents", None)):
            msg = (
                f"embeddings={embeddings!r} has no embed_documents() method; pass a LangChain "
                "Embeddings object (e.g. HuggingFaceEmbeddings, OpenAIEmbeddings)"
            )
            raise ConfigError(msg, field="embeddings", value=embeddings)
        self.embeddings = embeddings

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return one row per text, from ``embeddings.embed_documents``."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.asarray(self.embeddings.embed_documents(texts), dtype=np.float32)

    def __repr__(self) -> str:
        return f"LangChainEmbedder({self.embeddings!r})"


class SARGEmbeddings(Embeddings):
    """A SARG embedder (by default the embedded all-MiniLM-L6-v2) as LangChain ``Embeddings``.

    Handy for an offline vector store whose retrieval uses the same encoder as SARG.

    Installation:
        ``pip install "sarg-integrations[langchain]"``

    Args:
        embedder: Any SARG :class:`~sarg_integrations.Embedder`; default
            :class:`~sarg_integrations.SentenceTransformerEmbedder` (loaded lazily).

    Example:
        ```python
        from langchain_core.vectorstores import InMemoryVectorStore
        from sarg_integrations.langchain import SARGEmbeddings

        store = InMemoryVectorStore.from_texts(texts, SARGEmbeddings())
        ```
    """

    def __init__(self, embedder: Embedder | None = None) -> None:
        if embedder is not None and not callable(getattr(embedder, "embed", None)):
            msg = f"embedder={embedder!r} has no embed(texts) method; pass a SARG Embedder"
            raise ConfigError(msg, field="embedder", value=embedder)
        self.embedder: Any = embedder if embedder is not None else SentenceTransformerEmbedder()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents, one list of floats per text."""
        if not texts:
            return []
        return np.asarray(self.embedder.embed(list(texts)), dtype=np.float64).tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self.embed_documents([text])[0]
