"""Metrics of the causal evaluation (ESTER questions, ESC event links); pure functions.

**Content words** (:func:`content_words`), used by every ESTER score: the text is
lower-cased (curly apostrophes made straight), cut into runs of letters and digits,
a trailing possessive ``'s`` / ``'`` is removed, words in :data:`STOPWORDS` (articles,
pronouns, auxiliaries, prepositions, conjunctions, a few fillers) are dropped, and a
light plural rule maps ``-ies`` to ``-y``, ``-sses``/``-ches``/``-shes``/``-xes`` to
``-ss``/``-ch``/``-sh``/``-x``, and strips a final ``-s`` (not ``-ss``, ``-us``, ``-is``)
from words longer than three letters (no other stemming: *convicted* and *conviction*
stay different words). A phrase with no content word
falls back to all its words (so "it" can still be matched).

**Half-match** (:func:`half_match`): a phrase ``g`` is found in a word set ``W`` when
at least half of ``g``'s content words are in ``W`` (``2·|G ∩ W| ≥ |G|``, ``G`` not
empty). It scores

* *answer in chains*: a gold answer span against the content words of the kept
  chains' node names (what the prompt's chain lines show);
* *evidence answer recall*: a gold answer span against the evidence's content words;
* the *fuzzy node match* of gold ``causal_graph`` nodes: a gold node matches a SARG
  node when half of the gold node's content words are in the SARG node's words (its
  name and every alias merged into it).

A question counts as answered when any of its gold spans is found.

ESC links (:func:`esc_link_found`): a gold cause → effect link is found by a triple
when the triple's cause holds the cause event's trigger and its effect holds the
effect event's trigger (:func:`trigger_in`: the trigger's lower-cased word sequence
occurs contiguously in the phrase's), and the triple was read from a sentence that
holds one of the two events (:func:`triple_sentences`).

Example:
    >>> sorted(content_words("The bonds became worthless"))
    ['became', 'bond', 'worthless']
    >>> half_match("defraud thousands of investors", content_words("Keating defrauded investors"))
    False
    >>> half_match("defraud thousands of investors", content_words("defraud investors"))
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "STOPWORDS",
    "budget_sentences",
    "content_words",
    "esc_link_found",
    "gold_edge_recovery",
    "gold_multi_hop_pairs",
    "half_match",
    "has_directed_path",
    "matching_nodes",
    "node_words",
    "trigger_in",
    "triple_sentences",
    "word_count",
]

STOPWORDS = frozenset(
    """
    a an the and or but nor so yet if then than that this these those there here
    of to in on at by for with from into onto over under about after before during
    since until up down out off as via per
    is are was were be been being am do does did doing done have has had having
    will would shall should can could may might must
    i me my we us our you your he him his she her it its they them their who whom
    whose which what when where why how
    not no also just very more most much many some any all each both other such
    own same too only its it's s t
    """.split()
)
"""Words that never count as content words (see the module docstring)."""

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_TEXT_WORD = re.compile(r"\w+(?:['\u2019]\w+)*")


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "ches", "shes", "xes", "zzes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _words(text: str) -> list[str]:
    out = []
    for word in _WORD.findall(str(text).lower().replace("\u2019", "'")):
        if word.endswith("'s"):
            word = word[:-2]
        word = word.strip("'")
        if word:
            out.append(word)
    return out


def content_words(text: str) -> frozenset[str]:
    """The normalised content words of ``text`` (see the module docstring).

    Example:
        >>> sorted(content_words("Keating's convictions were thrown out"))
        ['conviction', 'keating', 'thrown']
        >>> sorted(content_words("it"))
        ['it']
    """
    words = [_singular(w) for w in _words(text)]
    kept = frozenset(w for w in words if w not in STOPWORDS)
    return kept or frozenset(words)


def half_match(phrase: str, words: Iterable[str], threshold: float = 0.5) -> bool:
    """Whether at least ``threshold`` of ``phrase``'s content words are in ``words``.

    ``words`` should already be content words (:func:`content_words`). An empty
    phrase never matches.

    Example:
        >>> half_match("Keating is convicted of security fraud", {"fraud"})
        False
        >>> half_match("Keating is convicted of security fraud", {"keating", "fraud"})
        True
        >>> half_match("security fraud", {"keating", "fraud"})
        True
    """
    gold = content_words(phrase)
    if not gold:
        return False
    have = words if isinstance(words, (set, frozenset)) else set(words)
    return len(gold & have) >= threshold * len(gold)


def word_count(text: str) -> int:
    """Words in ``text`` (runs of word characters, apostrophes kept inside).

    Example:
        >>> word_count("Keating's convictions stand, a ruling.")
        5
    """
    return len(_TEXT_WORD.findall(str(text)))


def budget_sentences(ranked: Sequence[str], budget_words: int) -> list[int]:
    """Indices of ``ranked`` texts taken in order while their words fit the budget.

    A text that would overflow the budget is skipped and the next ones are still
    tried (the baseline uses its budget as fully as the ranking allows).

    Example:
        >>> budget_sentences(["a b c", "d e f g h", "i j"], 5)
        [0, 2]
    """
    chosen: list[int] = []
    used = 0
    for index, text in enumerate(ranked):
        n = word_count(text)
        if used + n <= budget_words:
            chosen.append(index)
            used += n
    return chosen


# --------------------------------------------------------------------------- graphs


def node_words(graph: Any) -> dict[str, frozenset[str]]:
    """Node → content words of its name and every alias, for a networkx graph.

    Example:
        >>> import networkx as nx
        >>> g = nx.DiGraph(); g.add_node("bond prices", aliases=["bonds"])
        >>> sorted(node_words(g)["bond prices"])
        ['bond', 'price']
    """
    out: dict[str, frozenset[str]] = {}
    for node, data in graph.nodes(data=True):
        words = set(content_words(str(node)))
        for alias in data.get("aliases", ()) or ():
            words |= content_words(str(alias))
        out[node] = frozenset(words)
    return out


def matching_nodes(phrase: str, words_of: Mapping[str, Iterable[str]]) -> list[str]:
    """The nodes that ``phrase`` half-matches (fuzzy node match), in mapping order.

    Example:
        >>> matching_nodes("Keating's convictions dismissed",
        ...                {"keating convictions": {"keating", "conviction"},
        ...                 "prison": {"prison"}})
        ['keating convictions']
    """
    return [node for node, words in words_of.items() if half_match(phrase, words)]


def has_directed_path(graph: Any, sources: Iterable[str], targets: Iterable[str]) -> bool:
    """Whether some source reaches some *other* target node over ≥ 1 directed edge.

    Example:
        >>> import networkx as nx
        >>> g = nx.DiGraph([("a", "b"), ("b", "c")])
        >>> has_directed_path(g, ["a"], ["c"]), has_directed_path(g, ["c"], ["a"])
        (True, False)
    """
    import networkx as nx

    targets = set(targets)
    for source in set(sources):
        if source not in graph:
            continue
        reach = nx.descendants(graph, source)
        if reach & (targets - {source}):
            return True
    return False


def gold_edge_recovery(
    gold_edges: Sequence[tuple[str, str, str]], graph: Any
) -> list[dict[str, Any]]:
    """Score each gold ``(head, rel, tail)`` edge against a reasoning graph.

    Per edge: ``nodes`` (both head and tail fuzzily match some node), ``path`` (a
    directed path leads from a head-matching node to a different tail-matching node)
    and ``edge`` (a direct edge does).

    Example:
        >>> import networkx as nx
        >>> g = nx.DiGraph([("court ruling", "convictions stand")])
        >>> gold_edge_recovery([("the court ruling", "ENABLES", "the convictions stand")], g)
        [{'head': 'the court ruling', 'rel': 'ENABLES', 'tail': 'the convictions stand', 'nodes': True, 'path': True, 'edge': True}]
    """  # noqa: E501
    words_of = node_words(graph)
    out = []
    for head, rel, tail in gold_edges:
        heads = matching_nodes(head, words_of)
        tails = matching_nodes(tail, words_of)
        direct = any(graph.has_edge(h, t) for h in heads for t in tails if h != t)
        out.append(
            {
                "head": head,
                "rel": rel,
                "tail": tail,
                "nodes": bool(heads and tails),
                "path": direct or has_directed_path(graph, heads, tails),
                "edge": direct,
            }
        )
    return out


# --------------------------------------------------------------------------- ESC


def _seq(text: str) -> list[str]:
    return re.findall(r"\w+", str(text).lower())


def trigger_in(trigger: str, phrase: str) -> bool:
    """Whether ``trigger``'s words occur contiguously (lower-cased) in ``phrase``.

    Example:
        >>> trigger_in("Checks Into", "Lohan checks into rehab"), trigger_in("kill", "killed")
        (True, False)
    """
    needle, hay = _seq(trigger), _seq(phrase)
    if not needle:
        return False
    n = len(needle)
    return any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def triple_sentences(
    triple: Any, text: str, sentence_spans: Mapping[int, tuple[int, int]]
) -> set[int]:
    """The ids of the sentences a triple was read from.

    ``triple.sentence_span`` when set (every sentence it overlaps); else the first
    occurrence of ``triple.sentence`` in ``text``; else no sentence.

    Example:
        >>> from sarg_integrations.schema import Triple
        >>> spans = {0: (0, 10), 1: (11, 20)}
        >>> triple_sentences(Triple("a", "causes", "b", sentence_span=(12, 18)), "", spans)
        {1}
        >>> triple_sentences(Triple("a", "causes", "b", sentence="xyz"), "0123456789 xyz", spans)
        {1}
    """
    span = getattr(triple, "sentence_span", None)
    if span is None:
        sentence = getattr(triple, "sentence", "") or ""
        at = text.find(sentence) if sentence else -1
        if at < 0:
            return set()
        span = (at, at + len(sentence))
    start, end = span
    end = max(end, start + 1)
    return {sid for sid, (s, e) in sentence_spans.items() if s < end and start < e}


def esc_link_found(
    triple: Any,
    sentences: set[int],
    cause_trigger: str,
    effect_trigger: str,
    event_sentences: tuple[int, int],
) -> bool:
    """Whether ``triple`` (read from ``sentences``) finds a gold cause → effect link.

    Example:
        >>> from sarg_integrations.schema import Triple
        >>> t = Triple("the earthquake", "causes", "the building collapsed")
        >>> esc_link_found(t, {3}, "earthquake", "collapsed", (3, 4))
        True
        >>> esc_link_found(t, {5}, "earthquake", "collapsed", (3, 4))
        False
    """
    return (
        bool(sentences & set(event_sentences))
        and trigger_in(cause_trigger, triple.cause)
        and trigger_in(effect_trigger, triple.effect)
    )


def gold_multi_hop_pairs(links: Iterable[tuple[str, str]]) -> list[tuple[str, str, int]]:
    """Event pairs ``(A, C, hops)`` whose shortest gold path has ``hops`` ≥ 2 links.

    Sorted by ``(A, C)``.

    Example:
        >>> gold_multi_hop_pairs([("a", "b"), ("b", "c"), ("a", "c"), ("c", "d")])
        [('a', 'd', 2), ('b', 'd', 2)]
    """
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_edges_from(links)
    out = []
    for source, lengths in nx.all_pairs_shortest_path_length(graph):
        for target, hops in lengths.items():
            if hops >= 2:
                out.append((source, target, hops))
    return sorted(out)
