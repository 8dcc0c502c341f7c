"""Graph aggregation (Eq. 2) and entity resolution."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import HashingEmbedder

from sarg_integrations.graph import build_reasoning_graph, normalize_phrase, resolve_entities
from sarg_integrations.schema import Triple


class TableEmbedder:
    """Returns hand-chosen unit vectors so cosine similarities are exact."""

    def __init__(self, table):
        self.table = table

    def embed(self, texts):
        return np.array([self.table[t] for t in texts], dtype=float)


def _unit(angle_deg):
    a = np.deg2rad(angle_deg)
    return [np.cos(a), np.sin(a)]


@pytest.mark.parametrize(
    ("phrase", "normal"),
    [
        ("The rate hikes", "rate hike"),
        ("rate-hike", "rate hike"),
        ("  Rate   Hikes. ", "rate hike"),
        ("its policies", "policy"),
        ("a crisis", "crisis"),
        ("diabetes", "diabetes"),
        ("the patient's", "patient"),
        ("glass", "glass"),
    ],
)
def test_normal_form(phrase, normal):
    assert normalize_phrase(phrase) == normal


def test_vertices_and_edges_follow_eq2():
    triples = [
        Triple("A", "causes", "B", document_id="d1", sentence="A causes B."),
        Triple("B", "causes", "C", document_id="d2", sentence="B causes C."),
        Triple("A", "leads to", "B", document_id="d3", sentence="A leads to B."),
    ]
    rg = build_reasoning_graph(triples)
    assert set(rg.graph.nodes) == {"A", "B", "C"}
    assert set(rg.graph.edges) == {("A", "B"), ("B", "C")}
    # Both supporting triples stay on the edge, with their documents and sentences.
    supports = rg.graph.edges["A", "B"]["triples"]
    assert [(t.document_id, t.sentence) for t in supports] == [("d1", "A causes B."), ("d3", "A leads to B.")]
    assert rg.graph.nodes["B"]["documents"] == ["d1", "d2", "d3"]


def test_normal_form_merges_across_documents_and_keeps_aliases():
    triples = [
        Triple("Interest rate hikes", "raise", "bond yields", document_id="d1"),
        Triple("the interest-rate hike", "hurts", "Tech valuations", document_id="d2"),
        Triple("interest rate hikes", "slow", "lending", document_id="d3"),
        Triple("interest rate hikes", "hurt", "housing", document_id="d3"),
    ]
    rg = build_reasoning_graph(triples)
    hub = "interest rate hikes"  # the most frequent surface form names the node
    assert rg.graph.out_degree(hub) == 4
    assert rg.graph.nodes[hub]["aliases"] == ["Interest rate hikes", "interest rate hikes", "the interest-rate hike"]
    assert {(m.alias, m.method) for m in rg.merges} >= {("the interest-rate hike", "normalized")}


def test_embedding_merge_above_threshold_only():
    table = {
        "tech stock": _unit(0),
        "technology stock": _unit(20),  # cos 20° = 0.94 -> merges
        "bond": _unit(60),  # cos 60° = 0.5 -> stays apart
    }
    node_of, merges = resolve_entities(
        ["tech stock", "tech stock", "technology stock", "bond"],
        embedder=TableEmbedder(table),
        merge_threshold=0.9,
    )
    assert node_of["technology stock"] == "tech stock"
    assert node_of["bond"] == "bond"
    assert [(m.canonical, m.alias, m.method) for m in merges] == [("tech stock", "technology stock", "embedding")]
    assert merges[0].similarity == pytest.approx(np.cos(np.deg2rad(20)), abs=1e-3)


def test_no_transitive_merge_chains():
    # a~b (cos 18°=0.95) and b~c (0.95) but a,c at 36° (0.81): c must not join a's cluster
    # through b. a is most frequent, so it is the representative; b joins it; c is compared
    # with the representative only and stays apart.
    table = {"alpha": _unit(0), "beta": _unit(18), "gamma": _unit(36)}
    node_of, _ = resolve_entities(
        ["alpha", "alpha", "alpha", "beta", "beta", "gamma"], embedder=TableEmbedder(table), merge_threshold=0.9
    )
    assert node_of["beta"] == "alpha"
    assert node_of["gamma"] == "gamma"


@pytest.mark.parametrize(
    ("a", "b"),
    [("type 1 diabetes", "type 2 diabetes"), ("rate hike", "rate cut"), ("insulin secretion", "no insulin secretion")],
)
def test_guards_block_merging_opposites_even_with_identical_vectors(a, b):
    table = {a: _unit(0), b: _unit(0)}
    node_of, merges = resolve_entities([a, b], embedder=TableEmbedder(table), merge_threshold=0.5)
    assert node_of[a] != node_of[b]
    assert merges == []


def test_head_sharing_subphrase_merges_with_a_small_margin():
    table = {"interest rate hike": _unit(0), "rate hike": _unit(31)}  # cos 31° = 0.857
    node_of, _ = resolve_entities(
        ["interest rate hike", "interest rate hike", "rate hike"], embedder=TableEmbedder(table), merge_threshold=0.88
    )
    assert node_of["rate hike"] == "interest rate hike"
    table = {"insulin production": _unit(0), "insulin": _unit(31)}  # different heads: no margin
    node_of, _ = resolve_entities(
        ["insulin production", "insulin"], embedder=TableEmbedder(table), merge_threshold=0.88
    )
    assert node_of["insulin"] == "insulin"


def test_a_phrase_plus_a_head_word_of_its_own_never_merges_with_it():
    # An event of a thing ("norovirus outbreak", "Kessa reservoir created") is not the
    # thing ("Norovirus"), however close the embeddings.
    for thing, event in [("Norovirus", "norovirus outbreak"), ("Kessa reservoir", "Kessa reservoir created")]:
        table = {thing: _unit(0), event: _unit(0)}
        node_of, merges = resolve_entities([thing, event], embedder=TableEmbedder(table), merge_threshold=0.5)
        assert node_of[thing] != node_of[event]
        assert merges == []
    # Same head, or a partitive head ("part of …"): the same thing, so they merge.
    for short, long in [("rate hike", "interest rate hike"), ("plea deal", "part of the plea deal")]:
        table = {short: _unit(0), long: _unit(0)}
        node_of, _ = resolve_entities([short, long], embedder=TableEmbedder(table))
        assert node_of[short] == node_of[long]


def test_an_embedding_merge_record_names_what_was_absorbed():
    # "rate hike" is the representative (first in order), but the cluster is named by the
    # more specific "steep rate hike": the record's alias is then "rate hike", never the
    # node's own name.
    table = {"rate hike": _unit(0), "steep rate hike": _unit(10)}
    node_of, merges = resolve_entities(["rate hike", "steep rate hike"], embedder=TableEmbedder(table))
    assert node_of["rate hike"] == "steep rate hike"
    assert [(m.canonical, m.alias, m.method) for m in merges] == [("steep rate hike", "rate hike", "embedding")]


def test_a_bare_head_word_joins_the_one_phrase_with_that_head():
    # Far apart in cosine, but "the blast" is the blast the other document tells in full.
    long = "Saturday's gas blast in Yuanhua Coal Mine"
    table = {"the blast": _unit(0), long: _unit(60), "police": _unit(90)}
    node_of, merges = resolve_entities(["the blast", long, "police"], embedder=TableEmbedder(table))
    assert node_of["the blast"] == node_of[long] == long
    assert [(m.canonical, m.alias, m.method) for m in merges] == [(long, "the blast", "head")]
    # Two phrases with that head: which blast is meant is unknown.
    table["third gas blast in Luweitan Colliery"] = _unit(120)
    node_of, _ = resolve_entities(list(table), embedder=TableEmbedder(table))
    assert node_of["the blast"] == "the blast"
    # A clause's last word is no head: "farmers gave up rice" is no rice, and a verb
    # names no thing ("released" / "first solo album released").
    for word, clause in [("rice", "farmers gave up rice"), ("released", "first solo album released")]:
        table = {word: _unit(0), clause: _unit(60)}
        node_of, _ = resolve_entities(list(table), embedder=TableEmbedder(table))
        assert node_of[word] == word


def test_self_loops_after_resolution_are_dropped_and_counted():
    rg = build_reasoning_graph(
        [Triple("Rate hikes", "cause", "rate hike", document_id="d1"), Triple("x", "causes", "y", document_id="d1")]
    )
    assert rg.self_loops_dropped == 1
    assert list(rg.graph.edges) == [("x", "y")]


def test_graph_summary_is_json_ready_and_deterministic():
    triples = [Triple("b", "causes", "c", document_id="d2"), Triple("a", "causes", "b", document_id="d1")]
    first = build_reasoning_graph(triples, embedder=HashingEmbedder()).to_dict()
    again = build_reasoning_graph(triples, embedder=HashingEmbedder()).to_dict()
    assert first == again
    assert {e["source"] + e["target"] for e in first["edges"]} == {"bc", "ab"}


def test_prepositional_tail_counts_as_the_same_head():
    table = {"crop failure": _unit(0), "crop failure in the region": _unit(30)}  # cos 30° = 0.866
    node_of, _ = resolve_entities(
        ["crop failure", "crop failure", "crop failure in the region"], embedder=TableEmbedder(table), merge_threshold=0.88
    )
    assert node_of["crop failure in the region"] == "crop failure"


def test_the_object_of_a_prepositional_phrase_is_not_the_head():
    # "timely treatment of diabetic ketoacidosis" is a treatment, not a ketoacidosis: no
    # sub-phrase margin, so a cosine below the threshold keeps them apart.
    table = {"timely treatment of diabetic ketoacidosis": _unit(0), "diabetic ketoacidosis": _unit(32)}  # 0.848
    node_of, _ = resolve_entities(list(table), embedder=TableEmbedder(table), merge_threshold=0.88)
    assert node_of["diabetic ketoacidosis"] == "diabetic ketoacidosis"


def test_blockwise_similarities_give_the_same_merges(monkeypatch):
    import sarg_integrations.graph as graph_module

    rng = np.random.default_rng(7)
    base = rng.standard_normal((12, 8))
    # 40 phrases, many near-duplicates of 12 concepts, so merges cross block borders.
    concepts = "apple river storm bond lipid enzyme market wage soil cell drought yield".split()
    variants = ("alpha", "beta", "gamma")
    table = {
        f"{c} {v}": base[i] + 0.05 * rng.standard_normal(8) for i, c in enumerate(concepts) for v in variants
    }
    table.update({f"loner {w}": rng.standard_normal(8) for w in ("x", "y", "z", "w")})
    phrases = list(table)
    full = resolve_entities(phrases, embedder=TableEmbedder(table), merge_threshold=0.95)
    monkeypatch.setattr(graph_module, "_SIM_BLOCK", 5)
    blocked = resolve_entities(phrases, embedder=TableEmbedder(table), merge_threshold=0.95)
    assert blocked == full
    assert len(set(full[0].values())) < len(phrases)  # some merges happened
