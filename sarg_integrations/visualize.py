"""Pictures and exports of a :class:`~sarg_integrations.schema.SARGResult`.

Everything here is framework-free and deterministic: the same result always gives the
same bytes. The exports describe the *local reasoning graph* of one run, with the
query's entry nodes marked and the kept chains highlighted:

* :func:`to_networkx` / :func:`to_node_link` / :func:`to_graphml`: data exports;
* :func:`to_mermaid`: Mermaid flowchart text (renders in GitHub and Jupyter);
* :func:`to_html`: a self-contained interactive page (inline SVG drawn by a small
  vanilla-JS renderer; no CDN, no network, works offline);
* :func:`to_image`: a static PNG or SVG drawn with matplotlib (``pip install
  "sarg-integrations[viz]"``);
* :func:`repr_html` / :func:`repr_markdown`: the rich display of a result in Jupyter.

All of them are reachable as methods of ``SARGResult`` (``result.to_html(...)``).
Document text is untrusted: every export escapes it for its format.
"""

from __future__ import annotations

import html
import json
import math
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx

    from sarg_integrations.schema import SARGResult

__all__ = [
    "CHAIN_COLOURS",
    "GraphLayout",
    "layout_graph",
    "repr_html",
    "repr_markdown",
    "to_graphml",
    "to_html",
    "to_image",
    "to_mermaid",
    "to_networkx",
    "to_node_link",
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

_OTHER_EDGE = "#9a9a9a"
_ENTRY_STROKE = "#111111"
_LABEL_WIDTH = 22
"""Characters per line of a node label in the pictures."""
_LABEL_LINES = 3
_MAX_NODES = 150
"""Larger graphs are cut down to the chains, the entry nodes and their neighbours."""


# --------------------------------------------------------------------------- the view


@dataclass(frozen=True)
class _EdgeView:
    source: str
    target: str
    relations: tuple[str, ...]
    relation_types: tuple[str, ...]
    evidence: tuple[tuple[str, str], ...]  # (document id, sentence)
    chains: tuple[int, ...]  # 1-based chain numbers walking this edge


@dataclass(frozen=True)
class _NodeView:
    id: str
    aliases: tuple[str, ...]
    documents: tuple[str, ...]
    entry: bool
    entry_similarity: float | None
    chains: tuple[int, ...]


@dataclass(frozen=True)
class _View:
    nodes: tuple[_NodeView, ...]
    edges: tuple[_EdgeView, ...]
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


def _view(result: SARGResult, max_nodes: int | None = _MAX_NODES, scope: str = "all") -> _View:
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
        _NodeView(
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
            _EdgeView(
                source=str(u),
                target=str(v),
                relations=tuple(dict.fromkeys(t.relation for t in triples)),
                relation_types=tuple(dict.fromkeys(str(t.relation_type) for t in triples)),
                evidence=tuple(dict.fromkeys((t.document_id, t.sentence) for t in triples)),
                chains=tuple(chain_edges.get((u, v), ())),
            )
        )
    return _View(nodes, tuple(edges), g.number_of_nodes(), g.number_of_edges())


# --------------------------------------------------------------------------- data exports


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

    view = _view(result, max_nodes=None)
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
        _write_text(path, text, "GraphML")
    return text


def _graphml_value(value: Any) -> Any:
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _write_text(path: str | Path, text: str, what: str) -> None:
    from sarg_integrations.errors import InputError

    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        msg = f"cannot write the {what} file {path}: {exc.strerror or exc}; pass a writable path"
        raise InputError(msg, argument="path", value=str(path)) from None


# --------------------------------------------------------------------------- Mermaid

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
    view = _view(result, max_nodes=None)
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
            colour = _chain_colour(edge.chains[0])
            styles.append(f"    linkStyle {index} stroke:{colour},stroke-width:3px")
        else:
            styles.append(f"    linkStyle {index} stroke:{_OTHER_EDGE},stroke-width:1px")
    lines.extend(styles)
    lines.append(f"    classDef entry stroke:{_ENTRY_STROKE},stroke-width:3px,font-weight:bold")
    entries = [ids[n.id] for n in view.nodes if n.entry]
    if entries:
        lines.append(f"    class {','.join(entries)} entry")
    for number in range(1, len(result.chains) + 1):
        members = [ids[n.id] for n in view.nodes if n.chains and n.chains[0] == number]
        if members:
            colour = _chain_colour(number)
            lines.append(f"    classDef chain{number} fill:{_tint(colour)},color:#000")
            lines.append(f"    class {','.join(members)} chain{number}")
    return "\n".join(lines) + "\n"


def _chain_colour(number: int) -> str:
    return CHAIN_COLOURS[(number - 1) % len(CHAIN_COLOURS)]


def _tint(colour: str, amount: float = 0.8) -> str:
    """Mix ``#rrggbb`` with white (``amount`` of white)."""
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    mix = [round(c + (255 - c) * amount) for c in (r, g, b)]
    return "#" + "".join(f"{c:02x}" for c in mix)


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class GraphLayout:
    """Deterministic positions of the drawn nodes (a layered, left-to-right layout).

    Attributes:
        positions: Node id → ``(x, y)`` centre in layout units (one unit per column
            and per row; y grows downwards).
        layers: Node id → its column.
        columns: The number of columns.
        rows: The number of rows.
    """

    positions: dict[str, tuple[float, float]] = field(default_factory=dict)
    layers: dict[str, int] = field(default_factory=dict)
    columns: int = 0
    rows: int = 0


def layout_graph(
    nodes: Sequence[str], edges: Sequence[tuple[str, str]], *, priority: Sequence[str] = ()
) -> GraphLayout:
    """Lay out a directed graph in columns, causes left of their effects.

    Weakly connected components are stacked top to bottom (those holding a
    ``priority`` node first, then larger ones). Within a component, a node's column is
    its longest-path depth after dropping the edges that close cycles, and rows are
    ordered by a few barycentre sweeps. Ties break on input order, so the layout is
    the same on every run.

    Args:
        nodes: The node ids, in a stable order.
        edges: ``(source, target)`` pairs between those nodes.
        priority: Nodes whose component should come first (e.g. chain nodes).

    Example:
        >>> layout = layout_graph(["a", "b", "c"], [("a", "b"), ("b", "c")])
        >>> [layout.layers[n] for n in "abc"], layout.columns, layout.rows
        ([0, 1, 2], 3, 1)
    """
    order = {n: i for i, n in enumerate(nodes)}
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    pred: dict[str, list[str]] = {n: [] for n in nodes}
    for u, v in edges:
        if u in succ and v in succ and u != v and v not in succ[u]:
            succ[u].append(v)
            pred[v].append(u)

    components = _components(nodes, succ, pred)
    rank = {n: i for i, n in enumerate(priority)}

    def component_key(comp: list[str]) -> tuple[int, int, int]:
        best = min((rank[n] for n in comp if n in rank), default=len(rank))
        return (best, -len(comp), min(order[n] for n in comp))

    components.sort(key=component_key)
    positions: dict[str, tuple[float, float]] = {}
    layers: dict[str, int] = {}
    top = 0.0
    columns = 0
    for comp in components:
        comp_layers = _layers(comp, succ, pred, order)
        rows = _order_rows(comp, comp_layers, succ, pred, order)
        height = max(len(r) for r in rows.values())
        for layer, members in rows.items():
            offset = (height - len(members)) / 2.0
            for row, node in enumerate(members):
                positions[node] = (float(layer), top + offset + row)
                layers[node] = layer
        columns = max(columns, max(comp_layers.values()) + 1)
        top += height
    return GraphLayout(positions, layers, columns, math.ceil(top))


def _components(
    nodes: Sequence[str], succ: dict[str, list[str]], pred: dict[str, list[str]]
) -> list[list[str]]:
    seen: set[str] = set()
    out = []
    for start in nodes:
        if start in seen:
            continue
        comp, stack = [], [start]
        seen.add(start)
        while stack:
            node = stack.pop()
            comp.append(node)
            for other in (*succ[node], *pred[node]):
                if other not in seen:
                    seen.add(other)
                    stack.append(other)
        out.append(comp)
    return out


def _layers(
    comp: list[str], succ: dict[str, list[str]], pred: dict[str, list[str]], order: dict[str, int]
) -> dict[str, int]:
    """Longest-path columns over the component with cycle-closing edges dropped."""
    members = sorted(comp, key=order.__getitem__)
    inside = set(members)
    # Depth-first search from sources (then anything left) marks back edges.
    back: set[tuple[str, str]] = set()
    state: dict[str, int] = {}
    starts = [n for n in members if not pred[n]] + members
    for start in starts:
        if start in state:
            continue
        stack = [(start, iter(succ[start]))]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif child not in inside:
                continue
            elif state.get(child) == 1:
                back.add((node, child))
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(succ[child])))
    # Kahn's algorithm over the remaining DAG.
    indegree = {n: sum(1 for p in pred[n] if (p, n) not in back) for n in members}
    layer = dict.fromkeys(members, 0)
    ready = [n for n in members if indegree[n] == 0]
    while ready:
        node = ready.pop(0)
        for child in succ[node]:
            if (node, child) in back:
                continue
            layer[child] = max(layer[child], layer[node] + 1)
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    return layer


def _order_rows(
    comp: list[str],
    layer: dict[str, int],
    succ: dict[str, list[str]],
    pred: dict[str, list[str]],
    order: dict[str, int],
) -> dict[int, list[str]]:
    """Order each column by barycentre sweeps (down, up, down, up)."""
    rows: dict[int, list[str]] = {}
    for node in sorted(comp, key=order.__getitem__):
        rows.setdefault(layer[node], []).append(node)
    rows = dict(sorted(rows.items()))
    columns = list(rows)
    for sweep in range(4):
        sequence = columns[1:] if sweep % 2 == 0 else list(reversed(columns[:-1]))
        for col in sequence:
            neighbours = pred if sweep % 2 == 0 else succ
            index = {n: i for members in rows.values() for i, n in enumerate(members)}

            def key(
                node: str,
                neighbours: dict[str, list[str]] = neighbours,
                index: dict[str, int] = index,
            ) -> tuple[float, int]:
                near = [index[n] for n in neighbours[node] if n in index]
                centre = sum(near) / len(near) if near else float(index[node])
                return (centre, order[node])

            rows[col] = sorted(rows[col], key=key)
    return rows


def _wrap(text: str, width: int = _LABEL_WIDTH, lines: int = _LABEL_LINES) -> list[str]:
    wrapped = textwrap.wrap(" ".join(text.split()), width=width, break_long_words=True) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: max(0, width - 1)].rstrip() + "\u2026"
    return wrapped


def _picture_data(
    result: SARGResult, max_nodes: int | None = _MAX_NODES, scope: str = "all"
) -> dict[str, Any]:
    """The JSON the HTML page draws: nodes with positions, edges, chains, summary."""
    view = _view(result, max_nodes=max_nodes, scope=scope)
    chain_first = [n for c in result.chains for n in c.nodes]
    layout = layout_graph(
        [n.id for n in view.nodes],
        [(e.source, e.target) for e in view.edges],
        priority=[*chain_first, *(e.node for e in result.entry_nodes)],
    )
    nodes = [
        {
            "id": n.id,
            "lines": _wrap(n.id),
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
            "colour": _chain_colour(i),
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


# --------------------------------------------------------------------------- HTML

_HTML_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="sarg-integrations">
<title>__TITLE__</title>
<style>
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  color:#222;background:#fafafa}
header{padding:12px 18px;background:#fff;border-bottom:1px solid #ddd}
header h1{font-size:17px;margin:0 0 4px}
header .meta{color:#555;font-size:13px}
main{display:flex;gap:0;align-items:stretch;min-height:calc(100vh - 70px)}
#sarg-canvas{flex:1 1 auto;overflow:auto;background:#fff;padding:8px}
aside{flex:0 0 320px;border-left:1px solid #ddd;padding:12px 14px;background:#fcfcfc;overflow:auto}
aside h2{font-size:14px;margin:12px 0 6px}
.chain-item{display:flex;gap:8px;align-items:flex-start;padding:5px 6px;border-radius:6px;
  cursor:pointer;border:1px solid transparent}
.chain-item:hover,.chain-item.active{border-color:#bbb;background:#f0f0f0}
.swatch{flex:0 0 14px;height:14px;border-radius:3px;margin-top:3px}
.chain-text{font-size:12.5px;word-break:break-word}
.chain-docs{color:#666;font-size:12px}
#sarg-details{font-size:13px;white-space:normal}
#sarg-details .sentence{margin:4px 0 8px;padding:6px 8px;background:#fff;border-left:3px solid #999}
#sarg-details .doc{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;color:#444}
#sarg-errors{display:none;color:#a00;background:#fee;border:1px solid #d88;padding:8px;margin:8px}
#sarg-errors.shown{display:block}
.legend-key{font-size:12px;color:#555;margin-top:10px}
#sarg-graph{max-width:100%;height:auto}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.edge path{fill:none}
.edge .hit{stroke:transparent;stroke-width:12px}
.edge{cursor:pointer}
.node{cursor:pointer}
svg.focus .dim{opacity:.15}
.edge.selected path.line{stroke-width:5px}
.node.selected rect{stroke-width:3.5px}
</style>
</head>
<body>
<header>
<h1>__HEADING__</h1>
<div class="meta" id="sarg-meta">__META__</div>
</header>
<div id="sarg-errors" role="alert"></div>
<main>
<div id="sarg-canvas"><noscript>This page draws the reasoning graph with JavaScript;
enable it to see the picture.</noscript></div>
<aside>
<h2>Kept chains</h2>
<div id="sarg-chains"></div>
<div class="legend-key">Thick dark border: entry node (matched the query).
Coloured edges: a kept chain; grey: other edges of the local graph.
Hover or click an edge for its source sentence.</div>
<h2>Details</h2>
<div id="sarg-details">Hover over an edge or a node.</div>
</aside>
</main>
<script type="application/json" id="sarg-data">__DATA__</script>
<script>
__SCRIPT__
</script>
</body>
</html>
"""

_HTML_SCRIPT = r"""(function () {
  "use strict";
  var root = document.documentElement;
  var errorBox = document.getElementById("sarg-errors");
  function reportError(message) {
    root.setAttribute("data-sarg-render", "error");
    errorBox.classList.add("shown");
    errorBox.appendChild(document.createTextNode("Rendering error: " + message));
    errorBox.appendChild(document.createElement("br"));
  }
  window.addEventListener("error", function (event) { reportError(String(event.message)); });
  var consoleError = console.error;
  console.error = function () {
    reportError(Array.prototype.map.call(arguments, String).join(" "));
    return consoleError.apply(console, arguments);
  };

  var SVG = "http:" + "//www.w3.org/2000/svg";  // the SVG namespace name, never fetched
  var COL = 280, ROW = 92, BOX_W = 176, LINE_H = 15, PAD = 30, OTHER = "#9a9a9a";

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (key) { node.setAttribute(key, String(attrs[key])); });
    if (parent) { parent.appendChild(node); }
    return node;
  }
  function html(name, text, parent, cls) {
    var node = document.createElement(name);
    if (text !== null && text !== undefined) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    if (parent) { parent.appendChild(node); }
    return node;
  }
  function tint(hex) {
    var out = "#";
    for (var i = 1; i < 7; i += 2) {
      var c = parseInt(hex.substr(i, 2), 16);
      var v = Math.round(c + (255 - c) * 0.82).toString(16);
      out += v.length < 2 ? "0" + v : v;
    }
    return out;
  }

  function render(data) {
    var colours = {};
    data.chains.forEach(function (c) { colours[c.number] = c.colour; });
    var canvas = document.getElementById("sarg-canvas");
    var width = Math.max(1, data.columns) * COL + 2 * PAD - (COL - BOX_W);
    var height = Math.max(1, data.rows) * ROW + 2 * PAD;
    var svg = el("svg", {id: "sarg-graph", width: width, height: height,
      viewBox: "0 0 " + width + " " + height, role: "img",
      "aria-label": "reasoning graph"}, canvas);
    var defs = el("defs", {}, svg);
    function marker(id, colour) {
      var m = el("marker", {id: id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 10,
        markerHeight: 10, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse"}, defs);
      el("path", {d: "M0,0 L10,5 L0,10 z", fill: colour}, m);
    }
    marker("arrow-other", OTHER);
    data.chains.forEach(function (c) { marker("arrow-chain-" + c.number, c.colour); });

    var boxes = {};
    data.nodes.forEach(function (n) {
      var h = n.lines.length * LINE_H + 14;
      var cx = PAD + n.x * COL + BOX_W / 2, cy = PAD + n.y * ROW + ROW / 2;
      boxes[n.id] = {x: cx - BOX_W / 2, y: cy - h / 2, w: BOX_W, h: h, cx: cx, cy: cy};
    });

    var edgeLayer = el("g", {"class": "edges"}, svg);
    var labelLayer = el("g", {"class": "edge-labels"}, svg);
    var nodeLayer = el("g", {"class": "nodes"}, svg);
    var items = [];

    data.edges.forEach(function (e, index) {
      var a = boxes[e.source], b = boxes[e.target];
      var chain = e.chains.length ? e.chains[0] : 0;
      var colour = chain ? colours[chain] : OTHER;
      var x1, y1, x2, y2, d, mx, my;
      if (b.cx > a.cx + 1) {
        x1 = a.x + a.w; y1 = a.cy; x2 = b.x; y2 = b.cy;
        var dx = (x2 - x1) / 2;
        d = "M" + x1 + "," + y1 + " C" + (x1 + dx) + "," + y1 + " " + (x2 - dx) + "," + y2 +
          " " + x2 + "," + y2;
        mx = (x1 + x2) / 2; my = (y1 + y2) / 2;
      } else {
        x1 = a.cx; y1 = a.y; x2 = b.cx; y2 = b.y;
        var lift = 46 + Math.abs(x1 - x2) * 0.12;
        var top = Math.min(y1, y2) - lift;
        d = "M" + x1 + "," + y1 + " C" + x1 + "," + top + " " + x2 + "," + top +
          " " + x2 + "," + y2;
        mx = (x1 + x2) / 2; my = top + lift * 0.25;
      }
      var g = el("g", {"class": "edge" + (chain ? " chain-edge" : ""), "data-index": index,
        "data-source": e.source, "data-target": e.target,
        "data-chains": e.chains.join(" ")}, edgeLayer);
      el("path", {"class": "hit", d: d}, g);
      el("path", {"class": "line", d: d, stroke: colour, "stroke-width": chain ? 3.2 : 1.4,
        "marker-end": "url(#" + (chain ? "arrow-chain-" + chain : "arrow-other") + ")"}, g);
      var lg = el("g", {"class": "edge-label", "data-index": index}, labelLayer);
      var t = el("text", {x: mx, y: my + 4, "text-anchor": "middle", "font-size": 11.5,
        fill: chain ? colour : "#555", stroke: "#fff", "stroke-width": 4, "paint-order": "stroke",
        "font-weight": chain ? "600" : "400"}, lg);
      t.textContent = e.label;
      var bb = t.getBBox();
      if (bb.width) {
        lg.insertBefore(el("rect", {x: bb.x - 3, y: bb.y - 1,
          width: bb.width + 6, height: bb.height + 2,
          rx: 3, fill: "#fff", "fill-opacity": 0.9}), t);
      }
      items.push({kind: "edge", data: e, nodes: [g, lg], chains: e.chains});
      [g, lg].forEach(function (target) {
        target.addEventListener("mouseenter", function () { if (!pinned) { showEdge(e); } });
        target.addEventListener("click", function (ev) {
          ev.stopPropagation(); pin(g, function () { showEdge(e); });
        });
      });
    });

    data.nodes.forEach(function (n) {
      var b = boxes[n.id];
      var chain = n.chains.length ? n.chains[0] : 0;
      var cls = "node" + (chain ? " chain-node" : "") + (n.entry ? " entry-node" : "");
      var g = el("g", {"class": cls,
        "data-id": n.id, "data-chains": n.chains.join(" ")}, nodeLayer);
      el("rect", {x: b.x, y: b.y, width: b.w, height: b.h, rx: 8, ry: 8,
        fill: chain ? tint(colours[chain]) : "#f4f4f4",
        stroke: n.entry ? "#111" : (chain ? colours[chain] : "#bbb"),
        "stroke-width": n.entry ? 3 : 1.3}, g);
      if (n.entry) {
        var badge = el("text", {x: b.x + 6, y: b.y - 5, "font-size": 10.5, fill: "#111",
          "font-weight": "700"}, g);
        badge.textContent = "\u25B6 entry" +
          (n.similarity !== null ? " (" + n.similarity.toFixed(2) + ")" : "");
      }
      n.lines.forEach(function (line, i) {
        var t = el("text", {x: b.cx, y: b.y + 7 + LINE_H * (i + 0.8), "text-anchor": "middle",
          "font-size": 12.5, fill: "#111", "font-weight": chain ? "600" : "400"}, g);
        t.textContent = line;
      });
      var title = el("title", {}, g);
      title.textContent = n.id;
      items.push({kind: "node", data: n, nodes: [g], chains: n.chains});
      g.addEventListener("mouseenter", function () { if (!pinned) { showNode(n); } });
      g.addEventListener("click", function (ev) {
        ev.stopPropagation(); pin(g, function () { showNode(n); });
      });
    });

    var details = document.getElementById("sarg-details");
    var pinned = null;
    function pin(g, show) {
      if (pinned) { pinned.classList.remove("selected"); }
      pinned = g; g.classList.add("selected"); show();
    }
    svg.addEventListener("click", function () {
      if (pinned) { pinned.classList.remove("selected"); pinned = null; }
    });
    function clear() { while (details.firstChild) { details.removeChild(details.firstChild); } }
    function showEdge(e) {
      clear();
      var head = html("div", null, details);
      html("strong", e.source, head);
      head.appendChild(document.createTextNode(" \u2014[" + e.label + "]\u2192 "));
      html("strong", e.target, head);
      html("div", "relation type: " + (e.types.join(", ") || "-") +
        (e.chains.length ? "; in chain " + e.chains.join(", ") : "; not in a kept chain"),
        details, "chain-docs");
      e.evidence.forEach(function (ev) {
        var box = html("div", null, details, "sentence");
        html("div", "document " + ev.document, box, "doc");
        html("div", ev.sentence || "(no sentence recorded)", box);
      });
    }
    function showNode(n) {
      clear();
      html("strong", n.id, details);
      if (n.entry) {
        var sim = n.similarity === null ? "?" : n.similarity.toFixed(3);
        html("div", "entry node, similarity " + sim, details);
      }
      if (n.aliases.length > 1) { html("div", "aliases: " + n.aliases.join("; "), details); }
      html("div", "documents: " + (n.documents.join(", ") || "-"), details, "doc");
      if (n.chains.length) {
        html("div", "in chain " + n.chains.join(", "), details, "chain-docs");
      }
    }

    var list = document.getElementById("sarg-chains");
    if (!data.chains.length) {
      var none = data.fallback_reason ? "No chain kept: " + data.fallback_reason : "No chain kept.";
      html("div", none, list, "chain-docs");
    }
    var active = null;
    data.chains.forEach(function (c) {
      var item = html("div", null, list, "chain-item");
      item.setAttribute("data-chain", c.number);
      var sw = html("span", null, item, "swatch");
      sw.style.background = c.colour;
      var body = html("div", null, item);
      html("div", "[" + c.number + "] score " + c.score.toFixed(3), body, "chain-docs");
      html("div", c.text, body, "chain-text");
      html("div", "cites: " + c.documents.join(", "), body, "chain-docs");
      item.addEventListener("click", function () {
        var on = active !== c.number;
        active = on ? c.number : null;
        Array.prototype.forEach.call(list.children, function (child) {
          child.classList.toggle("active", on && child === item);
        });
        svg.classList.toggle("focus", on);
        items.forEach(function (it) {
          var member = it.chains.indexOf(c.number) >= 0;
          it.nodes.forEach(function (node) { node.classList.toggle("dim", on && !member); });
        });
      });
    });
    root.setAttribute("data-sarg-render", "ok");
    var drawn = nodeLayer.querySelectorAll(".chain-node").length;
    root.setAttribute("data-sarg-chain-nodes", String(drawn));
  }

  try {
    render(JSON.parse(document.getElementById("sarg-data").textContent));
  } catch (err) {
    reportError(err && err.message ? err.message : String(err));
  }
})();
"""


def _script_json(data: Any) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>``, ``&`` and line separators escaped."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, allow_nan=False)
    for char, code in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, code)
    return text


def to_html(
    result: SARGResult,
    path: str | Path | None = None,
    *,
    scope: str = "all",
    max_nodes: int = _MAX_NODES,
) -> str:
    """Return a self-contained interactive HTML page of the run, and write it to ``path``.

    The page needs no network: its CSS, data and a small vanilla-JS renderer are
    inlined. It draws the local reasoning graph left to right (causes before effects),
    marks the entry nodes, colours each kept chain distinctly, labels edges with their
    relations, and shows an edge's source sentences and document ids on hover or click;
    clicking a chain in the side panel dims everything else. All document text is
    escaped (it is data, never markup). When rendering succeeds the script sets
    ``data-sarg-render="ok"`` on ``<html>``; errors are shown in a visible box.

    Args:
        result: The SARG result.
        path: Where to write the page (UTF-8), or ``None`` to only return it.
        scope: ``"all"`` draws the whole local graph; ``"chains"`` only the connected
            parts that hold a kept chain.
        max_nodes: Graphs with more nodes are cut down to the chains, the entry nodes
            and their neighbours.
    """
    data = _picture_data(result, max_nodes=max_nodes, scope=scope)
    d = result.direction
    shown = (
        f"{len(data['nodes'])} of {data['total_nodes']}"
        if len(data["nodes"]) < data["total_nodes"]
        else str(data["total_nodes"])
    )
    meta = (
        (f"direction: {d.direction.value} (confidence {d.confidence:.2f}) \u00b7 " if d else "")
        + f"{len(result.chains)} chain(s) kept of {len(result.candidate_chains or result.chains)}"
        f" \u00b7 graph: {shown} nodes, {data['total_edges']} edges"
        f" \u00b7 {len(result.entry_nodes)} entry node(s)"
    )
    if result.fallback_reason:
        meta += f" \u00b7 fallback: {result.fallback_reason}"
    page = (
        _HTML_TEMPLATE.replace("__TITLE__", html.escape(f"SARG: {result.query}"))
        .replace("__HEADING__", html.escape(result.query))
        .replace("__META__", html.escape(meta))
        .replace("__SCRIPT__", _HTML_SCRIPT)
        .replace("__DATA__", _script_json(data))
    )
    if path is not None:
        _write_text(path, page, "HTML")
    return page


# --------------------------------------------------------------------------- static image


def to_image(
    result: SARGResult,
    path: str | Path,
    format: str | None = None,
    *,
    scope: str = "all",
    dpi: int = 150,
) -> Path:
    """Draw the graph with matplotlib and save it as PNG or SVG.

    The picture uses the same layout and colours as :func:`to_html`: entry nodes with a
    thick dark border, each kept chain in its colour (listed in a legend), edges labelled
    with their relations. SVG output carries no date and fixed ids, so it is
    byte-for-byte reproducible.

    Args:
        result: The SARG result.
        path: The output file.
        format: ``"png"`` or ``"svg"``; ``None`` takes it from the file suffix.
        scope: ``"all"`` or ``"chains"`` (only the connected parts holding a chain).
        dpi: Resolution of PNG output.

    Returns:
        The path written.

    Raises:
        MissingDependencyError: matplotlib is not installed (``pip install
            "sarg-integrations[viz]"``).
        ValueError: An unsupported format.
    """
    path = Path(path)
    fmt = (format or path.suffix.lstrip(".") or "png").lower()
    if fmt not in ("png", "svg"):
        msg = f"format={fmt!r} is not supported; use 'png' or 'svg' (or a .png/.svg file name)"
        raise ValueError(msg)
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
    except ImportError as exc:
        from sarg_integrations.errors import MissingDependencyError

        raise MissingDependencyError(
            "matplotlib", feature="SARGResult.to_image (PNG/SVG pictures)", extra="viz"
        ) from exc

    data = _picture_data(result, scope=scope)
    colours = {c["number"]: c["colour"] for c in data["chains"]}
    col_w, row_h, box_w = 2.9, 0.95, 1.85  # inches
    columns, rows = max(1, data["columns"]), max(1, data["rows"])
    legend_h = 0.3 * (len(data["chains"]) + 1) + 0.6
    width = max(6.0, columns * col_w + 0.6)
    height = rows * row_h + legend_h + 0.4

    params = {"svg.hashsalt": "sarg-integrations", "svg.fonttype": "path", "font.size": 9}
    with matplotlib.rc_context(params):
        fig = Figure(figsize=(width, height))
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, width)
        ax.set_ylim(height, 0)
        ax.axis("off")
        title = textwrap.shorten(result.query, width=int(width * 14), placeholder="\u2026")
        d = result.direction
        ax.text(0.25, 0.3, title, fontsize=11, fontweight="bold", va="center")
        ax.text(
            0.25,
            0.58,
            (f"direction {d.direction.value} \u00b7 " if d else "")
            + f"{data['total_nodes']} nodes, "
            f"{data['total_edges']} edges \u00b7 {len(data['chains'])} chain(s) kept",
            fontsize=8.5,
            color="#555",
            va="center",
        )
        top = 0.85
        boxes: dict[str, tuple[float, float, float]] = {}
        for n in data["nodes"]:
            cx = 0.3 + n["x"] * col_w + box_w / 2
            cy = top + n["y"] * row_h + row_h / 2
            h = 0.16 * len(n["lines"]) + 0.14
            boxes[n["id"]] = (cx, cy, h)
        for e in data["edges"]:
            sx, sy, sh = boxes[e["source"]]
            tx, ty, th = boxes[e["target"]]
            chain = e["chains"][0] if e["chains"] else 0
            colour = colours.get(chain, _OTHER_EDGE)
            if tx > sx + 1e-6:
                start, end, rad = (sx + box_w / 2, sy), (tx - box_w / 2, ty), 0.0
                lx, ly = (start[0] + end[0]) / 2, (start[1] + end[1]) / 2
            else:
                start, end, rad = (sx, sy - sh / 2), (tx, ty - th / 2), -0.5
                lx, ly = (sx + tx) / 2, min(sy, ty) - 0.45
            ax.add_patch(
                FancyArrowPatch(
                    start,
                    end,
                    arrowstyle="-|>",
                    mutation_scale=12,
                    connectionstyle=f"arc3,rad={rad}",
                    color=colour,
                    lw=2.4 if chain else 1.0,
                    zorder=1,
                )
            )
            ax.text(
                lx,
                ly,
                e["label"],
                fontsize=7.5,
                ha="center",
                va="center",
                color=colour if chain else "#555",
                fontweight="bold" if chain else "normal",
                zorder=3,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
            )
        for n in data["nodes"]:
            cx, cy, h = boxes[n["id"]]
            chain = n["chains"][0] if n["chains"] else 0
            face = _tint(colours[chain], 0.82) if chain else "#f4f4f4"
            edge = _ENTRY_STROKE if n["entry"] else colours.get(chain, "#bbbbbb")
            ax.add_patch(
                FancyBboxPatch(
                    (cx - box_w / 2, cy - h / 2),
                    box_w,
                    h,
                    boxstyle="round,pad=0.02,rounding_size=0.08",
                    fc=face,
                    ec=edge,
                    lw=2.6 if n["entry"] else 1.0,
                    zorder=4,
                )
            )
            ax.text(
                cx,
                cy,
                "\n".join(n["lines"]),
                ha="center",
                va="center",
                fontsize=8,
                fontweight="bold" if chain else "normal",
                zorder=5,
            )
            if n["entry"]:
                ax.text(
                    cx - box_w / 2,
                    cy - h / 2 - 0.07,
                    "\u25b6 entry",
                    fontsize=7,
                    fontweight="bold",
                    va="bottom",
                    zorder=5,
                )
        handles = [
            Patch(
                color=c["colour"],
                label=textwrap.shorten(f"[{c['number']}] {c['text']}", 150, placeholder="\u2026"),
            )
            for c in data["chains"]
        ]
        if handles:
            fig.legend(
                handles=handles,
                loc="lower left",
                fontsize=7.5,
                frameon=False,
                bbox_to_anchor=(0.01, 0.0),
            )
        metadata = {"Date": None} if fmt == "svg" else {"Software": "sarg-integrations"}
        try:
            fig.savefig(path, format=fmt, dpi=dpi, metadata=metadata)
        except OSError as exc:
            from sarg_integrations.errors import InputError

            msg = f"cannot write the picture {path}: {exc.strerror or exc}; pass a writable path"
            raise InputError(msg, argument="path", value=str(path)) from None
    return path


# --------------------------------------------------------------------------- Jupyter


def _timings(result: SARGResult) -> list[tuple[str, float]]:
    return [
        (key[len("time_") : -len("_ms")], float(value))
        for key, value in result.stats.items()
        if key.startswith("time_") and key.endswith("_ms") and isinstance(value, (int, float))
    ]


def repr_html(result: SARGResult, *, graph: bool = True) -> str:
    """The rich Jupyter display: direction, chains with citations, graph size, timings.

    With ``graph=True`` the interactive page is embedded below the summary in a
    sandboxed ``<iframe srcdoc>`` (scripts only, no network, isolated from the notebook).
    """
    e = html.escape
    d = result.direction
    parts = [
        '<div class="sarg-result" style="font-family:system-ui,sans-serif;font-size:13px">',
        f"<div><strong>SARG</strong> \u00b7 {e(result.query)}</div>",
        "<div>"
        + (
            f"direction <strong>{e(d.direction.value)}</strong> (confidence {d.confidence:.2f}"
            + (f", {e(d.method)}" if d.method else "")
            + ") \u00b7 "
            if d
            else f"strategy <strong>{e(result.strategy)}</strong> \u00b7 "
        )
        + f"graph {result.graph.number_of_nodes} nodes, "
        f"{result.graph.number_of_edges} edges"
        f" \u00b7 {len(result.triples)} triples from {len(result.document_ids)} documents</div>",
    ]
    if result.entry_nodes:
        entries = ", ".join(f"{e(x.node)} ({x.similarity:.2f})" for x in result.entry_nodes)
        parts.append(f"<div>entry nodes: {entries}</div>")
    if result.fallback_reason:
        parts.append(f"<div><em>fallback</em>: {e(result.fallback_reason)}</div>")
    parts.append("<ol>")
    for number, chain in enumerate(result.chains, start=1):
        colour = _chain_colour(number)
        cites = " ".join(f"[{e(doc)}]" for doc in chain.document_ids)
        parts.append(
            f'<li style="margin:3px 0"><span style="display:inline-block;width:10px;height:10px;'
            f'background:{colour};margin-right:5px"></span>'
            f'<code>{e(chain.to_text())}</code> <span style="color:#666">score {chain.score:.3f} '
            f"\u00b7 cites {cites}</span></li>"
        )
    parts.append("</ol>")
    timings = _timings(result)
    if timings:
        text = ", ".join(f"{e(name)} {value:.1f}" for name, value in timings)
        parts.append(f'<div style="color:#666">timings (ms): {text}</div>')
    if graph and result.graph.number_of_nodes:
        page = html.escape(to_html(result), quote=True)
        height = min(900, 140 + 92 * max(1, _picture_data(result)["rows"]))
        parts.append(
            f'<iframe sandbox="allow-scripts" srcdoc="{page}" title="SARG reasoning graph" '
            f'style="width:100%;height:{height}px;border:1px solid #ddd;margin-top:6px"></iframe>'
        )
    parts.append("</div>")
    return "\n".join(parts)


def _md(text: str) -> str:
    """Escape text for inline Markdown (HTML-escaped, Markdown punctuation backslashed)."""
    return re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", html.escape(str(text), quote=False))


def repr_markdown(result: SARGResult, *, mermaid: bool = True) -> str:
    """The Markdown display: direction, chains with citations, graph size, timings.

    With ``mermaid=True`` a ```` ```mermaid ```` block of the graph follows (GitHub and
    JupyterLab render it).
    """
    d = result.direction
    lines = [
        f"**SARG** \u2014 {_md(result.query)}",
        "",
        f"- direction: **{d.direction.value}** (confidence {d.confidence:.2f})"
        if d
        else f"- strategy: **{result.strategy}**",
        f"- graph: {result.graph.number_of_nodes} nodes, {result.graph.number_of_edges} edges "
        f"({len(result.triples)} triples from {len(result.document_ids)} documents)",
    ]
    if result.entry_nodes:
        lines.append("- entry nodes: " + ", ".join(_md(x.node) for x in result.entry_nodes))
    if result.fallback_reason:
        lines.append(f"- fallback: {_md(result.fallback_reason)}")
    timings = _timings(result)
    if timings:
        lines.append("- timings (ms): " + ", ".join(f"{_md(n)} {v:.1f}" for n, v in timings))
    lines.append("")
    for number, chain in enumerate(result.chains, start=1):
        cites = " ".join(f"\\[{_md(doc)}\\]" for doc in chain.document_ids)
        lines.append(
            f"{number}. {_md(chain.to_text())} \u2014 score {chain.score:.3f}, cites {cites}"
        )
    if mermaid and result.graph.number_of_nodes:
        lines.extend(["", "```mermaid", to_mermaid(result).rstrip(), "```"])
    return "\n".join(lines) + "\n"
