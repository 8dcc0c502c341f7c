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

Every problem raises :class:`~sarg_integrations.errors.DocumentLoadError` with the
path, the line (for JSONL) and a message that says how to fix it.

Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "rain.txt").write_text("Rain causes floods.", encoding="utf-8")
    >>> [(d.id, d.text) for d in load_documents([folder / "rain.txt"])]
    [('rain', 'Rain causes floods.')]
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sarg_integrations.errors import DocumentLoadError, InputError
from sarg_integrations.schema import SourceDocument

__all__ = [
    "DEMO_CORPUS_RESOURCE",
    "DEMO_QUESTIONS",
    "SUPPORTED_EXTENSIONS",
    "demo_questions",
    "load_demo_corpus",
    "load_documents",
]

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

_BOM = b"\xef\xbb\xbf"
_PREVIEW = 60
_SUPPORTED_TEXT = ", ".join(SUPPORTED_EXTENSIONS)
_RECORD_HINT = 'each line must be one JSON object like {"id": "doc1", "text": "..."}'


def _preview(text: str, limit: int = _PREVIEW) -> str:
    text = text.strip()
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _decode(data: bytes, path: str) -> str:
    """Decode UTF-8 bytes (dropping a leading BOM) or raise a helpful error."""
    offset = len(_BOM) if data.startswith(_BOM) else 0
    try:
        return data[offset:].decode("utf-8")
    except UnicodeDecodeError as exc:
        position = offset + exc.start
        line = data.count(b"\n", 0, position) + 1
        msg = (
            f"{path} is not valid UTF-8: byte 0x{data[position]:02x} at byte offset {position} "
            f"(line {line}) cannot be decoded ({exc.reason}). Fix: re-encode the file as "
            f"UTF-8, e.g. iconv -f latin1 -t utf-8 {path} > fixed{Path(path).suffix}"
        )
        raise DocumentLoadError(msg, path=path, line=line) from None


def _read_text(path: Path) -> str:
    label = str(path)
    try:
        data = path.read_bytes()
    except PermissionError:
        msg = (
            f"{label} cannot be read (permission denied); fix its permissions or pass another path"
        )
        raise DocumentLoadError(msg, path=label) from None
    except OSError as exc:
        msg = f"{label} cannot be read: {exc.strerror or exc}"
        raise DocumentLoadError(msg, path=label) from None
    return _decode(data, label)


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


def _load_file(path: Path, doc_id: str | None = None) -> list[tuple[SourceDocument, str]]:
    label = str(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        msg = (
            f"{label} has the unsupported extension {path.suffix or '(none)'!r}; supported: "
            f"{_SUPPORTED_TEXT} files, or a folder of them. Fix: convert it to plain text "
            "(.txt) or JSONL"
        )
        raise DocumentLoadError(msg, path=label)
    text = _read_text(path)
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


def _folder_files(folder: Path) -> list[Path]:
    found: list[tuple[str, Path]] = []
    others: list[str] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.startswith("."):
                continue
            file = Path(root) / name
            relative = file.relative_to(folder).as_posix()
            if file.suffix.lower() in SUPPORTED_EXTENSIONS:
                found.append((relative, file))
            else:
                others.append(relative)
    if not found:
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
    return [file for _, file in sorted(found, key=lambda item: item[0])]


def load_documents(paths: Sequence[str | os.PathLike[str]]) -> list[SourceDocument]:
    """Load documents from files and folders.

    Args:
        paths: ``.txt``/``.md`` files (one document each, id = file name without
            extension), ``.jsonl`` files (one ``{"id", "text", ...}`` record per line)
            and folders (every supported file inside, recursively, sorted by relative
            path). A single path is accepted too. The same file reached twice (say,
            through a folder and directly) is loaded once.

    Returns:
        The documents in input order, ready for :meth:`SARGPipeline.run`.

    Raises:
        DocumentLoadError: A missing path, an unsupported extension, a file that is not
            UTF-8, a malformed JSONL line, a folder without supported files, or two
            documents with the same id (the message names both sources).
        InputError: If ``paths`` is empty.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        msg = "no document paths given; pass .txt/.md/.jsonl files or folders"
        raise InputError(msg, argument="paths", value=paths)
    documents: list[SourceDocument] = []
    origins: dict[str, str] = {}
    loaded_files: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        label = str(raw)
        if path.is_dir():
            entries = [(file, _text_id(file, path)) for file in _folder_files(path)]
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
            for document, origin in _load_file(file, doc_id):
                if document.id in origins:
                    msg = (
                        f"two documents have the id {document.id!r}: {origins[document.id]} and "
                        f"{origin}; ids must be unique because chains cite them. Fix: rename one "
                        'file or give the JSONL record a distinct "id"'
                    )
                    raise DocumentLoadError(msg, path=str(file))
                origins[document.id] = origin
                documents.append(document)
    return documents


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
    records = _parse_jsonl(_decode(data, label), label, "demo_corpus")
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
