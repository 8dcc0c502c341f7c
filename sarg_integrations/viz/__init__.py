"""Pictures and exports of a :class:`~sarg_integrations.schema.SARGResult`.

Modules: :mod:`.view` (what is drawn), :mod:`.layout`, :mod:`.exports`,
:mod:`.html` (with the packaged ``page.html`` / ``page.css`` / ``page.js``),
:mod:`.image` (matplotlib) and :mod:`.notebook` (Jupyter).

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

from sarg_integrations.viz.exports import to_graphml, to_mermaid, to_networkx, to_node_link
from sarg_integrations.viz.html import to_html
from sarg_integrations.viz.image import to_image
from sarg_integrations.viz.layout import GraphLayout, layout_graph
from sarg_integrations.viz.notebook import repr_html, repr_markdown
from sarg_integrations.viz.view import CHAIN_COLOURS

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
