"""Semantic entry-node matching (paper §3.3, Eq. 3).

The query is distilled into key phrases (KeyBERT by default); each phrase and each
graph node is embedded with the same encoder, and a node becomes an entry node when its
best cosine with any phrase is strictly above τ. A node's name is a short head phrase
trimmed from the clause it was read from; the question usually restates that clause
("Why is the peso nearing its end?" / "a strong rally by the peso may be nearing its
end", named "strong rally nearing end"), so a node also matches on its source clauses,
compared with the whole query, when one of them is above τ (:func:`best_span_matches`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import networkx as nx
import numpy as np

from sarg_integrations.embedding import Embedder, cosine_matrix
from sarg_integrations.schema import EntryNode

__all__ = [
    "KeyBERTKeyphraseExtractor",
    "KeyphraseExtractor",
    "best_span_matches",
    "match_entry_nodes",
    "source_spans",
]


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


def source_spans(graph: nx.DiGraph) -> list[tuple[str, str]]:
    """The clauses each node was read from, as sorted, distinct ``(node, span)`` pairs.

    A triple on the edge ``u → v`` keeps its whole cause span (``cause_text``, read from
    ``u``) and effect span (``effect_text``, read from ``v``); an empty span or one equal
    to the node's name adds nothing.

    Example:
        >>> from sarg_integrations.schema import Triple
        >>> t = Triple("Fed raised rates", "causes", "rally nearing end",
        ...            cause_text="the Fed raised its rates",
        ...            effect_text="a rally by the peso may be nearing its end")
        >>> g = nx.DiGraph(); g.add_edge(t.cause, t.effect, triples=[t])
        >>> for pair in source_spans(g):
        ...     print(pair)
        ('Fed raised rates', 'the Fed raised its rates')
        ('rally nearing end', 'a rally by the peso may be nearing its end')
    """
    pairs: set[tuple[str, str]] = set()
    for u, v, data in graph.edges(data=True):
        for triple in data.get("triples", ()):
            for node, span in ((u, triple.cause_text), (v, triple.effect_text)):
                span = " ".join(span.split())
                if span and span != node:
                    pairs.add((node, span))
    return sorted(pairs)


def best_span_matches(
    spans: Sequence[tuple[str, str]], span_vectors: np.ndarray, query_vector: np.ndarray
) -> dict[str, tuple[float, str]]:
    """Each node's source clause most similar to the whole query: ``{node: (cosine, span)}``.

    ``spans`` are ``(node, span)`` pairs (:func:`source_spans`) with one row of
    ``span_vectors`` each. A clause is compared with the whole query, not with its key
    phrases: both are clauses, and a short key phrase ("English football club") is close
    to any clause that happens to hold its words. Ties keep the first pair.

    Example:
        >>> spans = [("rally", "a rally by the peso"), ("rally", "the rally ended")]
        >>> best_span_matches(spans, np.array([[0.6, 0.8], [1.0, 0.0]]), np.array([0.0, 1.0]))
        {'rally': (0.8, 'a rally by the peso')}
    """
    if not len(spans):
        return {}
    sims = cosine_matrix(span_vectors, np.asarray(query_vector).reshape(1, -1))[:, 0]
    best: dict[str, tuple[float, str]] = {}
    for (node, span), sim in zip(spans, sims.tolist()):
        if node not in best or sim > best[node][0]:
            best[node] = (float(sim), span)
    return best


def match_entry_nodes(
    nodes: Sequence[str],
    node_vectors: np.ndarray,
    phrases: Sequence[str],
    phrase_vectors: np.ndarray,
    *,
    threshold: float = 0.5,
    margin: float = 0.0,
    max_nodes: int | None = None,
    span_matches: Mapping[str, tuple[float, str]] | None = None,
) -> list[EntryNode]:
    """Return the nodes whose best cosine with any phrase is strictly above ``threshold``.

    When no node is, the nodes strictly above ``threshold - margin`` (the near misses;
    ``margin=0``: none). A node's ``span_matches`` entry (:func:`best_span_matches`)
    replaces its name's cosine when it is higher and strictly above ``threshold``; it
    never makes a near miss. Results are sorted by similarity (highest first), then node
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
        >>> [(e.node, round(e.similarity, 2), e.span) for e in match_entry_nodes(
        ...     nodes, nv, ["rates"], pv, threshold=0.9,
        ...     span_matches={"weather": (0.95, "the weather turned"), "bond yields": (0.7, "")})]
        [('rate hike', 1.0, ''), ('weather', 0.95, 'the weather turned')]
    """
    if not len(nodes) or not len(phrases):
        return []
    sims = cosine_matrix(node_vectors, phrase_vectors)
    best_phrase = sims.argmax(axis=1)
    best_sim = [float(v) for v in sims[np.arange(len(nodes)), best_phrase]]
    best_span = [""] * len(nodes)
    for i, node in enumerate(nodes):
        span_sim, span = (span_matches or {}).get(node, (-1.0, ""))
        if span_sim > threshold and span_sim > best_sim[i]:
            best_sim[i], best_span[i] = float(span_sim), span
    floor = threshold if any(v > threshold for v in best_sim) else threshold - margin
    entries = [
        EntryNode(
            node=node,
            similarity=best_sim[i],
            keyphrase=phrases[int(best_phrase[i])],
            span=best_span[i],
        )
        for i, node in enumerate(nodes)
        if best_sim[i] > floor
    ]
    entries.sort(key=lambda e: (-e.similarity, e.node))
    return entries[:max_nodes] if max_nodes is not None else entries
