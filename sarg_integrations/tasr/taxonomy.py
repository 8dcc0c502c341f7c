"""The TaSR-RAG entity taxonomy: two levels (L1 → L2) written as package data.

The default is the paper's Table 5 (``sarg_integrations/data/tasr_taxonomy.json``):
six L1 categories (PERSON, ORGANIZATION, LOCATION, FACILITY, EVENT, WORK), each with
ten to twelve L2 categories. :meth:`Taxonomy.extend` adds categories (the paper's
worked example types a database as ``WORK/Database``, which Table 5 lacks), and
:func:`load_taxonomy` reads your own file of the same shape.

An entity that fits no category is typed :data:`OTHER` (dates, numbers, abstract
phrases); matching treats it as "no type evidence", neither for nor against.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from sarg_integrations.errors import ConfigError

__all__ = [
    "OTHER",
    "TAXONOMY_RESOURCE",
    "EntityType",
    "Taxonomy",
    "default_taxonomy",
    "humanize",
    "load_taxonomy",
]

TAXONOMY_RESOURCE = "data/tasr_taxonomy.json"
"""The packaged taxonomy (paper Table 5), relative to ``sarg_integrations``."""


@dataclass(frozen=True)
class EntityType:
    """A taxonomy type: L1 category, L2 category and an optional finer L3 label.

    Attributes:
        l1: The top-level category (``"WORK"``), or ``"OTHER"``.
        l2: The second-level category (``"Dataset"``), or ``None``.
        l3: A finer label (the offline typer uses the phrase's head word), or ``None``;
            only the three-level ablation compares it.
        confidence: How sure the typer was, in [0, 1].

    Example:
        >>> t = EntityType("WORK", "Database", "mysql")
        >>> str(t), t.levels(1), t.levels(2)
        ('WORK/Database', ('WORK',), ('WORK', 'Database'))
    """

    l1: str
    l2: str | None = None
    l3: str | None = None
    confidence: float = 1.0

    @property
    def is_other(self) -> bool:
        """Whether this is the catch-all :data:`OTHER` type (no type evidence)."""
        return self.l1 == "OTHER"

    def levels(self, depth: int) -> tuple[str, ...]:
        """The first ``depth`` levels that are set, e.g. ``("WORK", "Dataset")``."""
        out: list[str] = []
        for level in (self.l1, self.l2, self.l3)[:depth]:
            if level is None:
                break
            out.append(level)
        return tuple(out)

    def label(self, depth: int = 2) -> str:
        """``L1/L2`` (or deeper / shallower) as one string."""
        return "/".join(self.levels(depth))

    def __str__(self) -> str:
        return self.label(2)


OTHER = EntityType("OTHER", None, None, 0.0)
"""The type of an entity that fits no category."""


def humanize(category: str) -> str:
    """Turn a CamelCase category into words for embedding.

    Example:
        >>> humanize("SoftwareProject"), humanize("TVSeries"), humanize("StateOrProvince")
        ('software project', 'TV series', 'state or province')
    """
    words = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+", category)
    return " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words)


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@dataclass(frozen=True)
class Taxonomy:
    """A two-level entity taxonomy: L1 category → its L2 categories.

    Args:
        categories: L1 name → L2 names. L2 names must be unique across L1s.
        name: A label for reports.

    Raises:
        ConfigError: An empty taxonomy, an empty name or an L2 listed under two L1s.

    Example:
        >>> tax = default_taxonomy()
        >>> tax.parent("Film"), len(tax.l1), str(tax.parse("Work/Database"))  # no such L2
        ('WORK', 6, 'WORK')
        >>> tax.extend({"WORK": ["Database", "System"]}).parse("work / database")
        EntityType(l1='WORK', l2='Database', l3=None, confidence=1.0)
    """

    categories: Mapping[str, tuple[str, ...]]
    name: str = "custom"
    _parents: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.categories, Mapping) or not self.categories:
            msg = (
                f"Taxonomy categories={self.categories!r} must be a non-empty mapping "
                'L1 -> [L2, ...], e.g. {"PERSON": ["Actor", "Writer"]}'
            )
            raise ConfigError(msg, field="categories", value=self.categories)
        clean: dict[str, tuple[str, ...]] = {}
        parents: dict[str, str] = {}
        for l1, l2s in self.categories.items():
            if not isinstance(l1, str) or not l1.strip() or isinstance(l2s, str):
                msg = f"Taxonomy: L1 {l1!r} needs a name and a list of L2 names, got {l2s!r}"
                raise ConfigError(msg, field="categories", value=l1)
            names = tuple(str(n).strip() for n in l2s if str(n).strip())
            for name in names:
                if _key(name) in parents:
                    msg = (
                        f"Taxonomy: L2 {name!r} is listed under both {parents[_key(name)]!r} "
                        f"and {l1!r}; an L2 category must have one parent"
                    )
                    raise ConfigError(msg, field="categories", value=name)
                parents[_key(name)] = l1.strip()
            clean[l1.strip()] = names
        object.__setattr__(self, "categories", clean)
        object.__setattr__(self, "_parents", parents)

    @property
    def l1(self) -> tuple[str, ...]:
        """The L1 categories, in file order."""
        return tuple(self.categories)

    @property
    def l2(self) -> tuple[str, ...]:
        """Every L2 category, grouped by L1 in file order."""
        return tuple(n for names in self.categories.values() for n in names)

    def parent(self, l2: str) -> str | None:
        """The L1 category of ``l2`` (case- and punctuation-insensitive), or ``None``."""
        return self._parents.get(_key(l2))

    def canonical_l2(self, l2: str) -> str | None:
        """``l2`` spelt as in the taxonomy, or ``None`` when it is not in it."""
        key = _key(l2)
        return next((n for n in self.l2 if _key(n) == key), None)

    def canonical_l1(self, l1: str) -> str | None:
        """``l1`` spelt as in the taxonomy (``OTHER`` too), or ``None``."""
        key = _key(l1)
        if key == "other":
            return "OTHER"
        return next((n for n in self.l1 if _key(n) == key), None)

    def parse(self, label: Any, *, confidence: float = 1.0) -> EntityType | None:
        """Read a type label a model wrote: ``"WORK/Film"``, ``"Film"``, ``"person"``.

        Returns ``None`` when the label names nothing in the taxonomy (``"OTHER"`` gives
        :data:`OTHER`). An L1/L2 pair whose L2 belongs to another L1 is read by its L2.
        """
        if not isinstance(label, str) or not label.strip():
            return None
        parts = [p.strip() for p in re.split(r"[/>:|.]+", label) if p.strip()]
        if not parts:
            return None
        if len(parts) >= 2:
            l2 = self.canonical_l2(parts[1])
            if l2 is not None:
                return EntityType(self.parent(l2) or parts[0], l2, None, confidence)
        l2 = self.canonical_l2(parts[-1])
        if l2 is not None:
            return EntityType(self.parent(l2) or "OTHER", l2, None, confidence)
        l1 = self.canonical_l1(parts[0])
        if l1 == "OTHER":
            return OTHER
        if l1 is not None:
            return EntityType(l1, None, None, confidence)
        return None

    def extend(
        self, categories: Mapping[str, Iterable[str]], *, name: str | None = None
    ) -> Taxonomy:
        """Return a taxonomy with more categories (new L1s, or more L2s under an L1)."""
        merged = {k: list(v) for k, v in self.categories.items()}
        for l1, l2s in categories.items():
            key = self.canonical_l1(l1) or l1
            merged.setdefault(key, []).extend(n for n in l2s if self.canonical_l2(n) is None)
        return Taxonomy({k: tuple(v) for k, v in merged.items()}, name or f"{self.name}+")

    def to_dict(self) -> dict[str, Any]:
        """The taxonomy as JSON-ready data (the file format)."""
        return {"name": self.name, "categories": {k: list(v) for k, v in self.categories.items()}}


def load_taxonomy(path: str | os.PathLike[str] | None = None) -> Taxonomy:
    """Read a taxonomy file (``{"name", "categories": {L1: [L2, ...]}}``); default Table 5.

    Raises:
        ConfigError: The file is missing, not JSON or not of that shape.
    """
    try:
        if path is None:
            text = (
                resources.files("sarg_integrations")
                .joinpath(TAXONOMY_RESOURCE)
                .read_text(encoding="utf-8")
            )
        else:
            text = Path(path).read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError) as exc:
        msg = f"cannot read the taxonomy file {str(path)!r}: {exc}; pass a JSON file of shape {{'categories': {{L1: [L2, ...]}}}}"  # noqa: E501
        raise ConfigError(msg, field="taxonomy", value=path) from None
    if not isinstance(data, Mapping) or not isinstance(data.get("categories"), Mapping):
        msg = f"the taxonomy file {str(path)!r} needs a 'categories' object mapping L1 -> [L2, ...]"
        raise ConfigError(msg, field="taxonomy", value=path)
    return Taxonomy(
        {k: tuple(v) for k, v in data["categories"].items()}, str(data.get("name", "custom"))
    )


_DEFAULT: Taxonomy | None = None


def default_taxonomy() -> Taxonomy:
    """The packaged two-level taxonomy of the paper (Table 5), loaded once."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = load_taxonomy()
    return _DEFAULT
