"""LlamaIndex ``NodeWithScore`` ⇄ SARG records, and the adapters' shared settings and runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from sarg_integrations._adapters import (
    CHAINS_ID,
    evidence_metadata,
    result_summary,
    unique_ids,
    with_sarg_metadata,
)
from sarg_integrations.documents import validate_query
from sarg_integrations.errors import InputError
from sarg_integrations.llama_index._tracing import InstrumentationStageObserver
from sarg_integrations.pipeline import SARGPipeline
from sarg_integrations.prompting import serialize_chains
from sarg_integrations.schema import SARGResult, SourceDocument

__all__ = [
    "arun_sarg",
    "chains_node",
    "evidence_nodes",
    "run_sarg",
    "to_nodes",
    "to_sources",
]

_HIDDEN = "sarg"  # kept out of the text LlamaIndex sends to the LLM and the embedder


def to_sources(
    nodes: Sequence[NodeWithScore], *, argument: str = "nodes"
) -> tuple[list[SourceDocument], dict[str, NodeWithScore]]:
    """Return SARG records for ``nodes`` and a map from their ids back to the originals.

    Ids are the nodes' ``node_id`` (made unique by position if repeated); the text is the
    node's content without metadata.

    Raises:
        InputError: ``nodes`` is not a list of ``NodeWithScore``.
    """
    if isinstance(nodes, (str, bytes, Mapping, NodeWithScore)):
        msg = f"{argument} must be a list of NodeWithScore, got a single {type(nodes).__name__}"
        raise InputError(msg, argument=argument, value=nodes)
    items = list(nodes)
    for index, item in enumerate(items):
        if not isinstance(item, NodeWithScore):
            msg = (
                f"{argument}[{index}] is a {type(item).__name__}, not a NodeWithScore; pass the "
                "retriever's output, or wrap nodes as NodeWithScore(node=node)"
            )
            raise InputError(msg, argument=f"{argument}[{index}]", value=item)
    ids = unique_ids([n.node.node_id for n in items])
    sources = [
        SourceDocument(
            i, n.node.get_content(metadata_mode=MetadataMode.NONE), dict(n.node.metadata)
        )
        for i, n in zip(ids, items)
    ]
    return sources, dict(zip(ids, items))


def _hidden(keys: Sequence[str]) -> list[str]:
    return [*keys, _HIDDEN] if _HIDDEN not in keys else list(keys)


def chains_node(result: SARGResult) -> NodeWithScore:
    """The first output node: the serialized chains, scored by the best chain."""
    node = TextNode(
        id_=CHAINS_ID,
        text=serialize_chains(result.chains),
        metadata={_HIDDEN: {"role": "chains", **result_summary(result)}},
        excluded_llm_metadata_keys=[_HIDDEN],
        excluded_embed_metadata_keys=[_HIDDEN],
    )
    return NodeWithScore(node=node, score=float(result.chains[0].score) if result.chains else None)


def evidence_nodes(
    result: SARGResult, originals: Mapping[str, NodeWithScore]
) -> list[NodeWithScore]:
    """New copies of the nodes behind the kept chains (all nodes on fallback), same scores."""
    out = []
    for rank, passage in enumerate(result.evidence):
        original = originals[passage.document_id]
        update: dict[str, Any] = {
            "metadata": with_sarg_metadata(
                original.node.metadata, evidence_metadata(result, passage, rank)
            ),
            "excluded_llm_metadata_keys": _hidden(original.node.excluded_llm_metadata_keys),
            "excluded_embed_metadata_keys": _hidden(original.node.excluded_embed_metadata_keys),
        }
        if original.node.node_id == CHAINS_ID:  # renamed on input: keep output ids unique
            update["id_"] = passage.document_id
        node = original.node.model_copy(update=update)
        if passage.text != original.node.get_content(metadata_mode=MetadataMode.NONE):
            node.set_content(passage.text)  # evidence="sentences"; the copy only
        out.append(NodeWithScore(node=node, score=original.score))
    return out


def to_nodes(result: SARGResult, originals: Mapping[str, NodeWithScore]) -> list[NodeWithScore]:
    """The chains node (unless SARG fell back) followed by the evidence nodes."""
    evidence = evidence_nodes(result, originals)
    return evidence if result.used_fallback else [chains_node(result), *evidence]


def run_sarg(
    pipeline: SARGPipeline, query: Any, nodes: Sequence[NodeWithScore], instance: Any
) -> tuple[SARGResult | None, dict[str, NodeWithScore]]:
    """Run the core pipeline with a span per stage; ``None`` result for no nodes."""
    query = validate_query(query)
    sources, originals = to_sources(nodes)
    if not sources:
        return None, originals
    observer = InstrumentationStageObserver(instance)
    return pipeline.run(query, sources, observer=observer), originals


async def arun_sarg(
    pipeline: SARGPipeline, query: Any, nodes: Sequence[NodeWithScore], instance: Any
) -> tuple[SARGResult | None, dict[str, NodeWithScore]]:
    """Async :func:`run_sarg` through :meth:`SARGPipeline.arun`."""
    query = validate_query(query)
    sources, originals = to_sources(nodes)
    if not sources:
        return None, originals
    observer = InstrumentationStageObserver(instance)
    return await pipeline.arun(query, sources, observer=observer), originals
