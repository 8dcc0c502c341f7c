"""Training the direction classifier: the SetFit recipe on sentence-transformers.

:func:`train_direction_classifier` samples contrastive pairs from labeled queries,
optionally fine-tunes the body with ``CosineSimilarityLoss`` (lr 2e-5, batch 16), then
fits a logistic-regression head on the embeddings. ``fine_tune_pairs=0`` keeps the body
frozen (the shipped default).

Two trainers do it: ``trainer="setfit"`` (the ``setfit`` library's ``Trainer``: its
pair sampling, contrastive fine-tune and head fit; ``pip install
"sarg-integrations[train]"``) and ``trainer="builtin"`` (a short loop over
sentence-transformers, the same recipe, for installs without the ``train`` extra). The
default ``"auto"`` takes setfit when it is installed. Measured side by side they tie
(``benchmarks/bench_direction.py --compare-trainers``). Both save the same JSON head,
which loads without setfit.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sarg_integrations._checks import is_whole
from sarg_integrations.direction.base import LABELS, TRAINERS
from sarg_integrations.direction.classifier import (
    BODY_DIR,
    DEFAULT_ENCODER,
    DEFAULT_MARGIN,
    IN_MEMORY_ENCODER,
    DirectionClassifier,
    check_margin,
    ngram_features,
)
from sarg_integrations.direction.data import load_direction_dataset
from sarg_integrations.errors import ConfigError, InputError, MissingDependencyError

__all__ = [
    "TRAINERS",
    "TrainingReport",
    "evaluate_direction_classifier",
    "train_direction_classifier",
]



@dataclass
class TrainingReport:
    """What :func:`train_direction_classifier` did and how well the result does.

    Attributes:
        classifier: The trained classifier (also saved when ``out`` was given).
        accuracy: Accuracy on the evaluation rows (argmax, no margin fallback).
        report: sklearn's per-class report text.
        confusion: Confusion matrix rows/columns in :data:`LABELS` order.
        timings: Seconds per phase (``fine_tune``, ``embed``, ``head``, ``evaluate``;
            ``setfit`` for the setfit Trainer's fine-tune and head fit).
        n_train: Training rows; ``n_pairs``: contrastive pairs used (0 = frozen body).
        saved_to: The JSON file written, if any.
    """

    classifier: DirectionClassifier
    accuracy: float | None
    report: str
    confusion: list[list[int]]
    timings: dict[str, float] = field(default_factory=dict)
    n_train: int = 0
    n_eval: int = 0
    n_pairs: int = 0
    saved_to: Path | None = None


def _sample_pairs(
    texts: Sequence[str], labels: Sequence[str], n_pairs: int, rng: random.Random
) -> list[tuple[str, str, float]]:
    """SetFit's pair sampling: half same-label pairs (target 1), half different (target 0)."""
    by_label: dict[str, list[str]] = {}
    for text, label in zip(texts, labels):
        by_label.setdefault(label, []).append(text)
    present = [lab for lab in by_label if len(by_label[lab]) >= 1]
    pairs: list[tuple[str, str, float]] = []
    for i in range(n_pairs):
        anchor_label = present[i % len(present)]
        anchor = rng.choice(by_label[anchor_label])
        if i % 2 == 0:
            pairs.append((anchor, rng.choice(by_label[anchor_label]), 1.0))
        else:
            others = [lab for lab in present if lab != anchor_label]
            if not others:
                continue
            pairs.append((anchor, rng.choice(by_label[rng.choice(others)]), 0.0))
    rng.shuffle(pairs)
    return pairs


def _fine_tune_body(
    base_model: str | None,
    pairs: list[tuple[str, str, float]],
    *,
    batch_size: int,
    learning_rate: float,
    epochs: int,
    seed: int,
    log: Callable[[str], None],
) -> Any:
    """Fine-tune a fresh copy of the body on the pairs with CosineSimilarityLoss."""
    import torch

    try:
        from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.losses import CosineSimilarityLoss

    torch.manual_seed(seed)
    model = _fresh_body(base_model)
    model.train()
    loss_fn = CosineSimilarityLoss(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    steps = max(1, math.ceil(len(pairs) / batch_size)) * epochs
    warmup = max(1, int(0.1 * steps))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (steps - s) / max(1, steps - warmup)),
    )
    step = 0
    for epoch in range(epochs):
        for start in range(0, len(pairs), batch_size):
            batch = pairs[start : start + batch_size]
            features = [_features(model, [p[j] for p in batch]) for j in (0, 1)]
            target = torch.tensor([p[2] for p in batch], dtype=torch.float32)
            loss = loss_fn(features, target)
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            step += 1
            if step == 1 or step % 25 == 0 or step == steps:
                log(f"  fine-tune step {step}/{steps} (epoch {epoch + 1}) loss {loss.item():.4f}")
    model.eval()
    return model


def _fresh_body(base_model: str | None) -> Any:
    """A fresh CPU copy of the body to fine-tune (never the shared, cached one)."""
    from sentence_transformers import SentenceTransformer

    from sarg_integrations._models import _quiet_transformers, minilm_model_dir

    path = base_model or str(minilm_model_dir())
    with _quiet_transformers():
        return SentenceTransformer(path, device="cpu")


def _setfit_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("setfit") is not None


def _require_setfit() -> Any:
    try:
        import setfit
    except ImportError as exc:
        raise MissingDependencyError(
            "setfit",
            extra="train",
            feature="Training the direction classifier with trainer='setfit'",
        ) from exc
    return setfit


def _setfit_train(
    base_model: str | None,
    texts: list[str],
    labels: list[str],
    *,
    n_pairs: int,
    batch_size: int,
    learning_rate: float,
    epochs: int,
    head_c: float,
    fit_head: bool,
    seed: int,
    log: Callable[[str], None],
) -> tuple[Any, tuple[np.ndarray, np.ndarray] | None]:
    """Train with the setfit library: its pair sampling, contrastive fine-tune and head.

    The body is fine-tuned for ``ceil(n_pairs / batch_size) * epochs`` steps (the
    builtin loop's step count) on pairs setfit samples (``CosineSimilarityLoss``, body
    lr ``learning_rate``, 10 % warm-up); ``n_pairs=0`` skips that step. With
    ``fit_head``, setfit also fits its logistic-regression head on the normalised
    embeddings, returned as ``(weights, bias)`` in :data:`LABELS` order.

    Returns:
        The body (a SentenceTransformer, in eval mode) and the head or ``None``.
    """
    import tempfile

    setfit = _require_setfit()
    from datasets import Dataset
    from sklearn.linear_model import LogisticRegression
    from transformers import PrinterCallback, ProgressCallback, TrainerCallback

    class _Progress(TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
            loss = (logs or {}).get("embedding_loss", (logs or {}).get("loss"))
            if loss is not None:
                log(f"  fine-tune step {state.global_step}/{state.max_steps} loss {loss:.4f}")

    body = _fresh_body(base_model)
    head = LogisticRegression(C=head_c, max_iter=2000, random_state=seed)
    model = setfit.SetFitModel(model_body=body, model_head=head, normalize_embeddings=True)
    steps = math.ceil(n_pairs / batch_size) * epochs
    import datasets

    # Progress goes through ``log``: no "Map" bars, and no "Running training" banner
    # (importing setfit.trainer sets setfit's verbosity to info).
    bars = not datasets.are_progress_bars_disabled()
    verbosity = setfit.logging.get_verbosity()
    datasets.disable_progress_bars()
    setfit.logging.set_verbosity_warning()
    try:
        with tempfile.TemporaryDirectory(prefix="sarg-setfit-") as scratch:
            args = setfit.TrainingArguments(
                output_dir=scratch,
                batch_size=batch_size,
                num_epochs=epochs,
                max_steps=steps if steps else -1,
                body_learning_rate=learning_rate,
                seed=seed,
                save_strategy="no",
                report_to="none",
                logging_steps=25,
                show_progress_bar=False,
            )
            trainer = setfit.Trainer(
                model=model,
                args=args,
                train_dataset=Dataset.from_dict({"text": texts, "label": labels}),
                callbacks=[_Progress()],
            )
            # ... nor the Trainer's own tqdm bar and printer.
            for noisy in (ProgressCallback, PrinterCallback):
                trainer.st_trainer.remove_callback(noisy)
            if steps and fit_head:
                trainer.train()
            elif steps:
                trainer.train_embeddings(texts, labels, args=args)
            elif fit_head:
                trainer.train_classifier(texts, labels, args=args)
    finally:
        setfit.logging.set_verbosity(verbosity)
        if bars:
            datasets.enable_progress_bars()
    body.eval()
    if not fit_head:
        return body, None
    order = [list(head.classes_).index(lab) for lab in LABELS]
    return body, (head.coef_[order].astype(np.float32), head.intercept_[order].astype(np.float32))


def _features(model: Any, texts: list[str]) -> dict[str, Any]:
    """Tokenize a batch for a forward pass (``preprocess`` in sentence-transformers >= 6)."""
    prepare = getattr(model, "preprocess", None) or model.tokenize
    return {k: v.to(model.device) if hasattr(v, "to") else v for k, v in prepare(texts).items()}


def _encode(model: Any, texts: Sequence[str]) -> np.ndarray:
    import torch

    with torch.inference_mode():
        return np.asarray(
            model.encode(
                list(texts),
                batch_size=64,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )


def _check_labels(y: Sequence[str]) -> None:
    missing = [lab for lab in LABELS if lab not in set(y)]
    if missing:
        msg = f"the training data has no example of {missing}; every label needs examples"
        raise InputError(msg, argument="data", value=missing)


def _fit_head(
    x: np.ndarray, y: Sequence[str], c: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.linear_model import LogisticRegression

    _check_labels(y)
    head = LogisticRegression(C=c, max_iter=2000, random_state=seed)
    head.fit(x, list(y))
    order = [list(head.classes_).index(lab) for lab in LABELS]
    return head.coef_[order].astype(np.float32), head.intercept_[order].astype(np.float32)


def evaluate_direction_classifier(
    classifier: DirectionClassifier, rows: Sequence[Mapping[str, Any]], *, embeddings: Any = None
) -> dict[str, Any]:
    """Score a classifier on labeled rows.

    Returns:
        ``accuracy`` (argmax), ``accuracy_with_fallback`` (after the margin rule),
        ``report`` (per-class text), ``confusion`` (rows/columns in :data:`LABELS` order)
        and ``predictions``.
    """
    from sklearn.metrics import classification_report, confusion_matrix

    texts = [str(r["query"]) for r in rows]
    gold = [str(r["label"]) for r in rows]
    x = classifier.embed(texts) if embeddings is None else np.asarray(embeddings)
    probs = classifier.proba_from_embeddings(x, texts)
    argmax = [LABELS[int(i)] for i in probs.argmax(axis=1)]
    fallback = [classifier._decide(p, text)[0].value for p, text in zip(probs, texts)]
    return {
        "accuracy": float(np.mean([a == g for a, g in zip(argmax, gold)])),
        "accuracy_with_fallback": float(np.mean([a == g for a, g in zip(fallback, gold)])),
        "report": classification_report(
            gold, argmax, labels=list(LABELS), digits=4, zero_division=0
        ),
        "confusion": confusion_matrix(gold, argmax, labels=list(LABELS)).tolist(),
        "predictions": fallback,
    }


def train_direction_classifier(
    rows: Sequence[Mapping[str, Any]] | None = None,
    *,
    base_model: str | None = None,
    fine_tune_pairs: int = 0,
    epochs: int = 1,
    batch_size: int = 16,
    learning_rate: float = 2e-5,
    head_c: float = 4.0,
    ngram_buckets: int = 0,
    margin: float = DEFAULT_MARGIN,
    eval_split: str = "test",
    max_train: int | None = None,
    out: str | Path | None = None,
    seed: int = 13,
    log: Callable[[str], None] | None = None,
    trainer: str = "auto",
) -> TrainingReport:
    """Train a direction classifier the SetFit way and evaluate it.

    Args:
        rows: Labeled rows (``query``, ``label``, ``split``); default the packaged data.
            Rows of split ``train`` train; rows of ``eval_split`` evaluate.
        base_model: A local sentence-transformers folder for the body; ``None`` = the
            embedded all-MiniLM-L6-v2.
        fine_tune_pairs: Contrastive pairs for fine-tuning the body (SetFit step 1,
            ``CosineSimilarityLoss``); 0 keeps the body frozen, so the head can share
            the pipeline's embedding.
        epochs: Passes over the pairs.
        batch_size: Pairs per step (paper: 16).
        learning_rate: Body learning rate (paper: 2e-5).
        head_c: Inverse L2 strength of the logistic-regression head.
        ngram_buckets: Hashed word uni/bigram features appended to the embedding
            (0 = the plain SetFit head over the embedding).
        margin: The fallback margin stored with the classifier.
        eval_split: Split to report on (``test`` or ``validation``).
        max_train: Use at most this many training rows (stratified by order), for
            quick runs.
        out: Folder (or ``.json`` file) to save to; a fine-tuned body goes to
            ``out/body``. ``None`` saves nothing (a fine-tuned body then stays in memory).
        seed: Seed for pair sampling, torch and the head.
        log: Receives progress lines (default: silent).
        trainer: ``"auto"`` (default: ``"setfit"`` when installed, else ``"builtin"``),
            ``"builtin"`` or ``"setfit"``: the ``setfit`` library's
            ``Trainer`` samples the pairs, fine-tunes the body for the same number of
            steps and, when ``ngram_buckets=0``, fits the head. Its head reads only the
            embedding, so with n-gram buckets the head is fitted as in the builtin
            path, over the setfit-tuned body's embeddings plus the n-grams.

    Raises:
        InputError: No training rows, or a label without examples.
        ConfigError: Bad numeric settings, an unknown trainer, or a fine-tuned body
            with no ``out`` folder.
        MissingDependencyError: ``trainer="setfit"`` without the ``setfit`` package
            (``pip install "sarg-integrations[train]"``).
    """
    say = log or (lambda _line: None)
    for name, value, low in (
        ("fine_tune_pairs", fine_tune_pairs, 0),
        ("epochs", epochs, 1),
        ("batch_size", batch_size, 1),
    ):
        if not is_whole(value, low):
            msg = f"{name}={value!r} must be an integer >= {low}"
            raise ConfigError(msg, field=name, value=value)
    if not (isinstance(learning_rate, (int, float)) and learning_rate > 0):
        msg = f"learning_rate={learning_rate!r} must be a positive number, e.g. 2e-5"
        raise ConfigError(msg, field="learning_rate", value=learning_rate)
    check_margin(margin)
    if trainer not in TRAINERS:
        msg = f"trainer={trainer!r} must be one of {list(TRAINERS)}"
        raise ConfigError(msg, field="trainer", value=trainer)
    if trainer == "auto":
        trainer = "setfit" if _setfit_installed() else "builtin"
        say(f"trainer: {trainer} (auto)")
    if trainer == "setfit":
        _require_setfit()  # fail before any data or model is loaded
    if fine_tune_pairs and out is not None and Path(out).suffix == ".json":
        msg = f"out={str(out)!r}: a fine-tuned body needs a folder, not a .json file"
        raise ConfigError(msg, field="out", value=str(out))
    data = list(rows) if rows is not None else load_direction_dataset()
    train = [r for r in data if r.get("split", "train") == "train"]
    evaluation = [r for r in data if r.get("split") == eval_split]
    if max_train is not None and len(train) > max_train:
        rng = random.Random(seed)
        train = rng.sample(train, max_train)
    if not train:
        msg = (
            "no training rows (split 'train'); give rows a 'split' of "
            "train/validation/test or omit it"
        )
        raise InputError(msg, argument="data", value=len(data))
    texts = [str(r["query"]) for r in train]
    labels = [str(r["label"]) for r in train]
    timings: dict[str, float] = {}
    rng = random.Random(seed)
    encoder = DEFAULT_ENCODER if base_model is None else str(Path(base_model).resolve())
    _check_labels(labels)
    head: tuple[np.ndarray, np.ndarray] | None = None
    if trainer == "setfit":
        n_pairs = fine_tune_pairs
        say(
            f"Training with setfit {_require_setfit().__version__}: "
            + (
                f"{math.ceil(n_pairs / batch_size) * epochs} contrastive steps of {batch_size} "
                f"pairs (CosineSimilarityLoss, lr {learning_rate})"
                if n_pairs
                else "frozen body"
            )
            + ("" if ngram_buckets else ", then its logistic-regression head")
        )
        start = time.perf_counter()
        model, head = _setfit_train(
            base_model,
            texts,
            labels,
            n_pairs=n_pairs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            epochs=epochs,
            head_c=head_c,
            fit_head=not ngram_buckets,
            seed=seed,
            log=say,
        )
        timings["setfit"] = time.perf_counter() - start
    elif fine_tune_pairs:
        pairs = _sample_pairs(texts, labels, fine_tune_pairs, rng)
        n_pairs = len(pairs)
        say(
            f"Fine-tuning the body on {len(pairs)} pairs (CosineSimilarityLoss, "
            f"lr {learning_rate}, batch {batch_size}, {epochs} epoch(s))"
        )
        start = time.perf_counter()
        model = _fine_tune_body(
            base_model,
            pairs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            epochs=epochs,
            seed=seed,
            log=say,
        )
        timings["fine_tune"] = time.perf_counter() - start
    else:
        n_pairs = 0
        from sarg_integrations._models import load_sentence_transformer

        model = load_sentence_transformer(base_model)
    if n_pairs and out is not None:
        body = Path(out) / BODY_DIR
        model.save(str(body))
        encoder = str(body.resolve())
    if head is None:
        start = time.perf_counter()
        x_train = _encode(model, texts)
        timings["embed"] = time.perf_counter() - start
        say(f"Embedded {len(texts)} training queries in {timings['embed']:.1f} s")
        start = time.perf_counter()
        if ngram_buckets:
            x_train = np.concatenate([x_train, ngram_features(texts, ngram_buckets)], axis=1)
        head = _fit_head(x_train, labels, head_c, seed)
        timings["head"] = time.perf_counter() - start
    weights, bias = head
    metadata = {
        "trained_on": len(train),
        "trainer": trainer if trainer == "builtin" else f"setfit {_require_setfit().__version__}",
        "fine_tune_pairs": n_pairs,
        "epochs": epochs if n_pairs else 0,
        "batch_size": batch_size,
        "learning_rate": learning_rate,
        "head": f"LogisticRegression(C={head_c})"
        + (f" over embedding + {ngram_buckets} hashed n-grams" if ngram_buckets else ""),
        "seed": seed,
        "base_model": "all-MiniLM-L6-v2 (embedded)" if base_model is None else str(base_model),
    }
    classifier = DirectionClassifier(
        weights,
        bias,
        encoder=encoder,
        margin=margin,
        ngram_buckets=ngram_buckets,
        metadata=metadata,
    )
    if n_pairs and out is None:
        classifier.encoder = IN_MEMORY_ENCODER
        classifier._embedder = _InMemoryEmbedder(model)
    accuracy, report, confusion = None, "", []
    if evaluation:
        start = time.perf_counter()
        scores = evaluate_direction_classifier(
            classifier, evaluation, embeddings=_encode(model, [str(r["query"]) for r in evaluation])
        )
        timings["evaluate"] = time.perf_counter() - start
        accuracy, report, confusion = scores["accuracy"], scores["report"], scores["confusion"]
        classifier.metadata[f"{eval_split}_accuracy"] = round(accuracy, 4)
    saved = classifier.save(out) if out is not None else None
    return TrainingReport(
        classifier,
        accuracy,
        report,
        confusion,
        timings,
        len(train),
        len(evaluation),
        n_pairs,
        saved,
    )


class _InMemoryEmbedder:
    def __init__(self, model: Any) -> None:
        self.model = model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return _encode(self.model, texts)


# --------------------------------------------------------------------------- the teacher
