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
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from sarg_integrations import _text
from sarg_integrations._checks import is_whole
from sarg_integrations.errors import InputError
from sarg_integrations.schema import SourceDocument, Triple

__all__ = [
    "BRIDGE_MAX_MENTIONS",
    "LINK_ROUNDS",
    "MAX_TOPIC_WORDS",
    "SIMILAR_END_MARGIN",
    "SIMILAR_END_MATCH",
    "bridge_guided_selection",
    "bridge_links",
    "document_topic",
    "documents_linked_by_triples",
    "EventReader",
    "PastTenseEventReader",
    "PresentTenseProfileReader",
    "ProfileReader",
    "antecedent_documents",
    "continues_earlier_text",
    "dated_as_history",
    "dated_within",
    "documents_continuing_event",
    "documents_stating_open_causes",
    "names_same_event",
    "restates_asked_event",
    "restates_key_phrase",
    "states_in_present",
    "states_profile",
    "names_event",
    "tells_another_event",
    "tells_what_came_of",
    "told_after_asked_event",
    "node_words",
    "open_ends",
    "tells_dated_event",
    "tells_past_event",
    "years_named",
]

MAX_TOPIC_WORDS = 8
"""Topics longer than this many words are ignored (a sentence, not a name)."""

BRIDGE_MAX_MENTIONS = 3
"""A topic that more than this many of the other documents mention is common ground, not
a bridge: "United States" in a MuSiQue question's paragraphs about Tennessee, Utah and
Washington, D.C. would link each of them to the country's page and pull them in ahead
of more relevant ones. Replayed on the selection alone (bridge-guided picks within half
the retrieved tokens, supporting-paragraph recall): MuSiQue 140-199 70.0 -> 73.3 %
(flat top-k 70.3), HotpotQA MIGRES 0-199 91.5 -> 92.0, HotpotQA 0-499 91.6 -> 92.2,
2Wiki 0-499 79.7 -> 79.9, MuSiQue 0-139 85.1 -> 84.4 (flat 81.9); unlimited, 1, 2 and 4
were replayed too (docs/evaluation.md, nineteenth session)."""

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
    documents: Sequence[SourceDocument],
    topics: Mapping[str, str | None] | None = None,
    *,
    max_mentions: int | None = BRIDGE_MAX_MENTIONS,
) -> dict[str, set[str]]:
    """Link documents where one mentions the other's topic (an undirected graph).

    A mention is the topic's exact word sequence (case-sensitive) in the other
    document's text. Each text is scanned once against a table of topic word n-grams,
    so the cost is linear in the total text length, not quadratic in documents. A
    document whose topic more than ``max_mentions`` others mention links to none of
    them (a hub such as a country's page, :data:`BRIDGE_MAX_MENTIONS`).

    Args:
        documents: The retrieved documents.
        topics: Document id → topic; default :func:`document_topic` of each document.
        max_mentions: The most documents that may mention a topic it still bridges;
            ``None``: no limit.

    Returns:
        Document id → ids of the documents it is linked to (every id is a key).

    Example:
        >>> docs = [SourceDocument("a", "Big Stone Gap was directed by Adriana Trigiani."),
        ...         SourceDocument("b", "Adriana Trigiani is based in Greenwich Village."),
        ...         SourceDocument("c", "Rain causes floods.")]
        >>> links = bridge_links(docs)
        >>> sorted(links["a"]), sorted(links["b"]), sorted(links["c"])
        (['b'], ['a'], [])
        >>> hub = [SourceDocument("us", "The United States is a country.")] + [
        ...     SourceDocument(s, f"{s} is a state of the United States.") for s in "ABCD"]
        >>> bridge_links(hub)["us"], len(bridge_links(hub, max_mentions=None)["us"])
        (set(), 4)
    """
    if max_mentions is not None and not is_whole(max_mentions, 0):
        msg = (
            f"max_mentions={max_mentions!r} must be a non-negative integer "
            "(the most documents mentioning a topic that still bridges) or None (no limit)"
        )
        raise InputError(msg, argument="max_mentions", value=max_mentions)
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
    mentioned_by: dict[str, set[str]] = {}
    longest = max(len(k) for k in by_words)
    for doc in documents:
        words = _text.words(doc.text)
        for start in range(len(words)):
            for size in range(1, min(longest, len(words) - start) + 1):
                for other in by_words.get(tuple(words[start : start + size]), ()):
                    if other != doc.id:
                        mentioned_by.setdefault(other, set()).add(doc.id)
    for topic_doc, mentions in mentioned_by.items():
        if max_mentions is None or len(mentions) <= max_mentions:
            for doc_id in mentions:
                links[doc_id].add(topic_doc)
                links[topic_doc].add(doc_id)
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
        w
        for w in _text.words(name)
        if w.lower() not in _STOP
        and (digits or not w.isdigit())
        and (len(w) > 1 or w.isdigit())  # "s" of "council's", "t" of "don't"
    ]


# Nouns made of a phrasal verb, and that verb: "dockworkers *walked* off the job" / "the
# *walkout*", "the station *shut* down" / "its *shutdown*". A closed list of the
# unambiguous ones: a word merely ending in a particle ("discover", "layout", "backup")
# names no such event, and "turnout", "setback" or "takeover" would meet every "turn",
# "set" or "take".
_PHRASAL_NOUNS = {
    "walkout": "walk", "shutdown": "shut", "layoff": "lay", "layoffs": "lay",
    "breakdown": "break", "selloff": "sell", "cutback": "cut", "cutbacks": "cut",
    "lockout": "lock", "bailout": "bail", "slowdown": "slow", "spillover": "spill",
    "cleanup": "clean", "rollout": "roll", "pullout": "pull", "stoppage": "stop",
    "closedown": "close",
}


# Irregular pasts, which the stemmer leaves as they are, and their verbs: those of the
# phrasal nouns ("laid" off / the "layoffs", "broke" down / the "breakdown"), and those
# whose verb names the event's noun too ("An audit *found* that …" / "The *findings*",
# "prices *rose*" / "the *rise*", "workers *struck*" / "the *strike*"). Not the ones
# that are also words of their own ("left", "saw", "lay").
_IRREGULAR_PASTS = {
    "laid": "lay", "broke": "break", "sold": "sell", "found": "find", "rose": "rise",
    "fell": "fall", "struck": "strike", "froze": "freeze", "sank": "sink", "grew": "grow",
    "built": "build", "bought": "buy", "spent": "spend", "caught": "catch", "won": "win",
    "began": "begin", "drove": "drive", "stole": "steal", "spoke": "speak", "chose": "choose",
    # "The Group 20 first *met* in 1999" / "the *meeting*", "gunmen *shot*" / "the *shooting*".
    "met": "meet", "held": "hold", "fought": "fight", "fled": "flee", "withdrew": "withdraw",
    "flew": "fly", "shot": "shoot", "dug": "dig", "swept": "sweep", "tore": "tear",
    "shook": "shake", "sought": "seek", "ran": "run", "sent": "send", "told": "tell",
    "kept": "keep", "threw": "throw", "wrote": "write", "took": "take", "paid": "pay",
}

# Nouns of an event whose stem the stemmer does not share with its verb's ("the
# *closure*" / "the tannery *closed*", "the *failure*" / "the pumps *failed*", "the
# *loss*" / "*lost* its licence"); a closed list, as "-ure" or "-al" also end nouns that
# name no verb ("culture", "capital").
_DEVERBAL_NOUNS = {
    "closure": "close", "closures": "close", "failure": "fail", "failures": "fail",
    "departure": "depart", "seizure": "seize", "exposure": "expose",
    "arrival": "arrive", "refusal": "refuse", "removal": "remove", "approval": "approve",
    "withdrawal": "withdraw", "denial": "deny", "survival": "survive",
    "dismissal": "dismiss", "explosion": "explode", "explosions": "explode",
    "destruction": "destroy", "decision": "decide", "loss": "lose", "losses": "lose",
    "lost": "lose", "death": "die", "deaths": "die",
}


def node_words(name: str) -> frozenset[str]:
    """Content words of a node name: lower-cased, stop words out, Snowball-stemmed.

    The stem lets one thing told in two word forms meet ("poor *pollination*" /
    "blossoms were *pollinated*", "harvests" / "harvest"); a noun made of a phrasal verb
    also names its verb ("the *walkout*" / "*walked* off the job").

    Example:
        >>> sorted(node_words("the wheat harvests in the northern provinces"))
        ['harvest', 'northern', 'provinc', 'wheat']
        >>> node_words("poor pollination") & node_words("apple blossoms pollinated")
        frozenset({'pollin'})
        >>> node_words("the walkout") & node_words("dockworkers walked off the job")
        frozenset({'walk'})
        >>> node_words("the layoffs") & node_words("the firm laid off 40 workers")
        frozenset({'lay'})
        >>> node_words("the findings") & node_words("an audit found money missing")
        frozenset({'find'})
        >>> node_words("the closure") & node_words("the tannery closed in March")
        frozenset({'close'})
    """
    return frozenset(_stems(_content(name)))


def _stems(words: Iterable[str]) -> Iterator[str]:
    """Each word's stem, and the stem of the verb a phrasal noun is made of (or of the
    base form of such a verb's irregular past)."""
    for word in words:
        lower = word.lower()
        yield _stem(lower)
        base = (
            _PHRASAL_NOUNS.get(lower) or _IRREGULAR_PASTS.get(lower) or _DEVERBAL_NOUNS.get(lower)
        )
        if base is not None:
            yield _stem(base)


def event_words(name: str) -> frozenset[str]:
    """:func:`node_words` less the words of names (capitalised after the first word, and
    the first word too when the next one is capitalised).

    The document stating an asked event is found by what happened; a shared place or
    company name does not make it ("the cyberattack on *Oslin's* transit company" / "the
    first trams in *Oslin* were pulled by horses"; "*Kelsall* Rovers Women won the county
    cup" / "Kelsall Rovers docked").

    Example:
        >>> sorted(event_words("A cyberattack on the Oslin transit company"))
        ['compani', 'cyberattack', 'transit']
        >>> sorted(event_words("Commuters switched to cars"))
        ['car', 'commut', 'switch']
        >>> sorted(event_words("Kelsall Rovers Women won the county cup"))
        ['counti', 'cup', 'win', 'won']
    """
    return frozenset(_stems(_event_content(name)))


def _event_content(name: str) -> list[str]:
    """The content words of ``name`` (:func:`_content`) less the words of names
    (capitalised after the first word, and the first word too when the next one is
    capitalised: "*Kelsall* Rovers Women won the county cup")."""
    words = list(_text.words(name))
    first = words[0] if words else None
    opens_name = len(words) > 1 and words[1][:1].isupper()
    return [w for w in _content(name) if (w == first and not opens_name) or not w[:1].isupper()]


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


# Where a name's head phrase ends: "computer systems *of* Corvo General Hospital".
_HEAD_END = re.compile(r"\s(?:of|in|at|on|for|from|with|by|near|to)\s", re.IGNORECASE)


def _mostly_capitalised(name: str) -> bool:
    """More than half of the content words of ``name``'s head phrase (up to its first
    preposition) are capitalised: a name, not an event. A thing of a named owner is a
    thing ("computer systems of Corvo General Hospital"); "Port of Alvik" is a name.

    Example:
        >>> _mostly_capitalised("SDP chairman Takako Doi"), _mostly_capitalised("storm in Varna")
        (True, False)
        >>> _mostly_capitalised("computer systems of Corvo General Hospital")
        False
        >>> _mostly_capitalised("Port of Alvik")
        True
    """
    content = _content(_HEAD_END.split(name, maxsplit=1)[0], digits=True)
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
    event_reader: EventReader | None = None,
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
    overdraft*" / "the *overdraft* fees"), as its name is a head-phrase trim. Downstream
    a cause may also name the open end's event by its relation ("The lack of chips
    *halted* the assembly line" / "*The halt* delayed deliveries"; every word of the
    cause the relation's or the effect's). A document that only names a middle of the
    story ("*milk* comes from farms" against "the failure spoiled *milk*, so …") is not
    linked that way.

    With ``similarity`` too (texts ``a``, texts ``b`` → their ``len(a) × len(b)``
    cosine matrix, e.g. of sentence embeddings), the story is also followed where no
    word is shared: for each open end that is not a name (most content words in lower
    case), the triples whose continuing end (its whole span; upstream also read with
    its relation, "flooded Kessa district") is at least ``similar_match`` similar to the
    open end's span, and within ``similar_margin`` of the best such triple, link their
    documents ("the cold classrooms" / "the boilers … stopped working"); given an
    ``event_reader``, only if the triple's sentence tells an event (a similar span may
    only share the topic: "Blasting at the Tamsin quarry" / "The Tamsin quarry produces
    limestone").

    Asked either way, a triple naming a held triple's end from the same side (another
    effect of a held cause, or another cause of a held effect) is linked by two shared
    words only when ``event_reader`` is given and says its sentence tells an event: "The
    Tamsin quarry produces limestone" is a profile beside "Blasting at the Tamsin quarry
    cracked the rock", while "the Fed raised its interest rates" is news beside "the
    interest rate differential".

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
        # (cause words, effect words) of the newly linked documents' triples.
        frontier = [named[i] for d in new for i in by_document[d]]
        # The open ends where the story stops the asked way: (name, whole span) pairs.
        ends: list[tuple[str, str]] = []
        # Downstream, the open ends told with their relation: (relation, effect) stems.
        told: list[tuple[frozenset[str], frozenset[str]]] = []
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
                        if upstream is False:
                            told.append((event_words(t.relation), node_words(text or name)))
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
            pairs = [_touching(named[i], held, upstream) for held in frontier]
            if (upstream is not None and not continuing[i].isdisjoint(stems)) or any(
                _touch(a, b) for direct, _ in pairs for a, b in direct
            ) or _names_told_event(named[i][0], told):
                found[t.document_id] = None
            elif event_reader is not None and any(
                _touch(a, b) for _, siblings in pairs for a, b in siblings
            ) and event_reader.tells_event(t.sentence or f"{t.cause} {t.relation} {t.effect}"):
                # A sibling (another effect of a held cause, or another cause of a held
                # effect) links only when it tells an event, not a profile.
                found[t.document_id] = None
        if similarity is not None and upstream is not None:
            spans = list(
                dict.fromkeys(text for name, text in ends if not _mostly_capitalised(name))
            )
            linked_now = taken | found.keys()
            others = [t for t in triples if t.document_id not in linked_now]
            for doc_id in _similar_continuations(
                spans, others, upstream, similarity, similar_match, similar_margin, event_reader
            ):
                found.setdefault(doc_id, None)
        if not found:
            break
        linked += found
        taken.update(found)
        new = list(found)
    return linked


def _compound_head(word: str, end: str) -> bool:
    """``end`` is the last part of the compound ``word`` ("wildfire" / "fire",
    "snowstorm" / "storm"): English compounds name their kind last."""
    return len(end) >= 4 and len(word) > len(end) + 2 and word.endswith(end)


# Four digits read as a year, unless an amount: "£1500", "1500 percent", "1,500" or "1.500".
_YEAR = re.compile(
    r"(?<![£$€\d.,])\b(1[0-9]{3}|20[0-9]{2})s?\b(?![.,]\d)(?!\s*(?:%|per\s*cent\b))",
    re.IGNORECASE,
)


# A past event dated by its year, a decade or a century is history, not a step of the
# story told ("The Kessa reservoir was created in 1961", "Measles was first described in
# the ninth century", "Port Ardane handled 1.2 million containers last year", "The food
# bank reported record demand two years ago"). A story's
# steps are told by the day, the week or the month; "last year's price" and "down 18
# percent on last year" compare with the year, and "in January last year" dates a step by
# its month.
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)
_HISTORY_DATE = re.compile(
    _YEAR.pattern  # an amount ("£1500", "1500 percent") is no year here either
    + r"|\bcentur(?:y|ies)\b"
    r"|(?<!\bon\s)(?<!\bthan\s)(?<!\bsince\s)"
    + "".join(rf"(?<!{month}\s)" for month in _MONTHS)
    + r"\blast\s+year\b(?!['’]s)"
    # "*Last year's* display raised £6,000": an earlier time of the thing, not "twice
    # last year's price".
    r"|^\W*last\s+year['’]s\b"
    r"|\b(?:past|last)\s+decades?\b|\bdecades?\s+ago\b"
    # "two years ago", "two winters ago", "400 years ago" (not "a year ago": "up 5 per
    # cent on a year ago" compares with it, as "on last year" does).
    r"|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty"
    r"|fifty|a\s+few|several|many|\d+)\s+(?:years|winters|summers|springs|autumns|seasons)"
    r"\s+ago\b",
    re.IGNORECASE,
)


def years_named(text: str) -> tuple[int, ...]:
    """The years ``text`` names by their four digits (1000–2099; a decade by its first
    year), in order.

    Example:
        >>> years_named("Sales fell in 2022 after a record 2021, as in the 1990s.")
        (2022, 2021, 1990)
        >>> years_named("Crews set off from Pitsby, 14 miles away, at 0915.")
        ()
        >>> years_named("The council paid £1500 in 2019; prices rose 1200 percent.")
        (2019,)
    """
    return tuple(int(year) for year in _YEAR.findall(text))


def dated_within(text: str, first: int, last: int) -> bool:
    """Whether ``text`` names a year and every year it names is from ``first`` to ``last``.

    A story's steps are told close to the asked event: what followed an event of 2020 is
    dated 2020 or later ("Brenhow council bought the site in 2021"), history years before
    it ("Brenhow Airport was built as an air force base in 1940"); a sentence
    comparing with an earlier year ("46 crashes last year, up from 12 in 2019") is not
    dated within a window that leaves that year out.

    Example:
        >>> dated_within("Brenhow council bought the site in 2021.", 2019, 2099)
        True
        >>> dated_within("Brenhow Airport was built as an air force base in 1940.", 2019, 2099)
        False
        >>> dated_within("The airport closed its terminal.", 2019, 2099)
        False
    """
    years = years_named(text)
    return bool(years) and all(first <= year <= last for year in years)


def tells_dated_event(text: str, nlp: Any = None) -> bool:
    """Whether the first sentence of ``text`` is dated by its year (:func:`years_named`)
    and tells something that happened then: a verb in the past, none in the present (a
    profile's "and has two berths"), not told as background (:func:`tells_past_event`'s
    "once", "previously") nor at an earlier time of the same thing ("*last* erupted in
    1911", "*first* met in 1999"). ``nlp`` is a spaCy pipeline (default: the packaged
    English one).

    Example:
        >>> tells_dated_event("Islander Air went bust in October 2019.")
        True
        >>> tells_dated_event("Mount Ketar last erupted in 1911.")
        False
        >>> tells_dated_event("The Skarra ferry terminal opened in 1978 and has two berths.")
        False
        >>> tells_dated_event("Islander Air went bust last autumn.")
        False
    """
    sentence = _first_sentence(text, nlp)
    if sentence is None or not years_named(sentence.text) or _told_as_background(sentence):
        return False
    past = [token for token in sentence if _past_verb(token)]
    if not past or any(_present_verb(token) for token in sentence):
        return False
    return not _at_earlier_time(past)


def _at_earlier_time(verbs: Sequence[Any]) -> bool:
    """One of ``verbs`` is told at an earlier time of its thing ("The union *last* struck
    in 2011", "first met", "originally built": :data:`_EARLIER_TIME`)."""
    return any(
        c.dep_ == "advmod" and c.lower_ in _EARLIER_TIME for verb in verbs for c in verb.children
    )


def dated_as_history(text: str, nlp: Any = None) -> bool:
    """Whether ``text`` is dated by a year, a decade, a century or "last year", as history
    is; a story's steps are dated by the day, the week or the month (:data:`_HISTORY_DATE`).
    A year or a century that describes a thing dates nothing the sentence tells
    (:func:`_describes_a_thing`: "Ardnagh School, *which opened in 1894*, closed in June",
    "*the 19th-century* weir was taken out"). ``nlp`` is a spaCy pipeline (default: the
    packaged English one), run only on a text naming a year or a century.

    Example:
        >>> dated_as_history("The Thornby industrial estate was expanded in 2018.")
        True
        >>> dated_as_history("Port Ardane handled 1.2 million containers last year.")
        True
        >>> dated_as_history("The clinic closed in January last year.")
        False
        >>> dated_as_history("Milk deliveries are down 18 percent on last year.")
        False
        >>> dated_as_history("Last year's display raised £6,000 for the hospice.")
        True
        >>> dated_as_history("Farmers paid nearly twice last year's price for hay.")
        False
        >>> dated_as_history("Pickering's, the grocer on Mill Street since 1946, closed in August.")
        False
    """
    return _history_dated(text, lambda: _parsed(text, nlp))


def _dated_as_history(sentence: Any) -> bool:
    """:func:`dated_as_history` of a parsed sentence."""
    return _history_dated(sentence.text, lambda: sentence, sentence.start_char)


def _history_dated(text: str, parse: Callable[[], Any], offset: int = 0) -> bool:
    """:func:`dated_as_history` of ``text``, parsed by ``parse`` (its tokens' character
    offsets start at ``offset``) only when a year or a century may describe a thing."""
    dates = list(_HISTORY_DATE.finditer(text))
    if not dates:
        return False
    if any(not _YEAR_OR_CENTURY.fullmatch(date.group(0)) for date in dates):
        return True  # "last year", "decades ago": they describe no thing
    if not _STEP_DATE.search(text):
        # Undated but by a thing's year, a sentence is background: "Kilbrannan Castle,
        # built in the 1420s, served as a signal station", "The Neighbourhood Watch
        # scheme, founded in 1984, now has 60 coordinators".
        return True
    if any(_MONTH_BEFORE.search(text, 0, date.start()) for date in dates):
        return True  # "first met in December 1999": the year dates the step itself
    parsed = parse()
    for date in dates:
        tokens = _tokens_within(parsed, date, offset)
        if not tokens or not _describes_a_thing(tokens[-1]):
            return True
    return False


def _tokens_within(parsed: Any, found: re.Match[str], offset: int = 0) -> list[Any]:
    """The tokens of ``parsed`` (a spaCy doc or span whose tokens' character offsets
    start at ``offset``) that start within the regex match ``found`` of its text."""
    return [t for t in parsed if found.start() <= t.idx - offset < found.end()]


# A story's step is dated by the day, the week, the month or the season: "closed *in
# June*", "was taken out *last autumn*", "on *Monday* night". Month names are read
# capitalised ("in May", not "may close").
_STEP_DATE = re.compile(
    r"\b(?i:yesterday|overnight|(?:last|this|next)\s+(?:week|weekend|month)"
    r"|(?:in|last|this|next|early|late|during)\s+(?:the\s+)?(?:early\s+|late\s+)?"
    r"(?:spring|summer|autumn|fall|winter))\b"
    r"|\b(?:" + "|".join(name.capitalize() for name in _WEEKDAYS + _MONTHS) + r")\b"
)
# A month right before a year ("in December 1999", "on 3 May, 2021").
_MONTH_BEFORE = re.compile(r"\b(?:" + "|".join(map(str.capitalize, _MONTHS)) + r")\W{1,3}$")
_YEAR_OR_CENTURY = re.compile(_YEAR.pattern + r"|centur(?:y|ies)", re.IGNORECASE)
# A clause or a phrase about a noun: "the school, *which opened in 1894*," (relcl), "its
# beat, *closed since 1972*" (acl), "Pickering's, *the grocer there since 1946*," (appos).
_DESCRIBING_DEPS = frozenset({"relcl", "acl", "appos"})
# The participant a year's kind names: "*the 19th-century weir* was taken out", "played
# *its 2023 home matches* away" (not "voted *in a 2019 referendum*": a when).
_PARTICIPANT_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "appos"})


def _describes_a_thing(date: Any) -> bool:
    """Whether the parsed year or century ``date`` describes a thing rather than dates
    what its sentence tells: it sits in a clause or a phrase about a noun
    (:data:`_DESCRIBING_DEPS`), or names the kind of a participant after its determiner
    (:data:`_PARTICIPANT_DEPS`)."""
    head = date.head
    before = date.left_edge.i - 1
    if (
        date.dep_ in ("compound", "amod", "nummod", "nmod")
        and head.pos_ in ("NOUN", "PROPN")
        and head.dep_ in _PARTICIPANT_DEPS
        and before >= 0
        and (date.doc[before].dep_ in ("det", "poss") or date.doc[before].tag_ == "POS")
    ):
        return True
    return _describing_clause(date) is not None


def _describing_clause(date: Any) -> Any:
    """The clause or phrase about a noun that holds the parsed year ``date``
    (:data:`_DESCRIBING_DEPS`: its head token), or ``None``."""
    token = date
    while token.head.i != token.i:
        if token.dep_ in _DESCRIBING_DEPS:
            return token
        token = token.head
    return None


def _told_of_a_dated_thing(sentence: Any) -> set[int]:
    """The indices of the tokens of ``sentence`` in a clause describing a thing by its
    year ("Gaucher disease is a disorder *that was first described in 1882*"): its
    verbs tell the thing's past, not the sentence's event. A clause holding a step's
    date holds the sentence's event too (the small parser reads "Pickering's, the grocer
    there since 1946, *closed in August*" as all one phrase about the grocer)."""
    told: set[int] = set()
    for date in _YEAR_OR_CENTURY.finditer(sentence.text):
        for token in _tokens_within(sentence, date, sentence.start_char):
            clause = _describing_clause(token)
            if clause is None:
                continue
            words = sentence.doc[clause.left_edge.i : clause.right_edge.i + 1]
            if not _STEP_DATE.search(words.text):
                told.update(t.i for t in words)
    return told


def _parsed(text: str, nlp: Any = None) -> Any:
    """``text`` parsed by ``nlp`` (default: the packaged spaCy pipeline), without its
    entity recogniser."""
    if nlp is None:
        from sarg_integrations._models import load_spacy

        nlp = load_spacy()
    text = _text.utf8_encodable(text)  # a lone surrogate would crash the parser
    # Tags, lemmas and the parse are read, never the entities: without the entity
    # recogniser a sentence parses in half the time.
    unread = [name for name in ("ner",) if name in getattr(nlp, "pipe_names", ())]
    return next(iter(nlp.pipe([text], disable=unread)))


# How a thing came to be, told as its background: "The Corran dam *was built* in 1958",
# "The Pelt cooperative *was formed* by 40 farming families", "Halvorsen's *was founded*
# in 1938". Each form maps to its verb, whose stem a question asking about that origin
# uses ("building the weir", "the founding of").
_ORIGIN_VERBS = {
    "built": "build", "constructed": "construct", "dug": "dig", "founded": "found",
    "formed": "form", "established": "establish", "created": "create", "opened": "open",
    "launched": "launch", "introduced": "introduce", "set up": "set",
}
_ORIGIN = re.compile(
    r"^\W*(?P<thing>[^,;:]+?)\s+(?:was|were)\s+(?:first\s+|originally\s+)?"
    r"(?P<verb>" + "|".join(v.replace(" ", r"\s+") for v in _ORIGIN_VERBS) + r")\b",
    re.IGNORECASE,
)


def _brings_in_new_thing(sentence: str) -> bool:
    """``sentence`` opens by telling how a thing came to be, the thing new to the text (an
    indefinite article: "A hydroelectric dam was built across the Karsk")."""
    found = _ORIGIN.match(sentence)
    return found is not None and re.match(r"an?\s", found["thing"], re.IGNORECASE) is not None


# Told as another event than the story's: "*A separate* fault in January left part of
# the village without power", "*In a separate case*, a letting agent was fined", "*A
# similar* theft at a church in nearby Stowell was solved", "The path was rerouted *once
# before*, in 1986".
_ANOTHER_EVENT = re.compile(
    r"\b(?:a|another)\s+(?:separate|similar|unrelated)\b|\bseparately\b|\bonce\s+before\b",
    re.IGNORECASE,
)


def tells_another_event(sentence: str, query: str) -> bool:
    """Whether ``sentence`` tells itself apart from the story ``query`` asks about: a
    separate, a similar or an unrelated event, or one that happened once before
    (:data:`_ANOTHER_EVENT`), unless the question asks about such an event itself.

    Example:
        >>> q = "What caused the power cut that hit Tarrant Vale on Tuesday?"
        >>> tells_another_event("A separate fault in January left part of Tarrant Vale "
        ...                     "without power overnight.", q)
        True
        >>> tells_another_event("A digger cut through an underground cable.", q)
        False
        >>> tells_another_event("A similar theft hit the church in May.",
        ...                     "Why did a similar theft go unsolved?")
        False
    """
    return _ANOTHER_EVENT.search(sentence) is not None and _ANOTHER_EVENT.search(query) is None


def tells_origin_of(sentence: str, query: str) -> bool:
    """Whether ``sentence`` opens by telling how a thing that ``query`` names came to be
    (built, founded, formed, dug, opened, …: :data:`_ORIGIN`), and ``query`` does not ask
    about that origin (no word of its verb: "How did *building* the weir affect …").

    Such a sentence is the thing's background, not a step of what happened to it: news
    tells where a dam, a club or a shop came from beside what befell it. A thing the
    question does not name may well be a step ("A hydroelectric dam was built across the
    Karsk River" for "Why did salmon disappear from the Karsk River?": the dam shares no
    word with the question but the river's, which is not the thing built).

    Example:
        >>> tells_origin_of("The Corran dam was built in 1958 to supply the city.",
        ...                 "What happened after a crack was found in the Corran dam?")
        True
        >>> tells_origin_of("A hydroelectric dam was built across the Karsk River.",
        ...                 "Why did salmon disappear from the Karsk River?")
        False
        >>> tells_origin_of("The Calder weir was built across the River Osk in 2015.",
        ...                 "How did building the Calder weir affect fishing on the Osk?")
        False
    """
    found = _ORIGIN.match(sentence)
    if found is None or not node_words(found["thing"]) & node_words(query):
        return False
    verb = _stem(_ORIGIN_VERBS[" ".join(found["verb"].lower().split())])
    return not any(_stem(word).startswith(verb) for word in re.findall(r"[a-z]+", query.lower()))


# The words a question asks with, which name no event of its own: "What *happened after*
# …", "What did … *lead* to?", "What were the *consequences* of …", "How did … *affect* …".
_ASKING_WORDS = frozenset(
    _stems(
        "why what how happened happen lead led caused cause consequences effect affect "
        "affected result resulted followed follow after so there out off end come came".split()
    )
)


def _asked_event_word_stems(query: str) -> list[frozenset[str]]:
    """The stems of each of ``query``'s event words (:func:`event_words`) less those it
    asks with, one set per word, a word once."""
    found: dict[frozenset[str], None] = {}
    for word in _event_content(query):
        stems = frozenset(_stems([word])) - _ASKING_WORDS
        if stems:
            found.setdefault(stems)
    return list(found)


def restates_asked_event(text: str, query: str, nlp: Any = None) -> bool:
    """Whether the first sentence of ``text`` tells the event ``query`` asks about, in the
    same words: at least two of the question's event words (:func:`event_words`, less
    the words it asks with), and at least half of them, one of them a verb of the
    sentence telling the past, or three or more and most of them, the sentence telling
    the past; not an earlier time of that event ("The union *last* struck in 2011").

    Such a sentence is a step of the story however it is dated ("Skellan Brewery *moved*
    its *bottling* operation from Ardry … in 2023" for "What happened after Skellan
    Brewery moved its bottling out of Ardry?"), while a sentence only naming the same
    things is not ("The Marrowfield children's clinic opened in 1994" for "Why was the
    Marrowfield children's clinic overwhelmed?"; "In 2020, before the *ban*, …": a noun).
    ``nlp`` is a spaCy pipeline (default: the packaged English one).

    Example:
        >>> restates_asked_event("Regulators banned scallop dredging in Kessa Bay in 2021.",
        ...                      "What were the consequences of the ban on scallop dredging?")
        True
        >>> restates_asked_event("In 2020, before the ban, a skipper warned about scallops.",
        ...                      "What were the consequences of the ban on scallop dredging?")
        False
    """
    told = event_words(text)
    # Counted by the question's words, not their stems: "decision" stems both as itself
    # and as "decide".
    asked = _asked_event_word_stems(query)
    shared_words = [stems for stems in asked if not stems.isdisjoint(told)]
    shared = frozenset().union(*shared_words) & told
    if len(shared_words) < 2 or 2 * len(shared_words) < len(asked):
        return False
    sentence = _first_sentence(text, nlp)
    past = [token for token in sentence or () if _past_verb(token)]
    # "The union *last* struck in 2011": an earlier time of the same event.
    if not past or _at_earlier_time(past):
        return False
    # Most of the question's words, three or more, restate it whatever the verb ("granted
    # planning permission for 200 homes on the old gasworks site" / "approved homes on
    # the old gasworks site").
    if len(shared_words) >= 3 and 2 * len(shared_words) > len(asked):
        return True
    return any(not shared.isdisjoint(_stems([token.text])) for token in past)


# A present state told as one that came about, which a profile's present is not:
# "Shopkeepers say foot patrols are *now* a rare sight", "larger ships can *no longer*
# enter", "a fifth of its drivers have *yet to* finish the course", "No lorries have been
# landed on the island *since*", "Milk deliveries are *down 18 percent* on last year".
_CHANGED_STATE = re.compile(
    r"\bnow\b|\bno\s+longer\b|\byet\s+to\b|\b(?:has|have|ever)\s+since\b"
    r"|\bsince\s*(?:[,.;]|$|and\b)"
    r"|\b(?:up|down)\s+(?:by\s+)?(?:about\s+|around\s+|nearly\s+|almost\s+|more\s+than\s+)?"
    r"(?:\d|a\s+(?:third|quarter|half)\b|half\b)"
    # ... or measured against a record or the norm: "the driest summer *on record*", "the
    # lowest level *in forty years*", "*below average*", "almost bare *by Monday*".
    r"|\bon\s+record\b|\b(?:above|below)[- ](?:the\s+)?(?:average|normal|usual)\b"
    r"|\bin\s+(?:a|one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty"
    r"|\d+)\s+(?:years|decades?)\b"
    r"|\bby\s+(?:the\s+end\s+of\s+)?(?:"
    + "|".join(_WEEKDAYS)
    + r"|morning|evening|nightfall|midday|noon|the\s+weekend)\b",
    re.IGNORECASE,
)
_PAST_MODALS = frozenset({"could", "would", "had"})
# A past state framed as one that came about or lasted a while, which a profile's plain
# "was" / "had" is not: "*By February*, most of the slopes were bare grass", "Thousands
# of flats had no heating *for four days*". Not years ("for 20 years" is a history).
_STATE_FRAME = re.compile(
    r"^\s*by\s+(?:the\s+)?(?:end\s+of\s+(?:the\s+)?|next\s+|that\s+|this\s+)?"
    r"(?:morning|noon|afternoon|evening|night|nightfall|midnight|dawn|then|weekend|time"
    r"|spring|summer|autumn|fall|winter|week|month|day|"
    + "|".join(_WEEKDAYS + _MONTHS)
    + r")\b"
    r"|\bfor\s+(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|several|many|"
    r"a\s+few|\d+)\s+(?:more\s+)?(?:hour|day|night|week|month)s?\b",
    re.IGNORECASE,
)


def _first_sentence(text: str, nlp: Any = None) -> Any:
    """The first sentence of ``text`` parsed by ``nlp`` (default: the packaged spaCy
    pipeline), or ``None`` for an empty text."""
    return next(iter(_parsed(text.strip(), nlp).sents), None)


# A past told as background, a profile's past rather than a step of a story: "The
# steelworks *once* produced a tenth of the country's steel", "The principal *previously*
# taught physics", "The music department *was known for* its chamber choir".
_KNOWN_FOR = re.compile(
    r"\b(?:is|are|was|were)\s+(?:best\s+|widely\s+|well\s+)?known\s+for\b", re.IGNORECASE
)
_BACKGROUND_ADVERBS = frozenset({"once", "previously", "formerly"})
# An earlier time of an event: background, and "the union *last* struck", "*first* met".
_EARLIER_TIME = _BACKGROUND_ADVERBS | {"last", "first", "originally"}


def _told_as_background(sentence: Any) -> bool:
    """A sentence told as background (:data:`_KNOWN_FOR`, :data:`_BACKGROUND_ADVERBS` as
    an adverb inside the clause: not "*Once* the dam broke, …")."""
    return _KNOWN_FOR.search(sentence.text) is not None or any(
        token.lower_ in _BACKGROUND_ADVERBS and token.dep_ == "advmod" and token.i > sentence.start
        for token in sentence
    )


def _came_about(sentence: Any) -> bool:
    """A sentence told in the present (a verb in the present, or one a present modal
    governs) of a state that came about (:data:`_CHANGED_STATE`): "Morning tailbacks
    *now stretch* for six miles", "Patients *must now travel* to Carrick", "Larger ships
    *can no longer enter*"."""
    return _CHANGED_STATE.search(sentence.text) is not None and any(
        _present_verb(token) or _modal_present(token) for token in sentence
    )


_PRESENT_MODALS = frozenset({"must", "can", "ca", "cannot"})  # spaCy splits "can't" as "ca"


def _modal_present(token: Any) -> bool:
    """A bare verb governed by a present modal of obligation or ability ("*must* travel",
    "*can* no longer enter"), which tells a state now, not a plan ("will") or a past."""
    return token.tag_ == "VB" and any(
        c.dep_ == "aux" and c.lower_ in _PRESENT_MODALS for c in token.children
    )


def _present_verb(token: Any) -> bool:
    """A verb in the present, not a plural noun the small tagger read as one: a word
    with an article of its own is a noun ("The stuck *barges* delayed coal deliveries").
    A bare verb with a subject of its own and no auxiliary is one the tagger read as
    the base form ("Patients now *wait* six hours")."""
    if token.tag_ == "VB":
        return any(c.dep_ == "nsubj" for c in token.children) and not any(
            c.dep_ in ("aux", "auxpass") for c in token.children
        )
    return token.tag_ in ("VBZ", "VBP") and not _misread_noun(token)


def _misread_noun(token: Any) -> bool:
    """A "verb" with an article before it ("The stuck *barges*"): a noun misread."""
    return any(
        c.dep_ == "det" and c.lower_ in _ARTICLES and c.i < token.i for c in token.children
    )


_ARTICLES = frozenset({"the", "a", "an"})


def _verbal_root(sentence: Any) -> bool:
    """The parser found the sentence's verb: its root is a finite one, not a misread noun
    ("The stuck *barges*"), a participle with no auxiliary ("*Freezing* rain coated
    Larch Hollow", "Workers *extending* the quarry uncovered a boat") or a present with no
    subject ("*Drifts* up to three metres deep built up"): the small parser often takes
    such a word for the root and the sentence's verb for a clause of it."""
    root = sentence.root
    if root.pos_ not in ("VERB", "AUX") or _misread_noun(root):
        return False
    children = [c.dep_ for c in root.children]
    if root.tag_ == "VBG" and not any(dep in ("aux", "auxpass") for dep in children):
        return False
    return root.tag_ not in ("VBZ", "VBP") or any(dep in _SUBJECTS for dep in children)


_SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})


def tells_past_event(text: str, nlp: Any = None) -> bool:
    """Whether the first sentence of ``text`` tells something that happened: its main
    verb in the past ("burned", "could not hire", "were cut", "has risen"), not a
    copula ("was a port") unless the state is an outcome ("As a result, …") or framed as
    one that came about or lasted ("By morning, visibility was below 50 metres", "had
    no heating for four days"), and no year, decade or century dating it as history
    ("last year" too: "Port Ardane handled 1.2 million containers last year"). A state
    told in the present as one that came about is what happened too ("Foot patrols are
    now a rare sight", "Milk deliveries are down 18 percent on last year"), and so is a
    state, past or present, measured against a record or the norm ("had its driest
    summer on record", "was 55 percent below average", "almost bare by Monday"). A past
    told as background is none ("once produced", "previously taught", "was known for").
    A new thing's coming to be is an event even dated ("*A* hydroelectric dam was built
    across the Karsk in 2005"), a known one's is history ("*The* gym was built in 1974").

    Profiles, which the stories' distractors are, are told in the present ("The hills
    are covered with pine", "Dock workers earn more") or dated ("opened in 1978").
    ``nlp`` is a spaCy pipeline (default: the packaged English one).

    Example:
        >>> tells_past_event("A wildfire near Ostra burned through the hills.")
        True
        >>> tells_past_event("The bus company could not hire enough drivers.")
        True
        >>> tells_past_event("The hills above Ostra are covered with pine forests.")
        False
        >>> tells_past_event("The ferry terminal opened in 1978 and has two berths.")
        False
        >>> tells_past_event("As a result, customers had no mobile service on Sunday.")
        True
        >>> tells_past_event("By February, most of the ski slopes were bare grass.")
        True
        >>> tells_past_event("The ski slopes were bare grass.")
        False
        >>> tells_past_event("The port handled 1.2 million containers last year.")
        False
        >>> tells_past_event("Shopkeepers say foot patrols are now a rare sight.")
        True
    """
    sentence = _first_sentence(text, nlp)
    if sentence is None or _told_as_background(sentence):
        return False
    if _dated_as_history(sentence):
        # Dated as history, only a new thing's coming to be is a step: "*A* hydroelectric
        # dam was built across the Karsk in 2005", not "*The* gym was built in 1974".
        return _brings_in_new_thing(sentence.text)
    if _came_about(sentence):
        return True
    # A past state told as an outcome is what happened: "As a result, two million
    # customers *had* no mobile service" (a plain "had" or "was" is a profile's).
    past = any(t.tag_ == "VBD" for t in sentence)
    if past and (
        continues_earlier_text(sentence.text)
        or _STATE_FRAME.search(sentence.text)
        or _CHANGED_STATE.search(sentence.text)
    ):
        return True
    # Any verb in the past, read token by token: the small parser often misses the root
    # ("A wildfire near Ostra burned …" is parsed as a noun phrase). A dated thing's past
    # is no event of the sentence ("a disorder that was first described in 1882").
    described = _told_of_a_dated_thing(sentence)
    return any(_past_verb(token) for token in sentence if token.i not in described)


def states_in_present(text: str, nlp: Any = None) -> bool:
    """Whether the first sentence of ``text`` is told in the present: a verb in the present
    ("provides", "is made") and none in the past ("cut", "was built in 1958", "had no
    way"), in the present perfect ("has risen") or with a modal ("will seek", "could
    not"). Profiles and general facts are told so ("Norovirus is a common cause of
    stomach illness", "Hydroelectric power provides half of the electricity"), not a
    state told as one that came about ("Tailbacks now stretch for six miles", "Rents are
    up 25 percent", "Ships can no longer enter"); a looser
    test than :func:`tells_past_event`, which also reads dated sentences and plain past
    states as history. ``nlp`` is a spaCy pipeline (default: the packaged English one).

    Example:
        >>> states_in_present("Glass is made by melting sand.")
        True
        >>> states_in_present("The province banned wolf hunting in 2010.")
        False
        >>> states_in_present("Rents have climbed 35 percent in two years.")
        False
        >>> states_in_present("A water main burst under Tarrow Street on Monday.")
        False
        >>> states_in_present("Morning tailbacks into Lowmarsh now stretch for six miles.")
        False
    """
    sentence = _first_sentence(text, nlp)
    return sentence is not None and _told_in_present(sentence)


def _told_in_present(sentence: Any) -> bool:
    """:func:`states_in_present` of a parsed sentence."""
    if _came_about(sentence) and not _dated_as_history(sentence):
        return False
    # A past participle read without its auxiliary counts (:func:`_past_verb`: "shops on
    # the high street closed by the summer" is parsed with a VBN root), and a modal tells
    # a plan, a possibility or the past ("Olmert will seek …", "could not").
    if any(
        token.tag_ in ("VBD", "MD")
        or token.dep_ == "aux" and token.lemma_ == "have"  # "have been patrolling"
        or _bare_past(token)
        or _past_verb(token)
        for token in sentence
    ):
        return False
    # Only a verb in the present says so: a sentence parsed with no finite verb ("A water
    # main burst under Tarrow Street", "burst" read as a noun) may well tell the past.
    return any(_present_verb(token) for token in sentence)


def states_profile(text: str, nlp: Any = None) -> bool:
    """Whether the first sentence of ``text`` states a profile or a general fact, not what
    happened: told in the present (:func:`states_in_present`) or told as background, a
    past that describes rather than happens ("The steelworks once produced a tenth of the
    country's steel", "The principal previously taught physics", "The department was
    known for its choir"). ``nlp`` is a spaCy pipeline (default: the packaged English one).

    Example:
        >>> states_profile("Glass is made by melting sand.")
        True
        >>> states_profile("The Brennock steelworks once produced a tenth of the steel.")
        True
        >>> states_profile("Once the dam broke, the valley flooded.")
        False
    """
    sentence = _first_sentence(text, nlp)
    return sentence is not None and (
        _told_in_present(sentence) or _told_as_background(sentence)
    )


def _bare_past(token: Any) -> bool:
    """A verb read as a bare present that its singular subject says is past: "The weaker
    flow *let* salt water push up the estuary" (the present is "lets"). Only a verb whose
    past is its bare form can be one ("British Transport Police *say*" is a present: a
    name's number is not in its tag)."""
    return token.tag_ == "VBP" and token.lower_ in _SAME_IN_PAST and any(
        c.dep_ == "nsubj" and c.tag_ in ("NN", "NNP") for c in token.children
    )


# English verbs whose past is their bare form.
_SAME_IN_PAST = frozenset({
    "bet", "bid", "broadcast", "burst", "cast", "cost", "cut", "fit", "forecast", "hit",
    "hurt", "let", "put", "quit", "read", "rid", "set", "shed", "shut", "slit", "split",
    "spread", "thrust", "upset",
})


@runtime_checkable
class EventReader(Protocol):
    """Tells a document that states something that happened from a profile."""

    def tells_event(self, text: str) -> bool:
        """Whether ``text`` tells an event (a step a story may start from)."""
        ...


@runtime_checkable
class ProfileReader(Protocol):
    """Tells a statement of what a thing is or does (a profile, a general fact) from one
    of what happened."""

    def states_profile(self, text: str) -> bool:
        """Whether ``text`` states a profile or a general fact, not what happened."""
        ...


class PresentTenseProfileReader:
    """:func:`states_profile` with ``nlp``, default the packaged spaCy pipeline (loaded
    once per process, on first use)."""

    def __init__(self, nlp: Any = None) -> None:
        self._nlp = nlp

    def states_profile(self, text: str) -> bool:
        return states_profile(text, self._nlp)


class PastTenseEventReader:
    """:func:`tells_past_event` with ``nlp``, default the packaged spaCy pipeline (loaded
    once per process, on first use)."""

    def __init__(self, nlp: Any = None) -> None:
        self._nlp = nlp

    def tells_event(self, text: str) -> bool:
        return tells_past_event(text, self._nlp)


def _past_verb(token: Any) -> bool:
    """A verb telling the past: "burned", "were cut", "could not hire", "had to cut",
    "has risen"; not a copula or "had" alone, nor a present passive ("are covered")."""
    if token.pos_ not in ("VERB", "AUX") or token.dep_ in ("aux", "auxpass"):
        return False
    if token.dep_ in ("acl", "amod") and _verbal_root(token.sent):
        return False  # "the main catches landed at Velmar": a description, not the event
    auxiliaries = [c for c in token.children if c.dep_ in ("aux", "auxpass")]
    obliged = token.lemma_ == "have" and any(c.dep_ == "xcomp" for c in token.children)
    if token.lemma_ in ("be", "have") and not auxiliaries and not obliged:
        return False
    if any(a.tag_ in ("VBZ", "VBP") and a.lemma_ == "be" or a.tag_ == "MD" and
           a.lower_ not in _PAST_MODALS for a in auxiliaries):
        return False
    if token.tag_ == "VBD" or any(a.tag_ == "VBD" or a.lower_ in _PAST_MODALS for a in auxiliaries):
        return True
    # The present perfect ("cases have risen"), or a past participle read without its
    # auxiliary ("Mosquitoes bred rapidly") or in a sentence parsed with no finite verb
    # ("Thousands of tonnes of crude oil leaked …").
    return token.tag_ == "VBN" and (
        any(a.lemma_ == "have" for a in auxiliaries)
        or any(c.dep_ == "nsubj" for c in token.children)
        or not _verbal_root(token.sent)
    )


def names_same_event(a: str, b: str) -> bool:
    """Whether texts ``a`` and ``b`` share a word of what happened (:func:`event_words`),
    or one's word heads a compound of the other's ("chip" / "microchips").

    Example:
        >>> names_same_event("the chip shortage at Orvo", "Orvo could not get microchips")
        True
        >>> names_same_event("the chip shortage at Orvo", "Orvo makes phones")
        False
    """
    if not event_words(a).isdisjoint(event_words(b)):
        return True
    words_a, words_b = _lower_stems(a), _lower_stems(b)
    return any(
        _compound_head(x, y) or _compound_head(y, x) for x in words_a for y in words_b
    )


def restates_key_phrase(node: str, keyphrase: str, query: str) -> bool:
    """Whether entry node ``node`` says in its own words all that key phrase ``keyphrase``
    asks about: every word of the phrase the ``query`` writes in lower case (no name),
    at least two of them, is in the node (:func:`node_words`, so "halted" meets "halt").

    Embedding similarity underrates such a node when the document names the subject
    by a common noun or leaves it out: "club filed for bankruptcy" is 0.64 like "fc file
    bankruptcy" for "Why did Ambry FC file for bankruptcy?", "owners halted production"
    0.62 like "halt production". A name alone is no such restatement ("Lusk mine"), nor
    is one shared word ("club filed").

    Example:
        >>> query = "Why did Ambry FC file for bankruptcy?"
        >>> restates_key_phrase("club filed for bankruptcy", "fc file bankruptcy", query)
        True
        >>> restates_key_phrase("club filed", "fc file bankruptcy", query)
        False
        >>> restates_key_phrase("Ambry FC", "ambry fc", query)
        False
    """
    asked = node_words(keyphrase) & event_words(query)
    return len(asked) >= 2 and asked <= node_words(node)


def _common_words(text: str) -> list[str]:
    # The content words of ``text`` that are not names (no capital), lower-cased.
    return [w.lower() for w in _content(text) if not w[:1].isupper()]


def _lower_stems(text: str) -> set[str]:
    return set(_stems(_common_words(text)))


def documents_continuing_event(
    text: str, triples: Sequence[Triple], upstream: bool
) -> list[str]:
    """Documents whose triples continue the event ``text`` tells, the asked way.

    ``text`` is a document that tells what a question asks about with no relation of its
    own ("Hundreds of passengers missed their flights and were stranded"). Upstream, a
    triple continues it when its effect (name or whole span) or relation names the same
    event (:func:`names_same_event`: "staff had to process *passengers* by hand");
    downstream, when its cause does ("*The lack of chips* halted the assembly line" /
    "Orvo could not get enough *microchips*").

    Returns:
        The document ids, in the order of ``triples``.

    Example:
        >>> t = [Triple("check-in system", "without", "staff had to process passengers",
        ...             document_id="queues"),
        ...      Triple("Tessa Airlines", "flies to", "40 cities", document_id="profile")]
        >>> documents_continuing_event("Passengers were stranded.", t, upstream=True)
        ['queues']
        >>> documents_continuing_event("Passengers were stranded.", t, upstream=False)
        []
    """
    found: dict[str, None] = {}
    for t in triples:
        if upstream:
            sides = [t.effect, t.effect_text or t.effect, t.relation]
        else:
            sides = [t.cause, t.cause_text or t.cause]
        if any(names_same_event(text, side) for side in sides if side):
            found.setdefault(t.document_id, None)
    return list(found)


# A first sentence that says it follows from what was told before: "As a result, card
# payments were declined", "This meant that …", "Because of this, …", "In response, …",
# or a result adverb before the clause's verb with no clause of its own before it ("The
# council therefore closed the bridge"; not "Prices rose; therefore …", whose cause is its
# own).
_CONTINUING_OPENER = re.compile(
    r"^\W*(?:as\s+a\s+(?:direct\s+)?(?:result|consequence)(?:\s+of\s+(?:this|that|it))?\s*,|"
    r"consequently\b|(?:therefore|thus|hence|accordingly)\s*,|"
    r"in\s+response(?:\s+to\s+(?:this|that|it))?\s*,|"
    r"(?:because\s+of|due\s+to|owing\s+to)\s+(?:this|that|it)\s*,|"
    r"for\s+(?:this|that)\s+reason\b|(?:this|that)\s+meant\b|"
    r"(?:[\w'’-]+\s+){1,5}(?:therefore|thus|consequently|accordingly)\s+\w)",
    re.IGNORECASE,
)


def continues_earlier_text(text: str) -> bool:
    """Whether ``text`` opens by saying it follows from something told before it ("As a
    result, …", "Consequently …", "This meant that …", "The council therefore closed
    …"): its cause is in another document.

    Example:
        >>> continues_earlier_text("As a result, card payments were declined.")
        True
        >>> continues_earlier_text("The council therefore closed the bridge to lorries.")
        True
        >>> continues_earlier_text("Prices rose; therefore demand fell.")
        False
        >>> continues_earlier_text("As a result of the storm, the road closed.")
        False
    """
    return _CONTINUING_OPENER.match(text) is not None


# What has happened since something told before: "The junior section *has since* grown",
# "Reservoir levels *have since* stabilised", "*Since then*, …".
_SINCE_THEN = re.compile(
    r"\b(?:has|have|had)\s+since\b|\bsince\s+then\b|\bever\s+since\b", re.IGNORECASE
)


def tells_what_followed(text: str) -> bool:
    """Whether ``text`` tells what has happened since an event told elsewhere ("has
    since", "since then", "ever since"): a later step of a story, whose earlier step is
    in another document. Not "since 2020", which dates a state.

    Example:
        >>> tells_what_followed("The junior section has since grown to 150 players.")
        True
        >>> tells_what_followed("Ivo Brandt has managed the club since 2020.")
        False
    """
    return _SINCE_THEN.search(text) is not None


# A phrase dating what a sentence tells after an event, or naming the event as its reason:
# "since the last evening boat was withdrawn", "after the delay", "in the wake of the
# closure", "because of the new price". Not "has since", an adverb ("rain has since
# leaked in"), which dates nothing.
_AFTER_EVENT = re.compile(
    r"\b(?:since|after|following|in\s+the\s+wake\s+of|because\s+of|due\s+to|now\s+that)"
    r"\s+([^.,;:!?]{3,80})",
    re.IGNORECASE,
)
_ADVERB_BEFORE = re.compile(r"\b(?:has|have|had|ever)\s+$", re.IGNORECASE)
# Words of a why-question that date or ask, not tell, its event: "this *year's* Muster",
# "What *prompted* …", "closed *until* …".
_DATING_WORDS = frozenset(
    _stems(
        "year years week weeks month months day days time times almost until last first "
        "prompted prompt triggered trigger behind made make drove drive set".split()
    )
)


def tells_what_came_of(text: str, query: str) -> bool:
    """Whether ``text`` tells something that came after, or of, the event ``query`` asks.

    A phrase opened by "since", "after", "following", "in the wake of", "because of",
    "due to" or "now that" holds one of the question's event words
    (:func:`event_words`, less those it asks or dates with).

    Asked why an event happened, such a text is a later step, not a cause: "Takings at
    the Harbour Inn have fallen by a third *since the last evening boat was withdrawn*"
    for "Why did Lochvale Ferries suspend its evening crossings?". The asked event's own
    document may say so too ("*Following the pike tests*, the health department advised
    adults to eat Dorran pike once a month"), so the caller keeps the document most
    relevant to the question.

    Example:
        >>> q = "Why did Lochvale Ferries suspend its evening crossings from Brennock?"
        >>> tells_what_came_of("Takings at the Harbour Inn have fallen by a third since "
        ...                    "the last evening boat was withdrawn.", q)
        True
        >>> tells_what_came_of("After the January gale, the slipway's ramp cracked.", q)
        False
        >>> tells_what_came_of("Rain has since leaked into the evening crossings' office.", q)
        False
    """
    asked = frozenset().union(*_asked_event_word_stems(query)) - _DATING_WORDS
    if not asked:
        return False
    for found in _AFTER_EVENT.finditer(text):
        if _ADVERB_BEFORE.search(text, 0, found.start()):
            continue
        if not asked.isdisjoint(_stems(_content(found.group(1)))):
            return True
    return False


_OPENS_AFTER_EVENT = re.compile(
    r"\s*(?:since|after|following|in\s+the\s+(?:wake|aftermath)\s+of|as\s+a\s+result\s+of"
    r"|because\s+of|due\s+to|in\s+response\s+to)"
    r"\s+(?P<event>(?:the|this|that)\s+[\w'-]+(?:\s+[\w'-]+){0,3}?)\s*,",
    re.IGNORECASE,
)


def told_after_asked_event(
    query: str,
    documents: Sequence[SourceDocument],
    similarity: Callable[[Sequence[str], Sequence[str]], Any],
    nlp: Any = None,
    among: Collection[str] | None = None,
) -> set[str]:
    """The documents that open by telling what came after the event ``query`` asks.

    The event may be named in other words than the question's: "*Following the outage*,
    Brindle Bank said it would pay 25 pounds to every customer …" for "Why could Brindle
    Bank customers not use their cards for six hours on Saturday?".

    A document opening "After / Following / Since / As a result of / In the wake of the
    ⟨event⟩," continues from an event told elsewhere. When that phrase is more similar
    (``similarity``: texts ``a``, texts ``b`` → their cosine matrix) to the question than
    to any other retrieved document, the event it continues from is the asked one, and
    the document tells what came of it; when another document is more like it, that
    document is likely the earlier step it continues ("After the collapse, engineers had
    to inspect every building on the site", the collapse told in a document of its own).
    A document restating the asked event (:func:`restates_asked_event`: "In the wake of
    the inquest, the health board has commissioned an independent review of ambulance
    response times" for why the board launched that review) is the event itself and is
    not returned. ``nlp`` is a spaCy pipeline (default: the packaged English one). Given
    ``among`` (document ids), only those documents are read for an opening; every
    retrieved document is still compared with it.

    Example:
        >>> docs = [SourceDocument("e", "The bank's card system went down for six hours."),
        ...         SourceDocument("l", "Following the outage, the bank paid every customer "
        ...                             "25 pounds.")]
        >>> def similar(a, b):  # stands in for embedding cosines
        ...     return [[0.6 if "cards" in y else 0.2 for y in b] for x in a]
        >>> told_after_asked_event("Why could customers not use their cards?", docs, similar)
        {'l'}
    """
    texts = [d for d in documents if d.text.strip()]
    opening: dict[str, tuple[str, str]] = {}  # document id -> (event phrase, its text)
    for doc in texts:
        found = _OPENS_AFTER_EVENT.match(doc.text)
        if found is not None and doc.id not in opening and (among is None or doc.id in among):
            opening[doc.id] = (found["event"], doc.text)
    if not opening:
        return set()
    rows = _rows(
        similarity([event for event, _ in opening.values()], [query, *(d.text for d in texts)])
    )
    told = set()
    for (doc_id, (_, text)), row in zip(opening.items(), rows):
        to_query, to_texts = float(row[0]), row[1:]
        nearest_other = max(
            (float(x) for d, x in zip(texts, to_texts) if d.id != doc_id), default=-1.0
        )
        if to_query > nearest_other and not restates_asked_event(text, query, nlp):
            told.add(doc_id)
    return told


def antecedent_documents(
    documents: Sequence[SourceDocument],
    similarity: Callable[[Sequence[str], Sequence[str]], Any],
    event_reader: EventReader | None = None,
) -> dict[str, str]:
    """Each document that continues earlier text (:func:`continues_earlier_text`) → the
    document it most likely follows from: of the others that tell an event
    (``event_reader``, default :class:`PastTenseEventReader`), the most similar one
    (``similarity``: texts ``a``, texts ``b`` → their cosine matrix; ties to the earlier
    document). Retrieval does not keep a text's order, so "As a result, card payments
    … were declined" is joined to "A faulty update was installed on the bank's payment
    servers" by what it says, not by where it stands; a profile ("The bank has two
    million customers") tells no event and is never an antecedent.

    Example:
        >>> docs = [SourceDocument("a", "A storm cut the power."),
        ...         SourceDocument("b", "As a result, the presses stopped."),
        ...         SourceDocument("c", "The plant prints four papers.")]
        >>> def similar(a, b):  # stands in for embedding cosines
        ...     return [[0.5 if "power" in y else 0.1 for y in b] for x in a]
        >>> class Past:
        ...     def tells_event(self, text):
        ...         return "cut" in text or "stopped" in text
        >>> antecedent_documents(docs, similar, Past())
        {'b': 'a'}
    """
    texts = [d for d in documents if d.text.strip()]
    continuing = [d for d in texts if continues_earlier_text(d.text)]
    if not continuing:
        return {}
    reader = event_reader or PastTenseEventReader()
    events = [d for d in texts if reader.tells_event(d.text)]
    out: dict[str, str] = {}
    for doc, row in zip(continuing, _rows(similarity([d.text for d in continuing],
                                                     [d.text for d in events]))):
        scored = [(-float(x), i) for i, x in enumerate(row) if events[i].id != doc.id]
        if scored:
            out[doc.id] = events[min(scored)[1]].id
    return out


def _rows(matrix: Any) -> list[list[float]]:
    return [list(row) for row in (matrix.tolist() if hasattr(matrix, "tolist") else matrix)]


def documents_stating_open_causes(
    held: Sequence[str],
    triples: Sequence[Triple],
    documents: Sequence[SourceDocument],
    *,
    from_ends: Collection[str] | None = None,
    event_reader: EventReader | None = None,
) -> list[str]:
    """Documents with no triple that state where the held documents' story starts.

    A story's first step is often an event told with no relation of its own ("In March
    the government raised tariffs on imported cotton"; "A wildfire near Ostra burned
    through the hills"), so no triple links it to the next document ("The higher
    tariffs pushed up the cost …"; "Thick smoke from the fire …"). A document without
    triples is linked when one of its words names a cause where the held documents'
    triples stop upstream (:func:`open_ends` that :func:`names_event`): one shared stem
    of what happened (:func:`event_words`: not a place or company name), or the end's
    word as the head of a compound ("wildfire" / "the fire"). A profile of the same
    place ("The hills above Ostra are covered with pine") names no such cause, and a
    document must tell an event (``event_reader``, default :func:`tells_past_event`):
    profiles that share the story's words ("The Norbeck textile factory employs 1,200
    people") are told in the present. ``from_ends``, when given, limits the causes
    followed to those named in it.

    Returns:
        The linked document ids, in the order of ``documents``.

    Example:
        >>> t = [Triple("higher tariffs", "pushed up", "cost", document_id="costs")]
        >>> docs = [SourceDocument("tariff", "The government raised tariffs on cotton."),
        ...         SourceDocument("costs", "The higher tariffs pushed up the cost."),
        ...         SourceDocument("cotton", "Cotton is grown in warm regions.")]
        >>> documents_stating_open_causes(["costs"], t, docs)
        ['tariff']
        >>> docs[0] = SourceDocument("tariff", "Tariffs are set by the government.")
        >>> documents_stating_open_causes(["costs"], t, docs)
        []
    """
    held_ids = set(held)
    own = [t for t in triples if t.document_id in held_ids]
    open_causes = set(open_ends(own, upstream=True))
    stems: set[str] = set()
    heads: set[str] = set()
    for t in own:
        if t.cause not in open_causes or not names_event(t.cause):
            continue
        if from_ends is not None and t.cause not in from_ends:
            continue
        for text in {t.cause, t.cause_text or t.cause}:
            stems |= event_words(text)
            heads.update(_common_words(text))
    if not stems:
        return []
    bearing = {t.document_id for t in triples}
    candidates = []
    for doc in documents:
        if doc.id in held_ids or doc.id in bearing or not doc.text.strip():
            continue
        if not event_words(doc.text).isdisjoint(stems) or any(
            _compound_head(w, end) for w in _common_words(doc.text) for end in heads
        ):
            candidates.append(doc)
    reader = event_reader or PastTenseEventReader()
    return [doc.id for doc in candidates if reader.tells_event(doc.text)]


def _names_told_event(
    cause: frozenset[str], told: Sequence[tuple[frozenset[str], frozenset[str]]]
) -> bool:
    """Whether a cause names an open end's event by its relation: "*The halt* delayed
    deliveries" after "The lack of chips *halted* the assembly line". Every word of the
    cause is the relation's or the effect's, one the relation's: "rising bond yields" is
    no "gives rise to" Gaucher cells.

    Example:
        >>> told = [(frozenset({"halt"}), frozenset({"assembl", "line"}))]
        >>> _names_told_event(frozenset({"halt"}), told)
        True
        >>> _names_told_event(frozenset({"halt", "strike"}), told)
        False
    """
    return bool(cause) and any(
        not cause.isdisjoint(relation) and cause <= relation | effect for relation, effect in told
    )


WordPairs = list[tuple[frozenset[str], frozenset[str]]]


def _touching(
    candidate: tuple[frozenset[str], frozenset[str]],
    held: tuple[frozenset[str], frozenset[str]],
    upstream: bool | None,
) -> tuple[WordPairs, WordPairs]:
    """The (candidate's end, held triple's end) word sets that may name one thing: those
    that link, and the siblings that link only when they tell an event.

    Asked for causes (``upstream``), a triple whose cause names a held cause is a
    sibling: it tells another effect of the same thing ("Blasting at the Tamsin quarry
    cracked the rock" / "The Tamsin quarry produces limestone"); asked for effects,
    likewise, one whose effect names a held effect (another cause of the same thing).

    Example:
        >>> c, e = frozenset({"tamsin", "quarri"}), frozenset({"limeston"})
        >>> direct, siblings = _touching((c, e), (c, frozenset({"rock"})), None)
        >>> len(direct), siblings
        (4, [])
        >>> direct, siblings = _touching((c, e), (c, frozenset({"rock"})), upstream=True)
        >>> (c, c) in direct, (c, c) in siblings
        (False, True)
    """
    (cause, effect), (held_cause, held_effect) = candidate, held
    direct = [(cause, held_effect), (effect, held_cause)]
    siblings: WordPairs = []
    if upstream is True:
        siblings.append((cause, held_cause))
    else:
        direct.append((cause, held_cause))
    if upstream is False:
        siblings.append((effect, held_effect))
    else:
        direct.append((effect, held_effect))
    return direct, siblings


def _similar_continuations(
    spans: Sequence[str],
    candidates: Sequence[Triple],
    upstream: bool,
    similarity: Callable[[Sequence[str], Sequence[str]], Any],
    match: float,
    margin: float,
    event_reader: EventReader | None = None,
) -> list[str]:
    """The documents of ``candidates`` whose continuing end (the effect, or the relation
    and the effect, upstream) is at least ``match`` similar to one of ``spans`` and
    within ``margin`` of that span's best candidate; in the order of ``candidates``.
    With ``event_reader``, only candidates whose sentence tells an event count, for the
    best as for the margin: a similar span may only share a topic ("Blasting at the
    Tamsin quarry" / "The Tamsin quarry produces limestone": 0.39)."""
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
    told: dict[int, bool] = {}

    def eligible(i: int) -> bool:
        # Read only the candidates a score puts in reach, each once.
        if event_reader is None:
            return True
        if i not in told:
            told[i] = event_reader.tells_event(candidates[i].sentence or sides[i])
        return told[i]

    for row, event_row in zip(rows, event_rows):
        scores = [max(float(x), float(y)) for x, y in zip(row, event_row)]
        ranked = sorted((i for i, x in enumerate(scores) if x >= match), key=lambda i: -scores[i])
        best = next((scores[i] for i in ranked if eligible(i)), None)
        if best is None:
            continue
        floor = max(match, best - margin)
        hits.update(i for i in ranked if scores[i] >= floor and eligible(i))
    return list(dict.fromkeys(candidates[i].document_id for i in sorted(hits)))
