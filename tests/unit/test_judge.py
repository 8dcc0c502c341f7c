"""The evidence judge: its seam in the evidence policy, its files, its training data."""

from __future__ import annotations

import json
import re

import pytest
from fakes import FixedKeyphrases, HashingEmbedder, NoProfiles, PastTenseWords, PatternExtractor

from sarg_integrations import SARGConfig, SARGPipeline
from sarg_integrations.direction import CueWordDirectionClassifier
from sarg_integrations.errors import ConfigError, InputError, ModelLoadError
from sarg_integrations.evidence import judged_evidence
from sarg_integrations.judge import (
    DEFAULT_JUDGE_DIR,
    DEFAULT_SET_JUDGE_DIR,
    CombinedEvidenceJudge,
    EvidenceJudge,
    LearnedEvidenceJudge,
)
from sarg_integrations.judge.model import CONFIG_FILE, JudgeConfig
from sarg_integrations.judge.training import read_story_files
from sarg_integrations.schema import (
    ChainHop,
    Direction,
    EvidencePassage,
    ReasoningChain,
    RelationType,
    SourceDocument,
)


class WordJudge:
    """Scores a text by the words it holds: 'sure' words 0.99, 'doubt' words 0.02, else 0.5."""

    def __init__(self, sure=(), doubt=()):
        self.sure, self.doubt, self.calls = sure, doubt, []

    def score(self, query, texts):
        self.calls.append((query, list(texts)))
        return [
            0.99
            if any(w in t for w in self.sure)
            else 0.02
            if any(w in t for w in self.doubt)
            else 0.5
            for t in texts
        ]


def _chain(*docs):
    hops = tuple(ChainHop("a", "b", "causes", RelationType.CAUSAL, True, (d,), ("",)) for d in docs)
    return ReasoningChain(("a",) + ("b",) * len(docs), hops, 1.0, Direction.FORWARD)


DOCS = [
    SourceDocument("rain", "Heavy rain fell on Oakridge in May."),
    SourceDocument("flood", "The river flooded the fields."),
    SourceDocument("museum", "The Oakridge museum opened in 1901."),
    SourceDocument("prices", "Milk prices fell below the cost of production."),
]


def _passage(doc, selected_by="chain", chain_ids=()):
    return EvidencePassage(doc.id, doc.text, chain_ids, selected_by=selected_by)


def test_the_protocol_is_one_method():
    assert isinstance(WordJudge(), EvidenceJudge)
    assert not isinstance(object(), EvidenceJudge)


def test_judged_evidence_drops_low_passages_and_adds_sure_documents():
    held = [
        _passage(DOCS[0], chain_ids=(1,)),
        _passage(DOCS[1], chain_ids=(1,)),
        _passage(DOCS[2], "relevance"),
    ]
    stats = {}
    passages, chains = judged_evidence(
        "Why did the river flood?",
        DOCS,
        held,
        [_chain("rain", "flood")],
        WordJudge(sure=("Milk",), doubt=("museum",)),
        drop_below=0.1,
        add_above=0.9,
        stats=stats,
    )
    assert [(p.document_id, p.selected_by, p.chain_ids) for p in passages] == [
        ("rain", "chain", (1,)),
        ("flood", "chain", (1,)),
        ("prices", "judge", ()),
    ]
    assert len(chains) == 1
    assert stats == {"evidence_judged_out": 1, "evidence_judged_in": 1, "chains_judged_out": 0}


def test_only_what_relevance_brought_in_is_judged():
    held = [
        _passage(DOCS[2], "chain", (1,)),
        _passage(DOCS[0], "linked"),
        _passage(DOCS[1], "relevance"),
    ]
    passages, chains = judged_evidence(
        "Why did the river flood?",
        DOCS,
        held,
        [_chain("museum")],
        WordJudge(doubt=("museum", "Heavy", "river")),
        drop_below=0.1,
        add_above=None,
    )
    assert [(p.document_id, p.chain_ids) for p in passages] == [("museum", (1,)), ("rain", ())]
    assert len(chains) == 1


def test_a_linked_document_leaves_below_the_lower_bar():
    held = [
        _passage(DOCS[1], chain_ids=(1,)),
        _passage(DOCS[2], "linked"),
        _passage(DOCS[0], "linked"),
    ]
    judge = WordJudge(doubt=("museum", "river"))  # each scored 0.02; the rain 0.5
    stats = {}
    passages, chains = judged_evidence(
        "Why did the river flood?", DOCS, held, [_chain("flood")], judge,
        drop_below=0.9, add_above=None, drop_linked_below=0.05, stats=stats,
    )
    # The museum, linked and scored under the lower bar, leaves; the rain, linked and
    # over it (though under drop_below), and the chain's flood, whatever its score, stand.
    assert [(p.document_id, p.selected_by) for p in passages] == [
        ("flood", "chain"),
        ("rain", "linked"),
    ]
    assert len(chains) == 1 and stats["evidence_judged_out"] == 1
    assert judge.calls == [("Why did the river flood?", [DOCS[0].text, DOCS[2].text])]
    # Scored at the bar or above, it stays; and nothing is dropped by the bar alone.
    for bar in (0.02, 0.0):
        passages, _ = judged_evidence(
            "Why did the river flood?", DOCS, held, [_chain("flood")], judge,
            drop_below=0.9, add_above=None, drop_linked_below=bar,
        )
        assert [p.document_id for p in passages] == ["flood", "museum", "rain"]


def test_a_chain_through_a_dropped_passage_leaves_and_the_rest_are_renumbered():
    # Relevance-picked passages carry chain numbers when the budget backs chains by them.
    held = [
        _passage(DOCS[2], "relevance", (1,)),
        _passage(DOCS[0], "relevance", (2,)),
        _passage(DOCS[1], "relevance", (2,)),
    ]
    stats = {}
    passages, chains = judged_evidence(
        "Why did the river flood?",
        DOCS,
        held,
        [_chain("museum"), _chain("rain", "flood")],
        WordJudge(doubt=("museum",)),
        drop_below=0.1,
        add_above=None,
        stats=stats,
    )
    assert [c.document_ids for c in chains] == [("rain", "flood")]
    assert [(p.document_id, p.chain_ids) for p in passages] == [("rain", (1,)), ("flood", (1,))]
    assert stats["chains_judged_out"] == 1


def test_without_add_above_the_judge_reads_only_what_it_may_drop():
    judge = WordJudge()
    held = [_passage(DOCS[0]), _passage(DOCS[2], "relevance")]
    judged_evidence("Why?", DOCS, held, [], judge, drop_below=0.1, add_above=None)
    assert judge.calls == [("Why?", [DOCS[2].text])]
    judged_evidence("Why?", DOCS, held[:1], [], judge, drop_below=0.1, add_above=None)
    assert len(judge.calls) == 1  # nothing it may change: no call


def test_without_add_above_nothing_joins():
    passages, _ = judged_evidence(
        "Why?",
        DOCS,
        [_passage(DOCS[0])],
        [],
        WordJudge(sure=("Milk",)),
        drop_below=0.1,
        add_above=None,
    )
    assert [p.document_id for p in passages] == ["rain"]


def test_when_the_judge_doubts_every_passage_its_best_one_stays():
    held = [_passage(DOCS[2], "relevance"), _passage(DOCS[0], "relevance")]

    class Doubts:
        def score(self, query, texts):
            return [0.05 if "Heavy" in t else 0.01 for t in texts]

    passages, _ = judged_evidence("Why?", DOCS, held, [], Doubts(), drop_below=0.1, add_above=0.9)
    assert [p.document_id for p in passages] == ["rain"]


def test_ties_among_added_documents_keep_the_document_order():
    passages, _ = judged_evidence(
        "Why?", DOCS, [], [], WordJudge(sure=("Oakridge",)), drop_below=0.1, add_above=0.9
    )
    assert [p.document_id for p in passages] == ["rain", "museum"]


def test_a_repeated_document_id_joins_once():
    docs = [*DOCS, SourceDocument("prices", "Milk prices fell again.")]
    passages, _ = judged_evidence(
        "Why?", docs, [], [], WordJudge(sure=("Milk",)), drop_below=0.1, add_above=0.9
    )
    assert [(p.document_id, p.text) for p in passages] == [("prices", DOCS[3].text)]


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([0.5], "returned 1 scores for 4 texts"),
        ([0.5, 0.5, 1.5, 0.5], "gave 1.5 for document 'museum'"),
        ([0.5, "high", 0.5, 0.5], "gave 'high' for document 'flood'"),
        ([0.5, float("nan"), 0.5, 0.5], "gave nan for document 'flood'"),
    ],
)
def test_a_judge_giving_bad_scores_gets_a_clear_error(scores, message):
    class Bad:
        def score(self, query, texts):
            return scores

    with pytest.raises(InputError, match=message):
        judged_evidence("Why?", DOCS, [], [], Bad(), drop_below=0.1, add_above=0.9)


# ----------------------------------------------------------------------------- in the pipeline

STORY = [
    {"id": "d1", "text": "Heavy rain causes river flooding."},
    {"id": "d2", "text": "River flooding leads to crop damage."},
    {"id": "d3", "text": "Oakridge Farm held a charity fete in June."},
    {"id": "d4", "text": "Oakridge Farm is owned by the Miller family."},
]


def _pipeline(config=None, judge=None):
    return SARGPipeline(
        config or SARGConfig(similarity_threshold=0.6),
        extractor=PatternExtractor(),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("heavy rain"),
        direction_classifier=CueWordDirectionClassifier(),
        event_reader=PastTenseWords(),
        profile_reader=NoProfiles(),
        evidence_judge=judge,
    )


FETE = [
    {"id": "a", "text": "The Oakridge fete was cancelled after the storm."},
    {"id": "b", "text": "The storm flooded the Oakridge showground."},
    {"id": "c", "text": "Oakridge Farm hosted a charity auction for the fete in June."},
    {"id": "d", "text": "The museum opened in 1901."},
]


class SynonymEmbedder(HashingEmbedder):
    """Hashed bag-of-words vectors that read each word of ``same`` as its given synonym."""

    def __init__(self, same):
        super().__init__()
        self.same = same

    def embed(self, texts):
        return super().embed(
            [" ".join(self.same.get(w, w) for w in re.findall(r"\w+", t.lower())) for t in texts]
        )


def _fete(
    judge, question="Why was the Oakridge fete cancelled?", documents=FETE, embedder=None
):
    # No triple (no cue word): the evidence is the causal fallback's relevance fill.
    return SARGPipeline(
        extractor=PatternExtractor(),
        embedder=embedder or HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("oakridge fete"),
        direction_classifier=CueWordDirectionClassifier(),
        event_reader=PastTenseWords(),
        profile_reader=NoProfiles(),
        evidence_judge=judge,
    ).run(question, documents)


def test_the_judge_checks_a_causal_questions_evidence():
    assert [p.document_id for p in _fete(WordJudge()).evidence] == ["a", "c", "b"]
    judge = WordJudge(doubt=("auction",))
    result = _fete(judge)
    assert [(p.document_id, p.selected_by) for p in result.evidence] == [
        ("a", "relevance"),
        ("b", "relevance"),
    ]
    assert result.stats["evidence_judged_out"] == 1
    assert judge.calls == [("Why was the Oakridge fete cancelled?", [d["text"] for d in FETE])]


def test_asked_why_a_document_telling_what_came_of_the_event_leaves():
    # The judges read a later consequence as a step of the same story; asked why, it
    # cannot be one. Asked what followed, it is.
    later = {"id": "e", "text": "Stallholders lost their deposits since the fete was cancelled."}
    judge = WordJudge(sure=("deposits", "storm"))
    why = _fete(judge, documents=[*FETE, later])
    held = [p.document_id for p in why.evidence]
    assert "e" not in held and "a" in held, held
    assert why.stats["evidence_later_dropped"] == 1
    after = _fete(judge, "What happened after the Oakridge fete was cancelled?", [*FETE, later])
    assert "e" in [p.document_id for p in after.evidence]
    assert "evidence_later_dropped" not in after.stats


def test_asked_why_a_document_opening_by_what_came_after_the_asked_event_leaves():
    # "After the washout, …" names the asked event in other words than the question: its
    # phrase is more like the question than like any retrieved document, so the
    # document tells what came of the asked event. The event's own document is not
    # retrieved here (it would be as like the phrase as the question is).
    later = {"id": "e", "text": "After the washout, stallholders lost their deposits."}
    documents = [*FETE[1:], later]
    judge = WordJudge(sure=("deposits", "storm"))
    washout = SynonymEmbedder({"washout": "cancelled"})
    why = _fete(judge, documents=documents, embedder=washout)
    assert "e" not in [p.document_id for p in why.evidence]
    assert why.stats["evidence_later_dropped"] == 1
    # Read as an unrelated word, the washout is no more like the question than like
    # the storm's document: the document stays.
    plain = _fete(judge, documents=documents)
    assert "e" in [p.document_id for p in plain.evidence]
    after = _fete(judge, "What happened after the Oakridge fete was cancelled?", documents,
                  washout)
    assert "e" in [p.document_id for p in after.evidence]


def test_with_no_chain_a_sure_document_joins_with_its_reason():
    result = _fete(WordJudge(sure=("museum",)))
    assert result.fallback_reason is not None
    assert [(p.document_id, p.selected_by) for p in result.evidence][-1] == ("d", "judge")
    assert result.stats["evidence_judged_in"] == 1


def _beside_the_flood_chain(documents, judge, **settings):
    """The river-flood chain's two passages, judged among ``documents``."""
    held = [_passage(DOCS[0], chain_ids=(1,)), _passage(DOCS[1], chain_ids=(1,))]
    passages, _ = judged_evidence(
        "Why did the river flood?", documents, held, [_chain("rain", "flood")], judge,
        drop_below=0.5, **settings,
    )
    return [(p.document_id, p.selected_by) for p in passages]


def test_beside_chains_a_sure_document_joins_when_about_as_relevant_as_the_evidence():
    relevance = {"rain": 0.6, "flood": 0.4, "museum": 0.25, "prices": 0.15}
    # Scored at SURE_JOIN_ABOVE (0.9), not above it: the usual share of relevance applies.
    sure = TextJudge({DOCS[2].text: 0.9, DOCS[3].text: 0.9})
    # The floor is half the least relevant passage kept (0.4): the museum (0.25) joins,
    # the milk prices (0.15), another story's step, do not (they did at a fifth).
    assert _beside_the_flood_chain(DOCS, sure, add_above=0.85, relevance=relevance) == [
        ("rain", "chain"),
        ("flood", "chain"),
        ("museum", "judge"),
    ]
    # No relevance: no floor.
    joined = _beside_the_flood_chain(DOCS, sure, add_above=0.85)
    assert [doc_id for doc_id, _ in joined][2:] == ["museum", "prices"]


def test_a_document_the_judge_is_sure_of_needs_only_a_tenth_of_the_relevance():
    # A step told in another register than the question (a statistics line) shares few
    # words with it; another story's step in the retrieved set shares none.
    stats = SourceDocument("bill", "Oakridge water board, pumping costs 2023: up 40 per cent.")
    other = SourceDocument("fund", "Stock prices fell as margin calls forced selling.")
    docs = [*DOCS[:2], stats, other]
    relevance = {"rain": 0.6, "flood": 0.4, "bill": 0.05, "fund": 0.03}
    sure = TextJudge({stats.text: 0.97, other.text: 0.98})
    # Above SURE_JOIN_ABOVE the floor is a tenth of the least relevant kept (0.04), not half.
    assert _beside_the_flood_chain(docs, sure, add_above=0.6, relevance=relevance) == [
        ("rain", "chain"),
        ("flood", "chain"),
        ("bill", "judge"),
    ]
    sure.scores[stats.text] = 0.85  # not sure enough: half the relevance needed
    joined = _beside_the_flood_chain(docs, sure, add_above=0.6, relevance=relevance)
    assert [doc_id for doc_id, _ in joined] == ["rain", "flood"]


def test_a_document_telling_another_event_never_joins():
    separate = SourceDocument("fair", "Separately, the Oakridge museum announced a new wing.")
    sure = WordJudge(sure=("Oakridge museum",))
    for chains, held in (([], []), ([_chain("flood")], [_passage(DOCS[1], chain_ids=(1,))])):
        passages, _ = judged_evidence(
            "Why did the river flood?", [*DOCS, separate], held, chains, sure,
            drop_below=0.5, add_above=0.95,
        )
        assert [p.document_id for p in passages if p.selected_by == "judge"] == ["museum"]
    # Unless the question asks about such an event itself.
    passages, _ = judged_evidence(
        "Why was a separate wing announced?", [*DOCS, separate], [], [], sure,
        drop_below=0.5, add_above=0.95,
    )
    assert [p.document_id for p in passages] == ["museum", "fair"]


def test_beside_chains_in_the_pipeline_a_sure_step_joins():
    # No "-ed" word: the fill (events only, for a causal question) passes over it, and
    # no triple links it to the chain's nodes.
    step = {"id": "d5", "text": "Crop damage leaves valley farms short of feed."}
    judge = WordJudge(sure=("short of feed",))
    result = _pipeline(judge=judge).run("What does heavy rain cause?", [*STORY, step])
    assert result.fallback_reason is None and result.chains
    assert ("d5", "judge") in [(p.document_id, p.selected_by) for p in result.evidence]
    assert result.stats["evidence_judged_in"] == 1
    without = _pipeline(judge=WordJudge()).run("What does heavy rain cause?", [*STORY, step])
    assert "d5" not in [p.document_id for p in without.evidence]


def test_in_the_pipeline_a_linked_document_the_judge_rules_out_leaves():
    # "Oakridge Farm causes river flooding" shares the chain's node "river flooding":
    # linked_evidence brings it in, and the judge, sure it is no step, takes it out.
    linked = {"id": "d5", "text": "Oakridge Farm causes river flooding."}
    question = "What does heavy rain cause?"
    kept = _pipeline(judge=WordJudge()).run(question, [*STORY, linked])
    assert ("d5", "linked") in [(p.document_id, p.selected_by) for p in kept.evidence]
    doubted = _pipeline(judge=WordJudge(doubt=("Farm",))).run(question, [*STORY, linked])
    assert [p.document_id for p in doubted.evidence] == ["d1", "d2"]
    assert doubted.stats["evidence_judged_out"] == 1
    off = SARGConfig(similarity_threshold=0.6, judge_drop_linked_below=0.0)
    assert "d5" in [p.document_id for p in _pipeline(off, WordJudge(doubt=("Farm",))).run(
        question, [*STORY, linked]
    ).evidence]
    # A document found as a step's stated source is checked too: doubted, it leaves.
    source = {"id": "d5", "text": "The Oakridge fete raised money for river flooding relief."}
    question = "What caused crop damage?"
    result = _pipeline(judge=WordJudge()).run(question, [*STORY, source])
    assert ("d5", "linked") in [(p.document_id, p.selected_by) for p in result.evidence]
    result = _pipeline(judge=WordJudge(doubt=("fete",))).run(question, [*STORY, source])
    assert "d5" not in [p.document_id for p in result.evidence]
    assert result.stats["evidence_judged_out"] == 1


class TextJudge:
    """Scores each text as given in ``scores`` (0.5 for the rest)."""

    def __init__(self, scores):
        self.scores = scores

    def score(self, query, texts):
        return [self.scores.get(t, 0.5) for t in texts]


def test_a_chain_document_the_judge_rules_out_leaves_with_its_chains():
    # "The Oakridge museum opened in 1901" read as a one-hop chain: a profile at the
    # question's place, which only the judge tells from a step.
    held = [_passage(DOCS[1], chain_ids=(1,)), _passage(DOCS[2], chain_ids=(2,))]
    chains = [_chain("flood"), _chain("museum")]
    judge = TextJudge({DOCS[1].text: 0.003, DOCS[2].text: 0.004})
    relevance = {"rain": 0.3, "flood": 0.6, "museum": 0.5, "prices": 0.1}
    stats = {}
    passages, left = judged_evidence(
        "Why did the river flood?", DOCS, held, chains, judge,
        drop_below=0.5, add_above=None, relevance=relevance, drop_chain_below=0.01,
        stats=stats,
    )
    # The flood, the document most relevant to the question, is spared at any score.
    assert [(p.document_id, p.chain_ids) for p in passages] == [("flood", (1,))]
    assert [c.document_ids for c in left] == [("flood",)]
    assert stats["evidence_judged_out"] == 1 and stats["chains_judged_out"] == 1
    # At or above the bar, with no bar (the keyword's default), or without relevance
    # (no chains beside), the chain documents stand.
    for judge_, bar, relevance_ in (
        (TextJudge({DOCS[2].text: 0.01}), 0.01, relevance),
        (judge, 0.0, relevance),
        (judge, 0.01, None),
    ):
        passages, left = judged_evidence(
            "Why did the river flood?", DOCS, held, chains, judge_,
            drop_below=0.5, add_above=None, relevance=relevance_, drop_chain_below=bar,
        )
        assert [p.document_id for p in passages] == ["flood", "museum"] and len(left) == 2
    # A chain running across documents is the story's own structure: its documents stand.
    across = [_chain("flood", "museum")]
    passages, left = judged_evidence(
        "Why did the river flood?", DOCS, held, across, judge,
        drop_below=0.5, add_above=None, relevance=relevance, drop_chain_below=0.01,
    )
    assert [p.document_id for p in passages] == ["flood", "museum"] and len(left) == 1


def test_in_the_pipeline_a_chain_document_the_judge_rules_out_leaves():
    question = "What does heavy rain cause?"
    # d5's chain is read inside it alone (heavy rain -> landslides): only the judge
    # tells it from a step. The chain d1 -> d2 runs across documents and is not checked.
    story = [*STORY, {"id": "d5", "text": "Heavy rain causes landslides in the hills."}]
    kept = _pipeline(judge=WordJudge()).run(question, story)
    assert {"d1", "d2", "d5"} <= {p.document_id for p in kept.evidence}
    doubted = TextJudge({story[4]["text"]: 0.001, story[1]["text"]: 0.001})
    result = _pipeline(judge=doubted).run(question, story)
    assert [p.document_id for p in result.evidence][:2] == ["d1", "d2"]
    assert "d5" not in [p.document_id for p in result.evidence]
    assert all("d5" not in chain.document_ids for chain in result.chains)
    off = SARGConfig(similarity_threshold=0.6, judge_drop_chain_below=0.0)
    assert "d5" in [p.document_id for p in _pipeline(off, doubted).run(question, story).evidence]
    # The document most relevant to the question stays, however low the judge scores it.
    first = TextJudge({"Heavy rain causes river flooding.": 0.001})
    assert "d1" in [p.document_id for p in _pipeline(judge=first).run(question, STORY).evidence]


def test_no_judge_on_a_question_asking_neither_way_nor_without_the_setting():
    judge = WordJudge(doubt=("rain",))
    _pipeline(judge=judge).run("Who owns Oakridge Farm?", STORY)
    _pipeline(SARGConfig(similarity_threshold=0.6, evidence_judge=False), judge).run(
        "What does heavy rain cause?", STORY
    )
    _pipeline(SARGConfig.paper(similarity_threshold=0.6), judge).run(
        "What does heavy rain cause?", STORY
    )
    assert judge.calls == []


def test_no_judge_on_a_question_asking_what_may_follow():
    # Trained on stories of what happened, where a plan is a distractor, the judge is
    # not asked what may or will follow.
    judge = WordJudge(doubt=("rain",))
    _pipeline(judge=judge).run("What might heavy rain cause?", STORY)
    assert judge.calls == []
    _pipeline(judge=judge).run("What did heavy rain cause?", STORY)
    assert len(judge.calls) == 1


def test_the_default_judge_is_the_shipped_pair_unless_switched_off():
    judge = _pipeline().evidence_judge
    assert isinstance(judge, CombinedEvidenceJudge)
    assert [j.model_dir for j in judge.judges] == [DEFAULT_JUDGE_DIR, DEFAULT_SET_JUDGE_DIR]
    assert all(isinstance(j, LearnedEvidenceJudge) for j in judge.judges)
    assert _pipeline(SARGConfig(evidence_judge=False)).evidence_judge is None


class Scripted:
    def __init__(self, *scores):
        self.scores = list(scores)
        self.asked = []

    def score(self, query, texts):
        self.asked.append((query, list(texts)))
        return self.scores


def test_combined_judges_give_the_geometric_mean_and_see_every_text():
    first, second = Scripted(0.9, 0.0, 1.0, 0.25), Scripted(0.4, 1.0, 1.0, 1.0)
    combined = CombinedEvidenceJudge(first, second)
    assert isinstance(combined, EvidenceJudge)
    scores = combined.score("Why?", ["a", "b", "c", "d"])
    assert scores == pytest.approx([0.6, 0.0, 1.0, 0.5])
    # brute force: the geometric mean of three judges
    third = Scripted(0.5, 0.5, 0.5, 0.5)
    scores = CombinedEvidenceJudge(first, second, third).score("Why?", ["a", "b", "c", "d"])
    triples = zip(first.scores, second.scores, third.scores)
    expected = [(x * y * z) ** (1 / 3) for x, y, z in triples]
    assert scores == pytest.approx(expected)
    # each judge reads the whole set at once (a set reader needs the others)
    assert first.asked[0] == ("Why?", ["a", "b", "c", "d"])
    assert combined.score("Why?", []) == []


@pytest.mark.parametrize(
    ("judges", "message"),
    [
        ((Scripted(0.5),), "needs two or more judges, got 1"),
        ((Scripted(0.5), object()), r"judge 1 \(object\) has no score"),
    ],
)
def test_combined_judges_are_checked(judges, message):
    with pytest.raises(InputError, match=message):
        CombinedEvidenceJudge(*judges)


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([0.5], "judge 1 \\(Scripted\\) returned 1 scores for 2 texts"),
        ([0.5, 1.5], "judge 1 \\(Scripted\\) gave 1.5 for text 1"),
        ([0.5, True], "gave True for text 1"),
    ],
)
def test_a_combined_judge_names_the_member_that_scores_badly(scores, message):
    combined = CombinedEvidenceJudge(Scripted(0.5, 0.5), Scripted(*scores))
    with pytest.raises(InputError, match=message):
        combined.score("Why?", ["a", "b"])


def test_a_judge_without_score_is_refused_by_name():
    with pytest.raises(ConfigError, match=r"evidence_judge=.* has no score"):
        SARGPipeline(evidence_judge=object())


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"judge_drop_below": 0.98}, "judge_drop_below=0.98 is above judge_add_above=0.6"),
        ({"judge_add_above": 1.5}, "judge_add_above=1.5 must be a number between 0.0 and 1.0"),
        (
            {"judge_drop_linked_below": -0.1},
            r"judge_drop_linked_below=-0.1 must be a number between 0.0 and 1.0",
        ),
        (
            {"judge_drop_chain_below": 2},
            r"judge_drop_chain_below=2 must be a number between 0.0 and 1.0",
        ),
        ({"evidence_judge": "yes"}, "evidence_judge='yes' must be True or False"),
    ],
)
def test_judge_settings_are_checked(changes, message):
    with pytest.raises(ConfigError, match=message):
        SARGConfig(**changes)


def test_learned_judge_refuses_a_bad_batch_size():
    with pytest.raises(InputError, match="batch_size=0"):
        LearnedEvidenceJudge(batch_size=0)


# ----------------------------------------------------------------------------- files


def _config_file(tmp_path, **changes):
    data = {**JudgeConfig(rank=8, alpha=16.0).to_json(), **changes}
    (tmp_path / CONFIG_FILE).write_text(json.dumps(data), encoding="utf-8")
    return tmp_path / CONFIG_FILE


def test_judge_config_round_trips(tmp_path):
    assert JudgeConfig.read(_config_file(tmp_path)) == JudgeConfig(rank=8, alpha=16.0, info={})


def test_a_judge_config_reading_sets_round_trips_and_old_files_read_documents(tmp_path):
    reading_sets = JudgeConfig(rank=8, alpha=16.0, max_length=512, reads="set", document_tokens=90)
    file = tmp_path / CONFIG_FILE
    file.write_text(json.dumps(reading_sets.to_json()), encoding="utf-8")
    assert JudgeConfig.read(file) == JudgeConfig(
        rank=8, alpha=16.0, max_length=512, reads="set", document_tokens=90, info={}
    )
    # a file written before the field existed (the judges of sessions 31-39) reads documents
    old = {
        k: v
        for k, v in JudgeConfig(rank=8, alpha=16.0).to_json().items()
        if k not in ("reads", "document_tokens")
    }
    file.write_text(json.dumps(old), encoding="utf-8")
    assert JudgeConfig.read(file).reads == "document"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"format": "sarg-span-tagger"}, "is not a sarg-evidence-judge config"),
        ({"version": 7}, "has version 7"),
        ({"rank": 0}, "out-of-range values"),
        ({"max_length": 4}, "out-of-range values"),
        ({"rank": "eight"}, "lacks or mistypes a field"),
        ({"reads": "paragraph"}, "out-of-range values"),
        ({"reads": "set", "max_length": 160, "document_tokens": 140}, "out-of-range values"),
        ({"document_tokens": "many"}, "lacks or mistypes a field"),
    ],
)
def test_a_bad_judge_config_names_the_file(tmp_path, changes, message):
    file = _config_file(tmp_path, **changes)
    with pytest.raises(ModelLoadError, match=message) as info:
        JudgeConfig.read(file)
    assert str(file) in str(info.value)


def test_a_missing_or_unreadable_judge_config_names_the_file(tmp_path):
    with pytest.raises(ModelLoadError, match=r"judge\.json is missing"):
        JudgeConfig.read(tmp_path / CONFIG_FILE)
    (tmp_path / CONFIG_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelLoadError, match="is not a readable JSON evidence judge config"):
        JudgeConfig.read(tmp_path / CONFIG_FILE)


def _stories(tmp_path, *lines):
    file = tmp_path / "stories.jsonl"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return file


GOOD = json.dumps(
    {
        "question": "Why?",
        "chain": ["a"],
        "documents": [{"id": "a", "text": "A."}, {"id": "b", "text": "B."}],
    }
)


def test_story_files_are_read(tmp_path):
    [story] = read_story_files([_stories(tmp_path, GOOD, "")])
    assert (
        story.question == "Why?"
        and story.chain == {"a"}
        and story.documents == {"a": "A.", "b": "B."}
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2 is not JSON"),
        ('["a list"]', "line 2 is not a causal story: a list, not an object"),
        (json.dumps({"question": "", "chain": ["a"], "documents": []}), "line 2 .*question=''"),
        (
            json.dumps(
                {"question": "Why?", "chain": ["z"], "documents": [{"id": "a", "text": "A."}]}
            ),
            r"line 2 .*chain=\['z'\] names no document",
        ),
        (
            json.dumps({"question": "Why?", "chain": ["a"], "documents": [{"id": "a"}]}),
            "line 2 .*lacks a string id or text",
        ),
    ],
)
def test_bad_story_lines_name_the_file_and_line(tmp_path, line, message):
    file = _stories(tmp_path, GOOD, line)
    with pytest.raises(InputError, match=message) as info:
        read_story_files([file])
    assert str(file) in str(info.value)


def test_a_missing_or_empty_story_file_is_named(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_story_files([tmp_path / "nope.jsonl"])
    with pytest.raises(InputError, match="holds no story"):
        read_story_files([_stories(tmp_path, "")])
