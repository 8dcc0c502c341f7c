"""Config validation, the cue-word direction classifier, entry matching and the cache."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fakes import HashingEmbedder
from sarg_integrations import SARGConfig
from sarg_integrations.direction import CueWordDirectionClassifier, FixedDirection
from sarg_integrations.embedding import CachedEmbedder
from sarg_integrations.errors import ConfigError, InputError
from sarg_integrations.matching import best_span_matches, match_entry_nodes, source_spans
from sarg_integrations.schema import Direction, SARGResult, Triple, to_jsonable


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("beam_width", 0, "beam_width=0 must be an integer >= 1"),
        ("top_k", 2.5, "top_k=2.5 must be an integer"),
        ("top_k", True, "top_k=True"),
        ("max_depth", -1, "max_depth=-1"),
        ("similarity_threshold", 1.5, "between -1.0 and 1.0"),
        ("merge_threshold", "high", "merge_threshold='high'"),
        ("schema", "spo", "use one of: reasoning, generic_spo"),
        ("evidence", "all", "use one of: document, sentences"),
        ("direction", "sideways", "use one of: forward, backward, bidirectional"),
        ("max_entry_nodes", 0, "max_entry_nodes=0"),
        ("match_spans", "yes", "match_spans='yes' must be True or False"),
    ],
)
def test_bad_config_names_field_value_and_range(field, value, message):
    with pytest.raises(ConfigError, match=message) as info:
        SARGConfig(**{field: value})
    assert info.value.field == field
    assert isinstance(info.value, ValueError)


def test_config_defaults_follow_the_paper_and_replace_validates():
    config = SARGConfig()
    assert (config.beam_width, config.top_k, config.max_depth) == (3, 3, 8)
    assert SARGConfig(direction="Backward").direction is Direction.BACKWARD
    assert config.replace(top_k=5).top_k == 5
    with pytest.raises(ConfigError, match="unknown SARGConfig field"):
        config.replace(topk=5)
    assert json.loads(json.dumps(config.to_dict()))["beam_width"] == 3


@pytest.mark.parametrize(
    ("query", "direction"),
    [
        ("Why did technology stocks sell off?", "backward"),
        ("What caused the 2008 financial crisis?", "backward"),
        ("What is the root cause of splenomegaly in Gaucher disease?", "backward"),
        ("What are the consequences of a GBA1 mutation?", "forward"),
        ("What happens if the central bank raises interest rates?", "forward"),
        ("What does chronic inflation lead to?", "forward"),
        ("How are inflation and margin calls connected?", "bidirectional"),
        ("What is the relationship between insulin and obesity?", "bidirectional"),
        ("Who directed the film?", "bidirectional"),  # no cue: explore both ways
    ],
)
def test_cue_word_classifier(query, direction):
    prediction = CueWordDirectionClassifier().predict_direction(query)
    assert prediction.direction.value == direction
    assert prediction.method == "cue-words"
    assert abs(sum(prediction.scores.values()) - 1.0) < 1e-3
    assert prediction.rationale


def test_fixed_direction():
    assert FixedDirection("forward").predict_direction("why?").direction is Direction.FORWARD
    assert FixedDirection("forward").predict_proba(["why?"]) == [{"forward": 1.0, "backward": 0.0, "bidirectional": 0.0}]


def test_batch_api_checks_its_input():
    clf = CueWordDirectionClassifier()
    assert clf.predict(["Why did prices rise?", "What happens if rates rise?"]) == ["backward", "forward"]
    with pytest.raises(InputError, match="wrap it in a list"):
        clf.predict("Why?")
    with pytest.raises(InputError, match=r"queries\[1\] must be a string"):
        clf.predict_proba(["Why?", 3])


def test_match_entry_nodes_threshold_is_strict_and_sorted():
    nodes = ["b", "a", "c"]
    node_vecs = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    phrase_vecs = np.array([[1.0, 0.0], [0.6, 0.8]])
    entries = match_entry_nodes(nodes, node_vecs, ["p1", "p2"], phrase_vecs, threshold=0.8)
    # c's best cosine is exactly 0.8 (with p2): not strictly above tau, so excluded.
    assert [(e.node, e.keyphrase) for e in entries] == [("a", "p1"), ("b", "p1")]
    assert match_entry_nodes(nodes, node_vecs, ["p1"], phrase_vecs[:1], threshold=0.5, max_nodes=1)[0].node == "a"
    assert match_entry_nodes([], np.zeros((0, 2)), ["p"], phrase_vecs[:1]) == []


def test_a_node_matches_on_its_clause_only_above_tau_and_above_its_name():
    nodes = ["rally nearing end", "rates", "weather"]
    node_vecs = np.array([[0.0, 1.0], [0.9, 0.436], [0.0, 1.0]])
    phrase_vecs = np.array([[1.0, 0.0]])
    spans = {
        "rally nearing end": (0.8, "a rally by the peso may be nearing its end"),  # lifted over tau
        "rates": (0.85, "the Fed raised rates"),  # the name is closer (0.9): it stays
        "weather": (0.45, "the weather turned"),  # under tau: no near miss either
    }
    entries = match_entry_nodes(nodes, node_vecs, ["peso"], phrase_vecs, threshold=0.5, margin=0.1, span_matches=spans)
    assert [(e.node, round(e.similarity, 2), e.span) for e in entries] == [
        ("rates", 0.9, ""),
        ("rally nearing end", 0.8, "a rally by the peso may be nearing its end"),
    ]
    assert entries[1].keyphrase == "peso"
    # A clause under tau never seeds the search as a near miss: only names do.
    none_above = {"weather": (0.48, "the weather turned")}
    low = match_entry_nodes(["weather"], np.array([[0.0, 1.0]]), ["p"], phrase_vecs, threshold=0.5, margin=0.05, span_matches=none_above)
    assert low == []


def test_source_spans_and_the_best_clause_per_node():
    hike = Triple("Fed raised rates", "causes", "rally nearing end", cause_text="the Fed  raised rates", effect_text="a rally may be nearing its end")
    again = Triple("Fed raised rates", "causes", "rally nearing end", cause_text="Fed raised rates", effect_text="")
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_edge(hike.cause, hike.effect, triples=[hike, again])
    # Whitespace is normalised; a span equal to the name and an empty span add nothing.
    assert source_spans(graph) == [("Fed raised rates", "the Fed raised rates"), ("rally nearing end", "a rally may be nearing its end")]
    spans = [("a", "first"), ("a", "second"), ("b", "third")]
    vectors = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    best = best_span_matches(spans, vectors, np.array([0.0, 2.0]))
    assert {k: (round(v, 2), s) for k, (v, s) in best.items()} == {"a": (0.8, "second"), "b": (1.0, "third")}
    assert best_span_matches([], np.zeros((0, 2)), np.array([1.0, 0.0])) == {}


def test_the_paper_setting_matches_names_only():
    assert SARGConfig().match_spans is True
    assert SARGConfig.paper().match_spans is False


def test_cached_embedder_counts_and_bounds():
    inner = HashingEmbedder()
    cache = CachedEmbedder(inner, max_size=2)
    cache.embed(["a", "b", "a"])
    assert inner.calls == [["a", "b"]]
    cache.embed(["c"])  # evicts "a"
    cache.embed(["a", "c"])
    assert inner.calls[-1] == ["a"]
    assert cache.hits == 1
    with pytest.raises(InputError, match="embed"):
        CachedEmbedder(object())


def test_cached_embedder_rejects_wrong_shapes():
    class Bad:
        def embed(self, texts):
            return np.zeros(3)

    with pytest.raises(InputError, match="expected"):
        CachedEmbedder(Bad()).embed(["a", "b"])


def test_to_jsonable_never_fails():
    class Opaque:
        def __repr__(self):
            return "<opaque>"

    value = {"set": {2, 1}, "obj": Opaque(), "nan": float("inf"), "np": np.float32(0.5), 3: (1,)}
    assert json.dumps(to_jsonable(value)) == '{"set": [1, 2], "obj": "<opaque>", "nan": null, "np": 0.5, "3": [1]}'
    assert "graph" in {f for f in SARGResult.__dataclass_fields__}
