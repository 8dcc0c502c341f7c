"""The self-contained interactive HTML page of a result.

The page's markup, style and script are package data files next to this module
(``page.html``, ``page.css``, ``page.js``); :func:`fill_template` fills the page's
``__NAME__`` slots in one pass, so no inserted text (a query, a document) is ever
read as a slot.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sarg_integrations.schema import SARGResult

import functools
from importlib import resources

from sarg_integrations.viz.view import MAX_NODES, picture_data, write_text

__all__ = ["fill_template", "to_html"]

_SLOT = re.compile(r"__([A-Z]+)__")


@functools.cache
def _asset(name: str) -> str:
    """The text of the packaged file ``sarg_integrations/viz/<name>``."""
    return resources.files("sarg_integrations.viz").joinpath(name).read_text(encoding="utf-8")


def fill_template(name: str, **slots: str) -> str:
    """The packaged template ``name`` with each ``__KEY__`` replaced by ``slots[KEY]``.

    Replacement is one pass over the template: text put into a slot is not searched
    for slots again. A slot without a value is an error.

    Example:
        >>> fill_template("page.html", TITLE="__DATA__", HEADING="h", META="m",
        ...               STYLE="", SCRIPT="", DATA="{}").count("__DATA__")
        1
    """
    return _SLOT.sub(lambda m: slots[m.group(1)], _asset(name))


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
    max_nodes: int = MAX_NODES,
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
    data = picture_data(result, max_nodes=max_nodes, scope=scope)
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
    page = fill_template(
        "page.html",
        TITLE=html.escape(f"SARG: {result.query}"),
        HEADING=html.escape(result.query),
        META=html.escape(meta),
        STYLE=_asset("page.css"),
        SCRIPT=_asset("page.js"),
        DATA=_script_json(data),
    )
    if path is not None:
        write_text(path, page, "HTML")
    return page
