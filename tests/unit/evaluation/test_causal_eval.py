"""The causal evaluation (ESTER questions, ESC event links): loaders, metrics, `sarg eval`.

Fast tests use synthetic files and the fake models; the real files are read only when
``../shared/data`` is there; the real-model run is marked ``slow``.
"""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
from fakes import FixedKeyphrases, HashingEmbedder, NoProfiles, PatternExtractor

from sarg_integrations import cli
from sarg_integrations.config import SARGConfig
from sarg_integrations.direction import CueWordDirectionClassifier
from sarg_integrations.errors import InputError
from sarg_integrations.evaluation import causal_eval
from sarg_integrations.evaluation.causal_eval import (
    aggregate_esc,
    evaluate_esc_document,
    resolve_extractor,
    run_causal_evaluation,
)
from sarg_integrations.evaluation.causal_metrics import (
    budget_sentences,
    content_words,
    esc_link_found,
    gold_edge_recovery,
    gold_multi_hop_pairs,
    half_match,
    matching_nodes,
    node_words,
    trigger_in,
    triple_sentences,
    word_count,
)
from sarg_integrations.evaluation.causal_qa import (
    classify_causal_question,
    load_esc,
    load_ester,
    split_answer_spans,
    split_sentences,
)
from sarg_integrations.extraction.tagger import split_sentences as tagger_split
from sarg_integrations.pipeline import SARGPipeline
from sarg_integrations.schema import Triple

# --------------------------------------------------------------------------- data

ESTER_ROWS = [
    {
        "split": "dev",
        "source": "ester",
        "torque_id": "doc_a",
        "text": "\nHeavy rain causes flooding.\nFlooding causes crop loss. Cats sleep a lot.\n\n",
        "questions": [
            "Why was there crop loss?",
            "What happened as a result of the heavy rain?",
            "What does the flooding refer to?",
            "Why do cats sleep?",
        ],
        "answers": ["heavy rain; storms", ["crop loss"], "flooding", ""],
        "causal_graph": [
            {"head": "heavy rain", "rel": "ENABLES", "tail": "flooding", "saliency": 1},
            {"head": "flooding", "rel": "ENABLES", "tail": "crop loss", "saliency": 1},
            {"head": "Entity::cats", "rel": "ENABLES", "tail": "napping", "saliency": 0},
        ],
    },
    {
        "split": "dev",
        "source": "ester",
        "torque_id": "doc_b",
        "text": "Drought causes famine.\nFamine causes migration.",
        "questions": ["What led to the migration?"],
        "answers": ["drought"],
        "causal_graph": [{"head": "drought", "rel": "ENABLES", "tail": "famine"}],
    },
]

# "The earthquake causes collapse. Collapse causes panic." + a cross-sentence link.
ESC_XML = """<?xml version='1.0' encoding='UTF-8'?>
<Document doc_name="9_1ecbplus.xml">
  <token t_id="1" sentence="0" number="0">The</token>
  <token t_id="2" sentence="0" number="1">earthquake</token>
  <token t_id="3" sentence="0" number="2">causes</token>
  <token t_id="4" sentence="0" number="3">collapse</token>
  <token t_id="5" sentence="0" number="4">.</token>
  <token t_id="6" sentence="1" number="0">Collapse</token>
  <token t_id="7" sentence="1" number="1">causes</token>
  <token t_id="8" sentence="1" number="2">panic</token>
  <token t_id="9" sentence="1" number="3">.</token>
  <token t_id="10" sentence="2" number="0">Dogs</token>
  <token t_id="11" sentence="2" number="1">bark</token>
  <token t_id="12" sentence="2" number="2">.</token>
  <Markables>
    <ACTION_OCCURRENCE m_id="1"><token_anchor t_id="2"/></ACTION_OCCURRENCE>
    <ACTION_OCCURRENCE m_id="2"><token_anchor t_id="4"/></ACTION_OCCURRENCE>
    <ACTION_OCCURRENCE m_id="3"><token_anchor t_id="6"/></ACTION_OCCURRENCE>
    <ACTION_OCCURRENCE m_id="4"><token_anchor t_id="8"/></ACTION_OCCURRENCE>
    <ACTION_OCCURRENCE m_id="5"><token_anchor t_id="11"/></ACTION_OCCURRENCE>
    <TIME_DATE m_id="6"><token_anchor t_id="1"/></TIME_DATE>
  </Markables>
  <Relations>
    <PLOT_LINK r_id="1" relType="PRECONDITION"><source m_id="1"/><target m_id="2"/></PLOT_LINK>
    <PLOT_LINK r_id="2" relType="FALLING_ACTION"><source m_id="4"/><target m_id="3"/></PLOT_LINK>
    <PLOT_LINK r_id="3" relType="PRECONDITION"><source m_id="2"/><target m_id="3"/></PLOT_LINK>
    <PLOT_LINK r_id="4" relType="PRECONDITION"><source m_id="1"/><target m_id="2"/></PLOT_LINK>
    <PLOT_LINK r_id="5" relType="FALLING_ACTION"><source m_id="5"/><target m_id="1"/></PLOT_LINK>
    <TLINK r_id="6" relType="CONTAINS"><source m_id="6"/><target m_id="1"/></TLINK>
  </Relations>
</Document>
"""


@pytest.fixture
def ester_file(tmp_path: Path) -> Path:
    path = tmp_path / "ester.json"
    path.write_text(json.dumps(ESTER_ROWS))
    return path


@pytest.fixture
def esc_dir(tmp_path: Path) -> Path:
    topic = tmp_path / "esc" / "9"
    topic.mkdir(parents=True)
    (topic / "9_1ecbplus.xml.xml").write_text(ESC_XML)
    return tmp_path / "esc"


# --------------------------------------------------------------------------- loaders


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Why was Mr. Keating convicted?", "backward"),
        ("What led to the invasion of Afghanistan by the Soviet Union?", "backward"),
        ("What caused the bond prices to weaken?", "backward"),
        ("What made police to move to block a former leader of Mungiki?", "backward"),
        ("What might have contributed to Saturday's gas blast?", "backward"),
        ("What might happen as a result of the convictions being ruled to stand?", "forward"),
        ("What was the result of the elections in May and June?", "forward"),
        ("What resulted from Tibet staging its first recruitment fair?", "forward"),
        ("What could be expected to happen after the protests?", "forward"),
        ("What are the consequences of the gas blast in Yuanhua Coal Mine?", "forward"),
        ("What does the massacre refer to?", None),
        ("What did the coup entail?", None),
        ("What were included in the big drop in October?", None),
    ],
)
def test_question_types(question: str, expected: str | None) -> None:
    assert classify_causal_question(question) == expected


def test_answer_spans_and_sentences() -> None:
    assert split_answer_spans("a b ; ;c") == ("a b", "c")
    assert split_answer_spans(["x", ""]) == ("x",)
    assert split_answer_spans([]) == ()
    assert split_sentences("Dr. Who left. U.S. troops came!\n\nThen rain.") == [
        "Dr. Who left.",
        "U.S. troops came!",
        "Then rain.",
    ]
    # The tagger's split (offsets), whitespace collapsed: an ESTER sentence is a tagger sentence.
    text = 'He said  "we won." Crowds\tcheered.\nMr. Lee left.'
    assert split_sentences(text) == ['He said "we won."', "Crowds cheered.", "Mr. Lee left."]
    assert split_sentences(text) == [" ".join(text[s:e].split()) for s, e in tagger_split(text)]


def test_load_ester_synthetic(ester_file: Path) -> None:
    passages = load_ester(ester_file)
    assert [p.id for p in passages] == ["p0", "p1"]
    first = passages[0]
    assert [d.text for d in first.sentences] == [
        "Heavy rain causes flooding.",
        "Flooding causes crop loss.",
        "Cats sleep a lot.",
    ]
    assert [d.id for d in first.sentences] == ["0", "1", "2"]
    # The co-reference question and the unanswerable one are left out.
    assert [(q.id, q.qtype, q.answers) for q in first.questions] == [
        ("0:0", "backward", ("heavy rain", "storms")),
        ("0:1", "forward", ("crop loss",)),
    ]
    assert first.gold_edges[2] == ("cats", "ENABLES", "napping")  # Entity:: removed
    assert first.n_questions == 4
    # limit counts kept questions; the passage holding the last one is cut there.
    limited = load_ester(ester_file, limit=1)
    assert len(limited) == 1 and [q.id for q in limited[0].questions] == ["0:0"]
    assert sum(len(p.questions) for p in load_ester(ester_file, limit=3)) == 3


def test_load_esc_synthetic(esc_dir: Path) -> None:
    (doc,) = load_esc(esc_dir)
    assert doc.id == "9_1ecbplus" and doc.topic == "9"
    assert doc.text == "The earthquake causes collapse.\nCollapse causes panic.\nDogs bark."
    assert doc.sentence_spans == {0: (0, 31), 1: (32, 54), 2: (55, 65)}
    quake = doc.events["1"]
    assert quake.trigger == "earthquake" and quake.sentence == 0
    assert doc.text[slice(*quake.span)] == "earthquake"
    assert "6" not in doc.events  # a TIME markable is not an event
    # FALLING_ACTION is flipped; the duplicate PRECONDITION is kept once.
    assert [(link.cause, link.effect, link.rel_type) for link in doc.links] == [
        ("1", "2", "PRECONDITION"),
        ("3", "4", "FALLING_ACTION"),
        ("2", "3", "PRECONDITION"),
        ("1", "5", "FALLING_ACTION"),
    ]
    assert load_esc(esc_dir / "9" / "9_1ecbplus.xml.xml")[0].id == "9_1ecbplus"


def test_loader_errors_name_the_file(tmp_path: Path, esc_dir: Path) -> None:
    bad = esc_dir / "9" / "9_2ecbplus.xml.xml"
    bad.write_text("<Document><token t_id='1'")
    with pytest.raises(InputError, match="9_2ecbplus.xml.xml is not a readable ESC"):
        load_esc(esc_dir)
    with pytest.raises(InputError, match="ESC data not found"):
        load_esc(tmp_path / "nowhere")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(InputError, match="broken.json is not a readable TORQUESTRA"):
        load_ester(broken)
    with pytest.raises(InputError, match="limit"):
        load_ester(broken, limit=0)


@pytest.mark.shared_data
def test_real_ester_file(shared_data: Path) -> None:
    passages = load_ester(shared_data / "causal_qa" / "torquestra_ester_dev_0_89.json", limit=5)
    assert passages[0].torque_id == "docid_PRI19980115.2000.0186_sentid_6"
    assert passages[0].sentences[0].text.startswith("Former savings and loan chief")
    assert sum(len(p.questions) for p in passages) == 5
    assert [q.qtype for q in passages[0].questions] == ["backward", "backward", "forward"]
    assert passages[0].questions[0].answers == ("defraud thousands of investors",)
    assert ("security fraud", "ENABLES", "Keating is convicted of security fraud") in (
        passages[0].gold_edges
    )


@pytest.mark.shared_data
def test_real_esc_files(shared_data: Path) -> None:
    docs = load_esc(shared_data / "causal_qa" / "esc_v1.5" / "1", limit=3)
    assert len(docs) == 3 and all(d.topic == "1" for d in docs)
    for doc in docs:
        assert doc.links and doc.events
        for link in doc.links:
            assert link.cause in doc.events and link.effect in doc.events
        for event in doc.events.values():
            assert doc.text[slice(*event.span)] == event.trigger


# --------------------------------------------------------------------------- metrics


def test_content_words_and_half_match_by_hand() -> None:
    assert content_words("The bonds became worthless when it was seized") == {
        "bond",
        "became",
        "worthless",
        "seized",
    }
    assert content_words("Keating's policies") == {"keating", "policy"}
    assert content_words("losses, churches, boxes, bus, analysis") == {
        "loss",
        "church",
        "box",
        "bus",
        "analysis",
    }
    # 4 content words (keating, convicted, security, fraud): 2 are enough, 1 is not.
    gold = "Keating is convicted of security fraud"
    assert half_match(gold, {"keating", "fraud"})
    assert not half_match(gold, {"fraud", "court"})
    assert not half_match("", {"x"})
    assert word_count("It's a U.S. firm's plan.") == 6


def test_fuzzy_node_match_and_gold_edges_by_hand() -> None:
    graph = nx.DiGraph()
    graph.add_node("heavy rain", aliases=["heavy rain", "rainstorm"])
    graph.add_node("river flooding", aliases=["river flooding"])
    graph.add_node("crop losses", aliases=["crop losses"])
    graph.add_node("cats", aliases=["cats"])
    graph.add_edge("heavy rain", "river flooding")
    graph.add_edge("river flooding", "crop losses")
    words = node_words(graph)
    assert words["heavy rain"] == {"heavy", "rain", "rainstorm"}
    # "the rainstorm" → {rainstorm}: 1/1 in the alias; "flooding of fields" → 1/2.
    assert matching_nodes("the rainstorm", words) == ["heavy rain"]
    assert matching_nodes("flooding of fields", words) == ["river flooding"]
    # {loss, crop, region}: 2 of 3 in "crop losses"; {crop, region, farm}: 1 of 3.
    assert matching_nodes("loss of crops in the region", words) == ["crop losses"]
    assert matching_nodes("crops of the region's farms", words) == []
    scores = gold_edge_recovery(
        [
            ("rainstorm", "ENABLES", "crop loss"),  # path of two edges
            ("river flooding", "ENABLES", "crop loss"),  # direct edge
            ("crop loss", "ENABLES", "rainstorm"),  # both ends, wrong direction
            ("cats", "BLOCKS", "dogs barking"),  # tail unmatched
        ],
        graph,
    )
    assert [(s["nodes"], s["path"], s["edge"]) for s in scores] == [
        (True, True, False),
        (True, True, True),
        (True, False, False),
        (False, False, False),
    ]


def test_budget_sentences_by_hand() -> None:
    ranked = ["one two three", "four five six seven eight", "nine ten"]
    assert budget_sentences(ranked, 5) == [0, 2]
    assert budget_sentences(ranked, 2) == [2]
    assert budget_sentences(ranked, 0) == []
    assert budget_sentences(ranked, 100) == [0, 1, 2]


def test_esc_link_helpers_by_hand() -> None:
    spans = {0: (0, 31), 1: (32, 54)}
    text = "The earthquake causes collapse.\nCollapse causes panic."
    t = Triple("the earthquake", "causes", "collapse", sentence_span=(0, 31))
    assert triple_sentences(t, text, spans) == {0}
    assert triple_sentences(Triple("a", "r", "b", sentence="causes panic."), text, spans) == {1}
    assert triple_sentences(Triple("a", "r", "b"), text, spans) == set()
    assert trigger_in("set off", "they set off the bomb") and not trigger_in("set off", "off set")
    assert esc_link_found(t, {0}, "earthquake", "collapse", (0, 0))
    assert not esc_link_found(t, {0}, "collapse", "earthquake", (0, 0))  # reversed
    assert not esc_link_found(t, {0}, "earthquake", "collapse", (1, 1))  # other sentence
    assert gold_multi_hop_pairs([("a", "b"), ("b", "c"), ("c", "d")]) == [
        ("a", "c", 2),
        ("a", "d", 3),
        ("b", "d", 2),
    ]


def test_evaluate_esc_document_by_hand(esc_dir: Path) -> None:
    (doc,) = load_esc(esc_dir)
    # PatternExtractor reads <the earthquake, causes, collapse> from sentence 0 and
    # <Collapse, causes, panic> from sentence 1.
    record = evaluate_esc_document(PatternExtractor(), doc, embedder=HashingEmbedder())
    found = {(x["cause"], x["effect"]): (x["found"], x["cross_sentence"]) for x in record["links"]}
    assert found == {
        ("earthquake", "collapse"): (True, False),
        ("Collapse", "panic"): (True, False),
        ("collapse", "Collapse"): (False, True),  # cross-sentence: no triple reads it
        ("earthquake", "bark"): (False, True),
    }
    # Both triples come from event sentences and both find a link.
    assert record["triples"] == 2
    assert record["triples_event_sentences"] == 2 and record["correct_event_sentences"] == 2
    # Gold multi-hop pairs: 1→3 (1→2→3) and 1→4, 2→4 (via 3). The graph holds
    # earthquake → collapse → panic (the two "collapse" nodes merge by normal form),
    # so every pair whose ends have nodes is recovered.
    paths = record["paths"]
    assert paths["pairs"] == 3
    assert paths["recovered"] == paths["both_nodes"] == 3
    # Text-order pairs of one sentence: (1, 2) in sentence 0 and (3, 4) in sentence 1.
    assert record["text_order_baseline"] == {"predicted": 2, "correct": 2}
    agg = aggregate_esc([record])
    assert agg["text_order_baseline"]["recall"] == 0.5
    assert agg["text_order_baseline"]["recall_same_sentence"] == 1.0
    assert agg["links"]["all"]["recall"] == 0.5
    assert agg["links"]["same_sentence"]["recall"] == 1.0
    assert agg["links"]["cross_sentence"]["recall"] == 0.0
    assert agg["precision"]["event_sentences"]["precision"] == 1.0
    assert agg["chains"]["recovered"] == 1.0


def test_resolve_extractor() -> None:
    fake = PatternExtractor()
    assert resolve_extractor(fake) is fake
    with pytest.raises(InputError, match="extractor='nope' is neither"):
        resolve_extractor("nope")
    with pytest.raises(InputError, match="no extract"):
        resolve_extractor(object())


# --------------------------------------------------------------------------- end to end


def _fake_pipeline() -> SARGPipeline:
    return SARGPipeline(
        SARGConfig(similarity_threshold=0.5),
        extractor=PatternExtractor(),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("crop loss", "heavy rain", "migration"),
        direction_classifier=CueWordDirectionClassifier(),
        profile_reader=NoProfiles(),
    )


def test_sarg_eval_ester_end_to_end_with_fakes(
    ester_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(causal_eval, "_default_pipeline", lambda extractor: _fake_pipeline())
    out = tmp_path / "out"
    args = ["eval", "--dataset", "ester", "--data", str(ester_file), "--out", str(out)]
    assert cli.main([*args, "--limit", "3", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "### ester: 3 causal questions on 2 passages" in printed
    summary = json.loads((out / "ester.json").read_text())
    questions = [q for r in summary["records"] for q in r["questions"]]
    assert [q["id"] for q in questions] == ["0:0", "0:1", "1:0"]
    why = questions[0]
    assert not why["fallback"] and why["answer_in_chains"] and why["sarg"]["answer_recall"]
    assert why["dense"]["budget_words"] == why["sarg"]["words"] >= why["dense"]["words"]
    agg = summary["aggregates"]
    assert agg["all"]["n"] == 3 and set(agg["by_qtype"]) == {"backward", "forward"}
    assert agg["all"]["answer_in_chains"] == 1.0
    # Gold edges of both passages: rain→flooding, flooding→crop loss, drought→famine
    # are chains of the graph; cats→napping is not.
    assert agg["gold_edges"]["n_edges"] == 4 and agg["gold_edges"]["path"] == 0.75
    # A rerun resumes (nothing recomputed); other settings are refused.
    monkeypatch.setattr(causal_eval, "_default_pipeline", lambda extractor: pytest.fail("rerun"))
    assert cli.main([*args, "--limit", "3", "--no-progress"]) == 0
    capsys.readouterr()
    assert cli.main([*args, "--limit", "2", "--no-progress"]) == 2
    assert "other settings" in capsys.readouterr().err


def test_sarg_eval_esc_end_to_end_with_fakes(
    esc_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = run_causal_evaluation(
        "esc", esc_dir, pipeline=_fake_pipeline(), out_dir=tmp_path / "out", progress=False
    )
    assert report.settings["extractor"] == "fakes.PatternExtractor"
    assert report.aggregates["links"]["all"]["n"] == 4
    assert "| same sentence | 2 | 100.0 |" in report.markdown
    assert (tmp_path / "out" / "esc.md").read_text() == report.markdown


def test_llm_option_is_refused_for_causal_sets(
    ester_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["eval", "--dataset", "ester", "--data", str(ester_file), "--llm", "x:y"]) == 2
    assert "--llm is not supported with --dataset ester" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.shared_data
def test_sarg_eval_ester_real_models(shared_data: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SARG_SHARED_DATA", str(shared_data))  # sarg eval reads no default folder
    out = tmp_path / "out"
    code = cli.main(
        ["eval", "--dataset", "ester", "--limit", "3", "--out", str(out), "--no-progress"]
    )
    assert code == 0
    summary = json.loads((out / "ester.json").read_text())
    assert summary["aggregates"]["n_questions"] == 3
    assert summary["settings"]["extractor"] == "union"  # the package default
    for record in summary["records"]:
        for q in record["questions"]:
            assert q["dense"]["words"] <= q["sarg"]["words"]
