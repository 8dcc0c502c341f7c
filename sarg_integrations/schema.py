"""Typed records shared by every SARG stage.

All records are frozen dataclasses and serialise to plain JSON types through
:func:`to_jsonable`. Field names are the ones the CLI writes with ``--json``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os
    from pathlib import Path

    import networkx as nx

__all__ = [
    "ChainHop",
    "Direction",
    "DirectionPrediction",
    "EntryNode",
    "EvidencePassage",
    "MergeRecord",
    "ReasoningChain",
    "ReasoningGraph",
    "RelationType",
    "SARGResult",
    "SkippedDocument",
    "SourceDocument",
    "Triple",
    "MAX_JSON_DEPTH",
    "to_jsonable",
]


class RelationType(str, enum.Enum):
    """The kinds of dependency the reasoning schema keeps (plus ``GENERIC`` for SPO)."""

    CAUSAL = "causal"
    """X causes, leads to, results in Y."""
    PROCEDURAL = "procedural"
    """X requires, is needed for, is a step before Y."""
    CONDITIONAL = "conditional"
    """If X then Y; Y happens when X holds."""
    TEMPORAL = "temporal"
    """X precedes, is followed by Y."""
    ENABLING = "enabling"
    """X enables, allows, triggers Y."""
    PREVENTING = "preventing"
    """X prevents, inhibits, blocks Y."""
    SPATIAL = "spatial"
    """X is located in / contained in Y, when that carries reasoning."""
    GENERIC = "generic"
    """Any subject-predicate-object relation (the generic SPO ablation schema)."""

    def __str__(self) -> str:
        return self.value


class Direction(str, enum.Enum):
    """The traversal direction a query asks for (paper §3.4)."""

    FORWARD = "forward"
    """Cause → effect: "what does X lead to?"; follow successors."""
    BACKWARD = "backward"
    """Effect → cause: "why did Y happen?"; follow predecessors."""
    BIDIRECTIONAL = "bidirectional"
    """"How are X and Y connected?"; follow both."""

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: str | Direction) -> Direction:
        """Return the direction named by ``value`` (case-insensitive).

        Raises:
            ValueError: If ``value`` names no direction.
        """
        if isinstance(value, Direction):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            valid = ", ".join(d.value for d in cls)
            msg = f"direction={value!r} is not a direction; use one of: {valid}"
            raise ValueError(msg) from None


@dataclass(frozen=True)
class SourceDocument:
    """One retrieved document: the unit SARG extracts triples from.

    Attributes:
        id: A unique id within one pipeline run; chains cite it.
        text: The document text.
        metadata: Anything the caller attached; carried through untouched.
    """

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Triple:
    """A reasoning-schema triple ``<cause, relation, effect>`` with its provenance.

    Attributes:
        cause: The cause / antecedent / prerequisite phrase (the edge's tail).
        relation: The relation phrase as it reads in the text (``"leads to"``).
        effect: The effect / consequent phrase (the edge's head).
        relation_type: Which kind of dependency this is.
        document_id: The id of the source document.
        sentence: The sentence the triple was read from, verbatim.
        sentence_span: ``(start, end)`` character offsets of ``sentence`` in the
            document text, or ``None`` when the extractor could not locate it.
        cause_text: The whole cause span as it reads in ``sentence`` when the extractor
            tagged one (the learned tagger does; ``cause`` is then its short head phrase,
            the graph node's name), else ``""``.
        effect_text: The same for the effect.
    """

    cause: str
    relation: str
    effect: str
    relation_type: RelationType = RelationType.CAUSAL
    document_id: str = ""
    sentence: str = ""
    sentence_span: tuple[int, int] | None = None
    cause_text: str = ""
    effect_text: str = ""


@dataclass(frozen=True)
class MergeRecord:
    """One entity-resolution decision: ``alias`` was merged into ``canonical``.

    Attributes:
        canonical: The node id that absorbed the alias.
        alias: The surface form that was merged.
        method: ``"normalized"`` (same normal form), ``"embedding"`` (cosine above
            the merge threshold) or ``"head"`` (a one-word name joining the one longer
            name with that head word: "blast" / "Saturday's gas blast in the mine").
        similarity: The cosine similarity for embedding merges, 1.0 for the others.
    """

    canonical: str
    alias: str
    method: str
    similarity: float = 1.0


@dataclass
class ReasoningGraph:
    """The local reasoning graph of one run (paper Eq. 2).

    ``graph`` is a :class:`networkx.DiGraph` whose nodes are canonical phrases with the
    attributes ``aliases`` (sorted surface forms) and ``documents`` (sorted ids), and
    whose edges carry ``triples``: every :class:`Triple` supporting that edge, in input
    order, so each edge keeps its source document and sentence.

    Attributes:
        graph: The directed graph.
        merges: The entity-resolution decisions that produced the nodes.
        self_loops_dropped: Triples whose cause and effect resolved to the same node.
    """

    graph: nx.DiGraph
    merges: list[MergeRecord] = field(default_factory=list)
    self_loops_dropped: int = 0

    @property
    def number_of_nodes(self) -> int:
        """The number of nodes."""
        return int(self.graph.number_of_nodes())

    @property
    def number_of_edges(self) -> int:
        """The number of edges."""
        return int(self.graph.number_of_edges())

    def to_dict(self) -> dict[str, Any]:
        """Return the nodes and edges as JSON-ready dicts (node-link style)."""
        nodes = [
            {
                "id": node,
                "aliases": list(data.get("aliases", ())),
                "documents": list(data.get("documents", ())),
            }
            for node, data in self.graph.nodes(data=True)
        ]
        edges = [
            {
                "source": u,
                "target": v,
                "relations": sorted({t.relation for t in data.get("triples", ())}),
                "documents": sorted({t.document_id for t in data.get("triples", ())}),
            }
            for u, v, data in self.graph.edges(data=True)
        ]
        return {
            "nodes": nodes,
            "edges": edges,
            "merges": [to_jsonable(m) for m in self.merges],
            "self_loops_dropped": self.self_loops_dropped,
        }


@dataclass(frozen=True)
class EntryNode:
    """A graph node matched to the query (paper Eq. 3).

    Attributes:
        node: The node id.
        similarity: The highest cosine similarity between the node and any key phrase,
            or, when ``span`` is set, between that span and the whole query.
        keyphrase: The key phrase closest to the node's name.
        span: The clause the node was read from (a triple's whole cause or effect span)
            when it matched the query better than the short name did, above τ (see
            ``SARGConfig.match_spans``); else empty.
    """

    node: str
    similarity: float
    keyphrase: str
    span: str = ""


@dataclass(frozen=True)
class DirectionPrediction:
    """The predicted traversal direction with the classifier's evidence.

    Attributes:
        direction: The predicted direction.
        confidence: The probability (or rule confidence) of ``direction`` in [0, 1].
        scores: Per-direction scores, keyed by direction value.
        method: Which classifier produced it (``"cue-words"``, ``"setfit"``, ``"fixed"``…).
        rationale: A short human-readable reason, e.g. the cue words matched.
    """

    direction: Direction
    confidence: float = 1.0
    scores: Mapping[str, float] = field(default_factory=dict)
    method: str = ""
    rationale: str = ""

    @property
    def asked(self) -> Direction:
        """What the question asks for: ``direction``, unless that is bidirectional only
        because the classifier was unsure, with a causal direction scored above both others.

        ``direction`` is what the traversal walks, and an unsure classifier walks both ways
        so as not to miss the chain ("Why was the Pella valley road closed?": backward 0.55,
        bidirectional 0.44, under the 0.15 margin). The question still asks for causes, and
        the evidence policy, which treats a bidirectional question as one about something
        rather than for its causes, reads this instead.

        Example:
            >>> scores = {"forward": 0.01, "backward": 0.55, "bidirectional": 0.44}
            >>> DirectionPrediction(Direction.BIDIRECTIONAL, 0.44, scores).asked.value
            'backward'
            >>> DirectionPrediction(Direction.BIDIRECTIONAL).asked.value
            'bidirectional'
        """
        if self.direction is not Direction.BIDIRECTIONAL or not self.scores:
            return self.direction
        ranked = sorted(self.scores.items(), key=lambda item: (-item[1], item[0]))
        best, top = ranked[0]
        runner_up = ranked[1][1] if len(ranked) > 1 else float("-inf")
        causal = (Direction.FORWARD.value, Direction.BACKWARD.value)
        return Direction(best) if best in causal and top > runner_up else self.direction


@dataclass(frozen=True)
class ChainHop:
    """One step of a reasoning chain.

    Attributes:
        source: The node the step leaves from (in walking order).
        target: The node the step arrives at.
        relation: The relation phrase of the graph edge.
        relation_type: The relation's type.
        forward: ``True`` when the step walks the graph edge ``source → target``
            (cause to effect), ``False`` when it walks ``target → source`` backwards.
        document_ids: Every document that supports the edge, in first-seen order.
        sentences: The supporting sentences, aligned with ``document_ids``.
    """

    source: str
    target: str
    relation: str
    relation_type: RelationType
    forward: bool
    document_ids: tuple[str, ...]
    sentences: tuple[str, ...]

    @property
    def edge(self) -> tuple[str, str]:
        """The graph edge ``(cause, effect)`` this hop walks."""
        return (self.source, self.target) if self.forward else (self.target, self.source)


@dataclass(frozen=True)
class ReasoningChain:
    """A scored path through the reasoning graph (paper §3.5).

    Attributes:
        nodes: The nodes in walking order; ``nodes[0]`` is the entry node.
        hops: ``len(nodes) - 1`` steps between consecutive nodes.
        score: The running average of query–node cosine over ``nodes[1:]`` (Eq. 5).
        direction: The direction the chain was walked in.
    """

    nodes: tuple[str, ...]
    hops: tuple[ChainHop, ...]
    score: float
    direction: Direction

    @property
    def entry_node(self) -> str:
        """The node the chain starts from."""
        return self.nodes[0]

    @property
    def document_ids(self) -> tuple[str, ...]:
        """Every document cited by the chain, in first-cited order."""
        return tuple(dict.fromkeys(d for hop in self.hops for d in hop.document_ids))

    def to_text(self) -> str:
        """Render the chain on one line, with an arrow per hop.

        Example:
            >>> hop = ChainHop("rain", "flood", "causes", RelationType.CAUSAL, True, ("d1",), ("",))
            >>> ReasoningChain(("rain", "flood"), (hop,), 0.5, Direction.FORWARD).to_text()
            'rain --[causes]--> flood'
        """
        parts = [self.nodes[0]]
        for hop in self.hops:
            arrow = f"--[{hop.relation}]-->" if hop.forward else f"<--[{hop.relation}]--"
            parts.append(f"{arrow} {hop.target}")
        return " ".join(parts)


@dataclass(frozen=True)
class EvidencePassage:
    """A source passage behind the kept chains (``D_P`` in paper Eq. 6).

    Attributes:
        document_id: The source document's id.
        text: The passage text (the whole document, or its cited sentences).
        chain_ids: 1-based numbers of the kept chains that cite it.
        metadata: The source document's metadata, untouched.
        selected_by: Why it is in the prompt: ``"chain"`` (behind a kept chain),
            ``"bridge"`` (linked by an entity mention to a document picked before it),
            ``"linked"`` (one of its triples names a node of the chain documents'
            triples, a link the graph did not merge), ``"entry"`` (states the entry
            node best matching the query, which no kept chain brought in),
            ``"relevance"`` (most similar to
            the query among those left) or
            ``"context"`` (the flat context). Default: ``"chain"`` when ``chain_ids``
            is non-empty, else ``"context"``.
    """

    document_id: str
    text: str
    chain_ids: tuple[int, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    selected_by: str | None = None

    def __post_init__(self) -> None:
        if self.selected_by is None:
            object.__setattr__(self, "selected_by", "chain" if self.chain_ids else "context")


@dataclass(frozen=True)
class SkippedDocument:
    """A document that contributed no triples, and why.

    Attributes:
        document_id: The document's id.
        reason: A human-readable reason (empty text, extractor error…).
    """

    document_id: str
    reason: str


@dataclass
class SARGResult:
    """Everything one SARG run produced, for inspection and serialisation.

    Attributes:
        query: The query as given.
        document_ids: The ids of the documents passed in, in order.
        triples: Every triple kept by the extractor(s).
        graph: The local reasoning graph (excluded from JSON; see ``graph_summary``).
        keyphrases: The query's key phrases used for matching; ``None`` when the
            strategy uses none (``"tasr"`` matches sub-queries instead).
        entry_nodes: The matched entry nodes, best first (for ``"tasr"``: the nodes its
            chains start from, anchored on the query's entities).
        direction: The predicted traversal direction; ``None`` when the strategy
            predicts none (``"tasr"`` resolves its sub-queries in order).
        candidate_chains: Every complete chain the beam search produced, best first
            (for ``"tasr"``: its chains); ``None`` when a strategy has no candidates.
        chains: The kept chains, best first (at most ``top_k``).
        evidence: The passages behind the kept chains, in first-cited order; on
            fallback, every non-empty document.
        prompt: The compiled generation prompt.
        fallback_reason: Why SARG fell back to flat context, or ``None``.
        skipped_documents: Documents that yielded no triples, with the reason.
        stats: Counters and per-stage timings (milliseconds, keys ``time_*_ms``).
        config: The configuration the run used, as a dict.
        strategy: ``"sarg"`` (graph + beam search) or ``"tasr"`` (taxonomy-guided
            step-wise selection; see :mod:`sarg_integrations.tasr`).
        trace: The strategy's own record: for ``"tasr"`` a
            :class:`~sarg_integrations.tasr.records.TaSRTrace` (sub-queries, binding
            table, per-hop selection); ``None`` for ``"sarg"``.
        notes: What a reader should know about chains that were kept (not a fallback),
            e.g. that none links the two ends of a "how is X connected to Y" question
            because the graph fell apart (see
            :func:`~sarg_integrations.traversal.disconnected_ends_note`).
    """

    query: str
    document_ids: list[str]
    triples: list[Triple]
    graph: ReasoningGraph
    keyphrases: list[str] | None
    entry_nodes: list[EntryNode]
    direction: DirectionPrediction | None
    candidate_chains: list[ReasoningChain] | None
    chains: list[ReasoningChain]
    evidence: list[EvidencePassage]
    prompt: str
    fallback_reason: str | None = None
    skipped_documents: list[SkippedDocument] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    strategy: str = "sarg"
    trace: Any = None
    notes: list[str] = field(default_factory=list)

    @property
    def used_fallback(self) -> bool:
        """Whether the prompt holds the flat retrieved context instead of chains."""
        return self.fallback_reason is not None

    @property
    def graph_size(self) -> dict[str, int]:
        """``{"nodes": n, "edges": m}`` of the reasoning graph."""
        return {"nodes": self.graph.number_of_nodes, "edges": self.graph.number_of_edges}

    def to_dict(self) -> dict[str, Any]:
        """Return the result as JSON-ready Python objects."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "graph":
                out["graph_size"] = self.graph_size
                out["graph"] = value.to_dict()
            else:
                out[f.name] = to_jsonable(value)
        return out

    def to_json(self, *, indent: int | None = 2) -> str:
        """Return the result as a JSON string (UTF-8 safe, no NaN)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)

    # Pictures and graph exports: thin wrappers over sarg_integrations.viz,
    # imported lazily so that importing the package stays fast.

    def to_networkx(self) -> nx.DiGraph:
        """Return the graph as a new ``networkx.DiGraph`` with entry/chain attributes."""
        from sarg_integrations import viz

        return viz.to_networkx(self)

    def to_node_link(self) -> dict[str, Any]:
        """Return the graph as JSON-ready node-link data (``"nodes"`` / ``"edges"``)."""
        from sarg_integrations import viz

        return viz.to_node_link(self)

    def to_graphml(self, path: str | os.PathLike[str] | None = None) -> str:
        """Return the graph as GraphML text, also written to ``path`` when given."""
        from sarg_integrations import viz

        return viz.to_graphml(self, path)

    def to_mermaid(self) -> str:
        """Return the graph as a Mermaid flowchart, kept chains coloured."""
        from sarg_integrations import viz

        return viz.to_mermaid(self)

    def to_html(self, path: str | os.PathLike[str] | None = None, *, scope: str = "all") -> str:
        """Return a self-contained interactive HTML page of the run (written to ``path``).

        ``scope="chains"`` draws only the connected parts of the graph holding a chain.
        """
        from sarg_integrations import viz

        return viz.to_html(self, path, scope=scope)

    def to_image(
        self,
        path: str | os.PathLike[str],
        format: str | None = None,
        *,
        scope: str = "all",
    ) -> Path:
        """Save a static PNG or SVG picture of the graph (needs the ``viz`` extra)."""
        from sarg_integrations import viz

        return viz.to_image(self, path, format, scope=scope)

    def _repr_html_(self) -> str:
        from sarg_integrations import viz

        return viz.repr_html(self)

    def _repr_markdown_(self) -> str:
        from sarg_integrations import viz

        return viz.repr_markdown(self)


MAX_JSON_DEPTH = 64
"""Containers nested deeper than this serialise as a placeholder (metadata is untrusted)."""


def to_jsonable(value: Any) -> Any:
    """Convert records, enums, tuples and mappings into plain JSON types.

    Values JSON cannot represent (sets, arbitrary objects, NaN) become lists, their
    ``repr`` and ``None`` respectively, so serialising a result never fails: a container
    nested deeper than :data:`MAX_JSON_DEPTH` or containing itself becomes a placeholder
    string, an object whose ``repr`` raises becomes ``"<unrepresentable T>"``, and text
    with lone surrogates (not encodable as UTF-8) is backslash-escaped.

    Example:
        >>> to_jsonable({"d": Direction.FORWARD, "span": (0, 4), "x": float("nan")})
        {'d': 'forward', 'span': [0, 4], 'x': None}
        >>> loop = {"a": 1}; loop["self"] = loop
        >>> to_jsonable(loop)
        {'a': 1, 'self': '<cycle>'}
    """
    return _jsonable(value, 0, set())


def _jsonable(value: Any, depth: int, active: set[int]) -> Any:
    # ``active``: ids of the containers on the path from the root, to spot cycles.
    if isinstance(value, enum.Enum):  # before str: str enums are strings too
        return _jsonable(value.value, depth, active)
    if isinstance(value, str):
        return _utf8_safe(value)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        # Python refuses to print ints of more than ~4300 digits (ValueError).
        return value if value.bit_length() <= 14_000 else f"<int of {value.bit_length()} bits>"
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, ReasoningGraph):
        return value.to_dict()
    is_record = dataclasses.is_dataclass(value) and not isinstance(value, type)
    if not (is_record or isinstance(value, (Mapping, list, tuple, set, frozenset))):
        if hasattr(value, "item") and callable(value.item):  # numpy scalars
            with contextlib.suppress(Exception):  # a foreign item() may raise anything
                return _jsonable(value.item(), depth, active)
        return _safe_repr(value)
    if id(value) in active:
        return "<cycle>"
    if depth >= MAX_JSON_DEPTH:
        return f"<nested deeper than {MAX_JSON_DEPTH} levels>"
    active.add(id(value))
    try:
        return _container(value, depth + 1, active)
    finally:
        active.discard(id(value))


def _container(value: Any, depth: int, active: set[int]) -> Any:
    if isinstance(value, Mapping):
        return {_safe_key(k): _jsonable(v, depth, active) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth, active) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_jsonable(v, depth, active) for v in value), key=repr)
    return {
        f.name: _jsonable(getattr(value, f.name), depth, active)
        for f in dataclasses.fields(value)
    }


def _utf8_safe(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: a UTF-8 writer would fail on them
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _safe_repr(value: Any) -> str:
    try:
        return _utf8_safe(repr(value))
    except Exception:  # a foreign __repr__ may raise anything
        return f"<unrepresentable {type(value).__name__}>"


def _safe_key(key: Any) -> str:
    if isinstance(key, str):
        return _utf8_safe(key)
    try:
        return _utf8_safe(str(key))
    except Exception:  # a foreign __str__ may raise anything
        return _safe_repr(key)
