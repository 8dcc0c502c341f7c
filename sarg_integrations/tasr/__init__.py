"""TaSR-RAG: taxonomy-guided structured reasoning, a second evidence-selection strategy.

Select it with ``SARGConfig(strategy="tasr")`` (or ``strategy="tasr"`` on the
LangChain / LlamaIndex adapters, ``sarg run --strategy tasr``). It shares SARG's
extraction stage and result type, and replaces graph traversal with the method of
TaSR-RAG (Sun et al., 2026):

1. the question is decomposed into ordered triple sub-queries with latent variables
   (:mod:`~sarg_integrations.tasr.decomposition`);
2. entities are typed with a two-level taxonomy, the paper's Table 5
   (:mod:`~sarg_integrations.tasr.taxonomy`, :mod:`~sarg_integrations.tasr.entity_types`);
3. documents are scored per sub-query by hybrid triple matching, semantic + structural
   (:mod:`~sarg_integrations.tasr.matching`), and
4. an entity binding table resolves the variables hop by hop
   (:mod:`~sarg_integrations.tasr.binding`).

See ``docs/tasr.md``.
"""

from __future__ import annotations

from sarg_integrations.tasr.binding import BindingTable, select_evidence
from sarg_integrations.tasr.decomposition import (
    LLMQueryDecomposer,
    QueryDecomposer,
    RuleQueryDecomposer,
    parse_decomposition,
)
from sarg_integrations.tasr.entity_types import (
    EntityTyper,
    LLMEntityTyper,
    Mention,
    OfflineEntityTyper,
)
from sarg_integrations.tasr.matching import (
    match_triples,
    structural_score,
    term_similarity,
    type_agreement,
)
from sarg_integrations.tasr.records import (
    HopRecord,
    QueryDecomposition,
    SubQuery,
    TaSRTrace,
    TripleMatch,
    TypedTriple,
    is_variable,
)
from sarg_integrations.tasr.strategy import TaSRStrategy, build_tasr_strategy
from sarg_integrations.tasr.taxonomy import (
    OTHER,
    EntityType,
    Taxonomy,
    default_taxonomy,
    load_taxonomy,
)

__all__ = [
    "OTHER",
    "BindingTable",
    "EntityType",
    "EntityTyper",
    "HopRecord",
    "LLMEntityTyper",
    "LLMQueryDecomposer",
    "Mention",
    "OfflineEntityTyper",
    "QueryDecomposer",
    "QueryDecomposition",
    "RuleQueryDecomposer",
    "SubQuery",
    "TaSRStrategy",
    "TaSRTrace",
    "Taxonomy",
    "TripleMatch",
    "TypedTriple",
    "build_tasr_strategy",
    "default_taxonomy",
    "is_variable",
    "load_taxonomy",
    "match_triples",
    "parse_decomposition",
    "select_evidence",
    "structural_score",
    "term_similarity",
    "type_agreement",
]
