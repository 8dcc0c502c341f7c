"""The resumable records file of an evaluation run: one JSON line per item, appended at once.

Shared by :func:`~sarg_integrations.evaluation.run_evaluation` (``sarg eval`` on
multi-hop QA) and :func:`~sarg_integrations.evaluation.run_causal_evaluation`
(ESTER / ESC): the output folder, the ``{"_settings": ...}`` header line, whole-line
appends (a failed write is cut back off), reading the records back for a resume
(a line cut by a killed run is cut off with a warning; records of other settings are an
:class:`~sarg_integrations.errors.InputError`) and the ``<dataset>.json`` / ``.md``
summary files.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sarg_integrations.errors import InputError
from sarg_integrations.io import split_json_lines

__all__ = ["make_out_dir", "read_records", "record_each", "write_summary"]


def read_records(path: Path, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    r"""Records already on disk for these settings (resume); id → record.

    A run killed while appending leaves a last line without its ``\n`` (a record cut
    mid-way): it is cut off the file with a warning, so that question is recomputed and
    the next record starts on a line of its own. Any other line that is not JSON is
    skipped with a warning (its question is recomputed). A file holding only a cut
    header is started over.
    """
    if not path.is_file():
        return {}
    done: dict[str, dict[str, Any]] = {}
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        complete = data[: data.rfind(b"\n") + 1]
        cut = data[len(complete) :]
        with path.open("r+b") as handle:
            handle.truncate(len(complete))
        warnings.warn(
            f"{path}: the last line was cut by an interrupted run ({len(cut)} bytes "
            f"without an end of line, starting {cut[:40]!r}); ignored, its question is "
            "recomputed",
            stacklevel=3,
        )
        data = complete
    text = data.decode("utf-8", errors="replace")
    numbered = [
        (number, line)
        for number, line in enumerate(split_json_lines(text), start=1)
        if line.strip()
    ]
    if not numbered:
        return {}
    try:
        header = json.loads(numbered[0][1])
    except json.JSONDecodeError:
        header = {}
    if not isinstance(header, dict) or header.get("_settings") != json.loads(json.dumps(settings)):
        found = header.get("_settings") if isinstance(header, dict) else None
        msg = (
            f"{path} holds records of a run with other settings ({found}); "
            "pass another --out folder, or fresh=True / --fresh to start over"
        )
        raise InputError(msg, argument="out", value=str(path))
    for number, line in numbered[1:]:
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            warnings.warn(
                f"{path}:{number}: not a JSON record ({exc.msg}); ignored, its question "
                "is recomputed",
                stacklevel=3,
            )
            continue
        if isinstance(record, dict) and "id" in record:
            done[record["id"]] = record
    return done


def make_out_dir(out_dir: str | os.PathLike[str]) -> Path:
    """Create the output folder; a file in the way or a read-only parent is an InputError."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, a read-only parent, …
        problem = "is a file" if out.is_file() else f"cannot be created ({exc.strerror})"
        msg = f"out_dir={str(out)!r} {problem}; pass a folder path (it is created if missing)"
        raise InputError(msg, argument="out_dir", value=str(out)) from None
    return out


def record_each(
    todo: Sequence[Any],
    compute: Callable[[Any], dict[str, Any]],
    records_path: Path,
    settings: Mapping[str, Any],
    done: dict[str, dict[str, Any]],
    *,
    total: int,
    progress: bool,
    desc: str,
    unit: str = "it",
) -> None:
    """Compute each item's record and append it to ``records_path`` at once (resumable).

    Writes the settings header first when the file is new; adds each record to
    ``done`` under the item's ``id``.
    """
    if not records_path.exists() or records_path.stat().st_size == 0:
        from sarg_integrations._atomic import atomic_write_text

        atomic_write_text(records_path, json.dumps({"_settings": settings}) + "\n")
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=total - len(todo), desc=desc, unit=unit)
    try:
        for item in todo:
            record = compute(item)
            _append_line(records_path, json.dumps(record, ensure_ascii=False) + "\n")
            done[item.id] = record
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()


def _append_line(path: Path, line: str) -> None:
    """Append one whole line to ``path``, or nothing: a failed write is cut back off.

    A full disk or an error mid-write truncates the file back to its size before the
    write, so no half record is left for the next line to be glued to. (A process killed
    mid-write can still leave one; :func:`read_records` cuts it off on resume.)
    """
    data = line.encode("utf-8")
    with path.open("ab") as handle:
        size = handle.tell()
        try:
            handle.write(data)
            handle.flush()
        except BaseException:
            with contextlib.suppress(OSError):
                handle.truncate(size)
            raise


def write_summary(
    out: Path,
    dataset: str,
    settings: Mapping[str, Any],
    aggregates: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    markdown: str,
) -> dict[str, str]:
    """Write ``<dataset>.json`` (settings, aggregates, records) and ``<dataset>.md``."""
    from sarg_integrations._atomic import atomic_write_text

    json_path = out / f"{dataset}.json"
    atomic_write_text(
        json_path,
        json.dumps(
            {"settings": settings, "aggregates": aggregates, "records": records},
            indent=1,
            ensure_ascii=False,
        ),
    )
    md_path = out / f"{dataset}.md"
    atomic_write_text(md_path, markdown)
    return {"json": str(json_path), "markdown": str(md_path)}
