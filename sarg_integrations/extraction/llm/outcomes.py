"""Per-document outcomes of an LLM extraction batch, from the results of its chunks.

:func:`assemble_outcomes` turns the :class:`~.calls.ChunkResult` of every chunk of a batch
into one :class:`DocResult` per document: the chunk's items grounded in the document
(:func:`~sarg_integrations.extraction.grounding.ground_items`), duplicates removed, the
counters of :data:`STATS_KEYS` and more, the batch's wall time shared out over the
documents, and the reason when a document yielded no triple or some chunks failed.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sarg_integrations.extraction.base import ExtractionOutcome
from sarg_integrations.extraction.chunking import Chunk
from sarg_integrations.extraction.grounding import DocumentIndex, ground_items
from sarg_integrations.schema import SourceDocument, Triple

if TYPE_CHECKING:
    from sarg_integrations.extraction.llm.calls import ChunkResult
    from sarg_integrations.extraction.llm.prompts import ExtractionPrompt

__all__ = ["STATS_KEYS", "DocResult", "Plan", "assemble_outcomes"]

STATS_KEYS = (
    "llm_calls",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "parse_repairs",
    "dropped_ungrounded",
    "extraction_seconds",
)
"""The accounting keys every outcome carries (the pipeline sums them per run)."""


@dataclass
class DocResult:
    """One document's outcome; ``failed`` when every chunk failed (``extract`` raises)."""

    outcome: ExtractionOutcome
    failed: bool = False
    raw_output: str | None = None


@dataclass
class Plan:
    """One document of a batch: its sentence index, its chunks and their cache keys."""

    document: SourceDocument
    index: DocumentIndex
    chunks: list[Chunk]
    keys: list[str]


def assemble_outcomes(
    plans: Sequence[Plan],
    results: dict[str, ChunkResult],
    wall: float,
    cache_stats: collections.Counter[str],
    *,
    prompt: ExtractionPrompt,
    window: int | None,
    min_token_overlap: float,
    evidence_similarity: float,
    screen_instructions: bool,
) -> list[DocResult]:
    """One :class:`DocResult` per plan, from the results of the batch's chunks.

    ``cache_stats`` (the batch's cache counters) go to the first document; the grounding
    arguments are the extractor's (see
    :func:`~sarg_integrations.extraction.grounding.ground_items`).
    """
    owners: set[str] = set()
    busy: list[float] = []
    drafts: list[
        tuple[Plan, collections.Counter[str], list[Triple], list[str], list[str], str | None, int]
    ] = []
    for plan in plans:
        stats: collections.Counter[str] = collections.Counter({k: 0 for k in STATS_KEYS})
        stats["chunks"] = len(plan.chunks)
        doc_busy = 0.0
        triples: list[Triple] = []
        failures: list[str] = []
        drop_examples: list[str] = []
        raw_output: str | None = None
        dropped = 0
        for chunk, key in zip(plan.chunks, plan.keys):
            res = results[key]
            if res.from_cache or key in owners:
                stats["cache_hits"] += 1
            else:
                owners.add(key)
                stats.update(res.stats)
                doc_busy += res.seconds
            if res.items is None:
                failures.append(f"chunk {chunk.index + 1}/{len(plan.chunks)}: {res.error}")
                raw_output = res.raw_output if res.raw_output is not None else raw_output
                continue
            grounded = ground_items(
                res.items,
                document_id=plan.document.id,
                index=plan.index,
                chunk=chunk,
                allowed_types=prompt.allowed_types,
                default_type=prompt.default_relation_type,
                window=window,
                min_token_overlap=min_token_overlap,
                evidence_similarity=evidence_similarity,
                screen_instructions=screen_instructions,
            )
            stats["triples_proposed"] += len(res.items)
            stats["dropped_ungrounded"] += grounded.dropped_ungrounded
            stats["dropped_instruction"] += grounded.dropped_instruction
            stats["dropped_off_schema"] += grounded.dropped_off_schema
            dropped += grounded.dropped_ungrounded + grounded.dropped_off_schema
            drop_examples.extend(grounded.examples)
            triples.extend(grounded.triples)
        if not drafts:  # the batch's cache counters go to its first document
            stats.update(+cache_stats)
        triples = _dedupe(triples, stats)
        busy.append(doc_busy)
        drafts.append((plan, stats, triples, failures, drop_examples, raw_output, dropped))
    total_busy = sum(busy)
    out: list[DocResult] = []
    for (plan, stats, triples, failures, drop_examples, raw_output, dropped), doc_busy in zip(
        drafts, busy
    ):
        share = wall * (doc_busy / total_busy) if total_busy > 0 else wall / max(1, len(drafts))
        stats["extraction_seconds"] = round(share, 6)
        stats["triples_kept"] = len(triples)
        n = len(plan.chunks)
        error: str | None = None
        failed = False
        if failures and len(failures) == n:
            failed = True
            more = f" (and {n - 1} more chunk(s) failed)" if n > 1 else ""
            error = f"LLM extraction failed: {failures[0].split(': ', 1)[1]}{more}"
        elif failures:
            error = (
                f"{len(failures)} of {n} chunks failed ({failures[0]}); the triples of the "
                "other chunks were kept"
            )
        elif not triples and dropped:
            error = (
                f"all {dropped} triple(s) the model proposed were dropped by grounding "
                f"(e.g. {drop_examples[0]})"
            )
        elif not triples:
            error = f"the model found no {prompt.name}-schema relations ({n} chunk(s))"
        numeric = {k: (int(v) if isinstance(v, int) else float(v)) for k, v in stats.items()}
        out.append(DocResult(ExtractionOutcome(triples, error, numeric), failed, raw_output))
    return out


def _dedupe(triples: list[Triple], stats: collections.Counter[str]) -> list[Triple]:
    seen: set[tuple[str, str, str, tuple[int, int] | None]] = set()
    out = []
    for t in triples:
        key = (t.cause.lower(), t.relation.lower(), t.effect.lower(), t.sentence_span)
        if key in seen:
            stats["duplicates_removed"] += 1
            continue
        seen.add(key)
        out.append(t)
    return out
