"""Training data for the learned span tagger: readers, checks and character spans.

Two input formats are read, each into :class:`TaggedSentence` records whose spans are
character offsets into the clean sentence text:

* the CNC / UniCausal CSV format: a ``text_w_pairs`` column in which the cause is marked
  ``<ARG0>…</ARG0>``, the effect ``<ARG1>…</ARG1>`` and the causal signal
  ``<SIG0>…</SIG0>`` (further signal parts ``<SIG1>``…); one row per relation, grouped
  into sentences by ``corpus, doc_id, sent_id``; rows with ``pair_label`` 0 are not
  relations, and a sentence whose rows all have ``seq_label`` 0 is a negative;
* a simple JSON-lines format, one sentence a line::

    {"text": "Heavy rain flooded the town.",
     "pairs": [{"cause": "Heavy rain", "effect": "the town", "signal": "flooded"}]}

  where each phrase must occur in ``text`` (the first occurrence is taken, or the one
  after ``"cause_start"`` / ``"effect_start"`` / ``"signal_start"`` offsets when given)
  and ``"pairs": []`` marks a sentence without a relation.

Every problem is a :class:`~sarg_integrations.errors.InputError` naming the file and the
line, with the value and how to fix it.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sarg_integrations.errors import InputError

__all__ = [
    "SpanPair",
    "TaggedSentence",
    "parse_tagged_text",
    "read_training_file",
    "read_training_files",
]

Span = tuple[int, int]

_TAG = re.compile(r"<(/?)(ARG0|ARG1|SIG\d+)>")
_REQUIRED_CSV = ("text_w_pairs",)


@dataclass(frozen=True)
class SpanPair:
    """One cause → effect relation in a sentence, as character spans.

    Attributes:
        cause: ``(start, end)`` of the cause phrase.
        effect: ``(start, end)`` of the effect phrase.
        signals: The spans of the signal words ("led to", "because"); may be empty.
    """

    cause: Span
    effect: Span
    signals: tuple[Span, ...] = ()


@dataclass
class TaggedSentence:
    """A sentence with its relations (none for a negative example).

    Attributes:
        text: The clean sentence text (markup removed).
        pairs: The relations.
        source: ``"file:line"`` of the first row it came from, for error messages.
        corpus: The corpus name (the CSV ``corpus`` column, or ``"jsonl"``).
        has_signals: Whether the source annotates signals at all (CNC and JSONL do);
            when false, the trainer does not teach the signal head on this sentence.
        group: A document key for splitting without leakage (``corpus/doc_id``).
    """

    text: str
    pairs: list[SpanPair] = field(default_factory=list)
    source: str = ""
    corpus: str = ""
    has_signals: bool = True
    group: str = ""


def parse_tagged_text(marked: str) -> tuple[str, dict[str, list[Span]]]:
    """Strip ``<ARG0>``/``<ARG1>``/``<SIGn>`` markup; return the text and the tag spans.

    Example:
        >>> text, spans = parse_tagged_text("<ARG0>Rain</ARG0> <SIG0>flooded</SIG0> <ARG1>roads</ARG1> .")
        >>> text
        'Rain flooded roads .'
        >>> spans["ARG0"], spans["ARG1"], spans["SIG0"]
        ([(0, 4)], [(13, 18)], [(5, 12)])

    Raises:
        ValueError: If a tag is closed without being opened, or left open.
    """
    out: list[str] = []
    length = 0
    open_at: dict[str, int] = {}
    spans: dict[str, list[Span]] = {}
    pos = 0
    for m in _TAG.finditer(marked):
        chunk = marked[pos : m.start()]
        out.append(chunk)
        length += len(chunk)
        pos = m.end()
        closing, name = m.group(1) == "/", m.group(2)
        if not closing:
            if name in open_at:
                msg = f"<{name}> opened twice"
                raise ValueError(msg)
            open_at[name] = length
        else:
            if name not in open_at:
                msg = f"</{name}> without an opening <{name}>"
                raise ValueError(msg)
            start = open_at.pop(name)
            spans.setdefault(name, []).append(_strip_span(out, start, length))
    out.append(marked[pos:])
    if open_at:
        msg = f"<{next(iter(open_at))}> is never closed"
        raise ValueError(msg)
    return "".join(out), spans


def _strip_span(parts: list[str], start: int, end: int) -> Span:
    """Shrink ``(start, end)`` over the text built so far to exclude edge whitespace."""
    text = "".join(parts)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        msg = f"training file {str(path)!r} cannot be read: {exc}"
        raise InputError(msg) from exc
    with handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [c for c in _REQUIRED_CSV if c not in header]
        if missing:
            msg = (
                f"{path}:1: the CSV header {header!r} has no column {missing[0]!r}; a CNC / "
                "UniCausal training file needs a 'text_w_pairs' column with <ARG0>cause</ARG0>"
                " and <ARG1>effect</ARG1> markup (and optionally seq_label, pair_label, "
                "corpus, doc_id, sent_id)"
            )
            raise InputError(msg)
        try:
            for row in reader:
                yield reader.line_num, row
        except csv.Error as exc:
            msg = f"{path}:{reader.line_num}: not a valid CSV row ({exc})"
            raise InputError(msg) from exc


def _read_csv(path: Path) -> list[TaggedSentence]:
    sentences: dict[tuple[str, str, str], TaggedSentence] = {}
    causal_seen: set[int] = set()  # id() of sentences that some row calls causal
    for line, row in _csv_rows(path):
        marked = row.get("text_w_pairs") or ""
        where = f"{path}:{line}"
        try:
            text, spans = parse_tagged_text(marked)
        except ValueError as exc:
            msg = f"{where}: bad markup in text_w_pairs ({exc}): {marked[:120]!r}"
            raise InputError(msg) from None
        corpus = (row.get("corpus") or path.stem).strip()
        doc = (row.get("doc_id") or "").strip()
        sent = (row.get("sent_id") or "").strip()
        key = (corpus, doc, sent) if doc or sent else (corpus, where, "")
        seq = _label(row.get("seq_label"), where, "seq_label")
        pair = _label(row.get("pair_label"), where, "pair_label")
        has_args = "ARG0" in spans and "ARG1" in spans
        if seq is None and pair is None and not has_args:
            msg = (
                f"{where}: no <ARG0>…</ARG0> / <ARG1>…</ARG1> markup and no seq_label or "
                f"pair_label saying the row has no relation: {marked[:120]!r}; mark the cause "
                "and effect, or add seq_label=0 for a sentence without a relation"
            )
            raise InputError(msg)
        sentence = sentences.get(key)
        if sentence is None:
            sentence = TaggedSentence(
                text=text,
                source=where,
                corpus=corpus,
                has_signals=corpus == "cnc" or any(k.startswith("SIG") for k in spans),
                group=f"{corpus}/{doc or where}",
            )
            sentences[key] = sentence
        elif sentence.text != text:
            # Rows of one sentence must carry the same text; otherwise key by row.
            sentence = TaggedSentence(
                text=text, source=where, corpus=corpus, group=f"{corpus}/{doc or where}"
            )
            sentences[(corpus, where, "")] = sentence
        is_relation = has_args and (pair is None or pair == 1) and (seq is None or seq == 1)
        if seq == 1 or is_relation:
            causal_seen.add(id(sentence))
        if is_relation:
            signals = tuple(sorted(s for k, v in spans.items() if k.startswith("SIG") for s in v))
            sentence.pairs.append(SpanPair(spans["ARG0"][0], spans["ARG1"][0], signals))
    # A sentence without a relation row is a negative only when no row called it causal:
    # rows with pair_label 0 inside a causal sentence are candidate pairs, not negatives.
    return [s for s in sentences.values() if s.pairs or id(s) not in causal_seen]


def _label(value: str | None, where: str, column: str) -> int | None:
    if value is None or value.strip() == "":
        return None
    try:
        return int(float(value))
    except ValueError:
        msg = f"{where}: {column}={value!r} is not 0 or 1"
        raise InputError(msg) from None


def _find(text: str, phrase: object, start: object, where: str, role: str) -> Span:
    if not isinstance(phrase, str) or not phrase.strip():
        msg = f"{where}: pair {role}={phrase!r} must be a non-empty string found in 'text'"
        raise InputError(msg)
    phrase = phrase.strip()
    begin = 0
    if start is not None:
        if not isinstance(start, int) or start < 0:
            msg = f"{where}: {role}_start={start!r} must be a non-negative integer offset"
            raise InputError(msg)
        begin = start
    at = text.find(phrase, begin)
    if at < 0:
        msg = (
            f"{where}: the {role} {phrase[:80]!r} does not occur in the text "
            f"{text[:80]!r}; copy the phrase exactly as it reads in 'text'"
        )
        raise InputError(msg)
    return at, at + len(phrase)


def _read_jsonl(path: Path) -> list[TaggedSentence]:
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"training file {str(path)!r} cannot be read as UTF-8 text: {exc}"
        raise InputError(msg) from exc
    out = []
    # Split on "\n" only: U+2028 and friends are valid inside JSON strings.
    for number, line in enumerate(raw.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            msg = f"{where}: not valid JSON ({exc.msg} at column {exc.colno})"
            raise InputError(msg) from None
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            msg = f'{where}: expected an object with a "text" string and a "pairs" list'
            raise InputError(msg)
        pairs = record.get("pairs", [])
        if not isinstance(pairs, list):
            msg = f'{where}: "pairs" must be a list of {{"cause", "effect", "signal"}} objects'
            raise InputError(msg)
        text = record["text"]
        spans = []
        for item in pairs:
            if not isinstance(item, dict):
                msg = f"{where}: each pair must be an object, got {item!r}"
                raise InputError(msg)
            cause = _find(text, item.get("cause"), item.get("cause_start"), where, "cause")
            effect = _find(text, item.get("effect"), item.get("effect_start"), where, "effect")
            signals: tuple[Span, ...] = ()
            if item.get("signal"):
                signal = _find(text, item["signal"], item.get("signal_start"), where, "signal")
                signals = (signal,)
            spans.append(SpanPair(cause, effect, signals))
        out.append(
            TaggedSentence(
                text=text,
                pairs=spans,
                source=where,
                corpus="jsonl",
                has_signals=any(p.signals for p in spans) or not spans,
                group=f"{path}:{record.get('doc_id', number)}",
            )
        )
    return out


def read_training_file(path: str | Path) -> list[TaggedSentence]:
    """Read one training file (``.csv`` in CNC/UniCausal markup, or ``.jsonl``).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.jsonl"
        >>> _ = p.write_text('{"text": "Rain flooded roads.", "pairs": '
        ...                  '[{"cause": "Rain", "effect": "roads", "signal": "flooded"}]}\\n')
        >>> s = read_training_file(p)[0]
        >>> s.pairs[0].cause, s.pairs[0].effect, s.pairs[0].signals
        ((0, 4), (13, 18), ((5, 12),))

    Raises:
        InputError: If the file is missing, empty, of another format, or has a bad line
            (the message names the file and line).
    """
    path = Path(path)
    if not path.is_file():
        msg = f"training file {str(path)!r} does not exist or is not a file"
        raise InputError(msg)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        sentences = _read_csv(path)
    elif suffix in {".jsonl", ".json"}:
        sentences = _read_jsonl(path)
    else:
        msg = (
            f"training file {str(path)!r} has the suffix {suffix!r}; use .csv (CNC / UniCausal "
            "<ARG0>/<ARG1>/<SIG0> markup) or .jsonl ({text, pairs: [{cause, effect, signal}]})"
        )
        raise InputError(msg)
    if not sentences:
        msg = f"training file {str(path)!r} holds no sentences; it is empty or has only a header"
        raise InputError(msg)
    return sentences


def read_training_files(paths: Iterable[str | Path]) -> list[TaggedSentence]:
    """Read several training files into one list (see :func:`read_training_file`)."""
    out: list[TaggedSentence] = []
    for path in paths:
        out.extend(read_training_file(path))
    return out


def split_by_group(
    sentences: Sequence[TaggedSentence], fraction: float, seed: int = 0
) -> tuple[list[TaggedSentence], list[TaggedSentence]]:
    """Split into (train, held-out) by document group, so no document is in both.

    Example:
        >>> s = [TaggedSentence(text=str(i), group=f"d{i % 10}") for i in range(100)]
        >>> train, held = split_by_group(s, 0.2)
        >>> len(train) + len(held), {x.group for x in train} & {x.group for x in held}
        (100, set())
    """
    import random

    groups = sorted({s.group for s in sentences})
    rng = random.Random(seed)
    rng.shuffle(groups)
    held = set(groups[: round(len(groups) * fraction)])
    return [s for s in sentences if s.group not in held], [s for s in sentences if s.group in held]
