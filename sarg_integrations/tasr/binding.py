"""The entity binding table and the step-wise evidence selection over it.

:func:`select_evidence` walks the sub-queries in order. For each step it substitutes
the bindings made so far (``(?x, developed by, ?y)`` becomes ``(MySQL, developed by,
?y)`` once ``?x = MySQL``), scores every document triple with hybrid matching, keeps the
documents whose score ``S(d)`` reaches θ (best first, at most ``docs_per_hop``) and binds
the step's free variables to the ends of the best triple.

When a step finds nothing its row says so (``status="unresolved"`` with the reason)
and later steps that need its variables are ``"skipped"``; independent steps (the two
halves of a comparison) still run. The strategy then falls back to the flat context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from sarg_integrations.embedding import Embedder
from sarg_integrations.schema import Triple
from sarg_integrations.tasr.matching import match_triples
from sarg_integrations.tasr.records import (
    HopRecord,
    QueryDecomposition,
    SubQuery,
    TripleMatch,
    is_variable,
)
from sarg_integrations.tasr.taxonomy import EntityType

__all__ = ["BindingTable", "select_evidence"]


class BindingTable:
    """Variable → entity bindings carried across steps (the paper's table B).

    Example:
        >>> table = BindingTable()
        >>> table.bind("?x", "MySQL", step=1)
        >>> table.substitute(SubQuery("?x", "developed by", "?y")).to_text()
        '(MySQL, developed by, ?y)'
        >>> table.as_dict(), table.step_of("?x")
        ({'?x': 'MySQL'}, 1)
    """

    def __init__(self) -> None:
        self._values: dict[str, tuple[str, int]] = {}

    def __contains__(self, variable: object) -> bool:
        return variable in self._values

    def bind(self, variable: str, value: str, *, step: int) -> None:
        """Bind ``variable`` to ``value`` (first binding wins)."""
        self._values.setdefault(variable, (value, step))

    def value(self, variable: str) -> str | None:
        """The bound value, or ``None``."""
        found = self._values.get(variable)
        return found[0] if found else None

    def step_of(self, variable: str) -> int | None:
        """The step that bound ``variable``, or ``None``."""
        found = self._values.get(variable)
        return found[1] if found else None

    def substitute(self, step: SubQuery) -> SubQuery:
        """``step`` with every bound variable replaced by its value."""
        return replace(
            step,
            subject=self.value(step.subject) or step.subject,
            object=self.value(step.object) or step.object,
        )

    def as_dict(self) -> dict[str, str]:
        """Variable → value, in binding order."""
        return {k: v for k, (v, _) in self._values.items()}


def select_evidence(
    decomposition: QueryDecomposition,
    triples: Sequence[Triple],
    triple_types: Sequence[tuple[EntityType, EntityType]],
    slot_type: Callable[[str], EntityType | None],
    embedder: Embedder,
    *,
    alpha: float = 0.5,
    threshold: float = 0.5,
    depth: int = 2,
    docs_per_hop: int = 2,
    document_order: Mapping[str, int] | None = None,
) -> tuple[list[HopRecord], BindingTable]:
    """Resolve the sub-queries step by step; return one row per step and the bindings.

    Args:
        decomposition: The ordered sub-queries.
        triples: Every document triple.
        triple_types: ``(head type, tail type)`` per triple.
        slot_type: Type of a sub-query term as written (entity or variable).
        embedder: Sentence embedder.
        alpha: Semantic weight of the hybrid score.
        threshold: θ: a document is selected when ``S(d) >= threshold``.
        depth: Taxonomy levels compared.
        docs_per_hop: At most this many documents selected per step.
        document_order: Document id → position, for deterministic ties.
    """
    order = dict(document_order or {})
    table = BindingTable()
    failed: set[str] = set()
    introduced: set[str] = set()
    rows: list[HopRecord] = []
    for number, step in enumerate(decomposition.steps, start=1):
        resolved = table.substitute(step)
        types = (
            step.subject_type or slot_type(step.subject),
            step.object_type or slot_type(step.object),
        )
        typed = f"({_label(types[0], depth)}, {step.relation}, {_label(types[1], depth)})"
        blocked = [v for v in step.variables if v in failed]
        if blocked:
            reason = f"needs {', '.join(blocked)}, which an earlier step left unbound"
            rows.append(HopRecord(number, step, resolved, typed, "skipped", reason=reason))
            failed.update(v for v in step.variables if v not in table)
            introduced.update(step.variables)
            continue
        matches = match_triples(
            resolved,
            types,
            triples,
            triple_types,
            embedder,
            hints=decomposition.hints,
            alpha=alpha,
            depth=depth,
        )
        best_per_doc: dict[str, float] = {}
        first_match: dict[str, TripleMatch] = {}
        for match in matches:  # best first, so the first match of a document is its best
            doc = match.triple.document_id
            first_match.setdefault(doc, match)
            best_per_doc[doc] = max(best_per_doc.get(doc, 0.0), match.score)
        ranked = sorted(
            ((d, s) for d, s in best_per_doc.items() if s >= threshold),
            key=lambda ds: (-ds[1], order.get(ds[0], len(order)), ds[0]),
        )[:docs_per_hop]
        if not ranked:
            top = f"; best S(d) {max(best_per_doc.values()):.3f}" if best_per_doc else ""
            reason = (
                f"no document triple matched {resolved.to_text()} with S(d) >= "
                f"threshold {threshold}{top}"
            )
            rows.append(HopRecord(number, step, resolved, typed, "unresolved", reason=reason))
            failed.update(v for v in resolved.variables)
            introduced.update(step.variables)
            continue
        best = matches[0]
        bound = {}
        for variable, value in best.bindings.items():
            if variable not in table:
                table.bind(variable, value, step=number)
                bound[variable] = value
        introduced.update(step.variables)
        rows.append(
            HopRecord(
                number,
                step,
                resolved,
                typed,
                "bound",
                tuple((d, round(s, 6)) for d, s in ranked),
                best,
                bound,
                selected=tuple(first_match[d] for d, _ in ranked),
            )
        )
    return rows, table


def _label(kind: EntityType | None, depth: int) -> str:
    return kind.label(depth) if kind is not None else "?"


def unbound_variables(rows: Sequence[HopRecord]) -> list[str]:
    """Variables that no step bound (for reports)."""
    seen: dict[str, bool] = {}
    for row in rows:
        for v in row.subquery.variables:
            seen.setdefault(v, False)
        for v in row.bindings:
            seen[v] = True
    return [v for v, ok in seen.items() if not ok and is_variable(v)]
