"""Loading documents from files and folders, and the packaged demo corpus.

Three inputs are understood:

* a ``.txt`` or ``.md`` file: one document whose id is the file name without its
  extension and whose metadata is ``{"source": path}``;
* a ``.jsonl`` file: one document per non-blank line, each a JSON object with a
  ``"text"`` string and optionally an ``"id"``; every other key joins the metadata
  (a ``"metadata"`` object is merged in), and ``"source"`` is set to the file path
  unless the record has one;
* a folder: every ``.txt``, ``.md`` and ``.jsonl`` file inside it, recursively, in
  order of relative path; hidden files and folders (names starting with ``.``) are
  skipped. A text file in a sub-folder gets the id ``sub/name`` so that equal file
  names in different folders do not collide.

A folder walk reads regular files only and never blocks: FIFOs, sockets and devices,
broken or looping symlinks, symlinks that lead out of the folder (unless
``follow_symlinks=True``), files over ``max_file_bytes`` and files that are not UTF-8
text (Latin-1, UTF-16, binary) are skipped and reported (:func:`read_documents`), or
raise with ``strict=True``.

A file named directly, and every problem in a file's content (bad JSONL), raises
:class:`~sarg_integrations.errors.DocumentLoadError` with the path, the line (for JSONL)
and a message that says how to fix it.

Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "rain.txt").write_text("Rain causes floods.", encoding="utf-8")
    >>> [(d.id, d.text) for d in load_documents([folder / "rain.txt"])]
    [('rain', 'Rain causes floods.')]
"""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sarg_integrations._file_reading import (
    UnreadableFile,
    decode_utf8,
    file_kind,
    read_text,
)
from sarg_integrations._file_reading import utf16_guess as utf16_guess  # the old import path
from sarg_integrations.errors import DocumentLoadError, InputError
from sarg_integrations.schema import SkippedDocument, SourceDocument

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEMO_CORPUS_RESOURCE",
    "DEMO_QUESTIONS",
    "SUPPORTED_EXTENSIONS",
    "LoadedDocuments",
    "demo_questions",
    "load_demo_corpus",
    "load_documents",
    "read_documents",
    "split_json_lines",
]

log = logging.getLogger(__name__)

SUPPORTED_EXTENSIONS = (".txt", ".md", ".jsonl")
"""File extensions :func:`load_documents` reads (case-insensitive)."""

TEXT_EXTENSIONS = (".txt", ".md")

DEMO_CORPUS_RESOURCE = "data/demo_corpus.jsonl"
"""The demo corpus, relative to the ``sarg_integrations`` package."""

DEMO_QUESTIONS = [
    "What does a mutation in the GBA1 gene ultimately lead to?",
    "Why did technology stocks sell off?",
]
"""Questions the demo corpus answers with a multi-hop chain; the first is the default."""

DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
"""Files larger than this (64 MiB) are not read: skipped in a folder, an error when named."""

_PREVIEW = 60
_SUPPORTED_TEXT = ", ".join(SUPPORTED_EXTENSIONS)
_RECORD_HINT = 'each line must be one JSON object like {"id": "doc1", "text": "..."}'


def _preview(text: str, limit: int = _PREVIEW) -> str:
    text = text.strip()
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def split_json_lines(text: str) -> list[str]:
    """The lines of JSON Lines text: split on ``\\n`` only (a trailing ``\\r`` is dropped).

    ``str.splitlines()`` also breaks at U+2028, U+2029, U+0085 and other separators,
    which ``json.dumps(ensure_ascii=False)`` writes raw inside strings; JSON Lines
    records end at ``\\n`` alone.

    Example:
        >>> split_json_lines('{"text": "a\\u2028b"}\\r\\n{}')
        ['{"text": "a\\u2028b"}', '{}']
    """
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def _record_id(value: Any, path: str, line: int) -> str:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    msg = (
        f'{path}, line {line}: "id" must be a non-empty string or an integer, got '
        f"{type(value).__name__} {value!r}; fix the id or leave it out "
        f'to get "{Path(path).stem}-{line}"'
    )
    raise DocumentLoadError(msg, path=path, line=line)


def _parse_jsonl(text: str, path: str, stem: str) -> list[tuple[SourceDocument, str]]:
    """Parse JSONL text into ``(document, origin)`` pairs; ``origin`` names file and line."""
    out: list[tuple[SourceDocument, str]] = []
    for line_no, line in enumerate(split_json_lines(text), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            msg = (
                f"{path}, line {line_no}: invalid JSON ({exc.msg} at column {exc.colno}) in "
                f"{_preview(line)}; {_RECORD_HINT}"
            )
            raise DocumentLoadError(msg, path=path, line=line_no) from None
        if not isinstance(record, dict):
            msg = (
                f"{path}, line {line_no}: expected a JSON object, got a JSON "
                f"{_json_type(record)} {_preview(line)}; {_RECORD_HINT}"
            )
            raise DocumentLoadError(msg, path=path, line=line_no)
        if "text" not in record:
            msg = (
                f'{path}, line {line_no}: the record has no "text" key (keys: '
                f'{sorted(record)}); add the document text as "text"'
            )
            raise DocumentLoadError(msg, path=path, line=line_no)
        doc_text = record["text"]
        if not isinstance(doc_text, str):
            msg = (
                f'{path}, line {line_no}: "text" must be a string, got a JSON '
                f"{_json_type(doc_text)} {_preview(json.dumps(doc_text))}; put the document text "
                "in one string"
            )
            raise DocumentLoadError(msg, path=path, line=line_no)
        raw_id = record.get("id")
        doc_id = f"{stem}-{line_no}" if raw_id is None else _record_id(raw_id, path, line_no)
        metadata: dict[str, Any] = {}
        nested = record.get("metadata")
        if isinstance(nested, dict):
            metadata.update(nested)
        elif nested is not None:
            metadata["metadata"] = nested
        metadata.update({k: v for k, v in record.items() if k not in {"id", "text", "metadata"}})
        metadata.setdefault("source", path)
        out.append(
            (SourceDocument(id=doc_id, text=doc_text, metadata=metadata), f"{path}, line {line_no}")
        )
    return out


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    return "object"


def _load_file(
    path: Path, doc_id: str | None = None, max_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> list[tuple[SourceDocument, str]]:
    label = str(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        msg = (
            f"{label} has the unsupported extension {path.suffix or '(none)'!r}; supported: "
            f"{_SUPPORTED_TEXT} files, or a folder of them. Fix: convert it to plain text "
            "(.txt) or JSONL"
        )
        raise DocumentLoadError(msg, path=label)
    text = read_text(path, max_bytes)
    if suffix == ".jsonl":
        records = _parse_jsonl(text, label, path.stem)
        if not records:
            msg = (
                f"{label} holds no records (it is empty or only blank lines); "
                f'add one JSON object per line like {{"id": "doc1", "text": "..."}}'
            )
            raise DocumentLoadError(msg, path=label)
        return records
    document = SourceDocument(id=doc_id or path.stem, text=text, metadata={"source": label})
    return [(document, label)]


def _entry_problem(path: Path, root: Path, follow_symlinks: bool) -> tuple[bool, str | None]:
    """``(is a folder, why it is skipped or None)`` for one entry of a folder walk.

    Only ``lstat``/``stat`` are used: nothing is opened, so nothing can block.
    """
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            try:
                target = path.resolve(strict=True)
            except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
                return False, "a symlink that is broken or loops; not followed"
            if not follow_symlinks and not target.is_relative_to(root):
                return False, (
                    f"a symlink to {target}, outside the folder; not followed "
                    "(pass --follow-symlinks / follow_symlinks=True to read it)"
                )
            info = os.stat(target)
    except OSError as exc:
        return False, f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return True, None
    if not stat.S_ISREG(info.st_mode):
        return False, f"{file_kind(info.st_mode)}, not a regular file; only regular files are read"
    return False, None


def _walk(
    folder: Path, follow_symlinks: bool
) -> tuple[list[tuple[str, Path]], list[tuple[str, str]], list[str]]:
    """``(files, skipped, others)`` of a folder, recursively, hidden entries left out.

    ``files`` are ``(relative path, path)`` of supported regular files; ``skipped`` are
    ``(path, reason)`` of supported names that cannot be read as files; ``others`` are
    the relative paths of unsupported files. A folder reached twice (symlinks) is read once.
    """
    root = folder.resolve()
    files: list[tuple[str, Path]] = []
    skipped: list[tuple[str, str]] = []
    others: list[str] = []
    seen = {root}
    pending = [folder]
    while pending:
        directory = pending.pop()
        try:
            names = sorted(os.listdir(directory))
        except OSError as exc:
            skipped.append((str(directory), f"the folder cannot be read: {exc.strerror or exc}"))
            continue
        for name in names:
            if name.startswith("."):
                continue
            path = directory / name
            is_dir, problem = _entry_problem(path, root, follow_symlinks)
            relative = path.relative_to(folder).as_posix()
            supported = path.suffix.lower() in SUPPORTED_EXTENSIONS
            if is_dir and problem is None:
                real = path.resolve()
                if real not in seen:
                    seen.add(real)
                    pending.append(path)
            elif problem is not None and (supported or path.is_symlink()):
                skipped.append((str(path), problem))
            elif supported and problem is None:
                files.append((relative, path))
            else:
                others.append(relative)
    return sorted(files), sorted(skipped), others


def _folder_files(
    folder: Path, follow_symlinks: bool = False
) -> tuple[list[Path], list[tuple[str, str]]]:
    """The supported files of ``folder`` (sorted by relative path) and the entries skipped."""
    found, skipped, others = _walk(folder, follow_symlinks)
    if not found and not skipped:
        label = str(folder)
        if others:
            seen = f"; it holds {len(others)} other file(s), e.g. {sorted(others)[:3]}"
        else:
            seen = "; it is empty"
        msg = (
            f"the folder {label} has no supported files ({_SUPPORTED_TEXT}, searched "
            f"recursively, hidden files skipped){seen}. Fix: point --docs at a folder of "
            ".txt/.md/.jsonl files"
        )
        raise DocumentLoadError(msg, path=label)
    return [file for _, file in found], skipped


@dataclass(frozen=True)
class LoadedDocuments:
    """What :func:`read_documents` loaded, and the files of folders it skipped.

    Attributes:
        documents: The documents, in input order.
        skipped: One :class:`~sarg_integrations.schema.SkippedDocument` per file left
            out of a folder walk: its path as ``document_id`` and the reason (with the
            fix, e.g. the ``iconv`` command for a file that is not UTF-8).
    """

    documents: list[SourceDocument]
    skipped: list[SkippedDocument]


def _check_max_bytes(max_file_bytes: Any) -> int:
    if (
        isinstance(max_file_bytes, bool)
        or not isinstance(max_file_bytes, int)
        or max_file_bytes < 1
    ):
        msg = (
            f"max_file_bytes={max_file_bytes!r} is invalid; pass a positive number of bytes "
            f"(default {DEFAULT_MAX_FILE_BYTES})"
        )
        raise InputError(msg, argument="max_file_bytes", value=max_file_bytes)
    return max_file_bytes


def read_documents(
    paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    *,
    strict: bool = False,
    follow_symlinks: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> LoadedDocuments:
    """Load documents from files and folders, and report the files of folders left out.

    Args:
        paths: ``.txt``/``.md`` files (one document each, id = file name without
            extension), ``.jsonl`` files (one ``{"id", "text", ...}`` record per line)
            and folders (every supported file inside, recursively, sorted by relative
            path). A single path is accepted too. The same file reached twice (say,
            through a folder and directly) is loaded once.
        strict: Raise on the first file of a folder that would be skipped, instead of
            skipping it.
        follow_symlinks: Follow symlinks in folders that lead out of the folder (those
            within it are always followed). Broken and looping ones are still skipped.
        max_file_bytes: The largest file read (default 64 MiB); a larger file in a
            folder is skipped, one named directly is an error.

    Returns:
        The documents, and the skipped files with the reason for each: FIFOs, sockets,
        devices, broken or looping symlinks, symlinks out of the folder, files over
        ``max_file_bytes``, unreadable files, and files that are not UTF-8 text.

    Raises:
        DocumentLoadError: A missing path, a named file that cannot be read as UTF-8
            text, an unsupported extension, a malformed JSONL line, a folder without
            supported files, no document at all, or two documents with the same id
            (the message names both sources).
        InputError: If ``paths`` is empty or ``max_file_bytes`` is not a positive integer.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        msg = "no document paths given; pass .txt/.md/.jsonl files or folders"
        raise InputError(msg, argument="paths", value=paths)
    max_bytes = _check_max_bytes(max_file_bytes)
    documents: list[SourceDocument] = []
    skipped: list[SkippedDocument] = []
    origins: dict[str, str] = {}
    loaded_files: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        label = str(raw)
        in_folder = path.is_dir()
        if in_folder:
            files, walk_skips = _folder_files(path, follow_symlinks)
            if strict and walk_skips:
                where, why = walk_skips[0]
                raise DocumentLoadError(f"{where}: {why} (strict: no file is skipped)", path=where)
            skipped.extend(SkippedDocument(where, why) for where, why in walk_skips)
            entries = [(file, _text_id(file, path)) for file in files]
        elif path.is_file():
            entries = [(path, None)]
        elif path.exists():
            msg = (
                f"{label} is neither a regular file nor a folder; pass a "
                f"{_SUPPORTED_TEXT} file or a folder"
            )
            raise DocumentLoadError(msg, path=label)
        else:
            msg = f"{label} does not exist; check the path (relative paths start at {os.getcwd()})"
            raise DocumentLoadError(msg, path=label)
        for file, doc_id in entries:
            key = file.resolve()
            if key in loaded_files:
                continue
            loaded_files.add(key)
            try:
                loaded = _load_file(file, doc_id, max_bytes)
            except UnreadableFile as exc:
                if strict or not in_folder:
                    raise
                skipped.append(SkippedDocument(str(file), str(exc)))
                continue
            for document, origin in loaded:
                if document.id in origins:
                    msg = (
                        f"two documents have the id {document.id!r}: {origins[document.id]} and "
                        f"{origin}; ids must be unique because chains cite them. Fix: rename one "
                        'file or give the JSONL record a distinct "id"'
                    )
                    raise DocumentLoadError(msg, path=str(file))
                origins[document.id] = origin
                documents.append(document)
    if not documents and skipped:
        reasons = "; ".join(f"{s.document_id}: {s.reason}" for s in skipped[:3])
        msg = f"no document could be read; {len(skipped)} file(s) skipped: {reasons}"
        raise DocumentLoadError(msg, path=skipped[0].document_id)
    return LoadedDocuments(documents, skipped)


def load_documents(
    paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    *,
    strict: bool = False,
    follow_symlinks: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> list[SourceDocument]:
    """Load documents from files and folders (:func:`read_documents` without the report).

    Files of folders that are skipped are logged as warnings (``sarg_integrations.io``);
    use :func:`read_documents` to get them, or ``strict=True`` to raise instead.

    Returns:
        The documents in input order, ready for :meth:`SARGPipeline.run`.

    Raises:
        DocumentLoadError: See :func:`read_documents`.
        InputError: If ``paths`` is empty.
    """
    loaded = read_documents(
        paths, strict=strict, follow_symlinks=follow_symlinks, max_file_bytes=max_file_bytes
    )
    for item in loaded.skipped:
        log.warning("skipped %s: %s", item.document_id, item.reason)
    return loaded.documents


def _text_id(file: Path, folder: Path) -> str | None:
    """The id of a text file inside ``folder``: its relative path without extension."""
    if file.suffix.lower() not in TEXT_EXTENSIONS:
        return None
    return file.relative_to(folder).with_suffix("").as_posix()


def load_demo_corpus() -> list[SourceDocument]:
    """Return the packaged demo corpus (``sarg_integrations/data/demo_corpus.jsonl``).

    Raises:
        DocumentLoadError: If the corpus file is missing from the installation.
    """
    from importlib import resources

    resource = resources.files("sarg_integrations")
    for part in DEMO_CORPUS_RESOURCE.split("/"):
        resource = resource.joinpath(part)
    label = f"sarg_integrations/{DEMO_CORPUS_RESOURCE}"
    try:
        data = resource.read_bytes()
    except OSError:
        msg = (
            f"the packaged demo corpus {label} is missing; reinstall sarg-integrations "
            "(pip install --force-reinstall sarg-integrations)"
        )
        raise DocumentLoadError(msg, path=label) from None
    records = _parse_jsonl(decode_utf8(data, label), label, "demo_corpus")
    documents: list[SourceDocument] = []
    origins: dict[str, str] = {}
    for document, origin in records:
        if document.id in origins:
            msg = f"two documents have the id {document.id!r}: {origins[document.id]} and {origin}"
            raise DocumentLoadError(msg, path=label)
        origins[document.id] = origin
        documents.append(document)
    return documents


def demo_questions() -> list[str]:
    """Return the demo questions (a copy of :data:`DEMO_QUESTIONS`); the first is the default.

    Example:
        >>> demo_questions()[0]
        'What does a mutation in the GBA1 gene ultimately lead to?'
    """
    return list(DEMO_QUESTIONS)
