"""Typed records of the TaSR strategy: sub-queries, typed triples, matches, binding rows.

All records are frozen dataclasses and serialise with
:func:`~sarg_integrations.schema.to_jsonable` (the ``trace`` of a TaSR
:class:`~sarg_integrations.SARGResult` is a :class:`TaSRTrace`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from sarg_integrations.schema import Triple
from sarg_integrations.tasr.taxonomy import EntityType

__all__ = [
    "HopRecord",
    "QueryDecomposition",
    "SubQuery",
    "TaSRTrace",
    "TripleMatch",
    "TypedTriple",
    "is_variable",
]

_VARIABLE = re.compile(r"^\?[A-Za-z_][A-Za-z0-9_]*$")


def is_variable(term: str) -> bool:
    """Whether ``term`` is a latent variable (``?x``, ``?film``).

    Example:
        >>> is_variable("?x"), is_variable("MySQL"), is_variable("?")
        (True, False, False)
    """
    return bool(_VARIABLE.match(term.strip()))


@dataclass(frozen=True)
class SubQuery:
    """One triple sub-query ``(subject, relation, object)``; terms may be variables.

    Attributes:
        subject: An entity, or a variable such as ``?x``.
        relation: The relation phrase (``"uses"``, ``"developed by"``).
        object: An entity, or a variable.
        subject_type: The subject's taxonomy type when the decomposer gave one.
        object_type: The object's taxonomy type when the decomposer gave one.

    Example:
        >>> SubQuery("Science Activity Planner", "uses", "?x").variables
        ('?x',)
    """

    subject: str
    relation: str
    object: str
    subject_type: EntityType | None = None
    object_type: EntityType | None = None

    @property
    def variables(self) -> tuple[str, ...]:
        """The variables of the sub-query, subject first."""
        return tuple(t for t in (self.subject, self.object) if is_variable(t))

    def to_text(self) -> str:
        """``(subject, relation, object)``."""
        return f"({self.subject}, {self.relation}, {self.object})"


@dataclass(frozen=True)
class QueryDecomposition:
    """An ordered sequence of triple sub-queries with latent variables.

    Attributes:
        query: The question.
        steps: The sub-queries, in resolution order.
        hints: Variable → a short description of what it stands for (``"database"``);
            used to phrase the sub-query for semantic matching.
        kind: ``"bridge"`` (steps share variables), ``"comparison"`` (independent
            steps) or ``"single"``.
        method: Which decomposer produced it (``"llm"``, ``"rules:bridge-relative"``…).
    """

    query: str
    steps: tuple[SubQuery, ...]
    hints: Mapping[str, str] = field(default_factory=dict)
    kind: str = "bridge"
    method: str = ""

    @property
    def variables(self) -> tuple[str, ...]:
        """Every variable, in order of first appearance."""
        return tuple(dict.fromkeys(v for s in self.steps for v in s.variables))

    def problems(self) -> list[str]:
        """What makes the sequence unresolvable (empty when it is usable).

        A step must name at least one entity, or use a variable an earlier step
        introduced; otherwise nothing anchors it.

        Example:
            >>> QueryDecomposition("q", (SubQuery("?x", "r", "?y"),)).problems()
            ['step 1 (?x, r, ?y) names no entity and no variable of an earlier step']
        """
        if not self.steps:
            return ["the decomposition has no steps"]
        out = []
        seen: set[str] = set()
        for number, step in enumerate(self.steps, start=1):
            terms = (step.subject, step.object)
            anchored = any(not is_variable(t) or t in seen for t in terms)
            if not anchored:
                out.append(
                    f"step {number} {step.to_text()} names no entity and no variable "
                    "of an earlier step"
                )
            if not step.relation.strip():
                out.append(f"step {number} {step.to_text()} has an empty relation")
            seen.update(step.variables)
        return out


@dataclass(frozen=True)
class TypedTriple:
    """A triple with a taxonomy type on each end (the paper's typed triple R̃).

    Attributes:
        head: The subject phrase.
        relation: The relation phrase.
        tail: The object phrase.
        head_type: The subject's type.
        tail_type: The object's type.
        source: The document triple it was made from (``None`` for sub-queries).
    """

    head: str
    relation: str
    tail: str
    head_type: EntityType
    tail_type: EntityType
    source: Triple | None = None

    def to_text(self, depth: int = 2) -> str:
        """``(L1/L2, relation, L1/L2)``, the typed view."""
        return f"({self.head_type.label(depth)}, {self.relation}, {self.tail_type.label(depth)})"


@dataclass(frozen=True)
class TripleMatch:
    """How well one document triple answers one sub-query.

    Attributes:
        triple: The document triple.
        score: ``alpha * semantic + (1 - alpha) * structural`` (times the inverse
            penalty when matched head-to-tail).
        semantic: Cosine of the raw sub-query and triple texts.
        structural: Typed-triple consistency: mean of the two type agreements and the
            relation similarity.
        forward: ``True`` when the sub-query subject matched the triple head.
        bindings: Variable → the triple phrase it would be bound to.
    """

    triple: Triple
    score: float
    semantic: float
    structural: float
    forward: bool
    bindings: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HopRecord:
    """One row of the step-wise selection: what a sub-query selected and bound.

    Attributes:
        step: 1-based step number.
        subquery: The sub-query as decomposed.
        resolved: The sub-query with earlier bindings substituted.
        typed: The typed sub-query ``(type, relation, type)`` at the configured depth.
        status: ``"bound"`` (evidence found), ``"unresolved"`` (no document scored
            ≥ θ) or ``"skipped"`` (it needs a variable an earlier step left unbound).
        documents: ``(document id, S(d))`` of the selected documents, best first.
        best: The best-scoring triple match, when one passed θ.
        selected: The best match in each selected document, aligned with ``documents``.
        bindings: Variable → value bound at this step.
        reason: Why the step is unresolved or skipped, else ``None``.
    """

    step: int
    subquery: SubQuery
    resolved: SubQuery
    typed: str
    status: str
    documents: tuple[tuple[str, float], ...] = ()
    best: TripleMatch | None = None
    bindings: Mapping[str, str] = field(default_factory=dict)
    reason: str | None = None
    selected: tuple[TripleMatch, ...] = ()


@dataclass(frozen=True)
class TaSRTrace:
    """Everything the TaSR strategy decided, kept on ``SARGResult.trace``.

    Attributes:
        decomposition: The sub-queries.
        hops: One :class:`HopRecord` per step, in order.
        bindings: The final binding table, variable → value.
        entity_types: Phrase → its type label (documents and query).
        alpha: The semantic weight of the hybrid score.
        threshold: θ.
        taxonomy_depth: How many taxonomy levels structural matching compared.
    """

    decomposition: QueryDecomposition
    hops: tuple[HopRecord, ...]
    bindings: Mapping[str, str]
    entity_types: Mapping[str, str]
    alpha: float
    threshold: float
    taxonomy_depth: int
