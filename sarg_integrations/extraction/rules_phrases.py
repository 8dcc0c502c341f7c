"""Node phrases for the rule extractor: trimming parsed arguments to short graph nodes.

A cue rule (:mod:`~sarg_integrations.extraction.rules_cues`) finds a relation between two
tokens; this module turns each into a node name: the syntactic head plus its closest
modifiers (at most :data:`MAX_PHRASE_TOKENS` tokens), without leading determiners or
trailing punctuation (:func:`_noun_core`, :func:`_clause_core`, :func:`_render`). It
resolves easy pronouns against the previous sentence (:class:`_Context`,
:func:`_resolve`), splits noun conjunctions (:func:`_render_candidate`) and holds the
small dependency-tree helpers the rules share. :func:`head_phrase` names the spans of
learned extractors the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sarg_integrations.extraction.rules_lexicon import (
    _ADDRESS_ENTS,
    _AGENT_PREPS,
    _EMPTY_HEADS,
    _ENTITY_PRONOUNS,
    _EVENT_PRONOUNS,
    _HARMFUL_EVENTS,
    _LEADING_DROP,
    _LEFT_MODS,
    _MEASURE_NOUNS,
    _NOUN_POS,
    _NP_PREPS,
    _OBJ_DEPS,
    _OBJECT_PREPS,
    _RELATIVE_PRONOUNS,
    _SUBJ_DEPS,
    _TIME_NOUNS,
    _VERB_POS,
    _Cue,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

__all__ = ["MAX_PHRASE_TOKENS", "denies_cue", "head_phrase"]

MAX_PHRASE_TOKENS = 8
"""The longest cause / effect phrase, in tokens (the head is always kept)."""


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


def _word_count(tokens: Sequence[Token]) -> int:
    """How many words ``tokens`` make, a hyphenated word ("anti - government") as one.

    Example:
        >>> import spacy
        >>> tokenize = spacy.blank("en")
        >>> _word_count(list(tokenize("anti-government protests")))
        2
        >>> _word_count(list(tokenize("Thirty-four people")))
        4
    """
    joins = sum(1 for t in tokens if _joins_a_word(t))
    return len(tokens) - 2 * joins


def _joins_a_word(token: Token) -> bool:
    """Whether ``token`` is the hyphen inside a word ("anti-government"), not inside an
    amount ("Thirty-four", "40-year-old", "2,000-3,000"), which stays several words."""
    doc = token.doc
    if token.text != "-" or token.whitespace_ or token.i == 0 or token.i + 1 >= len(doc):
        return False
    before, after = doc[token.i - 1], doc[token.i + 1]
    return not before.whitespace_ and not before.like_num and not after.like_num


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
        # A hyphenated word is one word: cut to "government protests", "anti-government
        # protests" would name the opposite.
        if _word_count(picked) + _word_count(sub) > budget:
            break
        picked.extend(sub)
    rights = list(tok.rights)
    after = tok.right_edge.i + 1
    # An amount added to something ("added (three) months to waiting lists") names little
    # alone; the parser reads a counted one as an adverbial.
    amount = tok.lemma_.lower() in _MEASURE_NOUNS and tok.dep_ in ("dobj", "npadvmod")
    if not any(c.dep_ == "prep" for c in rights) and (
        tok.dep_ in ("dobj", "pobj", "nsubjpass") or amount
    ):
        # The small parser often hangs "a sell-off in tech stocks" on the verb; an
        # adjacent complement of the verb right after the object belongs to the object.
        # So does one after a passive's agent ("boosted by remittances from Filipinos
        # abroad"): a verb taking its agent seldom takes a source too.
        nxt = doc[after] if after < len(doc) else None
        agent = tok.head.dep_ == "agent"
        host = tok.head.head if agent else tok.head
        preps = _AGENT_PREPS if agent else _OBJECT_PREPS
        if amount:
            preps = frozenset({"to"}) if tok.dep_ == "npadvmod" else preps | {"to"}
        if nxt is not None and nxt.dep_ == "prep" and nxt.head == host and nxt.lower_ in preps:
            rights.append(nxt)
    for child in rights:
        if child.dep_ in ("nummod", "compound") and child.i == picked[-1].i + 1 == tok.i + 1:
            picked.append(child)  # "type 2", "Factor 12"
            continue
        after_head = child.i == tok.i + 1 and child.i not in exclude
        if child.dep_ == "amod" and child.pos_ == "ADJ" and after_head:
            picked.append(child)  # "(left) the fields useless", "five missing"
            continue
        where = _where_it_happened(child) if child.dep_ == "relcl" else None
        if where is not None and child.i not in exclude:
            obj = _first_child(where, ("pobj",))
            room = budget - len(picked) - 1
            if obj is not None and obj.i not in exclude and room >= 1:
                # "the blast that occurred in the Pagou Coal Mine": the blast in the mine
                picked.extend([where, *_noun_core(obj, min(room, 3), exclude)])
            break
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
        if child.lower_ == "at" and _names_a_place(obj) and not _is_harmful_event(tok):
            # "the beds at Dunmore General Hospital": an address, not part of the thing;
            # in the name it would bridge to every page about the place. Where an event
            # happened tells which event it was ("the fire at the Brena paint factory").
            continue
        if _tells_when(child):
            continue  # "a fire on Tuesday": when, not what; the sentence keeps it
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


_HAPPENING_LEMMAS = frozenset({"occur", "happen"})


def _where_it_happened(clause: Token) -> Token | None:
    """The preposition of a relative clause saying only where its noun happened: "(the
    blast) that occurred *in* the mine", "which took place *at* the port"; ``None`` for
    other clauses and for when it happened ("that happened in 2001")."""
    lemma = clause.lemma_.lower()
    took_place = lemma == "take" and any(
        c.dep_ == "dobj" and c.lower_ == "place" for c in clause.children
    )
    if lemma not in _HAPPENING_LEMMAS and not took_place:
        return None
    where = _first_child(clause, ("prep",))
    if where is None or where.lower_ not in ("in", "at", "on", "near") or _tells_when(where):
        return None
    return where


def _names_a_place(tok: Token) -> bool:
    """A named place or organisation ("Dunmore General Hospital", "the Delmar plant")."""
    return (
        tok.pos_ == "PROPN"
        or tok.ent_type_ in _ADDRESS_ENTS
        or any(c.dep_ == "compound" and c.pos_ == "PROPN" for c in tok.children)
    )


def _is_harmful_event(tok: Token) -> bool:
    """A fire, a blast, a flood… (:data:`_HARMFUL_EVENTS`)."""
    return tok.lemma_.lower() in _HARMFUL_EVENTS or tok.lower_ in _HARMFUL_EVENTS


def _names_a_time(tok: Token) -> bool:
    """A date, a time or a stretch of time ("2001", "Friday", "a week")."""
    return tok.ent_type_ in ("DATE", "TIME") or tok.lemma_.lower() in _TIME_NOUNS


def _tells_when(prep: Token) -> bool:
    """A time adverbial: "during the 1990s", "in 2001", "on Friday", "for a week"."""
    obj = _first_child(prep, ("pobj",))
    return obj is not None and (prep.lower_ == "during" or _names_a_time(obj))


def _subject_of(verb: Token) -> Token | None:
    for child in verb.children:
        if child.dep_ in _SUBJ_DEPS:
            return child
    return None


def _clause_core(verb: Token, budget: int, exclude: frozenset[int] = frozenset()) -> list[Token]:
    """A short event phrase: subject head, negation, verb, particle and object.

    A verb of saying or thinking is named by the clause it reports, as in
    :func:`head_phrase`; that clause's "it" is the reporter ("another concern said *it*
    would be prepared to outbid the offer" → "concern prepared to outbid offer").
    """
    reported = _reported_clause(verb, None, exclude)
    if reported is not None:
        named = _readiness_clause(reported, budget, exclude) or _clause_core(
            reported, budget, exclude
        )
        reporter, subject = _subject_of(verb), _subject_of(reported)
        if (
            named
            and subject is not None
            and subject.lower_ == "it"
            and reporter is not None
            and reporter.i not in exclude
            and not _is_pronominal(reporter)
            and reporter.pos_ not in _VERB_POS
            and not any(t.i == reporter.i for t in named)
        ):
            named = [*_noun_core(reporter, 3, exclude), *named][: max(budget, len(named))]
        if named:
            return named
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
    # A negated adverb negates the verb: "could *no longer* carry heavy loads" is not
    # "carry heavy loads".
    for adverb in verb.children:
        negation = [g for g in adverb.children if g.dep_ == "neg" and g.i not in exclude]
        if adverb.dep_ == "advmod" and negation and adverb.i not in exclude:
            verb_toks += [*negation, adverb]
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
            predicate = _first_child(verb, ("oprd",)) if child.dep_ == "dobj" else None
            if predicate is not None and predicate.i > child.i and predicate.i not in exclude:
                # "left 11 miners dead", "made the roads impassable": what the object became
                obj_toks = [*obj_toks[: max(room - 1, 1)], predicate]
            break
        if child.dep_ == "xcomp" and child.pos_ in _VERB_POS:
            obj_toks = _clause_core(child, room, exclude)
            break
        if child.dep_ == "prep" and _tells_when(child):
            continue  # "came during the 1990s to hold two-thirds of the debt": not the object
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


# ---------------------------------------------------------------- tree helpers


def _first_child(tok: Token, deps: frozenset[str] | set[str] | tuple[str, ...]) -> Token | None:
    for child in tok.children:
        if child.dep_ in deps:
            return child
    return None


def _negated(token: Token) -> bool:
    """Whether ``token`` has a negation of its own: "not", "never", or a negated adverb
    ("no longer")."""
    return any(
        child.dep_ == "neg"
        or (child.dep_ == "advmod" and any(g.dep_ == "neg" for g in child.children))
        for child in token.children
    )


def denies_cue(cue: Sequence[Token]) -> bool:
    """Whether the sentence denies the relation the ``cue`` tokens would state.

    "The drought did *not* cause the fire", "the storm was *not* responsible for the
    outage", "the cables could *no longer* carry heavy loads", "the law *never* led to
    lower prices": a triple read from such a cue says what the text denies. The cue is
    denied when one of its tokens is negated, or the verb an auxiliary or a particle of
    it belongs to ("did" → "cause"), or the copula an adjective or a noun of it
    complements ("the result of", "responsible for" → "was"). A preposition, an adjunct
    or a subordinator is not followed to the verb it hangs on: in "farmers could not sell
    milk because of the flood", "the marriage was never consummated, likely due to his
    death" and "the drought meant that farmers could not plant", the negation is the
    effect's own.

    Example:
        >>> from sarg_integrations._models import load_spacy
        >>> doc = load_spacy()("The drought did not cause the fire.")
        >>> denies_cue([doc[2]]), denies_cue([doc[4]])  # "did", "cause"
        (True, True)
        >>> doc = load_spacy()("Farmers could not sell milk because of the flood.")
        >>> denies_cue([doc[5], doc[6]])  # "because of"
        False
    """
    for token in cue:
        owners = [token]
        if token.dep_ in ("aux", "auxpass", "prt"):
            owners.append(token.head)
        elif token.dep_ in ("prep", "agent") and token.head.pos_ in ("ADJ", "NOUN"):
            owners.append(token.head)  # "responsible *for*", "the result *of*"
        if owners[-1].pos_ in ("ADJ", "NOUN") and owners[-1].dep_ in ("acomp", "attr"):
            owners.append(owners[-1].head)  # the copula: "was not responsible"
        if any(_negated(owner) for owner in owners):
            return True
    return False


def _prep_object(prep: Token) -> Token | None:
    obj = _first_child(prep, ("pobj", "pcomp"))
    if obj is not None and obj.dep_ == "pcomp" and obj.pos_ == "ADP":
        return _first_child(obj, ("pobj", "pcomp"))
    return obj


def _is_passive(verb: Token) -> bool:
    if any(c.dep_ in ("nsubjpass", "auxpass", "csubjpass") for c in verb.children):
        return True
    return verb.dep_ == "acl" and verb.tag_ == "VBN"


def _subtree_ids(tok: Token) -> frozenset[int]:
    return frozenset(t.i for t in tok.subtree)


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


# ------------------------------------------------------------------- node names


_FUNCTION_POS = frozenset({"ADP", "DET", "PUNCT", "CCONJ", "SCONJ", "PART", "AUX", "SPACE"})
_MODIFIER_POS = frozenset({"ADV", "ADJ", "INTJ"})
# Dependents that modify a verb as a measure, time or manner, not as one of its arguments.
_ADVERBIAL_DEPS = frozenset({"npadvmod", "advmod", "tmod"})
# Verbs of saying, thinking and deciding name nothing by themselves ("experts say",
# "Cineplex expects"): the clause they report is what a tagged span is about.
_REPORTING_LEMMAS = frozenset(
    "say tell report announce claim state believe think expect decide hope fear warn estimate "
    "predict argue insist suggest add explain confirm show find know note reckon forecast "
    "anticipate indicate reveal agree".split()
)
# "X is ready / likely / able to Y": the name keeps the adjective and the clause after it.
_READINESS_WORDS = frozenset(
    "ready likely unlikely able unable set due poised willing eager expected certain "
    "bound prepared".split()
)
# Where a noun stands, and what only a clause has (for verbs the small tagger misreads).
_NOMINAL_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "attr", "appos", "compound"})
_CLAUSE_DEPS = frozenset(
    {"nsubj", "nsubjpass", "csubj", "dobj", "aux", "auxpass", "mark", "neg", "prt"}
)


def _governs(prep: Token, inside: set[int]) -> bool:
    """Whether ``prep`` is a preposition whose object is a noun inside the span."""
    obj = _prep_object(prep) if prep.pos_ == "ADP" else None
    return obj is not None and obj.i in inside and obj.pos_ in ("NOUN", "PROPN")


def _mistagged_noun(tok: Token) -> bool:
    """A "verb" in a noun's place with no clause of its own: the small tagger's reading
    of nouns such as "surge", "cut" or "spike" ("the storm surge" → ``storm <- surge``).
    """
    return tok.dep_ in _NOMINAL_DEPS and not any(c.dep_ in _CLAUSE_DEPS for c in tok.children)


def _reported_clause(
    root: Token, inside: set[int] | None, exclude: frozenset[int] = frozenset()
) -> Token | None:
    """The clause a reporting verb governs inside the span ("say [the move will improve …]").

    Only a clause with its own subject (``ccomp``): "the company decided to close the
    plant" keeps its name, "company decided to close plant", since the clause alone would
    lose who acts. ``None`` when ``root`` reports nothing, is negated ("did not
    expect"), or its clause lies outside the span (``inside``, when given) or in
    ``exclude``.
    """
    if root.pos_ not in _VERB_POS or root.lemma_.lower() not in _REPORTING_LEMMAS:
        return None
    if any(c.dep_ == "neg" for c in root.children):
        return None
    return next(
        (
            c
            for c in root.children
            if c.dep_ == "ccomp"
            and (inside is None or c.i in inside)
            and c.i not in exclude
            and c.pos_ in _VERB_POS
        ),
        None,
    )


def _readiness_clause(root: Token, budget: int, outside: frozenset[int]) -> list[Token]:
    """``subject [not] ready to verb object`` ("Israel is ready to recognize a role"), or ``[]``."""
    if root.pos_ not in _VERB_POS:
        return []
    adjective = next(
        (
            c
            for c in root.children
            if c.dep_ == "acomp" and c.lower_ in _READINESS_WORDS and c.i not in outside
        ),
        None,
    )
    clause = _first_child(adjective, ("xcomp",)) if adjective is not None else None
    if clause is None or clause.i in outside or clause.pos_ not in _VERB_POS:
        return []
    subject = _subject_of(root)
    named = (
        _noun_core(subject, 3, outside)
        if subject is not None and subject.i not in outside and not _is_pronominal(subject)
        else []
    )
    negation = [c for c in root.children if c.dep_ == "neg" and c.i not in outside]
    head = [*named, *negation, adjective]
    return head + _clause_core(clause, max(budget - len(head), 2), outside)


def head_phrase(span: Span, budget: int = MAX_PHRASE_TOKENS) -> str:
    """A short node name for a parsed span: its syntactic head and nearest modifiers.

    The span's root (the token whose head lies outside it) is rendered as a noun
    phrase or a short event clause, exactly as the rules name their own arguments,
    using only tokens inside the span. Learned extractors tag whole clauses; this keeps
    their graph nodes short and resolvable, like the rules' nodes. A span rooted in a verb
    of saying or thinking is named by the clause it reports, when that clause has its own
    subject ("experts say the move will improve training" → "move improve training"), and
    "X is ready / likely to Y" keeps the adjective and the clause.

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
    # A span that opens with a preposition and its noun, then runs on into a clause of
    # its own ("[against the meeting and clashed with police]"), is named by that noun.
    opening = (
        roots[0]
        if len(roots) > 1
        and _governs(roots[0], inside)
        and all(t.dep_ in ("conj", "cc", "punct") for t in roots[1:])
        else None
    )
    if opening is not None:
        root = _prep_object(opening)
    else:
        # Of several roots (a span cut across the tree), a content word before a function
        # word (in "the cooling systems at the plant" the prepositional phrase is a
        # modifier of the verb outside, not the name), an argument before an adverbial
        # ("the killings of seven villagers 20 kilometres from Kisangani": "kilometres"
        # hangs on the verb outside as a measure), then the one governing most of the span.
        root = max(
            roots,
            key=lambda t: (
                t.pos_ not in _FUNCTION_POS,
                # an adjective whose noun lies outside the span is a modifier cut from it:
                # "A severe frost damaged …", parsed with "severe" on the object and
                # "frost" as a measure of the verb, is named "severe frost", not "severe"
                t.dep_ != "amod",
                t.dep_ not in _ADVERBIAL_DEPS,
                sum(1 for s in t.subtree if s.i in inside),
                -t.i,
            ),
        )
    outside = frozenset(t.i for t in span.doc if t.i not in inside)
    for _ in range(2):  # "officials said [experts expect [X to Y]]"
        reported = _reported_clause(root, inside)
        if reported is None:
            break
        root = reported
    small_subject = _first_child(root, ("nsubj",)) if root.pos_ == "ADJ" else None
    if root.pos_ in _VERB_POS and not _mistagged_noun(root):
        picked = _readiness_clause(root, budget, outside) or _clause_core(root, budget, outside)
    elif small_subject is not None and small_subject.i in inside and small_subject.i < root.i:
        # a small clause, "(made) the roads impassable": the adjective says what the
        # subject became, and is no name alone
        picked = [*_noun_core(small_subject, budget - 1, outside), root]
    else:
        picked = _noun_core(root, budget, outside)
    predicate = next((t for t in roots if t.dep_ == "oprd" and t.i == root.right_edge.i + 1), None)
    if root.pos_ in _NOUN_POS and predicate is not None and predicate.pos_ == "ADJ":
        picked = [*picked[: budget - 1], predicate]  # "(left) the fields useless"
    # The small parser splits some noun compounds into sibling roots ("hospital | stays");
    # nouns right before the chosen root belong to its name.
    others = {t.i for t in roots if t.pos_ in ("NOUN", "PROPN", "ADJ") and t.i < root.i}
    first = min((t.i for t in picked), default=root.i)
    while picked and first - 1 in others and len(picked) < budget:
        first -= 1
        picked.append(span.doc[first])
    text = _render(_fill_gaps(picked, span.doc)) if picked else ""
    if text and len(picked) == 1 and picked[0].pos_ in _MODIFIER_POS:
        # "rapidly", "further", "very": a lone modifier names nothing the graph could
        # resolve or link (a tagger span that caught only a modifier of the verb). A
        # lone verb ("arrested") stays: CNC's annotators read those spans as causes and
        # effects (4 of its dev pairs), though the name is poor.
        return ""
    return text or _render(tokens[:budget])
