"""What the pictures show: the nodes and edges of a result's graph, chain colours, labels."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sarg_integrations.schema import SARGResult

from sarg_integrations.viz.layout import layout_graph

__all__ = [
    "CHAIN_COLOURS",
    "MAX_NODES",
    "EdgeView",
    "NodeView",
    "View",
    "build_view",
    "chain_colour",
    "picture_data",
    "tint",
    "wrap_label",
    "write_text",
]

CHAIN_COLOURS: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
)
"""Colours of the kept chains, best chain first (Okabe-Ito, colour-blind safe)."""

OTHER_EDGE = "#9a9a9a"
ENTRY_STROKE = "#111111"
LABEL_WIDTH = 22
"""Characters per line of a node label in the pictures."""
LABEL_LINES = 3
MAX_NODES = 150


@dataclass(frozen=True)
class EdgeView:
    """One edge as drawn: its chains, relation, sentences and documents."""

    source: str
    target: str
    relations: tuple[str, ...]
    relation_types: tuple[str, ...]
    evidence: tuple[tuple[str, str], ...]  # (document id, sentence)
    chains: tuple[int, ...]  # 1-based chain numbers walking this edge


@dataclass(frozen=True)
class NodeView:
    """One node as drawn: its chains, aliases, documents and entry similarity."""

    id: str
    aliases: tuple[str, ...]
    documents: tuple[str, ...]
    entry: bool
    entry_similarity: float | None
    chains: tuple[int, ...]


@dataclass(frozen=True)
class View:
    """The nodes and edges to draw, and the size of the whole graph."""

    nodes: tuple[NodeView, ...]
    edges: tuple[EdgeView, ...]
    total_nodes: int
    total_edges: int


def _chain_edges(result: SARGResult) -> dict[tuple[str, str], list[int]]:
    """Map each graph edge ``(cause, effect)`` to the kept chains (1-based) that walk it."""
    out: dict[tuple[str, str], list[int]] = {}
    for number, chain in enumerate(result.chains, start=1):
        for hop in chain.hops:
            chains = out.setdefault(hop.edge, [])
            if number not in chains:
                chains.append(number)
    return out


def _chain_nodes(result: SARGResult) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for number, chain in enumerate(result.chains, start=1):
        for node in chain.nodes:
            chains = out.setdefault(node, [])
            if number not in chains:
                chains.append(number)
    return out


def build_view(result: SARGResult, max_nodes: int | None = MAX_NODES, scope: str = "all") -> View:
    """The nodes and edges to draw, with everything the pictures show about them."""
    g = result.graph.graph
    entries = {e.node: e.similarity for e in result.entry_nodes}
    chain_nodes = _chain_nodes(result)
    chain_edges = _chain_edges(result)
    keep = list(g.nodes)
    if scope not in ("all", "chains"):
        msg = f"scope={scope!r} is not a scope; use 'all' (the whole local graph) or 'chains'"
        raise ValueError(msg)
    if scope == "chains" and chain_nodes:
        import networkx as nx

        around = set()
        for comp in nx.weakly_connected_components(g):
            if comp & chain_nodes.keys():
                around |= comp
        keep = [n for n in keep if n in around]
    if max_nodes is not None and len(keep) > max_nodes:
        core = [n for n in g.nodes if n in chain_nodes or n in entries]
        chosen = dict.fromkeys(core)
        for node in core:
            for other in (*g.successors(node), *g.predecessors(node)):
                if len(chosen) >= max(max_nodes, len(core)):
                    break
                chosen.setdefault(other)
        keep = [n for n in g.nodes if n in chosen]
    kept = set(keep)
    nodes = tuple(
        NodeView(
            id=str(n),
            aliases=tuple(g.nodes[n].get("aliases", ())),
            documents=tuple(g.nodes[n].get("documents", ())),
            entry=n in entries,
            entry_similarity=entries.get(n),
            chains=tuple(chain_nodes.get(n, ())),
        )
        for n in keep
    )
    edges = []
    for u, v, data in g.edges(data=True):
        if u not in kept or v not in kept:
            continue
        triples = list(data.get("triples", ()))
        edges.append(
            EdgeView(
                source=str(u),
                target=str(v),
                relations=tuple(dict.fromkeys(t.relation for t in triples)),
                relation_types=tuple(dict.fromkeys(str(t.relation_type) for t in triples)),
                evidence=tuple(dict.fromkeys((t.document_id, t.sentence) for t in triples)),
                chains=tuple(chain_edges.get((u, v), ())),
            )
        )
    return View(nodes, tuple(edges), g.number_of_nodes(), g.number_of_edges())


def chain_colour(number: int) -> str:
    """The colour of chain ``number`` (1-based), cycling through :data:`CHAIN_COLOURS`."""
    return CHAIN_COLOURS[(number - 1) % len(CHAIN_COLOURS)]


def tint(colour: str, amount: float = 0.8) -> str:
    """Mix ``#rrggbb`` with white (``amount`` of white)."""
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    mix = [round(c + (255 - c) * amount) for c in (r, g, b)]
    return "#" + "".join(f"{c:02x}" for c in mix)


def wrap_label(text: str, width: int = LABEL_WIDTH, lines: int = LABEL_LINES) -> list[str]:
    """``text`` wrapped to ``width`` columns, at most ``lines`` lines (the last cut with …)."""
    wrapped = textwrap.wrap(" ".join(text.split()), width=width, break_long_words=True) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: max(0, width - 1)].rstrip() + "\u2026"
    return wrapped


def picture_data(
    result: SARGResult, max_nodes: int | None = MAX_NODES, scope: str = "all"
) -> dict[str, Any]:
    """The JSON the HTML page draws: nodes with positions, edges, chains, summary."""
    view = build_view(result, max_nodes=max_nodes, scope=scope)
    chain_first = [n for c in result.chains for n in c.nodes]
    layout = layout_graph(
        [n.id for n in view.nodes],
        [(e.source, e.target) for e in view.edges],
        priority=[*chain_first, *(e.node for e in result.entry_nodes)],
    )
    nodes = [
        {
            "id": n.id,
            "lines": wrap_label(n.id),
            "x": layout.positions[n.id][0],
            "y": layout.positions[n.id][1],
            "aliases": list(n.aliases),
            "documents": list(n.documents),
            "entry": n.entry,
            "similarity": None if n.entry_similarity is None else round(n.entry_similarity, 4),
            "chains": list(n.chains),
        }
        for n in view.nodes
    ]
    edges = [
        {
            "source": e.source,
            "target": e.target,
            "label": " / ".join(e.relations) or "related to",
            "types": list(e.relation_types),
            "evidence": [{"document": d, "sentence": s} for d, s in e.evidence],
            "chains": list(e.chains),
        }
        for e in view.edges
    ]
    chains = [
        {
            "number": i,
            "colour": chain_colour(i),
            "text": chain.to_text(),
            "score": round(chain.score, 4),
            "documents": list(chain.document_ids),
            "nodes": list(chain.nodes),
        }
        for i, chain in enumerate(result.chains, start=1)
    ]
    d = result.direction
    return {
        "query": result.query,
        "direction": d.direction.value if d else None,
        "confidence": round(float(d.confidence), 4) if d else None,
        "nodes": nodes,
        "edges": edges,
        "chains": chains,
        "columns": layout.columns,
        "rows": layout.rows,
        "total_nodes": view.total_nodes,
        "total_edges": view.total_edges,
        "fallback_reason": result.fallback_reason,
    }


def write_text(path: str | Path, text: str, what: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically; an unwritable path is an :class:`InputError`.

    A failed write (full disk) leaves an existing file as it was.
    """
    from sarg_integrations._atomic import atomic_write_text
    from sarg_integrations.errors import InputError

    try:
        atomic_write_text(path, text)
    except OSError as exc:
        msg = f"cannot write the {what} file {path}: {exc.strerror or exc}; pass a writable path"
        raise InputError(msg, argument="path", value=str(path)) from None
