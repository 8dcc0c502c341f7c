"""Text helpers: escaping untrusted text (prompts, terminal, citations), words and sentences.

Retrieved documents, their ids and the query (end-user text in the adapters) are all
untrusted. What counts as a *line break* must be what a reader counts, not only ``"\\n"``:
``str.splitlines`` and many renderers also break on ``\\r``, ``\\v``, ``\\f``, the
information separators ``\\x1c``–``\\x1e``, NEL and the Unicode line/paragraph
separators. Likewise an *invisible* prefix (NBSP, zero-width characters, controls) must
not hide a ``#`` that starts a line from the header escaping.
"""

from __future__ import annotations

import html
import re

__all__ = [
    "ABBREVIATION",
    "INVISIBLE_CLASS",
    "LINE_BREAK_CLASS",
    "escape_citation_id",
    "markdown_cell",
    "markdown_code",
    "markdown_inline",
    "sentence_spans",
    "terminal_safe",
    "utf8_encodable",
    "words",
]

_WORD = re.compile(r"\w+")
# A word ending in a full stop that does not end a sentence: titles, company suffixes,
# months ("on Oct. 24 left 11 miners dead" is one sentence), Latin abbreviations, and
# initials ("J.", "U.S.").
ABBREVIATION = re.compile(
    r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|St|Sen|Gov|Gen|Col|Lt|Rep|Rev|Jr|Sr|Inc|Corp|Co|Ltd|No|vs|etc|"
    r"e\.g|i\.e|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)|\b[A-Z](?:\.[A-Z])*)\.$"
)


# A stop, its closing quotes / brackets (group 1, kept with the sentence), space on the same
# line, and a capital or digit; or a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?])([\"')\]]*)[^\S\n]+(?=[\"'(\[]?[A-Z0-9])|\n\s*")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the sentences of ``text`` (whitespace trimmed).

    A sentence ends at ``.``/``!``/``?`` followed by a space and a capital or digit
    (not after an :data:`ABBREVIATION`: a title, a month, an initial), or at a line
    break. The one sentence split of the tagger and the causal-QA loaders.

    Example:
        >>> text = 'Rain fell. Dr. Smith left on Oct. 24. He said "go." Roads flooded\\nat dawn'
        >>> [text[s:e] for s, e in sentence_spans(text)]
        ['Rain fell.', 'Dr. Smith left on Oct. 24.', 'He said "go."', 'Roads flooded', 'at dawn']
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        closing = match.group(1)
        if closing is not None and ABBREVIATION.search(text[start : match.start()]):
            continue  # "Dr. Smith", "U.S. courts": no sentence end (a line break always is)
        spans.append((start, match.start() + len(closing or "")))
        start = match.end()
    spans.append((start, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


def words(text: str) -> list[str]:
    """The words of ``text`` as written (runs of ``\\w``): the one word split that the
    evidence budget, the document links and the union's span matching share.

    Example:
        >>> words("Heavy rain -- 40 mm -- flooded Main St.")
        ['Heavy', 'rain', '40', 'mm', 'flooded', 'Main', 'St']
    """
    return _WORD.findall(text)


# Every character str.splitlines() treats as a line boundary ("\r\n" is two of them).
LINE_BREAK_CLASS = "\\n\\r\\x0b\\x0c\\x1c\\x1d\\x1e\\x85\\u2028\\u2029"
# Characters that print as nothing or as blank space inside a line: spaces (tab, NBSP and
# the other Unicode spaces), zero-width and bidi format characters, and C0/C1 controls.
INVISIBLE_CLASS = (
    "\\t \\x00-\\x08\\x0e-\\x1b\\x1f\\x7f-\\x84\\x86-\\xa0\\xad\\u034f\\u061c\\u115f\\u1160"
    "\\u1680\\u180e\\u2000-\\u200f\\u202a-\\u202f\\u205f-\\u206f\\u3000\\u3164\\ufeff"
    "\\ufff9-\\ufffb"
)

# What a terminal must never receive raw: C0/C1 controls (ESC starts escape sequences,
# "\r" overwrites a line) other than tab and "\n", line/paragraph separators, and the bidi
# overrides/isolates that reorder what is shown ("Trojan Source").
_TERMINAL_UNSAFE = re.compile("[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]")
_CITATION_SPECIAL = re.compile(r"[\\\[\]]")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")
_CELL_SPECIAL = re.compile(r"([\\`\[\]|])")


_TOKEN = re.compile(r"\w+|[^\w\s]")


def utf8_encodable(text: str) -> str:
    """``text`` with each lone surrogate (bytes decoded with ``"surrogateescape"``) made
    ``?``: a parser or a tokenizer given one would crash.

    Example:
        >>> utf8_encodable("caf\\udce9 ok")
        'caf? ok'
    """
    return text.encode("utf-8", "replace").decode("utf-8")


def count_tokens(text: str) -> int:
    """Estimated tokens: runs of word characters plus single punctuation marks.

    Example:
        >>> count_tokens("Who wrote 'Hamlet'?")
        6
    """
    return len(_TOKEN.findall(text))


def _visible_escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    r"""Return ``text`` with every character unsafe on a terminal written as an escape.

    ``"\n"`` and tab are kept; every other line break is escaped, so the lines a
    reader sees are exactly the ``"\n"``-separated ones.

    Example:
        >>> terminal_safe("id\x1b[31m red\u202e")
        'id\\x1b[31m red\\u202e'
    """
    return _TERMINAL_UNSAFE.sub(lambda m: _visible_escape(m.group(0)), text)


def escape_citation_id(doc_id: str) -> str:
    r"""Escape ``[``, ``]`` and ``\`` in an id so that ``[id]`` reads as one citation.

    Markdown-style backslash escapes keep ids readable; ``h] [a`` cannot pose as two
    citations.

    Example:
        >>> "[" + escape_citation_id("h] [a") + "]"
        '[h\\] \\[a]'
    """
    return _CITATION_SPECIAL.sub(lambda m: "\\" + m.group(0), doc_id)


def markdown_inline(text: str) -> str:
    r"""Escape text for inline Markdown: HTML-escaped, Markdown punctuation backslashed.

    Example:
        >>> markdown_inline("a|b *c* <i>")
        'a\\|b \\*c\\* &lt;i&gt;'
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


def markdown_cell(text: object) -> str:
    r"""One line of Markdown (a table cell, a heading) holding ``text`` as plain text.

    Control characters and line separators become visible escapes
    (:func:`terminal_safe`), whitespace runs (``\n``, tab) one space, ``<``, ``>`` and
    ``&`` HTML entities (no raw HTML, no ``<!--`` hiding the rows below), and ``\``,
    ``|``, `````, ``[`` and ``]`` are backslashed, so the text can neither end the cell
    or the row, nor start a forged one, a link or a code span. Emphasis characters
    (``_``, ``*``) are left as they are: ``sarg_fill`` stays readable in the raw file.

    Example:
        >>> markdown_cell("a | b\n| forged | row |\x1b")
        'a \\| b \\| forged \\| row \\|\\\\x1b'
        >>> markdown_cell("sarg_fill <!--")
        'sarg_fill &lt;!--'
    """
    flat = " ".join(terminal_safe(str(text)).split())
    return _CELL_SPECIAL.sub(r"\\\1", html.escape(flat, quote=False))


def markdown_code(text: object) -> str:
    r"""``text`` as one Markdown code span, whatever backticks or line breaks it holds.

    Controls become visible escapes and whitespace runs one space (as in
    :func:`markdown_cell`); the fence is one backtick longer than the longest run inside,
    padded with spaces when the text starts or ends with a backtick (CommonMark).

    Example:
        >>> markdown_code("a`b")
        '``a`b``'
        >>> markdown_code("tagger")
        '`tagger`'
    """
    body = " ".join(terminal_safe(str(text)).split())
    fence = "`" * (max((len(run) for run in re.findall("`+", body)), default=0) + 1)
    if body.startswith("`") or body.endswith("`"):
        body = f" {body} "
    return f"{fence}{body}{fence}"
