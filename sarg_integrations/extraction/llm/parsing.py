"""A tolerant parser for the JSON answers of real (and small) models.

:func:`parse_answer` turns a model's answer into a list of raw triple dicts with the
keys ``cause``, ``relation``, ``effect``, ``relation_type`` (or ``None``) and
``evidence`` (or ``None``). It accepts, in order of preference:

* an already-parsed structured answer (native structured output);
* a JSON list of objects, or that list wrapped as ``{"triples": [...]}`` (other
  single-list wrappers such as ``{"relations": [...]}`` too), or a single object;
* the same inside a code fence, after ``<think>…</think>`` / ``<thinking>`` blocks, or
  with prose around it (``[TOOL_CALLS]`` and other bracketed noise is skipped);
* JSON with trailing commas, single-quoted strings, Python ``True``/``False``/``None``
  or smart quotes;
* a truncated answer: every complete triple object before the cut is kept.

Keys are matched loosely (``subject``/``head``/``source`` for ``cause``,
``object``/``tail``/``target`` for ``effect``, ``predicate`` for ``relation``,
``type`` for ``relation_type``, ``sentence``/``quote`` for ``evidence``), and
``[cause, relation, effect, (type), (evidence)]`` lists are accepted. When nothing
usable is found it raises :class:`AnswerParseError` with a ``kind`` (``empty``,
``thinking_only``, ``refusal``, ``truncated``, ``no_json``) and a reason a person can
act on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AnswerParseError",
    "ParsedAnswer",
    "load_json_answer",
    "parse_answer",
    "strip_reasoning",
]

_THINK_BLOCK = re.compile(
    r"<(think|thinking|reasoning|reflection)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL
)
_THINK_OPEN = re.compile(r"<(think|thinking|reasoning|reflection)\b[^>]*>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning|reflection)\s*>", re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_REFUSAL = re.compile(
    r"\b(I'?m sorry|I am sorry|I apologi[sz]e|I can(?:not|'t|’t)\s+(?:help|assist|comply|do|"
    r"provide|fulfil|extract)|I (?:won't|will not)\b|as an AI\b|I'?m unable|I am unable|"
    r"I must decline)",
    re.IGNORECASE,
)
_MAX_CANDIDATES = 64

_ALIASES = {
    "cause": ("cause", "subject", "head", "source", "antecedent", "from", "s"),
    "relation": ("relation", "predicate", "relationship", "rel", "relation_phrase", "verb", "p"),
    "effect": ("effect", "object", "tail", "target", "consequence", "to", "o"),
    "relation_type": ("relation_type", "type", "relationtype", "kind", "category", "relation_kind"),
    "evidence": (
        "evidence",
        "sentence",
        "source_sentence",
        "evidence_sentence",
        "quote",
        "span",
        "text",
        "support",
    ),
}
_WRAPPERS = ("triples", "relations", "relationships", "results", "items", "data", "output", "edges")
_CAUSE_KEYS = frozenset(_ALIASES["cause"])


class AnswerParseError(ValueError):
    """No usable triples list could be read from a model answer.

    Attributes:
        kind: ``empty``, ``thinking_only``, ``refusal``, ``truncated`` or ``no_json``.
        raw_output: The answer as the model gave it.
    """

    def __init__(self, message: str, *, kind: str, raw_output: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.raw_output = raw_output


@dataclass
class ParsedAnswer:
    """What :func:`parse_answer` read from one answer.

    Attributes:
        items: Raw triples: dicts with ``cause``, ``relation``, ``effect``,
            ``relation_type`` (``str`` or ``None``) and ``evidence`` (``str`` or ``None``).
        fixes: What had to be repaired, e.g. ``("think-block", "code-fence",
            "trailing-comma")``; empty for clean JSON.
        invalid_items: Elements that were not usable triples (missing cause/effect…).
        truncated: The answer was cut off; ``items`` holds the complete triples before it.
    """

    items: list[dict[str, str | None]]
    fixes: tuple[str, ...] = ()
    invalid_items: int = 0
    truncated: bool = False
    notes: list[str] = field(default_factory=list)


def strip_reasoning(text: str) -> tuple[str, bool]:
    """Remove ``<think>…</think>``-style blocks; return ``(rest, had_reasoning)``.

    An unclosed opening tag hides everything after it (the model ran out of budget
    while thinking); a closing tag without an opening one (chat templates that put
    ``<think>`` in the prompt) hides everything before it.

    Example:
        >>> strip_reasoning("<think>hmm</think>[]")
        ('[]', True)
    """
    out, n = _THINK_BLOCK.subn("", text)
    had = n > 0
    closes = list(_THINK_CLOSE.finditer(out))
    close = closes[-1] if closes else None
    if close is not None:
        out, had = out[close.end() :], True
    opened = _THINK_OPEN.search(out)
    if opened is not None:
        out, had = out[: opened.start()], True
    return out.strip(), had


def parse_answer(text: str | None, data: Any = None) -> ParsedAnswer:
    r"""Read the triples out of a model answer.

    Args:
        text: The answer text.
        data: An already-parsed structured answer; used first when it has the right
            shape, else ``text`` is parsed.

    Raises:
        AnswerParseError: Nothing usable was found (see the module docstring).

    Example:
        >>> parse_answer('```json\n[{"cause": "rain", "relation": "causes", '
        ...              '"effect": "flood", "evidence": "Rain causes flood.",}]\n```').items
        ... # doctest: +NORMALIZE_WHITESPACE
        [{'cause': 'rain', 'relation': 'causes', 'effect': 'flood', 'relation_type': None,
          'evidence': 'Rain causes flood.'}]
    """
    if data is not None:
        items = _coerce(data)
        if items is not None:
            good, bad = _normalise_all(items)
            return ParsedAnswer(good, ("structured",), bad)
    raw, body, fixes = _answer_body(text)
    fence = next((m for m in _FENCE.finditer(body) if re.search(r"[\[{]", m.group(2))), None)
    if fence is not None:
        body = fence.group(2).strip()
        fixes.append("code-fence")
    result = _scan(body, fixes)
    if result is not None:
        return result
    if _REFUSAL.search(body):
        snippet = " ".join(body.split())[:160]
        msg = f"the model refused: {snippet!r}"
        raise AnswerParseError(msg, kind="refusal", raw_output=raw)
    snippet = " ".join(body.split())[:120]
    msg = f"no JSON list of triples found in the answer (it begins {snippet!r})"
    raise AnswerParseError(msg, kind="no_json", raw_output=raw)


def load_json_answer(text: str | None) -> tuple[Any, tuple[str, ...]]:
    r"""Read the first JSON value (object or list) out of a model answer, tolerantly.

    The same repairs as :func:`parse_answer` (reasoning blocks, code fences, prose
    around the JSON, trailing commas, single quotes, Python literals, smart quotes), for
    answers of any shape; used by the TaSR query decomposer and entity typer.

    Returns:
        ``(value, fixes)``.

    Raises:
        AnswerParseError: The answer is empty, only reasoning, a refusal or holds no JSON.

    Example:
        >>> load_json_answer("Sure! ```json\n{'steps': [1, 2,]}\n```")
        ({'steps': [1, 2]}, ('code-fence', 'prose', 'single-quotes', 'trailing-comma'))
    """
    raw, body, fixes = _answer_body(text)
    fence = next((m for m in _FENCE.finditer(body) if re.search(r"[\[{]", m.group(2))), None)
    if fence is not None:
        fixes.append("code-fence")
        if body[: fence.start()].strip() or body[fence.end() :].strip():
            fixes.append("prose")
        body = fence.group(2).strip()
    for match in list(re.finditer(r"[\[{]", body))[:_MAX_CANDIDATES]:
        end = _balanced_end(body, match.start())
        if end is None:
            continue
        value, repair = _loads(body[match.start() : end])
        if value is None:
            continue
        if (body[: match.start()].strip() or body[end:].strip()) and "prose" not in fixes:
            fixes.append("prose")
        return value, tuple(dict.fromkeys([*fixes, *repair]))
    snippet = " ".join(body.split())[:120]
    if _REFUSAL.search(body):
        msg = f"the model refused: {snippet!r}"
        raise AnswerParseError(msg, kind="refusal", raw_output=raw)
    msg = f"no JSON found in the answer (it begins {snippet!r})"
    raise AnswerParseError(msg, kind="no_json", raw_output=raw)


def _answer_body(text: str | None) -> tuple[str, str, list[str]]:
    """``(raw, body, fixes)``: the answer without reasoning blocks, or a parse error."""
    raw = text if isinstance(text, str) else ("" if text is None else str(text))
    if not raw.strip():
        msg = "the model returned an empty answer"
        raise AnswerParseError(msg, kind="empty", raw_output=raw)
    fixes: list[str] = []
    body, had_reasoning = strip_reasoning(raw)
    if had_reasoning:
        fixes.append("think-block")
    if not body:
        msg = (
            "the answer held only a <think> reasoning block and no JSON (a thinking model "
            "may have spent its output budget on reasoning; raise its output token limit "
            "or turn thinking off)"
        )
        raise AnswerParseError(msg, kind="thinking_only", raw_output=raw)
    return raw, body, fixes


def _scan(body: str, fixes: list[str]) -> ParsedAnswer | None:
    starts = [m.start() for m in re.finditer(r"[\[{]", body)][:_MAX_CANDIDATES]
    for start in starts:
        end = _balanced_end(body, start)
        if end is None:
            return _partial(body[start:], fixes)
        obj, repair = _loads(body[start:end])
        if obj is None:
            continue
        items = _coerce(obj)
        if items is None:
            continue
        if body[:start].strip() or body[end:].strip():
            fixes.append("prose")
        fixes.extend(repair)
        good, bad = _normalise_all(items)
        return ParsedAnswer(good, tuple(dict.fromkeys(fixes)), bad)
    return None


def _partial(fragment: str, fixes: list[str]) -> ParsedAnswer:
    """Keep every complete triple object of a truncated answer."""
    objects: list[Any] = []
    for start, end in _closed_objects(fragment):
        obj, repair = _loads(fragment[start:end])
        if isinstance(obj, Mapping) and _CAUSE_KEYS & {str(k).lower() for k in obj}:
            objects.append(obj)
            fixes.extend(repair)
    if not objects:
        msg = (
            "the answer was cut off before the first complete triple (truncated JSON); "
            "raise the model's output token limit or lower max_chunk_tokens"
        )
        raise AnswerParseError(msg, kind="truncated", raw_output=fragment)
    fixes.append("truncated")
    good, bad = _normalise_all(objects)
    return ParsedAnswer(good, tuple(dict.fromkeys(fixes)), bad, truncated=True)


# --------------------------------------------------------------------------- scanning


def _string_end(text: str, index: int) -> int | None:
    """End (exclusive) of the string literal opening at ``index``, or None if unterminated."""
    quote = text[index]
    i = index + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'":
                rest = text[i + 1 :].lstrip()
                if rest and rest[0] not in ",:}]":
                    i += 1  # an apostrophe inside a single-quoted string
                    continue
            return i + 1
        i += 1
    return None


def _opens_single_quoted(text: str, index: int) -> bool:
    before = text[:index].rstrip()
    return bool(before) and before[-1] in "[{,:"


def _balanced_end(text: str, start: int) -> int | None:
    """End (exclusive) of the bracketed structure opening at ``start``; None if cut off."""
    depth = 0
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"' or (ch == "'" and _opens_single_quoted(text, i)):
            end = _string_end(text, i)
            if end is None:
                return None
            i = end
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _closed_objects(text: str) -> list[tuple[int, int]]:
    """Spans of every ``{...}`` that closes, outermost triple-level first by start."""
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"' or (ch == "'" and _opens_single_quoted(text, i)):
            end = _string_end(text, i)
            if end is None:
                break
            i = end
            continue
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            spans.append((stack.pop(), i + 1))
        i += 1
    spans.sort()
    kept: list[tuple[int, int]] = []
    for span in spans:
        if kept and span[0] < kept[-1][1]:
            continue  # nested inside a kept object
        kept.append(span)
    # an outer wrapper that closed (e.g. {"triples": [...]}) is not a triple: use its children
    out: list[tuple[int, int]] = []
    for s, e in kept:
        inner = [(a, b) for a, b in spans if s < a and b < e]
        out.extend(inner if inner and not _looks_like_triple(text[s:e]) else [(s, e)])
    return out


def _looks_like_triple(fragment: str) -> bool:
    obj, _ = _loads(fragment)
    return isinstance(obj, Mapping) and bool(_CAUSE_KEYS & {str(k).lower() for k in obj})


# --------------------------------------------------------------------------- loading

_SMART = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'"})


def _loads(candidate: str) -> tuple[Any, list[str]]:
    """json.loads, else a repaired JSON; returns (object or None, fixes)."""
    try:
        return json.loads(candidate), []
    except (ValueError, RecursionError):
        pass
    fixes: list[str] = []
    text = candidate
    if any(c in text for c in "“”„‘’"):
        text = text.translate(_SMART)
        fixes.append("smart-quotes")
    try:
        rewritten, more = _rewrite(text)
    except ValueError:
        return None, []
    fixes.extend(more)
    try:
        return json.loads(rewritten), fixes
    except (ValueError, RecursionError):
        return None, []


def _rewrite(text: str) -> tuple[str, list[str]]:
    """Re-emit ``text`` as strict JSON: quote styles, trailing commas, Python literals."""
    out: list[str] = []
    fixes: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"' or (ch == "'" and _opens_single_quoted(text, i)):
            end = _string_end(text, i)
            if end is None:
                msg = "unterminated string"
                raise ValueError(msg)
            inner = text[i + 1 : end - 1]
            if ch == "'":
                fixes.append("single-quotes")
                value = inner.replace("\\'", "'").replace('\\"', '"')
            else:
                try:
                    value = json.loads(text[i:end])
                except ValueError:
                    value = inner.replace("\\'", "'")
                    fixes.append("bad-escape")
            out.append(json.dumps(value, ensure_ascii=False))
            i = end
            continue
        if ch == ",":
            rest = text[i + 1 :].lstrip()
            if rest[:1] in ("]", "}"):
                fixes.append("trailing-comma")
                i += 1
                continue
        if ch.isalpha():
            m = re.match(r"[A-Za-z_]+", text[i:])
            word = m.group(0) if m else ch
            mapped = {"True": "true", "False": "false", "None": "null"}.get(word)
            if mapped:
                fixes.append("python-literals")
            out.append(mapped or word)
            i += len(word)
            continue
        out.append(ch)
        i += 1
    return "".join(out), fixes


# --------------------------------------------------------------------------- shaping


def _coerce(obj: Any) -> list[Any] | None:
    """The list of triple-like elements in ``obj``, or None when the shape is wrong."""
    if isinstance(obj, Mapping):
        lowered = {str(k).lower(): v for k, v in obj.items()}
        for key in _WRAPPERS:
            if isinstance(lowered.get(key), list):
                return _coerce(lowered[key])
        if _CAUSE_KEYS & set(lowered):
            return [obj]
        lists = [v for v in obj.values() if isinstance(v, list)]
        if len(obj) == 1 and len(lists) == 1:
            return _coerce(lists[0])
        return None
    if isinstance(obj, list):
        if not obj:
            return []
        usable = [
            x
            for x in obj
            if isinstance(x, Mapping)
            or (isinstance(x, (list, tuple)) and len(x) >= 3 and all(isinstance(v, str) for v in x))
        ]
        if not usable:
            return None
        return list(obj)
    return None


_DEFAULT_RELATION = {
    "causal": "causes",
    "procedural": "is required for",
    "conditional": "if ... then",
    "temporal": "precedes",
    "enabling": "enables",
    "preventing": "prevents",
    "spatial": "is located in",
    "generic": "relates to",
}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        text = " ".join(str(value).split())
        return text or None
    return None


def _normalise(item: Any) -> dict[str, str | None] | None:
    if isinstance(item, (list, tuple)):
        if len(item) < 3 or not all(isinstance(v, str) for v in item):
            return None
        values = [*item, None, None][:5]
        item = dict(zip(("cause", "relation", "effect", "relation_type", "evidence"), values))
    if not isinstance(item, Mapping):
        return None
    lowered = {
        str(k).strip().lower().replace(" ", "_").replace("-", "_"): v for k, v in item.items()
    }
    out: dict[str, str | None] = {}
    for key, aliases in _ALIASES.items():
        out[key] = next(
            (_text(lowered[a]) for a in aliases if a in lowered and _text(lowered[a])), None
        )
    if not out["cause"] or not out["effect"]:
        return None
    if not out["relation"]:
        kind = (out["relation_type"] or "").lower()
        out["relation"] = _DEFAULT_RELATION.get(kind, "relates to")
    return out


def _normalise_all(items: Sequence[Any]) -> tuple[list[dict[str, str | None]], int]:
    good = []
    bad = 0
    for item in items:
        norm = _normalise(item)
        if norm is None:
            bad += 1
        else:
            good.append(norm)
    return good, bad
