"""LlamaIndex ``NodeWithScore`` ⇄ SARG records, and the adapters' shared settings and runs."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, TextNode

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
    "node_ids",
    "readable_id",
    "run_sarg",
    "to_nodes",
    "to_sources",
]

_HIDDEN = "sarg"  # kept out of the text LlamaIndex sends to the LLM and the embedder


def to_sources(
    nodes: Sequence[NodeWithScore], *, argument: str = "nodes"
) -> tuple[list[SourceDocument], dict[str, NodeWithScore]]:
    """Return SARG records for ``nodes`` and a map from their ids back to the originals.

    Ids are readable where the node allows (:func:`readable_id`: ``file_name``,
    ``title`` or ``doc_id`` metadata, a non-UUID source document id, the ``node_id``
    last), made unique by position if repeated; the text is the node's content without
    metadata. :func:`node_ids` maps them back to node ids.

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
    ids = unique_ids([readable_id(n.node) for n in items])
    sources = [
        SourceDocument(
            i, n.node.get_content(metadata_mode=MetadataMode.NONE), dict(n.node.metadata)
        )
        for i, n in zip(ids, items)
    ]
    return sources, dict(zip(ids, items))


_READABLE_KEYS = ("file_name", "title", "doc_id")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def readable_id(node: BaseNode) -> str:
    """The id chains and prompts cite for ``node``: readable when the node allows.

    The first non-empty string among the metadata ``file_name``, ``title`` and
    ``doc_id``; else the source document's id (``ref_doc_id``) unless it is a generated
    UUID; else the ``node_id`` (often a UUID, hence last).

    Example:
        >>> readable_id(TextNode(id_="2ad9436e-0000-4000-8000-000000000000", text="x",
        ...                      metadata={"file_name": "gaucher.txt"}))
        'gaucher.txt'
        >>> readable_id(TextNode(id_="n1", text="x"))
        'n1'
    """
    for key in _READABLE_KEYS:
        value = node.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    source = node.ref_doc_id
    if isinstance(source, str) and source.strip() and not _UUID.fullmatch(source.strip()):
        return source.strip()
    return node.node_id


def node_ids(originals: Mapping[str, NodeWithScore]) -> dict[str, str]:
    """Cited id → the LlamaIndex ``node_id`` it stands for (kept in ``metadata["sarg"]``)."""
    return {cited: original.node.node_id for cited, original in originals.items()}


def _hidden(keys: Sequence[str]) -> list[str]:
    return [*keys, _HIDDEN] if _HIDDEN not in keys else list(keys)


def chains_node(
    result: SARGResult, originals: Mapping[str, NodeWithScore] | None = None
) -> NodeWithScore:
    """The first output node: the serialized chains, scored by the best chain.

    Its ``metadata["sarg"]["node_ids"]`` maps each cited id to its node id.
    """
    summary = {"role": "chains", **result_summary(result)}
    if originals is not None:
        summary["node_ids"] = node_ids(originals)
    node = TextNode(
        id_=CHAINS_ID,
        text=serialize_chains(result.chains),
        metadata={_HIDDEN: summary},
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
        record = {**evidence_metadata(result, passage, rank), "node_id": original.node.node_id}
        update: dict[str, Any] = {
            "metadata": with_sarg_metadata(original.node.metadata, record),
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
    return evidence if result.used_fallback else [chains_node(result, originals), *evidence]


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
