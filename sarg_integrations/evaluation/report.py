"""The multi-hop evaluation's aggregates and Markdown tables (``sarg eval`` on QA sets).

:func:`aggregate` turns the per-question records of
:func:`~sarg_integrations.evaluation.run_evaluation` into means per method, the
:data:`COMPARISONS` of each budgeted method against flat top-k at its prompt-token
budget, and breakdowns by hops and question type; :func:`markdown_report` renders them
as the ``<dataset>.md`` tables.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from sarg_integrations._text import markdown_cell, markdown_code
from sarg_integrations.evaluation.methods import BASE_METHODS, BUDGET_BASELINES

__all__ = ["COMPARISONS", "aggregate", "markdown_report"]


# --------------------------------------------------------------------------- aggregates


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(statistics.fmean(vals), 4) if vals else None


_METRICS = (
    "support_recall",
    "support_precision",
    "answer_recall",
    "prompt_tokens",
    "paragraphs",
    "chains",
    "fallback",
    "faithfulness",
    "em",
    "f1",
    "answer_tokens",
    "latency_ms",
)


def _method_means(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for metric in _METRICS:
        values = [r.get(metric) for r in rows if metric in r]
        if values:
            out[metric] = _mean([float(v) if v is not None else None for v in values])
    hops = sum(r.get("total_hops", 0) for r in rows)
    if any("total_hops" in r for r in rows):
        out["faithful_hop_share"] = (
            round(sum(r.get("faithful_hops", 0) for r in rows) / hops, 4) if hops else None
        )
    times: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        for stage, ms in (r.get("times_ms") or {}).items():
            times[stage].append(ms)
    out["times_ms"] = {stage: round(statistics.fmean(v), 2) for stage, v in sorted(times.items())}
    for key in ("beam_expansions", "nodes", "edges", "triples"):
        values = [
            r["stats"].get(key) for r in rows if r.get("stats") and r["stats"].get(key) is not None
        ]
        if values:
            out[key] = round(statistics.fmean(values), 2)
    return out


def _compare(records: Sequence[Mapping[str, Any]], a: str, b: str) -> dict[str, Any] | None:
    pairs = [
        (r["methods"][a], r["methods"][b])
        for r in records
        if a in r["methods"] and b in r["methods"]
    ]
    if not pairs:
        return None
    non_fb = [(x, y) for x, y in pairs if not x.get("fallback")]
    return {
        "n": len(pairs),
        f"{a}_recall": _mean([x["support_recall"] for x, _ in pairs]),
        f"{b}_recall": _mean([y["support_recall"] for _, y in pairs]),
        "share_below": round(
            sum(x["support_recall"] < y["support_recall"] for x, y in pairs) / len(pairs), 4
        ),
        "share_above": round(
            sum(x["support_recall"] > y["support_recall"] for x, y in pairs) / len(pairs), 4
        ),
        f"{a}_tokens": _mean([x["prompt_tokens"] for x, _ in pairs]),
        f"{b}_tokens": _mean([y["prompt_tokens"] for _, y in pairs]),
        "fallback_share": _mean([float(bool(x.get("fallback"))) for x, _ in pairs]),
        "n_chain_questions": len(non_fb),
        f"{a}_recall_chain_questions": _mean([x["support_recall"] for x, _ in non_fb]),
        f"{b}_recall_chain_questions": _mean([y["support_recall"] for _, y in non_fb]),
    }


def aggregate(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Means per method and the :data:`COMPARISONS`, overall, by hops and by type.

    A comparison whose two methods were not both run is ``None``.
    """
    by_method: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        for name, row in record["methods"].items():
            by_method[name].append(row)
    out: dict[str, Any] = {"n_questions": len(records)}
    out["methods"] = {name: _method_means(rows) for name, rows in by_method.items()}
    for a, b, _ in COMPARISONS:
        out[f"{a}_vs_{b}"] = _compare(records, a, b)
    for key in ("hops", "qtype"):
        groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for record in records:
            groups[str(record.get(key))].append(record)
        out[f"by_{key}"] = {
            group: {
                **{group_key: _compare(rows, a, b) for a, b, group_key in COMPARISONS},
                "methods": {
                    name: {
                        m: v
                        for m, v in _method_means(
                            [r["methods"][name] for r in rows if name in r["methods"]]
                        ).items()
                        if m
                        in (
                            "n",
                            "support_recall",
                            "answer_recall",
                            "prompt_tokens",
                            "em",
                            "f1",
                            "fallback",
                        )
                    }
                    for name in by_method
                    if any(name in r["methods"] for r in rows)
                },
            }
            for group, rows in sorted(groups.items())
        }
    return out


# --------------------------------------------------------------------------- Markdown


def _fmt(value: Any, pct: bool = False) -> str:
    if value is None:
        return "–"
    if pct:
        return f"{100 * value:.1f}"
    if isinstance(value, float):
        return (
            f"{value:.0f}"
            if abs(value) >= 100
            else f"{value:.3g}"
            if abs(value) < 1
            else f"{value:.1f}"
        )
    return str(value)


COMPARISONS = tuple(
    (method, baseline, "comparison" + baseline.removeprefix("flat_topk_budget"))
    for baseline, method in BUDGET_BASELINES.items()
)
"""(method, flat top-k at that method's prompt-token budget, key in ``by_hops`` /
``by_qtype`` groups) triples compared, one per :data:`BUDGET_BASELINES` entry:
``("sarg", "flat_topk_budget", "comparison")``, ``("sarg_fill", "flat_topk_budget_fill",
"comparison_fill")``, ``("tasr", "flat_topk_budget_tasr", "comparison_tasr")``. The
overall comparison is ``"{a}_vs_{b}"``."""


def _comparison_table(aggregates: Mapping[str, Any], a: str, b: str, group_key: str) -> list[str]:
    """Markdown rows comparing method ``a`` with ``b`` overall, by hops and by type.

    No rows when the pair was not run (its comparison is ``None`` or absent).
    """
    overall = aggregates.get(f"{a}_vs_{b}")
    if not overall:
        return []
    lines = [
        "",
        f"`{a}` against flat top-k at `{a}`'s own prompt-token budget (`{b}`; "
        f"supporting-paragraph recall, %; 'below' = share of questions where `{a}`'s "
        f"recall is lower; 'chain q.' = only the questions where `{a}` found chains, i.e. "
        "did not fall back):",
        "",
        f"| group | n | {a} | {b} | below | above | fallback | chain q. n | "
        f"{a} (chain q.) | {b} (chain q.) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups = [("all", overall)]
    groups += [(f"hops={k}", v.get(group_key)) for k, v in aggregates.get("by_hops", {}).items()]
    groups += [
        (f"type={markdown_cell(k)}", v.get(group_key))
        for k, v in aggregates.get("by_qtype", {}).items()
        if k != "None"
    ]
    for label, c in groups:
        if not c:
            continue
        lines.append(
            f"| {label} | {c['n']} | {_fmt(c[f'{a}_recall'], True)} | "
            f"{_fmt(c[f'{b}_recall'], True)} | {_fmt(c['share_below'], True)} | "
            f"{_fmt(c['share_above'], True)} | {_fmt(c['fallback_share'], True)} | "
            f"{c['n_chain_questions']} | {_fmt(c[f'{a}_recall_chain_questions'], True)} | "
            f"{_fmt(c[f'{b}_recall_chain_questions'], True)} |"
        )
    return lines


def markdown_report(
    dataset: str, aggregates: Mapping[str, Any], settings: Mapping[str, Any]
) -> str:
    """Render the aggregates as Markdown tables."""
    methods = aggregates["methods"]
    has_llm = any("em" in m for m in methods.values())
    keys = (
        "limit", "offset", "seed", "shuffle_distractors", "flat_top_k", "sweep_limit", "llm",
        "skipped_no_paragraphs",
    )
    shown = {k: settings[k] for k in keys if k in settings}
    lines = [
        f"### {markdown_cell(dataset)}: {aggregates['n_questions']} questions",
        "",
        f"Settings: {markdown_code(json.dumps(shown))}",
        "",
        "Supp. R/P: supporting-paragraph recall/precision of the paragraphs in the prompt (%); "
        "Ans. R: gold answer string in the prompt's evidence (%); tokens: estimated prompt tokens "
        "(regex estimate); fallback: share of questions where SARG used the flat context (%); "
        "faithful: share of chain hops whose source sentence is in the cited paragraph (%); "
        "time: mean wall time per question (ms).",
        "",
    ]
    header = "| method | n | Supp. R | Supp. P | Ans. R | tokens | chains | fallback | faithful | time ms |"  # noqa: E501
    sep = "|---|---|---|---|---|---|---|---|---|---|"
    if has_llm:
        header += " EM | F1 | ans. tokens | latency ms |"
        sep += "---|---|---|---|"
    lines += [header, sep]
    order = [m for m in BASE_METHODS if m in methods] + sorted(
        m for m in methods if m not in BASE_METHODS
    )
    for name in order:
        m = methods[name]
        row = (
            f"| {markdown_cell(name)} | {m['n']} | {_fmt(m.get('support_recall'), True)} | "
            f"{_fmt(m.get('support_precision'), True)} | {_fmt(m.get('answer_recall'), True)} | "
            f"{_fmt(m.get('prompt_tokens'))} | {_fmt(m.get('chains'))} | "
            f"{_fmt(m.get('fallback'), True)} | {_fmt(m.get('faithful_hop_share'), True)} | "
            f"{_fmt(m.get('times_ms', {}).get('total'))} |"
        )
        if has_llm:
            row += (
                f" {_fmt(m.get('em'), True)} | {_fmt(m.get('f1'), True)} | "
                f"{_fmt(m.get('answer_tokens'))} | {_fmt(m.get('latency_ms'))} |"
            )
        lines.append(row)
    stage_rows = [(n, methods[n]["times_ms"]) for n in ("sarg", "sarg_spo") if n in methods]
    if stage_rows:
        stages = [
            "extract",
            "encode",
            "build",
            "match",
            "direction",
            "traverse",
            "compile",
            "encoder",
            "total",
        ]
        lines += [
            "",
            "Per-stage time of SARG (mean ms per question; extraction is done once per "
            "schema and cached for the other variants):",
            "",
            "| method | " + " | ".join(stages) + " | nodes | edges | beam expansions |",
            "|---" * (len(stages) + 4) + "|",
        ]
        for name, times in stage_rows:
            m = methods[name]
            lines.append(
                f"| {markdown_cell(name)} | "
                + " | ".join(_fmt(times.get(s)) for s in stages)
                + f" | {_fmt(m.get('nodes'))} | {_fmt(m.get('edges'))} | {_fmt(m.get('beam_expansions'))} |"  # noqa: E501
            )
    for a, b, group_key in COMPARISONS:
        lines += _comparison_table(aggregates, a, b, group_key)
    sweeps = [n for n in order if n.startswith(("sarg_beam", "sarg_topk"))]
    if sweeps:
        lines += [
            "",
            "Sweeps (β = beam width, K = chains kept; the default β=3, K=3 is `sarg`):",
            "",
            "| setting | n | Supp. R | Supp. P | Ans. R | tokens | chains | fallback | beam expansions | traverse ms |",  # noqa: E501
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name in sorted(
            sweeps, key=lambda n: (n.startswith("sarg_topk"), int(re.sub(r"\D", "", n)))
        ):
            m = methods[name]
            lines.append(
                f"| {markdown_cell(name)} | {m['n']} | {_fmt(m.get('support_recall'), True)} | {_fmt(m.get('support_precision'), True)} | "  # noqa: E501
                f"{_fmt(m.get('answer_recall'), True)} | {_fmt(m.get('prompt_tokens'))} | {_fmt(m.get('chains'))} | "  # noqa: E501
                f"{_fmt(m.get('fallback'), True)} | {_fmt(m.get('beam_expansions'))} | "
                f"{_fmt(m.get('times_ms', {}).get('traverse'))} |"
            )
    return "\n".join(lines) + "\n"
