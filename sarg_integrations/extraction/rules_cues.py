"""The cue rules of the rule extractor: which parsed constructions make a triple.

:func:`_reasoning_candidates` walks a parsed sentence and yields a :class:`_Candidate`
for every reasoning-schema cue it recognises (cue verbs, passives, copular and nominal
cues, adverbial clauses, result adverbs, causal prepositions), with the arguments in
``cause --relation--> effect`` order; :func:`_generic_candidates` yields every
subject-verb-object relation instead (the ``generic_spo`` ablation). The cue words are in
:mod:`~sarg_integrations.extraction.rules_lexicon`; rendering the arguments as node
phrases is :mod:`~sarg_integrations.extraction.rules_phrases`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sarg_integrations.extraction.rules_lexicon import (
    _ADJ_CUES,
    _AFFECTING_PARTICIPLES,
    _AGENT_OK_VERBS,
    _C,
    _CAUSAL_PREPS,
    _CAUSE_NOUNS,
    _DIRECT_VERBS,
    _E,
    _ENTITY_PRONOUNS,
    _EVENT_PRONOUNS,
    _G,
    _HARM_PREDICATES,
    _HARMFUL_EVENTS,
    _HUMAN_ENTS,
    _HUMAN_NOUNS,
    _MODAL_OBLIGATION,
    _MOTIVE_PARTICIPLES,
    _P,
    _PHRASAL_VERBS,
    _PLACE_ENTS,
    _PREP_VERBS,
    _PREREQ_NOUNS,
    _REASON_ADJECTIVES,
    _REASON_NOUNS,
    _REQUIRED_FOR,
    _RESULT_ADVERBS,
    _RESULT_NOUN_ADVERBIALS,
    _RESULT_NOUNS,
    _S,
    _SUBORDINATORS,
    _T,
    _VERB_POS,
    _WITHOUT_IDIOMS,
    _Cue,
)
from sarg_integrations.extraction.rules_phrases import (
    MAX_PHRASE_TOKENS,
    _Candidate,
    _clause_core,
    _Context,
    _fill_gaps,
    _first_child,
    _is_passive,
    _is_pronominal,
    _names_a_time,
    _noun_core,
    _Phrase,
    _prep_object,
    _render,
    _resolve,
    _subject_of,
    _subtree_ids,
)

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# ----------------------------------------------------------------- cue helpers


def _agent_object(verb: Token) -> Token | None:
    agent = _first_child(verb, ("agent",))
    return _prep_object(agent) if agent is not None else None


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


def _leftmost_words(tok: Token, n: int) -> list[str]:
    doc = tok.doc
    start = tok.left_edge.i
    return [doc[i].lower_ for i in range(start, min(start + n, len(doc)))]


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
    yield from _fronted_reason_cues(sent)
    yield from _absolute_with_cues(sent)
    yield from _motive_cues(sent)
    yield from _anaphoric_result_cues(sent, ctx)


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
            target = _prep_object(prep)
            if _leads_somewhere(verb, target):
                continue
            return cue, target
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


def _leads_somewhere(verb: Token, target: Token | None) -> bool:
    """Whether "lead X to Y" takes someone to a place ("Italy will lead a multinational
    force to Albania"), not to an outcome ("led the farmers to sell their land")."""
    return (
        verb.lemma_.lower() == "lead"
        and target is not None
        and target.ent_type_ in _PLACE_ENTS
        and _first_child(verb, ("dobj",)) is not None
    )


@dataclass(frozen=True)
class _XcompMarker:
    """An object-control effect: ``obj`` + ``xcomp`` ("the bank to raise rates")."""

    obj: Token
    xcomp: Token


def _xcomp_phrase(marker: _XcompMarker) -> _Phrase:
    toks = _noun_core(marker.obj, 4) + _clause_core(marker.xcomp, 5)
    toks = _fill_gaps(toks, marker.obj.doc)
    return _Phrase(_render(toks), frozenset(t.i for t in toks))


# Verbs of a cause's output that are also a producer's trade (see producer_output).
_OUTPUT_VERBS = frozenset({"make", "produce", "generate", "yield", "supply", "provide"})


def has_result_complement(verb: Token) -> bool:
    """Whether ``verb`` takes a clause or predicate complement: "The storm *made* the
    roads impassable" is a change; "The Brock tannery *makes* leather" is a product."""
    return any(c.dep_ in ("ccomp", "xcomp", "oprd", "acomp") for c in verb.children)


def producer_output(verb: Token) -> bool:
    """Whether ``verb`` tells what a named thing habitually puts out: a profile, no cause.

    "The Penlan quarry *produces* granite", "The Keld reservoir *supplies* water to
    400,000 people" and "The Tilde steelworks *made* rails for the railway" are what the
    place does or did; "the mutation *produces* a faulty enzyme"
    and "Smoking *produces* cancer" are what one thing does to another. Read as a
    profile: a present or past main verb of output ("make" without a complement) whose
    subject holds a proper noun (the tagger's profile check shares this).
    """
    lemma = verb.lemma_.lower()
    if lemma not in _OUTPUT_VERBS or verb.tag_ not in ("VBZ", "VBP", "VBD"):
        return False
    if lemma == "make" and has_result_complement(verb):
        return False  # "The storm *made* the roads impassable": a change, no product
    subject = next((c for c in verb.children if c.dep_ == "nsubj"), None)
    return subject is not None and any(t.pos_ == "PROPN" for t in subject.subtree)


def _verb_cues(verb: Token) -> Iterator[_Candidate]:
    found = _cue_for_verb(verb)
    if found is None or producer_output(verb):
        return
    cue, obj = found
    if cue.relation == _REQUIRED_FOR and _is_agent(_first_child(verb, ("dobj",))) and (
        _first_child(verb, ("xcomp",)) is not None
    ):
        return  # "the agency will require the two firms to hold more": a duty laid on them
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
        if _is_agent(target):
            return  # "Major shareholders are required to disclose sales": a duty, no need
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
        # The parser attaches the "to" of "due to the strike" as pcomp as often as prep.
        if child.dep_ in ("prep", "pcomp") and child.lower_ in ("for", "to"):
            return _prep_object(child)
        # "X was due to hold a meeting" is a schedule, not a cause; "necessary to do Y" is a need.
        if child.dep_ == "xcomp" and child.pos_ == "VERB" and adj.lemma_.lower() != "due":
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
        if child.dep_ == "prep" and low in ("for", "on") and _names_the_reason(child):
            return "result", child
    return None


def _names_the_reason(prep: Token) -> bool:
    """``prep`` opens "for this reason" / "on that basis": a reason told just before."""
    obj = _prep_object(prep)
    return (
        obj is not None
        and obj.lemma_.lower() in _REASON_NOUNS
        and any(c.dep_ == "det" and c.lower_ in _EVENT_PRONOUNS for c in obj.children)
    )


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
    # "X. Therefore, Y." and "X. The village was therefore cut off.": a result adverb
    # anywhere before the main verb points back at the previous sentence.
    opens = cue_tok.i - sent.start <= 2 or (kind == "result" and cue_tok.i < verb.i)
    if antecedent is None and verb == sent.root and opens:
        antecedent = ctx.prev_effect or ctx.prev_clause
    if antecedent is None:
        return
    exclude = cue_ids | frozenset(
        t.i
        for child in verb.children
        if child.dep_ in ("ccomp", "conj", "parataxis") and child.i < cue_tok.i
        for t in child.subtree
    )
    effect = _result_clause(verb, exclude, ctx)
    if effect is not None:
        yield _Candidate(antecedent, effect, cue)


def _result_clause(verb: Token, exclude: frozenset[int], ctx: _Context) -> _Phrase | None:
    """The clause of ``verb`` as an effect; a pronoun subject is resolved from ``ctx``."""
    effect = _clause_phrase(verb, exclude)
    if effect is None:
        return None
    subj = _subject_of(verb)
    if subj is not None and _is_pronominal(subj):
        resolved = _resolve(subj, ctx)
        if resolved is None:
            return None
        effect = _Phrase(f"{resolved.text} {effect.text}", effect.tokens)
    return effect


def _anaphoric_result_cues(sent: Span, ctx: _Context) -> Iterator[_Candidate]:
    """A sentence that says the previous one's outcome in its main clause: "This meant
    (that) Y", "That means Y", "That is why Y", "The result was that Y". The cause is the
    previous sentence (its last effect, or its main clause); nothing without one."""
    root = sent.root
    antecedent = ctx.prev_effect or ctx.prev_clause
    subj = _subject_of(root)
    if antecedent is None or subj is None or root.pos_ not in _VERB_POS:
        return
    clause = next(
        (c for c in root.children if c.dep_ == "ccomp" and c.pos_ in _VERB_POS and c.i > root.i),
        None,
    )
    if clause is None:
        return
    lemma, subject = root.lemma_.lower(), subj.lower_
    means = lemma == "mean" and subject in ("this", "that", "it")
    why = (
        lemma == "be"
        and subject in ("this", "that")
        and any(c.lower_ == "why" for c in clause.children if c.i < clause.i)
    )
    result = (
        lemma == "be"
        and subj.lemma_.lower() in _RESULT_NOUNS
        # not "the result of the vote was that ...": that names its own cause
        and not any(c.dep_ == "prep" for c in subj.children if c.i > subj.i)
    )
    if not (means or why or result):
        return
    outside = frozenset(t.i for t in sent if t.i < clause.left_edge.i)
    exclude = outside | frozenset(c.i for c in clause.children if c.lower_ in ("that", "why"))
    effect = _result_clause(clause, exclude, ctx)
    if effect is not None:
        yield _Candidate(antecedent, effect, _Cue("leads to", _C))


def _preposition_cues(sent: Span) -> Iterator[_Candidate]:
    """Prepositional cues: "Y because of X", "due to X, Y", "after X, Y", and "Without X, Y"
    opening a sentence (X a noun phrase)."""
    words = [t.lower_ for t in sent]
    first = sent[0]
    if first.lower_ == "without" and first.dep_ == "prep":
        obj = _prep_object(first)
        if (
            obj is not None
            and obj.pos_ in ("NOUN", "PROPN")
            and obj.lemma_.lower() not in _WITHOUT_IDIOMS
            and _comma_after(obj, sent)  # fronted: "Without X, Y"
        ):
            yield from _prep_candidate([first], _Cue("without", _C))
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
            if _names_a_time(obj):
                continue
            if any(t.like_num for t in obj.subtree):
                continue  # "after 2019", "before 5 pm"
            yield from _prep_candidate([tok], _Cue("precedes", _T))
        if tok.dep_ == "prep" and tok.lower_ == "in":
            yield from _harm_in_event(tok)
        if tok.dep_ == "prep" and tok.lower_ == "from":
            yield from _left_by_event(tok)
        if tok.dep_ == "prep":
            yield from _legal_reason(tok)
            yield from _protest_target(tok)


# Punishments and charges, and the prepositions that name their offence: "arrested *for*
# looting", "convicted *of* fraud", "charged *with* murder".
_OFFENCE_PREPOSITIONS = {
    "for": frozenset({
        "arrest", "convict", "charge", "jail", "imprison", "sentence", "detain", "fine",
        "punish", "prosecute", "indict", "suspend", "expel", "ban", "book", "execute",
    }),
    "of": frozenset({"convict", "accuse", "suspect", "acquit"}),
    "with": frozenset({"charge"}),
}
# What a punishment is for that is no offence: "banned *for life*", "held *for questioning*".
_NOT_OFFENCES = frozenset({"life", "questioning", "interrogation", "trial", "investigation"})


def _legal_reason(prep: Token) -> Iterator[_Candidate]:
    """An offence and the punishment or charge it brought: "58 people were arrested *for*
    looting shops", "Keating was convicted in state court *of* helping to defraud
    investors", "Two men were charged *with* murder" (the looting, the fraud, the murder
    is the cause; CNC marks such pairs). Only a verb of punishing or charging
    (:data:`_OFFENCE_PREPOSITIONS`) with its own preposition, and an offence that is no
    time or amount ("jailed *for 16 months*"), no pronoun ("charged with him") and none
    of :data:`_NOT_OFFENCES` ("banned *for life*")."""
    verbs = _OFFENCE_PREPOSITIONS.get(prep.lower_)
    verb = prep.head
    if verbs is None or verb.pos_ not in _VERB_POS or verb.lemma_.lower() not in verbs:
        return
    obj = _prep_object(prep)
    if obj is None or obj.pos_ not in ("NOUN", "PROPN", "VERB") or _names_a_time(obj):
        return
    if obj.lemma_.lower() in _NOT_OFFENCES or obj.lower_ in _NOT_OFFENCES:
        return
    if any(t.like_num for t in obj.subtree):
        return
    yield from _prep_candidate([prep], _Cue("causes", _C))


# Protests, and the verbs of protesting, whose "against" names what they protest.
_PROTESTS = frozenset({
    "protest", "demonstrate", "demonstration", "rally", "strike", "march", "agitate",
    "agitation", "campaign", "riot", "boycott", "revolt", "rebel", "rebellion", "uprising",
    "walkout", "outcry", "backlash", "picket", "dharna", "bandh", "hartal", "sit-in",
})


def _protest_target(prep: Token) -> Iterator[_Candidate]:
    """A protest and what it is against: "2,000 protesters held demonstrations *against*
    the meeting", "workers went on strike *against* the new rules" (the meeting, the rules
    is the cause; CNC marks such pairs). Only a protest or a verb of protesting
    (:data:`_PROTESTS`) with its own "against", and a target that is a noun, not a
    pronoun ("rallied against them") or an amount."""
    if prep.lower_ != "against" or prep.head.lemma_.lower() not in _PROTESTS:
        return
    obj = _prep_object(prep)
    if obj is None or obj.pos_ not in ("NOUN", "PROPN") or obj.like_num:
        return
    yield from _prep_candidate([prep], _Cue("causes", _C))


def _harm_in_event(prep: Token) -> Iterator[_Candidate]:
    """A harm and the event that did it, joined by "in": "Three people were killed in a car
    crash", "five (were) missing in Saturday's gas blast" (the crash, the blast is the cause).

    Only harm predicates and harmful events (:data:`_HARM_PREDICATES`,
    :data:`_HARMFUL_EVENTS`) read a relation: "killed in Baghdad", "died in 2004" and
    "lost his house in the city" name where or when.
    """
    obj = _prep_object(prep)
    gov = prep.head
    if obj is None or obj.pos_ != "NOUN" or obj.lemma_.lower() not in _HARMFUL_EVENTS:
        return
    if gov.lemma_.lower() not in _HARM_PREDICATES and gov.lower_ not in _HARM_PREDICATES:
        return
    cue = _Cue("causes", _C)
    if gov.pos_ in _VERB_POS:
        yield from _prep_candidate([prep], cue)
        first = gov.head
        harmed_too = first.pos_ in _VERB_POS and first.lemma_.lower() in _HARM_PREDICATES
        if gov.dep_ == "conj" and harmed_too:
            # "32 miners were killed and 28 injured in an explosion": both by the explosion
            yield from _harmed_clause(obj, first, _subtree_ids(gov), prep, cue)
    elif gov.pos_ == "ADJ" and gov.dep_ == "amod" and gov.head.pos_ in ("NOUN", "NUM"):
        # "five missing in the blast": the parser hangs the adjective on the number
        toks = [gov.head, gov]
        yield _Candidate(obj, _Phrase(_render(toks), frozenset(t.i for t in toks)), cue)
    elif gov.pos_ == "ADJ" and gov.dep_ in ("acomp", "oprd") and gov.head.pos_ in _VERB_POS:
        yield from _harmed_clause(obj, gov.head, _subtree_ids(prep) | {prep.i}, prep, cue)


def _left_by_event(prep: Token) -> Iterator[_Candidate]:
    """A thing and the harmful event it came from: "smoke from the fire", "damage from the
    storm", "refugees from the war" (the fire, the storm, the war is the cause).

    Only a common noun coming "from" a harmful event (:data:`_HARMFUL_EVENTS`) reads a
    relation: "workers from the fire department" and "flights from Halden" do not.
    """
    obj = _prep_object(prep)
    thing = prep.head
    if obj is None or obj.pos_ != "NOUN" or obj.lemma_.lower() not in _HARMFUL_EVENTS:
        return
    if thing.pos_ != "NOUN" or any(c.dep_ == "compound" for c in obj.children if c.i > obj.i):
        return
    yield _Candidate(obj, thing, _Cue("causes", _C), exclude=frozenset({prep.i}))


def _harmed_clause(
    event: Token, verb: Token, exclude: frozenset[int], prep: Token, cue: _Cue
) -> Iterator[_Candidate]:
    """``event`` caused ``verb``'s clause, unless that clause has only a pronoun for a subject."""
    effect = _clause_phrase(verb, exclude)
    subj = _subject_of(verb)
    if effect is not None and not (subj is not None and _is_pronominal(subj)):
        yield _Candidate(event, effect, cue, exclude=frozenset({prep.i}))


def _comma_after(tok: Token, sent: Span) -> bool:
    """Whether a comma inside ``sent`` follows ``tok``'s whole subtree (a fronted phrase)."""
    after = tok.right_edge.i + 1
    return after < sent.end and sent.doc[after].text == ","


def _absolute_with_cues(sent: Span) -> Iterator[_Candidate]:
    """A sentence opened by "With" and a small clause of its own, up to a comma, giving
    the main clause's reason: "*With the pier unusable*, the ferry service was
    suspended", "*With prices rising*, consumers cut back". The small clause (a subject
    and an adjective or a verb) is the cause; "With his help, we finished early" has no
    such clause and reads nothing."""
    first = sent[0]
    if first.lower_ != "with" or len(sent) < 4:
        return
    if first.dep_ == "mark":  # "With the pier unusable": the predicate is an adverbial clause
        predicate, main = first.head, first.head.head
        if predicate.dep_ != "advcl":
            return
    elif first.dep_ == "prep":  # "With prices rising": the predicate is the preposition's
        predicate = next((c for c in first.children if c.dep_ == "pcomp"), None)
        main = first.head
    else:
        return
    if predicate is None or predicate.pos_ not in ("ADJ", "VERB") or main.pos_ not in _VERB_POS:
        return
    if not any(c.dep_ in ("nsubj", "nsubjpass") for c in predicate.children):
        return
    end = next((t.i for t in sent.doc[first.i + 1 : main.i] if t.text == ","), None)
    if end is None or end <= predicate.i:
        return
    toks = list(sent.doc[first.i + 1 : end])[:MAX_PHRASE_TOKENS]
    adjunct = frozenset(range(first.i, end + 1))
    effect = _clause_phrase(main, adjunct)
    subj = _subject_of(main)
    if effect is None or (subj is not None and _is_pronominal(subj)):
        return
    cause = _Phrase(_render(toks), frozenset(t.i for t in toks))
    yield _Candidate(cause, effect, _Cue("causes", _C), exclude=adjunct)


def _fronted_reason_cues(sent: Span) -> Iterator[_Candidate]:
    """A sentence opened by an adjunct giving the main clause's reason, up to a comma:
    "Unable to compete on price, the factory lost its orders" (the adjunct is the cause),
    "Hit by falling demand, the company cut jobs" (the participle's agent is)."""
    first = sent[0]
    main = first.head
    if first.dep_ != "advcl" or main.i <= first.i or main.pos_ not in _VERB_POS:
        return
    # The adjunct runs to the first comma before the clause's verb. It is read by position,
    # as the parser may hang its last word on that verb ("Unable to treat new cases
    # *safely*, the hospital turned away patients").
    end = next((t.i for t in sent.doc[first.right_edge.i + 1 : main.i] if t.text == ","), None)
    if end is None:
        return
    end -= 1
    adjunct = _subtree_ids(first) | frozenset(range(first.i, end + 1))
    cause: Token | _Phrase
    # The parser may take the capitalised first word for a name ("*Short* of staff, …").
    if first.tag_ in ("JJ", "NNP") and first.lower_ in _REASON_ADJECTIVES:
        toks = list(sent.doc[first.i : end + 1])[:MAX_PHRASE_TOKENS]
        cause = _Phrase(_render(toks), frozenset(t.i for t in toks))
        cue = _Cue("causes", _C)
    elif first.tag_ == "VBN" and first.lemma_.lower() in _AFFECTING_PARTICIPLES:
        agent = _first_child(first, ("agent",))
        obj = _prep_object(agent) if agent is not None else None
        if obj is None or obj.pos_ not in ("NOUN", "PROPN"):
            return
        cause = obj
        cue = _Cue(first.lower_, _C)
    else:
        return
    subj = _subject_of(main)
    if subj is not None and _is_pronominal(subj):
        return  # the clause would read "cut jobs" with no subject
    effect = _clause_phrase(main, adjunct | {end + 1})
    if effect is None:
        return
    yield _Candidate(cause, effect, cue, exclude=adjunct)


def _motive_cues(sent: Span) -> Iterator[_Candidate]:
    """An adjunct of a participle of motive, set off by a comma, gives the reason of the
    clause it is attached to: "Fearing accidents, Varo Motors recalled 40,000 cars" and
    "The airline cancelled 40 flights, citing safety concerns".

    The adjunct is read by position (the participle up to the next comma or the sentence
    end), because the small parser often mis-attaches it ("Fearing accidents" as a compound
    noun). The clause is the root verb's, without the adjunct; a clause whose subject is
    only a pronoun is left, as it would name no one.
    """
    words = [tok for tok in sent if not tok.is_space]
    root = sent.root
    if root.pos_ not in _VERB_POS or root.lemma_ in ("be", "have"):
        return  # "Facing the sea, the hotel has forty rooms": a state, not an act
    subj = _subject_of(root)
    if subj is not None and _is_pronominal(subj):
        return
    for k, tok in enumerate(words):
        if tok.lower_ not in _MOTIVE_PARTICIPLES:
            continue
        opens = k == 0
        if not opens and (words[k - 1].text != "," or root.i > tok.i):
            continue  # mid-sentence, the adjunct must follow its clause's verb and a comma
        end = next((w.i for w in words[k + 1 :] if w.text in (",", ";")), sent.end)
        if opens and (end >= sent.end or root.i < end):
            continue  # an opening adjunct ends at a comma before the clause's verb
        adjunct = [t for t in sent.doc[tok.i : end] if not t.is_punct][:MAX_PHRASE_TOKENS]
        if len(adjunct) < 2:
            continue
        skipped = frozenset(range(tok.i - (0 if opens else 1), end + 1))
        effect = _clause_phrase(root, skipped)
        if effect is None:
            continue
        cause = _Phrase(_render(adjunct), frozenset(t.i for t in adjunct))
        yield _Candidate(cause, effect, _Cue("causes", _C), exclude=frozenset({tok.i}))


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
