r"""Evaluation metrics: official answer normalisation, EM/F1, evidence recall, tokens.

``normalize_answer``, ``exact_match`` and ``f1_score`` follow the official HotpotQA
evaluation script (itself the SQuAD v1.1 one): lower-case, drop punctuation, drop the
articles *a/an/the*, collapse whitespace; F1 over whitespace tokens, and when either
normalised side is ``yes``, ``no`` or ``noanswer`` the two must be identical (F1 0
otherwise), exactly as ``hotpot_evaluate_v1.py`` does.

Token counting (:func:`count_tokens`) is a documented estimate, not a model tokenizer:
one token per run of word characters and one per other non-space character
(``\w+|[^\w\s]``). It is deterministic and offline; on English prose it is within
roughly ±15% of BPE tokenizers such as cl100k. Every method is measured the same way,
so comparisons between methods are exact even if absolute counts are approximate.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from sarg_integrations._text import count_tokens

__all__ = [
    "answer_in_text",
    "chain_faithfulness",
    "count_tokens",
    "exact_match",
    "f1_score",
    "max_over_answers",
    "normalize_answer",
    "support_precision",
    "support_recall",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)
_SPECIAL = ("yes", "no", "noanswer")


def normalize_answer(text: str) -> str:
    """Official SQuAD/HotpotQA normalisation.

    Example:
        >>> normalize_answer("  The Quick,  brown FOX! ")
        'quick brown fox'
        >>> normalize_answer("an apple a day")
        'apple day'
    """
    text = str(text).lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    """1.0 when the normalised strings are equal, else 0.0.

    Example:
        >>> exact_match("the Beatles.", "Beatles")
        1.0
    """
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1_score(prediction: str, gold: str) -> float:
    """Token-level F1 of the normalised strings (official HotpotQA rule for yes/no).

    Example:
        >>> f1_score("yes it is", "yes")
        0.0
        >>> round(f1_score("New York City", "new york"), 3)
        0.8
    """
    pred, ref = normalize_answer(prediction), normalize_answer(gold)
    if (pred in _SPECIAL or ref in _SPECIAL) and pred != ref:
        return 0.0
    pred_tokens, ref_tokens = pred.split(), ref.split()
    common = Counter(pred_tokens) & Counter(ref_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(ref_tokens)
    return 2 * precision * recall / (precision + recall)


def max_over_answers(
    metric: Callable[[str, str], float], prediction: str, answers: Iterable[str]
) -> float:
    """The best ``metric(prediction, answer)`` over the gold answer and its aliases.

    Example:
        >>> max_over_answers(exact_match, "NYC", ["New York City", "NYC"])
        1.0
    """
    return max((metric(prediction, a) for a in answers), default=0.0)


def support_recall(selected_ids: Collection[str], supporting_ids: Collection[str]) -> float:
    """Share of the gold paragraphs that are among ``selected_ids`` (1.0 when no gold).

    Example:
        >>> support_recall(["1", "4"], ["1", "2"])
        0.5
    """
    gold = set(supporting_ids)
    if not gold:
        return 1.0
    return len(gold & set(selected_ids)) / len(gold)


def support_precision(selected_ids: Collection[str], supporting_ids: Collection[str]) -> float:
    """Share of ``selected_ids`` that are gold paragraphs (0.0 when nothing selected).

    Example:
        >>> support_precision(["1", "4", "5", "2"], ["1", "2"])
        0.5
    """
    chosen = set(selected_ids)
    if not chosen:
        return 0.0
    return len(chosen & set(supporting_ids)) / len(chosen)


def answer_in_text(text: str, answers: Iterable[str]) -> float:
    """1.0 when some normalised answer occurs in the normalised ``text`` on word bounds.

    ``yes``/``no`` answers are never "in" a text (they are not spans), so this returns
    0.0 for them: answer-string recall is reported over all questions with that caveat.

    Example:
        >>> answer_in_text("It was built in Paris, France.", ["paris"])
        1.0
        >>> answer_in_text("Parisian food", ["Paris"])
        0.0
    """
    haystack = f" {normalize_answer(text)} "
    for answer in answers:
        needle = normalize_answer(answer)
        if needle and needle not in _SPECIAL and f" {needle} " in haystack:
            return 1.0
    return 0.0


def chain_faithfulness(
    chains: Sequence[Mapping[str, Any]] | Sequence[Any], documents: Mapping[str, str]
) -> tuple[int, int]:
    """Count hops whose every source sentence occurs verbatim in a cited document.

    Args:
        chains: :class:`~sarg_integrations.schema.ReasoningChain` records.
        documents: Document id → text.

    Returns:
        ``(faithful_hops, total_hops)``; a hop is faithful when each of its
        ``(document_id, sentence)`` pairs names a known document containing the
        sentence (whitespace-normalised).

    Example:
        >>> from sarg_integrations.schema import ChainHop, Direction, ReasoningChain, RelationType
        >>> hop = ChainHop("a", "b", "causes", RelationType.CAUSAL, True, ("d1",), ("A causes B.",))
        >>> chain_faithfulness([ReasoningChain(("a", "b"), (hop,), 1.0, Direction.FORWARD)],
        ...                    {"d1": "Intro. A  causes B. End."})
        (1, 1)
    """
    squashed = {k: " ".join(v.split()) for k, v in documents.items()}
    faithful = total = 0
    for chain in chains:
        for hop in chain.hops:
            total += 1
            pairs = list(zip(hop.document_ids, hop.sentences))
            if pairs and all(
                doc_id in squashed and " ".join(sentence.split()) in squashed[doc_id]
                for doc_id, sentence in pairs
            ):
                faithful += 1
    return faithful, total
