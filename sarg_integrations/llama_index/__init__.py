"""LlamaIndex components over the SARG core: a node postprocessor and a query engine.

Installation:
    ``pip install "sarg-integrations[llama-index]"``

Example:
    ```python
    from sarg_integrations.llama_index import SARGNodePostprocessor

    engine = index.as_query_engine(
        similarity_top_k=8, node_postprocessors=[SARGNodePostprocessor(top_k=3)]
    )
    print(engine.query("What does a mutation in the GBA1 gene ultimately lead to?"))
    ```
"""

from __future__ import annotations

from sarg_integrations.errors import MissingDependencyError

try:
    import llama_index.core  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise MissingDependencyError(
        "llama-index-core", feature="sarg_integrations.llama_index", extra="llama-index"
    ) from exc

from sarg_integrations.llama_index._tracing import SARGStageEndEvent, SARGStageStartEvent
from sarg_integrations.llama_index.embeddings import LlamaIndexEmbedder, SARGEmbedding
from sarg_integrations.llama_index.postprocessor import SARGNodePostprocessor
from sarg_integrations.llama_index.query_engine import SARGQueryEngine

__all__ = [
    "LlamaIndexEmbedder",
    "SARGEmbedding",
    "SARGNodePostprocessor",
    "SARGQueryEngine",
    "SARGStageEndEvent",
    "SARGStageStartEvent",
]
