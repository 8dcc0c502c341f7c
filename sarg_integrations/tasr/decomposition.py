"""Query decomposition: a question → ordered triple sub-queries with latent variables.

* :class:`LLMQueryDecomposer` asks any model (LangChain, LlamaIndex, a callable) for
  the sub-queries as JSON and reads the answer tolerantly (code fences, reasoning
  blocks, trailing commas, ``[s, r, o]`` lists, ``head``/``tail`` keys…).
* :class:`RuleQueryDecomposer` is the offline fallback for simple questions: two-entity
  comparisons ("Who is older, A or B?"), bridges through a relative clause ("the woman
  who portrayed X") or an "of" phrase ("the director of X"), else one sub-query.

Both implement :class:`QueryDecomposer`: ``decompose(query) -> QueryDecomposition``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from sarg_integrations.errors import ExtractionError
from sarg_integrations.extraction.llm.parsing import AnswerParseError, load_json_answer
from sarg_integrations.tasr.records import QueryDecomposition, SubQuery, is_variable
from sarg_integrations.tasr.taxonomy import EntityType, Taxonomy, default_taxonomy

__all__ = [
    "DECOMPOSITION_PROMPT",
    "LLMQueryDecomposer",
    "QueryDecomposer",
    "RuleQueryDecomposer",
    "parse_decomposition",
]


@runtime_checkable
class QueryDecomposer(Protocol):
    """Turns a question into an ordered :class:`QueryDecomposition`."""

    def decompose(self, query: str) -> QueryDecomposition:
        """Return the sub-queries of ``query``.

        Raises:
            ExtractionError: The question could not be decomposed (the strategy then
                falls back to the flat context and records why).
        """
        ...


DECOMPOSITION_PROMPT = """You decompose a question into an ordered list of triple \
sub-queries (subject, relation, object) that, answered one after another, answer it.
Write unknown entities as variables ?x, ?y, ?z. A later sub-query may use a variable an \
earlier one introduced; the last sub-query holds the answer. For a comparison question, \
write one sub-query per compared entity, each with its own variable.
Type every entity and variable with this taxonomy (L1/L2), or OTHER when none fits:
{taxonomy}

Answer with JSON only, in this shape:
{{"subqueries": [{{"subject": "...", "relation": "...", "object": "...", \
"subject_type": "L1/L2", "object_type": "L1/L2"}}], "variables": {{"?x": "what ?x is"}}}}

Example question: Who directed the film in which Tom Hanks played a castaway?
Example answer: {{"subqueries": [
 {{"subject": "Tom Hanks", "relation": "played a castaway in", "object": "?x", \
"subject_type": "PERSON/Actor", "object_type": "WORK/Film"}},
 {{"subject": "?x", "relation": "directed by", "object": "?y", \
"subject_type": "WORK/Film", "object_type": "PERSON"}}],
 "variables": {{"?x": "film", "?y": "director"}}}}"""

_WRAPPERS = ("subqueries", "sub_queries", "steps", "triples", "queries", "decomposition")
_SUBJECT = ("subject", "head", "s", "source", "entity", "cause")
_RELATION = ("relation", "predicate", "p", "rel", "relationship")
_OBJECT = ("object", "tail", "o", "target", "value", "effect")
_SUBJECT_TYPE = ("subject_type", "head_type", "s_type", "subjecttype")
_OBJECT_TYPE = ("object_type", "tail_type", "o_type", "objecttype")


def _pick(item: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    lowered = {str(k).strip().lower(): v for k, v in item.items()}
    for key in keys:
        value = lowered.get(key)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            text = " ".join(str(value).split())
            if text:
                return text
    return None


def _variable(term: str) -> str:
    """Normalise variable spellings (``?X``, ``$x``, ``x?``) to ``?x``."""
    text = term.strip()
    m = re.fullmatch(r"[?$]\s*([A-Za-z_]\w*)|([A-Za-z_]\w*)\?", text)
    if m and (text.startswith(("?", "$")) or len(m.group(2) or "") == 1):
        return "?" + (m.group(1) or m.group(2)).lower()
    return text


def parse_decomposition(
    query: str, value: Any, *, taxonomy: Taxonomy | None = None, method: str = "llm"
) -> QueryDecomposition:
    """Read a decomposition from a parsed model answer.

    Accepts ``{"subqueries": [...], "variables": {...}}`` (or ``steps`` / ``triples``
    wrappers, or a bare list); each step an object with ``subject`` / ``relation`` /
    ``object`` (or ``head`` / ``tail``, ``s`` / ``p`` / ``o``) and optional
    ``subject_type`` / ``object_type``, or a ``[subject, relation, object]`` list.

    Raises:
        ExtractionError: No usable step, or steps that nothing anchors.

    Example:
        >>> d = parse_decomposition("q", [["Science Activity Planner", "uses", "?X"],
        ...                               {"head": "?x", "predicate": "developed by",
        ...                                "tail": "?y", "object_type": "ORGANIZATION/Company"}])
        >>> [s.to_text() for s in d.steps], str(d.steps[1].object_type), d.kind
        (['(Science Activity Planner, uses, ?x)', '(?x, developed by, ?y)'], 'ORGANIZATION/Company', 'bridge')
    """  # noqa: E501
    taxonomy = taxonomy or default_taxonomy()
    hints: dict[str, str] = {}
    items: Any = value
    if isinstance(value, Mapping):
        lowered = {str(k).strip().lower(): v for k, v in value.items()}
        items = next((lowered[k] for k in _WRAPPERS if isinstance(lowered.get(k), list)), None)
        if items is None:
            items = [value] if _pick(value, _RELATION) else None
        variables = lowered.get("variables") or lowered.get("hints")
        if isinstance(variables, Mapping):
            hints = {_variable(str(k)): str(v) for k, v in variables.items() if str(v).strip()}
    if not isinstance(items, list):
        msg = f"the decomposition answer has no list of sub-queries: {str(value)[:160]!r}"
        raise ExtractionError(msg, raw_output=str(value))
    steps = []
    for item in items:
        if isinstance(item, (list, tuple)) and len(item) >= 3:
            parts = [" ".join(str(x).split()) for x in item[:3]]
            step = SubQuery(_variable(parts[0]), parts[1], _variable(parts[2]))
        elif isinstance(item, Mapping):
            s, r, o = _pick(item, _SUBJECT), _pick(item, _RELATION), _pick(item, _OBJECT)
            if not (s and r and o):
                continue
            step = SubQuery(
                _variable(s),
                r.replace("_", " "),
                _variable(o),
                taxonomy.parse(_pick(item, _SUBJECT_TYPE)),
                taxonomy.parse(_pick(item, _OBJECT_TYPE)),
            )
        else:
            continue
        if step.subject and step.relation and step.object:
            steps.append(step)
    decomposition = QueryDecomposition(query, tuple(steps), hints, _kind(steps), method)
    problems = decomposition.problems()
    if problems:
        msg = "unusable decomposition: " + "; ".join(problems)
        raise ExtractionError(msg, raw_output=str(value))
    return decomposition


def _kind(steps: Sequence[SubQuery]) -> str:
    if len(steps) <= 1:
        return "single"
    seen: set[str] = set()
    linked = False
    for step in steps:
        if any(v in seen for v in step.variables):
            linked = True
        seen.update(step.variables)
    return "bridge" if linked else "comparison"


class LLMQueryDecomposer:
    """Decomposes questions with a language model (the paper's query structuring).

    Args:
        llm: A LangChain chat model or LLM, a LlamaIndex ``LLM``, a callable
            ``str -> str`` (sync or async) or a
            :class:`~sarg_integrations.models.completion.CompletionModel`.
        taxonomy: The taxonomy offered for typing; default the paper's Table 5.
        prompt: Overrides :data:`DECOMPOSITION_PROMPT` (keep ``{taxonomy}``).
        repair: Re-ask once when the answer cannot be read.

    Example:
        >>> def model(prompt: str) -> str:  # a scripted stand-in for an LLM
        ...     return '{"subqueries": [["Annie Morton", "born on", "?x"]]}'
        >>> LLMQueryDecomposer(model).decompose("When was Annie Morton born?").steps
        (SubQuery(subject='Annie Morton', relation='born on', object='?x', subject_type=None, object_type=None),)
    """  # noqa: E501

    def __init__(
        self,
        llm: Any,
        *,
        taxonomy: Taxonomy | None = None,
        prompt: str = DECOMPOSITION_PROMPT,
        repair: bool = True,
    ) -> None:
        from sarg_integrations.models.sync import SyncModel

        self.taxonomy = taxonomy or default_taxonomy()
        self.prompt = prompt
        self.repair = bool(repair)
        self.model = SyncModel(llm)
        self.calls = 0

    def decompose(self, query: str) -> QueryDecomposition:
        """Ask the model; raise :class:`ExtractionError` when no usable answer came."""
        listing = "\n".join(
            f"- {l1}: {', '.join(l2s)}" for l1, l2s in self.taxonomy.categories.items()
        )
        system = self.prompt.format(taxonomy=listing)
        user = f"Question: {query}"
        error: Exception | None = None
        raw = ""
        for attempt in range(2 if self.repair else 1):
            ask = (
                user
                if attempt == 0
                else (
                    f"{user}\n\nYour previous answer could not be used ({error}). Answer again "
                    "with the JSON object only."
                )
            )
            self.calls += 1
            completion = self.model(system, ask)
            raw = completion.text
            try:
                value, _ = (
                    load_json_answer(raw)
                    if completion.data is None
                    else (
                        completion.data,
                        (),
                    )
                )
                return parse_decomposition(query, value, taxonomy=self.taxonomy, method="llm")
            except (AnswerParseError, ExtractionError) as exc:
                error = exc
        msg = f"the model's decomposition of {query!r} could not be used: {error}"
        raise ExtractionError(msg, raw_output=raw)


# --------------------------------------------------------------------------- rules

_VALUE_LABELS = {"DATE", "TIME", "CARDINAL", "QUANTITY", "MONEY", "PERCENT", "ORDINAL"}
_WH = {"what", "which", "who", "whom", "whose", "where", "when", "how"}
_COMPARATIVES = {
    "older": "born on",
    "younger": "born on",
    "earlier": "date",
    "later": "date",
    "first": "date",
    "taller": "height",
    "longer": "length",
    "larger": "size",
    "bigger": "size",
    "more": "number",
}
_WH_TYPES = {
    "who": EntityType("PERSON", None, None, 0.9),
    "whom": EntityType("PERSON", None, None, 0.9),
    "where": EntityType("LOCATION", None, None, 0.9),
}
_WH_HINTS = {"who": "person", "whom": "person", "where": "place", "when": "date"}


class RuleQueryDecomposer:
    """An offline decomposer for simple bridge and comparison questions (spaCy parse).

    Handles, in order: comparisons of two named entities ("Who is older, A or B?",
    "Are A and B both …?"), bridges through a relative clause ("… the woman who
    portrayed Corliss Archer …") or an "of" phrase ("The director of Big Stone Gap is
    based in what city?"), and otherwise one sub-query from the question's main entity.
    Questions of other shapes get a single, weaker sub-query; pass an
    :class:`LLMQueryDecomposer` for real decomposition.

    Args:
        nlp: A loaded spaCy pipeline; default the packaged ``en_core_web_sm``.
    """

    def __init__(self, nlp: Any = None) -> None:
        self._nlp = nlp

    @property
    def nlp(self) -> Any:
        """The spaCy pipeline (loaded on first use)."""
        if self._nlp is None:
            from sarg_integrations._models import load_spacy

            self._nlp = load_spacy()
        return self._nlp

    def decompose(self, query: str) -> QueryDecomposition:
        """Return the sub-queries of ``query``.

        Raises:
            ExtractionError: The question names no entity to anchor a sub-query.
        """
        doc = self.nlp(query)
        anchors = _anchors(doc)
        answer_hint, answer_type = _answer_hint(doc)
        for rule in (_comparison, _relative_bridge, _of_bridge, _single):
            found = rule(doc, anchors, answer_hint, answer_type)
            if found is not None:
                steps, hints, name = found
                return QueryDecomposition(query, tuple(steps), hints, _kind(steps), f"rules:{name}")
        msg = (
            f"no entity to anchor a sub-query was found in {query!r}; pass an "
            "LLMQueryDecomposer (query_decomposer= or llm=) for questions of this shape"
        )
        raise ExtractionError(msg)


def _anchors(doc: Any) -> list[Any]:
    """Entity spans (named entities, proper-noun runs, quoted titles), in text order."""
    spans = [e for e in doc.ents if e.label_ not in _VALUE_LABELS]
    taken = {t.i for s in spans for t in s}
    run: list[Any] = []
    for tok in [*doc, None]:
        if tok is not None and tok.pos_ == "PROPN" and tok.i not in taken:
            run.append(tok)
            continue
        if run:
            spans.append(doc[run[0].i : run[-1].i + 1])
            run = []
    for m in re.finditer(r'"([^"]+)"', doc.text):
        span = doc.char_span(m.start(1), m.end(1), alignment_mode="expand")
        if span is not None and not any(t.i in taken for t in span):
            spans.append(span)
    out = []
    for span in sorted(spans, key=lambda s: (s.start, -len(s))):
        words = [t for t in span if t.lower_ not in _WH and not t.is_punct]
        if not words or (out and span.start < out[-1].end):
            continue
        # trim leading auxiliaries ("Are Random House Tower") and determiners
        while words and words[0].pos_ in ("AUX", "DET", "ADP"):
            words = words[1:]
        if words:
            out.append(doc[words[0].i : words[-1].i + 1])
    return out


def _answer_hint(doc: Any) -> tuple[str | None, EntityType | None]:
    """What the question asks for: the wh-phrase's noun ("government position")."""
    for tok in doc:
        if tok.lower_ not in _WH or tok.head.dep_ == "relcl":  # "the woman who …"
            continue
        head = tok.head if tok.dep_ in ("det", "advmod", "amod") else tok
        if tok.lower_ == "how" and tok.head.lower_ in ("many", "much"):
            head = tok.head.head
        if head is not tok and head.pos_ in ("NOUN", "PROPN"):
            words = [t.text for t in head.subtree if t.lower_ not in _WH and t.i <= head.i]
            words = [w for w in words if w.lower() not in ("many", "much")]
            return " ".join(words) or head.text, None
        return _WH_HINTS.get(tok.lower_), _WH_TYPES.get(tok.lower_)
    return None, None


def _relation_of(verb: Any, exclude: set[int]) -> str:
    """The verb phrase: verb, particle, a direct object not excluded, a preposition."""
    words = [t for t in verb.children if t.dep_ in ("aux", "auxpass", "neg") and t.i < verb.i]
    words.append(verb)
    for child in verb.children:
        if child.dep_ == "prt":
            words.append(child)
        elif child.dep_ == "dobj" and child.i not in exclude and child.lower_ not in _WH:
            words.extend(t for t in child.subtree if t.dep_ != "poss" and t.i not in exclude)
        elif child.dep_ in ("prep", "agent") and child.i > verb.i:
            words.append(child)
            break
    words = [w for w in sorted(set(words), key=lambda t: t.i) if w.lower_ not in _WH]
    return " ".join(w.text for w in words)


def _span_ids(spans: Sequence[Any]) -> set[int]:
    return {t.i for s in spans for t in s}


def _comparison(doc: Any, anchors: list[Any], hint: str | None, wh_type: Any) -> Any:
    if len(anchors) < 2:
        return None
    words = {t.lower_ for t in doc}
    if not ({"or", "and"} & words):
        return None
    a, b = anchors[-2], anchors[-1]
    between = doc[a.end : b.start].text.strip(" ,").lower()
    if between not in ("or", "and"):
        return None
    comparative = next(
        (t.lower_ for t in doc if t.tag_ in ("JJR", "RBR", "JJS") or t.lower_ in _COMPARATIVES),
        None,
    )
    both = "both" in words or "same" in words or "either" in words
    if comparative is None and not both:
        return None
    if comparative is not None:
        relation = _COMPARATIVES.get(comparative, comparative)
    else:
        root = doc[:].root
        relation = _relation_of(root, _span_ids([a, b])) or root.text
        tail = [t for t in root.subtree if t.i > b.end and not t.is_punct]
        if tail and root.i < a.start:
            relation = f"{relation} {doc[tail[0].i : tail[-1].i + 1].text}".strip()
    steps = [SubQuery(a.text, relation, "?a"), SubQuery(b.text, relation, "?b")]
    return steps, {"?a": relation, "?b": relation}, "comparison"


def _relative_bridge(doc: Any, anchors: list[Any], hint: str | None, wh_type: Any) -> Any:
    anchor_ids = _span_ids(anchors)
    for verb in doc:
        if verb.dep_ != "relcl" or verb.head.i in anchor_ids:
            continue
        noun = verb.head
        inner = [
            s
            for s in anchors
            if all(t.is_ancestor(verb) is False for t in s)
            and any(t.i in {x.i for x in verb.subtree} for t in s)
        ]
        if not inner:
            continue
        entity = inner[0]
        subject_of_verb = any(
            c.dep_ in ("nsubj", "nsubjpass") and c.i in {t.i for t in entity} for c in verb.children
        )
        relation = _relation_of(verb, _span_ids([entity]) | {noun.i})
        first = (
            SubQuery(entity.text, relation, "?x")
            if subject_of_verb
            else SubQuery("?x", relation, entity.text)
        )
        root = doc[:].root
        outer_relation = (
            _relation_of(root, {noun.i, *_span_ids([entity])}) if root is not verb else ""
        )
        second = SubQuery("?x", outer_relation or root.text, "?y", object_type=wh_type)
        hints = {"?x": noun.lemma_, "?y": hint or "answer"}
        return [first, second], hints, "bridge-relative"
    return None


def _of_bridge(doc: Any, anchors: list[Any], hint: str | None, wh_type: Any) -> Any:
    for noun in doc:
        if noun.pos_ != "NOUN" or noun.dep_ not in ("nsubj", "nsubjpass", "attr", "dobj", "pobj"):
            continue
        prep = next((c for c in noun.children if c.dep_ == "prep" and c.lower_ == "of"), None)
        if prep is None:
            continue
        sub = {t.i for t in prep.subtree}
        inner = [s for s in anchors if any(t.i in sub for t in s)]
        if not inner:
            continue
        root = doc[:].root
        relation = _relation_of(root, sub | {noun.i}) if root is not noun else ""
        steps = [
            SubQuery(inner[0].text, noun.lemma_, "?x"),
            SubQuery("?x", relation or root.text, "?y", object_type=wh_type),
        ]
        return steps, {"?x": noun.lemma_, "?y": hint or "answer"}, "bridge-of"
    return None


def _single(doc: Any, anchors: list[Any], hint: str | None, wh_type: Any) -> Any:
    if not anchors:
        return None
    entity = anchors[0]
    root = doc[:].root
    relation = _relation_of(root, _span_ids([entity])) or root.text
    step = SubQuery(entity.text, relation, "?x", object_type=wh_type)
    return [step], {"?x": hint or "answer"}, "single"


def variable_types(decomposition: QueryDecomposition) -> dict[str, EntityType]:
    """The types the decomposition itself gives its variables (first one wins)."""
    out: dict[str, EntityType] = {}
    for step in decomposition.steps:
        for term, kind in ((step.subject, step.subject_type), (step.object, step.object_type)):
            if is_variable(term) and kind is not None and term not in out:
                out[term] = kind
    return out
