"""Loaders for the multi-hop QA files: HotpotQA (distractor), MuSiQue-Ans, 2WikiMultiHopQA.

Every loader returns :class:`EvalQuestion` records in file order. Each question carries
its own paragraph set (gold + distractors): that set is the "retrieved" set of the
paper's gold-document setting. Paragraph ids are the paragraph's position in the
question's original list (``"0"``, ``"1"``, …), so they stay stable when
``shuffle_distractors=True`` reorders them; titles and the gold flag live in
``SourceDocument.metadata`` (``title``, ``is_supporting``).

Supported formats (see ``shared/data/README.md`` §1):

* ``hotpotqa``: the IRCoT-processed JSONL (``question_id``, ``contexts``) and the
  original HotpotQA JSONL (``_id``, ``context``, ``supporting_facts``); MIGRES's extra
  ``reranked_ret_res`` field is ignored. Hop count 2; question type from ``type`` when the
  file has it (the IRCoT format dropped it).
* ``musique``: MuSiQue-Ans JSONL (``paragraphs`` with ``is_supporting``); hop count and
  type from the id prefix (``2hop``, ``3hop1``, …).
* ``2wiki``: 2WikiMultiHopQA as pandas column-oriented JSON (``{field: {row: value}}``),
  parsed with plain :mod:`json`; hop count = number of distinct supporting titles.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sarg_integrations._checks import is_whole
from sarg_integrations.errors import InputError
from sarg_integrations.io import split_json_lines
from sarg_integrations.schema import SourceDocument

__all__ = [
    "DATASETS",
    "DOWNLOADS",
    "FORMATS",
    "EvalQuestion",
    "data_root",
    "default_data_path",
    "load_dataset",
]

DATASETS: dict[str, str] = {
    "hotpotqa": "hotpotqa_dev_distractor_500_ircot_format.jsonl",
    "musique": "musique_ans_dev_200_migres.jsonl",
    "2wiki": "2wikimultihopqa_dev_500_tts.pandas_columns.json",
}
"""Dataset name → default file name under ``$SARG_SHARED_DATA/multihop/``."""

DOWNLOADS: dict[str, str] = {
    "hotpotqa": "https://hotpotqa.github.io/",
    "musique": "https://github.com/StonyBrookNLP/musique",
    "2wiki": "https://github.com/Alab-NII/2wikimultihop",
    "ester": "https://github.com/fd-semantics/causal-schema-public",
    "esc": "https://github.com/tommasoc80/EventStoryLine",
}
"""Dataset name → its official download page (also listed in ``docs/evaluation.md``).

``ester`` is TORQUESTRA's ``data/torquestra-human-2023-02-23.json``: its ``dev`` records
are ESTER passages and questions (https://github.com/PlusLabNLP/ESTER) with a gold
causal graph, which the plain ESTER files do not have.
"""


def data_root(dataset: str, folder: str) -> Path:
    """``$SARG_SHARED_DATA/<folder>``, where default data files are looked for.

    There is no implicit location (no team workspace path): without ``--data`` and
    without the variable, the error says where to download ``dataset``.

    Raises:
        InputError: ``SARG_SHARED_DATA`` is not set.
    """
    base = os.environ.get("SARG_SHARED_DATA")
    if not base:
        msg = (
            f"no data file given for {dataset}: pass --data PATH (data=... in Python) "
            f"with the file downloaded from {DOWNLOADS.get(dataset, 'its official page')} "
            f"(see docs/evaluation.md), or set SARG_SHARED_DATA to a folder holding {folder}/"
        )
        raise InputError(msg, argument="data", value=None)
    return Path(base) / folder


@dataclass(frozen=True)
class EvalQuestion:
    """One multi-hop question with its own paragraph set.

    Attributes:
        id: The dataset's question id.
        question: The question text.
        answer: The gold answer.
        aliases: Other accepted answers (MuSiQue ``answer_aliases``; else empty).
        paragraphs: The question's paragraphs (gold + distractors) as documents.
        supporting_ids: Ids of the gold (supporting) paragraphs.
        hops: The number of reasoning hops, when known.
        qtype: The question type (``bridge``, ``comparison``, ``3hop1``, …) or ``None``.
        dataset: The dataset name.
    """

    id: str
    question: str
    answer: str
    aliases: tuple[str, ...] = ()
    paragraphs: tuple[SourceDocument, ...] = ()
    supporting_ids: tuple[str, ...] = ()
    hops: int | None = None
    qtype: str | None = None
    dataset: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def answers(self) -> tuple[str, ...]:
        """The gold answer followed by its aliases."""
        return (self.answer, *self.aliases)


def default_data_path(dataset: str) -> Path:
    """Return where the default file of ``dataset`` should be.

    ``$SARG_SHARED_DATA/multihop/<file>`` (see :func:`data_root`).

    Raises:
        InputError: Unknown dataset name (the message lists the valid ones), or
            ``SARG_SHARED_DATA`` is not set (the message names the download page).
    """
    _check_name(dataset)
    return data_root(dataset, "multihop") / DATASETS[dataset]


def load_dataset(
    dataset: str,
    path: str | os.PathLike[str] | None = None,
    *,
    limit: int | None = None,
    offset: int = 0,
    shuffle_distractors: bool = False,
    seed: int = 0,
) -> list[EvalQuestion]:
    """Load ``limit`` questions of ``dataset``, after skipping the first ``offset``.

    Args:
        dataset: ``"hotpotqa"``, ``"musique"`` or ``"2wiki"``.
        path: The data file; default :func:`default_data_path`.
        limit: Keep ``limit`` questions (``None``: all).
        offset: Skip this many questions first (evaluate on questions a setting was
            not tuned on, e.g. ``offset=200``).
        shuffle_distractors: Shuffle each question's paragraph order (ids kept),
            deterministically from ``seed`` and the question id.
        seed: The shuffle seed.

    Raises:
        InputError: Unknown dataset, missing or malformed file, bad ``limit``.
    """
    _check_name(dataset)
    if limit is not None and not is_whole(limit, 1):
        msg = f"limit={limit!r} must be a positive integer or None (all questions)"
        raise InputError(msg, argument="limit", value=limit)
    if not is_whole(offset, 0):
        msg = f"offset={offset!r} must be a non-negative integer (questions to skip)"
        raise InputError(msg, argument="offset", value=offset)
    file = Path(path) if path is not None else default_data_path(dataset)
    if not file.is_file():
        hint = (
            "pass --data PATH (data=...) or set SARG_SHARED_DATA to the folder holding multihop/"
            if path is None
            else "check the path"
        ) + f"; the dataset is at {DOWNLOADS[dataset]}"
        msg = f"{dataset} data file not found: looked at {file}; {hint}"
        raise InputError(msg, argument="data", value=str(file))
    parse = {"hotpotqa": _hotpotqa, "musique": _musique, "2wiki": _twowiki}[dataset]
    questions = []
    rows = 0
    for index, (where, row) in enumerate(_records(file)):
        rows = index + 1
        if index < offset:
            continue
        if limit is not None and len(questions) >= limit:
            break
        _check_keys(row, dataset, file, where)
        try:
            question = parse(row)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            msg = (
                f"{file}: {where} is not in the {dataset} format "
                f"({type(exc).__name__}: {exc}); expected {_expected(dataset)}; "
                "is --dataset right?"
            )
            raise InputError(msg, argument="data", value=str(file)) from None
        if shuffle_distractors:
            paragraphs = list(question.paragraphs)
            random.Random(f"{seed}:{question.id}").shuffle(paragraphs)
            question = _replace(question, paragraphs=tuple(paragraphs))
        questions.append(question)
    if offset and not questions:
        msg = (
            f"offset={offset} skips every question of {file} (it holds {rows}); "
            "use a smaller --offset"
        )
        raise InputError(msg, argument="offset", value=offset)
    return questions


# --------------------------------------------------------------------------- helpers


def _check_name(dataset: str) -> None:
    if dataset not in DATASETS:
        msg = f"dataset={dataset!r} is not known; use one of: {', '.join(DATASETS)}"
        raise InputError(msg, argument="dataset", value=dataset)


def _replace(question: EvalQuestion, **changes: Any) -> EvalQuestion:
    import dataclasses

    return dataclasses.replace(question, **changes)


FORMATS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "hotpotqa": (
        ("official HotpotQA", ("_id", "question", "answer", "supporting_facts", "context")),
        (
            "IRCoT-processed HotpotQA",
            ("question_id", "question_text", "answers_objects", "contexts"),
        ),
    ),
    "musique": (("official MuSiQue", ("id", "question", "answer", "paragraphs")),),
    "2wiki": (
        ("official 2WikiMultiHopQA", ("_id", "question", "answer", "supporting_facts", "context")),
    ),
}
"""Dataset name → the record formats read: (name, the keys a record must have).

2WikiMultiHopQA rows of the pandas column-oriented file carry the original ``_id`` as
``_1`` (and the row index as ``id``); either id key is accepted.
"""


def _expected(dataset: str) -> str:
    return " or ".join(f"the {name} keys {', '.join(keys)}" for name, keys in FORMATS[dataset])


def _check_keys(row: Any, dataset: str, file: Path, where: str) -> None:
    """Raise :class:`InputError` unless ``row`` is a record of one of ``dataset``'s formats."""
    if not isinstance(row, Mapping):
        msg = (
            f"{file}: {where} is a JSON {type(row).__name__}, not a {dataset} record; "
            f"expected an object with {_expected(dataset)}"
        )
        raise InputError(msg, argument="data", value=str(file))
    present = set(row)
    if dataset == "2wiki" and present & {"_1", "id"}:
        present.add("_id")
    missing = [[k for k in keys if k not in present] for _, keys in FORMATS[dataset]]
    if all(missing):
        closest = min(missing, key=len)
        msg = (
            f"{file}: {where} is not a {dataset} record (missing {', '.join(closest)}; "
            f"it has {', '.join(sorted(map(str, row))[:12]) or 'no keys'}); expected "
            f"{_expected(dataset)}; is --dataset right?"
        )
        raise InputError(msg, argument="data", value=str(file))


def _rows(file: Path, dataset: str) -> list[Mapping[str, Any]]:
    """The records of ``file`` (any layout :func:`_records` reads), without locations."""
    return [row for _, row in _records(file)]


def _records(file: Path) -> list[tuple[str, Any]]:
    """``(location, record)`` pairs of a data file, its layout detected from the content.

    * a JSON array (the official HotpotQA and 2WikiMultiHopQA files): one record per
      element, located as ``record N of the JSON array``;
    * one JSON object: pandas ``orient="columns"`` (``{field: {row: value}}``) when every
      value is an object, else a single record;
    * JSON Lines (MuSiQue, the IRCoT and MIGRES conversions): one record per non-blank
      line, located as ``line N``.

    The file name plays no part.
    """
    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"{file}: not UTF-8 text (byte {exc.start}); expected JSON or JSON Lines"
        raise InputError(msg, argument="data", value=str(file)) from None
    start = len(text) - len(text.lstrip())
    decoder = json.JSONDecoder()
    try:
        first, end = decoder.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        if text[start : start + 1] != "[":
            first, end = None, -1  # let the JSON Lines reader name the line
        else:
            msg = (
                f"{file}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                "expected a JSON array of records, a JSON object or JSON Lines"
            )
            raise InputError(msg, argument="data", value=str(file)) from None
    if end >= 0 and not text[end:].strip():
        if isinstance(first, list):
            return [(f"record {i} of the JSON array", row) for i, row in enumerate(first)]
        if (
            isinstance(first, dict)
            and first
            and all(isinstance(v, Mapping) for v in first.values())
        ):
            return [
                (f"row {key!r} of the column-oriented JSON", row)
                for key, row in _columns_to_rows(first, file)
            ]
        return [(f"line {text.count(chr(10), 0, start) + 1}", first)]  # one record
    if end >= 0 and isinstance(first, list):
        line = text.count("\n", 0, end) + 1
        msg = (
            f"{file}: extra data after the JSON array (it ends on line {line}); "
            "expected one JSON array of records"
        )
        raise InputError(msg, argument="data", value=str(file))
    rows: list[tuple[str, Any]] = []
    for number, line in enumerate(split_json_lines(text), start=1):
        if not line.strip():
            continue
        try:
            rows.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            msg = (
                f"{file}:{number}: not valid JSON Lines ({exc.msg} at column {exc.colno}); "
                "expected a JSON array of records, a JSON object or one JSON record per line"
            )
            raise InputError(msg, argument="data", value=str(file)) from None
    if not rows:
        msg = f"{file}: holds no records; expected a JSON array of records or JSON Lines"
        raise InputError(msg, argument="data", value=str(file))
    return rows


def _columns_to_rows(data: Mapping[str, Any], file: Path) -> list[tuple[str, dict[str, Any]]]:
    """Pandas ``orient="columns"`` JSON → rows, ordered by integer row key."""
    columns = [c for c in data.values() if isinstance(c, Mapping)]
    if not columns or len(columns) != len(data):
        msg = f"{file}: expected a JSON object of columns {{field: {{row: value}}}}"
        raise InputError(msg, argument="data", value=str(file))
    keys = sorted(
        next(iter(data.values())),
        key=lambda k: (not str(k).isdigit(), int(k) if str(k).isdigit() else 0, str(k)),
    )
    return [(str(key), {name: column.get(key) for name, column in data.items()}) for key in keys]


def _doc(pid: Any, title: str, text: str, supporting: bool) -> SourceDocument:
    return SourceDocument(
        str(pid),
        re.sub(r"\s{2,}", " ", text).strip(),
        {"title": title, "is_supporting": supporting},
    )


def _hotpotqa(row: Mapping[str, Any]) -> EvalQuestion:
    if "contexts" in row:  # IRCoT processed format
        paragraphs = tuple(
            _doc(i, c["title"], c["paragraph_text"], bool(c.get("is_supporting")))
            for i, c in enumerate(row["contexts"])
        )
        answers = [s for obj in row["answers_objects"] for s in obj.get("spans", [])]
        return EvalQuestion(
            id=str(row["question_id"]),
            question=row["question_text"],
            answer=answers[0] if answers else "",
            aliases=tuple(answers[1:]),
            paragraphs=paragraphs,
            supporting_ids=tuple(p.id for p in paragraphs if p.metadata["is_supporting"]),
            hops=2,
            qtype=row.get("type"),
            dataset="hotpotqa",
        )
    gold_titles = {title for title, _ in row["supporting_facts"]}
    paragraphs = tuple(
        _doc(i, title, "".join(sentences), title in gold_titles)
        for i, (title, sentences) in enumerate(row["context"])
    )
    return EvalQuestion(
        id=str(row["_id"]),
        question=row["question"],
        answer=str(row["answer"]),
        paragraphs=paragraphs,
        supporting_ids=tuple(p.id for p in paragraphs if p.metadata["is_supporting"]),
        hops=2,
        qtype=row.get("type"),
        dataset="hotpotqa",
        extra={"level": row.get("level")},
    )


def _musique(row: Mapping[str, Any]) -> EvalQuestion:
    paragraphs = tuple(
        _doc(p.get("idx", i), p["title"], p["paragraph_text"], bool(p.get("is_supporting")))
        for i, p in enumerate(row["paragraphs"])
    )
    qid = str(row["id"])
    prefix = qid.split("__", 1)[0]
    match = re.match(r"(\d+)hop", prefix)
    return EvalQuestion(
        id=qid,
        question=row["question"],
        answer=str(row["answer"]),
        aliases=tuple(str(a) for a in row.get("answer_aliases") or ()),
        paragraphs=paragraphs,
        supporting_ids=tuple(p.id for p in paragraphs if p.metadata["is_supporting"]),
        hops=int(match.group(1)) if match else None,
        qtype=prefix if match else None,
        dataset="musique",
    )


def _twowiki(row: Mapping[str, Any]) -> EvalQuestion:
    gold_titles = list(dict.fromkeys(title for title, _ in row["supporting_facts"]))
    paragraphs = tuple(
        _doc(i, title, " ".join(s.strip() for s in sentences), title in gold_titles)
        for i, (title, sentences) in enumerate(row["context"])
    )
    return EvalQuestion(
        id=str(row.get("_1") or row.get("_id") or row["id"]),
        question=row["question"],
        answer=str(row["answer"]),
        paragraphs=paragraphs,
        supporting_ids=tuple(p.id for p in paragraphs if p.metadata["is_supporting"]),
        hops=len(gold_titles),
        qtype=row.get("type"),
        dataset="2wiki",
        extra={"evidences": row.get("evidences") or []},
    )


def questions_from_records(
    records: Sequence[Mapping[str, Any]], dataset: str
) -> list[EvalQuestion]:
    """Parse already-loaded records (dicts) of ``dataset`` (for tests and notebooks)."""
    _check_name(dataset)
    parse = {"hotpotqa": _hotpotqa, "musique": _musique, "2wiki": _twowiki}[dataset]
    return [parse(r) for r in records]
