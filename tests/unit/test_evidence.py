"""Bridge-guided evidence selection: topics, mention links, greedy picking, the pipeline option."""

from __future__ import annotations

import itertools
import json
import random
import re

import pytest
from fakes import (
    FixedKeyphrases,
    HashingEmbedder,
    NoProfiles,
    PastTenseWords,
    PatternExtractor,
    ProfileWords,
)

from sarg_integrations import CueWordDirectionClassifier, SARGConfig, SARGPipeline, SourceDocument
from sarg_integrations._text import count_tokens
from sarg_integrations.errors import ConfigError, InputError
from sarg_integrations.evidence import (
    CHAIN_ANCHOR_ENTRY_MATCH,
    COMPARES_NAMED_THINGS,
    COMPARES_RELATED_THINGS,
    EVENT_SENTENCE_CHARS,
    EVENT_SENTENCES_READ,
    NO_ANCHORED_CHAINS,
    NO_EVENT_CHAINS,
    WEAK_ENTRY_MATCH,
    anchored_chains,
    asked_event_evidence,
    asked_event_story_evidence,
    asks_for_a_causal_link,
    asks_general_effects,
    asks_to_compare,
    asks_what_happened,
    asks_what_may_follow,
    worded_direction,
    asks_why_of_a_state,
    chains_told_as_events,
    compares_related_things,
    compile_evidence,
    continued_evidence,
    entry_evidence,
    event_documents,
    fill_evidence,
    linked_evidence,
    onward_evidence,
    restated_entry_similarity,
    source_evidence,
    story_years,
    without_what_came_after,
)
from sarg_integrations.links import _STOP as STOP
from sarg_integrations.links import (
    BRIDGE_MAX_MENTIONS,
    PresentTenseProfileReader,
    antecedent_documents,
    bridge_guided_selection,
    bridge_links,
    continues_earlier_text,
    dated_as_history,
    dated_within,
    document_topic,
    documents_linked_by_triples,
    documents_stating_open_causes,
    event_words,
    names_event,
    names_same_event,
    node_words,
    restates_asked_event,
    restates_key_phrase,
    states_in_present,
    states_profile,
    tells_another_event,
    tells_dated_event,
    tells_origin_of,
    tells_past_event,
    tells_what_came_of,
    told_after_asked_event,
    tells_what_followed,
    years_named,
)
from sarg_integrations.prompting import render_evidence
from sarg_integrations.schema import (
    ChainHop,
    Direction,
    DirectionPrediction,
    EntryNode,
    EvidencePassage,
    ReasoningChain,
    RelationType,
    Triple,
)

# ----------------------------------------------------------------------------- topics


@pytest.mark.parametrize(
    ("text", "metadata", "topic"),
    [
        ("Big Stone Gap is a 2014 film.", {"title": "Big Stone Gap (film)"}, "Big Stone Gap"),
        ("anything", {"title": "Winner (band)"}, "Winner"),
        ("anything", {"title": "(1999)"}, "(1999)"),  # nothing left after the strip: keep it
        ("Adriana Trigiani is an Italian American author.", {}, "Adriana Trigiani"),
        ("The Hork-Bajir Chronicles is the second companion book.", {}, "Hork-Bajir Chronicles"),
        ("Winner (Hangul: 위너), often stylized as WINNER, is a group.", {}, "Winner"),
        ("Eenasul Fateh, also known as Aladin, is a consultant.", {}, "Eenasul Fateh"),
        ("heavy rain causes floods.", {}, None),  # no capitalised subject
        ("It was a dark night.", {}, None),  # "It" is too short to be a topic
        ("Rain causes floods.", {}, None),  # no copula after the capitalised words
        ("A B C D E F G H I J is long.", {}, None),  # ten words: not a name
    ],
)
def test_document_topic(text, metadata, topic):
    assert document_topic(SourceDocument("d", text, metadata)) == topic


def test_a_title_that_is_not_a_string_is_ignored():
    doc = SourceDocument("d", "Adriana Trigiani is an author.", {"title": 42})
    assert document_topic(doc) == "Adriana Trigiani"


# ----------------------------------------------------------------------------- links

WORDS = ["Alpha", "Beta", "Gamma", "Delta", "rain", "flood", "of", "the", "Beta Gamma"]


def _brute_force_links(docs, topics, max_mentions=None):
    links = {d.id: set() for d in docs}
    for b in docs:
        topic = topics.get(b.id)
        mentions = [
            a for a in docs
            if a is not b and topic and re.search(rf"(?<!\w){re.escape(topic)}(?!\w)", a.text)
        ]
        if max_mentions is None or len(mentions) <= max_mentions:
            for a in mentions:
                links[a.id].add(b.id)
                links[b.id].add(a.id)
    return links


@pytest.mark.parametrize("seed", range(25))
def test_links_match_a_brute_force_scan(seed):
    rng = random.Random(seed)
    docs = [
        SourceDocument(f"d{i}", " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))))
        for i in range(rng.randint(1, 8))
    ]
    topics = {d.id: rng.choice([None, "Alpha", "Beta Gamma", "Delta", "flood"]) for d in docs}
    limit = rng.choice([0, 1, 2, 3])
    assert bridge_links(docs, topics, max_mentions=None) == _brute_force_links(docs, topics)
    assert bridge_links(docs, topics, max_mentions=limit) == _brute_force_links(
        docs, topics, limit
    )
    assert bridge_links(docs, topics) == _brute_force_links(docs, topics, BRIDGE_MAX_MENTIONS)


def test_a_topic_many_documents_mention_is_no_bridge():
    # The country's page is mentioned by every state's: following it would pull each state
    # in by the country, not by the question. A page two documents mention still bridges.
    country = SourceDocument("us", "The United States is a federal republic of 50 states.")
    states = [
        SourceDocument(name, f"{name} is a state of the United States in the south.")
        for name in ("Tennessee", "Georgia", "Alabama", "Florida")
    ]
    person = SourceDocument("p", "John Doby Kennedy was a general born in Tennessee.")
    links = bridge_links([country, *states, person])
    assert links["us"] == set()
    assert links["p"] == {"Tennessee"} and links["Tennessee"] == {"p"}
    assert links["Georgia"] == set()
    unlimited = bridge_links([country, *states, person], max_mentions=None)
    assert unlimited["us"] == {"Tennessee", "Georgia", "Alabama", "Florida"}
    assert bridge_links([country, *states[:3]])["us"] == {"Tennessee", "Georgia", "Alabama"}


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_a_bad_mention_limit_is_refused_by_name(bad):
    with pytest.raises(InputError, match="max_mentions") as info:
        bridge_links([SourceDocument("a", "Alpha is here.")], max_mentions=bad)
    assert info.value.argument == "max_mentions" and info.value.value == bad


def test_links_are_case_sensitive_whole_words_and_never_self_links():
    docs = [
        SourceDocument("a", "Winner is a band. The winners of Winnerville."),
        SourceDocument("b", "the winner took all; Winnerville is a town."),
        SourceDocument("c", "They signed with Winner in 2014."),
    ]
    links = bridge_links(docs)
    assert links == {"a": {"c"}, "b": set(), "c": {"a"}}


def test_links_use_the_title_metadata():
    docs = [
        SourceDocument("film", "Big Stone Gap was directed by Adriana Trigiani."),
        SourceDocument("person", "She is a writer.", {"title": "Adriana Trigiani"}),
        SourceDocument("other", "Rain causes floods."),
    ]
    assert bridge_links(docs) == {"film": {"person"}, "person": {"film"}, "other": set()}


def test_links_scale_linearly():
    # 5,000 documents, each mentioning the next one's topic: a pairwise scan would be
    # 25 million searches; the n-gram table makes it one pass over the text.
    docs = [
        SourceDocument(f"d{i}", f"Topic{i} is here. It mentions Topic{i + 1} today.")
        for i in range(5000)
    ]
    links = bridge_links(docs)
    assert links["d0"] == {"d1"} and links["d10"] == {"d9", "d11"}
    assert sum(map(len, links.values())) == 2 * 4999


# ----------------------------------------------------------------------------- selection


def _brute_force_selection(ids, relevance, links, count):
    position = {d: i for i, d in enumerate(ids)}
    picked = []
    while len(picked) < min(count, len(ids)):
        left = [d for d in ids if d not in picked]
        linked = [d for d in left if any(d in links[p] for p in picked)]
        pool = linked or left
        picked.append(min(pool, key=lambda d: (-relevance[d], position[d])))
    return picked


@pytest.mark.parametrize("seed", range(50))
def test_selection_matches_its_definition(seed):
    rng = random.Random(seed)
    ids = [f"d{i}" for i in range(rng.randint(1, 9))]
    relevance = {d: rng.choice([0.1, 0.2, 0.5, 0.9]) for d in ids}  # ties on purpose
    links = {d: set() for d in ids}
    for a, b in itertools.combinations(ids, 2):
        if rng.random() < 0.25:
            links[a].add(b)
            links[b].add(a)
    count = rng.randint(1, 10)
    assert bridge_guided_selection(ids, relevance, links, count) == _brute_force_selection(
        ids, relevance, links, count
    )


def test_selection_follows_a_bridge_past_more_similar_documents():
    ids = ["film", "distractor1", "distractor2", "director"]
    relevance = {"film": 0.8, "distractor1": 0.6, "distractor2": 0.5, "director": 0.1}
    links = {"film": {"director"}, "director": {"film"}, "distractor1": set(), "distractor2": set()}
    assert bridge_guided_selection(ids, relevance, links, 2) == ["film", "director"]
    assert bridge_guided_selection(ids, relevance, links, 3) == [
        "film",
        "director",
        "distractor1",
    ]
    assert bridge_guided_selection(ids, relevance, links, 0) == []


# ----------------------------------------------------------------------------- pipeline

STORY = [
    {"id": "d1", "text": "Heavy rain causes river flooding."},
    {"id": "d2", "text": "River flooding leads to crop damage."},
    {"id": "d3", "text": "Oakridge Farm grows wheat near the river.", "metadata": {"title": "x"}},
    {"id": "d4", "text": "Heavy rain fell on Oakridge Farm in May."},
    {"id": "d5", "text": "Oakridge Farm is owned by the Miller family."},
    {"id": "d6", "text": "The museum opened in 1901."},
]


def make(config, keyphrase="heavy rain", profile_reader=None):
    return SARGPipeline(
        config,
        extractor=PatternExtractor(),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases(keyphrase),
        direction_classifier=CueWordDirectionClassifier(),
        event_reader=PastTenseWords(),
        profile_reader=profile_reader or NoProfiles(),
    )


def test_paper_evidence_is_the_chain_documents_only():
    result = make(SARGConfig.paper(similarity_threshold=0.6)).run("What does heavy rain cause?", STORY)
    assert [p.document_id for p in result.evidence] == ["d1", "d2"]
    assert {p.selected_by for p in result.evidence} == {"chain"}
    assert "evidence_filled" not in result.stats


def test_fill_adds_documents_after_the_chain_evidence():
    cfg = SARGConfig(similarity_threshold=0.6, evidence_fill=2)
    result = make(cfg).run("What does heavy rain cause?", STORY)
    ids = [p.document_id for p in result.evidence]
    assert ids[:2] == ["d1", "d2"] and len(ids) == 4 and len(set(ids)) == 4
    assert [p.selected_by for p in result.evidence[:2]] == ["chain", "chain"]
    assert {p.selected_by for p in result.evidence[2:]} <= {"bridge", "relevance"}
    assert result.evidence[2].selected_by == "relevance"  # the first pick is never a bridge
    assert all(p.chain_ids == () for p in result.evidence[2:])
    assert result.stats["evidence_filled"] == 2
    # Filled documents are in the prompt's evidence section, after the chains.
    for p in result.evidence:
        assert result.prompt.index(p.text) > result.prompt.index("## Reasoning chains")
    assert json.loads(result.to_json())["evidence"][2]["selected_by"] in {"bridge", "relevance"}


def test_fill_follows_a_topic_bridge():
    # d4 mentions "Oakridge Farm", the topic of d5 ("Oakridge Farm is owned by …"):
    # once d4 is picked, d5 is preferred over anything merely similar to the query.
    docs = [
        {"id": "q1", "text": "Heavy rain fell on Oakridge Farm in May."},
        {"id": "q2", "text": "Heavy rain and heavy wind in May."},
        {"id": "q3", "text": "Heavy rain in April."},
        {"id": "b1", "text": "Oakridge Farm is owned by the Miller family."},
    ]
    result = make(SARGConfig(similarity_threshold=0.99, evidence_fill=2)).run(
        "Who owns the farm where heavy rain fell in May?", docs
    )
    assert result.used_fallback
    assert [(p.document_id, p.selected_by) for p in result.evidence] == [
        ("q1", "relevance"),
        ("b1", "bridge"),
    ]
    assert "heavy wind" not in result.prompt


def test_fill_passes_over_a_topic_many_documents_mention():
    # Four documents mention "United States": its page is common ground, not the second hop,
    # so the next most relevant document comes in instead (with no limit the hub would).
    texts = {
        "q1": "Johnson Hagood was a governor who died in the United States.",
        "us": "The United States is a federal republic of fifty states.",
        "a": "Tennessee is a state of the United States.",
        "b": "Utah is a state of the United States.",
        "c": "Washington is the capital of the United States.",
        "ans": "Forest Acres is a city in Richland County, South Carolina.",
    }
    docs = [SourceDocument(k, v) for k, v in texts.items()]
    relevance = {"q1": 0.9, "ans": 0.6, "us": 0.5, "a": 0.3, "b": 0.2, "c": 0.1}

    def picks(**kw):
        passages = fill_evidence(
            docs, [], 2, HashingEmbedder(), None, {}, relevance=relevance, **kw
        )
        return [(p.document_id, p.selected_by) for p in passages]

    assert picks() == [("q1", "relevance"), ("ans", "relevance")]
    assert picks(bridge_max_mentions=None) == [("q1", "relevance"), ("us", "bridge")]
    assert picks(bridge_max_mentions=4) == [("q1", "relevance"), ("us", "bridge")]


def test_fill_on_fallback_replaces_the_whole_context():
    docs = [{"id": f"n{i}", "text": f"Note number {i} about the museum."} for i in range(6)]
    result = make(SARGConfig(similarity_threshold=0.6, evidence_fill=3)).run(
        "When did the museum open?", docs
    )
    assert result.used_fallback
    assert len(result.evidence) == 3
    assert {p.selected_by for p in result.evidence} <= {"bridge", "relevance"}
    assert result.prompt.count("<document id=") == 3


def test_fill_larger_than_the_documents_takes_them_all_once():
    cfg = SARGConfig(similarity_threshold=0.6, evidence_fill=50)
    result = make(cfg).run("What does heavy rain cause?", STORY)
    assert sorted(p.document_id for p in result.evidence) == sorted(d["id"] for d in STORY)


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "3"])
def test_bad_fill_is_a_config_error(value):
    with pytest.raises(ConfigError, match="evidence_fill"):
        SARGConfig(evidence_fill=value)


# ------------------------------------------------------------------ the default: a budget


def words_of(passages) -> int:
    return sum(len(re.findall(r"\w+", p.text)) for p in passages)


def tokens_of(passages) -> int:
    """The budget's unit: estimated tokens of each passage as the prompt renders it."""
    return sum(count_tokens(render_evidence([p])) for p in passages)


def passage(doc: dict) -> EvidencePassage:
    return EvidencePassage(doc["id"], doc["text"], ())


def test_the_budget_counts_each_documents_block_so_short_ones_do_not_crowd_out_a_relevant_one():
    # Counted in words, the second most relevant page (20 words) did not fit after the
    # first, and three 2-word stubs filled the budget instead; each stub's <document>
    # block costs more tokens than its words, so counted as rendered the page fits and
    # the stubs do not. The same-budget dense baseline packs prompts the same way.
    docs = [
        SourceDocument("a", " ".join(["alpha"] * 19) + "."),
        SourceDocument("b", " ".join(["beta"] * 19) + "."),
        *(SourceDocument(f"s{i}", "Stub page.") for i in range(6)),
    ]
    relevance = {"a": 0.9, "b": 0.8, **{f"s{i}": 0.5 - i / 100 for i in range(6)}}
    budget = round(0.5 * tokens_of([EvidencePassage(d.id, d.text, ()) for d in docs]))
    picked = fill_evidence(
        docs, [], None, HashingEmbedder(), None, {},
        budget_tokens=budget, relevance=relevance, bridges=False,
    )
    assert [p.document_id for p in picked] == ["a", "b"]
    assert tokens_of(picked) <= budget
    words = sum(len(re.findall(r"\w+", d.text)) for d in docs)
    assert 20 + 20 > 0.5 * words  # in words, "b" would have been passed over


def test_default_on_a_causal_story_holds_the_chain_documents_and_no_distractor():
    docs = [
        {"id": "d1", "text": "Heavy rain causes river flooding."},
        {"id": "d2", "text": "River flooding leads to crop damage."},
        {"id": "d3", "text": "The museum opened in 1901 and has a garden."},
        {"id": "d4", "text": "The town hall has twelve rooms and a clock tower."},
    ]
    result = make(SARGConfig(similarity_threshold=0.6)).run("What does heavy rain cause?", docs)
    assert not result.used_fallback
    assert [(p.document_id, p.selected_by) for p in result.evidence] == [
        ("d1", "chain"),
        ("d2", "chain"),
    ]
    # A causal question's budget, 0.8 of the documents' tokens as rendered (18 + 19 + 22
    # + 23); the chain documents, whose blocks also cite their chain, leave 19 tokens:
    # no other document fits.
    budget = result.stats["evidence_budget_tokens"]
    assert budget == round(0.8 * sum(tokens_of([passage(d)]) for d in docs)) == 66
    assert tokens_of(result.evidence) == 47
    assert "museum" not in result.prompt and "town hall" not in result.prompt


def test_a_causal_questions_fill_passes_over_a_profile_for_a_document_telling_an_event():
    docs = [
        {"id": "chain", "text": "Heavy rain causes river flooding."},
        {"id": "profile", "text": "Heavy rain is common here."},
        {"id": "event", "text": "Winds damaged roofs in the valley."},
        {"id": "hall", "text": "The town hall has twelve rooms and a clock tower."},
        {"id": "museum", "text": "The museum has a garden with old trees and a pond."},
    ]
    pipeline = make(SARGConfig(similarity_threshold=0.6))
    result = pipeline.run("What did heavy rain cause?", docs)
    held = [(p.document_id, p.selected_by) for p in result.evidence]
    # The profile is the more relevant (it names heavy rain), but it tells no event
    # ("-ed" for the fake reader): the fill takes the document that does.
    assert held == [("chain", "chain"), ("event", "relevance")]
    assert result.stats["evidence_profiles_passed_over"] == 3
    # A question asking neither way is filled by relevance, profiles included.
    about = pipeline.run("Heavy rain", docs)
    assert "profile" in [p.document_id for p in about.evidence]
    # Asked what heavy rain causes in general, an event is no step of the answer: the
    # fill takes documents telling none.
    general = pipeline.run("What does heavy rain cause?", docs)
    held = [p.document_id for p in general.evidence]
    assert held[:2] == ["chain", "profile"] and "event" not in held, held
    assert general.stats["evidence_events_passed_over"] == 1
    assert "evidence_profiles_passed_over" not in general.stats


def test_asks_for_a_causal_link():
    links = [
        "How is the pump failure at Rennick connected to the potline shutdown?",
        "How are the blasts at Hessary quarry and Brokewell's hosepipe ban connected?",
        "Is there a link between Granite Estates going bust and Puddle & Pine leaving?",
        "Walk me through the events that cost Ivo Brandt his job at Rusk Harbour FC.",
        "Talk me through how the strike at the Tamsel plant ended up affecting the stadium.",
        "Can you trace how the fall in the kandrel raised coffee prices?",
    ]
    other = [
        "Were both Monkey Kingdom and Anaganaga O Dheerudu connected with Disney?",
        "How long is the bridge that connects Copenhagen and Malmo?",
        "Why did the plant shut down?",
        "Which film has the director who was born first?",
    ]
    assert all(asks_for_a_causal_link(q) for q in links)
    assert not any(asks_for_a_causal_link(q) for q in other)


def test_asks_general_effects():
    general = [
        "What does a mutation in the GBA1 gene ultimately lead to?",
        "What do higher interest rates mean for borrowers?",
        "Which diseases does smoking cause?",
        "How does heavy rain affect the harvest?",
        "how do tariffs impact prices",
    ]
    other = [
        "What did the ban lead to?",
        "What happened after the bank raised rates?",
        "Why do six countries claim the Spratlys?",
        "How does a bill become law?",
        "What will the move do?",
    ]
    assert all(asks_general_effects(q) for q in general)
    assert not any(asks_general_effects(q) for q in other)


def test_a_why_question_about_a_present_state_may_be_filled_with_a_profile():
    docs = [
        {"id": "chain", "text": "Heavy rain causes river flooding."},
        {"id": "profile", "text": "Heavy rain is common here."},
        {"id": "event", "text": "Winds damaged roofs in the valley."},
        {"id": "hall", "text": "The town hall has twelve rooms and a clock tower."},
        {"id": "museum", "text": "The museum has a garden with old trees and a pond."},
    ]
    pipeline = make(SARGConfig(similarity_threshold=0.6))
    # Why something is so now: the reason may be a state, and the profile comes in.
    now = pipeline.run("Why does heavy rain cause river flooding?", docs)
    held = [(p.document_id, p.selected_by) for p in now.evidence]
    assert held[:2] == [("chain", "chain"), ("profile", "relevance")], held
    assert now.stats["evidence_profiles_passed_over"] == 0
    # Why something happened: a story, and the profile stays out.
    then = pipeline.run("Why did heavy rain cause river flooding?", docs)
    assert "profile" not in [p.document_id for p in then.evidence]


@pytest.mark.parametrize(
    ("query", "state"),
    [
        ("Why do six countries claim all or part of the Spratlys?", True),
        ("Why is Takako Doi opposed to the bill?", True),
        ("Why has Albania been gripped by instability?", True),
        ("Why are hotel bookings down?", True),
        ("Why did bread sales fall?", False),
        ("Why were more people treated for asthma?", False),
        ("What is the cause of the poisoning?", False),
        ("How is the peso doing?", False),
    ],
)
def test_asks_why_of_a_state(query, state):
    assert asks_why_of_a_state(query) is state


@pytest.mark.parametrize(
    ("query", "happened"),
    [
        ("Why did bread sales fall?", True),
        ("What happened after the lock broke?", True),
        ("What led to the closure of the mine?", True),
        ("Why were schools closed on Wednesday?", True),
        ("Why have rents in the city risen so sharply?", True),
        ("Why has Albania been gripped by instability?", False),  # a state
        ("What does a mutation in the gene lead to?", False),  # a mechanism
        ("Why do six countries claim the Spratlys?", False),
        ("What may happen if they keep fighting?", False),
        # Asked with a verb in the past or in the present perfect.
        ("What followed the blizzard on the Altbeg pass?", True),
        ("What came of making Hamsworth town centre a 20mph zone?", True),
        ("What lay behind the rise in night-time car thefts?", True),
        ("What made triathletes ill after the Castlebay race?", True),
        ("Walk me through the events that cost Ivo Brandt his job.", True),
        ("What has full-fibre broadband meant for Glenardle?", True),
        ("How has the Greenway superstore affected the high street?", True),
        ("What has driven up rents in Stanmere?", True),
        ("How does the bypass affect trade?", False),  # effects in general
        ("What is behind the long waits?", False),  # a state now
    ],
)
def test_asks_what_happened(query, happened):
    assert asks_what_happened(query) is happened


@pytest.mark.parametrize(
    ("query", "may_follow"),
    [
        ("What may the Justice Department do if Gonzales travels to the United States?", True),
        ("What might happen as a result of the convictions being ruled to stand?", True),
        ("What effect will the death of Turkes have?", True),
        ("What likely effect could Sino-Russian cooperation have on the oil industry?", True),
        ("If Turkes' party had received 10 percent of the vote, what would have happened?", True),
        ("What is expected for Israel to do if Europe continues the boycott?", True),
        ("What is going to happen if the court edict fails?", True),
        ("What might have contributed to Saturday's gas blast?", True),
        # What happened, or why something will be so: the judge's stories.
        ("What happened in May after the flood?", False),
        ("What caused the flood in May?", False),
        ("Why will there be no pantomime at the Alder Playhouse this Christmas?", False),
        ("What led to the announcement that the Ystrad factory will close?", False),
        ("What is behind the expected shortfall in Kowhai Valley grapes this year?", False),
        ("What was caused by fears that the United States might shift course?", False),
        ("Why could shoppers across Keldmark only pay in cash on Saturday?", False),
    ],
)
def test_asks_what_may_follow(query, may_follow):
    assert asks_what_may_follow(query) is may_follow


def _hop(source, target, *sentences):
    return ChainHop(source, target, "causes", RelationType.CAUSAL, True, ("d",) * len(sentences), sentences)


def test_chains_are_cut_before_a_hop_told_only_by_profiles():
    failure = _hop("turbine failure", "output", "The turbine failure cut output.")
    profile = _hop("output", "electricity", "Hydro output provides half of the electricity.")
    storm = _hop("storm", "output", "The storm cut output.")
    both = _hop("output", "shortfall", "Hydro output provides power.", "The cut output caused a shortfall.")
    unread = _hop("output", "prices", "")  # no sentence (an LLM's triple): nothing to judge
    chains = [
        ReasoningChain(("turbine failure", "output", "electricity"), (failure, profile), 0.5, Direction.FORWARD),
        ReasoningChain(("output", "electricity"), (profile,), 0.4, Direction.FORWARD),
        ReasoningChain(("storm", "output", "shortfall"), (storm, both), 0.3, Direction.FORWARD),
        ReasoningChain(("output", "prices"), (unread,), 0.2, Direction.FORWARD),
        ReasoningChain(("storm", "output", "electricity"), (storm, profile), 0.1, Direction.FORWARD),
    ]
    kept = chains_told_as_events(chains, ProfileWords().states_profile)
    # The first is cut before the profile's hop and keeps its score; the second, a
    # profile only, is dropped; a hop also told by an event stays whole; the last, cut
    # to a part of the third, adds nothing.
    assert [(c.nodes, c.score) for c in kept] == [
        (("turbine failure", "output"), 0.5),
        (("storm", "output", "shortfall"), 0.3),
        (("output", "prices"), 0.2),
    ]
    assert kept[0].hops == (failure,)
    # Two chains cut to the same nodes: the first stays.
    twice = chains_told_as_events([chains[0], chains[0]], ProfileWords().states_profile)
    assert [c.nodes for c in twice] == [("turbine failure", "output")]


PROFILE_STORY = [
    {"id": "rain", "text": "Heavy rain causes river flooding."},
    {"id": "crops", "text": "River flooding leads to crop damage."},
    # A general fact (the fake reader's "in general"), continuing the story's flooding.
    {"id": "fact", "text": "River flooding causes landslides in general."},
    {"id": "hall", "text": "The town hall has twelve rooms and a clock tower."},
]


def test_asked_what_happened_no_chain_runs_through_a_profile_nor_brings_it_in():
    pipeline = make(SARGConfig(similarity_threshold=0.6), profile_reader=ProfileWords())
    asked = pipeline.run("What happened after the heavy rain?", PROFILE_STORY)
    assert not asked.used_fallback
    assert not any("landslides" in node for c in asked.chains for node in c.nodes)
    assert "fact" not in [p.document_id for p in asked.evidence]
    assert asked.stats["chains_through_profiles"] == 1
    # The same question with no profile reader's verdict keeps the general fact's chain.
    blind = make(SARGConfig(similarity_threshold=0.6)).run("What happened after the heavy rain?", PROFILE_STORY)
    assert any("landslides" in node for c in blind.chains for node in c.nodes)
    assert "fact" in [p.document_id for p in blind.evidence]
    # A question about a mechanism, not about what happened: the general fact may answer it.
    mechanism = pipeline.run("What does heavy rain lead to?", PROFILE_STORY)
    assert any("landslides" in node for c in mechanism.chains for node in c.nodes)


def test_asked_what_happened_a_story_told_only_by_profiles_falls_back():
    docs = [
        {"id": "fact", "text": "Heavy rain causes landslides."},
        {"id": "fact2", "text": "Landslides are dangerous and landslides block roads."},
    ]
    result = make(SARGConfig(similarity_threshold=0.6), profile_reader=PresentTenseAll()).run(
        "What happened after the heavy rain?", docs
    )
    assert result.fallback_reason == NO_EVENT_CHAINS
    assert not result.chains


class PresentTenseAll:
    def states_profile(self, text):
        return True


def test_a_bad_profile_reader_is_refused_by_name():
    with pytest.raises(ConfigError, match="profile_reader"):
        SARGPipeline(profile_reader=object())


def test_on_a_causal_fallback_the_story_goes_on_from_the_filled_document():
    docs = [
        {"id": "storm", "text": "Storm Ada causes power cuts, and roads flooded."},
        {"id": "shops", "text": "Power cuts leads to dark shops."},
        {"id": "harbour", "text": "The harbour has twelve piers and a lighthouse."},
        {"id": "museum", "text": "The museum has a garden with old trees and a pond."},
    ]
    pipeline = make(SARGConfig(similarity_threshold=0.6), keyphrase="zebra crossing")
    result = pipeline.run("What did Storm Ada lead to?", docs)
    assert result.used_fallback
    # No entry node, no asked-event story (the question names the storm only by its
    # name); the fill brings the storm document, and its open end "power cuts" goes on
    # to the shops (a profile to the fake reader, so not filled, but linked).
    assert [(p.document_id, p.selected_by) for p in result.evidence] == [
        ("storm", "relevance"),
        ("shops", "linked"),
    ]


def test_a_causal_question_has_its_own_budget():
    docs = [
        {"id": "rain", "text": "Heavy rain causes river flooding."},
        {"id": "soaked", "text": "Heavy rain soaked the farms."},
        {"id": "hall", "text": "The town hall has twelve rooms and a clock tower."},
        {"id": "museum", "text": "The museum has a garden with old trees and a pond."},
    ]
    total = sum(tokens_of([passage(d)]) for d in docs)

    def budget(query, **changes):
        config = SARGConfig(similarity_threshold=0.6, **changes)
        return make(config).run(query, docs).stats["evidence_budget_tokens"]

    assert budget("What does heavy rain cause?") == round(0.8 * total)
    assert budget("What does heavy rain cause?", causal_evidence_budget=0.4) == round(0.4 * total)
    # None: the evidence budget's share; a question asking neither way always takes it.
    assert budget("What does heavy rain cause?", causal_evidence_budget=None) == round(0.5 * total)
    assert budget("Heavy rain") == round(0.5 * total)
    # A question how one event led to another is read as a link (bidirectional), and
    # still asks for a story.
    assert budget("How is the heavy rain connected to the flooding?") == round(0.8 * total)
    assert budget("Were both the rain and the flooding connected with the storm?") == round(
        0.5 * total
    )
    # The paper's setting has no budget at all.
    assert SARGConfig.paper().causal_evidence_budget is None


@pytest.mark.parametrize("value", [-0.1, 1.5, "half", True])
def test_bad_causal_budget_is_a_config_error(value):
    with pytest.raises(ConfigError, match="causal_evidence_budget"):
        SARGConfig(causal_evidence_budget=value)


def test_event_documents_reads_every_sentence_and_keeps_the_held_ones():
    docs = [
        SourceDocument("dated", "The canal is old. Barges stopped in May."),
        SourceDocument("profile", "Barges carry grain and coal."),
        SourceDocument("held", "The canal is long."),
        SourceDocument("empty", "  "),
    ]
    held = [EvidencePassage("held", docs[2].text, (1,))]
    assert [d.id for d in event_documents(docs, held, PastTenseWords())] == ["dated", "held"]
    # With no event told and nothing held, the fallback keeps every non-empty document.
    assert [d.id for d in event_documents(docs[1:], [], PastTenseWords())] == ["profile", "held"]


def test_event_documents_reads_only_a_documents_first_short_sentences():
    asked = []

    class Recording:
        def tells_event(self, text):
            asked.append(text)
            return "burned" in text

    long = "A " + "very " * 300 + "long sentence burned."  # over EVENT_SENTENCE_CHARS
    many = " ".join(f"Item {i} is here." for i in range(30)) + " The mill burned."
    docs = [SourceDocument("long", long), SourceDocument("many", many)]
    assert event_documents(docs, [], Recording()) == docs  # nothing told: all kept
    assert long not in asked and len(asked) == EVENT_SENTENCES_READ
    assert all(len(text) <= EVENT_SENTENCE_CHARS for text in asked)


def test_default_on_a_bridge_question_brings_in_the_second_hop_within_the_budget():
    docs = [
        {"id": "q1", "text": "Heavy rain fell on Oakridge Farm in May."},
        {"id": "q2", "text": "Heavy rain and heavy wind in May across the coast."},
        {"id": "q3", "text": "Heavy rain in April was heavier than usual in the hills."},
        {"id": "b1", "text": "Oakridge Farm is owned by the Miller family."},
        {"id": "x1", "text": "The museum opened in 1901 and has a small garden."},
        {"id": "x2", "text": "A ferry crosses the lake twice a day in summer."},
    ]
    cfg = SARGConfig(similarity_threshold=0.99, evidence_budget=0.4)
    result = make(cfg).run("Who owns the farm where heavy rain fell in May?", docs)
    assert result.used_fallback
    picked = [(p.document_id, p.selected_by) for p in result.evidence]
    assert picked[:2] == [("q1", "relevance"), ("b1", "bridge")]
    total = tokens_of([passage(d) for d in docs])
    budget = result.stats["evidence_budget_tokens"]
    assert tokens_of(result.evidence) <= 0.4 * total == pytest.approx(budget, abs=1)


@pytest.mark.parametrize(
    ("query", "compares"),
    [
        ("Who is older, Annie Morton or Terry Richardson?", True),
        ("Which band has more members, Lawson or American Music Club?", True),
        ("Are Waste Land and Shikashika both types of drinks?", True),
        ("Is the building at 200 West Street taller than the one at 888 7th Avenue?", True),
        ("Were Scott Derrickson and Ed Wood of the same nationality?", True),
        ("Which film has the director born first, Wild Tales or The Hunter?", True),
        ("Which band is from England, Fireflight or Dirty Pretty Things?", True),
        ("Which novelist, J. G. Farrell or Louis Aragon, wrote of colonial rule?", True),
        ("who had to escape nazis, Sigmund Freud or Evelyn Waugh?", True),
        ("In between Liberty and MIT Technology Review which has a circulation of 200,000?", True),
        ("What profession does H. L. Mencken and Albert Camus have in common?", True),
        ("What occupation do Chris Menges and Aram Avakian share?", True),
        ("Astro Boy and The Secret of Kells share which genre of film?", True),
        ("What occupation was shared by David Yates and Pietro Germi?", True),
        ("What is the average income for the same nationality as the author of Emma?", False),
        ("Which county shares a border with the county where Don Werner was born?", False),
        ("Candy Coburn has shared the stage with a group with who playing guitar?", False),
        ("What color do people wear during Oranjegekte or to celebrate Koningsdag?", False),
        ("What ended the conflict between the British Raj and the Emirate of Afghanistan?", False),
        ("Why did Marno and Halden have fewer school buses this winter?", False),
        ("Who founded Oakridge Farm and Miller Holdings, which were sold in 1990?", False),
        ("Woman's Era and Naj are what kind of magazines?", True),
        ("Who currently has more store locations? Bearno's or Patxi's Chicago Pizza?", True),
        ("Which genus has more species, Bactris and Epigaea?", True),
        ("What type of music were vocalists Billie Joe Armstrong and Frank Iero involved with?", True),
        ("Where are Teide National Park and Garajonay National Park located?", True),
        # Not a choice after the question, nor names after "and" (lowercase, or one word).
        ("What happened first? The strike spread and the ports closed.", False),
        ("What series, told in first person, has companion books and alien species?", False),
        ("What co-wrote a film starring Nicolas Cage and Téa Leoni?", False),
        ("Why were school buses at Marno and Halden late?", False),
        ("Who owns the farm where heavy rain fell in May?", False),
        ("What government position was held by the woman who portrayed Corliss Archer?", False),
        ("The director of the romantic comedy Big Stone Gap is based in what city?", False),
        ("Why did hospital stays at the clinic get longer?", False),
    ],
)
def test_asks_to_compare(query, compares):
    assert asks_to_compare(query) is compares


def test_a_comparison_is_filled_by_relevance_alone():
    # The question names both things it compares; the page its first match bridges to
    # (Miller Holdings, named on Oakridge Farm's page) is about something else.
    docs = [
        {"id": "q1", "text": "Oakridge Farm was founded in 1950 by Miller Holdings."},
        {"id": "q2", "text": "Elm Farm was founded in 1962 near the river."},
        {"id": "b1", "text": "Miller Holdings is a company that owns three shops in town."},
        {"id": "x1", "text": "A ferry crosses the lake twice a day in summer."},
    ]
    topics_link = bridge_links([SourceDocument(d["id"], d["text"]) for d in docs])
    assert "q1" in topics_link["b1"]  # the bridge is there to follow
    cfg = SARGConfig(similarity_threshold=0.99, evidence_fill=2)
    query = "Which farm was founded first, Oakridge Farm or Elm Farm?"
    result = make(cfg).run(query, docs)
    assert result.used_fallback
    assert [(p.document_id, p.selected_by) for p in result.evidence] == [
        ("q1", "relevance"),
        ("q2", "relevance"),
    ]
    # The same documents asked about without a comparison follow the bridge.
    other = make(cfg).run("Who founded Oakridge Farm in 1950?", docs)
    assert ("b1", "bridge") in [(p.document_id, p.selected_by) for p in other.evidence]


@pytest.mark.parametrize(
    ("query", "related"),
    [
        # 2Wiki's bridge comparisons: the answer is an attribute of each film's director.
        ("Which film has the director born later, Dark Interval or Yeti Obhijaan?", True),
        ("Which film whose director was born first, The Stranger'S Return or Honeymoons?", True),
        ("Are the directors of films Jaco and Half A Bride both from the same country?", True),
        ("Do both directors of films Harun Al Raschid and Smoky Mountain Melody share the "
         "same nationality?", True),
        ("Do both films Across The Badlands and A Gutter Magdalene have the directors that "
         "share the same nationality?", True),
        ("Are director of film Sleepers and director of film The Juniper Tree from the same "
         "country?", True),
        ("Who was born first, the father of Ann Lee or the mother of Jon Day?", True),
        # The role says what the named things are, or is a word of a title.
        ("Are Wolfgang Becker and Paul Andrew Williams both film directors?", False),
        ("Which film director is younger, Robert Z. Leonard or Sinclair Hill?", False),
        ("Are Karl Shapiro and Elie Wiesel both American writers?", False),
        ("Which film was released first, Hercules Against The Sons Of The Sun or Barravento?",
         False),
        ("Who was born first, Jason Katims or Sidney Cotton?", False),
        # Not a comparison at all: a role alone is a bridge question, followed anyway.
        ("Who is the father of the director of film Big Stone Gap?", False),
    ],
)
def test_compares_related_things(query, related):
    assert compares_related_things(query) is related
    assert not related or asks_to_compare(query)


def test_a_comparison_of_related_things_follows_the_bridges_and_keeps_no_chains():
    # Each film's page names its director, whose own page holds the compared attribute.
    docs = [
        {"id": "f1", "text": "Dark Interval is a 1950 film directed by Charles Saunders."},
        {"id": "f2", "text": "Yeti Obhijaan is a 2017 film directed by Srijit Mukherji."},
        {"id": "x1", "text": "The film festival in the old town is held in May."},
        {"id": "d1", "text": "Charles Saunders was a director born in 1904."},
        {"id": "d2", "text": "Srijit Mukherji is a director born in 1977."},
        {"id": "c1", "text": "Heavy rain causes river flooding."},
    ]
    cfg = SARGConfig(similarity_threshold=0.0, evidence_fill=4)
    query = "Which film has the director born later, Dark Interval or Yeti Obhijaan?"
    result = make(cfg).run(query, docs)
    picked = [(p.document_id, p.selected_by) for p in result.evidence]
    assert ("d1", "bridge") in picked and ("d2", "bridge") in picked
    # Asked about the films themselves, the fill takes relevance alone (the chain's
    # passage is the fixed-count fill's: chains stay out under the default budget, below).
    named = make(cfg).run("Which film came out later, Dark Interval or Yeti Obhijaan?", docs)
    assert {p.selected_by for p in named.evidence} == {"chain", "relevance"}
    # Under the default budget both get no chains, each with its own reason.
    budget = SARGConfig(similarity_threshold=0.0)
    related = make(budget).run(query, docs)
    assert related.fallback_reason == COMPARES_RELATED_THINGS and not related.chains
    assert "bridge" in {p.selected_by for p in related.evidence}
    named = make(budget).run("Which film came out later, Dark Interval or Yeti Obhijaan?", docs)
    assert named.fallback_reason == COMPARES_NAMED_THINGS


OFF_TOPIC_CHAIN = [
    {"id": "c1", "text": "Heavy rain causes river flooding."},
    {"id": "f1", "text": "Oakridge Farm is owned by the Miller family since 1950."},
    {"id": "f2", "text": "The Miller family farm Oakridge Farm grows wheat."},
    {"id": "x1", "text": "The museum opened in 1901 and has a small garden."},
]


def test_on_a_causal_question_an_off_topic_chain_stays_behind_the_relevant_documents():
    # The chain (rain → flooding) is real but sits in one paragraph the question is not
    # about: it is not anchored, so the farm's documents come first, by relevance.
    query = "What did owning Oakridge Farm lead to for the Miller family?"
    assert CueWordDirectionClassifier().predict_direction(query).direction is Direction.FORWARD
    # The key phrase only loosely matches the chain's first node (an exact match would
    # anchor the chain: see test_a_chain_from_an_entry_node_naming_the_question_…).
    # Half the tokens (a causal question's 0.7 would hold the museum too).
    config = SARGConfig(similarity_threshold=0.0, causal_evidence_budget=0.5)
    result = make(config, keyphrase="rain on Oakridge Farm").run(query, OFF_TOPIC_CHAIN)
    assert max(e.similarity for e in result.entry_nodes) < CHAIN_ANCHOR_ENTRY_MATCH
    assert result.candidate_chains and not result.chains  # the chain is left out
    assert result.used_fallback and "most relevant" in result.fallback_reason
    assert result.stats["chains_unanchored"] >= 1 and result.stats["chains_kept"] == 0
    ids = [p.document_id for p in result.evidence]
    assert ids[0] in {"f1", "f2"} and "x1" not in ids  # never the museum
    assert {p.selected_by for p in result.evidence} <= {"bridge", "relevance"}  # c1 too, if in


def test_on_a_question_about_something_the_budget_is_filled_by_relevance_first():
    # "Who owns …" asks for neither causes nor effects (bidirectional): the chain's
    # document gets no priority, and the chain stays only if relevance brought it in.
    query = "Who owns Oakridge Farm, the Miller farm?"
    assert CueWordDirectionClassifier().predict_direction(query).direction is Direction.BIDIRECTIONAL
    result = make(SARGConfig(similarity_threshold=0.0)).run(query, OFF_TOPIC_CHAIN)
    assert result.candidate_chains
    ids = [p.document_id for p in result.evidence]
    assert ids[0] in {"f1", "f2"} and "x1" not in ids
    assert {p.selected_by for p in result.evidence} <= {"bridge", "relevance"}
    cited = {d for chain in result.chains for d in chain.document_ids}
    assert cited <= set(ids)  # every chain in the prompt is backed by the evidence
    for passage in result.evidence:
        expected = tuple(n for n, c in enumerate(result.chains, 1) if passage.document_id in c.document_ids)
        assert passage.chain_ids == expected
    assert result.chains and "c1" in ids and not result.used_fallback  # relevance took c1 in


def test_on_a_question_about_a_link_a_chain_across_documents_comes_first():
    # "How is X related to Y?" is bidirectional, but a chain told across documents is its
    # answer: its documents come first, ahead of more word-similar distractors.
    query = "How is heavy rain related to crop damage?"
    assert CueWordDirectionClassifier().predict_direction(query).direction is Direction.BIDIRECTIONAL
    docs = [
        {"id": "m1", "text": "The museum opened in 1901 and has a small garden with heavy rain gauges."},
        {"id": "m2", "text": "Crop damage and heavy rain are covered in the museum garden guide."},
        {"id": "d1", "text": "Heavy rain causes river flooding."},
        {"id": "d2", "text": "River flooding leads to crop damage."},
    ]
    result = make(SARGConfig(similarity_threshold=0.0, evidence_budget=0.3)).run(query, docs)
    assert [(p.document_id, p.selected_by, p.chain_ids) for p in result.evidence][:2] == [
        ("d1", "chain", (1,)),
        ("d2", "chain", (1,)),
    ]
    assert result.chains[0].document_ids == ("d1", "d2") and not result.used_fallback


def test_a_comparison_gets_relevance_alone_and_no_chains():
    # The same documents as above, where "who owns …" keeps the chain relevance took in:
    # a question comparing two farms is answered by their attributes, not by a chain.
    query = "Which farm grows wheat, Oakridge Farm or the Miller farm?"
    predicted = CueWordDirectionClassifier().predict_direction(query).direction
    assert predicted is Direction.BIDIRECTIONAL
    result = make(SARGConfig(similarity_threshold=0.0)).run(query, OFF_TOPIC_CHAIN)
    assert result.candidate_chains and not result.chains
    assert result.used_fallback and result.fallback_reason == COMPARES_NAMED_THINGS
    assert {p.selected_by for p in result.evidence} == {"relevance"}
    assert "Reasoning chains" not in result.prompt
    # The paper's setting keeps its chains: the rule belongs to the default budget policy.
    paper = make(SARGConfig.paper(similarity_threshold=0.0)).run(query, OFF_TOPIC_CHAIN)
    assert paper.chains and not paper.used_fallback


def test_a_chain_outside_the_relevance_fill_leaves_the_prompt():
    docs = [*OFF_TOPIC_CHAIN[1:], {"id": "c1", "text": "Heavy rain causes river flooding."}]
    cfg = SARGConfig(similarity_threshold=0.0, evidence_budget=0.3)
    result = make(cfg).run("Who owns Oakridge Farm, the Miller farm?", docs)
    ids = [p.document_id for p in result.evidence]
    assert "c1" not in ids and result.candidate_chains and not result.chains
    assert result.used_fallback and "neither for causes nor for effects" in result.fallback_reason
    assert "river flooding" not in result.prompt


def test_a_chain_across_documents_comes_first_however_unlike_the_query_it_reads():
    # The upstream link of a story need not resemble the question: a chain that crosses
    # documents is anchored by that alone.
    docs = [
        {"id": "m1", "text": "The museum opened in 1901 and has a small garden."},
        {"id": "m2", "text": "The museum garden has roses and a pond."},
        {"id": "d1", "text": "Heavy rain causes river flooding."},
        {"id": "d2", "text": "River flooding causes crop damage."},
    ]
    result = make(SARGConfig(similarity_threshold=0.0)).run("What does heavy rain cause?", docs)
    cited = {d for chain in result.chains for hop in chain.hops for d in hop.document_ids}
    assert cited == {"d1", "d2"}
    assert [p.document_id for p in result.evidence][:2] == ["d1", "d2"]
    assert {p.selected_by for p in result.evidence[:2]} == {"chain"}


WEAK_ENTRY_STORY = [
    {"id": "c1", "text": "Heavy rain causes river flooding."},
    {"id": "r1", "text": "Troops stormed the building where rebels hid."},
    {"id": "x1", "text": "The museum opened in 1901 and has a small garden."},
]


@pytest.mark.parametrize("keyphrase, weak", [("rain storms", True), ("heavy rain", False)])
def test_when_no_entry_names_the_question_the_most_relevant_document_joins(keyphrase, weak):
    # The chain (rain -> flooding) is anchored (one of the two most relevant documents)
    # but its entry only loosely matches the question: it may tell another story, so the
    # document most like the question comes in, even past the budget (11 of 22 words;
    # half the tokens here: a causal question's 0.7 would hold it anyway).
    query = "Why did troops storm the building?"
    config = SARGConfig(similarity_threshold=0.0, causal_evidence_budget=0.5)
    result = make(config, keyphrase=keyphrase).run(query, WEAK_ENTRY_STORY)
    assert not result.used_fallback and result.chains
    best_entry = max(e.similarity for e in result.entry_nodes)
    assert (best_entry < WEAK_ENTRY_MATCH) is weak
    picked = [(p.document_id, p.selected_by) for p in result.evidence]
    assert picked == ([("c1", "chain"), ("r1", "relevance")] if weak else [("c1", "chain")])
    assert tokens_of(result.evidence) > result.stats["evidence_budget_tokens"] or not weak


def test_paper_setting_keeps_the_papers_evidence():
    docs = [{"id": f"n{i}", "text": f"Note number {i} about the museum."} for i in range(6)]
    result = make(SARGConfig.paper(similarity_threshold=0.6)).run("When did the museum open?", docs)
    assert result.used_fallback and len(result.evidence) == 6
    assert "evidence_budget_tokens" not in result.stats
    chained = make(SARGConfig.paper(similarity_threshold=0.6)).run("What does heavy rain cause?", STORY)
    assert [p.document_id for p in chained.evidence] == ["d1", "d2"]


@pytest.mark.parametrize("value", [-0.1, 1.5, True, "0.5"])
def test_bad_budget_is_a_config_error(value):
    with pytest.raises(ConfigError, match="evidence_budget"):
        SARGConfig(evidence_budget=value)


# ------------------------------------------------------------------ anchoring, brute force


def _chain(first: str, *docs: str) -> ReasoningChain:
    hops = tuple(ChainHop(first, f"{first}+{d}", "causes", RelationType.CAUSAL, True, (d,), ("",)) for d in docs)
    return ReasoningChain((first,) + tuple(f"{first}+{d}" for d in docs), hops, 1.0, Direction.FORWARD)


def test_anchoring_matches_its_definition_on_random_cases():
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 9)
        ids = [f"d{i}" for i in range(n)]
        relevance = {d: rng.choice([0.1, 0.3, 0.5, 0.7]) for d in ids}
        chains = [_chain(f"e{j}", *rng.sample(ids, rng.randint(1, min(3, n)))) for j in range(4)]
        entry = {f"e{j}": rng.choice([0.5, 0.74, 0.75, 0.89, 0.9, 0.97]) for j in range(4)}
        kept = anchored_chains(chains, relevance, entry_similarity=entry)
        ranked = sorted(ids, key=lambda d: (-relevance[d], int(d[1:])))
        top = set(ranked[: max(2, -(-3 * n // 10))])
        best = max(entry[c.nodes[0]] for c in chains)
        expected = [
            c for c in chains
            if len(c.document_ids) >= 2 or set(c.document_ids) & top or entry[c.nodes[0]] >= 0.9
            or entry[c.nodes[0]] == best >= 0.75
        ]
        if any(entry[c.nodes[0]] >= 0.9 for c in expected):  # the question's event is named
            expected = [c for c in expected if entry[c.nodes[0]] >= 0.75]
        assert kept == expected


def test_a_chain_from_an_entry_node_naming_the_question_is_anchored_in_a_low_ranked_document():
    relevance = {"profile": 0.69, "cooling": 0.65, "spoilage": 0.64, "storm": 0.2, "weather": 0.0}
    chain = _chain("plant suspended deliveries", "spoilage")
    assert anchored_chains([chain], relevance) == []
    assert anchored_chains([chain], relevance, entry_similarity={"plant suspended deliveries": 0.93}) == [chain]
    assert anchored_chains([chain], relevance, entry_similarity={"plant suspended deliveries": 0.6}) == []


def test_the_chain_from_the_best_entry_node_is_anchored_when_that_node_names_the_question():
    # "What are the consequences of the gas blast in Yuanhua Coal Mine?": the sentence on
    # the Yuanhua blast ranks below two on other blasts, but its node is the best entry.
    relevance = {"other blast": 0.61, "explosion": 0.57, "yuanhua": 0.50, "arrests": 0.20}
    yuanhua = _chain("gas blast in Yuanhua Coal Mine", "yuanhua")
    others = [_chain("third gas blast", "other blast"), _chain("gas explosion", "explosion")]
    entry = {"gas blast in Yuanhua Coal Mine": 0.83, "third gas blast": 0.54, "gas explosion": 0.57}
    kept = anchored_chains([*others, yuanhua], relevance, entry_similarity=entry)
    assert kept == [*others, yuanhua]
    # Not when the best entry node is only loosely like the question ...
    loose = {**entry, "gas blast in Yuanhua Coal Mine": 0.7}
    assert anchored_chains([*others, yuanhua], relevance, entry_similarity=loose) == others
    # ... nor for a chain from a node that is not the best one.
    second = {**entry, "third gas blast": 0.85, "gas blast in Yuanhua Coal Mine": 0.8}
    lower = {**relevance, "x": 0.9, "y": 0.8}  # neither chain's document is among the top two
    assert anchored_chains([others[0], yuanhua], lower, entry_similarity=second) == [others[0]]


@pytest.mark.parametrize(
    ("node", "keyphrase", "query", "restates"),
    [
        # The subject named by a common noun; the verb in another form.
        ("club filed for bankruptcy", "fc file bankruptcy", "Why did Ambry FC file for bankruptcy?", True),
        ("owners halted production", "halt production", "Why did the Lusk owners halt production?", True),
        # One shared word is not the asked event, nor is a name.
        ("club filed", "fc file bankruptcy", "Why did Ambry FC file for bankruptcy?", False),
        ("Lusk mine lost money", "owners lusk", "Why did the Lusk owners halt production?", False),
        ("Ambry FC", "ambry fc", "Why did Ambry FC file for bankruptcy?", False),
        # Every asked word must be there.
        ("production fell", "halt production", "Why did the Lusk owners halt production?", False),
    ],
)
def test_a_node_restates_its_key_phrase_when_it_holds_every_asked_word(
    node, keyphrase, query, restates
):
    assert restates_key_phrase(node, keyphrase, query) is restates


def test_a_restated_entry_node_counts_as_a_focus_match():
    query = "Why did Ambry FC file for bankruptcy?"
    entries = [EntryNode("club filed for bankruptcy", 0.64, "fc file bankruptcy"),
               EntryNode("club filed", 0.51, "fc file bankruptcy"),
               EntryNode("bankruptcy", 1.0, "bankruptcy")]
    similarity = restated_entry_similarity(query, entries)
    assert similarity == {"club filed for bankruptcy": 0.75, "club filed": 0.51, "bankruptcy": 1.0}
    # The club's sentence ranks below its profile and its relegation, yet its chain,
    # from the best entry node of the chains, answers the question.
    relevance = {"relegated": 0.60, "founded": 0.58, "bankrupt": 0.49, "income": 0.30, "x": 0.1}
    answer, aim = _chain("club filed for bankruptcy", "bankrupt"), _chain("club filed", "bankrupt")
    raw = {e.node: e.similarity for e in entries}
    assert anchored_chains([aim, answer], relevance, entry_similarity=raw) == []
    assert anchored_chains([aim, answer], relevance, entry_similarity=similarity) == [answer]
    # Only as a focus match: chains anchored by their documents' relevance stay ("flooded
    # fields" <- the swollen river, and "level of Tarn" <- meltwater, the step before).
    fields = [EntryNode("flooded fields", 0.70, "fields tarn flooded"),
              EntryNode("level of Tarn", 0.65, "fields tarn flooded")]
    tarn = {"fields": 0.68, "level": 0.56, "farms": 0.53, "snow": 0.47, "fish": 0.37}
    chains = [_chain("flooded fields", "fields"), _chain("level of Tarn", "level")]
    query = "Why were the fields along the Tarn flooded in March?"
    similarity = restated_entry_similarity(query, fields)
    assert similarity["flooded fields"] == 0.75
    assert anchored_chains(chains, tarn, entry_similarity=similarity) == chains


def test_the_document_of_a_restated_entry_node_with_no_chain_joins():
    # "Why did the owners of the Lusk mine halt production?": "owners halted production"
    # (0.62 like "halt production") starts no chain; the chain held is the losses'.
    docs = [SourceDocument("loss", "At those prices the Lusk mine lost money."),
            SourceDocument("halt", "Its owners halted production in November."),
            SourceDocument("opened", "The Lusk mine opened in 1962.")]
    held = [EvidencePassage("loss", docs[0].text, (1,))]
    chains = [_chain("Lusk mine lost money", "loss")]
    entries = [EntryNode("owners halted production", 0.62, "halt production"),
               EntryNode("Lusk mine lost money", 0.59, "owners lusk")]
    where = {"owners halted production": ["halt"], "Lusk mine lost money": ["loss"]}
    relevance = {"loss": 0.66, "opened": 0.62, "halt": 0.49}
    raw = {e.node: e.similarity for e in entries}
    assert entry_evidence(docs, held, chains, raw, where, relevance,
                          event_reader=PastTenseWords()) == []
    similarity = restated_entry_similarity(
        "Why did the owners of the Lusk mine halt production?", entries
    )
    found = entry_evidence(docs, held, chains, similarity, where, relevance,
                           event_reader=PastTenseWords())
    assert [(p.document_id, p.selected_by) for p in found] == [("halt", "entry")]


def test_once_the_asked_event_is_named_a_loosely_matched_chain_leaves():
    # The dairy story: the plant's profile is the most relevant document, and its chain
    # ("milk <- farms in the valley", entry "milk" at 0.61) is about something else.
    relevance = {"profile": 0.69, "cooling": 0.65, "spoilage": 0.64, "storm": 0.2, "weather": 0.0}
    answer, profile = _chain("plant suspended deliveries", "spoilage"), _chain("milk", "profile")
    entry = {"plant suspended deliveries": 0.93, "milk": 0.61}
    assert anchored_chains([profile, answer], relevance, entry_similarity=entry) == [answer]
    # Without a chain from the named event, the profile's chain stays (its document is
    # the most relevant one).
    assert anchored_chains([profile], relevance, entry_similarity=entry) == [profile]


# ------------------------------------------------------------------ the entry document


class _EveryTextTells:
    """An event reader for which every text tells an event."""

    def tells_event(self, text):
        return True


_TOLD = _EveryTextTells()

FERRY = [
    SourceDocument("storm", "Storm damage closed the Skarra ferry terminal for the whole of July."),
    SourceDocument("visitors", "Without the ferry, the island's hotels received fewer visitors."),
    SourceDocument("terminal", "The Skarra ferry terminal opened in 1978 and has two berths."),
]


def test_the_document_stating_the_best_entry_node_joins_when_no_chain_starts_at_the_asked_event():
    # "What did the closure of the Skarra ferry terminal lead to?": the chain starts at
    # "ferry" (0.81); the closed terminal (0.88) is the better match, with no effect.
    chain = _chain("ferry", "visitors")
    held = [EvidencePassage("visitors", FERRY[1].text, (1,))]
    entry = {"Skarra ferry terminal": 0.88, "ferry": 0.81}
    documents = {"Skarra ferry terminal": ["storm"], "ferry": ["visitors"]}
    found = entry_evidence(FERRY, held, [chain], entry, documents, {"storm": 0.7},
                           event_reader=_TOLD)
    assert [(p.document_id, p.selected_by, p.chain_ids) for p in found] == [("storm", "entry", ())]
    # A chain from a node naming the asked event (at least 0.9) needs no such document:
    # the dairy plant's profile ("Delmar dairy plant", 1.0) stays out.
    named = {**entry, "ferry": 0.93}
    assert entry_evidence(FERRY, held, [chain], named, documents, {}, event_reader=_TOLD) == []
    # Nor when the best entry node is only loosely like the question, ...
    loose = {"Skarra ferry terminal": 0.74, "ferry": 0.6}
    assert entry_evidence(FERRY, held, [chain], loose, documents, {}, event_reader=_TOLD) == []
    # ... or its document is in already.
    assert entry_evidence(FERRY, held, [chain], entry, {"Skarra ferry terminal": ["visitors"]},
                          {}, event_reader=_TOLD) == []


def test_of_the_entry_nodes_documents_the_most_relevant_joins_ties_to_the_earlier():
    entry = {"Skarra ferry terminal": 0.88}
    both = {"Skarra ferry terminal": ["terminal", "storm"]}
    ranked = entry_evidence(FERRY, [], [], entry, both, {"storm": 0.4, "terminal": 0.6},
                            event_reader=_TOLD)
    assert [p.document_id for p in ranked] == ["terminal"]
    tied = entry_evidence(FERRY, [], [], entry, both, {"storm": 0.5, "terminal": 0.5},
                          event_reader=_TOLD)
    assert [p.document_id for p in tied] == ["storm"]  # earlier among the retrieved documents
    assert entry_evidence(FERRY, [], [], entry, {"Skarra ferry terminal": ["gone"]}, {},
                          event_reader=_TOLD) == []


def test_a_profile_naming_the_best_entry_node_states_no_asked_event():
    # "Why did coal barges stop on the Velde river?": the best entry node is "coal barges
    # on Velde", named by "Coal barges on the Velde carry about 2,000 tonnes each".
    entry = {"Skarra ferry terminal": 0.88}
    both = {"Skarra ferry terminal": ["terminal", "storm"]}
    relevance = {"storm": 0.4, "terminal": 0.6}
    found = entry_evidence(FERRY, [], [], entry, both, relevance, event_reader=_Events("closed"))
    assert [p.document_id for p in found] == ["storm"]  # the terminal's profile tells no event
    assert entry_evidence(FERRY, [], [], entry, both, relevance, event_reader=_Events()) == []


# ------------------------------------------------------------------ near-miss links


def _t(cause: str, effect: str, doc: str) -> Triple:
    return Triple(cause, "causes", effect, document_id=doc)


# The dairy story's triples: storm -> cooling -> spoilage, and the plant's profile.
DAIRY = [
    _t("storm", "power lines", "storm"),
    _t("power cut", "cooling systems", "cooling"),
    _t("failure of cooling systems", "thousands of litres of milk", "spoilage"),
    _t("thousands of litres of milk", "plant suspended deliveries", "spoilage"),
    _t("farms in valley", "milk", "profile"),
]


def test_two_shared_words_link_in_either_direction():
    assert documents_linked_by_triples(["spoilage"], DAIRY) == ["cooling"]


def test_a_cause_question_follows_the_story_upstream_on_one_shared_word():
    # "power lines" / "power cut": the storm document continues where the cooling stops.
    assert documents_linked_by_triples(["spoilage"], DAIRY, upstream=True) == ["cooling", "storm"]
    # Only upstream: asked for effects, nothing names the storm's cause.
    assert documents_linked_by_triples(["spoilage"], DAIRY, upstream=False) == ["cooling"]


def test_a_document_naming_the_middle_of_the_story_is_not_linked():
    # The profile's "milk" matches "thousands of litres of milk", which the spoilage
    # document itself explains (the failure spoiled it): no open end, no link.
    linked = documents_linked_by_triples(["spoilage"], DAIRY, upstream=True, rounds=5)
    assert "profile" not in linked


def test_an_effect_question_follows_the_story_downstream_on_one_shared_word():
    triples = [
        _t("strike", "port closed", "strike"),
        _t("port shut", "ships diverted", "diversion"),  # "port" only
        _t("diverted ships", "late fertiliser", "late"),  # stem "divert"
    ]
    assert documents_linked_by_triples(["strike"], triples, upstream=False) == ["diversion", "late"]
    assert documents_linked_by_triples(["strike"], triples, upstream=True) == []
    assert documents_linked_by_triples(["strike"], triples) == []


def test_word_forms_meet_by_their_stem():
    triples = [
        _t("poor pollination", "small apple harvest", "harvest"),
        _t("loss of bees", "apple blossoms pollinated", "pollination"),
    ]
    assert documents_linked_by_triples(["harvest"], triples, upstream=True) == ["pollination"]


def test_a_cause_question_takes_the_step_between_the_story_start_and_the_asked_event():
    # The upstream links reach the fire; "Without the machine, the mill's output fell"
    # continues it downstream, toward the layoffs (whose link to it is world knowledge).
    docs = [
        SourceDocument("fire", "A fire destroyed the paper machine, and customers were lost."),
        SourceDocument("output", "Without the machine, the mill's output fell by two thirds."),
        SourceDocument("layoffs", "With its customers lost, the mill laid off 200 workers."),
        SourceDocument("profile", "The machine makes paper for newspapers."),
    ]
    triples = [
        _t("fire", "customers lost", "fire"),
        _t("fire", "paper machine", "fire"),
        _t("machine", "output fell", "output"),
        _t("customers lost", "mill laid off workers", "layoffs"),
        _t("machine", "paper for newspapers", "profile"),
    ]
    held = [EvidencePassage("layoffs", docs[2].text, (2,))]
    events = _Events("destroyed", "fell", "laid")
    found = linked_evidence(docs, held, triples, "backward", event_reader=events)
    assert [p.document_id for p in found] == ["fire", "output"]  # the profile tells no event


def test_a_noun_made_of_a_phrasal_verb_meets_that_verb():
    # "Dockworkers … walked off the job" / "The walkout left dozens of container ships
    # waiting": no stem was shared, and the ships' document stayed out.
    triples = [
        _t("pay", "dockworkers at port walked off job", "strike"),
        _t("walkout", "dozens of container ships", "ships"),
    ]
    assert documents_linked_by_triples(["strike"], triples, upstream=False) == ["ships"]
    # A word that merely ends in a particle names no such verb: "layout" is no "lay".
    other = [_t("pay", "firms lay off workers", "a"), _t("layout", "store", "b")]
    assert documents_linked_by_triples(["a"], other, upstream=False) == []


def test_a_bare_entity_at_the_open_end_links_by_two_words_only():
    # "Italy" is an entity, not an event: every sentence about Albanians in Italy names it.
    triples = [_t("Italy", "Albania", "a"), _t("compatriots", "Albanians arrived in Italy", "b")]
    assert documents_linked_by_triples(["a"], triples, upstream=True) == []


def test_a_shared_place_name_does_not_state_the_asked_event():
    # "Oslin" is where both happen, not what happened: the history of its trams is no step
    # upstream of the asked cyberattack (it came into a story's evidence that way).
    asked = {"cyberattack on Oslin's transit company"}
    triples = [
        _t("cyberattack on Oslin's transit company", "staff locked out", "attack"),
        Triple("horses", "were pulled by", "first trams in Oslin", document_id="history"),
    ]
    assert documents_linked_by_triples(["attack"], triples, 1, upstream=True, from_ends=asked) == []
    # The event's own word still links: "the attack" names what happened.
    triples.append(_t("attack on the transit company", "company's computers", "hack"))
    found = documents_linked_by_triples(["attack"], triples, 1, upstream=True, from_ends=asked)
    assert found == ["hack"]
    # Following the story, an actor's name still links ("Gonzalez comes" / "Gonzalez's
    # arrival"); only the asked event's document is found by what happened.
    assert "history" in documents_linked_by_triples(["attack"], triples[:2], 1, upstream=True)


def test_a_cause_naming_how_a_thing_came_about_continues_upstream_of_it():
    # "the mites killed half of the colonies": the outbreak document's mites are in its
    # cause, yet it tells how the mites came.
    triples = [
        _t("mites", "half of bee colonies killed", "colonies"),
        _t("outbreak of varroa mites", "hives of Tarrow county", "mites"),
        _t("mites", "hive walls", "profile"),  # names the mites, tells no arrival
    ]
    assert documents_linked_by_triples(["colonies"], triples, upstream=True) == ["mites"]
    assert documents_linked_by_triples(["colonies"], triples, upstream=False) == []


def test_an_open_end_is_read_in_its_whole_argument():
    # The name "many customer accounts" trims "into overdraft" off the effect's span.
    triples = [
        Triple("double charges", "pushed", "many customer accounts", document_id="a",
               effect_text="many customer accounts into overdraft"),
        _t("overdraft fees", "flood of complaints", "b"),
    ]
    assert documents_linked_by_triples(["a"], triples, upstream=False) == ["b"]


def test_upstream_an_open_end_may_name_the_event_of_a_relation():
    # "The halt cut deliveries": the halt is the fire's "halted the production".
    triples = [Triple("fire", "halted", "production of insulin pens", document_id="fire"),
               _t("halt", "deliveries cut", "supply")]
    assert documents_linked_by_triples(["supply"], triples, upstream=True) == ["fire"]
    # Downstream too: "the halt" names the open end's event by its relation.
    assert documents_linked_by_triples(["fire"], triples, upstream=False) == ["supply"]
    # Not a cause with a word of its own ("rising bond yields" / "gives rise to").
    other = [triples[0], _t("halt of imports", "deliveries cut", "supply")]
    assert documents_linked_by_triples(["fire"], other, upstream=False) == []


def test_a_one_word_event_in_lower_case_is_an_open_end():
    # "all trains" is trimmed to "trains": an event's subject, not a name; the next
    # document's "no trains run" continues it.
    triples = [_t("signal fault", "trains", "fault"),
               _t("no trains run", "replacement buses", "buses")]
    assert documents_linked_by_triples(["fault"], triples, upstream=False) == ["buses"]


@pytest.mark.parametrize(
    "name, event",
    [("cold classrooms", True), ("trains", True), ("Italy", False), ("Port of Alvik", True),
     ("the", False), ("2019", False), ("SDP chairman Takako Doi", True)],
)
def test_which_open_ends_name_an_event(name, event):
    assert names_event(name) is event


def _similar_to(pairs):
    """Stand-in cosines: 0 unless (a word of a, a word of b) is listed with a score."""
    def similarity(a, b):
        return [[max((score for (x, y), score in pairs.items() if x in s and y in o), default=0.0)
                 for o in b] for s in a]
    return similarity


SCHOOL = [
    _t("cold classrooms", "school closed", "closure"),
    _t("no heating oil", "boilers stopped working", "boilers"),
    _t("snow", "roads blocked", "snow"),
    Triple("school", "has", "240 pupils", document_id="profile"),
]


def test_similar_spans_continue_a_story_that_shares_no_word():
    similar = _similar_to({("cold", "boilers"): 0.30, ("cold", "240"): 0.10})
    assert documents_linked_by_triples(["closure"], SCHOOL, upstream=True) == []
    assert documents_linked_by_triples(
        ["closure"], SCHOOL, upstream=True, similarity=similar
    ) == ["boilers"]
    # Under the floor, or asked downstream (the effects of the closure), nothing links.
    assert documents_linked_by_triples(
        ["closure"], SCHOOL, upstream=True, similarity=similar, similar_match=0.35
    ) == []
    assert documents_linked_by_triples(
        ["closure"], SCHOOL[:3], upstream=False, similarity=similar
    ) == []


class _Events:
    """An event reader: a text tells an event when it holds one of ``words``."""

    def __init__(self, *words):
        self.words = words

    def tells_event(self, text):
        return any(word in text for word in self.words)


def test_given_an_event_reader_only_a_sentence_telling_an_event_links_by_similarity():
    # "The school has 240 pupils" may be the span most like the open end; it tells no event.
    similar = _similar_to({("cold", "boilers"): 0.30, ("cold", "240"): 0.33})
    school = [
        *SCHOOL[:3],
        Triple("school", "has", "240 pupils", document_id="profile",
               sentence="The school has 240 pupils."),
    ]
    school[1] = Triple("no heating oil", "causes", "boilers stopped working",
                       document_id="boilers", sentence="With no oil, the boilers stopped working.")
    linked = documents_linked_by_triples(["closure"], school, upstream=True, similarity=similar)
    assert linked == ["boilers", "profile"]
    news = _Events("stopped", "closed")
    linked = documents_linked_by_triples(
        ["closure"], school, upstream=True, similarity=similar, event_reader=news
    )
    assert linked == ["boilers"]


def test_a_question_for_causes_takes_no_other_effect_of_a_held_cause():
    # "Blasting at the Tamsin quarry cracked the rock" / "The Tamsin quarry produces
    # limestone": the two causes share two words, but the profile tells another effect.
    triples = [
        _t("blasting at Tamsin quarry", "cracked rock", "blast"),
        _t("Tamsin quarry", "limestone", "profile"),
    ]
    assert documents_linked_by_triples(["blast"], triples, upstream=True) == []
    assert documents_linked_by_triples(["blast"], triples, upstream=False) == ["profile"]
    assert documents_linked_by_triples(["blast"], triples) == ["profile"]
    # Likewise a question for effects takes no other cause of a held effect.
    triples = [_t("storm", "damage to roads", "storm"), _t("flood", "damage to roads", "flood")]
    assert documents_linked_by_triples(["storm"], triples, upstream=False) == []
    assert documents_linked_by_triples(["storm"], triples, upstream=True) == ["flood"]


def test_a_sibling_that_tells_an_event_still_links():
    # "The Fed raised its interest rates" beside "the interest rate differential" (the
    # answer to why the peso's rally may end): news, not a profile.
    triples = [
        Triple("interest rate differential", "is", "Philippines", document_id="held",
               sentence="The interest rate differential matters for the Philippines."),
        Triple("Fed raised interest rates", "causes", "rally nearing end", document_id="fed",
               sentence="The rally may end after the Fed raised interest rates."),
        Triple("interest rate cuts", "causes", "growth", document_id="profile",
               sentence="Interest rate cuts usually spur growth."),
    ]

    assert documents_linked_by_triples(["held"], triples, upstream=True) == []
    news = _Events("raised")
    found = documents_linked_by_triples(["held"], triples, upstream=True, event_reader=news)
    assert found == ["fed"]


def test_only_the_best_similar_spans_link_within_the_margin():
    similar = _similar_to({("cold", "boilers"): 0.40, ("cold", "roads"): 0.37,
                           ("cold", "240"): 0.30})
    linked = documents_linked_by_triples(["closure"], SCHOOL, upstream=True, similarity=similar,
                                         rounds=1)
    assert linked == ["boilers", "snow"]  # 0.30 is more than 0.05 under the best, 0.40


def test_upstream_a_similar_span_may_name_the_event_of_a_relation():
    # "The floodwater contaminated the wells" / "Torrential rain flooded Kessa district":
    # the flood is the relation and its effect; the effect alone is a place.
    triples = [Triple("rain", "flooded", "Kessa district", document_id="rain"),
               Triple("floodwater", "contaminated", "wells", document_id="wells",
                      cause_text="The floodwater")]
    similar = _similar_to({("floodwater", "flooded"): 0.51, ("floodwater", "Kessa"): 0.18})
    assert documents_linked_by_triples(["wells"], triples, upstream=True) == []
    assert documents_linked_by_triples(
        ["wells"], triples, upstream=True, similarity=similar
    ) == ["rain"]
    # Downstream the continuing end is a cause, read alone (not with its relation).
    similar = _similar_to({("Kessa", "contaminated"): 0.51})
    assert documents_linked_by_triples(
        ["rain"], triples, upstream=False, similarity=similar
    ) == []


def test_a_name_at_the_open_end_is_not_followed_by_similarity():
    triples = [_t("SDP chairman Takako Doi", "opposition to bill", "a"),
               _t("long talks", "two failed to reach accord", "b")]
    similar = _similar_to({("Doi", "accord"): 0.5})
    assert documents_linked_by_triples(["a"], triples, upstream=True, similarity=similar) == []


def test_a_thing_of_a_named_owner_is_followed_by_similarity():
    # "Hackers locked the computer systems of Corvo General Hospital" / "Without access to
    # patient records, doctors postponed all planned surgery": the open end is a thing of
    # a named owner, not a name; "Port of Alvik" is a name.
    triples = [_t("hackers", "computer systems of Corvo General Hospital", "attack"),
               _t("access to patient records", "doctors postponed surgery", "surgery")]
    similar = _similar_to({("computer", "access"): 0.44})
    assert documents_linked_by_triples(
        ["attack"], triples, upstream=False, similarity=similar
    ) == ["surgery"]
    port = [_t("storm", "Port of Alvik", "storm"), _t("access to harbour", "ships waited", "ships")]
    similar = _similar_to({("Port", "access"): 0.44})
    assert documents_linked_by_triples(["storm"], port, upstream=False, similarity=similar) == []


def test_an_irregular_past_meets_the_noun_of_its_verb():
    # "An audit found that 2 million euros were missing" / "The findings sparked protests".
    docs = [SourceDocument("audit", "An audit found that 2 million euros were missing."),
            SourceDocument("protests", "The findings sparked protests outside the town hall.")]
    triples = [_t("findings", "protests", "protests")]
    assert documents_stating_open_causes(
        ["protests"], triples, docs, event_reader=_Events("found")
    ) == ["audit"]
    assert node_words("prices rose") & node_words("the rise in prices") == {"price", "rise"}
    # Words that are also words of their own stay themselves.
    assert "leav" not in node_words("he left the club")


def test_rounds_limit_how_far_links_go():
    chain = [_t(f"step{i} event", f"step{i + 1} event", f"d{i}") for i in range(5)]
    # "step1 event" / "step1 event" share two words; each round reaches one document further.
    assert documents_linked_by_triples(["d0"], chain, rounds=2) == ["d1", "d2"]
    assert documents_linked_by_triples(["d0"], chain, rounds=9) == ["d1", "d2", "d3", "d4"]


def _toy_similarity(a, b):
    """Deterministic stand-in cosines in [0, 0.5)."""
    return [[random.Random(f"{x}|{y}").random() / 2 for y in b] for x in a]


def _brute_force_linked(start, triples, rounds, upstream, similarity=None):
    docs = list(dict.fromkeys(t.document_id for t in triples))
    of = {d: [t for t in triples if t.document_id == d] for d in docs}
    stems = node_words

    def content(name):
        return [w for w in re.findall(r"\w+", name) if w.lower() not in STOP and not w.isdigit()]

    def event(name):
        return len(content(name)) >= 2 or (len(content(name)) == 1 and content(name)[0].islower())

    def capitalised(name):
        words = [w for w in re.findall(r"\w+", name) if w.lower() not in STOP]
        return 2 * sum(w[0].isupper() for w in words) > len(words)

    taken, new, linked = set(start), [d for d in start if d in of], []
    for _ in range(rounds):
        # (held end, role) of the new documents' triples; a question for causes takes no
        # candidate cause naming a held cause, one for effects no effect naming an effect.
        names = [(stems(n), role) for d in new for t in of[d]
                 for n, role in ((t.cause, "cause"), (t.effect, "effect"))]
        barred = {True: ("cause", "cause"), False: ("effect", "effect")}.get(upstream)
        ends, spans, told_events = [], [], []
        if upstream is not None:
            for d in new:
                inner = {t.effect if upstream else t.cause for t in of[d]}
                for t in of[d]:
                    name, span = (t.cause, t.cause_text) if upstream else (t.effect, t.effect_text)
                    if name not in inner and event(name):
                        ends.append(stems(name) | (stems(span) if len(stems(name)) >= 2 else set()))
                        if upstream is False:  # downstream, the end told with its relation
                            told_events.append((stems(t.relation), stems(span or name)))
                        if not capitalised(name) and (span or name) not in spans:
                            spans.append(span or name)
        first_link = {}  # document -> position of its first triple that links
        for d in docs:
            if d in taken:
                continue
            for t in of[d]:
                near = any(len(stems(n) & m) >= 2 and (own, role) != barred
                           for n, own in ((t.cause, "cause"), (t.effect, "effect"))
                           for m, role in names)
                told = stems(t.effect) | stems(t.relation) if upstream else stems(t.cause)
                goes_on = upstream is not None and any(told & e for e in ends)
                cause = stems(t.cause)
                by_relation = bool(cause) and any(
                    cause & r and cause <= r | e for r, e in told_events
                )
                if near or goes_on or by_relation:
                    first_link[d] = triples.index(t)
                    break
        found = sorted(first_link, key=first_link.get)
        if similarity is not None and upstream is not None:
            others = [t for t in triples if t.document_id not in taken | set(found)]

            def side(t):
                return (t.effect_text or t.effect) if upstream else (t.cause_text or t.cause)

            def score_of(span, t):
                # Upstream a triple is also read as its event: the relation and its effect.
                score = similarity([span], [side(t)])[0][0]
                if upstream:
                    score = max(score, similarity([span], [f"{t.relation} {side(t)}"])[0][0])
                return score

            similar = []
            for t in others:
                for span in spans:
                    score = score_of(span, t)
                    best = max(score_of(span, o) for o in others)
                    if score >= 0.25 and score >= best - 0.05 and t.document_id not in similar:
                        similar.append(t.document_id)
            found += similar
        if not found:
            break
        linked += found
        taken |= set(found)
        new = found
    return linked


@pytest.mark.parametrize("seed", range(60))
def test_near_miss_links_match_their_definition_on_random_cases(seed):
    rng = random.Random(seed)
    vocab = ["storm", "power lines", "power cut", "cooling", "milk", "plant", "deliveries",
             "reefs", "fish", "harvest", "failure", "Italy", "the"]
    def phrase():
        return " ".join(rng.sample(vocab, rng.randint(1, 2)))

    triples = []
    for _ in range(rng.randint(1, 12)):
        cause, effect = phrase(), phrase()
        spans = {} if rng.random() < 0.5 else {"cause_text": f"the {cause} of {phrase()}",
                                               "effect_text": f"{effect} in {phrase()}"}
        relation = rng.choice(["causes", "cooling", "led to", "failure"])
        doc = f"d{rng.randint(0, 6)}"
        triples.append(Triple(cause, relation, effect, document_id=doc, **spans))
    start = [f"d{i}" for i in rng.sample(range(7), rng.randint(1, 2))]
    rounds, upstream = rng.randint(1, 3), rng.choice([None, True, False])
    similarity = rng.choice([None, _toy_similarity])
    got = documents_linked_by_triples(start, triples, rounds, upstream=upstream,
                                      similarity=similarity)
    assert got == _brute_force_linked(start, triples, rounds, upstream, similarity)


def test_stems_are_right_under_concurrent_queries():
    # The stemmer keeps the word it works on in itself; without the lock, threads that
    # switch often mix up each other's words.
    import sys
    from concurrent.futures import ThreadPoolExecutor

    from sarg_integrations import links

    words = [f"{stem}{n}{suffix}" for n in range(400) for stem in ("pollinat", "deliver")
             for suffix in ("ion", "ed", "ing", "s", "ations")]
    expected = [links._stemmer().stemWord(w) for w in words]
    links._stem.cache_clear()
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so an unguarded stemmer fails
    try:
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(links._stem, words))
    finally:
        sys.setswitchinterval(old)
        links._stem.cache_clear()
    assert got == expected


# ------------------------------------------------ what the question asks, when unsure


class _UnsureDirection:
    """A classifier that walks both ways for want of a margin, with these scores."""

    def __init__(self, scores):
        self.scores = scores

    def predict_direction(self, query, query_embedding=None):
        return DirectionPrediction(
            Direction.BIDIRECTIONAL, self.scores["bidirectional"], self.scores, method="unsure"
        )


@pytest.mark.parametrize(
    ("scores", "asked"),
    [
        # "Why was the Pella valley road closed?": backward 0.55, bidirectional 0.44.
        ({"forward": 0.01, "backward": 0.55, "bidirectional": 0.44}, Direction.BACKWARD),
        ({"forward": 0.50, "backward": 0.02, "bidirectional": 0.48}, Direction.FORWARD),
        ({"forward": 0.01, "backward": 0.44, "bidirectional": 0.55}, Direction.BIDIRECTIONAL),
        # A tie at the top says nothing: both ways, as predicted.
        ({"forward": 0.45, "backward": 0.45, "bidirectional": 0.10}, Direction.BIDIRECTIONAL),
    ],
)
def test_an_unsure_walk_both_ways_still_asks_for_causes(monkeypatch, scores, asked):
    import sarg_integrations.pipeline as pipeline_module

    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs["direction"])
        return compile_evidence(*args, **kwargs)

    monkeypatch.setattr(pipeline_module, "compile_evidence", spy)
    pipeline = SARGPipeline(
        SARGConfig(similarity_threshold=0.6),
        extractor=PatternExtractor(),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("crop damage"),
        direction_classifier=_UnsureDirection(scores),
        event_reader=PastTenseWords(),
        profile_reader=NoProfiles(),
    )
    result = pipeline.run("Why did crop damage happen?", STORY)
    # The traversal walks both ways; the evidence policy reads what the question asks.
    assert result.direction.direction is Direction.BIDIRECTIONAL
    assert seen == [asked] and result.direction.asked is asked


def test_a_question_for_effects_links_the_document_stating_the_asked_event():
    docs = [
        SourceDocument("ban", "In 2024 the region banned the pesticide clorin."),
        SourceDocument("after", "After the ban, bee colonies recovered; the rain fed the flowers."),
        SourceDocument("apples", "The recovery of the bee colonies raised apple yields."),
        SourceDocument("storm", "The storm brought rain to the valley."),
    ]
    triples = [
        Triple("region", "banned", "pesticide clorin", document_id="ban"),
        Triple("ban", "after", "bee colonies recovered", document_id="after"),
        Triple("rain", "fed", "flowers", document_id="after"),
        Triple("recovery of bee colonies", "raised", "apple yields", document_id="apples"),
        Triple("storm", "brought", "rain", document_id="storm"),
    ]
    held = [EvidencePassage("after", docs[1].text, (1,))]
    # Downstream as before; one step upstream only from the chains' first node, "ban"
    # ("banned" shares its stem), not from the other open cause, "rain".
    found = linked_evidence(docs, held, triples, "forward", starts=["ban"])
    assert [(p.document_id, p.selected_by) for p in found] == [
        ("apples", "linked"),
        ("ban", "linked"),
    ]
    assert [p.document_id for p in linked_evidence(docs, held, triples, "forward")] == ["apples"]


CORAL = [
    SourceDocument("heat", "A marine heatwave raised sea temperatures in Palu bay."),
    SourceDocument("bleaching", "The heat bleached most of the bay's coral reefs."),
    SourceDocument("catch", "As the reefs died, fishermen's catches fell by half."),
    SourceDocument("divers", "Palu bay is popular with divers."),
]
CORAL_TRIPLES = [
    Triple("marine heatwave", "raised", "sea temperatures in Palu bay", document_id="heat"),
    Triple("heat", "bleached", "coral reefs", document_id="bleaching"),
    Triple("reefs died", "as", "catches fell", document_id="catch"),
]


def test_the_story_goes_on_from_a_document_the_relevance_fill_brought_in():
    # "sea temperatures" / "the heat" is world knowledge: no link, so the bleaching
    # document comes in by relevance; the catch document continues it ("reefs").
    held = [EvidencePassage("heat", CORAL[0].text, (1,)),
            EvidencePassage("bleaching", CORAL[1].text, (), selected_by="relevance")]
    found = onward_evidence(CORAL, held, CORAL_TRIPLES, "forward")
    assert [(p.document_id, p.selected_by) for p in found] == [("catch", "linked")]
    # Asked for causes, the story is followed upstream only: nothing explains the heat.
    assert onward_evidence(CORAL, held, CORAL_TRIPLES, "backward") == []


def test_only_the_fill_is_linked_on():
    # Chain and linked documents were linked already; with no fill there is nothing to do.
    held = [EvidencePassage("heat", CORAL[0].text, (1,)),
            EvidencePassage("bleaching", CORAL[1].text, (), selected_by="linked")]
    assert onward_evidence(CORAL, held, CORAL_TRIPLES, "forward") == []
    # A document already held is not added twice.
    held += [EvidencePassage("catch", CORAL[2].text, (), selected_by="relevance")]
    held[1] = EvidencePassage("bleaching", CORAL[1].text, (), selected_by="bridge")
    assert onward_evidence(CORAL, held, CORAL_TRIPLES, "forward") == []


# ------------------------------------------------------- documents stating a story's start


@pytest.mark.slow  # the packaged spaCy pipeline tags the verbs
@pytest.mark.parametrize(
    ("text", "present"),
    [
        ("Norovirus is a common cause of stomach illness.", True),
        ("Hydroelectric power provides about half of the country's electricity.", True),
        ("Glass is made by melting sand at around 1,500 degrees.", True),
        ("Flu vaccines are updated every year to match the strains in circulation.", True),
        ("The province banned wolf hunting in the forest in 2010.", False),
        ("The Corran dam was built in 1958 to supply the city with water.", False),
        ("Without buses, many pupils had no way to get home.", False),
        ("Rents have climbed 35 percent in two years.", False),
        ("German navy ships have been patrolling the coast.", False),
        ("Olmert will seek to bolster European support for Israel.", False),  # a plan
        ("Three shops on the high street closed by the summer.", False),  # a VBN root
        ("The weaker flow let salt water push up the estuary.", False),  # "let", not "lets"
        # ... but a name's number is not in its tag: "say" has a past of its own.
        ("British Transport Police say cable theft costs the railway millions a year.", True),
        ("A water main burst under Tarrow Street on Monday.", False),  # no verb read
        # A noun with its article is no verb, even tagged as one ("barges" as VBZ).
        ("The stuck barges delayed coal deliveries to the Tarn power plant.", False),
        # A bare verb with its own subject is a present one ("wait" tagged VB).
        ("Patients at the emergency department wait an average of six hours to be seen at "
         "night.", True),
        # A state told in the present as one that came about is no profile ...
        ("Shopkeepers say foot patrols in the centre are now a rare sight.", False),
        ("Morning tailbacks on the A61 into Lowmarsh now stretch for six miles.", False),
        ("Milk deliveries to the cooperative are down 18 percent on last year.", False),
        ("Letting agents report that rents are up 25 percent in a year.", False),
        ("Larger container ships can no longer enter the port at low tide.", False),
        ("Waiting lists in Essendine are now the longest on record.", False),
        ("Sea temperatures off the Harran Banks are 2C above normal.", False),
        # ... but a profile that has been so since a year is.
        ("Since 2004 the line now runs hourly.", True),
        ("", False),
    ],
)
def test_which_statements_are_told_in_the_present(text, present):
    assert states_in_present(text) is present


@pytest.mark.slow  # the packaged spaCy pipeline tags the verbs
@pytest.mark.parametrize(
    ("text", "profile"),
    [
        ("Norovirus is a common cause of stomach illness.", True),  # in the present
        ("The Brennock steelworks once produced a tenth of the country's steel.", True),
        ("Marta Lind previously taught chemistry at Dellcross Grammar for 12 years.", True),
        ("Harlan University's music department was known for its chamber choir.", True),
        ("Once the dam broke, the valley flooded within hours.", False),  # a conjunction
        ("The steelworks shut down on Friday.", False),
        ("The stuck barges delayed coal deliveries to the Tarn power plant.", False),
        ("Shopkeepers say foot patrols in the centre are now a rare sight.", False),
        ("", False),
    ],
)
def test_which_statements_state_a_profile(text, profile):
    # The default profile reader: the present, or a past told as background.
    assert states_profile(text) is profile
    assert PresentTenseProfileReader().states_profile(text) is profile


@pytest.mark.slow  # the packaged spaCy pipeline tags the verbs
@pytest.mark.parametrize(
    ("text", "event"),
    [
        ("In March the government raised tariffs on imported cotton.", True),
        ("A wildfire near Ostra burned through the hills for six days.", True),  # root misparsed
        ("The Marno bus company could not hire enough drivers this autumn.", True),
        ("Thousands of tonnes of crude oil leaked onto the beaches.", True),
        ("The plant had to cut its output by half.", True),
        ("Measles cases have risen sharply.", True),
        ("Six school routes were cut.", True),
        # "barges" tagged as the verb, "delayed" as an adjective: an article marks a noun.
        ("The stuck barges delayed coal deliveries to the Tarn power plant.", True),
        ("The hills above Ostra are covered with pine and oak forests.", False),
        ("The Norbeck textile factory employs 1,200 people and makes cotton shirts.", False),
        ("Ostra is a market town of about 9,000 people.", False),
        ("Desert locusts can travel up to 150 kilometres a day.", False),
        ("Cod and hake are the main catches landed at Velmar.", False),
        ("The ferry terminal opened in 1978 and has two berths.", False),  # dated: history
        ("The gym was built in 1974.", False),
        # ... but a new thing's coming to be is a step, dated or not.
        ("A hydroelectric dam was built across the lower Karsk River in 2005.", True),
        ("Measles was first described in the ninth century.", False),
        ("The port was a busy place.", False),  # a copula tells no event
        # ... but a past state told as an outcome does.
        ("As a result, two million customers had no mobile service for most of Sunday.", True),
        ("The mill had 200 workers.", False),
        # ... and so does one framed as having come about or lasted a while.
        ("By February most of the ski slopes at Kelso were bare grass.", True),
        ("By morning, visibility at the airport was below 50 metres.", True),
        ("By the end of the week, the shelves were empty.", True),
        ("Thousands of flats in Lorsk had no heating for four days.", True),
        ("By contrast, the old town was quiet.", False),
        ("By 1990 the town was a busy port.", False),  # dated: history
        # "Last year", a past decade: history too, unless the year is compared with.
        ("Port Ardane handled 1.2 million containers last year.", False),
        ("Last year's display raised £6,000 for the local hospice.", False),
        # A present modal with a changed state tells what came about; without one, a rule.
        ("Patients must now travel 30 miles to Carrick General.", True),
        ("Larger container ships can no longer enter at low tide.", True),
        ("Visitors can park in the square on market days.", False),
        ("Farmers paid nearly twice last year's price for hay.", True),
        ("Tourism officials say hiking visits have grown over the past decade.", False),
        ("Westbridge hospital delivered 620 babies, down from 800 a decade ago.", False),
        ("Traders charged nearly twice last year's price for apples.", True),
        ("The vaccination clinic closed in January last year after its lease expired.", True),
        # A present state told as one that came about is what happened.
        ("Shopkeepers say foot patrols in the centre are now a rare sight.", True),
        ("Milk deliveries to the cooperative are down 18 percent on last year.", True),
        ("No lorries have been landed on the island since.", True),
        ("A fifth of its drivers have yet to finish the course.", True),
        ("Patients at the emergency department now wait an average of six hours to be seen "
         "at night, up from under three in September.", True),  # "wait" tagged VB
        # So is a state measured against a record or the norm, past or present.
        ("Hallowmere had its driest summer on record, with just 31mm of rain.", True),
        ("Snowpack in the Tessel Range was 55 percent below average at the end of winter.", True),
        ("Shelves at Hask's two grocery stores were almost bare by Monday.", True),
        ("Fishermen say their catches of cod are the best in thirty years.", True),
        ("The Vell Valley line carries about 6,200 passengers a day.", False),
        # A past told as background is no event.
        ("The Brennock steelworks once produced a tenth of the country's steel.", False),
        ("The principal previously taught physics at a school in Kenbury.", False),
        ("Harlan University's music department was known for its chamber choir.", False),
        ("Once the dam broke, the valley flooded within hours.", True),
        ("Hask has a population of 2,300 and relies on tourism.", False),
        ("Lorsk was a mining town for many years.", False),
        ("", False),
        ("The mill \udcd7 burned down.", True),  # a lone surrogate is read past
        # A step dated by its month tells an event, though a year describes its thing ...
        ("Ardnagh National School, which opened in 1894, closed its doors in June.", True),
        ("The 19th-century weir at Kilnsey was taken out last autumn.", True),
        # ... whose own past is no event of the sentence.
        ("Each June the Fenwick clinic treats Gaucher disease, a disorder that was first "
         "described in 1882.", False),
        # Undated but by a thing's year, a sentence is background.
        ("Kilbrannan Castle, built in the 1420s, served as a naval signal station.", False),
        # A root the parser misread (a participle with no auxiliary, a noun read as a
        # present with no subject) leaves the sentence's verb a clause of it.
        ("Freezing rain coated Larch Hollow in up to 25 millimetres of ice on January 14.", True),
        ("Workers extending Allerby sand quarry uncovered a Bronze Age log boat in May.", True),
        ("Drifts up to three metres deep built up on the pass during Sunday's blizzard.", True),
    ],
)
def test_which_documents_tell_a_past_event(text, event):
    assert tells_past_event(text) is event


STORY_START = [
    SourceDocument("tariff", "In March the government raised tariffs on imported cotton."),
    SourceDocument("costs", "The higher tariffs pushed up the cost of raw material."),
    SourceDocument("profile", "The factory employs 1,200 people and makes cotton shirts."),
    SourceDocument("history", "Tariffs on cotton were first raised in 1922."),
    SourceDocument("fire", "A wildfire near Ostra burned through the hills."),
    SourceDocument("smoke", "Smoke from the fire drifted over Ostra."),
    SourceDocument("town", "Ostra grew quickly after the war."),
]
STORY_START_TRIPLES = [
    Triple("higher tariffs", "pushed up", "cost of raw material", document_id="costs"),
    Triple("smoke from fire", "drifted over", "Ostra", document_id="smoke"),
]


@pytest.mark.slow  # the packaged spaCy pipeline tags the verbs
def test_a_document_telling_where_the_story_starts_is_linked_by_one_shared_stem():
    # "raised tariffs" / the open cause "higher tariffs"; the profile shares "cotton" with
    # the tariff document but no word with the open cause; the tariffs' history is dated.
    found = documents_stating_open_causes(["costs"], STORY_START_TRIPLES, STORY_START)
    assert found == ["tariff"]


@pytest.mark.slow  # the packaged spaCy pipeline tags the verbs
def test_the_open_causes_word_may_head_a_compound_and_a_place_name_links_nothing():
    # "wildfire" / "the fire"; "Ostra grew quickly" tells an event in the same place only.
    found = documents_stating_open_causes(["smoke"], STORY_START_TRIPLES, STORY_START)
    assert found == ["fire"]


@pytest.mark.slow  # the packaged spaCy pipeline tags the verbs
def test_a_document_with_triples_or_already_held_is_not_linked_this_way():
    stated = Triple("government", "raised", "tariffs", document_id="tariff")
    triples = [*STORY_START_TRIPLES, stated]
    assert documents_stating_open_causes(["costs"], triples, STORY_START) == []
    held = ["costs", "tariff"]
    assert documents_stating_open_causes(held, STORY_START_TRIPLES, STORY_START) == []


def test_only_causes_where_the_story_stops_are_followed():
    # The tariffs are explained by a held triple: no open cause names them.
    explained = Triple("trade dispute", "raised", "higher tariffs", document_id="x")
    triples = [*STORY_START_TRIPLES, explained]
    assert documents_stating_open_causes(["costs", "x"], triples, STORY_START) == []
    # from_ends limits the causes followed.
    assert documents_stating_open_causes(
        ["costs"], STORY_START_TRIPLES, STORY_START, from_ends={"something else"}
    ) == []


def test_what_tells_an_event_is_injected():
    found = documents_stating_open_causes(
        ["costs"], STORY_START_TRIPLES, STORY_START, event_reader=_Events("1922")
    )
    assert found == ["history"]
    held = [EvidencePassage("costs", STORY_START[1].text, (0,))]
    found = source_evidence(
        STORY_START, held, STORY_START_TRIPLES, "backward", event_reader=_Events("1922")
    )
    assert [p.document_id for p in found] == ["history"]


def test_the_pipeline_passes_its_event_reader_and_checks_it():
    with pytest.raises(ConfigError, match="event_reader"):
        SARGPipeline(extractor=PatternExtractor(), embedder=HashingEmbedder(),
                     keyphrase_extractor=FixedKeyphrases("x"), event_reader=object())


@pytest.mark.slow  # the packaged spaCy pipeline tags the verbs
def test_source_evidence_follows_the_question_direction():
    held = [EvidencePassage("smoke", STORY_START[5].text, (0,))]
    for direction in ("backward", "forward"):
        found = source_evidence(STORY_START, held, STORY_START_TRIPLES, direction,
                                starts=["smoke from fire"])
        assert [(p.document_id, p.selected_by) for p in found] == [("fire", "linked")]
    # For effects, only the chains' first nodes (the asked event) are followed upstream.
    assert source_evidence(STORY_START, held, STORY_START_TRIPLES, "forward", starts=["x"]) == []
    # A question asking neither way is filled by relevance instead.
    assert source_evidence(STORY_START, held, STORY_START_TRIPLES, "bidirectional") == []
    assert source_evidence(STORY_START, held, STORY_START_TRIPLES, None) == []


def test_the_pipeline_links_the_document_telling_the_storys_start_with_its_event_reader():
    docs = [
        {"id": "storm", "text": "A winter storm battered the coast for three days."},
        {"id": "damage", "text": "Storm damage leads to power cuts."},
        {"id": "cuts", "text": "Power cuts results in closed schools."},
        {"id": "coast", "text": "The coast is popular with storm chasers."},
    ]
    pipeline = SARGPipeline(
        SARGConfig(similarity_threshold=0.6),
        extractor=PatternExtractor(lowercase=True),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("closed schools"),
        direction_classifier=CueWordDirectionClassifier(),
        event_reader=PastTenseWords(),
        profile_reader=NoProfiles(),
    )
    result = pipeline.run("Why were schools closed?", docs)
    held = [(p.document_id, p.selected_by) for p in result.evidence]
    # "battered" tells an event and "storm" is where the chain stops upstream; the
    # profile names the storm too, but tells no event.
    assert ("storm", "linked") in held and "coast" not in dict(held)
    pipeline.event_reader = _Events()
    held = [p.document_id for p in pipeline.run("Why were schools closed?", docs).evidence]
    assert "storm" not in held


# ------------------------------------------------------------ the asked event's document

CHECKIN = [
    SourceDocument("update", "A faulty update crashed the airline's check-in system."),
    SourceDocument("queues", "Without the check-in system, staff processed passengers by hand."),
    SourceDocument("stranded", "Hundreds of passengers missed their flights and were stranded."),
    SourceDocument("airline", "Tessa Airlines flies to 40 cities."),
]
CHECKIN_TRIPLES = [
    Triple("faulty update", "crashed", "airline's check-in system", document_id="update"),
    Triple("check-in system", "without", "staff processed passengers", document_id="queues"),
    Triple("Tessa Airlines", "flies to", "40 cities", document_id="airline"),
]


def _chain_in(*docs):
    hops = tuple(ChainHop("a", "b", "causes", RelationType.CAUSAL, True, (d,), ("",))
                 for d in docs)
    return ReasoningChain(("a",) + ("b",) * len(docs), hops, 1.0, Direction.BACKWARD)


def test_the_asked_events_document_anchors_the_chains_that_continue_it():
    chains = [_chain_in("update"), _chain_in("queues"), _chain_in("airline")]
    relevance = {"airline": 0.6, "stranded": 0.5, "queues": 0.3, "update": 0.2}
    query = "Why were Tessa Airlines passengers stranded?"
    found, kept = asked_event_evidence(query, CHECKIN, chains, CHECKIN_TRIPLES, relevance,
                                       "backward", PastTenseWords())
    assert [(p.document_id, p.selected_by) for p in found] == [("stranded", "entry")]
    # "passengers" links the queues; "check-in system" the update; not the profile.
    assert [c.document_ids for c in kept] == [("update",), ("queues",)]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"direction": "bidirectional"}, "a question asking neither way"),
        ({"direction": "forward"}, "nothing continues the stranding downstream"),
        ({"relevance": {"airline": 0.6, "update": 0.5, "queues": 0.3, "stranded": 0.2}},
         "the document is not among the two most relevant"),
        ({"query": "Why did the airline's profits fall?"}, "it does not name the asked event"),
        ({"reader": _Events("stopped", "closed")}, "it tells no event (by this reader)"),
    ],
)
def test_no_asked_events_document_without_all_its_conditions(change, why):
    args = {
        "query": "Why were Tessa Airlines passengers stranded?",
        "relevance": {"airline": 0.6, "stranded": 0.5, "queues": 0.3, "update": 0.2},
        "direction": "backward",
        "reader": PastTenseWords(),
    }
    args.update(change)
    chains = [_chain_in("update"), _chain_in("queues")]
    found = asked_event_evidence(args["query"], CHECKIN, chains, CHECKIN_TRIPLES,
                                 args["relevance"], args["direction"], args["reader"])
    assert found == ([], []), why


def test_a_document_with_triples_is_not_taken_for_the_asked_events():
    triples = [*CHECKIN_TRIPLES, Triple("crash", "stranded", "passengers", document_id="stranded")]
    chains = [_chain_in("update"), _chain_in("queues")]
    relevance = {"airline": 0.6, "stranded": 0.5, "queues": 0.3, "update": 0.2}
    assert asked_event_evidence("Why were passengers stranded?", CHECKIN, chains, triples,
                                relevance, "backward", PastTenseWords()) == ([], [])


def test_the_pipeline_anchors_chains_from_the_asked_events_document_instead_of_falling_back():
    docs = [
        {"id": "cuts", "text": "Power cuts results in cold pipes."},
        {"id": "burst", "text": "Hundreds of water pipes burst in Velden overnight."},
        {"id": "town", "text": "Velden water pipes and Velden chimneys are old."},
        {"id": "museum", "text": "The museum has a garden."},
    ]

    def run(reader):
        return SARGPipeline(
            SARGConfig(similarity_threshold=0.0),
            extractor=PatternExtractor(lowercase=True),
            embedder=HashingEmbedder(),
            keyphrase_extractor=FixedKeyphrases("water pipes burst"),
            direction_classifier=CueWordDirectionClassifier(),
            event_reader=reader,
            profile_reader=NoProfiles(),
        ).run("Why did water pipes burst in Velden?", docs)

    # Without the asked event's document the one-document chain is not anchored.
    before = run(_Events())
    assert before.used_fallback and before.fallback_reason == NO_ANCHORED_CHAINS
    result = run(_Events("burst"))  # the burst is news, the rest profiles
    assert not result.used_fallback
    assert [c.document_ids for c in result.chains] == [("cuts",)]
    held = [(p.document_id, p.selected_by) for p in result.evidence]
    assert held[:2] == [("burst", "entry"), ("cuts", "chain")]


# --------------------------------------------------------- documents following from others

@pytest.mark.parametrize(
    ("text", "continues"),
    [
        ("As a result, card payments by Dorne Bank customers were declined.", True),
        ("As a consequence, the mill closed.", True),
        ("Consequently the talks failed.", True),
        ("Therefore, the match was cancelled.", True),
        ("Because of this, the road stayed shut.", True),
        ("This meant that trains could not run.", True),
        ("For this reason the school closed early.", True),
        ("The council therefore closed the bridge to lorries in June.", True),
        ("In response, the council banned cars from the old town's streets.", True),
        ("As a result of this, egg prices rose.", True),
        # Their cause is their own.
        ("As a result of the storm, the road closed.", False),
        ("In response to the strike, the firm closed its plant.", False),
        ("Prices rose; therefore demand fell.", False),
        ("Heavy rain fell, and the river thus burst its banks.", False),
        ("The result was announced on Friday.", False),
    ],
)
def test_a_document_opening_with_a_result_connective_continues_earlier_text(text, continues):
    assert continues_earlier_text(text) is continues


def _word_overlap(a, b):
    """Cosine stand-in: the share of words two texts have in common (Jaccard)."""
    def bag(text):
        return set(re.findall(r"[a-z]+", text.lower()))

    return [[len(bag(x) & bag(y)) / len(bag(x) | bag(y)) for y in b] for x in a]


DORNE = [
    SourceDocument("update", "A faulty update was installed on the bank's payment servers."),
    SourceDocument("crash", "The update crashed the servers overnight."),
    SourceDocument("cards", "As a result, card payments by the bank's customers were declined."),
    SourceDocument("size", "The bank's payment servers are in Leeds."),
]


def test_the_antecedent_is_the_most_similar_document_telling_an_event():
    # "size" shares more words with "cards" than "crash" does, but tells no event.
    found = antecedent_documents(DORNE, _word_overlap, _Events("installed", "crashed"))
    assert found == {"cards": "update"}
    # Nothing continues earlier text: no antecedent, and no event is read at all.
    class Unread:
        def tells_event(self, text):
            raise AssertionError("read without need")

    assert antecedent_documents(DORNE[:2], _word_overlap, Unread()) == {}
    # No other document tells an event: none.
    assert antecedent_documents(DORNE, _word_overlap, _Events("declined")) == {}


def test_continued_evidence_follows_the_asked_way_and_repeats():
    docs = [SourceDocument("a", "A storm cut the power."),
            SourceDocument("b", "As a result, the presses stopped."),
            SourceDocument("c", "This meant that papers came late."),
            SourceDocument("d", "The plant prints four papers.")]
    antecedents = {"b": "a", "c": "b"}

    def held(*ids):
        return [EvidencePassage(i, "", ()) for i in ids]

    found = continued_evidence(docs, held("c"), "backward", antecedents)
    assert [(p.document_id, p.selected_by) for p in found] == [("b", "linked"), ("a", "linked")]
    found = continued_evidence(docs, held("a"), "forward", antecedents)
    assert [p.document_id for p in found] == ["b", "c"]
    assert continued_evidence(docs, held("a"), "backward", antecedents) == []
    assert continued_evidence(docs, held("c"), "bidirectional", antecedents) == []


def test_the_asked_events_document_is_continued_by_its_antecedent_and_what_followed_it():
    triples = [Triple("update", "crashed", "servers", document_id="crash")]
    relevance = {"cards": 0.7, "size": 0.5, "update": 0.3, "crash": 0.1}
    query = "Why were card payments declined?"
    reader = _Events("installed", "crashed", "declined")
    # Without the antecedent nothing continues the declined payments upstream.
    assert asked_event_story_evidence(query, DORNE, triples, relevance, "backward", reader) == []
    found = asked_event_story_evidence(query, DORNE, triples, relevance, "backward", reader,
                                       antecedents={"cards": "update"})
    assert [(p.document_id, p.selected_by) for p in found] == [
        ("cards", "entry"), ("update", "linked"), ("crash", "linked")]
    # The same story anchors a chain that no entry node anchored.
    chain = _chain_in("crash")
    found, kept = asked_event_evidence(query, DORNE, [chain], triples, relevance, "backward",
                                       reader, antecedents={"cards": "update"})
    assert [p.document_id for p in found] == ["cards"] and kept == [chain]
    assert asked_event_story_evidence(query, DORNE, triples, relevance, "bidirectional", reader,
                                      antecedents={"cards": "update"}) == []


def test_on_fallback_a_question_for_causes_gets_the_story_behind_the_asked_event():
    docs = [
        {"id": "update", "text": "A faulty update was installed on the card payment servers."},
        {"id": "crash", "text": "The update causes server crashes."},
        {"id": "cards", "text": "As a result, card payments were declined on Saturday."},
        {"id": "profile", "text": "Dorne Bank has two million customers in Wales."},
    ]
    result = SARGPipeline(
        SARGConfig(similarity_threshold=0.99),  # no entry node: the run falls back
        extractor=PatternExtractor(lowercase=True),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("card payments declined"),
        direction_classifier=CueWordDirectionClassifier(),
        event_reader=PastTenseWords(),
        profile_reader=NoProfiles(),
    ).run("Why were card payments declined on Saturday?", docs)
    assert result.used_fallback
    held = [(p.document_id, p.selected_by) for p in result.evidence]
    assert held == [("cards", "entry"), ("update", "linked"), ("crash", "linked")], held


def test_the_entry_documents_story_start_is_linked_too():
    # "Why did the price of heating oil in Kessel go up?": the strike document states the
    # best entry node; the document telling the strike itself is where its story starts.
    from sarg_integrations.prompting import PromptTemplate

    docs = [
        SourceDocument("price", "With supplies short, the price of oil rose by a third."),
        SourceDocument("supply", "The strike halted the refinery's output of oil."),
        SourceDocument("strike", "Workers at the refinery went on strike for two weeks."),
        SourceDocument("opened", "The refinery opened in 1974 and employs 800 people."),
    ]
    triples = [
        Triple("supplies short", "with", "price of oil rose", document_id="price"),
        Triple("strike", "halted", "refinery's output of oil", document_id="supply"),
    ]
    hop = ChainHop("price of oil rose", "supplies short", "with", RelationType.CAUSAL, False,
                   ("price",), ("",))
    chain = ReasoningChain(("price of oil rose", "supplies short"), (hop,), 1.0,
                           Direction.BACKWARD)
    compiled = compile_evidence(
        "Why did the price of oil go up?", docs, [chain], None,
        config=SARGConfig(), embedder=HashingEmbedder(), template=PromptTemplate(),
        triples=triples, direction="backward",
        entry_similarity={"refinery's output of oil": 0.8, "price of oil rose": 0.6},
        entry_documents={"refinery's output of oil": ["supply"], "price of oil rose": ["price"]},
        event_reader=_Events("went", "halted", "rose"),
        profile_reader=NoProfiles(),
    )
    held = [(p.document_id, p.selected_by) for p in compiled.evidence]
    assert held[:3] == [("price", "chain"), ("supply", "entry"), ("strike", "linked")], held
    assert "opened" not in dict(held)


def test_asked_for_effects_the_asked_events_document_may_hold_what_led_to_it():
    docs = [
        SourceDocument("closure", "The tannery closed in March after losing its biggest customer."),
        SourceDocument("jobs", "The closure cost 300 people their jobs."),
        SourceDocument("leather", "The tannery makes leather for shoes."),
    ]
    triples = [
        Triple("losing biggest customer", "precedes", "tannery closed", document_id="closure"),
        Triple("closure", "cost", "300 people", document_id="jobs"),
    ]
    chain = _chain_in("jobs")
    relevance = {"closure": 0.8, "leather": 0.6, "jobs": 0.2}
    query = "What did the closure of the tannery lead to?"
    reader = _Events("closed", "cost")
    # "closure" meets "closed" (links._DEVERBAL_NOUNS).
    found, kept = asked_event_evidence(query, docs, [chain], triples, relevance, "forward", reader)
    assert [(p.document_id, p.selected_by) for p in found] == [("closure", "entry")]
    assert kept == [chain]
    # Asked for causes, a document with a relation of its own is not the asked event's.
    assert asked_event_evidence(query, docs, [chain], triples, relevance, "backward",
                                reader) == ([], [])


@pytest.mark.parametrize(
    ("noun", "verb_text"),
    [("the closure", "the tannery closed"), ("the failure of the pumps", "the pumps failed"),
     ("the loss", "the club lost its licence"), ("their arrival", "the troops arrived"),
     ("the explosion", "a tank exploded")],
)
def test_a_noun_of_an_event_meets_its_verb(noun, verb_text):
    assert node_words(noun) & node_words(verb_text)


def test_a_question_for_causes_takes_the_step_after_a_chain_document():
    # "Why did the Lindy ferry stop running?": the walkout is a chain document, and
    # "Without crews, the ferry company could not sail its boats" continues it downstream
    # toward the asked stop; a profile continuing it stays out.
    docs = [
        SourceDocument("walkout", "Ferry crews in Lindy walked out over pay on Friday."),
        SourceDocument("crews", "Without crews, the ferry company could not sail its boats."),
        SourceDocument("union", "Crews run three sailings a day."),
        SourceDocument("stop", "The Lindy ferry therefore stopped running for the weekend."),
    ]
    triples = [
        Triple("pay", "over", "ferry crews walked out", document_id="walkout"),
        Triple("crews", "without", "company not sail boats", document_id="crews"),
        Triple("crews", "run", "three sailings a day", document_id="union"),
    ]
    held = [EvidencePassage("stop", docs[3].text, (), selected_by="entry"),
            EvidencePassage("walkout", docs[0].text, (0,), selected_by="chain")]
    found = linked_evidence(docs, held, triples, "backward",
                            event_reader=_Events("walked", "could not"))
    assert [(p.document_id, p.selected_by) for p in found] == [("crews", "linked")]


def _budget_evidence(query, docs, chain, triples, direction, budget, *event_words):
    """compile_evidence under a causal budget, with a word-matching event reader and no
    profiles: the fakes the budget-policy tests below share."""
    from sarg_integrations.prompting import PromptTemplate

    return compile_evidence(
        query, docs, [chain], None,
        config=SARGConfig(causal_evidence_budget=budget), embedder=HashingEmbedder(),
        template=PromptTemplate(), triples=triples, direction=direction,
        event_reader=_Events(*event_words), profile_reader=NoProfiles(),
    )


@pytest.mark.slow  # the packaged spaCy pipeline reads a dated sentence restating the event
def test_asked_what_happened_a_sentence_dated_as_history_links_no_document():
    # "Bee colonies were first counted in 1998" shares the story's bees, but a year dates
    # it as history: asked what happened it brings no document in, unless it tells the
    # asked event itself ("In 2024 the region banned the pesticide").
    docs = [
        SourceDocument("recovery", "After the ban, bee colonies recovered within two years."),
        SourceDocument("apples", "The recovered bee colonies raised apple yields."),
        SourceDocument("count", "Bee colonies were first counted in 1998."),
        SourceDocument("ban", "In 2024 the region banned the pesticide."),
    ]
    triples = [
        Triple("pesticide ban", "allowed", "bee colonies recovered", document_id="recovery",
               sentence=docs[0].text),
        Triple("recovered bee colonies", "raised", "apple yields", document_id="apples",
               sentence=docs[1].text),
        Triple("bee colonies", "counted in", "1998 survey", document_id="count",
               sentence=docs[2].text),
        Triple("region", "banned", "pesticide ban", document_id="ban", sentence=docs[3].text),
    ]
    hop = ChainHop("pesticide ban", "bee colonies recovered", "allowed", RelationType.CAUSAL,
                   True, ("recovery",), (docs[0].text,))
    chain = ReasoningChain(("pesticide ban", "bee colonies recovered"), (hop,), 1.0,
                           Direction.FORWARD)

    def held(query):
        compiled = _budget_evidence(query, docs, chain, triples, "forward", 0.3,
                                    "recovered", "raised", "banned")
        return [(p.document_id, p.selected_by) for p in compiled.evidence]

    asked = held("What happened after the pesticide ban?")
    assert ("apples", "linked") in asked and ("ban", "linked") in asked, asked
    assert "count" not in dict(asked)
    # Asked what a thing does (not what happened), the dated sentence links as before.
    assert ("count", "linked") in held("What does the pesticide ban lead to?")


@pytest.mark.parametrize(
    ("sentence", "query", "origin"),
    [
        ("The Corran dam was built in 1958 to supply the city with water.",
         "What happened after a crack was found in the Corran dam's spillway?", True),
        ("The Pelt cooperative was formed by 40 farming families.",
         "Why did the Pelt dairy cooperative cut the price it pays farmers?", True),
        ("Halvorsen's was founded in 1938 by Danish immigrant Erik Halvorsen.",
         "What were the consequences of the closure of Halvorsen's department store?", True),
        ("The Mossel canal was first dug in the 1820s.",
         "What happened after the lock on the Mossel canal broke?", True),
        ("Tillbrook Station was set up in 1872.",
         "Why were passengers stranded at Tillbrook Station overnight?", True),
        # A thing the question does not name may be a step of the story ...
        ("A hydroelectric dam was built across the lower Karsk River in 2005.",
         "Why did salmon disappear from the Karsk River?", False),
        # ... and a question about the origin itself asks for it.
        ("The Calder weir was built across the River Osk in 2015 to supply water to farms.",
         "How did building the Calder weir affect fishing families on the River Osk?", False),
        ("The Pelt cooperative was formed by 40 farming families.",
         "What happened after the Pelt cooperative was formed?", False),
        # Not an origin: the dam did something; nor one told later in the sentence.
        ("The Corran dam burst in 1958.", "What happened after the Corran dam burst?", False),
        ("In March, engineers said the Corran dam was built badly.",
         "Why was the Corran dam lowered?", False),
    ],
)
def test_tells_origin_of_a_thing_the_question_names(sentence, query, origin):
    assert tells_origin_of(sentence, query) is origin


def test_asked_what_happened_the_origin_of_a_named_thing_is_no_step_of_the_story():
    # "The Pelt cooperative was formed by 40 farming families": where the asked cooperative
    # came from carries no chain and starts no story (the chain is cut at it, and the
    # document is not brought in as the story's start), unless the question asks about it.
    docs = [
        SourceDocument("cut",
                       "Facing lower prices, the Pelt cooperative cut what it pays farmers."),
        SourceDocument("formed", "The Pelt cooperative was formed by 40 farming families."),
        SourceDocument("cows", "Dairy cows produce about 25 litres of milk a day."),
    ]
    triples = [
        Triple("Pelt cooperative", "cut", "pays farmers", document_id="cut", sentence=docs[0].text),
        Triple("40 farming families", "was formed by", "Pelt cooperative", document_id="formed",
               sentence=docs[1].text),
    ]
    hops = (
        ChainHop("pays farmers", "Pelt cooperative", "cut", RelationType.CAUSAL, False,
                 ("cut",), (docs[0].text,)),
        ChainHop("Pelt cooperative", "40 farming families", "was formed by", RelationType.CAUSAL,
                 False, ("formed",), (docs[1].text,)),
    )
    chain = ReasoningChain(("pays farmers", "Pelt cooperative", "40 farming families"), hops,
                           1.0, Direction.BACKWARD)

    def held(query):
        compiled = _budget_evidence(query, docs, chain, triples, "backward", 0.3, "cut", "formed")
        return [c.nodes for c in compiled.chains], [p.document_id for p in compiled.evidence]

    chains, evidence = held("Why did the Pelt cooperative cut the price it pays farmers?")
    assert chains == [("pays farmers", "Pelt cooperative")] and "formed" not in evidence, (
        chains, evidence)
    chains, evidence = held("Why did the Pelt cooperative, formed by farmers, cut its prices?")
    assert chains == [chain.nodes] and "formed" in evidence, (chains, evidence)


@pytest.mark.slow  # the packaged spaCy pipeline reads the events and their dates
def test_asked_what_followed_a_step_naming_its_things_year_is_filled():
    # The grocer's closure in August followed the opening; "since 1946" describes the
    # grocer and dates no step. The retail park's building in 1999 is history.
    docs = [
        SourceDocument("opened", "ValuWay opened a discount supermarket on Mardale's Eastgate "
                                 "retail park in March."),
        SourceDocument("grocer", "Pickering's, the family grocer on Mardale High Street since "
                                 "1946, closed in August, blaming a slump in trade."),
        SourceDocument("park", "The Eastgate retail park was built on the site of the old "
                               "gasworks in 1999."),
    ]
    held = _fallback_evidence(
        "What happened to Mardale High Street after ValuWay opened on the retail park?",
        docs, "forward", 0.8,
    )
    assert "opened" in held and "grocer" in held and "park" not in held, held


@pytest.mark.slow  # the packaged spaCy pipeline reads the events
def test_a_separate_event_is_no_step_of_the_asked_story():
    # The January fault tells itself apart from Tuesday's power cut ("a separate"); the
    # budget has room for it, but it is no step of the story asked about.
    docs = [
        SourceDocument("cut", "Around 5,200 homes in Tarrant Vale lost power on Tuesday "
                              "afternoon."),
        SourceDocument("digger", "A digger working off Longmead Lane cut through an "
                                 "underground cable on Tuesday."),
        SourceDocument("separate", "A separate fault in January left part of Tarrant Vale "
                                   "without power overnight."),
    ]
    held = _fallback_evidence("What caused the power cut that hit Tarrant Vale on Tuesday?",
                              docs, "backward", 1.0)
    assert "cut" in held and "digger" in held and "separate" not in held, held


@pytest.mark.slow  # the packaged spaCy pipeline reads the events
def test_a_causal_questions_fill_follows_no_bridge():
    # "A digger working for Brackley Homes" mentions the builder's page, which tells
    # another story (its award); asked what caused the power cut, the fill takes the
    # story's own step by relevance instead of following that bridge.
    from sarg_integrations.prompting import PromptTemplate

    docs = [
        SourceDocument("out", "Around 5,200 homes in Tarrant Vale lost power on Tuesday "
                              "afternoon."),
        SourceDocument("trip", "The power cut came when the Tarrant Vale substation tripped "
                               "on Tuesday."),
        SourceDocument("digger", "A digger working for Brackley Homes cut through the cable "
                                 "that feeds the substation."),
        SourceDocument("brackley", "Brackley Homes won a regional award for its eco-homes in "
                                   "May.", {"title": "Brackley Homes"}),
    ]
    stats: dict = {}
    compiled = compile_evidence(
        "What caused the power cut that hit Tarrant Vale on Tuesday?", docs, [], "no chains",
        config=SARGConfig(causal_evidence_budget=0.8), embedder=HashingEmbedder(),
        template=PromptTemplate(), triples=[], direction="backward",
        profile_reader=NoProfiles(), stats=stats,
    )
    held = [p.document_id for p in compiled.evidence]
    assert {"out", "trip", "digger"} <= set(held) and "brackley" not in held, held
    assert stats["evidence_bridged"] == 0


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("the chip shortage at Orvo", "Orvo could not get microchips", True),  # a compound
        ("the chip shortage at Orvo", "Orvo makes phones", False),
        # An irregular past meets its verb's other forms.
        ("What led to the meeting of the Group 20?",
         "The Group 20 first met in December 1999 following the Asian financial crisis.", True),
        ("What followed the shooting at the Tarn depot?", "Gunmen shot two guards in May.", True),
        ("Why were Fenbrook Rovers relegated?",
         "Fenbrook Rovers were promoted in 2017 after beating Castlemere Town.", False),
    ],
)
def test_names_same_event(a, b, same):
    assert names_same_event(a, b) is same
    assert names_same_event(b, a) is same


def test_asked_what_happened_a_chain_through_history_is_cut_unless_it_tells_the_asked_event():
    # "Fenbrook Rovers were promoted in 2017" carries the relegation question's chain into
    # the club's history; "The Group 20 first met in December 1999 following the crisis"
    # tells the asked meeting, so its chain stays.
    def held(query, sentence):
        docs = [SourceDocument("h", sentence), SourceDocument("o", "The club has 400 members.")]
        triples = [Triple("crisis", "precedes", "meeting", document_id="h", sentence=sentence)]
        hop = ChainHop("meeting", "crisis", "precedes", RelationType.TEMPORAL, False, ("h",),
                       (sentence,))
        chain = ReasoningChain(("meeting", "crisis"), (hop,), 1.0, Direction.BACKWARD)
        compiled = _budget_evidence(query, docs, chain, triples, "backward", 0.6,
                                    "met", "promoted")
        return [c.nodes for c in compiled.chains], compiled.fallback_reason

    chains, fallback = held(
        "Why were Fenbrook Rovers relegated?",
        "Fenbrook Rovers were promoted in 2017 after beating Castlemere Town.",
    )
    assert chains == [] and fallback == NO_EVENT_CHAINS
    chains, fallback = held(
        "What led to the meeting of the Group 20?",
        "The Group 20 first met in December 1999 following the Asian financial crisis.",
    )
    assert chains == [("meeting", "crisis")] and fallback is None


def test_asked_what_happened_a_history_sentence_naming_the_event_elsewhere_is_cut():
    # "Measles was declared eliminated in 2017" names the asked measles, but the document
    # most relevant to the question is the cases' own: the history sentence's chain is
    # another story's. Where it is the most relevant document, it may tell the asked
    # event ("The Group 20 first met in December 1999 …" above) and its chain stays.
    query = "What caused the measles cases among Dunholme schoolchildren?"
    history = "Measles was declared eliminated in the country in 2017."
    cases = "Nine measles cases among Dunholme schoolchildren were confirmed in March."
    docs = [SourceDocument("cases", cases), SourceDocument("history", history)]
    triples = [Triple("vaccination", "before", "measles eliminated", document_id="history",
                      sentence=history)]
    hop = ChainHop("measles eliminated", "vaccination", "before", RelationType.TEMPORAL,
                   False, ("history",), (history,))
    chain = ReasoningChain(("measles eliminated", "vaccination"), (hop,), 1.0,
                           Direction.BACKWARD)
    compiled = _budget_evidence(query, docs, chain, triples, "backward", 0.6,
                                "confirmed", "declared")
    assert compiled.chains == [] and compiled.fallback_reason == NO_EVENT_CHAINS
    # Alone, the history sentence is the most relevant document, and its chain stays.
    alone = _budget_evidence(query, docs[1:], chain, triples, "backward", 0.6, "declared")
    assert [c.nodes for c in alone.chains] == [("measles eliminated", "vaccination")]


@pytest.mark.parametrize(
    ("text", "followed"),
    [
        ("The junior section has since grown from 60 to 150 players.", True),
        ("Reservoir levels have since stabilised.", True),
        ("Since then, the ferry has run twice a week.", True),
        ("Ivo Brandt has managed Rusk Harbour FC since 2020.", False),  # dates a state
        ("Since the closure, patients have been sent to Harbury.", False),
    ],
)
def test_tells_what_followed(text, followed):
    assert tells_what_followed(text) is followed


FERRY_WHY = "Why did Lochvale Ferries suspend its evening crossings from Brennock?"


@pytest.mark.parametrize(
    ("text", "query", "came_of"),
    [
        ("Takings at the Harbour Inn have fallen by a third since the last evening boat "
         "was withdrawn.", FERRY_WHY, True),
        ("Commuters now drive round the loch because of the suspended crossings.",
         FERRY_WHY, True),
        ("In the wake of the crossings' suspension, the Brennock shop cut its hours.",
         FERRY_WHY, True),
        ("Pip's Bakery dropped its honey cake following the doubling of honey prices.",
         "Why did honey prices double at Kelderby market?", True),
        # The phrase holds no event word of the question: a cause told in time order.
        ("After the January gale, the slipway's ramp cracked.", FERRY_WHY, False),
        # Only names (Brennock) and dating words (year) are shared.
        ("Since Brennock's regatta last year, the harbour has been dredged.", FERRY_WHY, False),
        ("The insurer declined to renew cover after three claims last year.",
         "Why has this year's Yarrabee Muster been called off?", False),
        # "has since": an adverb, dating nothing.
        ("Rain has since leaked into the evening crossings' ticket office.", FERRY_WHY, False),
        ("The crossings were suspended until further notice.", FERRY_WHY, False),
    ],
)
def test_tells_what_came_of(text, query, came_of):
    assert tells_what_came_of(text, query) is came_of


def test_asked_why_what_came_of_the_event_leaves_but_the_most_relevant_document_stays():
    docs = [
        SourceDocument("asked", "Following the tests, Dorran's health department advised "
                       "adults to limit how much pike they eat."),
        SourceDocument("cause", "Tests found mercury in pike from Lake Dorran."),
        SourceDocument("later", "Anglers stopped fishing Lake Dorran after the advice to "
                       "limit how much pike people eat."),
    ]
    query = "Why did health officials advise people to limit how much pike they eat?"
    held = [EvidencePassage(d.id, d.text, (), selected_by="relevance") for d in docs]
    hop = ChainHop("mercury", "advice", "led to", RelationType.CAUSAL, True,
                   ("cause", "later"), ("", ""))
    chain = ReasoningChain(("mercury", "advice"), (hop,), 1.0, Direction.BACKWARD)
    relevance = {"asked": 0.9, "cause": 0.5, "later": 0.7}
    passages, chains = without_what_came_after(query, docs, held, [chain], relevance)
    # "asked" tells what came of the tests, not of the advice; "later" tells what came of
    # the advice and leaves, and the chain citing it with it.
    assert [p.document_id for p in passages] == ["asked", "cause"]
    assert chains == [] and all(p.chain_ids == () for p in passages)
    # The most relevant passage stays even when it tells what came of the event; without
    # relevance, the first passage does.
    passages, _ = without_what_came_after(query, docs, held[::-1], [], {"later": 0.95})
    assert [p.document_id for p in passages] == ["later", "cause", "asked"]
    passages, _ = without_what_came_after(query, docs, held[::-1], [])
    assert [p.document_id for p in passages] == ["later", "cause", "asked"]
    passages, _ = without_what_came_after(query, docs, held, [])
    assert [p.document_id for p in passages] == ["asked", "cause"]
    # Nothing to drop: the evidence and chains come back as they were.
    kept, kept_chains = without_what_came_after(query, docs, held[:2], [chain], relevance)
    assert kept == held[:2] and kept_chains == [chain]
    assert without_what_came_after(query, docs, [], [], relevance) == ([], [])


def _word_similarity(a, b):
    """Shared content words over the shorter text's: stands in for embedding cosines."""
    def words(text):
        return set(re.findall(r"[a-z]+", text.lower())) - {"the", "this", "that", "of", "a"}
    return [[len(words(x) & words(y)) / max(1, min(len(words(x)), len(words(y))))
             for y in b] for x in a]


BANK_WHY = "Why were Brindle Bank cards refused during the outage?"


@pytest.mark.parametrize(
    ("text", "told_after"),
    [
        # "the outage" is the asked event, named as the question names it.
        ("Following the outage, Brindle Bank paid every customer 25 pounds.", True),
        ("As a result of this outage, shops took cash only.", True),
        ("In the wake of the outage, a review began.", True),
        # The phrase is more like another document (the fire's): an earlier step.
        ("After the server fire, engineers rebuilt the data centre.", False),
        # Not an opening phrase, or not a definite event.
        ("Brindle Bank paid every customer 25 pounds after the outage.", False),
        ("After a long outage, shops took cash only.", False),
        # Restating the asked event: the event's own document.
        pytest.param(  # the packaged spaCy pipeline tags the verbs
            "Following the outage, Brindle Bank cards were refused for six hours.", False,
            marks=pytest.mark.slow,
        ),
    ],
)
def test_told_after_asked_event(text, told_after):
    docs = [
        SourceDocument("fire", "A server fire broke out in the bank's data centre."),
        SourceDocument("asked", "Cards were refused across the country for six hours."),
        SourceDocument("d", text),
    ]
    assert (told_after_asked_event(BANK_WHY, docs, _word_similarity) == {"d"}) is told_after


def test_told_after_asked_event_reads_no_empty_document_and_needs_an_opening():
    docs = [SourceDocument("e", "  "), SourceDocument("a", "A fire hit at noon.")]
    calls = []

    def similarity(a, b):
        calls.append((a, b))
        return _word_similarity(a, b)

    assert told_after_asked_event(BANK_WHY, docs, similarity) == set()
    assert calls == []  # nothing opens by what came after: nothing embedded
    docs.append(SourceDocument("l", "After the outage, the bank apologised."))
    assert told_after_asked_event(BANK_WHY, docs, similarity) == {"l"}
    assert calls == [(["the outage"], [BANK_WHY, "A fire hit at noon.",
                                       "After the outage, the bank apologised."])]
    # Only the documents ``among`` are read for an opening.
    assert told_after_asked_event(BANK_WHY, docs, similarity, among={"a"}) == set()
    assert len(calls) == 1


def test_asked_why_what_came_after_the_asked_event_in_other_words_leaves_with_similarity():
    docs = [
        SourceDocument("asked", "Cards were refused across the country for six hours."),
        SourceDocument("fire", "A server fire broke out in the bank's data centre."),
        SourceDocument("later", "Following the outage, the bank paid customers 25 pounds."),
    ]
    held = [EvidencePassage(d.id, d.text, (), selected_by="relevance") for d in docs]
    relevance = {"asked": 0.5, "fire": 0.3, "later": 0.9}
    # The most relevant passage stays for the word rule, not for this one.
    passages, _ = without_what_came_after(BANK_WHY, docs, held, [], relevance,
                                          _word_similarity)
    assert [p.document_id for p in passages] == ["asked", "fire"]
    passages, _ = without_what_came_after(BANK_WHY, docs, held, [], relevance)
    assert [p.document_id for p in passages] == ["asked", "fire", "later"]
    # Nothing is left with no passage: the most relevant one stays.
    passages, _ = without_what_came_after(BANK_WHY, docs, held[2:], [], relevance,
                                          _word_similarity)
    assert [p.document_id for p in passages] == ["later"]


def test_asked_what_followed_a_document_telling_what_has_happened_since_is_filled_first():
    # "The club ... lost at Mawby" is the more relevant event, but "Its junior section has
    # since grown" tells what followed something told before: a later step of the story.
    docs = [
        SourceDocument("lights", "The club switched on new floodlights in September."),
        SourceDocument("league", "With the lights on, the club started a junior league."),
        SourceDocument("lost", "After that the club switched its kit and lost at Mawby."),
        SourceDocument("grown", "Its junior section has since grown to 150 players."),
    ]
    triples = [Triple("lights", "with", "club started junior league", document_id="league",
                      sentence=docs[1].text)]
    hop = ChainHop("lights", "club started junior league", "with", RelationType.CAUSAL, True,
                   ("league",), (docs[1].text,))
    chain = ReasoningChain(("lights", "club started junior league"), (hop,), 1.0,
                           Direction.FORWARD)
    compiled = _budget_evidence(
        "What happened after the club switched on its new floodlights?", docs, chain, triples,
        "forward", 0.85, "switched", "started", "lost", "grown",
    )
    held = [p.document_id for p in compiled.evidence]
    assert "grown" in held and "lost" not in held, held


@pytest.mark.slow  # the packaged spaCy pipeline tags the verbs
@pytest.mark.parametrize(
    ("text", "query", "restated"),
    [
        ("Skellan Brewery moved its bottling operation from Ardry to Lockwick in 2023.",
         "What happened after Skellan Brewery moved its bottling out of Ardry?", True),
        ("Regulators banned scallop dredging in Kessa Bay in 2021.",
         "What were the consequences of the ban on scallop dredging in Kessa Bay?", True),
        # The same event's noun, not its verb: an earlier mention, no restatement.
        ("In 2020, before the ban, a skipper warned that it would finish off scallop fishing.",
         "What were the consequences of the ban on scallop dredging in Kessa Bay?", False),
        # An earlier time of the same event.
        ("The crane operators' union last struck in 2011.",
         "What happened after crane operators at Port Ardane went on strike?", False),
        # The same things, not what happened to them.
        ("The Marrowfield children's clinic opened in 1994 and has 40 beds.",
         "Why was the Marrowfield children's clinic overwhelmed in March?", False),
        # A present profile, though "barges" is misread as a verb.
        ("Coal barges on the Velde carry about 2,000 tonnes each.",
         "Why did coal barges stop on the Velde river?", False),
        # One shared word is not a restatement.
        ("Ardry Water raised household bills in 2024.",
         "What happened after Skellan Brewery moved its bottling out of Ardry?", False),
        # A participant of the asked event only.
        ("Beavers were released into the Linnet valley in 2017.",
         "What were the consequences of the beavers damming Linnet Brook?", False),
        # The asked event's verb.
        ("In 2021 beavers dammed Linnet Brook below the ford.",
         "What were the consequences of the beavers damming Linnet Brook?", True),
        # Three or more of the question's event words and most of them, the verb another.
        ("Brookhaven District Council brought in parking charges on the seafront in 2023.",
         "How did the introduction of seafront parking charges affect Brookhaven?", True),
        ("In 2021 Vellick Council granted planning permission for 200 homes on the old "
         "gasworks site.",
         "What happened after Vellick Council approved homes on the old gasworks site?", True),
        # ... but not told as an earlier time of the event.
        ("The crane operators' union last went on strike in 2011.",
         "What happened after crane operators at Port Ardane went on strike?", False),
        # Counted by the question's words: "decision" is one word, though it stems both
        # as itself and as "decide".
        ("Ferrow County Council ended free school buses for pupils in September 2023.",
         "What did the council's decision to end free school buses lead to?", True),
    ],
)
def test_restates_asked_event(text, query, restated):
    assert restates_asked_event(text, query) is restated


@pytest.mark.slow  # the packaged spaCy pipeline reads the restated event's verb
def test_asked_what_followed_a_dated_document_restating_the_asked_event_is_filled():
    # "... moved its bottling operation ... in 2023" holds no triple and is dated, as
    # history is; it tells the asked event in the question's words, so it is the story's
    # first step. The award, dated too, only names the brewery.
    docs = [
        SourceDocument("moved", "Skellan Brewery moved its bottling operation from Ardry to "
                                "Lockwick in 2023."),
        SourceDocument("supply", "The move ended the brewery's use of the town water supply."),
        SourceDocument("bills", "Ardry Water raised household bills by 22 percent."),
        SourceDocument("award", "Skellan Brewery's pale ale won gold at the beer awards in "
                                "2022."),
    ]
    triples = [
        Triple("move", "ended", "brewery's use of town water supply", document_id="supply",
               sentence=docs[1].text),
        Triple("end of brewery's use of town water supply", "raised", "household bills",
               document_id="bills", sentence=docs[2].text),
    ]
    hop = ChainHop("move", "brewery's use of town water supply", "ended",
                   RelationType.CAUSAL, True, ("supply",), (docs[1].text,))
    chain = ReasoningChain(("move", "brewery's use of town water supply"), (hop,), 1.0,
                           Direction.FORWARD)
    compiled = _budget_evidence(
        "What happened after Skellan Brewery moved its bottling out of Ardry?", docs, chain,
        triples, "forward", 0.8, "ended", "raised",
    )
    held = [p.document_id for p in compiled.evidence]
    assert "moved" in held and "award" not in held, held


@pytest.mark.parametrize(
    ("text", "years"),
    [
        ("Sales fell in 2022 after a record 2021.", (2022, 2021)),
        ("Vinyl came back in the 1990s.", (1990,)),
        ("Crews set off at 0915 from Pitsby, 14 miles away.", ()),
        ("About 12000 homes lost power.", ()),
        # Amounts, not years.
        ("The council paid £1500 in 2019, and 1,500 more in 2020.", (2019, 2020)),
        ("Prices rose 1200 percent; claims rose 1500%.", ()),
    ],
)
def test_years_named(text, years):
    assert years_named(text) == years


@pytest.mark.parametrize(
    ("text", "history"),
    [
        ("The Thornby industrial estate was expanded in 2018.", True),
        ("Vinyl came back in the 1990s.", True),
        ("Port Ardane handled 1.2 million containers last year.", True),
        ("The clinic closed in January last year.", False),
        # An amount is no year here either, as in years_named.
        ("The council paid £1500 for the repairs.", False),
        ("Claims rose 1500 percent after the flood.", False),
        ("The new hall seats 1,500 people.", False),
        # Years, winters ago: history too; "a year ago" is compared with.
        ("The food bank reported record demand over the holidays two years ago.", True),
        ("A case of bird flu was recorded at the reservoir two winters ago.", True),
        ("Beavers were hunted to extinction in the region around 400 years ago.", True),
        ("Rents are up 5 per cent on a year ago.", False),
    ],
)
def test_dated_as_history(text, history):
    assert dated_as_history(text) is history


@pytest.mark.slow  # the packaged spaCy pipeline finds the thing a year describes
@pytest.mark.parametrize(
    ("text", "history"),
    [
        # A year describing a thing dates no step told by its month or season ...
        ("Ardnagh National School, which opened in 1894, closed its doors in June.", False),
        ("Pickering's, the family grocer on Mardale High Street since 1946, closed in "
         "August, blaming a slump in trade.", False),
        ("The 19th-century weir on the River Aske was taken out last autumn.", False),
        # ... but a year dating the step itself does ...
        ("In 2016 Tessory Tackle sponsored a junior angling contest in May.", True),
        ("Ardry residents voted in a 2019 referendum in June to keep the utility.", True),
        # ... and with no step date, a thing's year makes the sentence background.
        ("Kilbrannan Castle, built in the 1420s, served as a naval signal station.", True),
        ("The Neighbourhood Watch scheme, founded in 1984, now has 60 coordinators.", True),
        # "may" is no month.
        ("Ardnagh School, which opened in 1894, may close.", True),
    ],
)
def test_a_year_describing_a_thing_dates_no_step(text, history):
    assert dated_as_history(text) is history


@pytest.mark.parametrize(
    ("sentence", "query", "another"),
    [
        ("A separate fault in January left part of Tarrant Vale without power overnight.",
         "What caused the power cut that hit Tarrant Vale on Tuesday?", True),
        ("In a separate case, a Wexham letting agent was fined for charging illegal fees.",
         "Why was the Wexham landlord banned?", True),
        ("A similar theft at a church in nearby Stowell was solved last year.",
         "What were the consequences of the lead theft at St Oswin's?", True),
        ("The path was rerouted once before, in 1986, after a slip.",
         "Why is the coast path at Scarrow Head shut?", True),
        ("A digger cut through an 11,000-volt cable off Longmead Lane.",
         "What caused the power cut that hit Tarrant Vale on Tuesday?", False),
        ("The school could not find another operator for the trip.",
         "Why was the school trip cancelled?", False),
        # Asked about such an event itself.
        ("A similar theft hit the chapel in May.", "Why did a similar theft go unsolved?",
         False),
    ],
)
def test_tells_another_event(sentence, query, another):
    assert tells_another_event(sentence, query) is another


@pytest.mark.parametrize(
    ("text", "within"),
    [
        ("Brenhow council bought the site in 2021.", True),
        ("The first homes are now not expected until 2026.", True),
        ("The airport was built as an air force base in 1940.", False),
        # Compared with a year before the window: not dated within it.
        ("Police recorded 46 crashes in 2022, up from 12 in 2017.", False),
        ("The airport closed its terminal.", False),
    ],
)
def test_dated_within(text, within):
    assert dated_within(text, 2019, 2099) is within


@pytest.mark.slow  # the packaged spaCy pipeline reads the verbs
@pytest.mark.parametrize(
    ("text", "told"),
    [
        ("Islander Air went bust in October 2019.", True),
        ("In 2022 the Glenmire Folk Festival moved to the showground.", True),
        ("Four beavers were released on the Hallow Brook in 2020.", True),
        # An earlier time of the same thing, background, a profile's present.
        ("Mount Ketar last erupted in 1911.", False),
        ("The mill once employed 400 people, in 1950.", False),
        ("The Skarra ferry terminal opened in 1978 and has two berths.", False),
        # A state, not something that happened; no year.
        ("The winter of 2022 was the mildest on record.", False),
        ("Islander Air went bust last autumn.", False),
    ],
)
def test_tells_dated_event(text, told):
    assert tells_dated_event(text) is told


@pytest.mark.slow  # the packaged spaCy pipeline tells a dated event
def test_story_years_start_at_the_asked_events_year():
    docs = [SourceDocument("bust", "Islander Air went bust in October 2019."),
            SourceDocument("built", "Brenhow Airport was built as an air force base in 1940."),
            SourceDocument("erupted", "Mount Ketar last erupted in 1911.")]
    relevance = {"bust": 0.7, "built": 0.6, "erupted": 0.1}
    query = "What happened after Brenhow Airport lost its only airline?"
    assert story_years(query, docs, relevance, "forward") == (2019, 2099)
    assert story_years(query, docs, relevance, Direction.FORWARD) == (2019, 2099)
    # The question's year first; a why-question's causes only by the question's year, from
    # two years before it; none for a question asking neither way.
    assert story_years("What followed the 2018 storm?", docs, relevance, "forward") == (2018, 2099)
    assert story_years(query, docs, relevance, "backward") is None
    why = "Why was the festival called off in 2023?"
    assert story_years(why, docs, relevance, "backward") == (2021, 2023)
    assert story_years(why, docs, relevance, "bidirectional") is None
    assert story_years(query, docs, relevance, "bidirectional") is None
    assert story_years(query, docs, relevance, None) is None
    # The most relevant document tells no event of its year, or where a thing came from.
    assert story_years(query, docs, {"erupted": 0.9, "bust": 0.5}, "forward") is None
    assert story_years(query, docs, {"built": 0.9, "bust": 0.5}, "forward") is None
    assert story_years(query, docs, None, "forward") is None


@pytest.mark.slow  # the packaged spaCy pipeline reads profiles and dated events
def test_story_years_pass_over_a_profile():
    # The steelworks' profile is the most relevant document, and dates no event; the
    # closure's own sentence, dated 2019, is next.
    docs = [SourceDocument("profile", "The Brennock steelworks once produced a tenth of "
                                      "the country's steel."),
            SourceDocument("shut", "The Brennock steelworks shut down in 2019 after 80 years "
                                   "of operation."),
            SourceDocument("homes", "Most homes in Brennock were built before 1930.")]
    query = "What did the closure of the Brennock steelworks lead to?"
    relevance = {"profile": 0.8, "shut": 0.7, "homes": 0.3}
    assert story_years(query, docs, relevance, "forward") == (2019, 2099)
    assert story_years(query, docs, {"profile": 0.8}, "forward") is None

    class EverythingAProfile:
        def states_profile(self, text):
            return True

    assert story_years(query, docs, relevance, "forward", EverythingAProfile()) is None


def _fallback_evidence(query, docs, direction, budget, stats=None):
    """The ids compile_evidence holds on fallback (no chains) under a causal budget, with
    the packaged event reader and no profiles (its counters into ``stats``)."""
    from sarg_integrations.prompting import PromptTemplate

    compiled = compile_evidence(
        query, docs, [], "no chains", config=SARGConfig(causal_evidence_budget=budget),
        embedder=HashingEmbedder(), template=PromptTemplate(), triples=[],
        direction=direction, profile_reader=NoProfiles(), stats=stats,
    )
    return [p.document_id for p in compiled.evidence]


@pytest.mark.parametrize(
    ("query", "way"),
    [
        ("Why did the number 14 bus stop running?", "backward"),
        ("What led Stenton police to start nightly patrols?", "backward"),
        ("What is behind the long waits for prescriptions?", "backward"),
        ("How did the plan for 250 homes come to be turned down?", "backward"),
        ("What followed the resignation of the mayor?", "forward"),
        ("What came of making the town centre a 20mph zone?", "forward"),
        ("What did this summer's drought lead to in Harlan Springs?", "forward"),
        ("What has the wind farm meant for Ardlochy?", "forward"),
        ("How has coastal erosion affected the golf club?", "forward"),
        ("What were the consequences of the fire at the hall?", "forward"),
        ("Who directed the film that won the award in 1994?", None),
        ("How are the blasts at the quarry and the hosepipe ban connected?", None),
    ],
)
def test_worded_direction(query, way):
    assert worded_direction(query) == (None if way is None else Direction(way))


@pytest.mark.slow  # the packaged spaCy pipeline tells the events
def test_a_causal_wording_read_as_bidirectional_gets_a_causal_questions_evidence():
    # The classifier reads "What followed …?" as asking neither way; its wording asks for
    # effects, so the fill is a causal question's: documents telling events only.
    docs = [
        SourceDocument("resigned", "Mayor Denholm Price of Aldermoor resigned on 9 January."),
        SourceDocument("election", "A by-election in March was won by Ruth Abara."),
        SourceDocument("profile", "Aldermoor is a market town with about 40,000 people."),
    ]
    stats = {}
    _fallback_evidence("What followed the resignation of the mayor of Aldermoor?", docs,
                       "bidirectional", 1.0, stats)
    assert stats.get("evidence_profiles_passed_over") == 1, stats


@pytest.mark.slow  # the packaged spaCy pipeline dates the documents
def test_asked_why_something_is_so_now_the_fill_passes_over_history():
    # The reason for a present state may be a state, so profiles stay fillable; history
    # says nothing of it ("More than 200 babies were born at the unit in 2022").
    docs = [
        SourceDocument("now", "Expectant mothers in Castlebrook now give birth in Dunmore."),
        SourceDocument("staff", "The Castlebrook unit is short of midwives, the board says."),
        SourceDocument("born", "More than 200 babies were born at the Castlebrook unit in 2022."),
    ]
    query = "Why are expectant mothers in Castlebrook now giving birth in Dunmore?"
    held = _fallback_evidence(query, docs, "backward", 1.0)
    assert "staff" in held and "born" not in held, held
    # Asked what happened, history is passed over as before (no event of the story).
    assert "born" not in _fallback_evidence(
        "Why did expectant mothers in Castlebrook give birth in Dunmore?", docs, "backward", 1.0
    )


@pytest.mark.slow  # the packaged spaCy pipeline reads the events
def test_asked_what_followed_a_step_dated_after_the_asked_event_is_filled():
    # Asked what followed the mill's closure (2019), the site's sale in 2021 is a later
    # step though dated by its year, as history is; the mill's building (1887) and its
    # team's cup (2012) came before the asked event and stay out.
    docs = [
        SourceDocument("shut", "The Harlow paper mill shut its gates in March 2019."),
        SourceDocument("built", "The Harlow paper mill was built by the Ashby family in 1887."),
        SourceDocument("sold", "In 2021 the owners sold the empty site to a housing developer."),
        SourceDocument("cup", "The Harlow paper mill's football team won the county cup in "
                              "2012."),
    ]
    held = _fallback_evidence("What happened after the Harlow paper mill shut down?", docs,
                              "forward", 0.6)
    assert "shut" in held and "sold" in held, held
    assert "built" not in held and "cup" not in held, held


@pytest.mark.slow  # the packaged spaCy pipeline reads the events
def test_asked_why_of_a_dated_event_a_cause_dated_that_year_is_filled():
    # The festival was called off in 2023; the council's budget cut that February is its
    # cause though dated by its year, and the festival's start in 1994 is history.
    docs = [
        SourceDocument("off", "Organisers cancelled the Elmby Lantern Festival in March."),
        SourceDocument("cut", "Elmby Town Council halved its events budget in February 2023."),
        SourceDocument("began", "The Elmby Lantern Festival began in 1994 and draws 8,000 "
                                "visitors."),
    ]
    held = _fallback_evidence("Why was the Elmby Lantern Festival called off in 2023?", docs,
                              "backward", 0.7)
    assert "off" in held and "cut" in held and "began" not in held, held


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        # The possessive's "s" is no word of what happened.
        ("Dunston's police station closed its front counter in 2017.",
         "What did the new CCTV cameras in Dunston's Market Square lead to?", False),
        ("The council's budget was halved.", "Why did the council's budget shrink?", True),
    ],
)
def test_a_possessive_names_no_same_event(a, b, same):
    assert names_same_event(a, b) is same
    assert "s" not in event_words(a) and "s" not in node_words(a)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # A name opening the text is a name: "Kelsall" is no word of what happened.
        ("Kelsall Rovers Women won the county cup", {"counti", "cup", "win", "won"}),
        ("Kelsall Rovers docked", {"dock"}),
        # A lone capitalised first word is the sentence's start, not a name.
        ("Heavy rain fell", {"fall", "fell", "heavi", "rain"}),
        ("A cyberattack on the Oslin transit company", {"compani", "cyberattack", "transit"}),
    ],
)
def test_event_words_leave_out_a_name_that_opens_the_text(text, words):
    assert event_words(text) == words


def test_a_same_club_document_states_no_open_cause_by_the_clubs_name():
    # "Kelsall Rovers docked" is where the story of the points deduction starts; the
    # women's team winning a cup shares only the club's name with it.
    triples = [Triple("Kelsall Rovers docked", "causes", "Kelsall Rovers relegated",
                      document_id="relegated")]
    docs = [
        SourceDocument("docked", "Kelsall Rovers were docked 12 points by the league."),
        SourceDocument("relegated", "Kelsall Rovers were relegated on the final day."),
        SourceDocument("cup", "Kelsall Rovers Women won the county cup on Sunday."),
    ]
    assert documents_stating_open_causes(["relegated"], triples, docs) == ["docked"]
