"""A tiny corpus and collaborators shared by the adapter tests (fakes only, no models)."""

from __future__ import annotations

import json
from typing import Any

from fakes import HashingEmbedder, NoProfiles, PatternExtractor

from sarg_integrations import (
    CueWordDirectionClassifier,
    SARGConfig,
    SARGPipeline,
    SARGResult,
    SourceDocument,
)

QUERY = "What does heavy rain lead to?"
# Nothing in the corpus is like the museum: no entry node -> fallback. (A question about
# heavy rain always finds chains: when "why" finds no cause, the walk widens to both ways.)
FALLBACK_QUERY = "Why did the museum close early?"


class CorpusKeyphrases:
    """"heavy rain" for the corpus's questions; any other question is its own key phrase."""

    def extract(self, query: str) -> list[str]:
        return ["heavy rain"] if "heavy rain" in query.lower() else [query]

CORPUS: list[dict[str, Any]] = [
    {
        "id": "d1",
        "text": "Heavy rain causes flooding. The town has a long history.",
        "metadata": {"source": "weather.txt", "page": 1},
    },
    {"id": "d2", "text": "flooding causes crop damage.", "metadata": {"source": "farm.txt"}},
    {"id": "d3", "text": "crop damage leads to food shortage.", "metadata": {"source": "farm.txt"}},
    {"id": "d4", "text": "Tourism requires good weather.", "metadata": {"source": "travel.txt"}},
    {"id": "d5", "text": "flooding leads to road closures.", "metadata": {"source": "roads.txt"}},
]


def components() -> dict[str, Any]:
    """Fresh deterministic collaborators (one set per adapter under test)."""
    return {
        "extractor": PatternExtractor(),
        "embedder": HashingEmbedder(),
        "keyphrase_extractor": CorpusKeyphrases(),
        "direction_classifier": CueWordDirectionClassifier(),
        "profile_reader": NoProfiles(),
    }


def source_documents(corpus: list[dict[str, Any]] = CORPUS) -> list[SourceDocument]:
    return [SourceDocument(d["id"], d["text"], dict(d["metadata"])) for d in corpus]


def core_result(query: str = QUERY, corpus: list[dict[str, Any]] = CORPUS, **config: Any) -> SARGResult:
    """What the core pipeline produces for ``query``: the reference for parity."""
    pipeline = SARGPipeline(SARGConfig(**config), **components())
    return pipeline.run(query, source_documents(corpus))


def scripted_llm_answer(prompt: str) -> str:
    """What a well-behaved LLM extractor model would answer: the corpus triples as JSON.

    Every corpus document quoted in ``prompt`` contributes the triples the pattern
    extractor finds in it, with the sentence as evidence.
    """
    triples = []
    for doc in CORPUS:
        if doc["text"] in prompt:
            for t in PatternExtractor().extract(SourceDocument(doc["id"], doc["text"])):
                triples.append(
                    {
                        "cause": t.cause,
                        "relation": t.relation,
                        "effect": t.effect,
                        "relation_type": t.relation_type.value,
                        "evidence": t.sentence,
                    }
                )
    return json.dumps(triples)
