"""LangChain ``Document`` ⇄ SARG records, and the adapters' shared settings and run helpers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.documents import Document

from sarg_integrations._adapters import (
    CHAINS_ID,
    caller_id,
    evidence_metadata,
    result_summary,
    unique_ids,
    with_sarg_metadata,
)
from sarg_integrations.documents import validate_query
from sarg_integrations.errors import InputError
from sarg_integrations.langchain._tracing import CallbackStageObserver
from sarg_integrations.pipeline import SARGPipeline
from sarg_integrations.prompting import serialize_chains
from sarg_integrations.schema import SARGResult, SourceDocument

__all__ = [
    "arun_sarg",
    "parse_input",
    "run_sarg",
    "to_documents",
    "to_sources",
]


def to_sources(
    documents: Sequence[Document], *, argument: str = "documents"
) -> tuple[list[SourceDocument], dict[str, Document]]:
    """Return SARG records for ``documents`` and a map from their ids back to the originals.

    Ids: the ``Document.id`` when set, else ``metadata["id"]`` (a string or an int),
    else ``doc-{position}``; a repeated id, or the chains document's id, gets
    ``#{position}`` appended, so ids are unique and stable.

    Raises:
        InputError: ``documents`` is not a list of ``Document`` objects, or a
            ``metadata["id"]`` is neither a string nor an int (a numpy array…).
    """
    if isinstance(documents, (str, bytes, Mapping, Document)):
        kind = type(documents).__name__
        msg = f"{argument} must be a list of Document objects, got a single {kind}"
        raise InputError(msg, argument=argument, value=documents)
    try:
        docs = list(documents)
    except TypeError:
        msg = f"{argument} must be a list of Document objects, got {type(documents).__name__}"
        raise InputError(msg, argument=argument, value=documents) from None
    for index, doc in enumerate(docs):
        if not isinstance(doc, Document):
            msg = (
                f"{argument}[{index}] is a {type(doc).__name__}, not a langchain_core Document; "
                "pass the retriever's output (list[Document])"
            )
            raise InputError(msg, argument=f"{argument}[{index}]", value=doc)
    ids = unique_ids(
        [
            d.id or caller_id(d.metadata.get("id"), f"{argument}[{i}].metadata['id']")
            for i, d in enumerate(docs)
        ]
    )
    sources = [SourceDocument(i, d.page_content, dict(d.metadata)) for i, d in zip(ids, docs)]
    return sources, dict(zip(ids, docs))


def chains_document(result: SARGResult) -> Document:
    """The first output document: the serialized chains with ``metadata["sarg"]``."""
    return Document(
        id=CHAINS_ID,
        page_content=serialize_chains(result.chains),
        metadata={"sarg": {"role": "chains", **result_summary(result)}},
    )


def evidence_documents(result: SARGResult, originals: Mapping[str, Document]) -> list[Document]:
    """New copies of the documents behind the kept chains (all documents on fallback)."""
    out = []
    for rank, passage in enumerate(result.evidence):
        original = originals[passage.document_id]
        update: dict[str, Any] = {
            "metadata": with_sarg_metadata(
                original.metadata, evidence_metadata(result, passage, rank)
            )
        }
        if original.id == CHAINS_ID:  # renamed on input: keep the output ids unique
            update["id"] = passage.document_id
        if passage.text != original.page_content:  # evidence="sentences"
            update["page_content"] = passage.text
        out.append(original.model_copy(update=update))
    return out


def to_documents(result: SARGResult, originals: Mapping[str, Document]) -> list[Document]:
    """The chains document (unless SARG fell back) followed by the evidence documents."""
    evidence = evidence_documents(result, originals)
    return evidence if result.used_fallback else [chains_document(result), *evidence]


def parse_input(value: Any, owner: str) -> tuple[str, Any]:
    """Return ``(query, documents)`` from a ``{"query"|"question", "documents"}`` mapping."""
    shape = '{"query": str, "documents": list[Document]}'
    if not isinstance(value, Mapping):
        msg = (
            f"{owner} takes {shape}, got {type(value).__name__}; compose it as "
            f'{{"query": RunnablePassthrough(), "documents": retriever}} | {owner}(...)'
        )
        raise InputError(msg, argument="input", value=value)
    query = value.get("query", value.get("question"))
    if query is None or "documents" not in value:
        missing = "query" if query is None else "documents"
        msg = (
            f"{owner} input has no {missing!r} key (keys: {sorted(map(str, value))}); "
            f'pass {shape} ("question" is accepted for "query")'
        )
        raise InputError(msg, argument=missing, value=value)
    return query, value["documents"]


def run_sarg(
    pipeline: SARGPipeline,
    query: Any,
    documents: Sequence[Document],
    run_manager: CallbackManagerForChainRun | None,
) -> tuple[SARGResult | None, dict[str, Document]]:
    """Run the core pipeline, each stage a child run; ``None`` result for no documents."""
    query = validate_query(query)
    sources, originals = to_sources(documents)
    if not sources:
        return None, originals
    observer = CallbackStageObserver(run_manager)
    return pipeline.run(query, sources, observer=observer), originals


async def arun_sarg(
    pipeline: SARGPipeline,
    query: Any,
    documents: Sequence[Document],
    run_manager: AsyncCallbackManagerForChainRun | None,
) -> tuple[SARGResult | None, dict[str, Document]]:
    """Async :func:`run_sarg` through :meth:`SARGPipeline.arun`."""
    query = validate_query(query)
    sources, originals = to_sources(documents)
    if not sources:
        return None, originals
    observer = CallbackStageObserver(run_manager.get_sync() if run_manager else None)
    return await pipeline.arun(query, sources, observer=observer), originals
