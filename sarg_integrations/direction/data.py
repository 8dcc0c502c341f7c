"""The direction classifier's data: the labeled query sets and plain query lists."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from sarg_integrations.direction.base import LABELS
from sarg_integrations.errors import InputError
from sarg_integrations.io import split_json_lines

__all__ = [
    "DATA_RESOURCE",
    "SPLITS",
    "json_lines",
    "load_direction_dataset",
    "read_queries",
    "resource_path",
]

DATA_RESOURCE = "data/direction_queries.jsonl"
SPLITS = ("train", "validation", "test")


def resource_path(name: str) -> Path:
    """The path of a file packaged in ``sarg_integrations`` (e.g. ``data/...``)."""
    return Path(str(resources.files("sarg_integrations").joinpath(name)))


def load_direction_dataset(
    path: str | Path | None = None, split: str | None = None
) -> list[dict[str, Any]]:
    """Read labeled direction queries from a JSONL file.

    Each line is an object with ``query`` and ``label`` (one of :data:`LABELS`) and
    optionally ``split`` (``train``/``validation``/``test``); other keys are kept.

    Args:
        path: The JSONL file; ``None`` reads the packaged ``direction_queries.jsonl``.
        split: Keep only rows of this split (rows without a split count as ``train``).

    Raises:
        InputError: The file is missing, or a line is not valid JSON or lacks a
            ``query`` string / a valid ``label``.
    """
    if split is not None and split not in SPLITS:
        msg = f"split={split!r} is not a split; use one of {', '.join(SPLITS)} or None"
        raise InputError(msg, argument="split", value=split)
    file = Path(path) if path is not None else resource_path(DATA_RESOURCE)
    if not file.is_file():
        msg = (
            f"--data {str(file)!r} does not exist; pass a JSONL file with 'query' and "
            "'label' per line"
        )
        raise InputError(msg, argument="data", value=str(file))
    rows: list[dict[str, Any]] = []
    with file.open(encoding="utf-8") as handle:
        for number, row in json_lines(
            handle, file, "data", hint="; write one JSON object per line"
        ):
            if (
                not isinstance(row, dict)
                or not isinstance(row.get("query"), str)
                or not row["query"].strip()
            ):
                msg = f"{file}:{number}: each line needs a non-empty 'query' string"
                raise InputError(msg, argument="data", value=str(file))
            label = str(row.get("label", "")).strip().lower()
            if label not in LABELS:
                msg = (
                    f"{file}:{number}: label={row.get('label')!r} is not one of "
                    f"{', '.join(LABELS)}; fix the label or drop the line"
                )
                raise InputError(msg, argument="data", value=str(file))
            row["label"] = label
            row.setdefault("split", "train")
            if split is None or row["split"] == split:
                rows.append(row)
    return rows


def json_lines(
    lines: Iterable[str], file: Path, argument: str, *, hint: str = ""
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank JSON line; bad JSON is an InputError."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            msg = f"{file}:{number}: not valid JSON ({exc.msg}){hint}"
            raise InputError(msg, argument=argument, value=str(file)) from None
        yield number, value


def read_queries(path: str | Path) -> list[str]:
    """Read queries from a ``.txt``, ``.jsonl`` or ``.json`` file.

    A ``.txt`` file holds one query per line; JSON items are strings or objects with
    ``query``, ``question`` or ``question_text``.

    Raises:
        InputError: The file is missing, unreadable or holds no query.
    """
    file = Path(path)
    if not file.is_file():
        msg = (
            f"--queries {str(file)!r} does not exist; pass a .txt (one query per line) "
            "or .jsonl file"
        )
        raise InputError(msg, argument="queries", value=str(file))
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"cannot read --queries {str(file)!r}: {exc}"
        raise InputError(msg, argument="queries", value=str(file)) from None
    queries: list[str] = []
    if file.suffix.lower() in (".jsonl", ".json"):
        lines = split_json_lines(text)
        if file.suffix.lower() == ".json":
            try:
                items = json.loads(text)
            except json.JSONDecodeError as exc:
                msg = f"{file}: not valid JSON ({exc.msg})"
                raise InputError(msg, argument="queries", value=str(file)) from None
            lines = [json.dumps(i) for i in (items if isinstance(items, list) else [items])]
        for number, item in json_lines(lines, file, "queries"):
            query = (
                item
                if isinstance(item, str)
                else next(
                    (
                        item.get(k)
                        for k in ("query", "question", "question_text")
                        if isinstance(item, dict) and isinstance(item.get(k), str)
                    ),
                    None,
                )
            )
            if not isinstance(query, str) or not query.strip():
                msg = f"{file}:{number}: no 'query', 'question' or 'question_text' string"
                raise InputError(msg, argument="queries", value=str(file))
            queries.append(query.strip())
    else:
        queries = [line.strip() for line in text.splitlines() if line.strip()]
    if not queries:
        msg = f"--queries {str(file)!r} holds no query"
        raise InputError(msg, argument="queries", value=str(file))
    return queries
