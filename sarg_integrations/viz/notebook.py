"""The rich display of a result in Jupyter (HTML and Markdown)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sarg_integrations.schema import SARGResult

from sarg_integrations._text import markdown_inline
from sarg_integrations.viz.exports import to_mermaid
from sarg_integrations.viz.html import to_html
from sarg_integrations.viz.view import chain_colour, picture_data

__all__ = ["repr_html", "repr_markdown"]


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
        colour = chain_colour(number)
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
        height = min(900, 140 + 92 * max(1, picture_data(result)["rows"]))
        parts.append(
            f'<iframe sandbox="allow-scripts" srcdoc="{page}" title="SARG reasoning graph" '
            f'style="width:100%;height:{height}px;border:1px solid #ddd;margin-top:6px"></iframe>'
        )
    parts.append("</div>")
    return "\n".join(parts)


def repr_markdown(result: SARGResult, *, mermaid: bool = True) -> str:
    """The Markdown display: direction, chains with citations, graph size, timings.

    With ``mermaid=True`` a ```` ```mermaid ```` block of the graph follows (GitHub and
    JupyterLab render it).
    """
    d = result.direction
    lines = [
        f"**SARG** \u2014 {markdown_inline(result.query)}",
        "",
        f"- direction: **{d.direction.value}** (confidence {d.confidence:.2f})"
        if d
        else f"- strategy: **{result.strategy}**",
        f"- graph: {result.graph.number_of_nodes} nodes, {result.graph.number_of_edges} edges "
        f"({len(result.triples)} triples from {len(result.document_ids)} documents)",
    ]
    if result.entry_nodes:
        lines.append("- entry nodes: " + ", ".join(markdown_inline(x.node) for x in result.entry_nodes))
    if result.fallback_reason:
        lines.append(f"- fallback: {markdown_inline(result.fallback_reason)}")
    timings = _timings(result)
    if timings:
        lines.append("- timings (ms): " + ", ".join(f"{markdown_inline(n)} {v:.1f}" for n, v in timings))
    lines.append("")
    for number, chain in enumerate(result.chains, start=1):
        cites = " ".join(f"\\[{markdown_inline(doc)}\\]" for doc in chain.document_ids)
        lines.append(
            f"{number}. {markdown_inline(chain.to_text())} \u2014 score {chain.score:.3f}, cites {cites}"
        )
    if mermaid and result.graph.number_of_nodes:
        lines.extend(["", "```mermaid", to_mermaid(result).rstrip(), "```"])
    return "\n".join(lines) + "\n"
