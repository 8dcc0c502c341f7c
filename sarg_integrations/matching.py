"""Semantic entry-node matching (paper §3.3, Eq. 3).

The query is distilled into key phrases (KeyBERT by default); each phrase and each
graph node is embedded with the same encoder, and a node becomes an entry node when its
best cosine with any phrase is strictly above τ.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sarg_integrations.embedding import Embedder, cosine_matrix
from sarg_integrations.schema import EntryNode

__all__ = ["KeyBERTKeyphraseExtractor", "KeyphraseExtractor", "match_entry_nodes"]


# Question scaffolding that scikit-learn's English stop list keeps but that never names a
# concept of the graph ("what did X ultimately lead to").
_QUESTION_WORDS = frozenset(
    "did does doing done ultimately eventually finally happen happens happened "
    "lead leads led result results resulted impact impacts affect affects effect effects "
    "cause causes caused reason reasons explain explains explained".split()
)


@runtime_checkable
class KeyphraseExtractor(Protocol):
    """Distils a query into atomic key phrases."""

    def extract(self, query: str) -> list[str]:
        """Return the key phrases of ``query``, most relevant first."""
        ...


class KeyBERTKeyphraseExtractor:
    """KeyBERT key phrases, embedded with the pipeline's own (cached) encoder.

    Candidates are 1- to ``ngram_max``-word n-grams without English stop words and
    question scaffolding ("did", "ultimately", "lead to"); the
    top ``top_n`` are chosen with maximal marginal relevance so that they cover
    different concepts of the query. When KeyBERT finds nothing (a query of stop
    words only), the whole query is the single key phrase.

    Args:
        embedder: Encodes the query and candidate phrases.
        top_n: How many key phrases to return.
        ngram_max: Longest key phrase in words.
        diversity: MMR diversity in [0, 1].
    """

    def __init__(
        self, embedder: Embedder, *, top_n: int = 5, ngram_max: int = 3, diversity: float = 0.3
    ) -> None:
        self.embedder = embedder
        self.top_n = top_n
        self.ngram_max = ngram_max
        self.diversity = diversity
        self._model: Any = None

    def _keybert(self) -> Any:
        if self._model is None:
            from keybert import KeyBERT
            from keybert.backend import BaseEmbedder

            class SARGEmbedderBackend(BaseEmbedder):  # type: ignore[misc]
                """KeyBERT backend over a SARG embedder, so phrases hit its cache."""

                def embed(self, documents: Sequence[str], verbose: bool = False) -> np.ndarray:
                    return np.asarray(self.embedding_model.embed(list(documents)))

            self._model = KeyBERT(model=SARGEmbedderBackend(self.embedder))
        return self._model

    def extract(self, query: str) -> list[str]:
        """Return up to ``top_n`` key phrases of ``query``."""
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

        vectorizer = CountVectorizer(
            ngram_range=(1, self.ngram_max),
            stop_words=sorted(ENGLISH_STOP_WORDS | _QUESTION_WORDS),
        )
        try:
            keywords = self._keybert().extract_keywords(
                query,
                vectorizer=vectorizer,
                top_n=self.top_n,
                use_mmr=True,
                diversity=self.diversity,
            )
        except ValueError:
            # scikit-learn raises when every token is a stop word ("empty vocabulary").
            keywords = []
        phrases = [phrase for phrase, _score in keywords if phrase.strip()]
        return phrases or [query.strip()]


def match_entry_nodes(
    nodes: Sequence[str],
    node_vectors: np.ndarray,
    phrases: Sequence[str],
    phrase_vectors: np.ndarray,
    *,
    threshold: float = 0.5,
    margin: float = 0.0,
    max_nodes: int | None = None,
) -> list[EntryNode]:
    """Return the nodes whose best cosine with any phrase is strictly above ``threshold``.

    When no node is, the nodes strictly above ``threshold - margin`` (the near misses;
    ``margin=0``: none). Results are sorted by similarity (highest first), then node
    name, and cut to ``max_nodes`` when given.

    Example:
        >>> nodes = ["rate hike", "bond yields", "weather"]
        >>> nv = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
        >>> pv = np.array([[1.0, 0.1]])
        >>> [(e.node, round(e.similarity, 2)) for e in
        ...  match_entry_nodes(nodes, nv, ["interest rates"], pv, threshold=0.5)]
        [('rate hike', 1.0), ('bond yields', 0.86)]
        >>> [e.node for e in match_entry_nodes(nodes, nv, ["rates"], pv, threshold=0.9)]
        ['rate hike']
        >>> [e.node for e in match_entry_nodes(nodes, nv, ["rates"], pv, threshold=0.999)]
        []
        >>> [e.node for e in match_entry_nodes(nodes, nv, ["rates"], pv, threshold=0.999,
        ...                                    margin=0.05)]
        ['rate hike']
    """
    if not len(nodes) or not len(phrases):
        return []
    sims = cosine_matrix(node_vectors, phrase_vectors)
    best_phrase = sims.argmax(axis=1)
    best_sim = sims[np.arange(len(nodes)), best_phrase]
    floor = threshold if (best_sim > threshold).any() else threshold - margin
    entries = [
        EntryNode(node=node, similarity=float(best_sim[i]), keyphrase=phrases[int(best_phrase[i])])
        for i, node in enumerate(nodes)
        if best_sim[i] > floor
    ]
    entries.sort(key=lambda e: (-e.similarity, e.node))
    return entries[:max_nodes] if max_nodes is not None else entries
