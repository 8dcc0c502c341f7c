"""Loaders for the causal evaluation data: TORQUESTRA/ESTER questions and ESC event links.

Both sets live in ``<shared data>/causal_qa/`` (see ``shared/data/README.md`` §4);
nothing here copies them into the package.

* :func:`load_ester` reads the TORQUESTRA ``dev`` records (ESTER news passages). Each
  passage is split into its newline-separated sentences, which are the "retrieved
  documents" (ids ``"0"``, ``"1"``, …). Only the causal questions with a non-empty
  answer are kept, each with a direction from :func:`classify_causal_question`
  (``backward``: asks for a cause; ``forward``: asks for an effect, including "what
  will happen if …"). Sub-event ("what did X include"), co-reference ("what does X
  refer to") and other questions are left out.
* :func:`load_esc` reads Event StoryLine Corpus CAT-XML files: tokens with sentence
  ids, event markables (``ACTION_*`` / ``NEG_ACTION_*``) with their token anchors,
  and the ``PLOT_LINK`` relations as cause → effect links (``PRECONDITION``: the
  source causes the target; ``FALLING_ACTION``: the source is a consequence of the
  target, so the link is flipped). The document text is rebuilt from the tokens, one
  sentence per line, and every event keeps its character span in that text.

Example:
    >>> classify_causal_question("Why was Mr. Keating released from prison?")
    'backward'
    >>> classify_causal_question("What might happen as a result of the ruling?")
    'forward'
    >>> classify_causal_question("What does the massacre refer to?") is None
    True
    >>> split_answer_spans("defraud investors; bonds became worthless")
    ('defraud investors', 'bonds became worthless')
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sarg_integrations._checks import is_whole
from sarg_integrations._text import sentence_spans
from sarg_integrations.errors import InputError
from sarg_integrations.schema import SourceDocument

__all__ = [
    "CAUSAL_DATASETS",
    "ESCDocument",
    "ESCEvent",
    "ESCLink",
    "ESTERPassage",
    "ESTERQuestion",
    "classify_causal_question",
    "default_causal_data_path",
    "load_esc",
    "load_ester",
    "split_answer_spans",
    "split_sentences",
]

CAUSAL_DATASETS: dict[str, str] = {
    "ester": "torquestra_ester_dev_0_89.json",
    "esc": "esc_v1.5",
}
"""Dataset name → default file / folder under ``$SARG_SHARED_DATA/causal_qa/``."""


def default_causal_data_path(dataset: str) -> Path:
    """Where the default file (ESTER) or folder (ESC) of ``dataset`` should be.

    ``$SARG_SHARED_DATA/causal_qa/…`` (the same rule as
    :func:`~sarg_integrations.evaluation.default_data_path`; no implicit location).

    Raises:
        InputError: Unknown dataset name, or ``SARG_SHARED_DATA`` is not set (the
            message names the download page).
    """
    from sarg_integrations.evaluation.datasets import data_root

    if dataset not in CAUSAL_DATASETS:
        msg = f"unknown causal dataset {dataset!r}; valid: {', '.join(CAUSAL_DATASETS)}"
        raise InputError(msg, argument="dataset", value=dataset)
    return data_root(dataset, "causal_qa") / CAUSAL_DATASETS[dataset]


# --------------------------------------------------------------------------- ESTER

# Cause-seeking wordings seen in the file (checked on all 296 questions).
_BACKWARD = re.compile(
    r"^(?:why\b|how (?:did|does|do|was|were|has|had)\b"
    r"|what (?:(?:will |might |may |could )?(?:led|leads?|lead)\b"
    r"|(?:might |may |could )?(?:caused?|causes|triggered|sparked|provoked|prompted|"
    r"made|makes|hurt|slowed|resulted in|is leading|was leading)\b"
    r"|(?:factors |might have |might |may have |has )?contributed\b"
    r"|(?:is|was|were|are) the (?:immediate |main |real )?(?:cause|reason|motive)s?\b"
    r"|(?:did|does|do|has|had) .+ do (?:that|to)\b"
    r"|happened to make\b|might have killed\b|might cause\b))"
)
# Effect-seeking wordings (results, consequences, predictions, conditionals).
_FORWARD = re.compile(
    r"^(?:what (?:(?:will|might|may|could|would|is|was|were|are)(?: not)? "
    r"(?:likely )?(?:have )?(?:happen(?:ed)?|occur(?:red)?|result(?:ed)?|be expected|"
    r"be the (?:result|effect|consequence)s?)\b"
    r"|(?:is|was|are|were) (?:the )?(?:result|effect|consequence|outcome)s?\b"
    r"|(?:are|were|is) (?:the )?consequences?\b"
    r"|(?:likely |possible )?effects?\b"
    r"|happened (?:as a result|due to|because|after|following)\b"
    r"|(?:has )?resulted from\b|results from\b|will result\b|was caused by\b"
    r"|(?:is|was) (?:more |most )?likely\b|(?:would|wouldn't|might not|may not) have\b"
    r"|is expected (?:for|to happen)\b|could be expected\b|would be expected\b"
    r"|(?:will|would|did|may|might|could|were) .+ do(?:\?|$| if\b| because\b| after\b| were\b)"
    r"|(?:might|may|could) (?:happen|occur)\b|my occur\b)"
    r"|if .+, what (?:would|will|might|could)\b|what\b.*\bhappen\b.*\bif\b"
    r"|what\b.*\bmore likely\b.*\bif\b)"
)
_NOT_CAUSAL = re.compile(
    r"\b(?:refer(?:s|red|ring)? to|include[sd]?|included|entail(?:s|ed)?|consist(?:s|ed)? of|"
    r"involved?|components|aspect|examples?|align)\b"
)


def classify_causal_question(question: str) -> str | None:
    """``"backward"`` (asks for a cause), ``"forward"`` (asks for an effect) or ``None``.

    Backward: *why …*, *how did …*, *what led to / caused / made / triggered /
    sparked / provoked / contributed to / resulted in …*, *what was the cause /
    reason / motive …*, *what did X do that caused …*. Forward: *what happened as a
    result of / after / due to …*, *what will / might / could happen (if) …*, *what
    could be expected …*, *what was the result / effect …*, *what resulted from …*,
    *what was caused by …*, *what would have happened if …*. Sub-event, co-reference
    and description questions (*refer to*, *include*, *entail*, *consist of*,
    *involve*) are not causal: ``None``.

    Example:
        >>> classify_causal_question("What led to the invasion of Afghanistan?")
        'backward'
        >>> classify_causal_question("What was the result of the elections in May?")
        'forward'
        >>> classify_causal_question("What did the coup entail?") is None
        True
    """
    text = " ".join(str(question).lower().replace("\u2019", "'").split())
    if _NOT_CAUSAL.search(text) and not re.match(r"^(why|what (led|caused))\b", text):
        return None
    if _BACKWARD.match(text):
        return "backward"
    if _FORWARD.match(text):
        return "forward"
    return None


def split_sentences(text: str) -> list[str]:
    r"""Split a passage into sentences, whitespace collapsed.

    The split is :func:`~sarg_integrations._text.sentence_spans`.

    The TORQUESTRA passages put most sentences on their own line, but about a third
    of the lines hold several sentences, so lines are split again after a final
    stop followed by a capital or digit, except after a title or an initial
    (``Mr.``, ``U.S.``). Empty lines are dropped. The tagger reads a document with the
    same split, so an ESTER sentence is one tagger sentence.

    Example:
        >>> split_sentences("Mr. Keating was freed. He left.\nU.S. courts ruled.")
        ['Mr. Keating was freed.', 'He left.', 'U.S. courts ruled.']
    """
    text = str(text)
    return [" ".join(text[start:end].split()) for start, end in sentence_spans(text)]


def split_answer_spans(answer: Any) -> tuple[str, ...]:
    """The gold spans of one ESTER answer: a list of spans or a ``;``-separated string.

    Empty and whitespace-only spans are dropped.

    Example:
        >>> split_answer_spans(["a b", " ", "c"])
        ('a b', 'c')
        >>> split_answer_spans("")
        ()
    """
    if answer is None:
        return ()
    parts: Iterable[Any] = answer if isinstance(answer, (list, tuple)) else str(answer).split(";")
    return tuple(s for s in (" ".join(str(p).split()) for p in parts) if s)


@dataclass(frozen=True)
class ESTERQuestion:
    """One causal ESTER question over its passage.

    Attributes:
        id: ``"<passage index>:<question index>"`` (stable across runs).
        question: The question text.
        answers: The gold answer spans (non-empty).
        qtype: ``"backward"`` or ``"forward"``.
        passage_id: The passage's id (``"p<index>"``).
    """

    id: str
    question: str
    answers: tuple[str, ...]
    qtype: str
    passage_id: str


@dataclass(frozen=True)
class ESTERPassage:
    """One TORQUESTRA ``dev`` passage.

    Attributes:
        id: ``"p<index in the file>"``.
        torque_id: The record's ``torque_id``.
        sentences: The passage's sentences as documents (ids ``"0"``, ``"1"``, …).
        questions: Its kept causal questions (may be empty).
        gold_edges: The gold ``causal_graph`` as ``(head, rel, tail)``; the ``Entity::``
            prefix of entity nodes is removed.
        n_questions: All questions of the record, kept or not.
    """

    id: str
    torque_id: str
    sentences: tuple[SourceDocument, ...]
    questions: tuple[ESTERQuestion, ...] = ()
    gold_edges: tuple[tuple[str, str, str], ...] = ()
    n_questions: int = 0

    @property
    def text(self) -> str:
        """The passage text (sentences joined by newlines)."""
        return "\n".join(d.text for d in self.sentences)


def _check_limit(limit: int | None) -> None:
    if limit is not None and not is_whole(limit, 1):
        msg = f"limit={limit!r} must be a positive integer or None (all)"
        raise InputError(msg, argument="limit", value=limit)


def _node_text(node: Any) -> str:
    text = " ".join(str(node).split())
    return text.split("::", 1)[1].strip() if text.lower().startswith("entity::") else text


def load_ester(
    path: str | os.PathLike[str] | None = None, *, limit: int | None = None
) -> list[ESTERPassage]:
    """Load the TORQUESTRA/ESTER passages, with their causal questions.

    Reads the upstream ``torquestra-human-2023-02-23.json`` as downloaded (a JSON list;
    only its ``split == "dev"`` records, the ESTER passages, are kept) or any subset of
    it (the team's ``torquestra_ester_dev_0_89.json`` is its first 90 dev records).

    Args:
        path: The JSON file; default :func:`default_causal_data_path` ``("ester")``.
        limit: Stop after the first ``limit`` kept questions (the last passage keeps
            only the questions within the limit; passages before it are all kept,
            with or without questions, for the gold-graph score).

    Raises:
        InputError: Missing or malformed file, bad ``limit``.
    """
    _check_limit(limit)
    file = Path(path) if path is not None else default_causal_data_path("ester")
    if not file.is_file():
        msg = f"ESTER data not found at {file}; pass --data PATH or set $SARG_SHARED_DATA"
        raise InputError(msg, argument="data", value=str(file))
    try:
        rows = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        msg = f"{file} is not a readable TORQUESTRA JSON file: {exc}"
        raise InputError(msg, argument="data", value=str(file)) from None
    if not isinstance(rows, list):
        msg = f"{file} must hold a JSON list of TORQUESTRA records"
        raise InputError(msg, argument="data", value=str(file))
    passages: list[ESTERPassage] = []
    kept = 0
    # The upstream file also holds TORQUE ``train`` records (temporal questions): only
    # the ``dev`` ones are ESTER passages. Ids count the dev records, so the upstream file
    # and a dev-only subset of it give the same passages.
    dev = [
        (position, row)
        for position, row in enumerate(rows)
        if not (isinstance(row, dict) and row.get("split", "dev") != "dev")
    ]
    for index, (position, row) in enumerate(dev):
        if limit is not None and kept >= limit:
            break
        try:
            text = str(row["text"])
            questions = list(row.get("questions") or [])
            answers = list(row.get("answers") or [])
            graph = list(row.get("causal_graph") or [])
        except (KeyError, TypeError, AttributeError) as exc:
            msg = (
                f"{file}: record {position} of the JSON array is not a TORQUESTRA record "
                f"({type(exc).__name__}: {exc}); expected an object with the keys text, "
                "questions, answers, causal_graph"
            )
            raise InputError(msg, argument="data", value=str(file)) from None
        pid = f"p{index}"
        sentences = tuple(
            SourceDocument(str(i), sentence, {"passage": pid})
            for i, sentence in enumerate(split_sentences(text))
        )
        kept_questions = []
        for qi, (question, answer) in enumerate(zip(questions, answers)):
            spans = split_answer_spans(answer)
            qtype = classify_causal_question(question)
            if not spans or qtype is None:
                continue
            if limit is not None and kept >= limit:
                break
            kept_questions.append(
                ESTERQuestion(f"{index}:{qi}", " ".join(str(question).split()), spans, qtype, pid)
            )
            kept += 1
        edges = tuple(
            (_node_text(e.get("head", "")), str(e.get("rel", "")), _node_text(e.get("tail", "")))
            for e in graph
            if isinstance(e, dict) and e.get("head") and e.get("tail")
        )
        passages.append(
            ESTERPassage(
                pid,
                str(row.get("torque_id", "")),
                sentences,
                tuple(kept_questions),
                edges,
                len(questions),
            )
        )
    return passages


# --------------------------------------------------------------------------- ESC


@dataclass(frozen=True)
class ESCEvent:
    """An annotated event mention.

    Attributes:
        id: The markable id (``m_id``).
        trigger: The anchored tokens, space-joined (``"killed"``, ``"set off"``).
        sentence: The sentence id of its first token.
        span: ``(start, end)`` character offsets in :attr:`ESCDocument.text`.
        kind: The markable tag (``ACTION_OCCURRENCE``, ``NEG_ACTION_STATE``, …).
    """

    id: str
    trigger: str
    sentence: int
    span: tuple[int, int]
    kind: str = ""


@dataclass(frozen=True)
class ESCLink:
    """A gold cause → effect link between two events.

    Attributes:
        cause: The cause event's id.
        effect: The effect event's id.
        rel_type: The original ``relType`` (``PRECONDITION`` kept the direction,
            ``FALLING_ACTION`` was flipped).
    """

    cause: str
    effect: str
    rel_type: str


@dataclass(frozen=True)
class ESCDocument:
    """One ESC document.

    Attributes:
        id: The file name without ``.xml.xml`` (``"1_10ecbplus"``).
        topic: The topic folder.
        text: The detokenised text, one sentence per line.
        sentence_spans: Sentence id → ``(start, end)`` offsets in ``text``.
        events: Event id → :class:`ESCEvent`.
        links: The gold cause → effect links, deduplicated, in file order.
    """

    id: str
    topic: str
    text: str
    sentence_spans: dict[int, tuple[int, int]] = field(default_factory=dict)
    events: dict[str, ESCEvent] = field(default_factory=dict)
    links: tuple[ESCLink, ...] = ()

    def source_document(self) -> SourceDocument:
        """The whole document as one :class:`SourceDocument` (what the extractor reads)."""
        return SourceDocument(self.id, self.text, {"topic": self.topic})


_NO_SPACE_BEFORE = {".", ",", ":", ";", "!", "?", ")", "]", "}", "%", "'s", "'", "n't", "''"}
_NO_SPACE_AFTER = {"(", "[", "{", "$", "``", "#"}


def _join_tokens(tokens: Sequence[tuple[str, str]]) -> tuple[str, dict[str, tuple[int, int]]]:
    """Detokenise one sentence: text and token id → span (relative to the sentence)."""
    out = ""
    spans: dict[str, tuple[int, int]] = {}
    previous = ""
    for t_id, word in tokens:
        if out and word not in _NO_SPACE_BEFORE and previous not in _NO_SPACE_AFTER:
            out += " "
        spans[t_id] = (len(out), len(out) + len(word))
        out += word
        previous = word
    return out, spans


def _parse_esc_file(file: Path) -> ESCDocument:
    try:
        root = ET.parse(file).getroot()
    except (ET.ParseError, OSError) as exc:
        msg = f"{file} is not a readable ESC CAT-XML file: {exc}"
        raise InputError(msg, argument="data", value=str(file)) from None
    try:
        by_sentence: dict[int, list[tuple[str, str]]] = {}
        sentence_of: dict[str, int] = {}
        for token in root.iter("token"):
            sid = int(token.attrib["sentence"])
            t_id = token.attrib["t_id"]
            by_sentence.setdefault(sid, []).append((t_id, token.text or ""))
            sentence_of[t_id] = sid
        if not by_sentence:
            msg = "no <token> elements"
            raise ValueError(msg)
        lines: list[str] = []
        offset = 0
        token_span: dict[str, tuple[int, int]] = {}
        sentence_spans: dict[int, tuple[int, int]] = {}
        for sid in sorted(by_sentence):
            line, spans = _join_tokens(by_sentence[sid])
            for t_id, (s, e) in spans.items():
                token_span[t_id] = (offset + s, offset + e)
            sentence_spans[sid] = (offset, offset + len(line))
            lines.append(line)
            offset += len(line) + 1
        text = "\n".join(lines)
        events: dict[str, ESCEvent] = {}
        markables = root.find("Markables")
        for element in markables if markables is not None else ():
            tag = element.tag
            if not (tag.startswith("ACTION_") or tag.startswith("NEG_ACTION_")):
                continue
            anchors = [a.attrib["t_id"] for a in element.iter("token_anchor")]
            anchors = [a for a in anchors if a in token_span]
            if not anchors:
                continue
            anchors.sort(key=lambda a: token_span[a][0])
            start, end = token_span[anchors[0]][0], token_span[anchors[-1]][1]
            trigger = " ".join(text[token_span[a][0] : token_span[a][1]] for a in anchors)
            m_id = element.attrib["m_id"]
            events[m_id] = ESCEvent(m_id, trigger, sentence_of[anchors[0]], (start, end), tag)
        links: dict[tuple[str, str], ESCLink] = {}
        relations = root.find("Relations")
        for link in relations.iter("PLOT_LINK") if relations is not None else ():
            rel = link.attrib.get("relType", "")
            source_el, target_el = link.find("source"), link.find("target")
            if source_el is None or target_el is None:
                continue
            source, target = source_el.attrib["m_id"], target_el.attrib["m_id"]
            if source not in events or target not in events or source == target:
                continue
            if rel == "PRECONDITION":
                pair = (source, target)
            elif rel == "FALLING_ACTION":
                pair = (target, source)
            else:
                continue
            links.setdefault(pair, ESCLink(pair[0], pair[1], rel))
    except (KeyError, ValueError) as exc:
        msg = f"{file} is not a well-formed ESC CAT-XML file: {exc!r}"
        raise InputError(msg, argument="data", value=str(file)) from None
    name = file.name.removesuffix(".xml.xml").removesuffix(".xml")
    return ESCDocument(name, file.parent.name, text, sentence_spans, events, tuple(links.values()))


def _topic_key(path: Path) -> tuple[int, str]:
    return (int(path.name) if path.name.isdigit() else 10**9, path.name)


def _doc_key(path: Path) -> tuple[str, int, str]:
    match = re.match(r"(\d+)_(\d+)", path.name)
    return (path.parent.name, int(match.group(2)) if match else 10**9, path.name)


def load_esc(
    path: str | os.PathLike[str] | None = None, *, limit: int | None = None
) -> list[ESCDocument]:
    """Load the ESC documents under ``path`` (a topic tree, one topic, or one file).

    Documents come in topic order (numeric), then document number. ``limit`` keeps
    the first ``limit`` documents.

    Raises:
        InputError: Missing path, no ``*.xml.xml`` file under it, a malformed file
            (the message names it), bad ``limit``.
    """
    _check_limit(limit)
    root = Path(path) if path is not None else default_causal_data_path("esc")
    if root.is_file():
        files = [root]
    elif root.is_dir():
        topics = sorted((p for p in root.iterdir() if p.is_dir()), key=_topic_key)
        files = sorted(root.glob("*.xml.xml"), key=_doc_key)
        for topic in topics:
            files += sorted(topic.glob("*.xml.xml"), key=_doc_key)
    else:
        msg = f"ESC data not found at {root}; pass --data PATH or set $SARG_SHARED_DATA"
        raise InputError(msg, argument="data", value=str(root))
    if not files:
        msg = f"no ESC *.xml.xml file under {root}"
        raise InputError(msg, argument="data", value=str(root))
    return [_parse_esc_file(f) for f in files[:limit]]
