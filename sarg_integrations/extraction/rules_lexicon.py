"""The cue lexicon of the rule extractor: which words signal which relation.

The tables that :mod:`~sarg_integrations.extraction.rules_cues` matches against a
dependency parse (cue verbs, prepositions, adjectives, nouns, subordinators and result
adverbs, each mapped to a canonical relation, its type and its argument order) and the
word lists that :mod:`~sarg_integrations.extraction.rules_phrases` uses to trim and
reject node phrases. Data only; no spaCy import.
"""

from __future__ import annotations

from dataclasses import dataclass

from sarg_integrations.schema import RelationType

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


def denied_reading(rtype: RelationType) -> _Cue | None:
    """What a cue of type ``rtype`` reads when the text denies it (both extractors): "did
    not allow X" prevented X; a denied relation of any other type ("did not cause") is
    none."""
    return _Cue("prevents", _PREV) if rtype is _E else None


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
    # The absolute construction "With the port closed, ships were diverted": a clause
    # (a subject and its participle) as the circumstance that brings the main clause about.
    "with": (_Cue("causes", _C), True),
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

_RESULT_ADVERBS = frozenset(
    {"therefore", "thus", "thereby", "hence", "consequently", "accordingly"}
)
_RESULT_NOUN_ADVERBIALS = frozenset({"result", "consequence"})  # "as a result, ..."
_REASON_NOUNS = frozenset({"reason", "basis", "ground"})  # "for this reason, ..."
_MODAL_OBLIGATION = frozenset({"must", "should"})

_NOUN_POS = frozenset({"NOUN", "PROPN", "NUM", "ADJ", "X", "SYM"})
_VERB_POS = frozenset({"VERB", "AUX"})
_SUBJ_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass"})
_OBJ_DEPS = frozenset({"dobj", "attr", "oprd"})
_LEFT_MODS = frozenset(
    {"amod", "compound", "nummod", "nmod", "poss", "quantmod", "npadvmod", "advmod"}
)
# "by" names who did an action named by a noun ("a strike *by* dock workers").
_NP_PREPS = frozenset(
    {"of", "in", "on", "at", "for", "to", "from", "with", "between", "within", "by"}
)
# A verb's complement right after its object that belongs to the object ("a sell-off in
# tech stocks"); after a passive's agent, a source too ("remittances from Filipinos").
_OBJECT_PREPS = frozenset({"of", "in", "among", "for", "within"})
_AGENT_PREPS = _OBJECT_PREPS | {"from"}
# spaCy entity types of a place ("lead a force to *Albania*"), and of an address, which
# adds organisations ("the beds at *Dunmore General Hospital*").
_PLACE_ENTS = frozenset({"GPE", "LOC", "FAC"})
_ADDRESS_ENTS = _PLACE_ENTS | {"ORG"}
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
     "citizen", "militant", "soldier", "troop", "rebel", "agitator", "shareholder",
     "investor", "retiree", "taxpayer", "individual", "customer", "consumer", "employer"}
)  # fmt: skip
_HUMAN_ENTS = frozenset({"PERSON", "NORP", "ORG"})
# "Three people were killed *in* a car crash": a harm stated with "in" and the event that
# did it. The predicates (verb lemmas and adjectives) that say someone or something came
# to harm, and the head nouns of events that harm; "killed in Baghdad", "in 2004" or "lost
# his house in the city" name a place or a time instead and read no relation.
_HARM_PREDICATES = frozenset(
    "kill die injure wound hurt maim destroy damage flatten lose strand displace trap "
    "bury drown burn perish collapse dead missing injured wounded homeless trapped".split()
)
_HARMFUL_EVENTS = frozenset(
    "accident attack avalanche battle blast blaze bombardment bombing clash collision "
    "crash cyclone derailment disaster earthquake epidemic eruption explosion fighting "
    "fire flood flooding hurricane landslide mudslide outbreak quake raid riot sinking "
    "shelling shooting stampede storm tornado tsunami typhoon violence war wildfire".split()
)
_TIME_NOUNS = frozenset(
    {"year", "month", "week", "day", "decade", "hour", "minute", "time", "while", "period"}
    # Seasons and parts of the day or week: "banned swimming *for the whole summer*" is
    # how long, not why ("fall" is left out: "the fall of the regime").
    | {"summer", "winter", "spring", "autumn", "season", "night", "weekend", "morning",
       "evening", "afternoon", "fortnight", "century"}
)
# An amount added to or taken from something names little alone: "added months to
# waiting lists", "added 2 percent to costs".
_MEASURE_NOUNS = _TIME_NOUNS - {"time", "while", "period"} | {"percent", "point", "cent"}
# "Without X, Y" opening a sentence: the lack of X brings Y about ("Without the ferry, the
# hotels received fewer visitors"), except in these set phrases ("Without warning, ...").
_WITHOUT_IDIOMS = frozenset(
    {"doubt", "question", "exception", "warning", "hesitation", "delay", "fail", "end"}
)
# A sentence opened by an adjunct that gives the main clause's reason: "*Unable* to compete
# on price, the factory lost its orders", "*Short* of deliveries, the chain ran out", or a
# participle of affecting with its agent: "*Hit* by falling demand, the company cut jobs"
# ("Founded by X, …" or "Written by X, …" name a maker, not a cause, so they are not here).
_REASON_ADJECTIVES = frozenset({"unable", "short"})
# Participles naming what moved someone to act, as a reason adjunct set off by a comma:
# "*Fearing* accidents, the maker recalled the cars", "…, *citing* safety concerns".
# Word forms, not lemmas: the small parser often tags "Fearing X" as a compound noun.
_MOTIVE_PARTICIPLES = frozenset(
    {"fearing", "facing", "citing", "lacking", "expecting", "anticipating", "suspecting",
     "sensing", "needing", "worrying"}
)
_AFFECTING_PARTICIPLES = frozenset(
    {"hit", "hurt", "hamper", "boost", "buoy", "drive", "prompt", "spur", "weaken", "batter",
     "fuel", "squeeze", "cripple", "plague", "force", "frighten", "alarm", "anger", "stun",
     "shake", "rattle", "overwhelm", "swamp", "burden", "strain", "encourage", "embolden"}
)
# Heads that make a phrase useless as a graph node.
_EMPTY_HEADS = frozenset({"one", "ones", "thing", "things", "lot", "part", "kind", "way"})
