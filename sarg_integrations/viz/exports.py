"""Data exports of a result's graph: networkx, node-link JSON, GraphML, Mermaid."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx

    from sarg_integrations.schema import SARGResult

from sarg_integrations.viz.view import (
    ENTRY_STROKE,
    OTHER_EDGE,
    build_view,
    chain_colour,
    tint,
    write_text,
)

__all__ = ["to_graphml", "to_mermaid", "to_networkx", "to_node_link"]


def to_networkx(result: SARGResult) -> nx.DiGraph:
    """Return the reasoning graph as a new ``networkx.DiGraph`` with plain attributes.

    Nodes carry ``aliases``, ``documents`` (lists), ``entry`` (bool),
    ``entry_similarity`` (float or ``None``) and ``chains`` (1-based numbers of the kept
    chains through the node). Edges carry ``relation`` (the first relation phrase),
    ``relations``, ``relation_types``, ``documents``, ``sentences`` (aligned with
    ``documents``) and ``chains``. Graph attributes: ``query``, ``direction`` and
    ``chains`` (each kept chain's text). The result's own graph is not modified.
    """
    import networkx as nx

    view = build_view(result, max_nodes=None)
    g = nx.DiGraph(
        query=result.query,
        direction=result.direction.direction.value if result.direction else "none",
        chains=[chain.to_text() for chain in result.chains],
    )
    for node in view.nodes:
        g.add_node(
            node.id,
            aliases=list(node.aliases),
            documents=list(node.documents),
            entry=node.entry,
            entry_similarity=node.entry_similarity,
            chains=list(node.chains),
        )
    for edge in view.edges:
        g.add_edge(
            edge.source,
            edge.target,
            relation=edge.relations[0] if edge.relations else "",
            relations=list(edge.relations),
            relation_types=list(edge.relation_types),
            documents=[doc for doc, _ in edge.evidence],
            sentences=[sentence for _, sentence in edge.evidence],
            chains=list(edge.chains),
        )
    return g


def to_node_link(result: SARGResult) -> dict[str, Any]:
    """Return the graph as node-link data (a JSON-ready dict).

    The layout is networkx's node-link format with the ``"edges"`` key, so
    ``networkx.node_link_graph(data, edges="edges")`` rebuilds :func:`to_networkx`'s
    graph (networkx >= 3.4).
    """
    g = to_networkx(result)
    return {
        "directed": True,
        "multigraph": False,
        "graph": dict(g.graph),
        "nodes": [{"id": node, **data} for node, data in g.nodes(data=True)],
        "edges": [{"source": u, "target": v, **data} for u, v, data in g.edges(data=True)],
    }


def to_graphml(result: SARGResult, path: str | Path | None = None) -> str:
    """Return the graph as GraphML text, and write it to ``path`` when given.

    GraphML holds scalar attributes only, so list attributes (``aliases``,
    ``documents``, ``sentences``, ``chains``…) are stored as JSON strings and
    ``entry_similarity`` as -1.0 for non-entry nodes. ``networkx.read_graphml`` reads it.
    """
    import networkx as nx

    g = to_networkx(result)
    flat = nx.DiGraph()
    flat.graph.update({k: _graphml_value(v) for k, v in g.graph.items()})
    for node, data in g.nodes(data=True):
        attrs = {k: _graphml_value(v) for k, v in data.items()}
        if attrs["entry_similarity"] is None:
            attrs["entry_similarity"] = -1.0
        flat.add_node(node, **attrs)
    for u, v, data in g.edges(data=True):
        flat.add_edge(u, v, **{k: _graphml_value(val) for k, val in data.items()})
    text = "\n".join(nx.generate_graphml(flat, prettyprint=True)) + "\n"
    if path is not None:
        write_text(path, text, "GraphML")
    return text


def _graphml_value(value: Any) -> Any:
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


_MERMAID_UNSAFE = re.compile(r"[\"#&<>\[\]{}()|`\\;]")


def _mermaid_text(text: str) -> str:
    """Escape ``text`` for a quoted Mermaid label with numeric entity codes (``#34;``)."""
    flat = " ".join(str(text).split())
    return _MERMAID_UNSAFE.sub(lambda m: f"#{ord(m.group(0))};", flat)


def to_mermaid(result: SARGResult, *, orientation: str = "LR") -> str:
    """Return the graph as a Mermaid flowchart (renders in GitHub Markdown and Jupyter).

    Node ids are ``n0``, ``n1``…; labels are quoted with every character that could
    break the syntax written as an entity code. Each kept chain's edges are drawn in its
    colour (:data:`CHAIN_COLOURS`), entry nodes get a thick border (class ``entry``).

    Args:
        result: The SARG result.
        orientation: ``"LR"`` (left to right) or ``"TD"`` (top down).

    Example:
        >>> _mermaid_text('say "hi" [now]')
        'say #34;hi#34; #91;now#93;'
    """
    if orientation not in ("LR", "TD", "TB", "RL", "BT"):
        msg = f"orientation={orientation!r} is not a Mermaid orientation; use 'LR' or 'TD'"
        raise ValueError(msg)
    view = build_view(result, max_nodes=None)
    ids = {node.id: f"n{i}" for i, node in enumerate(view.nodes)}
    lines = [f"flowchart {orientation}"]
    for node in view.nodes:
        lines.append(f'    {ids[node.id]}["{_mermaid_text(node.id)}"]')
    styles = []
    for index, edge in enumerate(view.edges):
        label = _mermaid_text(" / ".join(edge.relations) or "related to")
        arrow = "==>" if edge.chains else "-->"
        lines.append(f'    {ids[edge.source]} {arrow}|"{label}"| {ids[edge.target]}')
        if edge.chains:
            colour = chain_colour(edge.chains[0])
            styles.append(f"    linkStyle {index} stroke:{colour},stroke-width:3px")
        else:
            styles.append(f"    linkStyle {index} stroke:{OTHER_EDGE},stroke-width:1px")
    lines.extend(styles)
    lines.append(f"    classDef entry stroke:{ENTRY_STROKE},stroke-width:3px,font-weight:bold")
    entries = [ids[n.id] for n in view.nodes if n.entry]
    if entries:
        lines.append(f"    class {','.join(entries)} entry")
    for number in range(1, len(result.chains) + 1):
        members = [ids[n.id] for n in view.nodes if n.chains and n.chains[0] == number]
        if members:
            colour = chain_colour(number)
            lines.append(f"    classDef chain{number} fill:{tint(colour)},color:#000")
            lines.append(f"    class {','.join(members)} chain{number}")
    return "\n".join(lines) + "\n"
