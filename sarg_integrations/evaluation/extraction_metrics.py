"""Scoring predicted ``(cause, effect)`` phrase pairs against gold pairs of a sentence.

The definitions used by ``benchmarks/bench_extraction.py`` and by the span tagger's
model selection:

* a prediction matches a gold pair **strictly** when the cause phrases have token-F1
  >= 0.5 and the effect phrases have token-F1 >= 0.5; **relaxed** when both sides share
  at least one token; matching is one-to-one and greedy, best first.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["STRICT", "PairTally", "greedy_match", "token_f1"]

Pair = tuple[str, str]
STRICT = 0.5
_WORD = re.compile(r"\w+", re.UNICODE)


def _tokens(text: str) -> Counter[str]:
    return Counter(w.lower() for w in _WORD.findall(text))


def token_f1(pred: str, gold: str) -> float:
    """Bag-of-words F1 between two phrases (case-insensitive word tokens).

    Example:
        >>> token_f1("heavy rain", "the heavy rain")
        0.8
        >>> token_f1("rain", "snow")
        0.0
    """
    p, g = _tokens(pred), _tokens(gold)
    common = sum((p & g).values())
    if common == 0:
        return 0.0
    precision, recall = common / sum(p.values()), common / sum(g.values())
    return 2 * precision * recall / (precision + recall)


def greedy_match(preds: list[Pair], golds: list[Pair], threshold: float) -> list[tuple[int, int]]:
    """One-to-one ``(pred index, gold index)`` matches, best first, both sides >= threshold.

    ``threshold == 0`` means "any overlap" (F1 strictly above 0).

    Example:
        >>> greedy_match([("rain", "floods")], [("heavy rain", "floods"), ("x", "y")], 0.5)
        [(0, 0)]
    """
    scored = []
    for i, (pc, pe) in enumerate(preds):
        for j, (gc, ge) in enumerate(golds):
            fc, fe = token_f1(pc, gc), token_f1(pe, ge)
            ok = (fc > 0 and fe > 0) if threshold == 0 else (fc >= threshold and fe >= threshold)
            if ok:
                scored.append((fc + fe, i, j))
    scored.sort(reverse=True)
    used_p: set[int] = set()
    used_g: set[int] = set()
    matches = []
    for _, i, j in scored:
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
            matches.append((i, j))
    return matches


@dataclass
class PairTally:
    """Strict and relaxed pair counts over a set of sentences.

    Example:
        >>> t = PairTally()
        >>> t.add([("rain", "floods")], [("heavy rain", "floods")])
        >>> t.strict_f1, t.relaxed_recall
        (1.0, 1.0)
    """

    gold: int = 0
    predicted: int = 0
    strict: int = 0
    relaxed: int = 0

    def add(self, preds: list[Pair], golds: list[Pair]) -> None:
        """Count one sentence's predictions against its gold pairs."""
        self.gold += len(golds)
        self.predicted += len(preds)
        self.strict += len(greedy_match(preds, golds, STRICT))
        self.relaxed += len(greedy_match(preds, golds, 0.0))

    @staticmethod
    def _f1(p: float, r: float) -> float:
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def strict_precision(self) -> float:
        """Strict matches over predictions."""
        return self.strict / self.predicted if self.predicted else 0.0

    @property
    def strict_recall(self) -> float:
        """Strict matches over gold pairs."""
        return self.strict / self.gold if self.gold else 0.0

    @property
    def strict_f1(self) -> float:
        """Harmonic mean of strict precision and recall."""
        return self._f1(self.strict_precision, self.strict_recall)

    @property
    def relaxed_precision(self) -> float:
        """Relaxed matches over predictions."""
        return self.relaxed / self.predicted if self.predicted else 0.0

    @property
    def relaxed_recall(self) -> float:
        """Relaxed matches over gold pairs."""
        return self.relaxed / self.gold if self.gold else 0.0
