"""Links between retrieved documents: entity bridges and near-miss triples.

On factoid multi-hop questions the second-hop document ("the director of *Big Stone
Gap* is based in which city?" needs the director's own page) is rarely similar to the
question, so flat top-k misses it, and a reasoning-schema extractor rarely finds a
causal chain through it. What does connect the two documents is an entity: the first
document *mentions* the second one's topic ("… directed by Adriana Trigiani").

* :func:`document_topic`: a document's topic entity: its ``title`` metadata (without a
  trailing ``(disambiguation)``), else the capitalised subject that opens its first
  sentence ("Adriana Trigiani is …" → ``Adriana Trigiani``).
* :func:`bridge_links`: document pairs where one mentions the other's topic, found in
  time linear in the total text length (word n-gram lookup, no pairwise scan).
* :func:`bridge_guided_selection`: start from the document most similar to the query;
  each next pick is the most similar document linked to one already picked, or, when
  none is linked, the most similar one left.
* :func:`documents_linked_by_triples`: documents whose triples name what the chain
  documents' triples name, though the graph did not merge the two nodes ("smaller wheat
  harvest" / "wheat harvest in the northern provinces"), or that continue the story the
  asked way where the evidence stops ("power lines" / "the power cut"): the links a chain
  missed.

Everything here is pure and deterministic (ties go to the earlier document);
:mod:`sarg_integrations.evidence` uses these links to pick the prompt's documents.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sarg_integrations import _text
from sarg_integrations.schema import SourceDocument, Triple

__all__ = [
    "MAX_TOPIC_WORDS",
    "bridge_guided_selection",
    "bridge_links",
    "document_topic",
    "documents_linked_by_triples",
    "node_words",
    "open_ends",
]

MAX_TOPIC_WORDS = 8
"""Topics longer than this many words are ignored (a sentence, not a name)."""

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
    words = _text.words(topic)
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
            by_words.setdefault(tuple(_text.words(topic)), []).append(doc.id)
    links: dict[str, set[str]] = {d.id: set() for d in documents}
    if not by_words:
        return links
    longest = max(len(k) for k in by_words)
    for doc in documents:
        words = _text.words(doc.text)
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


# --------------------------------------------------------------------------- compile


_STOP = frozenset(
    "a an the of in on at to for from by with and or but as into over under than that this "
    "these those its their his her our your it they he she we i be is are was were been being "
    "has have had do does did not no more most less least very much many some any all each".split()
)


@functools.lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


_stem_lock = threading.Lock()


@functools.lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    # The pure-Python stemmer costs ~50 µs a word; the same words recur across queries.
    # One stemmer keeps the word it works on in itself: concurrent queries take turns.
    with _stem_lock:
        return str(_stemmer().stemWord(word))


def node_words(name: str) -> frozenset[str]:
    """Content words of a node name: lower-cased, stop words out, Snowball-stemmed.

    The stem lets one thing told in two word forms meet ("poor *pollination*" /
    "blossoms were *pollinated*", "harvests" / "harvest").

    Example:
        >>> sorted(node_words("the wheat harvests in the northern provinces"))
        ['harvest', 'northern', 'provinc', 'wheat']
        >>> node_words("poor pollination") & node_words("apple blossoms pollinated")
        frozenset({'pollin'})
    """
    words = [w.lower() for w in _text.words(name)]
    return frozenset(_stem(w) for w in words if w not in _STOP and not w.isdigit())


def _touch(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two node names name the same thing loosely: two content words in common."""
    return len(a & b) >= 2


def open_ends(triples: Sequence[Triple], upstream: bool) -> list[str]:
    """The names where ``triples`` stop: causes nothing in them explains, or effects
    nothing in them follows (``upstream=False``). Order of first appearance.

    Example:
        >>> t = [Triple("failure of cooling", "spoiled", "milk"),
        ...      Triple("milk", "so", "deliveries suspended")]
        >>> open_ends(t, upstream=True), open_ends(t, upstream=False)
        (['failure of cooling'], ['deliveries suspended'])
    """
    inner = {t.effect for t in triples} if upstream else {t.cause for t in triples}
    ends = (t.cause if upstream else t.effect for t in triples)
    return list(dict.fromkeys(name for name in ends if name not in inner))


def documents_linked_by_triples(
    chain_document_ids: Sequence[str],
    triples: Sequence[Triple],
    rounds: int = 2,
    *,
    upstream: bool | None = None,
) -> list[str]:
    """Documents whose triples name what the chain documents' triples name.

    The graph merges two nodes only when they are nearly the same phrase, so a story
    told across documents can break where one document says "the smaller wheat harvest"
    and another "the wheat harvest in the northern provinces". A document is linked
    when one of its triples' causes or effects shares two content words
    (:func:`node_words`) with a cause or effect of a triple already in the evidence.

    With ``upstream`` set (a question for causes: ``True``; for effects: ``False``) a
    document is also linked when it continues the story the asked way where the linked
    documents' triples stop (:func:`open_ends`, named by two content words or more), on
    one shared content-word stem: its triple's effect names such an open cause ("the
    storm knocked out *power* lines" / "the *power* cut shut down the cooling"), or,
    downstream, its cause names such an open effect. An open end is read in its whole
    argument span too ("pushed many customer accounts *into overdraft*" / "the
    *overdraft* fees"), as its name is a head-phrase trim. A document that only names a
    middle of the story ("*milk* comes from farms" against "the failure spoiled *milk*,
    so …") is not linked that way.

    ``rounds`` repeats the search from the newly linked documents. Documents without
    triples (attributive distractors) are never linked.

    Returns:
        The linked document ids, by round, then in the order of ``triples``.

    Example:
        >>> t = [Triple("drought", "shrank", "wheat harvest in the provinces", document_id="a"),
        ...      Triple("smaller wheat harvest", "pushed up", "flour prices", document_id="b"),
        ...      Triple("flour prices", "forced", "bread price rise", document_id="c"),
        ...      Triple("museum", "opened", "new wing", document_id="d")]
        >>> documents_linked_by_triples(["a"], t)
        ['b', 'c']
        >>> t = [Triple("storm", "knocked out", "power lines", document_id="s"),
        ...      Triple("power cut", "shut down", "cooling", document_id="c")]
        >>> documents_linked_by_triples(["c"], t)
        []
        >>> documents_linked_by_triples(["c"], t, upstream=True)
        ['s']
    """
    by_document: dict[str, list[Triple]] = {}
    for t in triples:
        by_document.setdefault(t.document_id, []).append(t)
    taken = set(chain_document_ids)
    new = [d for d in dict.fromkeys(chain_document_ids) if d in by_document]
    linked: list[str] = []
    for _ in range(rounds):
        frontier = [
            node_words(name) for d in new for t in by_document[d] for name in (t.cause, t.effect)
        ]
        # The stems of the open ends (one shared stem with any of them links), read from
        # the whole argument the text gives as well as from its head-phrase name.
        ends: set[str] = set()
        if upstream is not None:
            for d in new:
                open_names = set(open_ends(by_document[d], upstream))
                for t in by_document[d]:
                    name, text = (t.cause, t.cause_text) if upstream else (t.effect, t.effect_text)
                    end = node_words(name)
                    # An event or a state; a bare entity links by bridges.
                    if name in open_names and len(end) >= 2:
                        ends |= end | node_words(text or "")
        found: dict[str, None] = {}  # ordered, with constant-time membership
        for t in triples:
            if t.document_id in taken or t.document_id in found:
                continue
            names = (node_words(t.cause), node_words(t.effect))
            continues = names[1] if upstream else names[0]  # the end that meets an open end
            if not continues.isdisjoint(ends) or any(
                _touch(a, b) for a in names for b in frontier
            ):
                found[t.document_id] = None
        if not found:
            break
        linked += found
        taken.update(found)
        new = list(found)
    return linked
