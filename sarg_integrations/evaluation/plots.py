"""PNG plots of an evaluation: the β / K sweeps and metrics by hop count.

matplotlib is imported lazily; without it the plots are skipped with a warning
(install the ``viz`` extra, or ``pip install matplotlib``).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["write_plots"]

_HOP_METHODS = (
    "flat_topk",
    "flat_topk_budget",
    "sarg",
    "sarg_spo",
    "sarg_bidirectional",
    "sarg_fill",
    "flat_topk_budget_fill",
    "tasr",
    "flat_topk_budget_tasr",
)


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warnings.warn(
            "matplotlib is not installed: evaluation plots skipped "
            '(pip install "sarg-integrations[viz]" or pip install matplotlib)',
            stacklevel=3,
        )
        return None
    return plt


def write_plots(dataset: str, aggregates: Mapping[str, Any], out: Path) -> dict[str, str]:
    """Write ``<dataset>_sweeps.png`` and ``<dataset>_by_hops.png``; returns kind → path."""
    plt = _pyplot()
    if plt is None:
        return {}
    paths: dict[str, str] = {}
    methods = aggregates.get("methods", {})
    sweeps = {
        kind: sorted(
            (int(re.sub(r"\D", "", n)), m)
            for n, m in methods.items()
            if n.startswith(f"sarg_{kind}")
        )
        for kind in ("beam", "topk")
    }
    if any(sweeps.values()):
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
        for ax, (kind, points) in zip(axes, sweeps.items()):
            if not points:
                ax.set_visible(False)
                continue
            xs = [x for x, _ in points]
            ax.plot(
                xs,
                [100 * (m.get("support_recall") or 0) for _, m in points],
                "o-",
                label="supp. recall %",
            )
            ax.plot(
                xs,
                [100 * (m.get("support_precision") or 0) for _, m in points],
                "s-",
                label="supp. precision %",
            )
            ax.plot(
                xs,
                [100 * (m.get("answer_recall") or 0) for _, m in points],
                "^-",
                label="answer recall %",
            )
            if any("f1" in m for _, m in points):
                ax.plot(xs, [100 * (m.get("f1") or 0) for _, m in points], "d-", label="F1 %")
            ax.set_xlabel("beam width β" if kind == "beam" else "chains kept K")
            ax.set_xticks(xs)
            ax.set_ylim(0, 100)
            ax.grid(alpha=0.3)
            twin = ax.twinx()
            twin.plot(
                xs,
                [m.get("prompt_tokens") or 0 for _, m in points],
                "k--",
                alpha=0.6,
                label="prompt tokens",
            )
            twin.set_ylabel("prompt tokens")
            ax.legend(loc="lower right", fontsize=7)
        fig.suptitle(
            f"{dataset}: SARG sweeps (n={max(m['n'] for p in sweeps.values() for _, m in p)})"
        )
        fig.tight_layout()
        path = out / f"{dataset}_sweeps.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths["sweeps_png"] = str(path)
    by_hops = aggregates.get("by_hops", {})
    hops = sorted((k for k in by_hops if k != "None"), key=lambda k: int(k))
    if hops:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
        names = [n for n in _HOP_METHODS if n in methods]
        width = 0.8 / max(1, len(names))
        for ax, metric, label in zip(
            axes,
            ("support_recall", "answer_recall"),
            ("supporting-paragraph recall %", "answer-string recall %"),
        ):
            for i, name in enumerate(names):
                values = [
                    100 * (by_hops[h]["methods"].get(name, {}).get(metric) or 0) for h in hops
                ]
                ax.bar([j + i * width for j in range(len(hops))], values, width, label=name)
            ax.set_xticks([j + width * (len(names) - 1) / 2 for j in range(len(hops))])
            ax.set_xticklabels(
                [
                    f"{h} hops\n(n={by_hops[h]['comparison']['n'] if by_hops[h]['comparison'] else '?'})"  # noqa: E501
                    for h in hops
                ]
            )
            ax.set_ylabel(label)
            ax.set_ylim(0, 100)
            ax.grid(axis="y", alpha=0.3)
        axes[0].legend(fontsize=7)
        fig.suptitle(f"{dataset}: evidence metrics by hop count")
        fig.tight_layout()
        path = out / f"{dataset}_by_hops.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths["by_hops_png"] = str(path)
    return paths
