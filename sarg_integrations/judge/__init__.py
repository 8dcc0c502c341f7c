"""The evidence judge: does a document tell a step of the causal story a question asks?

The structure (chains, the documents linked to them, the relevance fill) proposes a
causal question's evidence; the judge then reads the question with each retrieved
document and scores whether the document tells a step of the story asked about
(:func:`sarg_integrations.evidence.judged_evidence`): a passage the structure picked
leaves when the judge scores it low (a same-place fundraiser, a profile, a record), and
a document the structure missed joins when the judge is sure of it (a step no
extracted relation links, "Milk prices fell below the cost of production" for "Why did
the family sell the herd?").

* :class:`EvidenceJudge`: the one-method protocol (``score(query, texts)``); inject your
  own (an LLM grader, a cross-encoder of your choice) with
  ``SARGPipeline(evidence_judge=...)``.
* :class:`LearnedEvidenceJudge`: a LoRA adapter and a score head over the packaged
  all-MiniLM-L6-v2, loaded offline on first use. Two ship: one reads the question with
  each document alone (``data/judge``), one with the whole retrieved set at once
  (``data/judge_set``); ``sarg_integrations/data/judge/README.md`` says how they were
  trained and on what.
* :class:`CombinedEvidenceJudge`: the geometric mean of several judges' scores;
  :func:`default_evidence_judge`, the default, combines the two shipped ones.

Example:
    >>> class Keywords:
    ...     def score(self, query, texts):
    ...         return [1.0 if "flood" in t else 0.0 for t in texts]
    >>> isinstance(Keywords(), EvidenceJudge)
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from sarg_integrations._models import load_once
from sarg_integrations.errors import InputError
from sarg_integrations.judge.model import DEFAULT_JUDGE_DIR, DEFAULT_SET_JUDGE_DIR, JudgeConfig

__all__ = [
    "DEFAULT_JUDGE_DIR",
    "DEFAULT_SET_JUDGE_DIR",
    "CombinedEvidenceJudge",
    "EvidenceJudge",
    "JudgeConfig",
    "LearnedEvidenceJudge",
    "checked_scores",
    "default_evidence_judge",
]


def checked_scores(
    scores: Sequence[Any], count: int, who: str, name: Callable[[int], str]
) -> list[float]:
    """``scores`` as floats, once checked: ``count`` of them, each a number in [0, 1].

    ``who`` names the judge in the message (``"evidence_judge.score"``), ``name(i)`` the
    ``i``-th text (``"document 'museum'"``).

    Raises:
        InputError: Another number of scores than ``count``, or one that is not a
            number in [0, 1] (``True``, ``"high"``, NaN, 1.5).

    Example:
        >>> checked_scores([0.2, 1], 2, "judge", lambda i: f"text {i}")
        [0.2, 1.0]
    """
    scores = list(scores)
    if len(scores) != count:
        msg = (
            f"{who} returned {len(scores)} scores for {count} texts; "
            "return one score in [0, 1] per text, in order"
        )
        raise InputError(msg)
    for index, value in enumerate(scores):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not 0.0 <= value <= 1.0:
            msg = f"{who} gave {value!r} for {name(index)}; return a number in [0, 1] per text"
            raise InputError(msg)
    return [float(value) for value in scores]


@runtime_checkable
class EvidenceJudge(Protocol):
    """Scores how surely each text tells a step of the causal story ``query`` asks about.

    Returns one score in ``[0, 1]`` per text, in order.
    """

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score in ``[0, 1]`` per text: how surely it tells a step of ``query``'s story."""
        ...


@load_once  # one load per folder for the process, even when many threads ask at once
def _loaded(folder: Path) -> tuple[Any, Any, JudgeConfig]:
    from sarg_integrations.judge.model import load_judge_network

    return load_judge_network(folder)


class LearnedEvidenceJudge:
    """The shipped evidence judge, or one trained with ``train_judge``; loaded on first use.

    :func:`~sarg_integrations.judge.training.train_judge` writes the folder of another.

    Args:
        model_dir: The folder with ``judge.json`` and ``judge.safetensors``; ``None``
            for the packaged document reader (:data:`DEFAULT_SET_JUDGE_DIR` for the
            packaged set reader).
        batch_size: Question + document pairs (or windows of a set) per encoder pass.

    Raises:
        ModelLoadError: On first use, when the folder's files are missing, corrupt or
            do not fit the packaged encoder (the message names the file).
    """

    def __init__(self, model_dir: str | Path | None = None, *, batch_size: int = 32) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            msg = f"batch_size={batch_size!r} must be a positive int (pairs per encoder pass)"
            raise InputError(msg)
        self.model_dir = Path(model_dir) if model_dir is not None else DEFAULT_JUDGE_DIR
        self.batch_size = batch_size

    @classmethod
    def load(cls, model_dir: str | Path | None = None, **kwargs: Any) -> LearnedEvidenceJudge:
        """Load a judge now (so that a wrong folder fails here, not at the first query)."""
        judge = cls(model_dir, **kwargs)
        judge.network()
        return judge

    def __repr__(self) -> str:
        packaged = {DEFAULT_JUDGE_DIR: "packaged", DEFAULT_SET_JUDGE_DIR: "packaged, reads sets"}
        return f"LearnedEvidenceJudge({packaged.get(self.model_dir, str(self.model_dir))!r})"

    def network(self) -> tuple[Any, Any, JudgeConfig]:
        """``(network, tokenizer, config)``, loaded once per folder for the process."""
        return _loaded(self.model_dir.resolve())

    @property
    def config(self) -> JudgeConfig:
        """The loaded judge's settings (rank, word pieces, training record)."""
        return self.network()[2]

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """The judge's probability that each text tells a step of the story ``query`` asks.

        Example (loads the packaged model)::

            judge = LearnedEvidenceJudge()
            judge.score("Why did the Pryce family sell their herd?",
                        ["Milk prices fell below the cost of production in 2016.",
                         "Thornwick Farm was founded in 1890."])   # high, low
        """
        from sarg_integrations.judge.model import score_texts

        if not texts:
            return []
        network, tokenizer, config = self.network()
        return score_texts(network, tokenizer, config, query, texts, self.batch_size)


class CombinedEvidenceJudge:
    """Several judges as one: each text's score is the geometric mean of theirs.

    A text any judge rules out (a score near 0) stays out, and a text joins only when
    every judge is fairly sure of it. The default pairs the judge reading each document
    alone with the one reading the whole retrieved set: the second weighs a document
    against the story the others tell, but scores relative to them (among documents
    that tell no step it still rates the most story-like high), which the first,
    reading each document alone, checks.

    Args:
        judges: Two or more objects with ``score(query, texts) -> list[float]``.

    Raises:
        InputError: Fewer than two judges, or one without ``score``; when scoring, a
            judge returning another number of scores than texts, or one outside [0, 1].

    Example:
        >>> class Fixed:
        ...     def __init__(self, *scores):
        ...         self.scores = list(scores)
        ...     def score(self, query, texts):
        ...         return self.scores[: len(texts)]
        >>> judge = CombinedEvidenceJudge(Fixed(0.9, 0.01, 1.0), Fixed(0.4, 1.0, 1.0))
        >>> [round(s, 3) for s in judge.score("Why?", ["a", "b", "c"])]
        [0.6, 0.1, 1.0]
    """

    def __init__(self, *judges: EvidenceJudge) -> None:
        if len(judges) < 2:
            msg = f"CombinedEvidenceJudge needs two or more judges, got {len(judges)}"
            raise InputError(msg)
        for number, judge in enumerate(judges):
            if not callable(getattr(judge, "score", None)):
                msg = (
                    f"judge {number} ({type(judge).__name__}) has no score(query, texts) "
                    "method; pass evidence judges"
                )
                raise InputError(msg)
        self.judges = judges

    def __repr__(self) -> str:
        return f"CombinedEvidenceJudge({', '.join(map(repr, self.judges))})"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """The geometric mean of the judges' scores of each text."""
        if not texts:
            return []
        product = [1.0] * len(texts)
        for number, judge in enumerate(self.judges):
            who = f"judge {number} ({type(judge).__name__})"
            scores = checked_scores(judge.score(query, texts), len(texts), who, "text {}".format)
            product = [p * value for p, value in zip(product, scores)]
        return [math.pow(p, 1.0 / len(self.judges)) for p in product]


def default_evidence_judge() -> CombinedEvidenceJudge:
    """The default judge: the shipped document reader and set reader, combined.

    On the fortieth session's fresh helper stories (sets zze-zzt, 640 stories no
    judge trained on) the default evidence passed 378 with the two combined, 371 with
    the set reader alone and 348 with the document reader alone; with the set reader
    retrained in the forty-first session, sets zze-zzl and zzu-zzzb (640 stories
    neither reader read) pass 382; with the set reader retrained on 4,011 stories in the
    forty-third, the fresh sets zzzs-zzzz 172 of 320 (its geometric mean: the set reader
    alone scores a step of a team story 0.38; ``sarg_integrations/data/judge/README.md``).
    """
    return CombinedEvidenceJudge(
        LearnedEvidenceJudge(DEFAULT_JUDGE_DIR), LearnedEvidenceJudge(DEFAULT_SET_JUDGE_DIR)
    )
