"""A static picture (PNG or SVG) of a result's graph, drawn with matplotlib."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sarg_integrations.schema import SARGResult

from sarg_integrations.viz.view import ENTRY_STROKE, OTHER_EDGE, picture_data, tint

__all__ = ["to_image"]


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

    data = picture_data(result, scope=scope)
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
            colour = colours.get(chain, OTHER_EDGE)
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
            face = tint(colours[chain], 0.82) if chain else "#f4f4f4"
            edge = ENTRY_STROKE if n["entry"] else colours.get(chain, "#bbbbbb")
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
        from sarg_integrations._atomic import atomic_path

        try:
            with atomic_path(path) as temp:  # a failed save keeps the old picture
                fig.savefig(temp, format=fmt, dpi=dpi, metadata=metadata)
        except OSError as exc:
            from sarg_integrations.errors import InputError

            msg = f"cannot write the picture {path}: {exc.strerror or exc}; pass a writable path"
            raise InputError(msg, argument="path", value=str(path)) from None
    return path
