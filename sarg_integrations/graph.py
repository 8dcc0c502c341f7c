"""Graph aggregation (paper Eq. 2) with entity resolution across documents.

Phrases that name the same concept in different documents ("Interest rate hikes",
"the interest-rate hike") become one node in three steps:

1. **Normal form**: case, Unicode, hyphens, punctuation, leading articles and
   possessives, and the plural of the head word are folded
   (:func:`normalize_phrase`).
2. **Embedding merge**: normal forms whose embeddings have cosine at or above a
   conservative threshold are merged into the more frequent one; a phrase that is the
   other minus modifiers with the same head word ("rate hike" / "interest rate hike",
   "crop failure" / "crop failure in the region") needs ``SUBPHRASE_MARGIN`` less. Each phrase is
   compared with cluster *representatives* only, never with other members, so there
   are no transitive merge chains (A~B, B~C does not put A with C). Pairs that differ
   in a number, a negation or an antonym ("type 1"/"type 2", "rise"/"fall") never merge,
   nor does a thing with an event of it ("Norovirus" / "norovirus outbreak").
3. **Bare head word** (given an embedder, as step 2): a one-word name ("the blast") joins
   the one longer noun phrase with that head word ("Saturday's gas blast in Yuanhua Coal
   Mine"), whose cosine with it is low; with two such phrases, or with a verb form on
   either side ("released", "flooding"), nothing merges.

Every merge is kept as a :class:`~sarg_integrations.schema.MergeRecord` and every edge
keeps the triples (document and sentence) that support it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

import networkx as nx
import numpy as np

from sarg_integrations.embedding import Embedder, cosine_matrix
from sarg_integrations.schema import MergeRecord, ReasoningGraph, Triple

__all__ = ["SUBPHRASE_MARGIN", "build_reasoning_graph", "normalize_phrase", "resolve_entities"]

SUBPHRASE_MARGIN = 0.05
_SIM_BLOCK = 1024  # rows of the similarity matrix computed at a time

_LEADING_DETERMINERS = frozenset(
    "a an the this that these those its their his her our your my some any such".split()
)
_NEGATIONS = frozenset("no not non without lack lacking absence absent never un anti".split())
# Pairs of words whose presence on opposite sides means opposite concepts, however
# close their embeddings are.
_ANTONYMS = (
    ("increase", "decrease"),
    ("increase", "reduction"),
    ("rise", "fall"),
    ("rise", "drop"),
    ("rise", "decline"),
    ("high", "low"),
    ("higher", "lower"),
    ("hike", "cut"),
    ("gain", "loss"),
    ("up", "down"),
    ("growth", "decline"),
    ("more", "less"),
    ("strong", "weak"),
    ("positive", "negative"),
    ("excess", "deficiency"),
    ("activation", "inhibition"),
    ("deficiency", "accumulation"),
    ("inflation", "deflation"),
    ("hyperglycemia", "hypoglycemia"),
)
_INVARIANT_PLURALS = frozenset(
    "series species news physics economics mathematics diabetes measles mumps "
    "analysis diagnosis prognosis basis crisis thesis hypothesis synthesis "
    "status virus bus gas lens bias corpus campus census".split()
)


def _singular(word: str) -> str:
    """Return a singular form of an English noun by suffix rules (no dictionary).

    Example:
        >>> [_singular(w) for w in ["hikes", "policies", "crises", "stress", "analyses"]]
        ['hike', 'policy', 'crisis', 'stress', 'analysis']
    """
    if len(word) <= 3 or word in _INVARIANT_PLURALS or not word.isalpha():
        return word
    if word.endswith("ses") and word[:-2] + "is" in _INVARIANT_PLURALS:
        return word[:-2] + "is"  # crises -> crisis, analyses -> analysis
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if word.endswith(("ss", "us", "is", "ous")):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


def normalize_phrase(phrase: str) -> str:
    """Return the normal form used to recognise two phrases as the same concept.

    Lower-cases, applies Unicode NFKC, turns hyphens and slashes into spaces, strips
    punctuation around words, drops leading articles and possessive determiners and
    singularises the last word (the head of an English noun phrase).

    Example:
        >>> normalize_phrase("The Interest-Rate Hikes.")
        'interest rate hike'
        >>> normalize_phrase("its  beta cells")
        'beta cell'
    """
    text = unicodedata.normalize("NFKC", phrase).lower()
    text = re.sub(r"[-‐‑–—/_]+", " ", text)
    words = [w.strip(".,;:!?\"'()[]{}`’‘“”") for w in text.split()]
    words = [w for w in words if w]
    while len(words) > 1 and words[0] in _LEADING_DETERMINERS:
        words = words[1:]
    if words and words[-1].endswith(("'s", "’s")):
        words[-1] = words[-1][:-2]
    if words:
        words[-1] = _singular(words[-1])
    return " ".join(words)


def _may_merge(a: str, b: str) -> bool:
    """Whether two normal forms are allowed to merge at all.

    Never when they differ in a number, a negation or an antonym, nor when one is the
    other plus a new head word: "norovirus outbreak" is an event of the virus, "Kessa
    reservoir created" one of the reservoir, not the thing itself.

    Example:
        >>> _may_merge("type 1 diabetes", "type 2 diabetes"), _may_merge("rate hike", "rate cut")
        (False, False)
        >>> _may_merge("norovirus", "norovirus outbreak")
        False
        >>> _may_merge("interest rate hike", "rate hike")
        True
    """
    if _adds_a_head(a.split(), b.split()):
        return False
    wa, wb = set(a.split()), set(b.split())
    if {w for w in wa if any(c.isdigit() for c in w)} != {
        w for w in wb if any(c.isdigit() for c in w)
    }:
        return False
    if bool(wa & _NEGATIONS) != bool(wb & _NEGATIONS):
        return False
    return not any((x in wa and y in wb) or (y in wa and x in wb) for x, y in _ANTONYMS)


_PREPOSITIONS = frozenset(
    "in of for at on among during across within by from to into over under with against".split()
)


def _head(words: list[str]) -> str:
    """The head word of an English noun phrase: the last word before a preposition.

    Example:
        >>> _head("timely treatment of diabetic ketoacidosis".split()), _head(["rate", "hike"])
        ('treatment', 'hike')
    """
    for i, word in enumerate(words[1:], start=1):
        if word in _PREPOSITIONS:
            return words[i - 1]
    return words[-1]


# Nouns that name a part or an amount of what follows them ("part of the plea deal",
# "a wave of protests"): a head of this kind adds no concept of its own.
_PARTITIVES = frozenset(
    "part parts some most all rest series wave waves number lot lots kind type form piece "
    "share bulk majority string spate".split()
)


def _adds_a_head(wa: list[str], wb: list[str]) -> bool:
    """Whether one phrase holds all the other's words and a head word of its own.

    Words are compared in the singular; a partitive head ("part of …") is none.

    Example:
        >>> _adds_a_head(["insulin"], ["insulin", "production"])
        True
        >>> _adds_a_head(["walkouts"], ["walkouts", "needed"])
        True
        >>> _adds_a_head(["rate", "hike"], ["interest", "rate", "hike"])
        False
        >>> _adds_a_head(["plea", "deal"], ["part", "of", "plea", "deal"])
        False
    """
    sa, sb = {_singular(w) for w in wa}, {_singular(w) for w in wb}
    if not (sa < sb or sb < sa):
        return False
    head_a, head_b = _head(wa), _head(wb)
    longer_head = head_b if len(sb) > len(sa) else head_a
    return _singular(head_a) != _singular(head_b) and longer_head not in _PARTITIVES


# Verbs a clause-shaped node name may hold before its last word ("farmers *gave* up rice",
# "mill *cut* output"); with any word in -ed / -ing they tell a clause from a noun phrase.
_CLAUSE_VERBS = frozenset(
    "cut cuts lost loses gave gives brought brings put puts hit hits set sets made makes "
    "took takes sent sends left leaves kept keeps shut shuts drove drives rose rises fell "
    "falls held holds led leads met paid said told won began broke built bought caught came "
    "did drew got grew knew laid ran saw sold spent stood struck threw went wrote fled "
    "fought found fed shot sank froze stole swept tore blew dug "
    "is are was were has have had".split()
)


def _names_a_clause(words: list[str]) -> bool:
    """Whether a name holds a verb up to its head word, so names an event, not its last
    word: "farmers gave up rice" is no rice, "first solo album released" no release.

    Example:
        >>> _names_a_clause("dam blocked salmon".split()), _names_a_clause("late frost".split())
        (True, False)
    """
    head = _head(words)
    return any(_verb_like(w) for w in words[: words.index(head) + 1])


def _verb_like(word: str) -> bool:
    """Whether a word reads as a verb form: an irregular one of :data:`_CLAUSE_VERBS`, or
    a past or a participle ("released", "flooding"; not "speed" or "ring")."""
    return word in _CLAUSE_VERBS or (
        len(word) > 4 and word.endswith(("ed", "ing")) and not word.endswith("eed")
    )


def _bare_head_merges(
    keys: Sequence[str], representative_of: dict[str, str]
) -> list[tuple[str, str]]:
    """``(key, target)`` for each one-word representative whose word is the head of
    exactly one longer representative noun phrase (never a clause's last word).

    A definite "the blast" in one document names the blast another document tells in
    full; when two longer names share the head, which one is meant is unknown and
    nothing merges. Number, negation and antonym guards hold (:func:`_may_merge`).

    Example:
        >>> keys = ["blast", "saturday's gas blast in yuanhua coal mine", "police"]
        >>> _bare_head_merges(keys, {k: k for k in keys})
        [('blast', "saturday's gas blast in yuanhua coal mine")]
    """
    reps = [k for k in keys if representative_of[k] == k]
    phrases_by_head: dict[str, list[str]] = defaultdict(list)
    for rep in reps:
        words = rep.split()
        if len(words) > 1 and not _names_a_clause(words):
            phrases_by_head[_singular(_head(words))].append(rep)
    found = []
    for key in reps:
        if len(key.split()) != 1 or _verb_like(key):
            continue
        heads = [r for r in phrases_by_head.get(_singular(key), []) if _may_merge(key, r)]
        if len(heads) == 1:
            found.append((key, heads[0]))
    return found


def _is_head_subphrase(a: str, b: str) -> bool:
    """Whether one phrase is the other minus modifiers, keeping the same head word.

    Either both have the same head and one's words are a subset of the other's
    ("rate hike" / "interest rate hike"), or the longer one is the shorter one followed
    by a prepositional phrase ("crop failure" / "crop failure in the region").

    Example:
        >>> _is_head_subphrase("rate hike", "interest rate hike")
        True
        >>> _is_head_subphrase("crop failure", "crop failure in region")
        True
        >>> _is_head_subphrase("insulin", "insulin production")
        False
        >>> _is_head_subphrase("diabetic ketoacidosis", "timely treatment of diabetic ketoacidosis")
        False
    """
    wa, wb = a.split(), b.split()
    if not wa or not wb or wa == wb:
        return False
    short, long = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    if long[: len(short)] == short and long[len(short)] in _PREPOSITIONS:
        return True
    return _head(wa) == _head(wb) and (set(wa) <= set(wb) or set(wb) <= set(wa))


def _canonical_surface(forms: Counter[str]) -> str:
    # Most frequent surface form; ties go to the shorter, then to the one with fewer
    # capitals (sentence-initial capitals are not part of a concept's name).
    return min(forms, key=lambda f: (-forms[f], len(f), sum(c.isupper() for c in f), f))


def _content_words(phrase: str) -> frozenset[str]:
    return frozenset(w for w in normalize_phrase(phrase).split() if w not in _PREPOSITIONS)


def _cluster_name(forms: Counter[str]) -> str:
    """Name a merged cluster: most mentioned form; on a tie, the most specific one.

    A form is more specific when its content words strictly contain another form's
    ("interest rate hikes" over "rate hikes"); reorderings such as "deficiency of
    glucocerebrosidase" / "glucocerebrosidase deficiency" are equally specific, so the
    shorter wins, as in :func:`_canonical_surface`.

    Example:
        >>> _cluster_name(Counter({"rate hikes": 1, "interest rate hikes": 1}))
        'interest rate hikes'
        >>> _cluster_name(
        ...     Counter({"deficiency of glucocerebrosidase": 1, "glucocerebrosidase deficiency": 1})
        ... )
        'glucocerebrosidase deficiency'
    """
    if len(forms) == 1:
        return next(iter(forms))
    words = {f: _content_words(f) for f in forms}

    def specificity(form: str) -> int:
        return sum(1 for other in forms if words[other] < words[form])

    return min(
        forms,
        key=lambda f: (-forms[f], -specificity(f), len(f), sum(c.isupper() for c in f), f),
    )


def resolve_entities(
    phrases: Iterable[str],
    *,
    embedder: Embedder | None = None,
    merge_threshold: float = 0.88,
) -> tuple[dict[str, str], list[MergeRecord]]:
    """Map every phrase to a canonical node id.

    Args:
        phrases: Surface forms, with repetition (frequency decides canonical names).
        embedder: Used for the embedding merge; ``None`` merges by normal form only.
        merge_threshold: Cosine at or above which two normal forms merge.

    Returns:
        ``(node_of, merges)``: the node id of each distinct phrase, and the merges made.

    Example:
        >>> node_of, merges = resolve_entities(["Rate hikes", "rate hike", "the rate hike"])
        >>> sorted(set(node_of.values())), len(merges)
        (['rate hike'], 2)
    """
    surface_counts = Counter(p.strip() for p in phrases if p and p.strip())
    by_key: dict[str, Counter[str]] = defaultdict(Counter)
    for surface, count in surface_counts.items():
        key = normalize_phrase(surface)
        if key:
            by_key[key][surface] += count
    # Most mentioned keys first: they become the representatives.
    keys = sorted(by_key, key=lambda k: (-sum(by_key[k].values()), k))
    representative_of: dict[str, str] = {k: k for k in keys}
    merged: list[tuple[str, float, str]] = []  # (key, similarity, method) of merges by meaning
    if embedder is not None and len(keys) > 1:
        # Embed each key's canonical surface form: those are the node ids, so the
        # matching stage finds their vectors in the cache instead of encoding again.
        vectors = np.asarray(embedder.embed([_canonical_surface(by_key[k]) for k in keys]))
        is_rep = np.zeros(len(keys), dtype=bool)
        floor = merge_threshold - SUBPHRASE_MARGIN
        block: np.ndarray = np.zeros((0, 0))
        for i, key in enumerate(keys):
            if i % _SIM_BLOCK == 0:
                # Similarities of a block of rows with every earlier key: memory stays
                # O(block x n) instead of the O(n^2) of a full matrix.
                block = cosine_matrix(vectors[i : i + _SIM_BLOCK], vectors[: i + _SIM_BLOCK])
            row = block[i % _SIM_BLOCK]
            best_j, best_sim = -1, -2.0
            # Only earlier keys can be representatives; look at the close ones, best first.
            close = np.nonzero(is_rep[:i] & (row[:i] >= floor))[0]
            for j in sorted(close.tolist(), key=lambda j: (-row[j], j)):
                needed = merge_threshold - (
                    SUBPHRASE_MARGIN if _is_head_subphrase(key, keys[j]) else 0.0
                )
                if row[j] >= needed and _may_merge(key, keys[j]):
                    best_j, best_sim = j, float(row[j])
                    break
            if best_j >= 0:
                representative_of[key] = keys[best_j]
                merged.append((key, round(best_sim, 4), "embedding"))
            else:
                is_rep[i] = True
        # A bare head word ("the blast") is far in cosine from the long name of the one
        # thing it refers to ("Saturday's gas blast in Yuanhua Coal Mine").
        for key, target in _bare_head_merges(keys, representative_of):
            for other in keys:
                if representative_of[other] == key:
                    representative_of[other] = target
            merged.append((key, 1.0, "head"))
    # A node is named by the most frequent, then most specific, surface form of its cluster.
    cluster_forms: dict[str, Counter[str]] = defaultdict(Counter)
    for key, forms in by_key.items():
        cluster_forms[representative_of[key]].update(forms)
    rep_surface = {rep: _cluster_name(forms) for rep, forms in cluster_forms.items()}
    node_of = {
        surface: rep_surface[representative_of[key]]
        for key, forms in by_key.items()
        for surface in forms
    }
    records = []
    for key, sim, method in merged:
        node = rep_surface[representative_of[key]]
        alias = _canonical_surface(by_key[key])
        if alias == node:
            # The cluster took the merged phrase's name ("steep rate hike", more specific
            # than "rate hike"): what it absorbed is the representative.
            alias = _canonical_surface(by_key[representative_of[key]])
        records.append(MergeRecord(node, alias, method, sim))
    key_of = {surface: key for key, forms in by_key.items() for surface in forms}
    for surface, node in sorted(node_of.items()):
        if surface != node and key_of[surface] == key_of[node]:
            records.append(MergeRecord(node, surface, "normalized", 1.0))
    return node_of, records


def build_reasoning_graph(
    triples: Sequence[Triple],
    *,
    embedder: Embedder | None = None,
    merge_threshold: float = 0.88,
) -> ReasoningGraph:
    """Aggregate triples into a directed reasoning graph (paper Eq. 2).

    Nodes are canonical phrases (see :func:`resolve_entities`) with ``aliases`` and
    ``documents`` attributes; an edge ``cause → effect`` carries ``triples``, every
    triple supporting it in input order. Triples whose cause and effect resolve to one
    node are dropped and counted (a self-loop cannot be a reasoning step).

    Example:
        >>> ts = [Triple("rain", "causes", "floods", document_id="d1"),
        ...       Triple("Flood", "leads to", "crop loss", document_id="d2")]
        >>> g = build_reasoning_graph(ts).graph
        >>> sorted(g.edges()), g.nodes["Flood"]["aliases"]
        ([('Flood', 'crop loss'), ('rain', 'Flood')], ['Flood', 'floods'])
    """
    usable = [t for t in triples if t.cause.strip() and t.effect.strip()]
    node_of, merges = resolve_entities(
        [p for t in usable for p in (t.cause, t.effect)],
        embedder=embedder,
        merge_threshold=merge_threshold,
    )
    graph = nx.DiGraph()
    aliases: dict[str, set[str]] = defaultdict(set)
    documents: dict[str, set[str]] = defaultdict(set)
    self_loops = 0
    for triple in usable:
        cause_key, effect_key = triple.cause.strip(), triple.effect.strip()
        u, v = node_of.get(cause_key), node_of.get(effect_key)
        if u is None or v is None:
            continue  # a phrase with an empty normal form (punctuation only)
        aliases[u].add(cause_key)
        aliases[v].add(effect_key)
        documents[u].add(triple.document_id)
        documents[v].add(triple.document_id)
        if u == v:
            self_loops += 1
            continue
        if graph.has_edge(u, v):
            graph.edges[u, v]["triples"].append(triple)
        else:
            graph.add_edge(u, v, triples=[triple])
    for node in graph.nodes:
        graph.nodes[node]["aliases"] = sorted(aliases[node])
        graph.nodes[node]["documents"] = sorted(documents[node])
    return ReasoningGraph(graph=graph, merges=merges, self_loops_dropped=self_loops)
