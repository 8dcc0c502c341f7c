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
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from sarg_integrations import _text
from sarg_integrations.schema import SourceDocument, Triple

__all__ = [
    "LINK_ROUNDS",
    "MAX_TOPIC_WORDS",
    "SIMILAR_END_MARGIN",
    "SIMILAR_END_MATCH",
    "bridge_guided_selection",
    "bridge_links",
    "document_topic",
    "documents_linked_by_triples",
    "names_event",
    "node_words",
    "open_ends",
]

MAX_TOPIC_WORDS = 8
"""Topics longer than this many words are ignored (a sentence, not a name)."""

LINK_ROUNDS = 3
"""How many times :func:`documents_linked_by_triples` searches again from the documents
it just linked: a story of four documents told upstream from its last one needs three
(the school story: closure <- boilers <- heating oil <- snow)."""

SIMILAR_END_MATCH = 0.25
"""An open end of the evidence and a triple's end elsewhere at least this similar (cosine
of their sentence embeddings) continue one story though they share no word: "the cold
classrooms" / "the boilers … stopped working" (0.30), "the shortfall in electricity" /
"the … hydroelectric plant had to cut its output" (0.33). A profile's "milk" scores 0.16
against "the failure of the cooling systems". Chosen on the team's causal stories and
checked on the 128 ESTER questions (docs/evaluation.md)."""

SIMILAR_END_MARGIN = 0.05
"""For one open end, every triple end within this much of the best match is linked too
(two documents may each tell part of the step: "the library's textbooks" 0.43, "the
library" 0.39 for "lacking books")."""

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


def _content(name: str, *, digits: bool = False) -> list[str]:
    """The words of ``name`` that carry content, as written: stop words out, and bare
    numbers too unless ``digits``."""
    return [
        w for w in _text.words(name) if w.lower() not in _STOP and (digits or not w.isdigit())
    ]


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
    return frozenset(_stem(w.lower()) for w in _content(name))


def event_words(name: str) -> frozenset[str]:
    """:func:`node_words` less the words of names (capitalised after the first word).

    The document stating an asked event is found by what happened; a shared place or
    company name does not make it ("the cyberattack on *Oslin's* transit company" / "the
    first trams in *Oslin* were pulled by horses").

    Example:
        >>> sorted(event_words("A cyberattack on the Oslin transit company"))
        ['compani', 'cyberattack', 'transit']
        >>> sorted(event_words("Commuters switched to cars"))
        ['car', 'commut', 'switch']
    """
    content = _content(name)
    first = next(iter(_text.words(name)), None)
    return frozenset(
        _stem(w.lower()) for w in content if w == first or not w[:1].isupper()
    )


# A cause naming how a thing came about: "an *outbreak of* varroa mites", "the *arrival
# of* cheap imports", "a *surge in* demand"; the nominal opens the cause ("price rise in
# Europe" is no arrival of Europe).
_ARRIVAL = re.compile(
    r"^(?:(?:an?|the)\s+)?(?:outbreak|arrival|spread|influx|invasion|surge|rise|"
    r"increase|growth|emergence|appearance)\s+(?:of|in)\s+(?P<thing>.+)$",
    re.IGNORECASE,
)


def _arrival_words(cause: str) -> frozenset[str]:
    """The words of the thing a cause says came about, upstream of a story about it.

    "An outbreak of varroa mites spread through the hives" is how the mites came: it
    continues the story upstream of "the mites killed half of the colonies" though its
    mites are in the cause, not the effect.

    Example:
        >>> sorted(_arrival_words("outbreak of varroa mites"))
        ['mite', 'varroa']
        >>> _arrival_words("varroa mites"), _arrival_words("price rise in Europe")
        (frozenset(), frozenset())
    """
    found = _ARRIVAL.match(cause.strip())
    return node_words(found.group("thing")) if found else frozenset()


def names_event(name: str) -> bool:
    """Whether an open end called ``name`` is worth following to another document: an
    event or a state ("the cold classrooms", "trains", "infestation"), not a bare named
    entity ("Italy", "Takako Doi"), which links by bridges instead.

    Two content words or more, or one content word in lower case.

    Example:
        >>> names_event("cold classrooms"), names_event("trains"), names_event("Italy")
        (True, True, False)
        >>> names_event("Port of Alvik"), names_event("the")
        (True, False)
    """
    content = _content(name)
    return len(content) >= 2 or (len(content) == 1 and not content[0][:1].isupper())


def _mostly_capitalised(name: str) -> bool:
    """More than half of ``name``'s content words are capitalised: a name, not an event.

    Example:
        >>> _mostly_capitalised("SDP chairman Takako Doi"), _mostly_capitalised("storm in Varna")
        (True, False)
    """
    content = _content(name, digits=True)
    return 2 * sum(w[:1].isupper() for w in content) > len(content)


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
    rounds: int = LINK_ROUNDS,
    *,
    upstream: bool | None = None,
    similarity: Callable[[Sequence[str], Sequence[str]], Any] | None = None,
    similar_match: float = SIMILAR_END_MATCH,
    similar_margin: float = SIMILAR_END_MARGIN,
    from_ends: Collection[str] | None = None,
) -> list[str]:
    """Documents whose triples name what the chain documents' triples name.

    The graph merges two nodes only when they are nearly the same phrase, so a story
    told across documents can break where one document says "the smaller wheat harvest"
    and another "the wheat harvest in the northern provinces". A document is linked
    when one of its triples' causes or effects shares two content words
    (:func:`node_words`) with a cause or effect of a triple already in the evidence.

    With ``upstream`` set (a question for causes: ``True``; for effects: ``False``) a
    document is also linked when it continues the story the asked way where the linked
    documents' triples stop (:func:`open_ends` that :func:`names_event`), on one shared
    content-word stem: its triple's effect or relation names such an open cause ("the
    storm knocked out *power* lines" / "the *power* cut shut down the cooling", "a fire
    *halted* production" / "the *halt* cut deliveries"), or, downstream, its cause names
    such an open effect. An open end named by two content words or more is
    read in its whole argument span too ("pushed many customer accounts *into
    overdraft*" / "the *overdraft* fees"), as its name is a head-phrase trim. A document
    that only names a middle of the story ("*milk* comes from farms" against "the
    failure spoiled *milk*, so …") is not linked that way.

    With ``similarity`` too (texts ``a``, texts ``b`` → their ``len(a) × len(b)``
    cosine matrix, e.g. of sentence embeddings), the story is also followed where no
    word is shared: for each open end that is not a name (most content words in lower
    case), the triples whose continuing end (its whole span; upstream also read with
    its relation, "flooded Kessa district") is at least ``similar_match`` similar to the
    open end's span, and within ``similar_margin`` of the best such triple, link their
    documents ("the cold classrooms" / "the boilers … stopped working").

    ``rounds`` repeats the search from the newly linked documents. Documents without
    triples (attributive distractors) are never linked. ``from_ends``, when given, limits the
    open ends followed to those named in it (the asked event, for one step upstream of a
    question for effects).

    Returns:
        The linked document ids, by round, then in the order of ``triples`` (stem
        links before similarity links).

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
        >>> t = [Triple("oil ran out", "stopped", "boilers working", document_id="b"),
        ...      Triple("cold classrooms", "forced", "school closure", document_id="c")]
        >>> def similar(a, b):  # stands in for embedding cosines
        ...     return [[0.3 if "cold" in x and "boilers" in y else 0.0 for y in b] for x in a]
        >>> documents_linked_by_triples(["c"], t, upstream=True)
        []
        >>> documents_linked_by_triples(["c"], t, upstream=True, similarity=similar)
        ['b']
    """
    # Each triple's stemmed cause and effect, and the end that meets an open end (upstream
    # the event is the relation and its effect: "a fire *halted* the production" / "*the
    # halt* cut deliveries"), once for every round.
    named = [(node_words(t.cause), node_words(t.effect)) for t in triples]
    if upstream:
        continuing = [
            effect | node_words(t.relation) | _arrival_words(t.cause)
            for (_, effect), t in zip(named, triples)
        ]
    else:
        continuing = [cause for cause, _ in named]
    by_document: dict[str, list[int]] = {}
    for i, t in enumerate(triples):
        by_document.setdefault(t.document_id, []).append(i)
    taken = set(chain_document_ids)
    new = [d for d in dict.fromkeys(chain_document_ids) if d in by_document]
    linked: list[str] = []
    for _ in range(rounds):
        frontier = [words for d in new for i in by_document[d] for words in named[i]]
        # The open ends where the story stops the asked way: (name, whole span) pairs.
        ends: list[tuple[str, str]] = []
        if upstream is not None:
            for d in new:
                own = [triples[i] for i in by_document[d]]
                open_names = set(open_ends(own, upstream))
                for t in own:
                    name, text = (t.cause, t.cause_text) if upstream else (t.effect, t.effect_text)
                    if name in open_names and names_event(name) and (
                        from_ends is None or name in from_ends
                    ):
                        ends.append((name, text or name))
        # One shared stem with an open end links, read from the whole span as well as
        # from the head-phrase name when the name is more than one word.
        # The asked event's own document is found by what happened, not by where or who
        # ("the cyberattack on *Oslin's* transit company" / "the first trams in *Oslin*");
        # a story otherwise also follows its actors ("Gonzalez comes" / "Gonzalez's arrival").
        read = node_words if from_ends is None else event_words
        stems: set[str] = set()
        for name, text in ends:
            words = node_words(name)
            stems |= read(name) | (read(text) if len(words) >= 2 else frozenset())
        found: dict[str, None] = {}  # ordered, with constant-time membership
        for i, t in enumerate(triples):
            if t.document_id in taken or t.document_id in found:
                continue
            if (upstream is not None and not continuing[i].isdisjoint(stems)) or any(
                _touch(a, b) for a in named[i] for b in frontier
            ):
                found[t.document_id] = None
        if similarity is not None and upstream is not None:
            spans = list(
                dict.fromkeys(text for name, text in ends if not _mostly_capitalised(name))
            )
            linked_now = taken | found.keys()
            others = [t for t in triples if t.document_id not in linked_now]
            for doc_id in _similar_continuations(
                spans, others, upstream, similarity, similar_match, similar_margin
            ):
                found.setdefault(doc_id, None)
        if not found:
            break
        linked += found
        taken.update(found)
        new = list(found)
    return linked


def _similar_continuations(
    spans: Sequence[str],
    candidates: Sequence[Triple],
    upstream: bool,
    similarity: Callable[[Sequence[str], Sequence[str]], Any],
    match: float,
    margin: float,
) -> list[str]:
    """The documents of ``candidates`` whose continuing end (the effect, or the relation
    and the effect, upstream) is at least ``match`` similar to one of ``spans`` and
    within ``margin`` of that span's best candidate; in the order of ``candidates``."""
    if not spans or not candidates:
        return []
    sides = [
        (t.effect_text or t.effect) if upstream else (t.cause_text or t.cause) for t in candidates
    ]
    # Upstream the event may be the relation and its effect ("The floodwater" / "flooded
    # Kessa district": 0.51; the effect alone, a place, 0.18), as for the stem links; a
    # candidate scores the better of the two readings.
    events = [f"{t.relation} {side}" for t, side in zip(candidates, sides)] if upstream else []
    hits: set[int] = set()
    rows = similarity(list(spans), sides)
    event_rows = similarity(list(spans), events) if events else rows
    for row, event_row in zip(rows, event_rows):
        scores = [max(float(x), float(y)) for x, y in zip(row, event_row)]
        floor = max(match, max(scores) - margin)
        hits.update(i for i, score in enumerate(scores) if score >= floor)
    return list(dict.fromkeys(candidates[i].document_id for i in sorted(hits)))
