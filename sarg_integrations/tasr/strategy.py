"""The TaSR strategy: decompose → type → hybrid-match step by step.

:class:`TaSRStrategy` runs after the pipeline's extraction stage
(``SARGConfig(strategy="tasr")``), and the pipeline compiles its chains into the same
:class:`~sarg_integrations.schema.SARGResult` as SARG's: ``chains`` are the resolved
binding path (one :class:`~sarg_integrations.schema.ReasoningChain` per connected run
of hops, each hop citing its selected documents and sentences), ``evidence`` the
selected documents, ``prompt`` the same structured prompt, and ``trace`` a
:class:`~sarg_integrations.tasr.records.TaSRTrace` with the sub-queries, the typed
sub-queries, the per-hop selection and the binding table. When the decomposition fails,
no triple was extracted, or a hop finds no evidence, the prompt holds the flat context
and ``fallback_reason`` says why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sarg_integrations.config import SARGConfig
from sarg_integrations.graph import build_reasoning_graph
from sarg_integrations.schema import (
    ChainHop,
    Direction,
    EntryNode,
    ReasoningChain,
    RelationType,
    SourceDocument,
    Triple,
)
from sarg_integrations.strategies.base import RunContext, Structure
from sarg_integrations.tasr.binding import select_evidence
from sarg_integrations.tasr.decomposition import QueryDecomposer, variable_types
from sarg_integrations.tasr.entity_types import EntityTyper, Mention
from sarg_integrations.tasr.records import HopRecord, QueryDecomposition, TaSRTrace, is_variable
from sarg_integrations.tasr.taxonomy import EntityType

__all__ = ["TaSRStrategy", "build_tasr_strategy"]

_COPULAS = frozenset({"is", "was", "are", "were", "is a", "was a", "became", "becomes"})
_HINT_TYPES = {
    "person": EntityType("PERSON", None, None, 0.9),
    "place": EntityType("LOCATION", None, None, 0.9),
    "date": EntityType("OTHER", None, None, 0.9),
}


class TaSRStrategy:
    """Taxonomy-guided step-wise evidence selection over the extracted triples.

    A :class:`~sarg_integrations.strategies.Strategy`. Its
    :class:`~sarg_integrations.strategies.Structure` has no ``keyphrases`` and no
    ``direction`` (``None``: TaSR matches sub-queries, not key phrases, and resolves
    them in order instead of predicting a direction); ``entry_nodes`` are where the
    chains start, anchored on the query's entities.

    Args:
        config: The pipeline config (``tasr_alpha``, ``tasr_threshold``,
            ``tasr_taxonomy_depth``).
        embedder: The pipeline's (cached) embedder.
        decomposer: A :class:`~sarg_integrations.tasr.decomposition.QueryDecomposer`.
        typer: An :class:`~sarg_integrations.tasr.entity_types.EntityTyper`.
        docs_per_hop: At most this many documents selected per hop.
    """

    name = "tasr"

    def __init__(
        self,
        config: SARGConfig,
        *,
        embedder: Any,
        decomposer: QueryDecomposer,
        typer: EntityTyper,
        docs_per_hop: int = 2,
    ) -> None:
        self.config = config
        self.embedder = embedder
        self.decomposer = decomposer
        self.typer = typer
        self.docs_per_hop = docs_per_hop

    def structure(
        self,
        query: str,
        documents: Sequence[SourceDocument],
        triples: list[Triple],
        ctx: RunContext,
    ) -> Structure:
        """Select evidence for ``query`` from ``triples``, hop by hop."""
        cfg = self.config
        depth = cfg.tasr_taxonomy_depth
        fallback: str | None = None
        decomposition: QueryDecomposition | None = None
        with ctx.stage("decompose") as summary:
            try:
                decomposition = self.decomposer.decompose(query)
                problems = decomposition.problems()
                if problems:
                    fallback = "query decomposition unusable: " + "; ".join(problems)
            except Exception as exc:  # any model / parse failure becomes a recorded fallback
                fallback = f"query decomposition failed: {type(exc).__name__}: {exc}"
            if decomposition is not None:
                summary.update(
                    subqueries=[s.to_text() for s in decomposition.steps],
                    method=decomposition.method,
                )
        with ctx.stage("build") as summary:
            graph = build_reasoning_graph(triples)
            summary.update(nodes=graph.number_of_nodes, edges=graph.number_of_edges)
        rows: list[HopRecord] = []
        bindings: dict[str, str] = {}
        type_labels: dict[str, str] = {}
        if fallback is None and not triples:
            fallback = "no triples were extracted from the documents"
        if fallback is None and decomposition is not None:
            with ctx.stage("type") as summary:
                triple_types, slot_type, type_labels = self._types(query, decomposition, triples)
                summary.update(typed_mentions=len(type_labels))
            with ctx.stage("match") as summary:
                rows, table = select_evidence(
                    decomposition,
                    triples,
                    triple_types,
                    slot_type,
                    self.embedder,
                    alpha=cfg.tasr_alpha,
                    threshold=cfg.tasr_threshold,
                    depth=depth,
                    docs_per_hop=self.docs_per_hop,
                    document_order={d.id: i for i, d in enumerate(documents)},
                )
                bindings = table.as_dict()
                summary.update(
                    hops=[(r.step, r.status, [d for d, _ in r.documents]) for r in rows],
                    bindings=dict(bindings),
                )
            failed = [r for r in rows if r.status != "bound"]
            if failed:
                fallback = f"hop {failed[0].step} {failed[0].status}: {failed[0].reason}"
        chains = _chains(rows, graph)
        if fallback is None and not chains:
            fallback = "no hop selected any evidence"
        trace = TaSRTrace(
            decomposition or QueryDecomposition(query, (), {}, "single", "failed"),
            tuple(rows),
            bindings,
            type_labels,
            cfg.tasr_alpha,
            cfg.tasr_threshold,
            depth,
        )
        return Structure(
            graph=graph,
            chains=chains,
            fallback_reason=fallback,
            entry_nodes=_entries(rows, chains),
            candidate_chains=list(chains),
            counters={
                "subqueries": len(decomposition.steps) if decomposition else 0,
                "hops_bound": sum(r.status == "bound" for r in rows),
                "hops_unresolved": sum(r.status == "unresolved" for r in rows),
                "hops_skipped": sum(r.status == "skipped" for r in rows),
                "typed_mentions": len(type_labels),
                "chains_kept": len(chains),
            },
            trace=trace,
        )

    def _types(
        self, query: str, decomposition: QueryDecomposition, triples: Sequence[Triple]
    ) -> tuple[
        list[tuple[EntityType, EntityType]], Callable[[str], EntityType | None], dict[str, str]
    ]:
        """Type both ends of every triple, the query's entities and its variables."""
        descriptions: dict[tuple[str, str], str] = {}
        for t in triples:
            if t.relation.strip().lower() in _COPULAS:
                descriptions.setdefault((t.document_id, t.cause), t.effect)
        mentions = [
            Mention(phrase, t.sentence, descriptions.get((t.document_id, phrase)))
            for t in triples
            for phrase in (t.cause, t.effect)
        ]
        given = variable_types(decomposition)
        terms = list(dict.fromkeys(t for s in decomposition.steps for t in (s.subject, s.object)))
        query_mentions = []
        for term in terms:
            if not is_variable(term):
                query_mentions.append(Mention(term, query))
            elif term not in given:
                hint = decomposition.hints.get(term)
                if hint and hint.lower() in _HINT_TYPES:
                    given[term] = _HINT_TYPES[hint.lower()]
                elif hint:
                    query_mentions.append(Mention(hint, hint))
        kinds = self.typer.type_mentions([*mentions, *query_mentions])
        doc_kinds, query_kinds = kinds[: len(mentions)], kinds[len(mentions) :]
        triple_types = [(doc_kinds[2 * i], doc_kinds[2 * i + 1]) for i in range(len(triples))]
        by_term: dict[str, EntityType] = dict(given)
        for mention, kind in zip(query_mentions, query_kinds):
            if mention.context == query:
                by_term[mention.text] = kind
            else:  # a variable's hint
                for var, hint in decomposition.hints.items():
                    if hint == mention.text and var not in by_term:
                        by_term[var] = kind
        labels = {m.text: str(k) for m, k in zip(mentions, doc_kinds)}
        labels.update({term: str(kind) for term, kind in by_term.items()})
        return triple_types, by_term.get, labels


def _chains(rows: Sequence[HopRecord], graph: Any) -> list[ReasoningChain]:
    """The bound hops as chains: a hop extends the chain that ends where it starts."""
    canonical: dict[str, str] = {}
    for node, data in graph.graph.nodes(data=True):
        canonical[node] = node
        for alias in data.get("aliases", ()):
            canonical.setdefault(alias, node)
    paths: list[tuple[list[str], list[ChainHop], list[float]]] = []
    for row in rows:
        if row.status != "bound" or row.best is None:
            continue
        best = row.best
        t = best.triple
        subject_end, object_end = (t.cause, t.effect) if best.forward else (t.effect, t.cause)
        # walk from the known side (an entity or a bound variable) to the newly bound one
        if is_variable(row.resolved.subject) and not is_variable(row.resolved.object):
            source, target = object_end, subject_end
        else:
            source, target = subject_end, object_end
        source, target = canonical.get(source, source), canonical.get(target, target)
        hop = ChainHop(
            source,
            target,
            t.relation,
            RelationType.GENERIC if t.relation_type is None else t.relation_type,
            canonical.get(t.cause, t.cause) == source,
            tuple(m.triple.document_id for m in row.selected),
            tuple(m.triple.sentence for m in row.selected),
        )
        for nodes, hops, scores in paths:
            if nodes[-1] == source and target not in nodes:
                nodes.append(target)
                hops.append(hop)
                scores.append(best.score)
                break
        else:
            paths.append(([source, target], [hop], [best.score]))
    return [
        ReasoningChain(tuple(nodes), tuple(hops), sum(scores) / len(scores), Direction.FORWARD)
        for nodes, hops, scores in paths
    ]


def _entries(rows: Sequence[HopRecord], chains: Sequence[ReasoningChain]) -> list[EntryNode]:
    out: list[EntryNode] = []
    seen: set[str] = set()
    for chain in chains:
        node = chain.entry_node
        if node in seen:
            continue
        seen.add(node)
        row = next(
            (
                r
                for r in rows
                if r.best is not None and r.best.triple.sentence in chain.hops[0].sentences
            ),
            None,
        )
        anchor = ""
        if row is not None:
            anchor = next(
                (t for t in (row.resolved.subject, row.resolved.object) if not is_variable(t)), ""
            )
        out.append(EntryNode(node, round(chain.score, 6), anchor))
    return out


def _is_model(obj: Any) -> bool:
    from sarg_integrations.models.completion import CompletionModel, is_framework_model

    return (
        is_framework_model(obj)
        or isinstance(obj, CompletionModel)
        or (callable(obj) and not isinstance(obj, type))
    )


def build_tasr_strategy(
    config: SARGConfig,
    embedder: Any,
    *,
    query_decomposer: Any = None,
    entity_typer: Any = None,
    llm: Any = None,
) -> TaSRStrategy:
    """The :class:`TaSRStrategy` for ``config`` and ``embedder``, its collaborators resolved.

    A decomposer is anything with ``decompose``; a typer anything with
    ``type_mentions``; a language model (LangChain, LlamaIndex, callable) in either
    place is wrapped in the LLM version. Unset ones come from ``llm``, else offline.

    Raises:
        ConfigError: A collaborator of the wrong kind (the message names the argument).
    """
    from sarg_integrations.errors import ConfigError
    from sarg_integrations.tasr.decomposition import LLMQueryDecomposer, RuleQueryDecomposer
    from sarg_integrations.tasr.entity_types import LLMEntityTyper, OfflineEntityTyper

    for name, value, method in (
        ("query_decomposer", query_decomposer, "decompose"),
        ("entity_typer", entity_typer, "type_mentions"),
        ("llm", llm, None),
    ):
        usable = value is None or _is_model(value)
        if method is not None:
            usable = usable or callable(getattr(value, method, None))
        if not usable:
            msg = (
                f"{name}={value!r} is neither {'an object with ' + method + '() nor ' if method else ''}"  # noqa: E501
                "a language model; pass a LangChain / LlamaIndex model or a function str -> str"
            )
            raise ConfigError(msg, field=name, value=value)
    offline = OfflineEntityTyper(embedder)
    if query_decomposer is not None and callable(getattr(query_decomposer, "decompose", None)):
        decomposer = query_decomposer
    elif query_decomposer is not None or llm is not None:
        decomposer = LLMQueryDecomposer(query_decomposer if query_decomposer is not None else llm)
    else:
        decomposer = RuleQueryDecomposer()
    if entity_typer is not None and callable(getattr(entity_typer, "type_mentions", None)):
        typer = entity_typer
    elif entity_typer is not None or llm is not None:
        typer = LLMEntityTyper(entity_typer if entity_typer is not None else llm, fallback=offline)
    else:
        typer = offline
    return TaSRStrategy(config, embedder=embedder, decomposer=decomposer, typer=typer)
