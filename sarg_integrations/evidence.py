"""Bridge-guided evidence selection: which retrieved documents fill the prompt.

The paper's evidence ``D_P`` is the text behind the kept chains. On factoid multi-hop
questions the second-hop document ("the director of *Big Stone Gap* is based in which
city?" needs the director's own page) is rarely similar to the question, so flat top-k
misses it, and a reasoning-schema extractor rarely finds a causal chain through it.
What does connect the two documents is an entity: the first document *mentions* the
second one's topic ("… directed by Adriana Trigiani"). These functions build that
document-level bridge graph and use it to pick documents:

* :func:`document_topic`: a document's topic entity: its ``title`` metadata (without a
  trailing ``(disambiguation)``), else the capitalised subject that opens its first
  sentence ("Adriana Trigiani is …" → ``Adriana Trigiani``).
* :func:`bridge_links`: document pairs where one mentions the other's topic, found in
  time linear in the total text length (word n-gram lookup, no pairwise scan).
* :func:`bridge_guided_selection`: start from the document most similar to the query;
  each next pick is the most similar document linked to one already picked, or, when
  none is linked, the most similar one left.

Everything here is pure and deterministic (ties go to the earlier document).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from sarg_integrations.schema import SourceDocument

__all__ = [
    "MAX_TOPIC_WORDS",
    "bridge_guided_selection",
    "bridge_links",
    "document_topic",
]

MAX_TOPIC_WORDS = 8
"""Topics longer than this many words are ignored (a sentence, not a name)."""

_WORD = re.compile(r"\w+")
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")
# The capitalised words that open a sentence, up to a copula, a comma or a parenthesis:
# "Adriana Trigiani is an author" / "Winner (Hangul: 위너), often …".
_LEAD_SUBJECT = re.compile(
    r"^\s*((?:[A-Z0-9][\w'’.\-&:]*\s+){0,7}?[A-Z0-9][\w'’.\-&:]*)"
    r"(?=\s*\(|\s*,|\s+(?:is|was|are|were|has|had|became|refers)\b)"
)
_ARTICLE = re.compile(r"^(?:The|A|An)\s+")


def document_topic(document: SourceDocument) -> str | None:
    """Return the entity ``document`` is about, or ``None`` when it cannot tell.

    The ``title`` metadata wins (minus a trailing parenthesis such as ``(film)``);
    otherwise the capitalised subject that opens the text, without a leading article.

    Example:
        >>> document_topic(SourceDocument("d", "Big Stone Gap is a 2014 film.",
        ...                               {"title": "Big Stone Gap (film)"}))
        'Big Stone Gap'
        >>> document_topic(SourceDocument("d", "Adriana Trigiani is an author."))
        'Adriana Trigiani'
        >>> document_topic(SourceDocument("d", "rain causes floods.")) is None
        True
    """
    title = document.metadata.get("title") if isinstance(document.metadata, Mapping) else None
    if isinstance(title, str) and title.strip():
        topic = _DISAMBIGUATION.sub("", title).strip() or title.strip()
    else:
        match = _LEAD_SUBJECT.match(document.text)
        if match is None:
            return None
        topic = _ARTICLE.sub("", match.group(1).strip())
    words = _WORD.findall(topic)
    if not words or len(words) > MAX_TOPIC_WORDS or len("".join(words)) < 3:
        return None
    return topic


def bridge_links(
    documents: Sequence[SourceDocument], topics: Mapping[str, str | None] | None = None
) -> dict[str, set[str]]:
    """Link documents where one mentions the other's topic (an undirected graph).

    A mention is the topic's exact word sequence (case-sensitive) in the other
    document's text. Each text is scanned once against a table of topic word n-grams,
    so the cost is linear in the total text length, not quadratic in documents.

    Args:
        documents: The retrieved documents.
        topics: Document id → topic; default :func:`document_topic` of each document.

    Returns:
        Document id → ids of the documents it is linked to (every id is a key).

    Example:
        >>> docs = [SourceDocument("a", "Big Stone Gap was directed by Adriana Trigiani."),
        ...         SourceDocument("b", "Adriana Trigiani is based in Greenwich Village."),
        ...         SourceDocument("c", "Rain causes floods.")]
        >>> links = bridge_links(docs)
        >>> sorted(links["a"]), sorted(links["b"]), sorted(links["c"])
        (['b'], ['a'], [])
    """
    if topics is None:
        topics = {d.id: document_topic(d) for d in documents}
    by_words: dict[tuple[str, ...], list[str]] = {}
    for doc in documents:
        topic = topics.get(doc.id)
        if topic:
            by_words.setdefault(tuple(_WORD.findall(topic)), []).append(doc.id)
    links: dict[str, set[str]] = {d.id: set() for d in documents}
    if not by_words:
        return links
    longest = max(len(k) for k in by_words)
    for doc in documents:
        words = _WORD.findall(doc.text)
        for start in range(len(words)):
            for size in range(1, min(longest, len(words) - start) + 1):
                for other in by_words.get(tuple(words[start : start + size]), ()):
                    if other != doc.id:
                        links[doc.id].add(other)
                        links[other].add(doc.id)
    return links


def bridge_guided_selection(
    document_ids: Sequence[str],
    relevance: Mapping[str, float],
    links: Mapping[str, Iterable[str]],
    count: int,
) -> list[str]:
    """Pick ``count`` documents, following bridges out of the most relevant one.

    The first pick is the most relevant document. Each next pick is the most relevant
    document linked to an already picked one; when no unpicked document is linked, the
    most relevant one left. Ties go to the earlier document in ``document_ids``.

    Args:
        document_ids: The candidates, in their original order.
        relevance: Document id → relevance to the query (e.g. cosine similarity).
        links: Document id → linked ids (see :func:`bridge_links`).
        count: How many documents to pick (fewer when there are fewer candidates).

    Example:
        >>> bridge_guided_selection(["a", "b", "c"], {"a": 0.9, "b": 0.1, "c": 0.5},
        ...                         {"a": {"b"}, "b": {"a"}, "c": set()}, 2)
        ['a', 'b']
    """
    position = {doc_id: i for i, doc_id in enumerate(document_ids)}
    ranked = sorted(document_ids, key=lambda d: (-float(relevance.get(d, 0.0)), position[d]))
    picked: list[str] = []
    reachable: set[str] = set()
    remaining = list(ranked)
    while remaining and len(picked) < count:
        choice = next((d for d in remaining if d in reachable), remaining[0])
        picked.append(choice)
        remaining.remove(choice)
        reachable.update(links.get(choice, ()))
    return picked
