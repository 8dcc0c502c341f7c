"""Semantic beam search (paper Eq. 5) and chain selection, on hand-built graphs."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest

from sarg_integrations.schema import Direction, ReasoningChain, Triple
from sarg_integrations.traversal import (
    BeamSearchStats,
    beam_search_chains,
    chain_from_nodes,
    running_average_score,
    select_chains,
)


def _graph(edges):
    g = nx.DiGraph()
    for u, v in edges:
        g.add_edge(u, v, triples=[Triple(u, f"{u}->{v}", v, document_id=f"doc-{u}{v}", sentence=f"{u} then {v}.")])
    return g


def test_eq5_running_average_by_hand():
    # S1 = 0.8; S2 = (0.8*1 + 0.2)/2 = 0.5; S3 = (0.5*2 + 0.8)/3 = 0.6
    assert running_average_score([0.8, 0.2, 0.8]) == pytest.approx(0.6)
    assert running_average_score([]) == 0.0


def test_entry_node_is_not_scored():
    # The entry node has similarity 1.0, yet the chain's score is only the next node's.
    g = _graph([("a", "b")])
    chains = list(beam_search_chains(g, ["a"], {"a": 1.0, "b": 0.25}, "forward"))
    assert chains == [(("a", "b"), 0.25)]


def test_scores_of_every_chain_match_hand_computation():
    g = _graph([("a", "b"), ("b", "c"), ("b", "d")])
    sims = {"a": 0.9, "b": 0.6, "c": 0.0, "d": 0.3}
    chains = dict(beam_search_chains(g, ["a"], sims, "forward", width=5))
    # a->b->c: (0.6 + 0.0)/2 = 0.3 ; a->b->d: (0.6 + 0.3)/2 = 0.45
    assert chains == {("a", "b", "d"): pytest.approx(0.45), ("a", "b", "c"): pytest.approx(0.3)}


def test_narrow_beam_prunes_the_path_that_starts_weak():
    # Width 1 keeps only a->x at depth 1 (0.9 > 0.1), so the better overall a->y->z
    # ((0.1 + 1.0 + 1.0)/3 = 0.7 vs a->x->w (0.9 + 0.0)/2 = 0.45) is missed; width 2 finds it.
    g = _graph([("a", "x"), ("x", "w"), ("a", "y"), ("y", "z"), ("z", "q")])
    sims = {"a": 0, "x": 0.9, "w": 0.0, "y": 0.1, "z": 1.0, "q": 1.0}
    greedy = list(beam_search_chains(g, ["a"], sims, "forward", width=1))
    assert greedy == [(("a", "x", "w"), pytest.approx(0.45))]
    wide = list(beam_search_chains(g, ["a"], sims, "forward", width=2))
    assert wide[0] == (("a", "y", "z", "q"), pytest.approx(0.7))


def test_forward_never_walks_an_edge_backwards_and_backward_always_does():
    g = _graph([("a", "b"), ("b", "c"), ("d", "b"), ("c", "e")])
    sims = dict.fromkeys("abcde", 0.5)
    for nodes, score in beam_search_chains(g, ["b"], sims, "forward", width=10):
        chain = chain_from_nodes(g, nodes, score, "forward")
        assert all(hop.forward and g.has_edge(hop.source, hop.target) for hop in chain.hops)
    backward = [n for n, _ in beam_search_chains(g, ["b"], sims, "backward", width=10)]
    assert sorted(backward) == [("b", "a"), ("b", "d")]
    for nodes in backward:
        chain = chain_from_nodes(g, nodes, 0.5, "backward")
        assert all(not hop.forward and g.has_edge(hop.target, hop.source) for hop in chain.hops)


def test_bidirectional_follows_both_and_marks_each_hop():
    g = _graph([("a", "b"), ("c", "b")])
    chains = [n for n, _ in beam_search_chains(g, ["a"], dict.fromkeys("abc", 0.5), "bidirectional")]
    assert chains == [("a", "b", "c")]
    chain = chain_from_nodes(g, ("a", "b", "c"), 0.5, "bidirectional")
    assert [h.forward for h in chain.hops] == [True, False]
    assert [h.edge for h in chain.hops] == [("a", "b"), ("c", "b")]


def test_no_node_is_visited_twice_in_a_cycle():
    g = _graph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    chains = [n for n, _ in beam_search_chains(g, ["a"], dict.fromkeys("abcd", 0.5), "forward", width=10)]
    assert chains == [("a", "b", "c", "d")]
    assert all(len(set(c)) == len(c) for c in chains)


def test_depth_cap_stops_long_chains_and_counts_them():
    g = nx.DiGraph([(i, i + 1) for i in range(20)])
    g = nx.relabel_nodes(g, {i: f"n{i:02d}" for i in range(21)})
    stats = BeamSearchStats()
    chains = list(beam_search_chains(g, ["n00"], lambda n: 0.5, "forward", max_depth=4, stats=stats))
    assert [len(c) - 1 for c, _ in chains] == [4]
    assert stats.capped == 1


def test_dead_entry_yields_nothing():
    g = _graph([("a", "b")])
    stats = BeamSearchStats()
    assert list(beam_search_chains(g, ["b"], {"a": 1, "b": 1}, "forward", stats=stats)) == []
    assert stats.dead_entries == 1


def test_rejects_undirected_graphs_and_unknown_sources():
    with pytest.raises(nx.NetworkXNotImplemented, match="directed"):
        list(beam_search_chains(nx.Graph([("a", "b")]), ["a"], {}, "forward"))
    with pytest.raises(nx.NodeNotFound, match="'zz'"):
        list(beam_search_chains(_graph([("a", "b")]), ["zz"], {}, "forward"))
    with pytest.raises(ValueError, match="sideways"):
        list(beam_search_chains(_graph([("a", "b")]), ["a"], {}, "sideways"))


def _maximal_paths(g, source, direction):
    """Every simple path from source that cannot be extended (brute force)."""
    nbrs = g.successors if direction == "forward" else g.predecessors
    out = []

    def walk(path):
        options = [n for n in nbrs(path[-1]) if n not in path]
        if not options and len(path) > 1:
            out.append(tuple(path))
        for n in options:
            walk([*path, n])

    walk([source])
    return out


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_wide_beam_equals_brute_force_on_random_dags(seed, direction):
    rng = random.Random(seed)
    n = rng.randint(4, 9)
    nodes = [f"v{i}" for i in range(n)]
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for i, j in itertools.combinations(range(n), 2):
        if rng.random() < 0.35:
            g.add_edge(nodes[i], nodes[j])
    sims = {v: round(rng.random(), 3) for v in nodes}
    for source in nodes:
        brute = {p: running_average_score([sims[v] for v in p[1:]]) for p in _maximal_paths(g, source, direction)}
        found = dict(beam_search_chains(g, [source], sims, direction, width=10_000, max_depth=50))
        assert found.keys() == brute.keys()
        for path, score in found.items():
            assert score == pytest.approx(brute[path])
        if brute:
            best = max(brute.values())
            assert max(found.values()) == pytest.approx(best)


def _chain(nodes, score):
    return ReasoningChain(tuple(nodes), (), score, Direction.FORWARD)


def test_subpaths_of_longer_no_worse_chains_are_pruned():
    kept, candidates = select_chains(
        [_chain("ab", 0.4), _chain("abc", 0.5), _chain("bc", 0.5), _chain("xy", 0.3)], top_k=5
    )
    assert [k.nodes for k in kept] == [tuple("abc"), tuple("xy")]
    assert len(candidates) == 4


def test_a_better_scoring_subpath_survives():
    # The paper prunes sub-paths of longer *higher-scoring* chains only.
    kept, _ = select_chains([_chain("ab", 0.9), _chain("abc", 0.5)], top_k=5)
    assert [k.nodes for k in kept] == [tuple("ab"), tuple("abc")]


def test_non_contiguous_subsequence_is_not_a_subpath():
    kept, _ = select_chains([_chain("ac", 0.4), _chain("abc", 0.5)], top_k=5)
    assert [k.nodes for k in kept] == [tuple("abc"), tuple("ac")]


def test_duplicates_removed_top_k_kept_and_ties_broken_deterministically():
    chains = [_chain("pq", 0.5), _chain("mn", 0.5), _chain("mn", 0.5), _chain("xyz", 0.5), _chain("rs", 0.1)]
    kept, candidates = select_chains(chains, top_k=3)
    # Equal scores: longer first, then node sequence.
    assert [k.nodes for k in kept] == [tuple("xyz"), tuple("mn"), tuple("pq")]
    assert len(candidates) == 4
    assert select_chains(list(reversed(chains)), top_k=3)[0] == kept


def test_chain_records_relations_and_sources():
    g = _graph([("a", "b"), ("b", "c")])
    g.edges["a", "b"]["triples"].append(Triple("a", "also", "b", document_id="doc-z", sentence="z."))
    chain = chain_from_nodes(g, ("a", "b", "c"), 0.4, "forward")
    assert chain.hops[0].relation == "a->b"
    assert chain.hops[0].document_ids == ("doc-ab", "doc-z")
    assert chain.document_ids == ("doc-ab", "doc-z", "doc-bc")
    assert chain.to_text() == "a --[a->b]--> b --[b->c]--> c"
    with pytest.raises(ValueError, match="no forward edge"):
        chain_from_nodes(g, ("c", "b"), 0.1, "forward")
