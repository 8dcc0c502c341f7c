"""Sentence spans and sentence-aligned chunks under a token budget.

The LLM extractor sends a long document in pieces: whole sentences are packed into
chunks of at most ``max_tokens`` (estimated, or counted by your tokenizer). A single
sentence longer than the budget is cut at word boundaries. Every chunk keeps its
``(start, end)`` offsets in the document, so triples found in a chunk map back to the
document's own text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from sarg_integrations.errors import ConfigError

__all__ = ["Chunk", "estimate_tokens", "sentence_spans", "split_into_chunks"]

_BOUNDARY = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|\n[ \t]*\n+|\n(?=[ \t]*(?:[-*•]|\d+[.)])\s)")
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "cf",
        "al",
        "fig",
        "no",
        "vol",
        "approx",
        "inc",
        "ltd",
        "co",
        "corp",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "u.s",
        "u.k",
        "a.m",
        "p.m",
    ]
)


def estimate_tokens(text: str) -> int:
    """A cheap token estimate: about four characters per token, never below the word count.

    Example:
        >>> estimate_tokens("Rain causes floods.")
        5
    """
    if not text:
        return 0
    return max(math.ceil(len(text) / 4), len(text.split()))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``, without surrounding whitespace.

    Splits after ``.``, ``!``, ``?`` followed by whitespace (not after common
    abbreviations or single initials), at blank lines and before list items.

    Example:
        >>> text = "Dr. Smith arrived. Rain causes floods!  Then what?"
        >>> [text[s:e] for s, e in sentence_spans(text)]
        ['Dr. Smith arrived.', 'Rain causes floods!', 'Then what?']
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        cut = match.start()
        piece = text[start:cut]
        if "\n" not in match.group(0) and _ends_with_abbreviation(piece):
            continue
        spans.append((start, match.end()))
        start = match.end()
    spans.append((start, len(text)))
    out = []
    for s, e in spans:
        segment = text[s:e]
        lead = len(segment) - len(segment.lstrip())
        trail = len(segment) - len(segment.rstrip())
        if e - trail > s + lead:
            out.append((s + lead, e - trail))
    return out


def _ends_with_abbreviation(piece: str) -> bool:
    words = piece.rstrip("\"'”’)] \t").split()
    if not words:
        return False
    last = words[-1].lower().rstrip(".")
    if last.lstrip("(") in _ABBREVIATIONS:
        return True
    return len(last) == 1 and last.isalpha()  # an initial: "J. Smith"


@dataclass(frozen=True)
class Chunk:
    """A piece of a document sent to the model in one call.

    Attributes:
        start: Offset of the chunk's first character in the document.
        end: Offset one past its last character.
        text: ``document.text[start:end]``.
        index: Position of the chunk in its document (0-based).
    """

    start: int
    end: int
    text: str
    index: int = 0


def split_into_chunks(
    text: str,
    max_tokens: int = 1500,
    *,
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> list[Chunk]:
    """Pack whole sentences of ``text`` into chunks of at most ``max_tokens`` tokens.

    Args:
        text: The document text.
        max_tokens: The budget per chunk (of document text; the prompt comes on top).
        count_tokens: Counts the tokens of a string; default :func:`estimate_tokens`.

    Raises:
        ConfigError: ``max_tokens`` below 16.

    Example:
        >>> [c.text for c in split_into_chunks("A b c. D e f. G h i.", max_tokens=16)]
        ['A b c. D e f. G h i.']
    """
    if not isinstance(max_tokens, int) or max_tokens < 16:
        msg = (
            f"max_chunk_tokens={max_tokens!r} is too small; use a whole number >= 16 (default 1500)"
        )
        raise ConfigError(msg, field="max_chunk_tokens", value=max_tokens)
    pieces: list[tuple[int, int]] = []
    for s, e in sentence_spans(text):
        if count_tokens(text[s:e]) <= max_tokens:
            pieces.append((s, e))
        else:
            pieces.extend(_split_long(text, s, e, max_tokens, count_tokens))
    chunks: list[Chunk] = []
    cur_start: int | None = None
    cur_end = 0
    for s, e in pieces:
        if cur_start is None:
            cur_start, cur_end = s, e
        elif count_tokens(text[cur_start:e]) <= max_tokens:
            cur_end = e
        else:
            chunks.append(Chunk(cur_start, cur_end, text[cur_start:cur_end], len(chunks)))
            cur_start, cur_end = s, e
    if cur_start is not None:
        chunks.append(Chunk(cur_start, cur_end, text[cur_start:cur_end], len(chunks)))
    return chunks


def _split_long(
    text: str, start: int, end: int, max_tokens: int, count_tokens: Callable[[str], int]
) -> list[tuple[int, int]]:
    """Cut one over-long sentence at word boundaries."""
    out: list[tuple[int, int]] = []
    words = [(m.start() + start, m.end() + start) for m in re.finditer(r"\S+", text[start:end])]
    piece_start: int | None = None
    piece_end = start
    for ws, we in words:
        if piece_start is None:
            piece_start, piece_end = ws, we
        elif count_tokens(text[piece_start:we]) <= max_tokens:
            piece_end = we
        else:
            out.append((piece_start, piece_end))
            piece_start, piece_end = ws, we
    if piece_start is not None:
        out.append((piece_start, piece_end))
    return out
