"""Semantic beam search over the reasoning graph and chain selection (paper §3.5–3.6).

A chain ``[v1, v2, …, vL]`` is scored by the running average of the query–node cosine
similarity over ``v2 … vL`` (Eq. 5); the entry node ``v1`` anchors the chain and is not
scored. At each depth only the best ``width`` partial chains per entry node survive. A
chain is complete when it reaches a dead end (no unvisited neighbour in the walking
direction) or the safety cap on depth. Ties are broken by the node sequence, so results
are reproducible.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

from sarg_integrations.schema import ChainHop, Direction, EntryNode, ReasoningChain, RelationType

__all__ = [
    "BeamSearchStats",
    "beam_search_chains",
    "chain_from_nodes",
    "disconnected_ends_note",
    "running_average_score",
    "select_chains",
]

NodeScore = Callable[[str], float]


@dataclass
class BeamSearchStats:
    """Counters of one beam search.

    Attributes:
        expansions: Partial chains generated (one per neighbour followed).
        pruned: Partial chains dropped by the beam.
        capped: Chains stopped by ``max_depth`` rather than a dead end.
        dead_entries: Entry nodes with no neighbour in the walking direction.
    """

    expansions: int = 0
    pruned: int = 0
    capped: int = 0
    dead_entries: int = 0


def _score_function(scores: Mapping[str, float] | NodeScore) -> NodeScore:
    if callable(scores):
        return scores
    return lambda node: float(scores[node])


def _neighbors(graph: nx.DiGraph, node: str, direction: Direction) -> set[str]:
    if direction is Direction.FORWARD:
        return set(graph.successors(node))
    if direction is Direction.BACKWARD:
        return set(graph.predecessors(node))
    return set(graph.successors(node)) | set(graph.predecessors(node))


def running_average_score(node_scores: Sequence[float]) -> float:
    """Return Eq. 5's chain score for the similarities of ``v2 … vL``, step by step.

    ``S_t = (S_{t-1} · (t - 1) + sim_t) / t``; an empty sequence (a lone entry node)
    scores 0.

    Example:
        >>> running_average_score([0.9, 0.3, 0.6])
        0.6
    """
    score = 0.0
    for t, sim in enumerate(node_scores, start=1):
        score = (score * (t - 1) + sim) / t
    return round(score, 12)


def _check_graph(graph: nx.Graph) -> None:
    if not graph.is_directed():
        msg = "beam search needs a directed graph (cause → effect); got an undirected one"
        raise nx.NetworkXNotImplemented(msg)


def beam_search_chains(
    graph: nx.DiGraph,
    sources: Sequence[str],
    node_score: Mapping[str, float] | NodeScore,
    direction: Direction | str = Direction.FORWARD,
    *,
    width: int = 3,
    max_depth: int = 8,
    stats: BeamSearchStats | None = None,
) -> Iterator[tuple[tuple[str, ...], float]]:
    """Yield complete chains ``(nodes, score)`` found by semantic beam search.

    Each source gets its own beam, so one strong query concept cannot crowd out the
    others. A chain never visits a node twice. Forward follows successors (cause →
    effect), backward predecessors, bidirectional both.

    Args:
        graph: A directed graph.
        sources: Entry nodes, in the order their chains should be yielded.
        node_score: Query–node similarity, a mapping or a callable.
        direction: The walking direction.
        width: Beam width β: partial chains kept per depth and source.
        max_depth: The most hops in a chain (a safety cap; the paper stops at dead ends).
        stats: Filled with counters when given.

    Example:
        >>> g = nx.DiGraph([("a", "b"), ("b", "c"), ("a", "d")])
        >>> sims = {"a": 0.0, "b": 0.9, "c": 0.3, "d": 0.5}
        >>> list(beam_search_chains(g, ["a"], sims, "forward", width=1))
        [(('a', 'b', 'c'), 0.6)]
        >>> list(beam_search_chains(g, ["c"], sims, "backward", width=3))
        [(('c', 'b', 'a'), 0.45)]
    """
    _check_graph(graph)
    direction = Direction.parse(direction)
    if width < 1 or max_depth < 1:
        msg = f"width={width!r} and max_depth={max_depth!r} must both be >= 1"
        raise ValueError(msg)
    score_of = _score_function(node_score)
    stats = stats if stats is not None else BeamSearchStats()
    for source in sources:
        if source not in graph:
            msg = f"source node {source!r} is not in the graph"
            raise nx.NodeNotFound(msg)
        beam: list[tuple[tuple[str, ...], float]] = [((source,), 0.0)]
        finished: list[tuple[tuple[str, ...], float]] = []
        for _depth in range(max_depth):
            candidates: list[tuple[tuple[str, ...], float]] = []
            for nodes, score in beam:
                options = _neighbors(graph, nodes[-1], direction).difference(nodes)
                if not options:
                    if len(nodes) > 1:
                        finished.append((nodes, score))
                    else:
                        stats.dead_entries += 1
                    continue
                t = len(nodes)  # the new node is the t-th scored node
                for node in sorted(options):
                    new_score = (score * (t - 1) + score_of(node)) / t
                    candidates.append(((*nodes, node), round(new_score, 12)))
            stats.expansions += len(candidates)
            candidates.sort(key=lambda c: (-c[1], c[0]))
            stats.pruned += max(0, len(candidates) - width)
            beam = candidates[:width]
            if not beam:
                break
        else:
            stats.capped += len(beam)
            finished.extend(beam)
        finished.sort(key=lambda c: (-c[1], c[0]))
        yield from finished


def chain_from_nodes(
    graph: nx.DiGraph, nodes: Sequence[str], score: float, direction: Direction | str
) -> ReasoningChain:
    """Build a :class:`ReasoningChain` with per-hop relations and sources.

    For each consecutive pair the graph edge in the walking direction is used; walking
    bidirectionally, the forward edge is preferred when both exist.

    Raises:
        ValueError: If two consecutive nodes are not joined by an edge usable in
            ``direction``.
    """
    direction = Direction.parse(direction)
    hops = []
    for source, target in itertools.pairwise(nodes):
        forward_ok = direction is not Direction.BACKWARD and graph.has_edge(source, target)
        backward_ok = direction is not Direction.FORWARD and graph.has_edge(target, source)
        if not (forward_ok or backward_ok):
            msg = f"no {direction.value} edge between {source!r} and {target!r}"
            raise ValueError(msg)
        edge = (source, target) if forward_ok else (target, source)
        triples = graph.edges[edge].get("triples", [])
        first = triples[0] if triples else None
        hops.append(
            ChainHop(
                source=source,
                target=target,
                relation=first.relation if first else "related to",
                relation_type=first.relation_type if first else RelationType.GENERIC,
                forward=forward_ok,
                document_ids=tuple(t.document_id for t in triples),
                sentences=tuple(t.sentence for t in triples),
            )
        )
    return ReasoningChain(tuple(nodes), tuple(hops), score, direction)


def _is_contiguous_subpath(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    n = len(short)
    return any(long[i : i + n] == short for i in range(len(long) - n + 1))


def select_chains(
    chains: Sequence[ReasoningChain], top_k: int = 3
) -> tuple[list[ReasoningChain], list[ReasoningChain]]:
    """Deduplicate, prune sub-paths and keep the best ``top_k`` chains (paper §3.6).

    A chain is pruned when its node sequence is a contiguous part of a longer chain
    scoring at least as well (``A→B`` goes when ``A→B→C`` is found and is no worse).
    Order: score, then length (longer first), then node sequence.

    Returns:
        ``(kept, candidates)``: at most ``top_k`` chains, and every distinct chain
        sorted in the same order.

    Example:
        >>> def c(nodes, score):
        ...     return ReasoningChain(tuple(nodes), (), score, Direction.FORWARD)
        >>> kept, _ = select_chains([c("ab", 0.5), c("abc", 0.5), c("abc", 0.5), c("xy", 0.4)])
        >>> [("".join(k.nodes), k.score) for k in kept]
        [('abc', 0.5), ('xy', 0.4)]
    """
    unique: dict[tuple[str, ...], ReasoningChain] = {}
    for chain in chains:
        known = unique.get(chain.nodes)
        if known is None or chain.score > known.score:
            unique[chain.nodes] = chain
    ordered = sorted(unique.values(), key=lambda c: (-c.score, -len(c.nodes), c.nodes))
    survivors = [
        chain
        for chain in ordered
        if not any(
            len(other.nodes) > len(chain.nodes)
            and other.score >= chain.score
            and _is_contiguous_subpath(chain.nodes, other.nodes)
            for other in ordered
        )
    ]
    return survivors[:top_k], ordered


DISCONNECTED_ENDS = (
    "the graph fell apart: no chain links {first!r} and {second!r}, whose entry nodes lie "
    "in disconnected parts of the graph; each kept chain describes one side only"
)


def disconnected_ends_note(
    graph: nx.DiGraph,
    entry_nodes: Sequence[EntryNode],
    chains: Sequence[ReasoningChain],
    direction: Direction | None,
) -> str | None:
    """Say when a "how is X connected to Y" question got chains that cannot connect X and Y.

    The query's two ends are the key phrases of the best two entry nodes with different
    key phrases. When the direction is bidirectional, chains were kept, and no weakly
    connected part of the graph holds entry nodes of both ends, no chain can link them:
    the kept chains come from disconnected pieces. Returns the note, else ``None``.

    Example:
        >>> g = nx.DiGraph([("rain", "flood"), ("drought", "famine")])
        >>> ends = [EntryNode("rain", 0.9, "rain"), EntryNode("famine", 0.8, "famine")]
        >>> hop = ChainHop("rain", "flood", "causes", RelationType.CAUSAL, True, ("d",), ("",))
        >>> chain = ReasoningChain(("rain", "flood"), (hop,), 0.5, Direction.BIDIRECTIONAL)
        >>> disconnected_ends_note(g, ends, [chain], Direction.BIDIRECTIONAL)[:45]
        "the graph fell apart: no chain links 'rain' a"
    """
    if direction is not Direction.BIDIRECTIONAL or not chains:
        return None
    ends: dict[str, set[str]] = {}
    for entry in entry_nodes:
        if entry.keyphrase in ends or len(ends) < 2:
            ends.setdefault(entry.keyphrase, set()).add(entry.node)
    if len(ends) < 2:
        return None
    part = {n: i for i, nodes in enumerate(nx.weakly_connected_components(graph)) for n in nodes}
    (first, a), (second, b) = ends.items()
    if {part.get(n) for n in a} & {part.get(n) for n in b}:
        return None
    return DISCONNECTED_ENDS.format(first=first, second=second)
