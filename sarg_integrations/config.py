"""Configuration of a SARG pipeline, validated once at construction."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from sarg_integrations.errors import ConfigError
from sarg_integrations.schema import Direction

__all__ = ["EVIDENCE_MODES", "SCHEMAS", "SARGConfig"]

SCHEMAS = ("reasoning", "generic_spo")
EVIDENCE_MODES = ("document", "sentences")


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
            Used by the default extractor.
        direction: Force a traversal direction (e.g. ``"bidirectional"`` for the paper's
            blind-traversal ablation) instead of asking the direction classifier.
        evidence: ``"document"`` puts whole source documents behind the kept chains in
            the prompt; ``"sentences"`` only the cited sentences.
        embedding_cache_size: How many text embeddings the pipeline keeps between runs
            (an LRU cache); 0 disables reuse across runs (within a run each distinct text
            is still encoded once).
        show_progress: Show a progress bar during extraction.

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
    schema: str = "reasoning"
    direction: Direction | None = None
    evidence: str = "document"
    embedding_cache_size: int = 20_000
    show_progress: bool = False

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
        self._check_choice("schema", SCHEMAS)
        self._check_choice("evidence", EVIDENCE_MODES)
        if self.direction is not None:
            try:
                object.__setattr__(self, "direction", Direction.parse(self.direction))
            except ValueError as exc:
                raise ConfigError(str(exc), field="direction", value=self.direction) from None
        if not isinstance(self.show_progress, bool):
            msg = f"show_progress={self.show_progress!r} must be True or False"
            raise ConfigError(msg, field="show_progress", value=self.show_progress)

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
