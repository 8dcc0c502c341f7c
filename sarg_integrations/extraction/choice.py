"""Which extractor a name picks: ``"union"`` (the default), ``"tagger"``, ``"rules"``, or a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sarg_integrations.errors import ConfigError

__all__ = ["DEFAULT_EXTRACTOR", "EXTRACTOR_NAMES", "default_extractor", "resolve_extractor"]

DEFAULT_EXTRACTOR = "union"
"""The offline default's name: the learned tagger plus the rules' cues. Measured against the
tagger alone (``benchmarks/bench_extraction.py``) it has the higher relaxed recall on all
five corpora at a small cost in precision, and it finds the FT1D case study's chain
(cookbook 04), which the tagger alone misreads."""
EXTRACTOR_NAMES = ("tagger", "rules", "union")
"""The named offline extractors; any other string must be a trained tagger's folder."""


def default_extractor(schema: str = "reasoning") -> Any:
    """The offline default: :data:`DEFAULT_EXTRACTOR` (the rules for ``generic_spo``).

    Example:
        >>> default_extractor()
        UnionExtractor(TaggerExtractor(model_dir=...), RuleBasedExtractor(...))
        >>> default_extractor("generic_spo").schema
        'generic_spo'
    """
    if schema != "reasoning":
        from sarg_integrations.extraction.rules import RuleBasedExtractor

        return RuleBasedExtractor(schema=schema)
    return resolve_extractor(DEFAULT_EXTRACTOR, schema)


def resolve_extractor(spec: str | Path, schema: str = "reasoning") -> Any:
    """Build the extractor a name or folder names.

    Args:
        spec: ``"tagger"``, ``"rules"``, ``"union"`` (the tagger plus the rules' cues),
            or the folder of a tagger trained with ``sarg train-extractor``.
        schema: The extraction schema; only the rules implement ``"generic_spo"``.

    Raises:
        ConfigError: ``spec`` is neither a known name nor an existing folder, or the
            schema is not one the chosen extractor implements.

    Example:
        >>> resolve_extractor("rules")
        RuleBasedExtractor(schema='reasoning', ...)
        >>> resolve_extractor("nonsense")
        Traceback (most recent call last):
        ...
        sarg_integrations.errors.ConfigError: extractor='nonsense' is neither tagger, rules, union nor a folder holding a trained tagger (tagger.json); pass one of those
    """
    from sarg_integrations.extraction.rules import RuleBasedExtractor
    from sarg_integrations.extraction.tagger import TaggerExtractor

    name = str(spec)
    if name == "rules":
        return RuleBasedExtractor(schema=schema)
    if schema != "reasoning":
        msg = (
            f"extractor={name!r} reads the reasoning schema only, not schema={schema!r}; "
            "use extractor='rules' for the generic_spo ablation"
        )
        raise ConfigError(msg, field="extractor", value=name)
    if name == "tagger":
        return TaggerExtractor()
    if name == "union":
        from sarg_integrations.extraction.union import UnionExtractor

        return UnionExtractor(TaggerExtractor(), RuleBasedExtractor(schema=schema))
    folder = Path(name).expanduser()
    if folder.is_dir() and (folder / "tagger.json").is_file():
        return TaggerExtractor(folder)
    msg = (
        f"extractor={name!r} is neither {', '.join(EXTRACTOR_NAMES[:-1])}, {EXTRACTOR_NAMES[-1]} "
        "nor a folder holding a trained tagger (tagger.json); pass one of those"
    )
    raise ConfigError(msg, field="extractor", value=name)
