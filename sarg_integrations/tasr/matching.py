"""Hybrid triple matching: semantic similarity of raw triples + structural consistency.

For a sub-query ``s`` (earlier bindings substituted) and a document triple ``t``:

* **anchor gate**: every entity of ``s`` must match the corresponding end of ``t``
  (:func:`term_similarity` ≥ ``anchor_threshold``), in the forward orientation
  (subject ↔ head) or the inverse one (subject ↔ tail, for passive/active pairs such as
  "developed by" / "developed"); inverse matches are scaled by ``inverse_penalty``;
* **semantic** = cosine of the texts ``"subject relation object"`` (a variable reads as
  its hint, e.g. "database") and ``"head relation tail"``;
* **structural** = mean of the subject-type agreement, the relation cosine and the
  object-type agreement (:func:`type_agreement` at the taxonomy depth);
* **score** = ``alpha * semantic + (1 - alpha) * structural``; ``alpha = 1`` is the
  paper's semantic-only ablation and ``alpha = 0`` the structural-only one.

A document's score ``S(d)`` is its best triple's score.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from sarg_integrations.embedding import Embedder, cosine_matrix
from sarg_integrations.schema import Triple
from sarg_integrations.tasr.records import SubQuery, TripleMatch, is_variable
from sarg_integrations.tasr.taxonomy import EntityType

__all__ = ["match_triples", "structural_score", "term_similarity", "type_agreement"]

_STOP = frozenset("a an the of and or in on at to for by with from".split())


def type_agreement(a: EntityType | None, b: EntityType | None, depth: int = 2) -> float:
    """How far two types agree, level by level from L1, over the levels both have.

    1.0 when every shared level up to ``depth`` agrees, 0.0 when L1 differs, partial
    credit when L1 agrees but a deeper level differs; 0.5 (no evidence) when either
    side is unknown or OTHER.

    Example:
        >>> db, company = EntityType("WORK", "Database"), EntityType("ORGANIZATION", "Company")
        >>> type_agreement(db, EntityType("WORK", "Database")), type_agreement(db, company)
        (1.0, 0.0)
        >>> type_agreement(db, EntityType("WORK", "Film")), type_agreement(db, EntityType("WORK"))
        (0.5, 1.0)
        >>> type_agreement(db, EntityType("WORK", "Film"), depth=1), type_agreement(None, db)
        (1.0, 0.5)
    """
    if a is None or b is None or a.is_other or b.is_other:
        return 0.5
    la, lb = a.levels(depth), b.levels(depth)
    shared = min(len(la), len(lb))
    if shared == 0:
        return 0.5
    agree = 0
    for x, y in zip(la[:shared], lb[:shared]):
        if x.lower() != y.lower():
            break
        agree += 1
    return agree / shared


def structural_score(
    query_types: tuple[EntityType | None, EntityType | None],
    triple_types: tuple[EntityType | None, EntityType | None],
    relation_similarity: float,
    depth: int = 2,
) -> float:
    """Typed-triple consistency: mean of both type agreements and the relation cosine.

    Example:
        >>> q = (EntityType("WORK", "SoftwareProject"), EntityType("WORK", "Database"))
        >>> t = (EntityType("WORK", "SoftwareProject"), EntityType("WORK", "Database"))
        >>> round(structural_score(q, t, 0.7), 3), round(structural_score(q, t[::-1], 0.7), 3)
        (0.9, 0.567)
    """
    rel = min(1.0, max(0.0, float(relation_similarity)))
    return (
        type_agreement(query_types[0], triple_types[0], depth)
        + rel
        + type_agreement(query_types[1], triple_types[1], depth)
    ) / 3.0


def _tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if w not in _STOP}


def term_similarity(term: str, phrase: str, cosine: float = 0.0) -> float:
    """How well ``phrase`` names the entity ``term``: token containment or cosine.

    Example:
        >>> term_similarity("MySQL", "the MySQL database"), term_similarity("MySQL", "Oracle")
        (1.0, 0.0)
    """
    words = _tokens(term)
    contained = len(words & _tokens(phrase)) / len(words) if words else 0.0
    return max(contained, float(cosine))


def _query_text(step: SubQuery, hints: Mapping[str, str]) -> str:
    def word(term: str) -> str:
        return hints.get(term, "something") if is_variable(term) else term

    return f"{word(step.subject)} {step.relation} {word(step.object)}"


def match_triples(
    step: SubQuery,
    step_types: tuple[EntityType | None, EntityType | None],
    triples: Sequence[Triple],
    triple_types: Sequence[tuple[EntityType, EntityType]],
    embedder: Embedder,
    *,
    hints: Mapping[str, str] | None = None,
    alpha: float = 0.5,
    depth: int = 2,
    anchor_threshold: float = 0.6,
    inverse_penalty: float = 0.9,
) -> list[TripleMatch]:
    """Score every triple against ``step``; best first (ties: input order, forward first).

    Args:
        step: The sub-query with earlier bindings already substituted.
        step_types: The types of its subject and object.
        triples: The candidate document triples.
        triple_types: ``(head type, tail type)`` of each triple.
        embedder: Sentence embedder (cosines of texts, relations and entity phrases).
        hints: Variable → description, to phrase unbound variables.
        alpha: Weight of the semantic score (1 = semantic-only, 0 = structural-only).
        depth: Taxonomy levels compared (1, 2 or 3).
        anchor_threshold: Least :func:`term_similarity` of an entity to its triple end.
        inverse_penalty: Factor on matches read head-to-tail reversed.

    Returns:
        Every triple that passes the anchor gate, as a :class:`TripleMatch`.
    """
    if not triples:
        return []
    hints = dict(hints or {})
    terms = [step.subject, step.object]
    concrete = [t for t in terms if not is_variable(t)]
    heads = [t.cause for t in triples]
    tails = [t.effect for t in triples]
    texts = [f"{t.cause} {t.relation} {t.effect}" for t in triples]
    relations = [t.relation for t in triples]
    batch = [_query_text(step, hints), step.relation, *concrete, *texts, *relations, *heads, *tails]
    vectors = np.asarray(embedder.embed(batch))
    n, c = len(triples), len(concrete)
    q_text, q_rel = vectors[0:1], vectors[1:2]
    q_terms = vectors[2 : 2 + c]
    offset = 2 + c
    t_text = vectors[offset : offset + n]
    t_rel = vectors[offset + n : offset + 2 * n]
    t_head = vectors[offset + 2 * n : offset + 3 * n]
    t_tail = vectors[offset + 3 * n : offset + 4 * n]
    semantic = cosine_matrix(t_text, q_text)[:, 0]
    relation = cosine_matrix(t_rel, q_rel)[:, 0]
    head_cos = cosine_matrix(t_head, q_terms) if c else np.zeros((n, 0))
    tail_cos = cosine_matrix(t_tail, q_terms) if c else np.zeros((n, 0))
    found: list[tuple[float, int, int, TripleMatch]] = []
    for i, triple in enumerate(triples):
        for forward in (True, False):
            ends = (triple.cause, triple.effect) if forward else (triple.effect, triple.cause)
            cos_ends = (head_cos, tail_cos) if forward else (tail_cos, head_cos)
            ok = True
            bindings: dict[str, str] = {}
            for slot, term in enumerate(terms):
                if is_variable(term):
                    if ends[slot] in concrete:
                        ok = False
                    bindings[term] = ends[slot]
                    continue
                k = concrete.index(term)
                if term_similarity(term, ends[slot], cos_ends[slot][i, k]) < anchor_threshold:
                    ok = False
            if not ok or (len(bindings) == 2 and len(set(bindings.values())) < 2):
                continue
            types = triple_types[i] if forward else triple_types[i][::-1]
            sem = max(0.0, float(semantic[i]))
            struct = structural_score(step_types, types, float(relation[i]), depth)
            score = alpha * sem + (1.0 - alpha) * struct
            if not forward:
                score *= inverse_penalty
            match = TripleMatch(
                triple, round(score, 6), round(sem, 6), round(struct, 6), forward, bindings
            )
            found.append((-match.score, i, 0 if forward else 1, match))
    found.sort(key=lambda x: x[:3])
    return [m for *_, m in found]
