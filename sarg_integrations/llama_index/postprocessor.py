"""``SARGNodePostprocessor``: SARG as a LlamaIndex node postprocessor."""

from __future__ import annotations

from typing import Any

from llama_index.core.bridge.pydantic import ConfigDict
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from sarg_integrations._adapters import SARGSettings
from sarg_integrations.errors import InputError
from sarg_integrations.llama_index._convert import (
    arun_sarg,
    run_sarg,
    to_nodes,
)
from sarg_integrations.llama_index._tracing import dispatcher

__all__ = ["SARGNodePostprocessor"]


class SARGNodePostprocessor(SARGSettings, BaseNodePostprocessor):
    """Turn retrieved nodes into a reasoning-chains node plus the evidence behind it.

    Returns new ``NodeWithScore`` objects: first a ``TextNode`` (id
    ``sarg-reasoning-chains``) whose text is the serialized chains with ``[id]``
    citations, then copies of the nodes behind the kept chains, in the order the prompt
    cites them, each keeping its retrieval score and metadata plus ``metadata["sarg"]``
    (chain ids, hop positions, scores). ``"sarg"`` is excluded from the text LlamaIndex
    sends to the LLM and the embedder. Input nodes are never modified. When SARG finds no
    chain it returns every non-empty input node (as copies marked ``"fallback": True``).

    Works inside ``index.as_query_engine(node_postprocessors=[...])`` and
    ``RetrieverQueryEngine``; ``apostprocess_nodes`` runs the core natively async. Every
    stage emits an instrumentation span and :class:`SARGStageStartEvent` /
    :class:`SARGStageEndEvent`.

    !!! note "Installation"
        ``pip install "sarg-integrations[llama-index]"``

    Args:
        beam_width: Beam width β (default 3).
        top_k: Chains kept (default 3).
        similarity_threshold: Entry-node threshold τ (default 0.5).
        max_depth: Most hops per chain (default 8).
        extractor: A SARG ``TripleExtractor`` (default: the offline spaCy extractor).
        embedder: A SARG ``Embedder`` or a LlamaIndex ``BaseEmbedding`` (default: the
            embedded all-MiniLM-L6-v2).
        direction_classifier: A SARG ``DirectionPredictor`` (default: the shipped
            ``DirectionClassifier``).
        pipeline: A ready ``SARGPipeline`` to share instead of the settings.
        **kwargs: The other :class:`~sarg_integrations.SARGConfig` fields and
            ``keyphrase_extractor`` / ``prompt_template``.

    Raises:
        ConfigError: A setting is out of range, unknown, or of the wrong type.

    Example:
        ```python
        from sarg_integrations.llama_index import SARGNodePostprocessor

        engine = index.as_query_engine(
            similarity_top_k=8, node_postprocessors=[SARGNodePostprocessor(top_k=3)]
        )
        response = engine.query("What does a GBA1 mutation lead to?")
        ```
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "SARGNodePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        query = self._query(query_bundle)
        result, originals = run_sarg(self.sarg_pipeline, query, nodes, self)
        return [] if result is None else to_nodes(result, originals)

    @dispatcher.span
    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        query = self._query(query_bundle)
        result, originals = await arun_sarg(self.sarg_pipeline, query, nodes, self)
        return [] if result is None else to_nodes(result, originals)

    def _query(self, query_bundle: Any) -> str:
        if query_bundle is None:
            msg = (
                "SARGNodePostprocessor needs the query: call postprocess_nodes(nodes, "
                "query_str=...) or pass query_bundle=QueryBundle(...) (query engines pass it "
                "for you)"
            )
            raise InputError(msg, argument="query_bundle", value=None)
        if isinstance(query_bundle, str):
            return query_bundle
        return query_bundle.query_str
