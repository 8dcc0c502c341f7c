"""A deterministic layered layout of a directed graph (causes left, effects right)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

__all__ = ["GraphLayout", "layout_graph"]


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
