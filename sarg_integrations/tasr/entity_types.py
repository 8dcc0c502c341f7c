"""Taxonomy typing of entities (the paper's typed triples), by LLM or offline.

* :class:`OfflineEntityTyper`: the L1 category from spaCy's named-entity label of the
  mention in its sentence (PERSON → PERSON, ORG → ORGANIZATION, GPE/LOC → LOCATION,
  FAC → FACILITY, EVENT → EVENT, WORK_OF_ART/LAW/PRODUCT → WORK; dates and numbers →
  OTHER), the L2 category by embedding similarity of the mention (or its description,
  e.g. "American actress" from "X is an American actress") to the L2 category names.
  Without a named-entity label the best L2 above ``min_similarity`` decides both levels.
  The optional L3 (three-level ablation) is the description's head word.
* :class:`LLMEntityTyper`: asks a model for ``L1/L2`` labels, in batches; unreadable
  answers fall back to another typer (default offline).

Both implement :class:`EntityTyper`: ``type_mentions(mentions) -> list[EntityType]``.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from sarg_integrations._checks import is_whole
from sarg_integrations.embedding import Embedder, cosine_matrix
from sarg_integrations.errors import ConfigError
from sarg_integrations.extraction.llm.parsing import AnswerParseError, load_json_answer
from sarg_integrations.tasr.taxonomy import OTHER, EntityType, Taxonomy, default_taxonomy, humanize

__all__ = [
    "NER_TO_L1",
    "EntityTyper",
    "LLMEntityTyper",
    "Mention",
    "OfflineEntityTyper",
    "head_word",
]

NER_TO_L1 = {
    "PERSON": "PERSON",
    "ORG": "ORGANIZATION",
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "FAC": "FACILITY",
    "EVENT": "EVENT",
    "WORK_OF_ART": "WORK",
    "LAW": "WORK",
    "PRODUCT": "WORK",
    "DATE": "OTHER",
    "TIME": "OTHER",
    "CARDINAL": "OTHER",
    "QUANTITY": "OTHER",
    "MONEY": "OTHER",
    "PERCENT": "OTHER",
    "ORDINAL": "OTHER",
}
"""spaCy (OntoNotes) entity label → L1 category; labels not listed give no L1 evidence."""


@dataclass(frozen=True)
class Mention:
    """An entity phrase to type, with what surrounds it.

    Attributes:
        text: The phrase (``"MySQL AB"``).
        context: The sentence (or question) it occurs in.
        description: A descriptive phrase for it (``"Swedish company"``), when known.
    """

    text: str
    context: str = ""
    description: str | None = None


@runtime_checkable
class EntityTyper(Protocol):
    """Types entity mentions with the taxonomy."""

    def type_mentions(self, mentions: Sequence[Mention]) -> list[EntityType]:
        """Return one :class:`EntityType` per mention, in order."""
        ...


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def head_word(phrase: str) -> str | None:
    """The last word of ``phrase``, lower-cased (a cheap head-noun guess).

    Example:
        >>> head_word("the Swedish software company"), head_word("1990")
        ('company', None)
    """
    words = _WORD.findall(phrase)
    return words[-1].lower() if words else None


class OfflineEntityTyper:
    """Types mentions with spaCy entity labels and embedding similarity to L2 names.

    Args:
        embedder: The sentence embedder (the pipeline passes its cached one).
        taxonomy: Default the paper's Table 5.
        nlp: A loaded spaCy pipeline with NER; default the packaged one.
        min_similarity: Without a named-entity label, the best L2's cosine must reach
            this for the mention to be typed at all (else OTHER).
        cache_size: Typed mentions remembered across calls.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        taxonomy: Taxonomy | None = None,
        nlp: Any = None,
        min_similarity: float = 0.45,
        cache_size: int = 50_000,
    ) -> None:
        if not callable(getattr(embedder, "embed", None)):
            msg = f"embedder={embedder!r} has no embed(texts) method; pass an Embedder"
            raise ConfigError(msg, field="embedder", value=embedder)
        self.embedder = embedder
        self.taxonomy = taxonomy or default_taxonomy()
        self._nlp = nlp
        self.min_similarity = float(min_similarity)
        self.cache_size = cache_size
        self._cache: OrderedDict[Mention, EntityType] = OrderedDict()
        self._ner: OrderedDict[str, list[tuple[str, str]]] = OrderedDict()

    @property
    def nlp(self) -> Any:
        """The spaCy pipeline (loaded on first use)."""
        if self._nlp is None:
            from sarg_integrations._models import load_spacy

            self._nlp = load_spacy()
        return self._nlp

    def type_mentions(self, mentions: Sequence[Mention]) -> list[EntityType]:
        """Type every mention (cached by text, context and description)."""
        todo = [m for m in dict.fromkeys(mentions) if m not in self._cache]
        if todo:
            self._type(todo)
        return [self._cache[m] for m in mentions]

    def _entities(self, contexts: Sequence[str]) -> None:
        missing = [c for c in dict.fromkeys(contexts) if c not in self._ner]
        for context, doc in zip(missing, self.nlp.pipe(missing)):
            self._ner[context] = [(e.text.lower(), e.label_) for e in doc.ents]
        while len(self._ner) > self.cache_size:
            self._ner.popitem(last=False)

    def _label(self, mention: Mention) -> str | None:
        text = mention.text.lower()
        best: tuple[int, str] | None = None
        for ent, label in self._ner.get(mention.context, ()):
            if ent in text or text in ent:
                overlap = min(len(ent), len(text))
                if best is None or overlap > best[0]:
                    best = (overlap, label)
        return best[1] if best else None

    def _type(self, mentions: Sequence[Mention]) -> None:
        self._entities([m.context or m.text for m in mentions])
        l2s = list(self.taxonomy.l2)
        phrases = [m.description or m.text for m in mentions]
        vectors = self.embedder.embed([*(humanize(n) for n in l2s), *phrases])
        sims = cosine_matrix(vectors[len(l2s) :], vectors[: len(l2s)])
        for row, mention in enumerate(mentions):
            label = self._label(mention if mention.context else Mention(mention.text, mention.text))
            l1 = NER_TO_L1.get(label or "")
            l3 = head_word(phrases[row])
            if l1 == "OTHER":
                kind = EntityType("OTHER", None, None, 0.9)
            else:
                order = sorted(range(len(l2s)), key=lambda j: (-float(sims[row, j]), j))
                if l1 is not None:
                    inside = [j for j in order if self.taxonomy.parent(l2s[j]) == l1]
                    j = inside[0] if inside else None
                    score = float(sims[row, j]) if j is not None else 0.0
                    kind = EntityType(l1, l2s[j] if j is not None else None, l3, score)
                elif float(sims[row, order[0]]) >= self.min_similarity:
                    j = order[0]
                    parent = self.taxonomy.parent(l2s[j]) or "OTHER"
                    kind = EntityType(parent, l2s[j], l3, float(sims[row, j]))
                else:
                    kind = OTHER
            self._cache[mention] = kind
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)


TYPING_PROMPT = """You type entities with this taxonomy (L1/L2):
{taxonomy}
For each numbered entity (with the sentence it occurs in), give its type as "L1/L2", or \
"L1" when no L2 fits, or "OTHER" for dates, numbers and anything that fits no category.
Answer with JSON only: {{"types": [{{"id": 1, "type": "L1/L2"}}, ...]}}"""


class LLMEntityTyper:
    """Types mentions with a language model, ``batch_size`` mentions per call.

    Args:
        llm: A LangChain / LlamaIndex model, a callable ``str -> str`` or a
            :class:`~sarg_integrations.models.completion.CompletionModel`.
        taxonomy: Default the paper's Table 5.
        fallback: Types the mentions of a batch whose answer could not be read (and
            labels outside the taxonomy); default: :data:`OTHER`.
        batch_size: Mentions per model call.

    Example:
        >>> def model(prompt: str) -> str:
        ...     return '{"types": [{"id": 1, "type": "ORGANIZATION/Company"}, {"id": 2, "type": "?"}]}'
        >>> [str(t) for t in LLMEntityTyper(model).type_mentions([Mention("Oracle"), Mention("x")])]
        ['ORGANIZATION/Company', 'OTHER']
    """  # noqa: E501

    def __init__(
        self,
        llm: Any,
        *,
        taxonomy: Taxonomy | None = None,
        fallback: EntityTyper | None = None,
        batch_size: int = 40,
    ) -> None:
        from sarg_integrations.models.sync import SyncModel

        if not is_whole(batch_size, 1):
            msg = f"batch_size={batch_size!r} must be a positive integer, e.g. 40"
            raise ConfigError(msg, field="batch_size", value=batch_size)
        self.model = SyncModel(llm)
        self.taxonomy = taxonomy or default_taxonomy()
        self.fallback = fallback
        self.batch_size = batch_size
        self.calls = 0
        self.failures = 0
        self._cache: dict[Mention, EntityType] = {}

    def type_mentions(self, mentions: Sequence[Mention]) -> list[EntityType]:
        """Type every mention (each distinct mention is asked once)."""
        todo = [m for m in dict.fromkeys(mentions) if m not in self._cache]
        for start in range(0, len(todo), self.batch_size):
            self._batch(todo[start : start + self.batch_size])
        return [self._cache[m] for m in mentions]

    def _batch(self, batch: Sequence[Mention]) -> None:
        listing = "\n".join(
            f"- {l1}: {', '.join(l2s)}" for l1, l2s in self.taxonomy.categories.items()
        )
        lines = [
            f"{i}. {m.text}" + (f"  (in: {m.context})" if m.context else "")
            for i, m in enumerate(batch, start=1)
        ]
        self.calls += 1
        labels: dict[int, EntityType] = {}
        try:
            completion = self.model(TYPING_PROMPT.format(taxonomy=listing), "\n".join(lines))
            value, _ = load_json_answer(completion.text)
            labels = self._read(value, batch)
        except (AnswerParseError, ValueError):
            self.failures += 1
        missing = [m for i, m in enumerate(batch, start=1) if i not in labels]
        backup = self.fallback.type_mentions(missing) if self.fallback and missing else []
        filled = dict(zip(missing, backup))
        for i, mention in enumerate(batch, start=1):
            self._cache[mention] = labels.get(i) or filled.get(mention) or OTHER

    def _read(self, value: Any, batch: Sequence[Mention]) -> dict[int, EntityType]:
        items = value.get("types", value) if isinstance(value, dict) else value
        out: dict[int, EntityType] = {}
        by_text = {m.text.lower(): i for i, m in enumerate(batch, start=1)}
        if isinstance(items, dict):  # {"Oracle": "ORGANIZATION/Company"}
            items = [{"entity": k, "type": v} for k, v in items.items()]
        if not isinstance(items, list):
            return out
        for position, item in enumerate(items, start=1):
            if isinstance(item, str):
                index, label = position, item
            elif isinstance(item, dict):
                raw_id = item.get("id")
                entity = str(item.get("entity", item.get("name", ""))).strip().lower()
                if isinstance(raw_id, int):
                    index = raw_id
                elif entity:
                    # A named entity that is not in the batch types nothing: guessing
                    # its position could put the type on another mention.
                    if entity not in by_text:
                        continue
                    index = by_text[entity]
                else:
                    index = position
                label = item.get("type") or item.get("label")
            else:
                continue
            parsed = self.taxonomy.parse(label)
            if parsed is not None and 1 <= index <= len(batch):
                out[index] = parsed
        return out
