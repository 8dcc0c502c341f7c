"""LangChain components over the SARG core: a Runnable transformer, a compressor, a chain.

Installation:
    ``pip install "sarg-integrations[langchain]"``

Example:
    ```python
    from langchain_core.runnables import RunnablePassthrough
    from sarg_integrations.langchain import SARGDocumentTransformer

    sarg = {"query": RunnablePassthrough(), "documents": retriever} | SARGDocumentTransformer()
    documents = sarg.invoke("What does a mutation in the GBA1 gene ultimately lead to?")
    print(documents[0].page_content)  # the reasoning chains, with [id] citations
    ```
"""

from __future__ import annotations

from sarg_integrations.errors import MissingDependencyError

try:
    import langchain_core  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise MissingDependencyError(
        "langchain-core", feature="sarg_integrations.langchain", extra="langchain"
    ) from exc

from sarg_integrations.langchain.chain import create_sarg_chain
from sarg_integrations.langchain.compressor import SARGDocumentCompressor
from sarg_integrations.langchain.embeddings import LangChainEmbedder, SARGEmbeddings
from sarg_integrations.langchain.transformer import SARGDocumentTransformer

__all__ = [
    "LangChainEmbedder",
    "SARGDocumentCompressor",
    "SARGDocumentTransformer",
    "SARGEmbeddings",
    "create_sarg_chain",
]
