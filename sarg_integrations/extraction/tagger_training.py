"""Fine-tuning the span tagger: LoRA over the packaged MiniLM, with ``peft``.

``peft`` (the ``train`` extra) injects the low-rank adapters; the layer norms, the
segment embedding and the two heads are trained in full. Model selection uses a
held-out share of the *training* files (split by document), never a dev or test set
the figures are reported on: the epoch with the best strict pair F1 there is kept,
and the span threshold is then picked on the same held-out share (:func:`pick_threshold`).

Example (a few steps on a tiny file; the test suite runs this)::

    sentences = read_training_files(["my_pairs.jsonl"])
    report = train_tagger(sentences, out_dir="my-tagger", epochs=1, max_steps=4)
    extractor = TaggerExtractor.load("my-tagger")
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sarg_integrations.errors import ConfigError, InputError, MissingDependencyError
from sarg_integrations.evaluation.extraction_metrics import PairTally
from sarg_integrations.extraction.tagger_data import TaggedSentence, split_by_group
from sarg_integrations.extraction.tagger_inference import predict_relations
from sarg_integrations.extraction.tagger_model import (
    ARGUMENT_LABELS,
    CONFIG_FILE,
    SIGNAL_LABELS,
    WEIGHTS_FILE,
    TaggerConfig,
    adapter_tensors,
    lora_targets,
    network_class,
)

__all__ = [
    "TrainingReport",
    "balance_negatives",
    "evaluate_tagger",
    "save_model_folder",
    "train_tagger",
    "warmup_then_decay",
]

IGNORE = -100
_SIG = {name: i for i, name in enumerate(SIGNAL_LABELS)}
_ARG = {name: i for i, name in enumerate(ARGUMENT_LABELS)}


@dataclass
class TrainingReport:
    """What a training run did and measured (also written into ``tagger.json``)."""

    sentences: int
    held_out: int
    examples: int
    steps: int
    seconds: float
    best_epoch: int
    threshold: float
    held_out_scores: dict[str, float] = field(default_factory=dict)
    history: list[dict[str, float]] = field(default_factory=list)


def balance_negatives(
    sentences: Sequence[TaggedSentence], ratio: float, seed: int = 0
) -> list[TaggedSentence]:
    """Keep at most ``ratio`` negatives per positive sentence of each corpus (seeded).

    Example:
        >>> s = [TaggedSentence("a", corpus="c")] * 10 + [
        ...     TaggedSentence("b", pairs=[object()], corpus="c")]  # type: ignore[list-item]
        >>> len(balance_negatives(s, 2.0))
        3
    """
    rng = random.Random(seed)
    out: list[TaggedSentence] = []
    for corpus in sorted({s.corpus for s in sentences}):
        rows = [s for s in sentences if s.corpus == corpus]
        positives = [s for s in rows if s.pairs]
        negatives = [s for s in rows if not s.pairs]
        keep = min(len(negatives), max(1, round(ratio * len(positives))) if positives else len(negatives))
        out.extend(positives)
        out.extend(rng.sample(negatives, keep))
    return out


def _labels(offsets: list[list[int]], spans: list[tuple[tuple[int, int], str]], table: dict[str, int]) -> list[int]:
    labels = []
    inside: dict[int, bool] = {}
    for a, b in offsets:
        if b <= a:  # special or padding token
            labels.append(IGNORE)
            continue
        label = table["O"]
        for k, ((s, e), kind) in enumerate(spans):
            if a < e and b > s:
                label = table[("I-" if inside.get(k) else "B-") + kind]
                inside[k] = True
                break
        labels.append(label)
    return labels


def _examples(sentences: Sequence[TaggedSentence], tokenizer: Any, max_length: int) -> list[dict[str, list[int]]]:
    """Token-level training examples: one type-0 pass per sentence, one per signal."""
    out = []
    for sentence in sentences:
        enc = tokenizer(sentence.text, return_offsets_mapping=True, truncation=True, max_length=max_length)
        offsets = enc["offset_mapping"]
        n = len(offsets)
        signals = sorted({s for pair in sentence.pairs for s in pair.signals})
        if sentence.has_signals:
            sig = _labels(offsets, [(s, "SIG") for s in signals], _SIG)
        else:
            sig = [IGNORE] * n
        if len(sentence.pairs) <= 1:
            spans = [(p.cause, "CAUSE") for p in sentence.pairs] + [(p.effect, "EFFECT") for p in sentence.pairs]
            arg = _labels(offsets, spans, _ARG)
        else:
            arg = [IGNORE] * n  # several relations: only the signal-conditioned passes teach them
        out.append({"input_ids": enc["input_ids"], "types": [0] * n, "sig": sig, "arg": arg})
        for pair in sentence.pairs:
            if not pair.signals:
                continue
            types = [int(any(a < e and b > s for s, e in pair.signals) and b > a) for a, b in offsets]
            arg = _labels(offsets, [(pair.cause, "CAUSE"), (pair.effect, "EFFECT")], _ARG)
            out.append({"input_ids": enc["input_ids"], "types": types, "sig": [IGNORE] * n, "arg": arg})
    return out


def _collate(batch: list[dict[str, list[int]]], torch: Any, pad_id: int) -> dict[str, Any]:
    width = max(len(x["input_ids"]) for x in batch)

    def pad(key: str, value: int) -> Any:
        return torch.tensor([x[key] + [value] * (width - len(x[key])) for x in batch])

    ids = pad("input_ids", pad_id)
    return {
        "input_ids": ids,
        "attention_mask": (ids != pad_id).long(),
        "token_type_ids": pad("types", 0),
        "sig": pad("sig", IGNORE),
        "arg": pad("arg", IGNORE),
    }


def evaluate_tagger(network: Any, tokenizer: Any, config: TaggerConfig, sentences: Sequence[TaggedSentence]) -> PairTally:
    """Strict / relaxed pair counts of the tagger's full spans against gold pairs."""
    tally = PairTally()
    predicted = predict_relations(network, tokenizer, config, [s.text for s in sentences])
    for sentence, relations in zip(sentences, predicted):
        golds = [(sentence.text[slice(*p.cause)], sentence.text[slice(*p.effect)]) for p in sentence.pairs]
        preds = [
            (sentence.text[slice(*r.cause)], sentence.text[slice(*r.effect)])
            for r in relations
            if r.cause is not None
        ]
        tally.add(preds, golds)
    return tally


def _scores(tally: PairTally) -> dict[str, float]:
    return {
        "strict_f1": round(tally.strict_f1, 4),
        "relaxed_precision": round(tally.relaxed_precision, 4),
        "relaxed_recall": round(tally.relaxed_recall, 4),
    }


def train_tagger(
    sentences: Sequence[TaggedSentence],
    out_dir: str | Path,
    *,
    train_only: Sequence[TaggedSentence] = (),
    held_out_fraction: float = 0.1,
    epochs: int = 3,
    batch_size: int = 16,
    learning_rate: float = 5e-4,
    rank: int = 16,
    alpha: float = 32.0,
    max_length: int = 128,
    max_steps: int | None = None,
    frozen_layers: int = 0,
    seed: int = 0,
    progress: bool = True,
    info: dict[str, Any] | None = None,
    log: Callable[[str], None] | None = None,
) -> TrainingReport:
    """Fine-tune the tagger on ``sentences`` and save it into ``out_dir``.

    A ``held_out_fraction`` share of ``sentences`` (whole document groups) picks the best
    epoch and the span threshold; ``train_only`` sentences (for example template
    augmentation) are trained on but never used for that selection.

    Raises:
        ConfigError: A hyper-parameter is out of range.
        InputError: No sentence has a relation.
        MissingDependencyError: ``peft`` is not installed (``pip install
            'sarg-integrations[train]'``).
    """
    if epochs < 1 or batch_size < 1 or rank < 1 or not 0 < learning_rate < 1:
        msg = (
            f"epochs={epochs}, batch_size={batch_size}, rank={rank} must be >= 1 and "
            f"learning_rate={learning_rate} in (0, 1)"
        )
        raise ConfigError(msg)
    if not 0 <= held_out_fraction < 1:
        msg = f"held_out_fraction={held_out_fraction} must be in [0, 1)"
        raise ConfigError(msg)
    if not any(s.pairs for s in sentences):
        msg = "the training data holds no sentence with a cause/effect pair; nothing to learn"
        raise InputError(msg)
    try:
        import torch
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise MissingDependencyError("peft", extra="train", feature="Training the span tagger") from exc
    from tqdm.auto import tqdm

    say = log or (lambda _m: None)
    torch.manual_seed(seed)
    train, held = split_by_group(sentences, held_out_fraction, seed) if held_out_fraction else (list(sentences), [])
    train += list(train_only)
    from sarg_integrations.extraction import tagger_model  # looked up at call time

    encoder, tokenizer = tagger_model.load_base_encoder()
    encoder = get_peft_model(
        encoder,
        LoraConfig(
            r=rank, lora_alpha=alpha, target_modules=lora_targets(frozen_layers), lora_dropout=0.1, bias="none"
        ),
    )
    # Layer norms (and, when no block is frozen, the segment embedding) train in full.
    # Freezing the lowest blocks stops back-propagation there: cheaper steps on a CPU.
    for name, param in encoder.named_parameters():
        block = re.search(r"encoder\.layer\.(\d+)\.", name)
        trainable_block = block is None or int(block.group(1)) >= frozen_layers
        if ("LayerNorm" in name and trainable_block and "embeddings" not in name) or (
            frozen_layers == 0 and ("token_type_embeddings" in name or "embeddings.LayerNorm" in name)
        ):
            param.requires_grad = True
    config = TaggerConfig(rank=rank, alpha=alpha, max_length=max_length, threshold=0.5, info=info)
    network = network_class()(encoder, config.hidden_size)
    examples = _examples(train, tokenizer, max_length)
    rng = random.Random(seed)
    steps_per_epoch = (len(examples) + batch_size - 1) // batch_size
    total = min(max_steps or steps_per_epoch * epochs, steps_per_epoch * epochs)
    params = [p for p in network.parameters() if p.requires_grad]
    optimizer, scheduler = warmup_then_decay(params, learning_rate, total)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=IGNORE)
    pad_id = tokenizer.pad_token_id
    history: list[dict[str, float]] = []
    best: tuple[float, int, dict[str, Any]] | None = None
    step, started = 0, time.perf_counter()
    bar = tqdm(total=total, desc="training the span tagger", unit="step", disable=not progress)
    for epoch in range(1, epochs + 1):
        network.train()
        # Batches of similar length (less padding), in a shuffled order.
        order = sorted(range(len(examples)), key=lambda i: (len(examples[i]["input_ids"]), rng.random()))
        batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
        rng.shuffle(batches)
        running = 0.0
        for idx in batches:
            if step >= total:
                break
            batch = _collate([examples[i] for i in idx], torch, pad_id)
            sig, arg = network(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
            loss = loss_fn(sig.flatten(0, 1), batch["sig"].flatten()) + loss_fn(
                arg.flatten(0, 1), batch["arg"].flatten()
            )
            if torch.isnan(loss):  # a batch with every label ignored
                continue
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            step += 1
            value = loss.item()
            running = 0.9 * running + 0.1 * value if running else value
            bar.update(1)
            bar.set_postfix(epoch=epoch, loss=f"{running:.3f}")
        network.eval()
        record: dict[str, float] = {"epoch": epoch, "step": step, "loss": round(running, 4)}
        if held:
            record.update(_scores(evaluate_tagger(network, tokenizer, config, held)))
        history.append(record)
        say(f"epoch {epoch}: {record}")
        score = record.get("strict_f1", float(epoch))
        if best is None or score > best[0]:
            best = (score, epoch, adapter_tensors(network, config))
        if step >= total:
            break
    bar.close()
    assert best is not None
    _, best_epoch, tensors = best
    threshold, held_scores = 0.5, {}
    if held:
        _load_tensors(network, tensors)
        network.eval()
        threshold, held_scores = _pick_threshold(network, tokenizer, config, held)
    config = TaggerConfig(
        rank=rank, alpha=alpha, max_length=max_length, threshold=threshold, info=info
    )
    report = TrainingReport(
        sentences=len(train),
        held_out=len(held),
        examples=len(examples),
        steps=step,
        seconds=round(time.perf_counter() - started, 1),
        best_epoch=best_epoch,
        threshold=threshold,
        held_out_scores=held_scores,
        history=history,
    )
    _save(Path(out_dir), config, tensors, report)
    return report


def _load_tensors(network: Any, tensors: dict[str, Any]) -> None:
    """Put saved tensors back into the peft-wrapped network (for the threshold sweep)."""
    import torch

    params = dict(network.named_parameters())
    by_saved = {}
    for name in params:
        if ".lora_A." in name or ".lora_B." in name:
            module = name.split(".lora_")[0].removeprefix("encoder.base_model.model.")
            by_saved[f"lora.{module}.{'A' if '.lora_A.' in name else 'B'}"] = name
        elif name.startswith(("signal_head.", "argument_head.")):
            by_saved[name] = name
        else:
            by_saved["replace." + name.removeprefix("encoder.base_model.model.")] = name
    with torch.no_grad():
        for key, tensor in tensors.items():
            params[by_saved[key]].copy_(tensor)


THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6)
"""The span thresholds tried on the held-out share."""
MIN_RELAXED_PRECISION = 0.85
"""Threshold selection: the best relaxed recall among thresholds at least this precise."""


def pick_threshold(scores: dict[float, dict[str, float]]) -> float:
    """The threshold with the best held-out relaxed recall at relaxed precision >= 0.85.

    Ties go to the better strict F1, then to the lower threshold. When no threshold
    reaches that precision, the one with the best strict F1. (A graph needs its links:
    recall at a fixed, high precision is what the pipeline uses the tagger for.)

    Example:
        >>> pick_threshold({0.2: {"relaxed_precision": 0.86, "relaxed_recall": 0.75, "strict_f1": 0.68},
        ...                 0.6: {"relaxed_precision": 0.90, "relaxed_recall": 0.71, "strict_f1": 0.69}})
        0.2
        >>> pick_threshold({0.2: {"relaxed_precision": 0.7, "relaxed_recall": 0.8, "strict_f1": 0.5},
        ...                 0.6: {"relaxed_precision": 0.8, "relaxed_recall": 0.6, "strict_f1": 0.6}})
        0.6
    """
    precise = {t: s for t, s in scores.items() if s["relaxed_precision"] >= MIN_RELAXED_PRECISION}
    if precise:
        return min(precise, key=lambda t: (-precise[t]["relaxed_recall"], -precise[t]["strict_f1"], t))
    return min(scores, key=lambda t: (-scores[t]["strict_f1"], t))


def _pick_threshold(
    network: Any, tokenizer: Any, config: TaggerConfig, held: Sequence[TaggedSentence]
) -> tuple[float, dict[str, float]]:
    """Score every threshold of :data:`THRESHOLDS` on ``held``; :func:`pick_threshold`."""
    scores = {}
    for threshold in THRESHOLDS:
        trial = TaggerConfig(rank=config.rank, alpha=config.alpha, max_length=config.max_length, threshold=threshold)
        scores[threshold] = _scores(evaluate_tagger(network, tokenizer, trial, held))
    best = pick_threshold(scores)
    return best, {**scores[best], "threshold": best}


def warmup_then_decay(params: list[Any], learning_rate: float, total: int) -> tuple[Any, Any]:
    """AdamW (weight decay 0.01) and a schedule warming up over the first 1/16 of
    ``total`` steps, then decaying linearly to 0: the recipe of both trained models."""
    import torch

    optimizer = torch.optim.AdamW(params, lr=learning_rate, weight_decay=0.01)
    warmup = max(1, total // 16)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))
    )
    return optimizer, scheduler


def save_model_folder(
    out: Path, config_json: dict[str, Any], tensors: dict[str, Any], config_file: str, weights_file: str, what: str
) -> None:
    """Write a trained model's folder: the safetensors weights, then the JSON config,
    each through a temporary file (a half-written folder never looks whole).

    Raises:
        InputError: ``out`` is a file.
    """
    from safetensors.torch import save_file

    if out.exists() and not out.is_dir():
        msg = f"out_dir={str(out)!r} is a file; pass a folder to write the {what} into"
        raise InputError(msg)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (weights_file + ".tmp")
    save_file(tensors, str(tmp), metadata={"format": str(config_json["format"])})
    tmp.replace(out / weights_file)
    tmp = out / (config_file + ".tmp")
    tmp.write_text(json.dumps(config_json, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(out / config_file)


def _save(out: Path, config: TaggerConfig, tensors: dict[str, Any], report: TrainingReport) -> None:
    data = config.to_json()
    data["info"] = {**data["info"], "training": asdict(report)}
    save_model_folder(out, data, tensors, CONFIG_FILE, WEIGHTS_FILE, "tagger")
