"""The causal evaluation: ``sarg eval --dataset ester`` and ``sarg eval --dataset esc``.

:func:`run_causal_evaluation` runs one SARG pipeline over the TORQUESTRA/ESTER causal
questions or the Event StoryLine Corpus documents and writes, like
:func:`~sarg_integrations.evaluation.run_evaluation`, one JSON line per passage /
document to ``<out>/<dataset>.records.jsonl`` as soon as it is done (a rerun with the
same settings resumes), then ``<dataset>.json`` (settings, aggregates, records) and
``<dataset>.md`` (tables). The metrics are in
:mod:`~sarg_integrations.evaluation.causal_metrics`.

**ESTER** (per question; the passage's sentences are the retrieved documents):

* *answer in chains*: a gold span is half-matched by the kept chains' node names;
* *evidence answer recall*: a gold span is half-matched by SARG's evidence text,
  against ``dense``: the sentences most cosine-similar to the question (the
  pipeline's embedder), taken in that order while their words fit SARG's evidence
  word count, and ``dense+chains``: the same with the words of SARG's chain lines
  added to the budget (all the words SARG puts after the question);
* *words share*: evidence words / passage words; *fallback*: SARG fell back to the
  flat context (every sentence);
* per passage, the gold ``causal_graph`` edges whose head and tail fuzzily match
  nodes of SARG's reasoning graph (and whether a directed path / edge joins them).

**ESC** (per document; the whole document is one source document): recall and
precision of the extractor's triples on the gold cause → effect event links, same-
and cross-sentence, and chain recovery of the gold multi-hop paths in the reasoning
graph built from the document's triples.

The extractor is injectable: a name (``"tagger"``, the default learned span tagger;
``"rules"``; ``"union"``), a folder written by ``sarg train-extractor``, or any object
with ``extract(document)`` (and optionally ``extract_many``).

This module holds the per-passage / per-document scoring and the run loop; the
aggregates and tables are in :mod:`~sarg_integrations.evaluation.causal_report` (re-exported
here), the records file in :mod:`~sarg_integrations.evaluation.records`.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sarg_integrations.errors import InputError
from sarg_integrations.evaluation.causal_metrics import (
    budget_sentences,
    content_words,
    esc_link_found,
    gold_edge_recovery,
    gold_multi_hop_pairs,
    half_match,
    has_directed_path,
    trigger_in,
    triple_sentences,
    word_count,
)
from sarg_integrations.evaluation.causal_qa import (
    CAUSAL_DATASETS,
    ESCDocument,
    ESTERPassage,
    load_esc,
    load_ester,
)
from sarg_integrations.evaluation.causal_report import (  # re-exported: importable from here
    aggregate_esc,
    aggregate_ester,
    markdown_esc,
    markdown_ester,
)
from sarg_integrations.evaluation.metrics import answer_in_text
from sarg_integrations.evaluation.records import (
    make_out_dir,
    read_records,
    record_each,
    write_summary,
)
from sarg_integrations.schema import SourceDocument, Triple

__all__ = [
    "CausalReport",
    "aggregate_esc",
    "aggregate_ester",
    "evaluate_esc_document",
    "evaluate_ester_passage",
    "markdown_esc",
    "markdown_ester",
    "resolve_extractor",
    "run_causal_evaluation",
]

RECORD_VERSION = 1


def resolve_extractor(spec: Any) -> Any:
    """The extractor for ``spec``: a name (``tagger``, ``rules``, ``union``), a folder, or an object.

    Raises:
        InputError: An unknown name, or an object without ``extract``.
    """
    from sarg_integrations.errors import ConfigError
    from sarg_integrations.extraction.choice import DEFAULT_EXTRACTOR, resolve_extractor as by_name

    if spec is None:
        spec = DEFAULT_EXTRACTOR
    if isinstance(spec, (str, os.PathLike)):
        try:
            return by_name(str(spec))
        except ConfigError as exc:
            raise InputError(str(exc), argument="extractor", value=str(spec)) from None
    if not callable(getattr(spec, "extract", None)):
        msg = f"extractor {type(spec).__name__} has no extract(document) method"
        raise InputError(msg, argument="extractor", value=type(spec).__name__)
    return spec


def _extractor_name(spec: Any) -> str:
    if spec is None or isinstance(spec, (str, os.PathLike)):
        from sarg_integrations.extraction.choice import DEFAULT_EXTRACTOR

        return str(spec or DEFAULT_EXTRACTOR)
    return f"{type(spec).__module__}.{type(spec).__qualname__}"


def _triples_of(extractor: Any, docs: Sequence[SourceDocument]) -> list[list[Triple]]:
    """One triple list per document (extraction errors give an empty list)."""
    many = getattr(extractor, "extract_many", None)
    items: list[Any]
    if callable(many):
        items = list(many(list(docs)))
    else:
        items = []
        for doc in docs:
            try:
                items.append(extractor.extract(doc))
            except Exception as exc:  # noqa: BLE001 - recorded as no triples
                items.append(exc)
    out: list[list[Triple]] = []
    for item in items:
        if isinstance(item, BaseException):
            out.append([])
        elif hasattr(item, "triples"):
            out.append(list(item.triples))
        else:
            out.append(list(item))
    return out


# --------------------------------------------------------------------------- ESTER


def _any_half(answers: Sequence[str], words: frozenset[str]) -> bool:
    return any(half_match(a, words) for a in answers)


def evaluate_ester_passage(pipeline: Any, passage: ESTERPassage) -> dict[str, Any]:
    """Run ``pipeline`` on every causal question of ``passage``; one record.

    The pipeline's extractor should cache per document (the harness wraps it in a
    :class:`~sarg_integrations.evaluation.methods.CachingExtractor`) so the passage is
    extracted once for all its questions.
    """
    from sarg_integrations.embedding import cosine_matrix
    from sarg_integrations.graph import build_reasoning_graph

    docs = list(passage.sentences)
    texts = [d.text for d in docs]
    passage_words = sum(word_count(t) for t in texts)
    passage_cw = content_words(" ".join(texts))
    questions = []
    graph = None
    for q in passage.questions:
        start = time.perf_counter()
        result = pipeline.run(q.question, docs)
        sarg_ms = (time.perf_counter() - start) * 1000.0
        if graph is None:
            graph = result.graph.graph
        chain_nodes = [n for chain in result.chains for n in chain.nodes]
        chain_text = "\n".join(chain.to_text() for chain in result.chains)
        evidence_text = "\n".join(p.text for p in result.evidence)
        evidence_words = word_count(evidence_text)
        chain_words = word_count(chain_text)
        vectors = pipeline.embedder.embed([q.question, *texts])
        sims = cosine_matrix(vectors[1:], vectors[:1])[:, 0]
        order = sorted(range(len(docs)), key=lambda i: (-float(sims[i]), i))
        ranked = [texts[i] for i in order]

        def dense(budget: int, ranked: list[str] = ranked) -> dict[str, Any]:
            chosen = [ranked[i] for i in budget_sentences(ranked, budget)]
            text = "\n".join(chosen)
            return {
                "answer_recall": _any_half(q.answers, content_words(text)),
                "answer_exact": answer_in_text(text, q.answers),
                "words": word_count(text),
                "sentences": len(chosen),
                "budget_words": budget,
            }

        questions.append(
            {
                "id": q.id,
                "question": q.question,
                "qtype": q.qtype,
                "answers": list(q.answers),
                "answer_in_passage": _any_half(q.answers, passage_cw),
                "fallback": result.used_fallback,
                "fallback_reason": result.fallback_reason,
                "direction": result.direction.direction.value,
                "chains": [c.to_text() for c in result.chains],
                "answer_in_chains": _any_half(
                    q.answers, frozenset().union(*(content_words(n) for n in chain_nodes))
                ),
                "sarg": {
                    "answer_recall": _any_half(q.answers, content_words(evidence_text)),
                    "answer_exact": answer_in_text(evidence_text, q.answers),
                    "words": evidence_words,
                    "chain_words": chain_words,
                    "sentences": len(result.evidence),
                    "evidence_ids": [p.document_id for p in result.evidence],
                    "ms": round(sarg_ms, 1),
                },
                "dense": dense(evidence_words),
                "dense_chains_budget": dense(evidence_words + chain_words),
            }
        )
    if graph is None:  # no question on this passage: build its graph for the gold score
        triples = [t for ts in _triples_of(pipeline.extractor, docs) for t in ts]
        graph = build_reasoning_graph(
            triples, embedder=pipeline.embedder, merge_threshold=pipeline.config.merge_threshold
        ).graph
    return {
        "id": passage.id,
        "torque_id": passage.torque_id,
        "n_sentences": len(docs),
        "passage_words": passage_words,
        "graph": {"nodes": graph.number_of_nodes(), "edges": graph.number_of_edges()},
        "gold_edges": gold_edge_recovery(passage.gold_edges, graph),
        "questions": questions,
    }


# --------------------------------------------------------------------------- ESC


def evaluate_esc_document(
    extractor: Any, document: ESCDocument, *, embedder: Any = None, merge_threshold: float = 0.88
) -> dict[str, Any]:
    """Score ``extractor`` on one ESC document; one record.

    Precision counts the triples read from *event sentences* (sentences holding at
    least one annotated event markable) and, separately, from *linked sentences*
    (holding an event that takes part in a gold link); a triple is correct when it
    finds some gold link (:func:`~sarg_integrations.evaluation.causal_metrics.esc_link_found`).
    Chain recovery builds the reasoning graph of the document's triples
    (:func:`~sarg_integrations.graph.build_reasoning_graph` with ``embedder``).
    """
    from sarg_integrations.graph import build_reasoning_graph

    source = document.source_document()
    start = time.perf_counter()
    triples = _triples_of(extractor, [source])[0]
    extract_ms = (time.perf_counter() - start) * 1000.0
    events = document.events
    sentences_of = [triple_sentences(t, document.text, document.sentence_spans) for t in triples]
    event_sentences = {e.sentence for e in events.values()}
    linked = {m for link in document.links for m in (link.cause, link.effect)}
    linked_sentences = {events[m].sentence for m in linked}

    def finds(index: int, cause: str, effect: str) -> bool:
        c, e = events[cause], events[effect]
        return esc_link_found(
            triples[index], sentences_of[index], c.trigger, e.trigger, (c.sentence, e.sentence)
        )

    links = []
    correct = [False] * len(triples)
    for link in document.links:
        c, e = events[link.cause], events[link.effect]
        hits = [i for i in range(len(triples)) if finds(i, link.cause, link.effect)]
        for i in hits:
            correct[i] = True
        reversed_hit = any(finds(i, link.effect, link.cause) for i in range(len(triples)))
        links.append(
            {
                "cause": c.trigger,
                "effect": e.trigger,
                "cause_id": c.id,
                "effect_id": e.id,
                "cross_sentence": c.sentence != e.sentence,
                "found": bool(hits),
                "found_reversed": reversed_hit,
            }
        )
    # Reference without an extractor: every two events of one sentence, in text order.
    by_sentence: dict[int, list[Any]] = defaultdict(list)
    for event in events.values():
        by_sentence[event.sentence].append(event)
    pairs_in_order = {
        (a.id, b.id) for evs in by_sentence.values() for a in evs for b in evs if a.span < b.span
    }
    gold_pairs = {(link.cause, link.effect) for link in document.links}
    in_event = [i for i, s in enumerate(sentences_of) if s & event_sentences]
    in_linked = [i for i, s in enumerate(sentences_of) if s & linked_sentences]
    start = time.perf_counter()
    graph = build_reasoning_graph(triples, embedder=embedder, merge_threshold=merge_threshold).graph
    nodes_with: dict[str, list[str]] = {}

    def nodes_of(event_id: str) -> list[str]:
        if event_id not in nodes_with:
            trigger = events[event_id].trigger
            nodes_with[event_id] = [
                n
                for n, data in graph.nodes(data=True)
                if trigger_in(trigger, n)
                or any(trigger_in(trigger, a) for a in data.get("aliases", ()) or ())
            ]
        return nodes_with[event_id]

    pairs = gold_multi_hop_pairs([(link.cause, link.effect) for link in document.links])
    paths = {"pairs": len(pairs), "both_nodes": 0, "recovered": 0, "by_hops": {}}
    for a, c, hops in pairs:
        a_nodes, c_nodes = nodes_of(a), nodes_of(c)
        ok = has_directed_path(graph, a_nodes, c_nodes)
        paths["both_nodes"] += bool(a_nodes and c_nodes)
        paths["recovered"] += ok
        slot = paths["by_hops"].setdefault(str(hops), [0, 0])
        slot[0] += 1
        slot[1] += ok
    graph_ms = (time.perf_counter() - start) * 1000.0
    return {
        "id": document.id,
        "topic": document.topic,
        "n_sentences": len(document.sentence_spans),
        "n_events": len(events),
        "triples": len(triples),
        "triples_event_sentences": len(in_event),
        "correct_event_sentences": sum(correct[i] for i in in_event),
        "triples_linked_sentences": len(in_linked),
        "correct_linked_sentences": sum(correct[i] for i in in_linked),
        "links": links,
        "text_order_baseline": {
            "predicted": len(pairs_in_order),
            "correct": len(pairs_in_order & gold_pairs),
        },
        "paths": paths,
        "graph": {"nodes": graph.number_of_nodes(), "edges": graph.number_of_edges()},
        "ms": {"extract": round(extract_ms, 1), "graph": round(graph_ms, 1)},
    }


# --------------------------------------------------------------------------- run


@dataclass
class CausalReport:
    """The outcome of one :func:`run_causal_evaluation` (same fields as ``EvalReport``)."""

    dataset: str
    settings: dict[str, Any]
    records: list[dict[str, Any]]
    aggregates: dict[str, Any]
    markdown: str
    paths: dict[str, str] = field(default_factory=dict)


def _default_pipeline(extractor: Any) -> Any:
    from sarg_integrations.pipeline import SARGPipeline

    return SARGPipeline(extractor=extractor)


def run_causal_evaluation(
    dataset: str,
    data: str | os.PathLike[str] | None = None,
    *,
    extractor: Any = None,
    pipeline: Any = None,
    limit: int | None = None,
    out_dir: str | os.PathLike[str] = "benchmarks/results/eval",
    progress: bool = True,
    fresh: bool = False,
    report_only: bool = False,
) -> CausalReport:
    """Evaluate SARG on ``"ester"`` or ``"esc"``; writes records, JSON and Markdown.

    Args:
        dataset: ``"ester"`` or ``"esc"``.
        data: The ESTER JSON file / the ESC folder (a topic tree, one topic or one
            file); default :func:`~sarg_integrations.evaluation.causal_qa.default_causal_data_path`.
        extractor: ``"tagger"`` (the default), ``"rules"``, ``"union"``, a folder
            with a trained tagger, or any object with ``extract(document)`` (and
            optionally ``extract_many(documents)``) returning triples.
        pipeline: A ready :class:`~sarg_integrations.SARGPipeline` (e.g. with fake
            models for tests); its extractor is used and ``extractor`` only names it in
            the settings. Default: ``SARGPipeline(extractor=...)`` (offline models).
        limit: ESTER: the first ``limit`` causal questions; ESC: the first ``limit``
            documents.
        out_dir: Output folder (created).
        progress: Show a progress bar.
        fresh: Discard records of an earlier run instead of resuming.
        report_only: Compute nothing; tabulate the records already on disk.

    Raises:
        InputError: Bad dataset, data path, ``limit``, extractor, or records of other
            settings in ``out_dir``.
    """
    from sarg_integrations.evaluation.methods import CachingExtractor

    if dataset not in CAUSAL_DATASETS:
        msg = f"unknown causal dataset {dataset!r}; valid: {', '.join(CAUSAL_DATASETS)}"
        raise InputError(msg, argument="dataset", value=dataset)
    items: list[Any] = (load_ester if dataset == "ester" else load_esc)(data, limit=limit)
    settings = {
        "version": RECORD_VERSION,
        "dataset": dataset,
        "data": str(data) if data is not None else None,
        "limit": limit,
        "extractor": _extractor_name(
            extractor
            if extractor is not None or pipeline is None
            else getattr(pipeline.extractor, "inner", pipeline.extractor)
        ),
    }
    out = make_out_dir(out_dir)
    records_path = out / f"{dataset}.records.jsonl"
    if fresh and records_path.exists():
        records_path.unlink()
    done = read_records(records_path, settings)
    todo = [] if report_only else [item for item in items if item.id not in done]
    if todo:
        if pipeline is None:
            pipeline = _default_pipeline(resolve_extractor(extractor))
        if not isinstance(pipeline.extractor, CachingExtractor):
            pipeline.extractor = CachingExtractor(pipeline.extractor)

        def compute(item: Any) -> dict[str, Any]:
            pipeline.extractor.clear()
            if dataset == "ester":
                return evaluate_ester_passage(pipeline, item)
            return evaluate_esc_document(
                pipeline.extractor.inner,
                item,
                embedder=pipeline.embedder,
                merge_threshold=pipeline.config.merge_threshold,
            )

        record_each(
            todo,
            compute,
            records_path,
            settings,
            done,
            total=len(items),
            progress=progress,
            desc=f"eval {dataset}",
            unit="passage" if dataset == "ester" else "doc",
        )
    records = [done[item.id] for item in items if item.id in done]
    if dataset == "ester":
        aggregates = aggregate_ester(records)
        markdown = markdown_ester(aggregates, settings)
    else:
        aggregates = aggregate_esc(records)
        markdown = markdown_esc(aggregates, settings)
    paths = {"records": str(records_path)}
    paths.update(write_summary(out, dataset, settings, aggregates, records, markdown))
    return CausalReport(dataset, settings, records, aggregates, markdown, paths)
