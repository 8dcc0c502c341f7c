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
* :class:`LearnedEvidenceJudge`: the shipped one, a LoRA adapter and a score head over
  the packaged all-MiniLM-L6-v2 (``sarg_integrations/data/judge/README.md`` says how it
  was trained and on what), loaded offline on first use.

Example:
    >>> class Keywords:
    ...     def score(self, query, texts):
    ...         return [1.0 if "flood" in t else 0.0 for t in texts]
    >>> isinstance(Keywords(), EvidenceJudge)
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from sarg_integrations._models import load_once
from sarg_integrations.errors import InputError
from sarg_integrations.judge.model import DEFAULT_JUDGE_DIR, JudgeConfig

__all__ = ["DEFAULT_JUDGE_DIR", "EvidenceJudge", "JudgeConfig", "LearnedEvidenceJudge"]


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
            for the packaged judge.
        batch_size: Question + document pairs per encoder pass.

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
        where = "packaged" if self.model_dir == DEFAULT_JUDGE_DIR else str(self.model_dir)
        return f"LearnedEvidenceJudge({where!r})"

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
        from sarg_integrations.judge.model import score_pairs

        if not texts:
            return []
        network, tokenizer, config = self.network()
        return score_pairs(network, tokenizer, config.max_length, query, texts, self.batch_size)
