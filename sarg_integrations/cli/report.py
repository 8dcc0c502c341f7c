"""The human-readable report of ``sarg run`` / ``sarg demo``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sarg_integrations.schema import SARGResult

__all__ = ["report_lines", "show_id"]

# Ids shown bare when they cannot be misread; anything else (", ", ": ", spaces,
# brackets, quotes) is quoted so that one id never reads as two or as a separator.
_PLAIN_ID = re.compile(r"[\w.\-/@+#~=]+")


def show_id(doc_id: str) -> str:
    """Return ``doc_id`` as the report shows it: bare when plain, else quoted (``repr``).

    Example:
        >>> show_id("gaucher-genetics"), show_id("a, b")
        ('gaucher-genetics', "'a, b'")
    """
    return doc_id if _PLAIN_ID.fullmatch(doc_id) else repr(doc_id)


def report_lines(result: SARGResult, *, show_prompt: bool = False) -> list[str]:
    """Render ``result`` as the human-readable report (a list of lines)."""
    lines = ["", f"Query: {result.query}"]
    d = result.direction
    if d is not None:  # None: the strategy predicts no direction (tasr)
        direction = f"Direction: {d.direction.value} (confidence {d.confidence:.2f}"
        direction += f", method {d.method})" if d.method else ")"
        if d.rationale:
            direction += f" - {d.rationale}"
        lines.append(direction)
    if result.keyphrases is not None:  # None: the strategy uses no key phrases (tasr)
        keyphrases = ", ".join(result.keyphrases) if result.keyphrases else "(none)"
        lines.append(f"Key phrases: {keyphrases}")

    threshold = result.config.get("similarity_threshold")
    tau = f" (similarity > {threshold})" if threshold is not None else ""
    lines.append(f"Entry nodes{tau}:" + ("" if result.entry_nodes else " (none)"))
    for entry in result.entry_nodes:
        matched = f"its clause {entry.span!r}" if entry.span else f"key phrase {entry.keyphrase!r}"
        lines.append(f"  - {entry.node}  [similarity {entry.similarity:.3f}, {matched}]")

    lines.extend(_tasr_lines(result))
    lines.append("")
    considered = len(result.candidate_chains or result.chains)
    lines.append(f"Reasoning chains: {len(result.chains)} kept of {considered} candidate(s)")
    for number, chain in enumerate(result.chains, start=1):
        lines.append(f"  [{number}] score {chain.score:.3f}, {len(chain.hops)} hop(s)")
        lines.append(f"      {chain.to_text()}")
        for index, hop in enumerate(chain.hops, start=1):
            docs = ", ".join(map(show_id, hop.document_ids)) or "(no document)"
            # Same arrow direction as the chain line: a backward hop walks an edge
            # target -> source, drawn "source <--[r]-- target" above.
            arrow = "->" if hop.forward else "<-"
            lines.append(f"      hop {index}: {hop.source} {arrow} {hop.target}  cited by: {docs}")

    graph = result.graph
    lines.append("")
    lines.append(
        f"Graph: {graph.number_of_nodes} nodes, {graph.number_of_edges} edges, "
        f"{len(graph.merges)} merges ({len(result.triples)} triples from "
        f"{len(result.document_ids)} documents)"
    )
    if result.skipped_documents:
        lines.append(f"Skipped documents ({len(result.skipped_documents)}):")
        lines.extend(f"  - {show_id(s.document_id)}: {s.reason}" for s in result.skipped_documents)
    if result.fallback_reason:
        lines.append(
            f"Fallback: the prompt uses the flat retrieved context because {result.fallback_reason}"
        )
    lines.extend(f"Note: {note}" for note in getattr(result, "notes", ()))
    lines.extend(_accounting_lines(result.stats))
    timings = [
        (key[len("time_") : -len("_ms")], value)
        for key, value in result.stats.items()
        if key.startswith("time_") and key.endswith("_ms") and isinstance(value, (int, float))
    ]
    if timings:
        lines.append("Timings (ms): " + ", ".join(f"{name} {value:.1f}" for name, value in timings))
    if show_prompt:
        lines.extend(["", "Prompt:", "-" * 72, result.prompt.rstrip(), "-" * 72])
    return lines


def _tasr_lines(result: SARGResult) -> list[str]:
    """The TaSR sub-queries and binding table, when the run used ``--strategy tasr``."""
    trace = getattr(result, "trace", None)
    if getattr(result, "strategy", "sarg") != "tasr" or trace is None:
        return []
    method = trace.decomposition.method or "-"
    lines = ["", f"TaSR sub-queries ({trace.decomposition.kind}, {method}):"]
    for hop in trace.hops:
        docs = ", ".join(f"{d} {s:.3f}" for d, s in hop.documents) or "(none)"
        lines.append(f"  {hop.step}. {hop.resolved.to_text()}  typed {hop.typed}")
        lines.append(f"     {hop.status}: documents {docs}")
        if hop.bindings:
            lines.append("     binds " + ", ".join(f"{k} = {v}" for k, v in hop.bindings.items()))
        if hop.reason:
            lines.append(f"     {hop.reason}")
    return lines


def _accounting_lines(stats: dict[str, Any]) -> list[str]:
    """The LLM-extraction accounting line(s), when the run used an LLM extractor."""
    if "llm_calls" not in stats:
        return []

    def count(key: str) -> int:
        value = stats.get(key, 0)
        return int(value) if isinstance(value, (int, float)) else 0

    line = (
        f"LLM extraction: {count('llm_calls')} call(s), {count('cache_hits')} cache hit(s), "
        f"{count('prompt_tokens')} prompt + {count('completion_tokens')} completion tokens, "
        f"{count('parse_repairs')} parse repair(s), "
        f"{count('dropped_ungrounded')} ungrounded triple(s) dropped, "
        f"{float(stats.get('extraction_seconds', 0.0) or 0.0):.2f} s"
    )
    extras = []
    if count("llm_retries"):
        extras.append(f"{count('llm_retries')} retried call(s)")
    if count("llm_calls_without_usage"):
        extras.append(f"token usage not reported for {count('llm_calls_without_usage')} call(s)")
    if count("dropped_instruction"):
        extras.append(
            f"{count('dropped_instruction')} triple(s) from instruction-like text dropped"
        )
    if extras:
        line += " (" + "; ".join(extras) + ")"
    return [line]
