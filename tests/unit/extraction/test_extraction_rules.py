"""Tests of the rule-based reasoning-triple extractor."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sarg_integrations.errors import ConfigError
from sarg_integrations.extraction import RuleBasedExtractor, TripleExtractor
from sarg_integrations.schema import RelationType, SourceDocument, Triple

R = RelationType
REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "sarg_integrations" / "data" / "demo_corpus.jsonl"


# ------------------------------------------------------------------ no spaCy needed


def test_construction_is_cheap_and_lazy() -> None:
    code = (
        "import sys\n"
        "from sarg_integrations.extraction import RuleBasedExtractor\n"
        "RuleBasedExtractor()\n"
        "assert 'spacy' not in sys.modules, 'spaCy was imported eagerly'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_invalid_schema_names_argument_value_and_choices() -> None:
    with pytest.raises(ConfigError) as info:
        RuleBasedExtractor(schema="openie")
    message = str(info.value)
    assert "schema='openie'" in message
    assert "reasoning" in message and "generic_spo" in message
    assert info.value.field == "schema"


@pytest.mark.parametrize("bad", [0, -5, 10, "1000", True])
def test_invalid_max_chars(bad: object) -> None:
    with pytest.raises(ConfigError, match="max_chars_per_document"):
        RuleBasedExtractor(max_chars_per_document=bad)  # type: ignore[arg-type]


def test_injected_object_without_parser_is_rejected() -> None:
    class NoParser:
        pipe_names = ("tagger",)

        def pipe(self, texts):  # pragma: no cover - never called
            return texts

    with pytest.raises(ConfigError, match="parser"):
        RuleBasedExtractor(nlp=NoParser())


def test_empty_and_whitespace_documents_give_no_triples_without_loading() -> None:
    extractor = RuleBasedExtractor()
    assert extractor.extract(SourceDocument("e", "")) == []
    assert extractor.extract_many([SourceDocument("a", "  \n\t "), SourceDocument("b", "")]) == [
        [],
        [],
    ]
    assert extractor._nlp is None  # nothing to parse, nothing loaded


def test_satisfies_protocol() -> None:
    assert isinstance(RuleBasedExtractor(), TripleExtractor)


def test_chunking_is_sentence_bounded() -> None:
    from sarg_integrations.extraction.rules import _chunk_spans

    text = "Rain causes floods. " * 50
    spans = _chunk_spans(text, 100)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert all(e - s <= 100 for s, e in spans)
    assert all(text[s:e].endswith(". ") for s, e in spans[:-1])
    # No sentence end at all: cut at whitespace, never lose characters.
    words = "word " * 100
    spans = _chunk_spans(words, 120)
    assert "".join(words[s:e] for s, e in spans) == words


# ------------------------------------------------------------------ spaCy-backed


@pytest.fixture(scope="module")
def extractor() -> RuleBasedExtractor:
    return RuleBasedExtractor()


def triples_of(extractor: RuleBasedExtractor, text: str) -> set[tuple[str, RelationType, str]]:
    out = extractor.extract(SourceDocument("d", text))
    return {(t.cause.lower(), t.relation_type, t.effect.lower()) for t in out}


CASES = [
    # causal verbs, active
    ("Smoking causes lung cancer.", ("smoking", R.CAUSAL, "lung cancer")),
    ("Persistent inflation led to interest rate hikes.",
     ("persistent inflation", R.CAUSAL, "interest rate hikes")),
    ("The sell-off in technology stocks resulted in margin calls.",
     ("sell-off in technology stocks", R.CAUSAL, "margin calls")),
    ("The mutation gives rise to Gaucher cells.", ("mutation", R.CAUSAL, "gaucher cells")),
    ("Higher oil prices triggered a recession.", ("higher oil prices", R.CAUSAL, "recession")),
    ("Chronic stress contributes to heart disease.",
     ("chronic stress", R.CAUSAL, "heart disease")),
    # passive / reversed: the direction is swapped
    ("Gaucher disease is caused by mutations in the GBA1 gene.",
     ("mutations in gba1 gene", R.CAUSAL, "gaucher disease")),
    ("The outage was triggered by a software bug.", ("software bug", R.CAUSAL, "outage")),
    ("The drought was due to low rainfall.", ("low rainfall", R.CAUSAL, "drought")),
    ("The delay was due to the strike.", ("strike", R.CAUSAL, "delay")),  # "to" as pcomp
    ("Anemia results from blood loss.", ("blood loss", R.CAUSAL, "anemia")),
    # nominal
    ("Smoking is a major cause of lung cancer.", ("smoking", R.CAUSAL, "lung cancer")),
    ("The cause of the outage was a software bug.", ("software bug", R.CAUSAL, "outage")),
    ("Fatigue is a symptom of anemia.", ("anemia", R.CAUSAL, "fatigue")),
    # connectives
    ("Stocks fell because of higher yields.", ("higher yields", R.CAUSAL, "stocks fell")),
    ("Stocks fell because investors feared a recession.",
     ("investors feared recession", R.CAUSAL, "stocks fell")),
    ("Due to the storm, the flight was cancelled.", ("storm", R.CAUSAL, "flight cancelled")),
    ("Inflation rose, so the bank raised rates.",
     ("inflation rose", R.CAUSAL, "bank raised rates")),
    ("Inflation rose; therefore, the bank raised rates.",
     ("inflation rose", R.CAUSAL, "bank raised rates")),
    ("He married Elizabeth in 1486, thereby uniting the houses of York and Lancaster.",
     ("married elizabeth", R.CAUSAL, "uniting houses of york")),
    ("Heavy rain, which causes flooding, fell overnight.",
     ("heavy rain", R.CAUSAL, "flooding")),
    # "Without X, Y" opening a sentence: the lack of X brings Y about
    ("Without heating oil, the boilers at the school stopped working.",
     ("heating oil", R.CAUSAL, "boilers at school stopped working")),
    # the absolute construction: a clause with its own subject after "with"
    ("With the port closed, container ships were diverted to distant harbours.",
     ("port closed", R.CAUSAL, "container ships diverted to distant harbours")),
    # a sentence opened by its reason: an adjective of lack, or a participle of affecting
    ("Unable to compete on price, the factory lost its largest orders.",
     ("unable to compete on price", R.CAUSAL, "factory lost largest orders")),
    ("Unable to pay its debts, the airline filed for bankruptcy.",
     ("unable to pay its debts", R.CAUSAL, "airline filed for bankruptcy")),
    # read by position up to the comma: the parser hangs "safely" on the main verb
    ("Unable to treat new cases safely, the hospital turned away patients.",
     ("unable to treat new cases safely", R.CAUSAL, "hospital turned away patients")),
    ("Unable to pay wages, rent or bills, the firm closed its doors.",
     ("unable to pay wages, rent or bills", R.CAUSAL, "firm closed doors")),
    ("Hit by falling demand, the company cut 400 jobs.",
     ("demand", R.CAUSAL, "company cut 400 jobs")),
    # a participle of motive set off by a comma, before or after its clause
    ("Fearing accidents, Varo Motors recalled 40,000 cars built with the sensors.",
     ("fearing accidents", R.CAUSAL, "varo motors recalled 40,000 cars")),
    ("Facing mounting losses, the firm closed two plants.",
     ("facing mounting losses", R.CAUSAL, "firm closed two plants")),
    ("The airline cancelled 40 flights, citing safety concerns.",
     ("citing safety concerns", R.CAUSAL, "airline cancelled 40 flights")),
    # procedural / requirement: prerequisite -> dependent
    ("Insulin production requires beta cells.",
     ("beta cells", R.PROCEDURAL, "insulin production")),
    ("Insulin production depends on beta cells.",
     ("beta cells", R.PROCEDURAL, "insulin production")),
    ("Insulin is needed for glucose uptake.", ("insulin", R.PROCEDURAL, "glucose uptake")),
    ("Vitamin D is essential for bone growth.",
     ("vitamin d", R.PROCEDURAL, "bone growth")),
    # conditional
    ("If the patient stops the drug, the symptoms return.",
     ("patient stops drug", R.CONDITIONAL, "symptoms return")),
    ("When inflation rises, the central bank raises interest rates.",
     ("inflation rises", R.CONDITIONAL, "central bank raises interest rates")),
    # temporal
    ("The earthquake was followed by a tsunami.", ("earthquake", R.TEMPORAL, "tsunami")),
    ("After the merger closed, the company cut jobs.",
     ("merger closed", R.TEMPORAL, "company cut jobs")),
    ("The bank raised rates and then stocks fell.",
     ("bank raised rates", R.TEMPORAL, "stocks fell")),
    # enabling / preventing
    ("The vaccine prevents infection.", ("vaccine", R.PREVENTING, "infection")),
    ("Exercise reduces blood pressure.", ("exercise", R.PREVENTING, "blood pressure")),
    ("Aspirin inhibits platelet aggregation.", ("aspirin", R.PREVENTING, "platelet aggregation")),
    ("Broadband access enables remote work.", ("broadband access", R.ENABLING, "remote work")),
    # spatial only with accumulation verbs
    ("Gaucher cells accumulate in the spleen.", ("gaucher cells", R.SPATIAL, "spleen")),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:40] for c in CASES])
def test_cue_families(extractor: RuleBasedExtractor, text: str, expected: tuple) -> None:
    assert expected in triples_of(extractor, text)


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "The drought did not cause the fire.",
        "The storm was not responsible for the outage.",
        "The outage was not caused by the storm.",
        "The new law never led to lower prices.",
        "Rain never causes floods here.",
        "The delay was not due to the strike.",
    ],
)
def test_a_denied_relation_is_no_triple(extractor: RuleBasedExtractor, text: str) -> None:
    # The cues matched the verb and read past the negation: the triple said what the
    # text denies ("drought causes fire").
    assert triples_of(extractor, text) == set()


@pytest.mark.slow
def test_a_named_producers_output_is_a_profile_not_a_cause(extractor: RuleBasedExtractor) -> None:
    # "produces" is a cue verb; the Penlan quarry's granite then carried a story's chain.
    assert triples_of(extractor, "The Penlan quarry produces granite for roads and walls.") == set()
    assert triples_of(extractor, "Saudi Arabia produces ten million barrels of oil a day.") == set()
    # What one thing does to another still reads one.
    assert ("smoking", R.CAUSAL, "cancer") in triples_of(extractor, "Smoking produces cancer.")


@pytest.mark.slow
def test_a_duty_is_no_requirement(extractor: RuleBasedExtractor) -> None:
    # FinCausal: "shareholders --is required for--> disclose sales" is a duty of people.
    duty = "Major shareholders are required to disclose their sales with the SEC."
    assert triples_of(extractor, duty) == set()
    laid = "The agency will require the two firms to hold more capital."
    assert triples_of(extractor, laid) == set()
    # "Short of staff, …": the parser takes the capitalised first word for a name.
    short = "Short of staff, the town library cut its opening hours."
    assert any(c == "short of staff" for c, _, _ in triples_of(extractor, short))
    # A thing needed for another still reads one.
    assert ("beta cells", R.PROCEDURAL, "produce insulin") in triples_of(
        extractor, "Beta cells are needed to produce insulin."
    )


@pytest.mark.slow
def test_an_absolute_with_clause_gives_a_reason(extractor: RuleBasedExtractor) -> None:
    # A story's ferry document: "With the pier unusable, ..." read nothing.
    pier = "With the pier unusable, the ferry service was suspended until repairs are finished."
    assert ("pier unusable", R.CAUSAL, "ferry service suspended") in triples_of(extractor, pier)
    prices = triples_of(extractor, "With prices rising, consumers cut back on travel.")
    assert any(c == "prices rising" for c, _, _ in prices)
    # "With his help" has no clause of its own: help is no reason here.
    assert triples_of(extractor, "With his help, we finished early.") == set()


@pytest.mark.slow
def test_a_named_suppliers_output_is_a_profile(extractor: RuleBasedExtractor) -> None:
    # "The Keld reservoir supplies water" carried a story's chain ahead of its causes.
    assert triples_of(extractor, "The Keld reservoir supplies water to 400,000 people.") == set()


@pytest.mark.slow
def test_not_allowing_a_thing_prevents_it(extractor: RuleBasedExtractor) -> None:
    # A denied enabling relation is a prevention (it read "Spain allows ...").
    text = "Spain remained neutral and did not allow either side to use its territory."
    found = extractor.extract(SourceDocument("d", text))
    assert [(t.cause, t.relation, t.relation_type) for t in found] == [
        ("Spain", "prevents", RelationType.PREVENTING)
    ]


@pytest.mark.slow
def test_a_negated_effect_keeps_its_relation(extractor: RuleBasedExtractor) -> None:
    # The negation belongs to the effect's clause, not to the cue.
    assert triples_of(extractor, "Because the pump failed, the town did not have water.")
    assert ("smoking", RelationType.CAUSAL, "lung cancer") in triples_of(
        extractor, "Smoking causes lung cancer, which is not curable."
    )


@pytest.mark.slow
def test_leading_someone_to_a_place_is_not_a_cause(extractor: RuleBasedExtractor) -> None:
    text = "Italy prepares to lead a multinational force to Albania."
    assert not [t for t in extractor.extract(SourceDocument("d", text)) if t.relation == "leads to"]
    # Leading someone to an outcome, or leading to something in a place, still is.
    assert ("years of drought", RelationType.CAUSAL, "sell land") in triples_of(
        extractor, "Years of drought led the farmers to sell their land."
    )
    assert ("strike", RelationType.CAUSAL, "shortages in paris") in triples_of(
        extractor, "The strike led to shortages in Paris."
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "text", ["Without warning, the storm hit the coast.", "He left without saying goodbye."]
)
def test_without_is_a_cause_only_opening_a_sentence_and_not_in_set_phrases(
    extractor: RuleBasedExtractor, text: str
) -> None:
    found = extractor.extract(SourceDocument("d", text))
    assert not [t for t in found if t.relation == "without"], found


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "Founded by two brothers, the company makes shoes.",  # a maker, not a cause
        "Hit by falling demand, it cut 400 jobs.",  # the effect would have no subject
        "The factory, unable to compete, lost its orders.",  # not opening the sentence
    ],
)
def test_a_fronted_adjunct_is_a_reason_only_for_lack_or_affecting(
    extractor: RuleBasedExtractor, text: str
) -> None:
    assert triples_of(extractor, text) == set()


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "Speaking to reporters, the mayor said the roads were safe.",  # no motive
        "Facing the sea, the hotel has forty rooms.",  # a state, not an act
        "Fearing accidents, it recalled the cars.",  # the effect would name no one
        "The report lists the risks facing the industry.",  # no comma: not an adjunct
    ],
)
def test_a_participle_is_a_motive_only_for_motive_verbs_set_off_from_an_act(
    extractor: RuleBasedExtractor, text: str
) -> None:
    assert not [t for t in extractor.extract(SourceDocument("d", text))
                if t.cause.lower().split()[0] in ("speaking", "facing", "fearing")]


_BRIDGE = "The storm destroyed the main bridge over the river."


@pytest.mark.slow
@pytest.mark.parametrize(
    "follow",
    [
        "This meant that the village was cut off for a week.",
        "That means the village was cut off for a week.",
        "It meant the village was cut off for a week.",
        "That is why the village was cut off for a week.",
        "The result was that the village was cut off for a week.",
        "For this reason, the village was cut off for a week.",
        "On that basis, the village was cut off for a week.",
        "The village was therefore cut off for a week.",
    ],
)
def test_a_sentence_telling_the_previous_ones_outcome_links_to_it(
    extractor: RuleBasedExtractor, follow: str
) -> None:
    got = triples_of(extractor, f"{_BRIDGE} {follow}")
    assert ("storm destroyed main bridge", R.CAUSAL, "village cut off") in got


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        # No sentence before: nothing to point back at.
        "This meant that the village was cut off for a week.",
        "For this reason, the village was cut off for a week.",
        # The words without the construction.
        f"{_BRIDGE} The word means that the village is small.",
        f"{_BRIDGE} The result of the vote was that the mayor resigned.",
        f"{_BRIDGE} For a good reason, the village was cut off for a week.",
        f"{_BRIDGE} That is the village.",
    ],
)
def test_outcome_sentences_need_the_construction_and_a_sentence_before(
    extractor: RuleBasedExtractor, text: str
) -> None:
    found = triples_of(extractor, text)
    # Neither the sentence before as a cause nor the outcome read from nothing.
    assert not {t for t in found if "storm destroyed main bridge" in t or "village cut off" in t}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Three people were killed in a car crash on Friday.",
         ("car crash", "three people killed")),
        ("Two people died in a fire in Athens.", ("fire in athens", "two people died")),
        ("The roof collapsed in the storm.", ("storm", "roof collapsed")),
        ("Four policemen were wounded in clashes with protesters.",
         ("clashes with protesters", "four policemen wounded")),
        # The parser hangs "in" on the second conjunct; both harms came from the blast.
        ("32 miners were killed and 28 injured in a gas explosion.",
         ("gas explosion", "28 injured")),
        ("32 miners were killed and 28 injured in a gas explosion.",
         ("gas explosion", "32 miners killed")),
        # ... or on an adjective hanging on a number.
        ("Twenty miners were confirmed dead and five missing in the gas blast.",
         ("gas blast", "five missing")),
    ],
)
def test_a_harm_in_a_harmful_event_is_caused_by_it(
    extractor: RuleBasedExtractor, text: str, expected: tuple[str, str]
) -> None:
    got = {(c.lower(), e.lower()) for c, _, e in triples_of(extractor, text)}
    assert expected in got


OFFENCES = {
    # The tagger reads nothing in this ESTER sentence; its offence is the reason.
    "In nineteen ninety-one Charles Keating was convicted in state court of helping to "
    "defraud thousands of investors who bought high risk junk bonds sold by Keating's "
    "employees at Lincoln savings and loan.":
        ("helping to defraud thousands of investors", "charles keating convicted in state court"),
    "Two men have been charged with murder.": ("murder", "two men charged"),
    "The striker was suspended for doping.": ("doping", "striker suspended"),
    "Police arrested 58 people for looting shops.": ("looting shops", "police arrested 58 people"),
}


@pytest.mark.slow
def test_an_offence_is_the_reason_for_its_punishment(extractor: RuleBasedExtractor) -> None:
    read = {text: {(c.lower(), e.lower()) for c, _, e in triples_of(extractor, text)}
            for text in OFFENCES}
    missed = {text: read[text] for text, pair in OFFENCES.items() if pair not in read[text]}
    assert not missed


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "He was jailed for 16 months.",  # a term, not an offence
        "He was arrested for the second time.",
        "The company was charged with him.",  # a pronoun names no offence
        "She was accused by the press.",  # no offence named
        "The cyclist was banned for life.",
        "Three men were detained for questioning.",
        # A season or a part of the day is a term too.
        "Health officials banned swimming in the lake for the whole summer.",
        "The club was suspended for the season.",
    ],
)
def test_a_punishment_reads_no_offence_in_a_term_or_a_pronoun(
    extractor: RuleBasedExtractor, text: str
) -> None:
    assert triples_of(extractor, text) == set()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # CNC marks what a protest is against as its cause.
        ("The employees are agitating against the negative attitude of the state government.",
         ("negative attitude of state government", "employees agitating")),
        ("Uighur groups say the clashes are a desperate protest against religious oppression.",
         ("religious oppression", "desperate protest")),
        ("Protesters were rallying against cross-border traders.",
         ("cross-border traders", "protesters rallying")),
    ],
)
def test_what_a_protest_is_against_is_its_cause(
    extractor: RuleBasedExtractor, text: str, expected: tuple[str, str]
) -> None:
    got = {(c.lower(), e.lower()) for c, _, e in triples_of(extractor, text)}
    assert expected in got


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "The committee voted against the bill.",  # no protest
        "Fans rallied against them.",  # a pronoun names nothing
        "Workers went on strike against 2019.",  # an amount or a year
    ],
)
def test_against_reads_no_cause_without_a_protest_and_a_noun(
    extractor: RuleBasedExtractor, text: str
) -> None:
    assert triples_of(extractor, text) == set()


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "He was killed in Baghdad in 2004.",  # a place and a time, not events
        "Villagers were trapped in the rubble.",  # not an event
        "Police arrested him and searched the house in the raid.",  # no harm predicate
        "Thousands of people lived in the storm shelter.",  # no harm predicate, a compound
    ],
)
def test_in_reads_no_harm_without_a_harm_and_a_harmful_event(
    extractor: RuleBasedExtractor, text: str
) -> None:
    assert triples_of(extractor, text) == set()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Thick smoke from the fire drifted over the town.", ("fire", "thick smoke")),
        ("The damage from the storm closed the road.", ("storm", "damage")),
        ("Refugees from the war crossed the border.", ("war", "refugees")),
    ],
)
def test_a_thing_from_a_harmful_event_is_caused_by_it(
    extractor: RuleBasedExtractor, text: str, expected: tuple[str, str]
) -> None:
    got = {(c.lower(), e.lower()) for c, _, e in triples_of(extractor, text)}
    assert expected in got, got


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "Workers from the fire department arrived.",  # a compound: no fire, a department
        "Flights from Halden were delayed.",  # a place
        "Smoke from the chimney drifted over the town.",  # not a harmful event
    ],
)
def test_from_reads_no_cause_without_a_harmful_event(
    extractor: RuleBasedExtractor, text: str
) -> None:
    assert not any(r == "causes" for _, r, _ in triples_of(extractor, text))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A verb of saying names nothing: the clause it reports is the event.
        ("Shares rose after analysts said the merger would cut costs.",
         ("merger cut costs", R.TEMPORAL, "shares rose")),
        # Its "it" is the reporter ...
        ("Ratners raised its price after another concern said it would be prepared to "
         "outbid the initial offer.",
         ("concern prepared to outbid initial offer", R.TEMPORAL, "ratners raised price")),
        ("The plant closed after the company decided it would move production abroad.",
         ("company move production", R.TEMPORAL, "plant closed")),
        # ... but "he" is seldom the police: the pronoun is dropped, as before.
        ("Prices fell after police said he had fled the country.",
         ("fled country", R.TEMPORAL, "prices fell")),
    ],
)
def test_a_reported_clause_names_the_event(
    extractor: RuleBasedExtractor, text: str, expected: tuple[str, RelationType, str]
) -> None:
    assert expected in triples_of(extractor, text)


@pytest.mark.slow
def test_due_to_before_a_verb_is_a_schedule(extractor: RuleBasedExtractor) -> None:
    assert triples_of(extractor, "The minister is due to visit Paris next week.") == set()


@pytest.mark.slow
def test_passive_swaps_direction(extractor: RuleBasedExtractor) -> None:
    active = triples_of(extractor, "A software bug caused the outage.")
    passive = triples_of(extractor, "The outage was caused by a software bug.")
    assert active == passive == {("software bug", R.CAUSAL, "outage")}
    [triple] = extractor.extract(SourceDocument("d", "The outage was caused by a software bug."))
    assert triple.relation == "causes"


@pytest.mark.slow
def test_conjunctions_are_split(extractor: RuleBasedExtractor) -> None:
    got = triples_of(extractor, "The mutation causes anemia, splenomegaly and bone pain.")
    assert got == {
        ("mutation", R.CAUSAL, "anemia"),
        ("mutation", R.CAUSAL, "splenomegaly"),
        ("mutation", R.CAUSAL, "bone pain"),
    }


@pytest.mark.slow
def test_pronoun_subject_resolved_from_previous_sentence(extractor: RuleBasedExtractor) -> None:
    got = triples_of(extractor, "The drug works well. It blocks the receptor.")
    assert ("drug", R.PREVENTING, "receptor") in got
    # A pronoun with no antecedent drops the triple.
    assert triples_of(extractor, "He caused the accident.") == set()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "spo"),
    [
        ("Apple is a company.", ("apple", "is", "company")),
        ("The patient has a fever.", ("patient", "has", "fever")),
        ("Obama was born in Hawaii.", ("obama", "is born in", "hawaii")),
    ],
)
def test_attributive_only_in_generic_spo(
    extractor: RuleBasedExtractor, text: str, spo: tuple[str, str, str]
) -> None:
    assert extractor.extract(SourceDocument("d", text)) == []
    generic = RuleBasedExtractor(schema="generic_spo", nlp=extractor.nlp)
    got = generic.extract(SourceDocument("d", text))
    assert {(t.cause.lower(), t.relation, t.effect.lower()) for t in got} == {spo}
    assert all(t.relation_type is R.GENERIC for t in got)


@pytest.mark.slow
def test_provenance_and_span_round_trip(extractor: RuleBasedExtractor) -> None:
    text = (
        "Intro line with no cue.  Mutations in the GBA1 gene cause enzyme deficiency.\n\n"
        "Nothing here. Enzyme deficiency leads to lipid accumulation."
    )
    doc = SourceDocument("doc-7", text)
    triples = extractor.extract(doc)
    assert len(triples) == 2
    for t in triples:
        assert t.document_id == "doc-7"
        assert t.sentence_span is not None
        start, end = t.sentence_span
        assert text[start:end] == t.sentence
        assert t.cause.lower().split()[0] in t.sentence.lower()


@pytest.mark.slow
def test_sentence_initial_capitals_are_folded_but_names_kept(extractor: RuleBasedExtractor) -> None:
    doc = SourceDocument(
        "d",
        "Persistent inflation leads to rate hikes. Gaucher cells cause splenomegaly. "
        "Enzyme loss gives rise to Gaucher cells.",
    )
    found = {(t.cause, t.effect) for t in extractor.extract(doc)}
    assert ("persistent inflation", "rate hikes") in found
    # "Gaucher" is capitalised mid-sentence too, so it is a name, not a sentence capital.
    assert ("Gaucher cells", "splenomegaly") in found


@pytest.mark.slow
def test_no_duplicates_within_document(extractor: RuleBasedExtractor) -> None:
    text = "Smoking causes lung cancer. Smoking causes lung cancer. Smoking causes lung cancer."
    triples = extractor.extract(SourceDocument("d", text))
    assert len(triples) == 1
    keys = [(t.cause, t.relation, t.effect) for t in triples]
    assert len(keys) == len(set(keys))


@pytest.mark.slow
def test_long_document_is_chunked_with_correct_spans(extractor: RuleBasedExtractor) -> None:
    sentences = [f"Factor {i} causes outcome {i}. The sky is blue today. " for i in range(5600)]
    text = "".join(sentences)
    assert len(text) > 300_000
    small = RuleBasedExtractor(nlp=extractor.nlp, max_chars_per_document=80_000)
    triples = small.extract(SourceDocument("big", text))
    # The small parser misreads some of these synthetic sentences; most must survive.
    assert len(triples) > 0.6 * 5600
    assert all(t.relation == "causes" for t in triples)
    for t in triples:
        start, end = t.sentence_span  # type: ignore[misc]
        assert text[start:end] == t.sentence
        assert t.cause.lower().startswith("factor") and t.effect.startswith("outcome")
        assert t.cause.lower() in t.sentence.lower() and t.effect in t.sentence
    # Every chunk was processed, the last one included.
    assert max(t.sentence_span[1] for t in triples) > len(text) - 200  # type: ignore[index]


@pytest.mark.slow
def test_extract_many_matches_extract(extractor: RuleBasedExtractor) -> None:
    docs = [
        SourceDocument("a", "Smoking causes lung cancer."),
        SourceDocument("b", ""),
        SourceDocument("c", "The vaccine prevents infection."),
    ]
    batched = extractor.extract_many(docs)
    assert batched == [extractor.extract(d) for d in docs]
    assert batched[1] == []


# ------------------------------------------------------------------ demo corpus


def normalise(phrase: str) -> str:
    """Lower-case, drop articles, strip plural -s: the phrase key used to join docs."""
    words = [w for w in re.findall(r"[\w-]+", phrase.lower()) if w not in ("the", "a", "an")]
    return " ".join(w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w
                    for w in words)  # fmt: skip


# The two reworded links that the pipeline's entity resolution joins (see demo_corpus.md);
# here the extractor is tested alone, so they are joined by hand.
REWORDED = {
    "deficiency of glucocerebrosidase": "glucocerebrosidase deficiency",
    "rate hike": "interest rate hike",
}


def demo_graph(extractor: RuleBasedExtractor):  # type: ignore[no-untyped-def]
    import networkx as nx

    docs = [
        SourceDocument(rec["id"], rec["text"])
        for rec in map(json.loads, DEMO.read_text(encoding="utf-8").splitlines())
    ]
    graph = nx.DiGraph()
    triples: list[Triple] = [t for ts in extractor.extract_many(docs) for t in ts]
    for t in triples:
        cause, effect = (normalise(p) for p in (t.cause, t.effect))
        graph.add_edge(REWORDED.get(cause, cause), REWORDED.get(effect, effect), doc=t.document_id)
    return graph, triples, docs


def test_demo_corpus_file_is_well_formed() -> None:
    records = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]
    assert 6 <= len(records) <= 10
    assert len({r["id"] for r in records}) == len(records)
    assert all(set(r) >= {"id", "title", "text"} and r["text"].strip() for r in records)


@pytest.mark.slow
@pytest.mark.parametrize(
    "chain",
    [
        [
            "mutation in gba1 gene",
            "glucocerebrosidase deficiency",
            "glucocerebroside accumulation",
            "gaucher cell",
            "splenomegaly",
        ],
        [
            "persistent inflation",
            "interest rate hike",
            "rising bond yield",
            "fall in technology valuation",
            "sell-off in technology stock",
        ],
    ],
    ids=["gaucher-forward", "market-backward"],
)
def test_demo_corpus_yields_multi_hop_chain(
    extractor: RuleBasedExtractor, chain: list[str]
) -> None:
    graph, _, _ = demo_graph(extractor)
    for cause, effect in itertools.pairwise(chain):
        assert graph.has_edge(cause, effect), f"missing edge {cause!r} -> {effect!r}"
    # Each hop comes from a different document, so the chain spans documents.
    docs = {graph.edges[c, e]["doc"] for c, e in itertools.pairwise(chain)}
    assert len(docs) >= 3
    assert len(chain) - 1 >= 3


@pytest.mark.slow
def test_demo_corpus_distractors_make_no_edges(extractor: RuleBasedExtractor) -> None:
    graph, triples, _ = demo_graph(extractor)
    banned = ("1998", "ohio", "austin", "chromosome", "exon", "1882", "branches", "headquartered")
    for t in triples:
        text = f"{t.cause} {t.relation} {t.effect}".lower()
        assert not any(b in text for b in banned), t
    # Sparse: about one edge per node, as the paper's schema intends.
    assert graph.number_of_edges() <= 1.5 * graph.number_of_nodes()


# ------------------------------------------------------------------ shared data


@pytest.mark.slow
@pytest.mark.shared_data
def test_benchmark_runs_on_cnc_dev_sample(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "bench_extraction.py"),
            "--datasets",
            "cnc_dev",
            "--limit",
            "40",
            "--extractors",
            "rules",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**__import__("os").environ, "SARG_SHARED_DATA": str(shared_data)},
        check=True,
    )
    assert "| rules | cnc_dev |" in result.stdout
    [row] = json.loads(out.read_text())
    assert row["sentences"] == 40
    assert row["predicted"] > 0
    assert row["relaxed_precision"] > 0.5
