"""Configuration of a SARG pipeline, validated once at construction."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from sarg_integrations.errors import ConfigError
from sarg_integrations.schema import Direction

__all__ = ["EVIDENCE_MODES", "SCHEMAS", "STRATEGIES", "SARGConfig", "check_deadline"]

SCHEMAS = ("reasoning", "generic_spo")
EVIDENCE_MODES = ("document", "sentences")
STRATEGIES = ("sarg", "tasr")


@dataclass(frozen=True)
class SARGConfig:
    """Settings of a :class:`~sarg_integrations.SARGPipeline`.

    Defaults follow the SARG paper (β = 3, K = 3). Every field is checked when the
    config is created; a bad value raises :class:`~sarg_integrations.errors.ConfigError`
    naming the field, the value and the valid range.

    Attributes:
        beam_width: Beam width β of the semantic beam search (paper default 3).
        top_k: How many chains are kept for the prompt (paper default 3).
        similarity_threshold: τ of Eq. 3: a node is an entry node when its best cosine
            with a query key phrase is strictly above it.
        max_depth: Safety cap on hops per chain; the paper stops only at dead ends.
        max_entry_nodes: At most this many entry nodes (best similarity first) seed the
            beam search; ``None`` keeps every node above τ.
        max_keyphrases: How many KeyBERT key phrases are taken from the query.
        keyphrase_ngram_max: The longest key phrase, in words.
        merge_threshold: Cosine at or above which two node phrases are merged during
            entity resolution; conservative so that distinct concepts stay apart (with
            all-MiniLM-L6-v2, "tech stock"/"technology stock" is 0.89 while
            "interest rate hike"/"interest rate cut" is 0.71).
        schema: ``"reasoning"`` (the paper's schema) or ``"generic_spo"`` (the ablation).
            Used by the default extractor. Left unset, it follows the strategy:
            ``"reasoning"`` for SARG, ``"generic_spo"`` for TaSR (which matches
            attributive triples too).
        direction: Force a traversal direction (e.g. ``"bidirectional"`` for the paper's
            blind-traversal ablation) instead of asking the direction classifier.
        evidence: ``"document"`` puts whole source documents behind the kept chains in
            the prompt; ``"sentences"`` only the cited sentences.
        embedding_cache_size: How many text embeddings the pipeline keeps between runs
            (an LRU cache); 0 disables reuse across runs (within a run each distinct text
            is still encoded once).
        show_progress: Show a progress bar during extraction.
        evidence_fill: ``None`` (the paper): the prompt's evidence is exactly the
            documents behind the kept chains (every document on fallback). An integer
            ``n``: ``n`` more documents are added by bridge-guided relevance (the one
            most similar to the query first, then documents that mention or are
            mentioned by those already picked; see :mod:`sarg_integrations.evidence`);
            on fallback the evidence is those ``n`` documents instead of all of them.
            Applies to both strategies.
        deadline_seconds: Per-query time budget for extraction, in seconds (``None``:
            no deadline). Documents not extracted when it passes are listed in
            ``SARGResult.skipped_documents`` with the reason, and the run continues with
            the triples it has (the flat context when there are none). A run may also
            pass ``deadline=`` to override it.
        strategy: ``"sarg"`` (reasoning graph + beam search) or ``"tasr"`` (TaSR-RAG:
            query decomposition, taxonomy typing, hybrid triple matching and an entity
            binding table; see ``docs/tasr.md``).
        tasr_alpha: TaSR's weight of the semantic score in the hybrid match score
            ``alpha * semantic + (1 - alpha) * structural``; 1 is semantic-only, 0
            structural-only.
        tasr_threshold: TaSR's θ: a document is selected for a hop when its hybrid
            score reaches it.
        tasr_taxonomy_depth: Taxonomy levels TaSR's structural matching compares: 2
            (the paper's choice), 1 (L1 only) or 3 (adds the head word).

    Example:
        >>> SARGConfig(beam_width=5).top_k
        3
    """

    beam_width: int = 3
    top_k: int = 3
    similarity_threshold: float = 0.5
    max_depth: int = 8
    max_entry_nodes: int | None = 10
    max_keyphrases: int = 5
    keyphrase_ngram_max: int = 3
    merge_threshold: float = 0.88
    schema: str = None  # type: ignore[assignment]  # resolved from the strategy
    direction: Direction | None = None
    evidence: str = "document"
    embedding_cache_size: int = 20_000
    show_progress: bool = False
    evidence_fill: int | None = None
    deadline_seconds: float | None = None
    strategy: str = "sarg"
    tasr_alpha: float = 0.5
    tasr_threshold: float = 0.5
    tasr_taxonomy_depth: int = 2

    def __post_init__(self) -> None:
        self._check_int("beam_width", 1)
        self._check_int("top_k", 1)
        self._check_int("max_depth", 1)
        self._check_int("max_keyphrases", 1)
        self._check_int("keyphrase_ngram_max", 1)
        self._check_int("embedding_cache_size", 0)
        if self.max_entry_nodes is not None:
            self._check_int("max_entry_nodes", 1)
        self._check_unit_float("similarity_threshold", low=-1.0)
        self._check_unit_float("merge_threshold", low=0.0)
        self._check_choice("strategy", STRATEGIES)
        if self.schema is None:
            default_schema = "generic_spo" if self.strategy == "tasr" else "reasoning"
            object.__setattr__(self, "schema", default_schema)
        self._check_choice("schema", SCHEMAS)
        self._check_unit_float("tasr_alpha", low=0.0)
        self._check_unit_float("tasr_threshold", low=0.0)
        depth = self.tasr_taxonomy_depth
        if isinstance(depth, bool) or depth not in (1, 2, 3):
            msg = f"tasr_taxonomy_depth={depth!r} must be 1, 2 (the paper's) or 3"
            raise ConfigError(msg, field="tasr_taxonomy_depth", value=depth)
        self._check_choice("evidence", EVIDENCE_MODES)
        if self.evidence_fill is not None:
            self._check_int("evidence_fill", 1)
        if self.direction is not None:
            try:
                object.__setattr__(self, "direction", Direction.parse(self.direction))
            except ValueError as exc:
                raise ConfigError(str(exc), field="direction", value=self.direction) from None
        if not isinstance(self.show_progress, bool):
            msg = f"show_progress={self.show_progress!r} must be True or False"
            raise ConfigError(msg, field="show_progress", value=self.show_progress)
        if self.deadline_seconds is not None:
            seconds = check_deadline("deadline_seconds", self.deadline_seconds)
            object.__setattr__(self, "deadline_seconds", seconds)

    def replace(self, **changes: Any) -> SARGConfig:
        """Return a copy with ``changes`` applied (and validated).

        Raises:
            ConfigError: If a name is not a config field or a value is invalid.
        """
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            msg = f"unknown SARGConfig field(s) {unknown}; valid fields: {sorted(names)}"
            raise ConfigError(msg, field=unknown[0], value=changes[unknown[0]])
        if "strategy" in changes and "schema" not in changes:
            # the schema follows the strategy unless it was chosen explicitly
            follows = "generic_spo" if self.strategy == "tasr" else "reasoning"
            if self.schema == follows:
                changes["schema"] = None
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Return the config as JSON-ready values."""
        out = dataclasses.asdict(self)
        out["direction"] = None if self.direction is None else self.direction.value
        return out

    def _check_int(self, name: str, minimum: int) -> None:
        value = getattr(self, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            msg = f"{name}={value!r} must be an integer >= {minimum}"
            raise ConfigError(msg, field=name, value=value)

    def _check_unit_float(self, name: str, *, low: float) -> None:
        value = getattr(self, name)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (low <= value <= 1.0)
        ):
            msg = f"{name}={value!r} must be a number between {low} and 1.0 (a cosine similarity)"
            raise ConfigError(msg, field=name, value=value)

    def _check_choice(self, name: str, choices: tuple[str, ...]) -> None:
        value = getattr(self, name)
        if value not in choices:
            msg = f"{name}={value!r} is not valid; use one of: {', '.join(choices)}"
            raise ConfigError(msg, field=name, value=value)


def check_deadline(name: str, value: Any) -> float:
    """Return ``value`` as a deadline in seconds, or raise a :class:`ConfigError` naming ``name``.

    Example:
        >>> check_deadline("deadline", 2)
        2.0
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        msg = f"{name}={value!r} must be a number of seconds > 0 (e.g. 30.0), or None for none"
        raise ConfigError(msg, field=name, value=value)
    return float(value)
