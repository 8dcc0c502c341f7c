"""The SARG pipeline: extract → build → match → direction → traverse → compile.

:class:`SARGPipeline` wires the stages together with injected collaborators and
returns one :class:`~sarg_integrations.schema.SARGResult` holding every intermediate
product, the compiled prompt and per-stage timings. When no triples, no entry node or
no chain is found, the prompt falls back to the flat retrieved context and the result
says why: SARG never hands the generator less context than flat RAG would.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import time
from collections.abc import Iterable, Sequence
from typing import Any

from sarg_integrations.config import SARGConfig
from sarg_integrations.direction import CueWordDirectionClassifier, DirectionClassifier
from sarg_integrations.documents import DocumentLike, coerce_documents, validate_query
from sarg_integrations.embedding import (
    CachedEmbedder,
    Embedder,
    SentenceTransformerEmbedder,
    cosine_matrix,
)
from sarg_integrations.errors import ConfigError
from sarg_integrations.extraction.base import TripleExtractor
from sarg_integrations.graph import build_reasoning_graph
from sarg_integrations.matching import (
    KeyBERTKeyphraseExtractor,
    KeyphraseExtractor,
    match_entry_nodes,
)
from sarg_integrations.prompting import PromptTemplate, compile_flat_prompt, compile_prompt
from sarg_integrations.schema import (
    DirectionPrediction,
    EvidencePassage,
    ReasoningChain,
    SARGResult,
    SkippedDocument,
    SourceDocument,
    Triple,
)
from sarg_integrations.traversal import (
    BeamSearchStats,
    beam_search_chains,
    chain_from_nodes,
    select_chains,
)

__all__ = ["SARGPipeline"]

NO_TRIPLES = "no reasoning-schema triples were extracted from the documents"
NO_ENTRY_NODES = "no graph node is similar enough to the query (similarity_threshold={tau})"
NO_CHAINS = "no entry node has a neighbour in the {direction} direction, so no chain was found"


class _Timer:
    """Accumulates wall-clock milliseconds per stage into ``stats``."""

    def __init__(self, stats: dict[str, Any]) -> None:
        self.stats = stats

    def stage(self, name: str) -> _Stage:
        return _Stage(self.stats, f"time_{name}_ms")


class _Stage:
    def __init__(self, stats: dict[str, Any], key: str) -> None:
        self.stats, self.key = stats, key

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        elapsed = (time.perf_counter() - self.start) * 1000.0
        self.stats[self.key] = round(self.stats.get(self.key, 0.0) + elapsed, 3)


def _require(obj: Any, method: str, argument: str, hint: str) -> None:
    if obj is not None and not callable(getattr(obj, method, None)):
        msg = f"{argument}={obj!r} has no {method}() method; {hint}"
        raise ConfigError(msg, field=argument, value=obj)


class SARGPipeline:
    """Structure-Augmented Reasoning Generation over a set of retrieved documents.

    Args:
        config: Settings; defaults follow the paper (β = 3, K = 3).
        extractor: A :class:`~sarg_integrations.extraction.TripleExtractor`; default the
            offline spaCy :class:`~sarg_integrations.extraction.RuleBasedExtractor` with
            ``config.schema``.
        embedder: An :class:`~sarg_integrations.embedding.Embedder`; default the
            embedded all-MiniLM-L6-v2. Wrapped in a cache so each text is encoded once.
        direction_classifier: A
            :class:`~sarg_integrations.direction.DirectionClassifier`; default the
            cue-word classifier. Ignored when ``config.direction`` is set.
        keyphrase_extractor: A :class:`~sarg_integrations.matching.KeyphraseExtractor`;
            default KeyBERT over the pipeline's embedder.
        prompt_template: Overrides the prompt texts.

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
        >>> pipe = SARGPipeline(SARGConfig(similarity_threshold=0.9), extractor=Rules(),
        ...                     embedder=Letters(), keyphrase_extractor=Keywords())
        >>> result = pipe.run("What does a storm lead to?",
        ...                   ["storm causes rain. rain causes flood.", "flood causes damage."])
        >>> result.direction.direction.value, result.chains[0].to_text()
        ('forward', 'storm --[causes]--> rain --[causes]--> flood --[causes]--> damage')
    """

    def __init__(
        self,
        config: SARGConfig | None = None,
        *,
        extractor: TripleExtractor | None = None,
        embedder: Embedder | None = None,
        direction_classifier: DirectionClassifier | None = None,
        keyphrase_extractor: KeyphraseExtractor | None = None,
        prompt_template: PromptTemplate | None = None,
    ) -> None:
        if config is not None and not isinstance(config, SARGConfig):
            msg = f"config must be a SARGConfig, got {type(config).__name__}; build one with SARGConfig(...)"
            raise ConfigError(msg, field="config", value=config)
        self.config = config or SARGConfig()
        _require(extractor, "extract", "extractor", "pass an object with extract(document) -> list[Triple]")
        _require(embedder, "embed", "embedder", "pass an object with embed(texts) -> array")
        _require(
            direction_classifier,
            "predict",
            "direction_classifier",
            "pass an object with predict(query) -> DirectionPrediction",
        )
        _require(
            keyphrase_extractor,
            "extract",
            "keyphrase_extractor",
            "pass an object with extract(query) -> list[str]",
        )
        if prompt_template is not None and not isinstance(prompt_template, PromptTemplate):
            msg = f"prompt_template must be a PromptTemplate, got {type(prompt_template).__name__}"
            raise ConfigError(msg, field="prompt_template", value=prompt_template)
        if extractor is None:
            from sarg_integrations.extraction.rules import RuleBasedExtractor

            extractor = RuleBasedExtractor(schema=self.config.schema)
        self.extractor = extractor
        self.embedder = CachedEmbedder(
            embedder or SentenceTransformerEmbedder(), max_size=self.config.embedding_cache_size
        )
        self.direction_classifier = direction_classifier or CueWordDirectionClassifier()
        self.keyphrase_extractor = keyphrase_extractor or KeyBERTKeyphraseExtractor(
            self.embedder, top_n=self.config.max_keyphrases, ngram_max=self.config.keyphrase_ngram_max
        )
        self.prompt_template = prompt_template or PromptTemplate()

    # ------------------------------------------------------------------ public API

    def run(self, query: str, documents: Iterable[DocumentLike]) -> SARGResult:
        """Run SARG on ``documents`` for ``query`` and return everything it produced.

        Args:
            query: The user's question.
            documents: Strings, ``{"id", "text", ...}`` dicts or
                :class:`~sarg_integrations.schema.SourceDocument` records.

        Raises:
            InputError: Empty query, no documents, a malformed document or duplicate ids.
        """
        query = validate_query(query)
        docs = coerce_documents(documents)
        stats: dict[str, Any] = {}
        timer = _Timer(stats)
        start = time.perf_counter()
        with timer.stage("extract"):
            triples, skipped = self._extract(docs)
        return self._structure(query, docs, triples, skipped, stats, timer, start)

    async def arun(self, query: str, documents: Iterable[DocumentLike]) -> SARGResult:
        """Async :meth:`run`: native ``aextract`` when the extractor has one.

        Extraction of several documents runs concurrently through ``aextract``; CPU
        stages run in a worker thread so the event loop stays responsive.
        """
        query = validate_query(query)
        docs = coerce_documents(documents)
        stats: dict[str, Any] = {}
        timer = _Timer(stats)
        start = time.perf_counter()
        with timer.stage("extract"):
            aextract = getattr(self.extractor, "aextract", None)
            if aextract is not None and inspect.iscoroutinefunction(aextract):
                triples, skipped = await self._aextract(docs, aextract)
            else:
                triples, skipped = await asyncio.to_thread(self._extract, docs)
        return await asyncio.to_thread(
            self._structure, query, docs, triples, skipped, stats, timer, start
        )

    # ------------------------------------------------------------------ stages

    def _extract(self, docs: Sequence[SourceDocument]) -> tuple[list[Triple], list[SkippedDocument]]:
        skipped: list[SkippedDocument] = []
        usable = []
        for doc in docs:
            if doc.text.strip():
                usable.append(doc)
            else:
                skipped.append(SkippedDocument(doc.id, "empty or whitespace-only text"))
        per_doc: list[list[Triple] | BaseException] = []
        extract_many = getattr(self.extractor, "extract_many", None)
        if callable(extract_many) and not self.config.show_progress:
            try:
                per_doc = list(extract_many(usable))
                if len(per_doc) != len(usable):
                    per_doc = []
            except Exception:  # noqa: BLE001 - retried one by one to find the culprit
                per_doc = []
        if not per_doc and usable:
            per_doc = [self._extract_one(doc) for doc in self._progress(usable)]
        return self._collect(usable, per_doc, skipped)

    def _extract_one(self, doc: SourceDocument) -> list[Triple] | BaseException:
        try:
            return list(self.extractor.extract(doc))
        except Exception as exc:  # noqa: BLE001 - reported per document, never raised
            return exc

    async def _aextract(
        self, docs: Sequence[SourceDocument], aextract: Any
    ) -> tuple[list[Triple], list[SkippedDocument]]:
        skipped = [SkippedDocument(d.id, "empty or whitespace-only text") for d in docs if not d.text.strip()]
        usable = [d for d in docs if d.text.strip()]
        outcomes = await asyncio.gather(*(aextract(d) for d in usable), return_exceptions=True)
        return self._collect(usable, list(outcomes), skipped)

    def _collect(
        self,
        usable: Sequence[SourceDocument],
        per_doc: Sequence[Any],
        skipped: list[SkippedDocument],
    ) -> tuple[list[Triple], list[SkippedDocument]]:
        triples: list[Triple] = []
        for doc, outcome in zip(usable, per_doc):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, Exception):
                    raise outcome  # KeyboardInterrupt, SystemExit, CancelledError
                reason = f"extractor error: {type(outcome).__name__}: {outcome}"
                skipped.append(SkippedDocument(doc.id, reason))
                continue
            kept = [
                t if t.document_id == doc.id else dataclasses.replace(t, document_id=doc.id)
                for t in outcome
                if isinstance(t, Triple) and t.cause.strip() and t.effect.strip()
            ]
            if not kept:
                skipped.append(SkippedDocument(doc.id, "no reasoning-schema triples found"))
            triples.extend(kept)
        order = {d.id: i for i, d in enumerate(usable)}
        skipped.sort(key=lambda s: order.get(s.document_id, -1))
        return triples, skipped

    def _progress(self, items: Sequence[SourceDocument]) -> Iterable[SourceDocument]:
        if not self.config.show_progress:
            return items
        from tqdm.auto import tqdm

        return tqdm(items, desc="extracting", unit="doc")

    def _structure(
        self,
        query: str,
        docs: Sequence[SourceDocument],
        triples: list[Triple],
        skipped: list[SkippedDocument],
        stats: dict[str, Any],
        timer: _Timer,
        start: float,
    ) -> SARGResult:
        cfg = self.config
        encode_before = self.embedder.encode_seconds
        misses_before, hits_before = self.embedder.misses, self.embedder.hits
        structuring_start = time.perf_counter()

        with timer.stage("build"):
            graph = build_reasoning_graph(
                triples, embedder=self.embedder, merge_threshold=cfg.merge_threshold
            )
        g = graph.graph
        nodes = sorted(g.nodes)

        with timer.stage("match"):
            keyphrases = self.keyphrase_extractor.extract(query) if nodes else []
            texts = [query, *keyphrases, *nodes]
            vectors = self.embedder.embed(texts)
            query_vec = vectors[:1]
            phrase_vecs = vectors[1 : 1 + len(keyphrases)]
            node_vecs = vectors[1 + len(keyphrases) :]
            entries = match_entry_nodes(
                nodes,
                node_vecs,
                keyphrases,
                phrase_vecs,
                threshold=cfg.similarity_threshold,
                max_nodes=cfg.max_entry_nodes,
            )

        with timer.stage("direction"):
            direction = self._direction(query)

        with timer.stage("traverse"):
            query_sim = (
                dict(zip(nodes, cosine_matrix(node_vecs, query_vec)[:, 0].tolist()))
                if nodes
                else {}
            )
            search_stats = BeamSearchStats()
            found = list(
                beam_search_chains(
                    g,
                    [e.node for e in entries],
                    query_sim,
                    direction.direction,
                    width=cfg.beam_width,
                    max_depth=cfg.max_depth,
                    stats=search_stats,
                )
            )
            candidates = [
                chain_from_nodes(g, chain_nodes, score, direction.direction)
                for chain_nodes, score in found
            ]
            kept, candidates = select_chains(candidates, cfg.top_k)

        with timer.stage("compile"):
            fallback = None
            if not triples:
                fallback = NO_TRIPLES
            elif not entries:
                fallback = NO_ENTRY_NODES.format(tau=cfg.similarity_threshold)
            elif not kept:
                fallback = NO_CHAINS.format(direction=direction.direction.value)
            if fallback is None:
                evidence = self._evidence(docs, kept)
                prompt = compile_prompt(query, kept, evidence, self.prompt_template)
            else:
                evidence = [
                    EvidencePassage(d.id, d.text, (), dict(d.metadata)) for d in docs if d.text.strip()
                ]
                prompt = compile_flat_prompt(query, evidence, self.prompt_template)

        end = time.perf_counter()
        encoder_ms = (self.embedder.encode_seconds - encode_before) * 1000.0
        stats.update(
            {
                "documents": len(docs),
                "documents_skipped": len(skipped),
                "triples": len(triples),
                "nodes": graph.number_of_nodes,
                "edges": graph.number_of_edges,
                "merges": len(graph.merges),
                "self_loops_dropped": graph.self_loops_dropped,
                "keyphrases": len(keyphrases),
                "entry_nodes": len(entries),
                "chains_considered": len(candidates),
                "chains_kept": len(kept),
                "beam_expansions": search_stats.expansions,
                "beam_pruned": search_stats.pruned,
                "chains_capped": search_stats.capped,
                "embeddings_computed": self.embedder.misses - misses_before,
                "embeddings_reused": self.embedder.hits - hits_before,
                "time_encoder_ms": round(encoder_ms, 3),
                "time_structuring_ms": round((end - structuring_start) * 1000.0, 3),
                "time_total_ms": round((end - start) * 1000.0, 3),
            }
        )
        return SARGResult(
            query=query,
            document_ids=[d.id for d in docs],
            triples=triples,
            graph=graph,
            keyphrases=list(keyphrases),
            entry_nodes=entries,
            direction=direction,
            candidate_chains=candidates,
            chains=kept,
            evidence=evidence,
            prompt=prompt,
            fallback_reason=fallback,
            skipped_documents=skipped,
            stats=stats,
            config=cfg.to_dict(),
        )

    def _direction(self, query: str) -> DirectionPrediction:
        if self.config.direction is not None:
            from sarg_integrations.direction import FixedDirection

            return FixedDirection(self.config.direction).predict(query)
        prediction = self.direction_classifier.predict(query)
        if not isinstance(prediction, DirectionPrediction):
            msg = (
                f"direction_classifier.predict returned {type(prediction).__name__}; "
                "it must return a DirectionPrediction"
            )
            raise ConfigError(msg, field="direction_classifier", value=self.direction_classifier)
        return prediction

    def _evidence(
        self, docs: Sequence[SourceDocument], chains: Sequence[ReasoningChain]
    ) -> list[EvidencePassage]:
        by_id = {d.id: d for d in docs}
        cited: dict[str, list[int]] = {}
        sentences: dict[str, list[str]] = {}
        for number, chain in enumerate(chains, start=1):
            for hop in chain.hops:
                for doc_id, sentence in zip(hop.document_ids, hop.sentences):
                    numbers = cited.setdefault(doc_id, [])
                    if number not in numbers:
                        numbers.append(number)
                    doc_sentences = sentences.setdefault(doc_id, [])
                    if sentence and sentence not in doc_sentences:
                        doc_sentences.append(sentence)
        passages = []
        for doc_id, numbers in cited.items():
            doc = by_id.get(doc_id)
            if doc is None:
                continue
            if self.config.evidence == "sentences" and sentences.get(doc_id):
                text = " ".join(sentences[doc_id])
            else:
                text = doc.text
            passages.append(EvidencePassage(doc_id, text, tuple(numbers), dict(doc.metadata)))
        return passages
