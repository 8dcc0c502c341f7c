"""The SARG pipeline: validate → extract → structure (a strategy) → compile.

:class:`SARGPipeline` is orchestration only. It validates the input, runs the
extractor through an :class:`~sarg_integrations.extraction.runner.ExtractionRunner`,
hands the triples to its :class:`~sarg_integrations.strategies.Strategy` (SARG's
build → direction → match → traverse, or TaSR), compiles the evidence and the prompt
(:func:`~sarg_integrations.evidence.compile_evidence`) and returns one
:class:`~sarg_integrations.schema.SARGResult` holding every intermediate product, the
compiled prompt and per-stage timings. When no triples, no entry node or no chain is
found, the prompt falls back to the flat retrieved context and the result says why
(with ``config.evidence_fill`` the fallback context is the documents that bridge-guided
relevance picks; see :mod:`sarg_integrations.evidence`).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterable
from typing import Any

from sarg_integrations.config import SARGConfig, check_deadline
from sarg_integrations.direction import DirectionPredictor
from sarg_integrations.direction.classifier import default_direction_classifier
from sarg_integrations.documents import DocumentLike, coerce_documents, validate_query
from sarg_integrations.embedding import CachedEmbedder, Embedder, SentenceTransformerEmbedder
from sarg_integrations.errors import ConfigError
from sarg_integrations.evidence import (
    compile_evidence,
    ranks_documents,
    restated_entry_similarity,
)
from sarg_integrations.extraction import default_extractor
from sarg_integrations.extraction.base import TripleExtractor
from sarg_integrations.extraction.runner import ExtractionRunner, collect
from sarg_integrations.judge import EvidenceJudge, default_evidence_judge
from sarg_integrations.links import (
    EventReader,
    PastTenseEventReader,
    PresentTenseProfileReader,
    ProfileReader,
)
from sarg_integrations.matching import KeyBERTKeyphraseExtractor, KeyphraseExtractor
from sarg_integrations.prompting import PromptTemplate
from sarg_integrations.schema import (
    ReasoningChain,
    SARGResult,
    SkippedDocument,
    SourceDocument,
    Triple,
)
from sarg_integrations.strategies.base import RunContext, StageObserver, Strategy, Structure
from sarg_integrations.strategies.sarg import SARGStrategy
from sarg_integrations.traversal import disconnected_ends_note

__all__ = ["SARGPipeline", "StageObserver"]


def _require(obj: Any, method: str, argument: str, hint: str) -> None:
    if obj is not None and not callable(getattr(obj, method, None)):
        msg = f"{argument}={obj!r} has no {method}() method; {hint}"
        raise ConfigError(msg, field=argument, value=obj)


class SARGPipeline:
    """Structure-Augmented Reasoning Generation over a set of retrieved documents.

    Args:
        config: Settings; defaults follow the paper (β = 3, K = 3).
        extractor: A :class:`~sarg_integrations.extraction.TripleExtractor`, or a name:
            ``"tagger"`` (the default: the learned span tagger,
            :class:`~sarg_integrations.extraction.tagger.TaggerExtractor`), ``"rules"``
            (the spaCy :class:`~sarg_integrations.extraction.RuleBasedExtractor`, also the
            default for ``schema="generic_spo"``), ``"union"`` (the tagger plus the rules'
            cues), or the folder of a tagger trained with ``sarg train-extractor``.
        embedder: An :class:`~sarg_integrations.embedding.Embedder`; default the
            embedded all-MiniLM-L6-v2. Wrapped in a cache so each text is encoded once.
        direction_classifier: A
            :class:`~sarg_integrations.direction.DirectionPredictor`; default the
            packaged :class:`~sarg_integrations.DirectionClassifier` (a head over the
            shared MiniLM embedding; pass
            :class:`~sarg_integrations.CueWordDirectionClassifier` for the rule-based
            fallback). Ignored when ``config.direction`` is set.
        keyphrase_extractor: A :class:`~sarg_integrations.matching.KeyphraseExtractor`;
            default KeyBERT over the pipeline's embedder.
        prompt_template: Overrides the prompt texts.
        query_decomposer: For ``config.strategy="tasr"``: a
            :class:`~sarg_integrations.tasr.QueryDecomposer`, or a language model
            (LangChain, LlamaIndex, callable) to wrap in an
            :class:`~sarg_integrations.tasr.LLMQueryDecomposer`; default ``llm``'s, else
            the offline :class:`~sarg_integrations.tasr.RuleQueryDecomposer`.
        entity_typer: For TaSR: an :class:`~sarg_integrations.tasr.EntityTyper` or a
            language model; default ``llm``'s, else the offline
            :class:`~sarg_integrations.tasr.OfflineEntityTyper`.
        llm: For TaSR: one language model that both decomposes and types (the
            offline typer stays the fallback for unreadable typing answers).
        event_reader: An :class:`~sarg_integrations.links.EventReader` telling documents
            that state an event from profiles (a story's first step often states no
            relation); default :class:`~sarg_integrations.links.PastTenseEventReader`
            (the packaged spaCy pipeline, loaded on first use).
        profile_reader: A :class:`~sarg_integrations.links.ProfileReader` telling
            profiles and general facts ("Norovirus is a common cause of stomach illness")
            from what happened: asked what happened, no chain runs through them and no
            document is linked by them; default
            :class:`~sarg_integrations.links.PresentTenseProfileReader` (spaCy, as above).
        evidence_judge: An :class:`~sarg_integrations.judge.EvidenceJudge` that checks
            a causal question's evidence (``config.evidence_judge``); default
            :func:`~sarg_integrations.judge.default_evidence_judge`, the two shipped
            :class:`~sarg_integrations.judge.LearnedEvidenceJudge` models (LoRA adapters over
            the packaged MiniLM, one reading each document alone, one the whole
            retrieved set; loaded on first use) combined.

    Models load lazily on the first run, so constructing a pipeline is cheap.

    Example:
        >>> class Letters:  # a toy embedder: bag of letters
        ...     def embed(self, texts):
        ...         import numpy as np
        ...         return np.array([[t.count(c) for c in "abcdefghijklmnopqrstuvwxyz"]
        ...                          for t in texts], dtype=float)
        >>> class Rules:  # a toy extractor: "X causes Y." sentences
        ...     def extract(self, doc):
        ...         out = []
        ...         for s in doc.text.split("."):
        ...             if " causes " in s:
        ...                 cause, effect = s.strip().split(" causes ")
        ...                 out.append(Triple(cause, "causes", effect, document_id=doc.id,
        ...                                   sentence=s.strip()))
        ...         return out
        >>> class Keywords:
        ...     def extract(self, query):
        ...         return ["storm"]
        >>> from sarg_integrations.direction import CueWordDirectionClassifier
        >>> pipe = SARGPipeline(SARGConfig(similarity_threshold=0.9), extractor=Rules(),
        ...                     embedder=Letters(), keyphrase_extractor=Keywords(),
        ...                     direction_classifier=CueWordDirectionClassifier())
        >>> result = pipe.run("What does a storm lead to?",
        ...                   ["storm causes rain. rain causes flood.", "flood causes damage."])
        >>> result.direction.direction.value, result.chains[0].to_text()
        ('forward', 'storm --[causes]--> rain --[causes]--> flood --[causes]--> damage')
    """

    def __init__(
        self,
        config: SARGConfig | None = None,
        *,
        extractor: TripleExtractor | str | os.PathLike[str] | None = None,
        embedder: Embedder | None = None,
        direction_classifier: DirectionPredictor | None = None,
        keyphrase_extractor: KeyphraseExtractor | None = None,
        prompt_template: PromptTemplate | None = None,
        query_decomposer: Any = None,
        entity_typer: Any = None,
        llm: Any = None,
        event_reader: EventReader | None = None,
        profile_reader: ProfileReader | None = None,
        evidence_judge: EvidenceJudge | None = None,
    ) -> None:
        if config is not None and not isinstance(config, SARGConfig):
            msg = (
                f"config must be a SARGConfig, got {type(config).__name__}; "
                "build one with SARGConfig(...)"
            )
            raise ConfigError(msg, field="config", value=config)
        self.config = config or SARGConfig()
        if isinstance(extractor, (str, os.PathLike)):
            from sarg_integrations.extraction.choice import resolve_extractor

            extractor = resolve_extractor(extractor, self.config.schema)
        _require(
            extractor,
            "extract",
            "extractor",
            "pass an object with extract(document) -> list[Triple]",
        )
        _require(embedder, "embed", "embedder", "pass an object with embed(texts) -> array")
        _require(
            direction_classifier,
            "predict_direction",
            "direction_classifier",
            "pass an object with "
            "predict_direction(query, query_embedding=None) -> DirectionPrediction",
        )
        _require(
            keyphrase_extractor,
            "extract",
            "keyphrase_extractor",
            "pass an object with extract(query) -> list[str]",
        )
        _require(
            event_reader,
            "tells_event",
            "event_reader",
            "pass an object with tells_event(text) -> bool",
        )
        _require(
            profile_reader,
            "states_profile",
            "profile_reader",
            "pass an object with states_profile(text) -> bool",
        )
        _require(
            evidence_judge,
            "score",
            "evidence_judge",
            "pass an object with score(query, texts) -> list[float] (one score in [0, 1] per text)",
        )
        if prompt_template is not None and not isinstance(prompt_template, PromptTemplate):
            msg = f"prompt_template must be a PromptTemplate, got {type(prompt_template).__name__}"
            raise ConfigError(msg, field="prompt_template", value=prompt_template)
        self.extractor = extractor if extractor is not None else default_extractor(self.config)
        self.embedder = CachedEmbedder(
            embedder or SentenceTransformerEmbedder(), max_size=self.config.embedding_cache_size
        )
        self.direction_classifier = direction_classifier or default_direction_classifier(embedder)
        self.keyphrase_extractor = keyphrase_extractor or KeyBERTKeyphraseExtractor(
            self.embedder,
            top_n=self.config.max_keyphrases,
            ngram_max=self.config.keyphrase_ngram_max,
        )
        self.prompt_template = prompt_template or PromptTemplate()
        self.event_reader = event_reader or PastTenseEventReader()
        self.profile_reader = profile_reader or PresentTenseProfileReader()
        # Loaded on the first causal question it judges, not here: construction stays fast.
        self.evidence_judge: EvidenceJudge | None = evidence_judge or (
            default_evidence_judge() if self.config.evidence_judge else None
        )
        self.tasr_strategy: Any = None
        if self.config.strategy == "tasr" or query_decomposer or entity_typer or llm:
            from sarg_integrations.tasr.strategy import build_tasr_strategy

            self.tasr_strategy = build_tasr_strategy(
                self.config,
                self.embedder,
                query_decomposer=query_decomposer,
                entity_typer=entity_typer,
                llm=llm,
            )
        self.strategy: Strategy = (
            self.tasr_strategy
            if self.config.strategy == "tasr"
            else SARGStrategy(
                self.config,
                embedder=self.embedder,
                keyphrase_extractor=self.keyphrase_extractor,
                direction_classifier=self.direction_classifier,
            )
        )

    # ------------------------------------------------------------------ public API

    def run(
        self,
        query: str,
        documents: Iterable[DocumentLike],
        *,
        observer: StageObserver | None = None,
        deadline: float | None = None,
    ) -> SARGResult:
        """Run SARG on ``documents`` for ``query`` and return everything it produced.

        Args:
            query: The user's question.
            documents: Strings, ``{"id", "text", ...}`` dicts or
                :class:`~sarg_integrations.schema.SourceDocument` records.
            observer: Receives every stage (for tracing); see :class:`StageObserver`.
            deadline: Seconds extraction may take for this run; ``None`` uses
                ``config.deadline_seconds``. Documents not extracted by then are listed
                in ``skipped_documents`` (:data:`PAST_DEADLINE`) and the run goes on
                with the triples it has. With a deadline, extraction runs in a daemon
                worker thread that is abandoned if it does not return in time, so
                even an extractor that hangs cannot hang the caller.

        Raises:
            InputError: Empty query, no documents, a malformed document or duplicate ids.
            ConfigError: ``deadline`` is not a number of seconds > 0.
        """
        query, docs, limit, ctx = self._begin(query, documents, deadline, observer)
        with ctx.stage("extract") as summary:
            outcomes = self._runner().run(docs, limit)
            triples, skipped = self._collect(docs, outcomes, ctx, summary)
        return self._structure(query, docs, triples, skipped, ctx)

    async def arun(
        self,
        query: str,
        documents: Iterable[DocumentLike],
        *,
        observer: StageObserver | None = None,
        deadline: float | None = None,
    ) -> SARGResult:
        """Async :meth:`run`, with native async extraction when the extractor has it.

        ``aextract_many`` (or ``aextract`` per document, concurrently) is awaited when
        the extractor defines it; otherwise extraction runs in a worker thread. The CPU
        stages run in a worker thread so the event loop stays responsive. ``deadline``
        works as in :meth:`run`; pending async extractions are cancelled when it passes.
        """
        query, docs, limit, ctx = self._begin(query, documents, deadline, observer)
        with ctx.stage("extract") as summary:
            outcomes = await self._runner().arun(docs, limit)
            triples, skipped = self._collect(docs, outcomes, ctx, summary)
        return await asyncio.to_thread(self._structure, query, docs, triples, skipped, ctx)

    def warm_up(self) -> None:
        """Load the models now (the encoder, and the extractor's if it has ``warm_up``).

        Runs load models lazily; call this at service start to keep the first query fast.
        """
        for component in (self.extractor, self.embedder):
            warm = getattr(component, "warm_up", None)
            if callable(warm):
                warm()

    # ------------------------------------------------------------------ stages

    def _begin(
        self,
        query: str,
        documents: Iterable[DocumentLike],
        deadline: float | None,
        observer: StageObserver | None,
    ) -> tuple[str, list[SourceDocument], float | None, RunContext]:
        """Validate the input and start the run's clock and stage bookkeeping."""
        limit = self.config.deadline_seconds if deadline is None else None
        if deadline is not None:
            limit = check_deadline("deadline", deadline)
        query = validate_query(query)
        docs = coerce_documents(documents)
        ctx = RunContext(observer)
        if limit is not None:
            ctx.stats["deadline_seconds"] = limit
        return query, docs, limit, ctx

    def _runner(self) -> ExtractionRunner:
        return ExtractionRunner(self.extractor, show_progress=self.config.show_progress)

    @staticmethod
    def _collect(
        docs: list[SourceDocument], outcomes: list[Any], ctx: RunContext, summary: dict[str, Any]
    ) -> tuple[list[Triple], list[SkippedDocument]]:
        triples, skipped = collect(docs, outcomes, ctx.stats)
        summary.update(documents=len(docs), documents_skipped=len(skipped), triples=len(triples))
        return triples, skipped

    def _structure(
        self,
        query: str,
        docs: list[SourceDocument],
        triples: list[Triple],
        skipped: list[SkippedDocument],
        ctx: RunContext,
    ) -> SARGResult:
        """Run the strategy, compile the prompt, and assemble the result."""
        embedder = self.embedder
        encode_before, misses_before, hits_before = (
            embedder.encode_seconds,
            embedder.misses,
            embedder.hits,
        )
        with ctx.stage("load_models"):
            embedder.warm_up()
        structuring_start = time.perf_counter()
        with ctx.stage("encode") as summary:
            # The evidence budget ranks every document: the query and the documents are
            # encoded in one call, as a dense re-ranker encodes them, and the strategy and
            # the budget find them cached.
            texts = [query, *(d.text for d in docs if d.text.strip())]
            encoded = ranks_documents(self.config) and embedder.max_size >= len(texts)
            if encoded:
                embedder.embed(texts)
            summary.update(texts=len(texts) if encoded else 0)
        found: Structure = self.strategy.structure(query, docs, triples, ctx)
        with ctx.stage("compile") as summary:
            compiled = compile_evidence(
                query,
                docs,
                found.chains,
                found.fallback_reason,
                config=self.config,
                embedder=embedder,
                template=self.prompt_template,
                query_vector=found.query_vector,
                stats=ctx.stats,
                triples=triples,
                # A forced direction is a traversal ablation: it does not say what the
                # question asks, so the evidence policy then treats it as causal.
                direction=(
                    found.direction.asked
                    if found.direction is not None and self.config.direction is None
                    else None
                ),
                entry_similarity=restated_entry_similarity(query, found.entry_nodes),
                entry_documents={
                    e.node: found.graph.graph.nodes[e.node].get("documents", ())
                    for e in found.entry_nodes
                    if e.node in found.graph.graph
                },
                event_reader=self.event_reader,
                profile_reader=self.profile_reader,
                judge=self.evidence_judge,
            )
            evidence, prompt, chains = compiled.evidence, compiled.prompt, compiled.chains
            summary.update(
                fallback_reason=compiled.fallback_reason,
                evidence_documents=[p.document_id for p in evidence],
                prompt_chars=len(prompt),
            )
        end = time.perf_counter()
        graph = found.graph
        ctx.stats.update(
            {
                "documents": len(docs),
                "documents_skipped": len(skipped),
                "triples": len(triples),
                "nodes": graph.number_of_nodes,
                "edges": graph.number_of_edges,
                **found.counters,
                "chains_kept": len(chains),
                "embeddings_computed": embedder.misses - misses_before,
                "embeddings_reused": embedder.hits - hits_before,
                "time_encoder_ms": round((embedder.encode_seconds - encode_before) * 1000.0, 3),
                "time_structuring_ms": round((end - structuring_start) * 1000.0, 3),
                "time_total_ms": round((end - ctx.start) * 1000.0, 3),
            }
        )
        return SARGResult(
            query=query,
            document_ids=[d.id for d in docs],
            triples=triples,
            graph=graph,
            keyphrases=found.keyphrases,
            entry_nodes=found.entry_nodes,
            direction=found.direction,
            candidate_chains=found.candidate_chains,
            chains=chains,
            evidence=evidence,
            prompt=prompt,
            fallback_reason=compiled.fallback_reason,
            skipped_documents=skipped,
            stats=ctx.stats,
            config=self.config.to_dict(),
            strategy=self.strategy.name,
            trace=found.trace,
            notes=_notes(found, chains),
        )


def _notes(found: Structure, chains: list[ReasoningChain]) -> list[str]:
    """The result's notes: things true of the chains in the prompt that the reader should know."""
    direction = found.direction.direction if found.direction is not None else None
    note = disconnected_ends_note(found.graph.graph, found.entry_nodes, chains, direction)
    return [note] if note else []
