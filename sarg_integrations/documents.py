"""Turning what callers pass as documents into :class:`SourceDocument` records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sarg_integrations.errors import InputError
from sarg_integrations.schema import SourceDocument

__all__ = ["DocumentLike", "coerce_documents", "validate_query"]

DocumentLike = str | Mapping[str, Any] | SourceDocument


def _preview(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def validate_query(query: Any) -> str:
    """Return ``query`` if it is a non-empty string, else raise :class:`InputError`."""
    if not isinstance(query, str):
        msg = f"query must be a string, got {type(query).__name__} {_preview(query)}"
        raise InputError(msg, argument="query", value=query)
    if not query.strip():
        msg = f"query={query!r} is empty; pass the question to reason about"
        raise InputError(msg, argument="query", value=query)
    return query


def _from_mapping(item: Mapping[str, Any], index: int) -> SourceDocument:
    text = item.get("text", item.get("page_content"))
    if text is None and ("text" in item or "page_content" in item):
        msg = f"documents[{index}]['text'] is None; give the document its text as a string"
        raise InputError(msg, argument=f"documents[{index}]", value=item)
    if text is None:
        msg = (
            f"documents[{index}] has no 'text' key (keys: {sorted(map(str, item))}); "
            "give each document dict a 'text' (and optionally 'id' and 'metadata')"
        )
        raise InputError(msg, argument=f"documents[{index}]", value=item)
    if not isinstance(text, str):
        msg = f"documents[{index}]['text'] must be a string, got {type(text).__name__}"
        raise InputError(msg, argument=f"documents[{index}]", value=item)
    doc_id = item.get("id")
    extra = item.get("metadata")
    if extra is not None and not isinstance(extra, Mapping):
        msg = (
            f"documents[{index}]['metadata'] must be a dict, got {type(extra).__name__} "
            f"{_preview(extra)}; pass a dict or leave it out"
        )
        raise InputError(msg, argument=f"documents[{index}]", value=item)
    metadata = dict(extra or {})
    metadata.update(
        {k: v for k, v in item.items() if k not in {"id", "text", "page_content", "metadata"}}
    )
    return SourceDocument(
        id=str(doc_id) if doc_id is not None else f"doc-{index}", text=text, metadata=metadata
    )


def _check_record(record: SourceDocument, index: int) -> SourceDocument:
    """Validate a record built by the caller (the dataclass itself checks nothing).

    An ``int`` id (a database row id) becomes its string; ``metadata=None`` becomes ``{}``
    as it does for dicts. Anything else that is not a string id, a string text or a
    mapping is an :class:`InputError` naming the position.
    """
    where = f"documents[{index}]"
    doc_id, text, metadata = record.id, record.text, record.metadata
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    if not isinstance(doc_id, str):
        msg = (
            f"{where}.id must be a string (or an int), got {type(doc_id).__name__} "
            f"{_preview(doc_id)}; pass SourceDocument(id=str(...), ...)"
        )
        raise InputError(msg, argument=where, value=record)
    if not isinstance(text, str):
        msg = (
            f"{where}.text must be a string, got {type(text).__name__} {_preview(text)}; "
            "give the document its text as a string (use '' for an empty one)"
        )
        raise InputError(msg, argument=where, value=record)
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, Mapping):
        msg = (
            f"{where}.metadata must be a dict, got {type(metadata).__name__} "
            f"{_preview(metadata)}; pass a dict or leave it out"
        )
        raise InputError(msg, argument=where, value=record)
    if (doc_id, metadata) == (record.id, record.metadata):
        return record
    return SourceDocument(id=doc_id, text=text, metadata=metadata)


def coerce_documents(documents: Iterable[DocumentLike]) -> list[SourceDocument]:
    """Return ``documents`` as records with unique ids.

    Strings get ids ``doc-0``, ``doc-1``…; dicts need ``text`` and may carry ``id`` and
    ``metadata`` (other keys join the metadata); records pass through once checked (an
    ``int`` id becomes a string, ``metadata=None`` an empty dict).

    Raises:
        InputError: No documents, an item of an unsupported type, a dict or record
            without string text, a record with a non-string id or non-dict metadata, or
            two documents with the same id (the message names both positions).

    Example:
        >>> [d.id for d in coerce_documents(["a", {"id": "x", "text": "b"}])]
        ['doc-0', 'x']
    """
    if isinstance(documents, (str, bytes, Mapping)):
        msg = (
            f"documents must be a list of documents, got a single {type(documents).__name__}; "
            "wrap it in a list"
        )
        raise InputError(msg, argument="documents", value=documents)
    try:
        items = list(documents)
    except TypeError:
        msg = f"documents must be a list of documents, got {type(documents).__name__}"
        raise InputError(msg, argument="documents", value=documents) from None
    if not items:
        msg = "documents is empty; pass the retrieved documents to reason over"
        raise InputError(msg, argument="documents", value=items)
    records: list[SourceDocument] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        if isinstance(item, SourceDocument):
            record = _check_record(item, index)
        elif isinstance(item, str):
            record = SourceDocument(id=f"doc-{index}", text=item)
        elif isinstance(item, Mapping):
            record = _from_mapping(item, index)
        else:
            msg = (
                f"documents[{index}] is a {type(item).__name__} ({_preview(item)}); "
                "use a string, a {'id', 'text'} dict or a SourceDocument"
            )
            raise InputError(msg, argument=f"documents[{index}]", value=item)
        if record.id in seen:
            msg = (
                f"documents[{seen[record.id]}] and documents[{index}] share the id "
                f"{record.id!r}; document ids must be unique (chains cite them)"
            )
            raise InputError(msg, argument=f"documents[{index}]", value=record.id)
        seen[record.id] = index
        records.append(record)
    return records
