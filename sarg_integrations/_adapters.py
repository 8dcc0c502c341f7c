"""Framework-independent support shared by the LangChain and LlamaIndex adapters.

Private: only :mod:`sarg_integrations.langchain` and :mod:`sarg_integrations.llama_index`
import this module (it needs pydantic, which both frameworks bring). It holds

* :class:`SARGSettings`, a pydantic mixin whose fields mirror
  :class:`~sarg_integrations.config.SARGConfig` plus the injectable collaborators, and
  which builds one :class:`~sarg_integrations.pipeline.SARGPipeline` per adapter at
  construction (raising :class:`~sarg_integrations.errors.ConfigError` on bad values);
* the ``metadata["sarg"]`` records every adapter attaches to its output, so that both
  frameworks describe chains and evidence with the same keys.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, create_model

from sarg_integrations.config import SARGConfig, settings
from sarg_integrations.errors import ConfigError, InputError
from sarg_integrations.pipeline import SARGPipeline
from sarg_integrations.prompting import compile_flat_prompt
from sarg_integrations.schema import EvidencePassage, ReasoningChain, SARGResult, to_jsonable

__all__ = [
    "CHAINS_ID",
    "NO_DOCUMENTS",
    "SARGSettings",
    "chain_records",
    "empty_prompt",
    "evidence_metadata",
    "result_summary",
    "caller_id",
    "unique_ids",
    "with_sarg_metadata",
    "wrap_embedder",
    "wrap_extractor",
]

CHAINS_ID = "sarg-reasoning-chains"
"""The id of the synthetic "reasoning chains" document / node."""

NO_DOCUMENTS = "no documents were retrieved"

_DEFAULTS = SARGConfig()
_CONFIG_FIELDS = tuple(f.name for f in dataclasses.fields(SARGConfig))
# pydantic reserves ``schema`` (BaseModel.schema), so the field is ``triple_schema``;
# ``schema=`` is still accepted as a keyword, like SARGConfig's own name.
_FIELD_FOR_CONFIG = {
    name: ("triple_schema" if name == "schema" else name) for name in _CONFIG_FIELDS
}
_COMPONENTS = (
    "extractor",
    "embedder",
    "direction_classifier",
    "keyphrase_extractor",
    "prompt_template",
    "query_decomposer",
    "entity_typer",
    "llm",
    "event_reader",
    "profile_reader",
)


def _config_fields() -> dict[str, Any]:
    """One pydantic field per :class:`~sarg_integrations.SARGConfig` field.

    Each is described by the field's :class:`~sarg_integrations.config.Setting`.
    """
    hints = typing.get_type_hints(SARGConfig)
    fields: dict[str, Any] = {}
    for name, setting in settings().items():
        annotation = str | None if name == "direction" else hints[name]
        default = getattr(_DEFAULTS, name)
        fields[_FIELD_FOR_CONFIG[name]] = (
            annotation,
            Field(default=default if name != "direction" else None, description=setting.help),
        )
    return fields


_ConfigSettings: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "_ConfigSettings",
    __config__=ConfigDict(arbitrary_types_allowed=True),
    __module__=__name__,
    **_config_fields(),
)


class SARGSettings(_ConfigSettings):  # type: ignore[misc, valid-type]
    """Keyword settings mirroring :class:`~sarg_integrations.SARGConfig`, plus collaborators.

    Every adapter class inherits these fields. The settings are derived from
    ``SARGConfig``'s fields (``schema`` is named ``triple_schema``, as pydantic reserves
    ``schema``; ``schema=`` is accepted too). Values are validated once, when the
    adapter is created, by building its :class:`~sarg_integrations.SARGPipeline`; a bad
    value raises :class:`~sarg_integrations.errors.ConfigError` naming the field.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    extractor: Any = Field(default=None, exclude=True, description="Triple extractor.")
    """A :class:`~sarg_integrations.TripleExtractor`; default the offline spaCy extractor."""
    embedder: Any = Field(default=None, exclude=True, description="Text embedder.")
    """A SARG :class:`~sarg_integrations.Embedder` or the framework's embeddings object."""
    direction_classifier: Any = Field(default=None, exclude=True, description="Direction model.")
    """A :class:`~sarg_integrations.DirectionPredictor`; default the shipped classifier."""
    keyphrase_extractor: Any = Field(default=None, exclude=True, description="Key phrases.")
    """A :class:`~sarg_integrations.KeyphraseExtractor`; default KeyBERT over the embedder."""
    prompt_template: Any = Field(default=None, exclude=True, description="Prompt texts.")
    """A :class:`~sarg_integrations.PromptTemplate` overriding the prompt texts."""
    query_decomposer: Any = Field(default=None, exclude=True, description="TaSR decomposer.")
    """TaSR: a :class:`~sarg_integrations.tasr.QueryDecomposer` or a language model."""
    entity_typer: Any = Field(default=None, exclude=True, description="TaSR entity typer.")
    """TaSR: an :class:`~sarg_integrations.tasr.EntityTyper` or a language model."""
    llm: Any = Field(default=None, exclude=True, description="TaSR language model.")
    """TaSR: one language model that decomposes the query and types the entities
    (``SARGPipeline(llm=...)``); ``query_decomposer`` / ``entity_typer`` take precedence."""
    event_reader: Any = Field(default=None, exclude=True, description="Event reader.")
    """A :class:`~sarg_integrations.links.EventReader` telling documents that state an event
    from profiles; default the spaCy past-tense reader."""
    profile_reader: Any = Field(default=None, exclude=True, description="Profile reader.")
    """A :class:`~sarg_integrations.links.ProfileReader` telling profiles and general facts
    from what happened; default the spaCy present-tense reader."""
    pipeline: Any = Field(default=None, exclude=True, description="A ready SARGPipeline.")
    """A ready :class:`~sarg_integrations.SARGPipeline` to share (instead of the settings)."""

    _sarg_pipeline: SARGPipeline | None = PrivateAttr(default=None)

    # Collaborator fields a subclass redefines for its own use, kept from the pipeline
    # (SARGQueryEngine's ``llm`` writes the answer).
    _sarg_own_fields: ClassVar[frozenset[str]] = frozenset()

    # Turn framework objects (embeddings, LLMs) into SARG collaborators; each framework
    # adds its embeddings wrapper. Called as wrapper(value, settings) before the build.
    _sarg_wrappers: ClassVar[dict[str, Callable[[Any, Mapping[str, Any]], Any]]] = {
        "extractor": lambda extractor, settings: wrap_extractor(extractor, settings),
        "embedder": lambda embedder, settings: wrap_embedder(embedder),
    }

    def __init__(self, **data: Any) -> None:
        data = _normalize(type(self), data)
        pipeline = _build_pipeline(type(self), data)
        super().__init__(**data)
        self._sarg_pipeline = pipeline

    @property
    def sarg_pipeline(self) -> SARGPipeline:
        """The :class:`~sarg_integrations.SARGPipeline` this adapter runs (shared by calls)."""
        if self._sarg_pipeline is None:  # e.g. built with model_construct()
            self._sarg_pipeline = _build_pipeline(type(self), self.__dict__)
        return self._sarg_pipeline


def _normalize(cls: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    data = dict(data)
    if "schema" in data:
        if "triple_schema" in data:
            msg = f"{cls.__name__}: pass schema= or triple_schema=, not both (they are the same)"
            raise ConfigError(msg, field="schema", value=data["schema"])
        data["triple_schema"] = data.pop("schema")
    unknown = sorted(set(data) - set(cls.model_fields))
    if unknown:
        valid = sorted({*cls.model_fields, "schema"} - {"triple_schema"})
        msg = (
            f"{cls.__name__} got unexpected keyword argument(s) {unknown}; valid keyword "
            f"arguments: {valid}"
        )
        raise ConfigError(msg, field=unknown[0], value=data[unknown[0]])
    return data


def wrap_embedder(embedder: Any) -> Any:
    """A LangChain ``Embeddings`` or LlamaIndex ``BaseEmbedding`` becomes a SARG embedder.

    Anything with ``embed`` is kept as is (and anything else is left for
    ``SARGPipeline`` to reject with a clear error).
    """
    if callable(getattr(embedder, "embed", None)):
        return embedder
    if callable(getattr(embedder, "embed_documents", None)):
        from sarg_integrations.langchain.embeddings import LangChainEmbedder

        return LangChainEmbedder(embedder)
    if callable(getattr(embedder, "get_text_embedding_batch", None)):
        from sarg_integrations.llama_index.embeddings import LlamaIndexEmbedder

        return LlamaIndexEmbedder(embedder)
    return embedder


def wrap_extractor(extractor: Any, settings: Mapping[str, Any]) -> Any:
    """A LangChain or LlamaIndex language model becomes an ``LLMTripleExtractor``.

    Its prompt follows the configured schema; anything with ``extract`` is kept as is
    (and anything else is left for ``SARGPipeline`` to reject with a clear error).
    """
    if callable(getattr(extractor, "extract", None)):
        return extractor
    from sarg_integrations.models.completion import is_framework_model

    if is_framework_model(extractor):
        from sarg_integrations.extraction.llm import LLMTripleExtractor

        schema = settings.get("triple_schema") or (
            "generic_spo" if settings.get("strategy") == "tasr" else "reasoning"
        )
        return LLMTripleExtractor(extractor, prompt=schema)
    return extractor


def _build_pipeline(cls: type[SARGSettings], data: Mapping[str, Any]) -> SARGPipeline:
    owner = cls.__name__
    settings = {name: data[field] for name, field in _FIELD_FOR_CONFIG.items() if field in data}
    wrappers = cls._sarg_wrappers
    components = {
        name: wrappers[name](data[name], data) if name in wrappers else data[name]
        for name in _COMPONENTS
        if data.get(name) is not None and name not in cls._sarg_own_fields
    }
    pipeline = data.get("pipeline")
    if pipeline is not None:
        if not isinstance(pipeline, SARGPipeline):
            msg = (
                f"{owner}: pipeline={pipeline!r} must be a SARGPipeline; build one with "
                "SARGPipeline(SARGConfig(...)) or pass the settings as keyword arguments"
            )
            raise ConfigError(msg, field="pipeline", value=pipeline)
        given = sorted(
            [_FIELD_FOR_CONFIG[k] for k, v in settings.items() if v != getattr(_DEFAULTS, k)]
            + list(components)
        )
        if given:
            msg = (
                f"{owner}: pass either pipeline= or the settings {given}, not both; the "
                "pipeline already carries its config and collaborators"
            )
            raise ConfigError(msg, field=given[0], value=data.get(given[0]))
        return pipeline
    try:
        return SARGPipeline(SARGConfig(**settings), **components)
    except ConfigError as exc:
        msg = f"{owner}: {exc}"  # name the adapter the bad setting was given to
        raise ConfigError(msg, field=exc.field, value=exc.value) from None


def unique_ids(candidates: Sequence[str | None]) -> list[str]:
    """Return one unique, stable id per position.

    A missing or empty candidate becomes ``doc-{i}``; a repeated one gets ``#{i}``
    appended (``i`` is the position), so ids depend only on the input order.
    :data:`CHAINS_ID` is reserved for the chains document, so an input using it is
    renamed like a repeat.

    Example:
        >>> unique_ids(["a", None, "a", ""])
        ['a', 'doc-1', 'a#2', 'doc-3']
        >>> unique_ids([CHAINS_ID])
        ['sarg-reasoning-chains#0']
    """
    seen: set[str] = {CHAINS_ID}
    out: list[str] = []
    for index, candidate in enumerate(candidates):
        doc_id = str(candidate) if candidate not in (None, "") else f"doc-{index}"
        if doc_id in seen:
            doc_id = f"{doc_id}#{index}"
        while doc_id in seen:  # pragma: no cover - only with adversarial ids
            doc_id += "_"
        seen.add(doc_id)
        out.append(doc_id)
    return out


def caller_id(value: Any, argument: str) -> str | None:
    """Return an id found in caller data (a metadata ``"id"``) as a string, or ``None``.

    Strings and ints (numpy integer scalars too: a database row id) are accepted;
    anything else, such as a numpy array, is an :class:`InputError` naming ``argument``
    (comparing an array with ``None`` would raise a bare ``ValueError`` later).

    Example:
        >>> caller_id(7, "documents[0].metadata['id']"), caller_id(None, "x")
        ('7', None)
    """
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, bool) and getattr(value, "ndim", 0) == 0:
        scalar = value.item() if callable(getattr(value, "item", None)) else value
        if isinstance(scalar, int) and not isinstance(scalar, bool):
            return str(scalar)
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    msg = (
        f"{argument} is a {type(value).__name__} ({shown}); a document id must be a "
        "string or an int: set the document's own id, or store a string id there"
    )
    raise InputError(msg, argument=argument, value=value)


def with_sarg_metadata(metadata: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``metadata`` with SARG's ``record`` under ``"sarg"``.

    A ``"sarg"`` key the caller already had is never lost: SARG's keys are merged into
    it (a dict) and the caller's value is also kept whole under ``["sarg"]["caller"]``.

    Example:
        >>> with_sarg_metadata({"sarg": {"team": "x", "rank": 9}}, {"rank": 0})["sarg"]
        {'team': 'x', 'rank': 0, 'caller': {'team': 'x', 'rank': 9}}
    """
    out = dict(metadata)
    if "sarg" not in metadata:
        out["sarg"] = dict(record)
        return out
    theirs = metadata["sarg"]
    base = dict(theirs) if isinstance(theirs, Mapping) else {}
    out["sarg"] = {**base, **record, "caller": theirs}
    return out


def chain_records(chains: Sequence[ReasoningChain]) -> list[dict[str, Any]]:
    """Return the chains as JSON-ready dicts numbered like the prompt (``id`` is 1-based)."""
    records = []
    for number, chain in enumerate(chains, start=1):
        records.append(
            {
                "id": number,
                "text": chain.to_text(),
                "score": round(float(chain.score), 6),
                "direction": chain.direction.value,
                "nodes": list(chain.nodes),
                "document_ids": list(chain.document_ids),
                "hops": [
                    {
                        "hop": step,
                        "source": hop.source,
                        "relation": hop.relation,
                        "target": hop.target,
                        "relation_type": hop.relation_type.value,
                        "forward": hop.forward,
                        "document_ids": list(hop.document_ids),
                        "sentences": list(hop.sentences),
                    }
                    for step, hop in enumerate(chain.hops, start=1)
                ],
            }
        )
    return records


def result_summary(result: SARGResult) -> dict[str, Any]:
    """The run-level ``metadata["sarg"]``: chains, direction, entry nodes and counters.

    Timings and embedding-cache counters are left out (they depend on the machine and
    on earlier runs), so equal inputs give equal metadata; ``SARGResult.stats`` has them.
    """
    return {
        "query": result.query,
        "fallback": result.used_fallback,
        "fallback_reason": result.fallback_reason,
        "notes": list(result.notes),
        "direction": to_jsonable(result.direction),
        "keyphrases": None if result.keyphrases is None else list(result.keyphrases),
        "entry_nodes": to_jsonable(result.entry_nodes),
        "chains": chain_records(result.chains),
        "evidence_document_ids": [p.document_id for p in result.evidence],
        "skipped_documents": to_jsonable(result.skipped_documents),
        "counters": {k: v for k, v in result.stats.items() if not _run_dependent(k)},
    }


def _run_dependent(key: str) -> bool:
    return (
        key.startswith("time_")
        or key.endswith("_seconds")
        or key in {"embeddings_computed", "embeddings_reused"}
    )


def evidence_metadata(result: SARGResult, passage: EvidencePassage, rank: int) -> dict[str, Any]:
    """The ``metadata["sarg"]`` of one evidence document / node.

    Keys: ``role`` (``"evidence"``, or ``"context"`` on fallback), ``document_id``,
    ``rank`` (0-based position among the evidence), ``chain_ids`` (1-based, as in the
    prompt), ``hops`` (``{"chain", "hop", "source", "relation", "target"}`` for every hop
    this document supports), ``scores`` (the score of each chain in ``chain_ids``),
    ``score`` (the best of them, or ``None``), ``selected_by`` (``"chain"``,
    ``"linked"``, ``"entry"``, ``"bridge"``, ``"relevance"`` or ``"context"``; see
    :class:`~sarg_integrations.schema.EvidencePassage`), ``direction``, ``fallback`` and
    ``fallback_reason``.
    """
    hops = [
        {
            "chain": number,
            "hop": step,
            "source": hop.source,
            "relation": hop.relation,
            "target": hop.target,
        }
        for number, chain in enumerate(result.chains, start=1)
        if number in passage.chain_ids
        for step, hop in enumerate(chain.hops, start=1)
        if passage.document_id in hop.document_ids
    ]
    scores = [round(float(result.chains[n - 1].score), 6) for n in passage.chain_ids]
    return {
        "role": "context" if result.used_fallback else "evidence",
        "document_id": passage.document_id,
        "rank": rank,
        "chain_ids": list(passage.chain_ids),
        "selected_by": passage.selected_by,
        "hops": hops,
        "scores": scores,
        "score": max(scores) if scores else None,
        "direction": result.direction.direction.value if result.direction else None,
        "fallback": result.used_fallback,
        "fallback_reason": result.fallback_reason,
    }


def empty_prompt(pipeline: SARGPipeline, query: str) -> str:
    """The flat prompt for a query with no retrieved documents (what flat RAG would send)."""
    return compile_flat_prompt(query, [], pipeline.prompt_template)
