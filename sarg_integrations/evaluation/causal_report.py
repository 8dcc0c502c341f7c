"""The causal evaluation's aggregates and Markdown tables (``sarg eval --dataset ester|esc``).

:func:`aggregate_ester` / :func:`aggregate_esc` turn the per-passage / per-document
records of :func:`~sarg_integrations.evaluation.run_causal_evaluation` into means over
questions (ESTER) or micro-averaged link recall, precision and chain recovery (ESC);
:func:`markdown_ester` / :func:`markdown_esc` render them as the ``<dataset>.md`` tables.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from sarg_integrations._text import markdown_cell, markdown_code

__all__ = ["aggregate_esc", "aggregate_ester", "markdown_esc", "markdown_ester"]


# --------------------------------------------------------------------------- ESTER


def _mean(values: Sequence[Any]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(statistics.fmean(vals), 4) if vals else None


def _ester_group(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    share = [
        r["sarg"]["words"] / r["passage_words"] if r.get("passage_words") else None for r in rows
    ]
    return {
        "n": len(rows),
        "answer_in_chains": _mean([r["answer_in_chains"] for r in rows]),
        "sarg_answer_recall": _mean([r["sarg"]["answer_recall"] for r in rows]),
        "dense_answer_recall": _mean([r["dense"]["answer_recall"] for r in rows]),
        "dense_chains_budget_answer_recall": _mean(
            [r["dense_chains_budget"]["answer_recall"] for r in rows]
        ),
        "sarg_answer_exact": _mean([r["sarg"]["answer_exact"] for r in rows]),
        "dense_answer_exact": _mean([r["dense"]["answer_exact"] for r in rows]),
        "sarg_words": _mean([r["sarg"]["words"] for r in rows]),
        "dense_words": _mean([r["dense"]["words"] for r in rows]),
        "words_share": _mean(share),
        "fallback": _mean([r["fallback"] for r in rows]),
        "answer_in_passage": _mean([r["answer_in_passage"] for r in rows]),
        "sarg_ms": _mean([r["sarg"]["ms"] for r in rows]),
    }


def aggregate_ester(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Means over questions (all, by type, chain questions) and the gold-edge scores."""
    rows = [dict(q, passage_words=r["passage_words"]) for r in records for q in r["questions"]]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["qtype"]].append(row)
    edges = [e for r in records for e in r["gold_edges"]]
    return {
        "n_passages": len(records),
        "n_questions": len(rows),
        "all": _ester_group(rows),
        "by_qtype": {k: _ester_group(v) for k, v in sorted(groups.items())},
        "chain_questions": _ester_group([r for r in rows if not r["fallback"]]),
        "gold_edges": {
            "n_passages": len(records),
            "n_edges": len(edges),
            "nodes": _mean([e["nodes"] for e in edges]),
            "path": _mean([e["path"] for e in edges]),
            "edge": _mean([e["edge"] for e in edges]),
            "graph_nodes": _mean([r["graph"]["nodes"] for r in records]),
            "graph_edges": _mean([r["graph"]["edges"] for r in records]),
        },
    }


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.1f}"


def markdown_ester(aggregates: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """The ESTER tables."""
    lines = [
        f"### ester: {aggregates['n_questions']} causal questions on "
        f"{aggregates['n_passages']} passages "
        f"(extractor {markdown_code(settings['extractor'])})",
        "",
        "Half-match = at least half of a gold span's content words (%). In chains: the kept "
        "chains' node names; SARG / dense / dense+chains: the evidence text of SARG, of the "
        "question's most similar sentences within SARG's evidence word count, and within "
        "SARG's evidence + chain word count; words: mean evidence words; share: SARG's "
        "evidence words / passage words; in passage: the gold answer half-matches the "
        "passage (upper bound).",
        "",
        "| group | n | in chains | SARG ans. R | dense ans. R | dense+chains ans. R | "
        "SARG words | dense words | words share | fallback | in passage |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups = [("all", aggregates["all"])]
    groups += [(f"type={markdown_cell(k)}", v) for k, v in aggregates["by_qtype"].items()]
    groups += [("chain questions (no fallback)", aggregates["chain_questions"])]
    for label, g in groups:
        if not g["n"]:
            continue
        lines.append(
            f"| {label} | {g['n']} | {_pct(g['answer_in_chains'])} | "
            f"{_pct(g['sarg_answer_recall'])} | {_pct(g['dense_answer_recall'])} | "
            f"{_pct(g['dense_chains_budget_answer_recall'])} | {_num(g['sarg_words'])} | "
            f"{_num(g['dense_words'])} | {_pct(g['words_share'])} | {_pct(g['fallback'])} | "
            f"{_pct(g['answer_in_passage'])} |"
        )
    e = aggregates["gold_edges"]
    lines += [
        "",
        "Gold `causal_graph` edges against SARG's reasoning graph (fuzzy node match: half of "
        "the gold node's content words are in a SARG node's name or aliases; %):",
        "",
        "| passages | gold edges | both ends matched | directed path | direct edge | "
        "graph nodes | graph edges |",
        "|---|---|---|---|---|---|---|",
        f"| {e['n_passages']} | {e['n_edges']} | {_pct(e['nodes'])} | {_pct(e['path'])} | "
        f"{_pct(e['edge'])} | {_num(e['graph_nodes'])} | {_num(e['graph_edges'])} |",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- ESC


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def aggregate_esc(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Micro-averaged link recall / precision and chain recovery over documents."""
    links = [link for r in records for link in r["links"]]

    def recall(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return {
            "n": len(rows),
            "found": sum(x["found"] for x in rows),
            "recall": _ratio(sum(x["found"] for x in rows), len(rows)),
            "recall_reversed": _ratio(sum(x["found_reversed"] for x in rows), len(rows)),
        }

    te = sum(r["triples_event_sentences"] for r in records)
    ce = sum(r["correct_event_sentences"] for r in records)
    tl = sum(r["triples_linked_sentences"] for r in records)
    cl = sum(r["correct_linked_sentences"] for r in records)
    pairs = sum(r["paths"]["pairs"] for r in records)
    predicted = sum(r["text_order_baseline"]["predicted"] for r in records)
    hits = sum(r["text_order_baseline"]["correct"] for r in records)
    same = sum(not x["cross_sentence"] for x in links)
    by_hops: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        for hops, (n, ok) in r["paths"]["by_hops"].items():
            by_hops[hops][0] += n
            by_hops[hops][1] += ok
    return {
        "n_documents": len(records),
        "triples": sum(r["triples"] for r in records),
        "links": {
            "all": recall(links),
            "same_sentence": recall([x for x in links if not x["cross_sentence"]]),
            "cross_sentence": recall([x for x in links if x["cross_sentence"]]),
        },
        "precision": {
            "event_sentences": {"triples": te, "correct": ce, "precision": _ratio(ce, te)},
            "linked_sentences": {"triples": tl, "correct": cl, "precision": _ratio(cl, tl)},
        },
        "text_order_baseline": {
            "predicted_pairs": predicted,
            "correct": hits,
            "recall": _ratio(hits, len(links)),
            "recall_same_sentence": _ratio(hits, same),
            "precision": _ratio(hits, predicted),
        },
        "chains": {
            "pairs": pairs,
            "both_nodes": _ratio(sum(r["paths"]["both_nodes"] for r in records), pairs),
            "recovered": _ratio(sum(r["paths"]["recovered"] for r in records), pairs),
            "by_hops": {
                k: {"pairs": n, "recovered": _ratio(ok, n)}
                for k, (n, ok) in sorted(by_hops.items(), key=lambda kv: int(kv[0]))
            },
        },
        "ms_per_document": {
            "extract": _mean([r["ms"]["extract"] for r in records]),
            "graph": _mean([r["ms"]["graph"] for r in records]),
        },
    }


def markdown_esc(aggregates: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """The ESC tables."""
    links, prec, chains = aggregates["links"], aggregates["precision"], aggregates["chains"]
    lines = [
        f"### esc: {aggregates['n_documents']} documents, {links['all']['n']} gold cause → "
        f"effect links, {aggregates['triples']} triples "
        f"(extractor {markdown_code(settings['extractor'])})",
        "",
        "Recall: gold links found by a triple whose cause holds the cause trigger and whose "
        "effect holds the effect trigger, read from a sentence holding one of the two events "
        "(%); reversed: found with cause and effect swapped. Precision: share of the triples "
        "from sentences holding an annotated event (event sentences) or an event of a gold link "
        "(linked sentences) that find some gold link.",
        "",
        "| links | n | recall | recall (reversed) |",
        "|---|---|---|---|",
    ]
    for key, label in (
        ("all", "all"),
        ("same_sentence", "same sentence"),
        ("cross_sentence", "cross sentence"),
    ):
        g = links[key]
        lines.append(
            f"| {label} | {g['n']} | {_pct(g['recall'])} | {_pct(g['recall_reversed'])} |"
        )
    base = aggregates["text_order_baseline"]
    lines += [
        "",
        "Reference without an extractor (every two events of one sentence, earlier → later; "
        f"{base['predicted_pairs']} event pairs): recall {_pct(base['recall'])} (same sentence "
        f"{_pct(base['recall_same_sentence'])}), precision {_pct(base['precision'])}.",
    ]
    lines += [
        "",
        "| precision scope | triples | correct | precision |",
        "|---|---|---|---|",
    ]
    for key, label in (
        ("event_sentences", "event sentences"),
        ("linked_sentences", "linked sentences"),
    ):
        p = prec[key]
        lines.append(f"| {label} | {p['triples']} | {p['correct']} | {_pct(p['precision'])} |")
    lines += [
        "",
        "Chain recovery: gold event pairs (A, C) whose shortest gold path has ≥ 2 links; "
        "recovered when the reasoning graph of the document holds a directed path from a node "
        "containing A's trigger to another node containing C's trigger (%):",
        "",
        "| gold hops | pairs | both ends have a node | recovered |",
        "|---|---|---|---|",
        f"| all | {chains['pairs']} | {_pct(chains['both_nodes'])} | "
        f"{_pct(chains['recovered'])} |",
    ]
    for hops, g in chains["by_hops"].items():
        lines.append(f"| {hops} | {g['pairs']} | | {_pct(g['recovered'])} |")
    return "\n".join(lines) + "\n"
