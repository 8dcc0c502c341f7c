"""The distilled direction classifier (paper §3.4, Appendix B): data, training, teacher.

* :class:`DirectionClassifier` — the shipped student: a logistic-regression head over
  sentence embeddings (by default the frozen, embedded all-MiniLM-L6-v2). Its weights
  are plain JSON (``sarg_integrations/data/direction_head.json``); nothing is pickled.
  Inside :class:`~sarg_integrations.SARGPipeline` it reuses the query embedding the
  pipeline already computed, so a prediction costs one small matrix product.
* :func:`train_direction_classifier` — the SetFit recipe written directly on
  sentence-transformers: contrastive pairs sampled from labeled queries fine-tune the
  body with ``CosineSimilarityLoss`` (lr 2e-5, batch 16), then a logistic-regression head
  is fitted on the embeddings. ``fine_tune_pairs=0`` keeps the body frozen (the shipped
  default).
* :class:`LLMDirectionTeacher` — asks any LangChain / LlamaIndex / callable LLM for the
  direction (the paper's teacher); :func:`distill_direction` labels a user's own queries
  with it, producing a file :func:`train_direction_classifier` can learn from.

Example:
    >>> clf = DirectionClassifier.load()  # doctest: +SKIP
    >>> clf.predict(["Why did technology stocks sell off?"])  # doctest: +SKIP
    ['backward']
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import json
import math
import random
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from sarg_integrations.direction import BaseDirectionClassifier
from sarg_integrations.errors import ConfigError, InputError, ModelLoadError
from sarg_integrations.schema import Direction, DirectionPrediction

__all__ = [
    "DEFAULT_ENCODER",
    "DEFAULT_MARGIN",
    "LABELS",
    "MAX_QUERY_CHARS",
    "DirectionClassifier",
    "LLMDirectionTeacher",
    "TrainingReport",
    "default_direction_classifier",
    "distill_direction",
    "evaluate_direction_classifier",
    "load_direction_dataset",
    "ngram_features",
    "parse_direction_answer",
    "read_queries",
    "train_direction_classifier",
]

LABELS: tuple[str, ...] = ("forward", "backward", "bidirectional")
"""The class labels, in the order of the head's rows."""

FORMAT = "sarg-direction-head"
FORMAT_VERSION = 1
DEFAULT_ENCODER = "embedded:all-MiniLM-L6-v2"
"""Encoder identity of the embedded all-MiniLM-L6-v2 (the pipeline's default encoder)."""
DEFAULT_DIMENSION = 384
MAX_HEAD_BYTES = 64_000_000
"""A direction head file larger than this is refused before it is read."""
DEFAULT_MARGIN = 0.15
"""Top-1 minus top-2 probability below which a prediction falls back to bidirectional."""
MAX_QUERY_CHARS = 2000
"""Longer queries are cut to this many characters before encoding (the encoder reads
at most 256 word pieces anyway); the prediction's rationale says so."""
IN_MEMORY_ENCODER = "memory:fine-tuned"
"""Encoder identity of a fine-tuned body that was not saved (it cannot be saved later)."""
HEAD_FILE = "direction_head.json"
BODY_DIR = "body"
DATA_RESOURCE = "data/direction_queries.jsonl"
SPLITS = ("train", "validation", "test")


# --------------------------------------------------------------------------- data


def _resource_path(name: str) -> Path:
    return Path(str(resources.files("sarg_integrations").joinpath(name)))


def load_direction_dataset(
    path: str | Path | None = None, split: str | None = None
) -> list[dict[str, Any]]:
    """Read labeled direction queries from a JSONL file.

    Each line is an object with ``query`` and ``label`` (one of :data:`LABELS`) and
    optionally ``split`` (``train``/``validation``/``test``); other keys are kept.

    Args:
        path: The JSONL file; ``None`` reads the packaged ``direction_queries.jsonl``.
        split: Keep only rows of this split (rows without a split count as ``train``).

    Raises:
        InputError: The file is missing, or a line is not valid JSON or lacks a
            ``query`` string / a valid ``label``.
    """
    if split is not None and split not in SPLITS:
        msg = f"split={split!r} is not a split; use one of {', '.join(SPLITS)} or None"
        raise InputError(msg, argument="split", value=split)
    file = Path(path) if path is not None else _resource_path(DATA_RESOURCE)
    if not file.is_file():
        msg = (
            f"--data {str(file)!r} does not exist; pass a JSONL file with 'query' and "
            "'label' per line"
        )
        raise InputError(msg, argument="data", value=str(file))
    rows: list[dict[str, Any]] = []
    with file.open(encoding="utf-8") as handle:
        for number, row in _json_lines(
            handle, file, "data", hint="; write one JSON object per line"
        ):
            if (
                not isinstance(row, dict)
                or not isinstance(row.get("query"), str)
                or not row["query"].strip()
            ):
                msg = f"{file}:{number}: each line needs a non-empty 'query' string"
                raise InputError(msg, argument="data", value=str(file))
            label = str(row.get("label", "")).strip().lower()
            if label not in LABELS:
                msg = (
                    f"{file}:{number}: label={row.get('label')!r} is not one of "
                    f"{', '.join(LABELS)}; fix the label or drop the line"
                )
                raise InputError(msg, argument="data", value=str(file))
            row["label"] = label
            row.setdefault("split", "train")
            if split is None or row["split"] == split:
                rows.append(row)
    return rows


def _json_lines(
    lines: Iterable[str], file: Path, argument: str, *, hint: str = ""
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank JSON line; bad JSON is an InputError."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            msg = f"{file}:{number}: not valid JSON ({exc.msg}){hint}"
            raise InputError(msg, argument=argument, value=str(file)) from None
        yield number, value


def _check_query(query: Any, argument: str = "query") -> tuple[str, bool]:
    """Validate one query; return it (cut to :data:`MAX_QUERY_CHARS`) and whether it was cut."""
    if not isinstance(query, str):
        msg = f"{argument} must be a string, got {type(query).__name__}; pass the question as text"
        raise InputError(msg, argument=argument, value=query)
    text = " ".join(query.split())
    if not text:
        msg = f"{argument}={query!r} is empty; pass a non-empty question"
        raise InputError(msg, argument=argument, value=query)
    if len(text) > MAX_QUERY_CHARS:
        return text[:MAX_QUERY_CHARS], True
    return text, False


def _check_queries(queries: Any) -> list[str]:
    if isinstance(queries, str):
        msg = (
            f"queries must be a list of strings, got the single string {queries[:60]!r}; "
            "wrap it in a list"
        )
        raise InputError(msg, argument="queries", value=queries)
    if not isinstance(queries, Iterable):
        msg = f"queries must be a list of strings, got {type(queries).__name__}"
        raise InputError(msg, argument="queries", value=queries)
    return [_check_query(q, f"queries[{i}]")[0] for i, q in enumerate(queries)]


# --------------------------------------------------------------------------- the student


_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|\?")


def ngram_features(texts: Sequence[str], buckets: int) -> np.ndarray:
    """Hashed word unigrams and bigrams (with start/end markers), L2-normalised rows.

    They keep the word order the mean-pooled embedding blurs ("what does X lead to?"
    versus "what leads to X?") for a few microseconds per query. ``zlib.crc32`` hashing
    is stable across processes, unlike ``hash()``.
    """
    out = np.zeros((len(texts), buckets), dtype=np.float32)
    if not buckets:
        return out
    for row, text in enumerate(texts):
        tokens = ["<s>", *_TOKEN.findall(text.lower()), "</s>"]
        grams = tokens[1:-1] + [f"{a} {b}" for a, b in itertools.pairwise(tokens)]
        for gram in grams:
            out[row, zlib.crc32(gram.encode("utf-8")) % buckets] = 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return out / norms


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class DirectionClassifier(BaseDirectionClassifier):
    """The distilled direction classifier: a softmax head over sentence embeddings.

    Build one with :meth:`load` (default: the packaged head over the embedded
    all-MiniLM-L6-v2) or :func:`train_direction_classifier`.

    A prediction whose top-1 minus top-2 probability is below ``margin`` falls back to
    bidirectional (walk both ways rather than miss the chain); the prediction's
    ``scores`` still hold the head's probabilities and its rationale says it fell back.

    Args:
        weights: Head weights, shape ``(3, dim)``, rows in :data:`LABELS` order.
        bias: Head bias, shape ``(3,)``.
        encoder: Which body embeds queries: :data:`DEFAULT_ENCODER` (the embedded,
            frozen all-MiniLM-L6-v2) or a local sentence-transformers folder.
        margin: The fallback margin in [0, 1]; 0 never falls back.
        reuse_embedding: Whether ``predict_direction`` may use the ``query_embedding``
            its caller passes. ``None`` (auto): only when the body is the default
            frozen encoder and the vector has the head's dimension. The pipeline sets
            it from its own embedder (see :func:`default_direction_classifier`).
        metadata: Free-form provenance (training settings, metrics) kept on save.

    Raises:
        ModelLoadError: The weights and bias do not have consistent shapes.
        ConfigError: ``margin`` is outside [0, 1].
    """

    def __init__(
        self,
        weights: Any,
        bias: Any,
        *,
        encoder: str = DEFAULT_ENCODER,
        margin: float = DEFAULT_MARGIN,
        reuse_embedding: bool | None = None,
        ngram_buckets: int = 0,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        if (
            isinstance(ngram_buckets, bool)
            or not isinstance(ngram_buckets, int)
            or ngram_buckets < 0
        ):
            msg = f"ngram_buckets={ngram_buckets!r} must be an integer >= 0"
            raise ModelLoadError(msg)
        w = np.asarray(weights, dtype=np.float32)
        b = np.asarray(bias, dtype=np.float32)
        if (
            w.ndim != 2
            or w.shape[0] != len(LABELS)
            or b.shape != (len(LABELS),)
            or w.shape[1] <= ngram_buckets
        ):
            msg = (
                f"direction head has weights of shape {w.shape} and bias of shape {b.shape}; "
                f"expected ({len(LABELS)}, dim + {ngram_buckets}) and ({len(LABELS)},) "
                f"for labels {list(LABELS)}"
            )
            raise ModelLoadError(msg)
        if not np.all(np.isfinite(w)) or not np.all(np.isfinite(b)):
            msg = (
                "direction head weights contain NaN or infinity; "
                "retrain with `sarg train-direction`"
            )
            raise ModelLoadError(msg)
        self.margin = _check_margin(margin)
        self.weights = w
        self.bias = b
        self.encoder = encoder
        self.reuse_embedding = reuse_embedding
        self.ngram_buckets = ngram_buckets
        dim = int(w.shape[1]) - ngram_buckets
        # Split once so a single prediction is a 3 x dim product plus a few row sums.
        self._w_embedding = np.ascontiguousarray(w[:, :dim])
        self._w_grams_list: list[list[float]] = w[:, dim:].T.astype(np.float64).tolist()
        self._bias_list: list[float] = b.astype(np.float64).tolist()
        self.metadata = dict(metadata or {})
        self._embedder: Any = None
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- properties

    @property
    def dimension(self) -> int:
        """The embedding size the head expects."""
        return int(self.weights.shape[1]) - self.ngram_buckets

    @property
    def method(self) -> str:
        """``"setfit-head"`` over the frozen shared encoder, ``"setfit"`` over a tuned body."""
        return "setfit-head" if self.frozen_default_encoder else "setfit"

    @property
    def frozen_default_encoder(self) -> bool:
        """Whether the body is the embedded all-MiniLM-L6-v2, unchanged (shareable)."""
        return self.encoder == DEFAULT_ENCODER

    def __repr__(self) -> str:
        return (
            f"DirectionClassifier(encoder={self.encoder!r}, dimension={self.dimension}, "
            f"ngram_buckets={self.ngram_buckets}, margin={self.margin})"
        )

    # ---------------------------------------------------------------- encoding

    def _get_embedder(self) -> Any:
        with self._lock:
            if self._embedder is None:
                from sarg_integrations.embedding import SentenceTransformerEmbedder

                path = None if self.frozen_default_encoder else self.encoder
                self._embedder = SentenceTransformerEmbedder(path)
            return self._embedder

    def embed(self, queries: Sequence[str]) -> np.ndarray:
        """Encode queries with this classifier's own body (L2-normalised rows).

        Raises:
            InputError: A query is not a non-empty string.
            ModelLoadError: The body cannot be loaded, or its dimension differs from
                the head's.
        """
        texts = _check_queries(queries)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = np.asarray(self._get_embedder().embed(texts), dtype=np.float32)
        if vectors.shape[1] != self.dimension:
            msg = (
                f"the encoder {self.encoder!r} produces {vectors.shape[1]}-dimensional vectors "
                f"but the direction head expects {self.dimension}; load the head that was "
                "trained over this encoder"
            )
            raise ModelLoadError(msg)
        return vectors

    def _can_reuse(self, vector: np.ndarray) -> bool:
        if vector.ndim != 1 or vector.shape[0] != self.dimension:
            return False
        if self.reuse_embedding is not None:
            return bool(self.reuse_embedding)
        return self.frozen_default_encoder

    # ---------------------------------------------------------------- prediction

    def proba_from_embeddings(
        self, embeddings: Any, texts: Sequence[str] | None = None
    ) -> np.ndarray:
        """Return class probabilities (columns in :data:`LABELS` order) for embeddings.

        Rows are L2-normalised first, as in training.

        Args:
            embeddings: Shape ``(n, dimension)``.
            texts: The n queries; needed when the head also reads word n-grams
                (``ngram_buckets > 0``).

        Raises:
            InputError: ``embeddings`` is not of shape ``(n, dimension)``, or texts are
                missing for an n-gram head.
        """
        x = np.asarray(embeddings, dtype=np.float32)
        if x.ndim == 1:
            x = x[None, :]
        if x.ndim != 2 or x.shape[1] != self.dimension:
            msg = f"embeddings have shape {x.shape}; expected (n, {self.dimension})"
            raise InputError(msg, argument="embeddings", value=x.shape)
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        x = x / norms
        if self.ngram_buckets:
            if texts is None or len(texts) != x.shape[0]:
                msg = "this head also reads word n-grams; pass the queries as texts=[...]"
                raise InputError(msg, argument="texts", value=texts)
            x = np.concatenate([x, ngram_features(texts, self.ngram_buckets)], axis=1)
        return _softmax(x @ self.weights.T + self.bias)

    def _proba_one(self, vector: np.ndarray, text: str) -> list[float] | None:
        """Fast path for one query: the numbers of :meth:`proba_from_embeddings`.

        Returns ``None`` when the vector is not finite (the caller then encodes).
        """
        x = vector if vector.dtype == np.float32 else vector.astype(np.float32)
        norm = math.sqrt(float(np.dot(x, x)))
        if not math.isfinite(norm):
            return None
        raw = (self._w_embedding @ x).tolist()
        scale = 1.0 / norm if norm else 1.0
        logits = [r * scale + b for r, b in zip(raw, self._bias_list)]
        if self.ngram_buckets:
            tokens = ["<s>", *_TOKEN.findall(text.lower()), "</s>"]
            grams = tokens[1:-1] + [f"{a} {b}" for a, b in itertools.pairwise(tokens)]
            rows = {zlib.crc32(g.encode("utf-8")) % self.ngram_buckets for g in grams}
            weight = 1.0 / math.sqrt(len(rows))
            table = self._w_grams_list
            for row in rows:
                r = table[row]
                logits[0] += r[0] * weight
                logits[1] += r[1] * weight
                logits[2] += r[2] * weight
        top = max(logits)
        exps = [math.exp(v - top) for v in logits]
        total = sum(exps)
        return [e / total for e in exps]

    def _decide(self, probs: Sequence[float]) -> tuple[Direction, str]:
        order = sorted(range(len(LABELS)), key=lambda i: -probs[i])
        top, second = order[0], order[1]
        gap = float(probs[top] - probs[second])
        label = LABELS[top]
        if label != Direction.BIDIRECTIONAL.value and gap < self.margin:
            return Direction.BIDIRECTIONAL, (
                f"low confidence: {label} {probs[top]:.2f} vs {LABELS[second]} "
                f"{probs[second]:.2f} (margin {gap:.2f} < {self.margin}); "
                "fell back to bidirectional"
            )
        return Direction(label), f"head: {label} {probs[top]:.2f} (margin {gap:.2f})"

    def _prediction(self, probs: Sequence[float], note: str = "") -> DirectionPrediction:
        direction, rationale = self._decide(probs)
        return DirectionPrediction(
            direction=direction,
            confidence=round(float(probs[LABELS.index(direction.value)]), 4),
            scores={label: round(float(p), 4) for label, p in zip(LABELS, probs)},
            method=self.method,
            rationale=rationale + note,
        )

    def predict_direction(
        self, query: str, query_embedding: Any | None = None
    ) -> DirectionPrediction:
        """Predict one query's direction, reusing ``query_embedding`` when allowed.

        Args:
            query: The question.
            query_embedding: The pipeline's vector for ``query``; used when it comes
                from the same frozen encoder (see ``reuse_embedding``), else the
                classifier embeds the query itself.

        Raises:
            InputError: ``query`` is not a non-empty string.
        """
        text, cut = _check_query(query)
        note = f" (query cut to {MAX_QUERY_CHARS} characters)" if cut else ""
        if query_embedding is not None:
            candidate = np.asarray(query_embedding)
            if candidate.ndim == 2 and candidate.shape[0] == 1:
                candidate = candidate[0]
            if self._can_reuse(candidate):
                probs = self._proba_one(candidate, text)
                if probs is not None:
                    return self._prediction(probs, note)
        vector = self.embed([text])[0]
        return self._prediction(self.proba_from_embeddings(vector, [text])[0], note)

    def predict_proba(self, queries: Sequence[str]) -> list[dict[str, float]]:
        """Return each query's probability per label (one batched forward pass).

        Raises:
            InputError: ``queries`` is a bare string, or an item is not a non-empty string.
        """
        texts = _check_queries(queries)
        if not texts:
            return []
        probs = self.proba_from_embeddings(self.embed(texts), texts)
        return [{label: float(p) for label, p in zip(LABELS, row)} for row in probs]

    def predict(self, queries: Sequence[str]) -> list[str]:
        """Return each query's label, with the low-margin fallback to bidirectional.

        Raises:
            InputError: ``queries`` is a bare string, or an item is not a non-empty string.
        """
        texts = _check_queries(queries)
        if not texts:
            return []
        probs = self.proba_from_embeddings(self.embed(texts), texts)
        return [self._decide(row)[0].value for row in probs]

    def predict_batch(self, queries: Sequence[str]) -> list[DirectionPrediction]:
        """Return a full :class:`DirectionPrediction` per query (batched)."""
        texts = _check_queries(queries)
        if not texts:
            return []
        return [
            self._prediction(row) for row in self.proba_from_embeddings(self.embed(texts), texts)
        ]

    # ---------------------------------------------------------------- persistence

    def to_dict(self) -> dict[str, Any]:
        """The JSON-serialisable form (config and weights) that :meth:`save` writes."""
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "labels": list(LABELS),
            "encoder": self.encoder,
            "dimension": self.dimension,
            "ngram_buckets": self.ngram_buckets,
            "margin": self.margin,
            "metadata": self.metadata,
            "bias": [float(f"{v:.7g}") for v in self.bias.tolist()],
            "weights": [[float(f"{v:.7g}") for v in row] for row in self.weights.tolist()],
        }

    def save(self, path: str | Path) -> Path:
        """Write the head as JSON.

        The file is ``path`` if it ends in ``.json``, else ``path/direction_head.json``
        (a fine-tuned body lives in ``path/body``).

        Returns:
            The JSON file written.
        """
        if self.encoder == IN_MEMORY_ENCODER:
            msg = (
                "this classifier's fine-tuned body exists only in memory; train again with "
                "out=FOLDER to save the body with the head"
            )
            raise ConfigError(msg, field="path", value=str(path))
        target = Path(path)
        if target.suffix != ".json":
            target.mkdir(parents=True, exist_ok=True)
            target = target / HEAD_FILE
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
        data = self.to_dict()
        if not self.frozen_default_encoder:
            encoder = Path(self.encoder).resolve()
            try:
                data["encoder"] = str(encoder.relative_to(target.parent.resolve()))
            except ValueError:
                data["encoder"] = str(encoder)
        target.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        return target

    @classmethod
    def load(
        cls,
        path: str | Path | None = None,
        *,
        margin: float | None = None,
        reuse_embedding: bool | None = None,
    ) -> DirectionClassifier:
        """Load a saved classifier (default: the packaged head over the embedded MiniLM).

        Args:
            path: A ``direction_head.json`` file or a folder holding one; ``None`` loads
                ``sarg_integrations/data/direction_head.json``.
            margin: Overrides the saved fallback margin.
            reuse_embedding: See the class docstring.

        Raises:
            ModelLoadError: The file is missing, not JSON, of another format/version,
                or its weights do not match its declared labels and dimension.
        """
        file = Path(path) if path is not None else _resource_path(f"data/{HEAD_FILE}")
        if file.is_dir():
            file = file / HEAD_FILE
        if not file.is_file():
            msg = (
                f"no direction classifier at {str(file)!r}; pass a direction_head.json file or "
                "the --out folder of `sarg train-direction`"
            )
            raise ModelLoadError(msg)
        size = file.stat().st_size
        if size > MAX_HEAD_BYTES:
            msg = (
                f"{str(file)!r} is {size / 1e6:.0f} MB; a direction head is a small JSON file "
                f"(at most {MAX_HEAD_BYTES // 1_000_000} MB); pass the file `sarg "
                "train-direction` wrote"
            )
            raise ModelLoadError(msg)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            msg = f"cannot read the direction classifier {str(file)!r}: {exc}"
            raise ModelLoadError(msg) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            msg = f"{str(file)!r} is not a direction head (expected format {FORMAT!r})"
            raise ModelLoadError(msg)
        if data.get("version") != FORMAT_VERSION:
            msg = (
                f"{str(file)!r} has format version {data.get('version')!r}; this sarg-integrations "
                f"reads version {FORMAT_VERSION}; retrain with `sarg train-direction`"
            )
            raise ModelLoadError(msg)
        if list(data.get("labels", [])) != list(LABELS):
            msg = f"{str(file)!r} has labels {data.get('labels')!r}; expected {list(LABELS)}"
            raise ModelLoadError(msg)
        damaged = f"{str(file)!r} is damaged ({{}}); retrain it with `sarg train-direction`"
        try:
            weights = np.asarray(data.get("weights", []), dtype=np.float32)
            bias = np.asarray(data.get("bias", []), dtype=np.float32)
        except (TypeError, ValueError) as exc:
            reason = f"its weights or bias are not a numeric matrix and vector: {exc}"
            raise ModelLoadError(damaged.format(reason)) from None
        buckets = data.get("ngram_buckets", 0)
        dimension = data.get("dimension")
        if not _whole(dimension, 1) or not _whole(buckets, 0):
            reason = (
                f"dimension={dimension!r} and ngram_buckets={buckets!r} must be whole "
                "numbers >= 1 and >= 0"
            )
            raise ModelLoadError(damaged.format(reason))
        for key, kind, name in (
            ("encoder", str, "a string"),
            ("metadata", dict, "an object"),
            ("margin", (int, float), "a number"),
        ):
            value = data.get(key)
            if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
                raise ModelLoadError(damaged.format(f"{key}={value!r:.60} is not {name}"))
        if weights.ndim != 2 or weights.shape[1] != dimension + buckets:
            msg = (
                f"{str(file)!r} declares dimension {data.get('dimension')!r} + "
                f"{buckets!r} n-gram buckets but its weights "
                f"have shape {weights.shape}; the file is damaged, retrain it"
            )
            raise ModelLoadError(msg)
        encoder = str(data.get("encoder", DEFAULT_ENCODER))
        if encoder != DEFAULT_ENCODER and not Path(encoder).is_absolute():
            encoder = str((file.parent / encoder).resolve())
        saved_margin = data.get("margin", DEFAULT_MARGIN)
        if margin is None and not 0.0 <= saved_margin <= 1.0:
            raise ModelLoadError(damaged.format(f"margin={saved_margin!r} is not in [0, 1]"))
        try:
            return cls(
                weights,
                bias,
                encoder=encoder,
                margin=saved_margin if margin is None else margin,
                reuse_embedding=reuse_embedding,
                ngram_buckets=buckets,
                metadata=data.get("metadata") or {},
            )
        except ModelLoadError as exc:
            msg = f"{str(file)!r}: {exc}"
            raise ModelLoadError(msg) from None


def _whole(value: Any, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _check_margin(margin: Any) -> float:
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0.0 <= margin <= 1.0:
        msg = f"margin={margin!r} must be a number in [0, 1] (0 never falls back to bidirectional)"
        raise ConfigError(msg, field="margin", value=margin)
    return float(margin)


def default_direction_classifier(embedder: Any = None) -> DirectionClassifier:
    """The pipeline's default: the packaged head, sharing the pipeline's embedding if it can.

    Args:
        embedder: The embedder the pipeline was given (``None`` = the embedded MiniLM).
            The query embedding is reused only when it comes from the embedded, frozen
            all-MiniLM-L6-v2; with any other embedder the classifier encodes the query
            with its own MiniLM (another 384-dimensional model must not be mistaken for it).
    """
    from sarg_integrations.embedding import SentenceTransformerEmbedder

    shares = embedder is None or (
        type(embedder) is SentenceTransformerEmbedder and embedder.model_path is None
    )
    return DirectionClassifier.load(reuse_embedding=shares)


# --------------------------------------------------------------------------- training


@dataclass
class TrainingReport:
    """What :func:`train_direction_classifier` did and how well the result does.

    Attributes:
        classifier: The trained classifier (also saved when ``out`` was given).
        accuracy: Accuracy on the evaluation rows (argmax, no margin fallback).
        report: sklearn's per-class report text.
        confusion: Confusion matrix rows/columns in :data:`LABELS` order.
        timings: Seconds per phase (``fine_tune``, ``embed``, ``head``, ``evaluate``).
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
    from sentence_transformers import SentenceTransformer

    try:
        from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.losses import CosineSimilarityLoss

    from sarg_integrations._models import minilm_model_dir

    torch.manual_seed(seed)
    path = base_model or str(minilm_model_dir())
    from sarg_integrations._models import _quiet_transformers

    with _quiet_transformers(), contextlib.redirect_stdout(io.StringIO()):
        model = SentenceTransformer(path, device="cpu")  # a fresh copy, never the shared one
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


def _fit_head(
    x: np.ndarray, y: Sequence[str], c: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.linear_model import LogisticRegression

    missing = [lab for lab in LABELS if lab not in set(y)]
    if missing:
        msg = f"the training data has no example of {missing}; every label needs examples"
        raise InputError(msg, argument="data", value=missing)
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
    fallback = [classifier._decide(p)[0].value for p in probs]
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

    Raises:
        InputError: No training rows, or a label without examples.
        ConfigError: Bad numeric settings, or a fine-tuned body with no ``out`` folder.
    """
    say = log or (lambda _line: None)
    for name, value, low in (
        ("fine_tune_pairs", fine_tune_pairs, 0),
        ("epochs", epochs, 1),
        ("batch_size", batch_size, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            msg = f"{name}={value!r} must be an integer >= {low}"
            raise ConfigError(msg, field=name, value=value)
    if not (isinstance(learning_rate, (int, float)) and learning_rate > 0):
        msg = f"learning_rate={learning_rate!r} must be a positive number, e.g. 2e-5"
        raise ConfigError(msg, field="learning_rate", value=learning_rate)
    _check_margin(margin)
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
    if fine_tune_pairs:
        pairs = _sample_pairs(texts, labels, fine_tune_pairs, rng)
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
        if out is not None:
            body = Path(out) / BODY_DIR
            model.save(str(body))
            encoder = str(body.resolve())
    else:
        pairs = []
        from sarg_integrations._models import load_sentence_transformer

        model = load_sentence_transformer(base_model)
    start = time.perf_counter()
    x_train = _encode(model, texts)
    timings["embed"] = time.perf_counter() - start
    say(f"Embedded {len(texts)} training queries in {timings['embed']:.1f} s")
    start = time.perf_counter()
    if ngram_buckets:
        x_train = np.concatenate([x_train, ngram_features(texts, ngram_buckets)], axis=1)
    weights, bias = _fit_head(x_train, labels, head_c, seed)
    timings["head"] = time.perf_counter() - start
    metadata = {
        "trained_on": len(train),
        "fine_tune_pairs": len(pairs),
        "epochs": epochs if pairs else 0,
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
    if pairs and out is None:
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
        len(pairs),
        saved,
    )


class _InMemoryEmbedder:
    def __init__(self, model: Any) -> None:
        self.model = model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return _encode(self.model, texts)


# --------------------------------------------------------------------------- the teacher

TEACHER_PROMPT = """\
You classify the traversal direction of a question over a cause-effect reasoning graph.
Answer with exactly one word:
- forward: the question starts from a cause and asks for its effects or consequences
  ("What does X lead to?", "What happens if X?").
- backward: the question starts from an effect and asks for its causes or reasons
  ("Why did Y happen?", "What caused Y?").
- bidirectional: the question asks how two things are connected or compares them, or is
  a multi-hop factoid question that links entities through a bridge entity
  ("What position was held by the actress who played Z?").

Question: {query}
Direction:"""

_SYNONYMS = {
    "forward": "forward",
    "forwards": "forward",
    "cause->effect": "forward",
    "cause→effect": "forward",
    "backward": "backward",
    "backwards": "backward",
    "effect->cause": "backward",
    "effect→cause": "backward",
    "bidirectional": "bidirectional",
    "bi-directional": "bidirectional",
    "bidirectionnal": "bidirectional",
    "both": "bidirectional",
    "both directions": "bidirectional",
}
_WORD = re.compile(
    r"bi-?directional|backwards?|forwards?|both directions"
    r"|cause\s*(?:->|→)\s*effect|effect\s*(?:->|→)\s*cause",
    re.I,
)
_KEYED = re.compile(
    r"\b(?:direction|label|answer|class|classification)\b\W{0,4}\s*[:=]?\s*[\"'*`]*\s*("
    + _WORD.pattern
    + r")",
    re.I,
)


def parse_direction_answer(text: Any) -> Direction | None:
    """Read a direction out of an LLM's answer, however messy.

    Accepts JSON (``{"direction": "backward"}``, ``{"label": ...}``, ``"forward"``),
    keyed text (``direction: forward``, ``Answer: **Backward**``), a bare word with
    punctuation (``Backward.``) or a sentence that names exactly one direction.
    ``<think>…</think>`` blocks are ignored. Returns ``None`` when no single direction
    can be read.

    Example:
        >>> [parse_direction_answer(a).value for a in
        ...  ["Backward.", "direction: forward", '{"direction": "bidirectional"}']]
        ['backward', 'forward', 'bidirectional']
    """
    if text is None:
        return None
    if isinstance(text, Mapping):
        for key in ("direction", "label", "answer", "class"):
            if key in text:
                return parse_direction_answer(str(text[key]))
        return None
    s = re.sub(r"<(think|thinking|reasoning)>.*?</\1>", " ", str(text), flags=re.S | re.I).strip()
    if not s:
        return None
    fenced = re.search(r"```(?:json)?\s*(.*?)```", s, flags=re.S)
    candidate = fenced.group(1) if fenced else s
    brace = re.search(r"\{.*\}", candidate, flags=re.S)
    for blob in (candidate.strip(), brace.group(0) if brace else None):
        if not blob:
            continue
        try:
            value = json.loads(blob)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, (Mapping, str)):
            found = parse_direction_answer(value) if isinstance(value, Mapping) else _norm(value)
            if found is not None:
                return found
    keyed = _KEYED.search(s)
    if keyed:
        return _norm(keyed.group(1))
    first_line = s.lstrip(" \t\n*`'\"#>-").splitlines()[0]
    head = _WORD.match(first_line)
    if head and len({_norm(m.group(0)) for m in _WORD.finditer(first_line)}) == 1:
        return _norm(head.group(0))
    found = {_norm(m.group(0)) for m in _WORD.finditer(s)}
    found.discard(None)
    if len(found) == 1:
        return found.pop()
    return None


def _norm(word: str) -> Direction | None:
    key = (
        re.sub(r"\s+", " ", word.strip().strip(".!*`'\"").lower())
        .replace(" ->", "->")
        .replace("-> ", "->")
    )
    key = key.replace(" →", "→").replace("→ ", "→")
    label = _SYNONYMS.get(key)
    return Direction(label) if label else None


def _run_sync(coro: Any) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = asyncio.run(coro)
        except BaseException as exc:
            result["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


class LLMDirectionTeacher(BaseDirectionClassifier):
    """The paper's teacher: asks an LLM for each query's direction.

    Args:
        llm: A LangChain chat model / LLM, a LlamaIndex ``LLM``, a callable
            ``str -> str`` (sync or async) or a completion model.
        prompt: The prompt with a ``{query}`` slot (default :data:`TEACHER_PROMPT`).
        max_concurrency: Calls in flight for batch prediction.
        default: The direction given when the answer names no single direction.

    Example:
        >>> teacher = LLMDirectionTeacher(lambda prompt: "Direction: Backward.")
        >>> teacher.predict(["Why did the bridge fail?"])
        ['backward']
    """

    method = "llm-teacher"

    def __init__(
        self,
        llm: Any,
        *,
        prompt: str = "",
        max_concurrency: int = 4,
        default: Direction | str = Direction.BIDIRECTIONAL,
    ) -> None:
        from sarg_integrations.llm.models import as_completion_model

        prompt = prompt or TEACHER_PROMPT
        if "{query}" not in prompt:
            msg = "prompt must contain a {query} slot where the question goes"
            raise ConfigError(msg, field="prompt", value=prompt[:80])
        if (
            isinstance(max_concurrency, bool)
            or not isinstance(max_concurrency, int)
            or max_concurrency < 1
        ):
            msg = f"max_concurrency={max_concurrency!r} must be an integer >= 1"
            raise ConfigError(msg, field="max_concurrency", value=max_concurrency)
        self.model = as_completion_model(llm, structured_output=False, max_workers=max_concurrency)
        self.prompt = prompt
        self.max_concurrency = max_concurrency
        self.default = Direction.parse(default)

    async def _ask(self, query: str, semaphore: asyncio.Semaphore) -> DirectionPrediction:
        from sarg_integrations.llm.models import CompletionRequest

        request = CompletionRequest(messages=(("user", self.prompt.replace("{query}", query)),))
        async with semaphore:
            completion = await self.model.acomplete(request)
        answer = completion.data if completion.data is not None else completion.text
        direction = parse_direction_answer(answer)
        raw = str(answer)[:120]
        if direction is None:
            return DirectionPrediction(
                direction=self.default,
                confidence=0.0,
                scores={d.value: 0.0 for d in Direction},
                method=self.method,
                rationale=f"unparseable teacher answer {raw!r}; default {self.default.value}",
            )
        return DirectionPrediction(
            direction=direction,
            confidence=1.0,
            scores={d.value: float(d is direction) for d in Direction},
            method=self.method,
            rationale=f"teacher answered {raw!r}",
        )

    async def apredict_batch(self, queries: Sequence[str]) -> list[DirectionPrediction]:
        """Ask the LLM about every query, ``max_concurrency`` at a time."""
        texts = _check_queries(queries)
        semaphore = asyncio.Semaphore(self.max_concurrency)
        return list(await asyncio.gather(*(self._ask(q, semaphore) for q in texts)))

    def predict_batch(self, queries: Sequence[str]) -> list[DirectionPrediction]:
        """Synchronous :meth:`apredict_batch`."""
        return _run_sync(self.apredict_batch(queries))

    def predict_direction(
        self, query: str, query_embedding: Any | None = None
    ) -> DirectionPrediction:
        """Ask the LLM for one query's direction (the embedding is ignored)."""
        text, _ = _check_query(query)
        return self.predict_batch([text])[0]

    def predict(self, queries: Sequence[str]) -> list[str]:
        """Return each query's label (concurrent calls)."""
        return [p.direction.value for p in self.predict_batch(queries)]

    def predict_proba(self, queries: Sequence[str]) -> list[dict[str, float]]:
        """Return one-hot probabilities from the teacher's answers."""
        return [dict(p.scores) for p in self.predict_batch(queries)]


def read_queries(path: str | Path) -> list[str]:
    """Read queries from a ``.txt``, ``.jsonl`` or ``.json`` file.

    A ``.txt`` file holds one query per line; JSON items are strings or objects with
    ``query``, ``question`` or ``question_text``.

    Raises:
        InputError: The file is missing, unreadable or holds no query.
    """
    file = Path(path)
    if not file.is_file():
        msg = (
            f"--queries {str(file)!r} does not exist; pass a .txt (one query per line) "
            "or .jsonl file"
        )
        raise InputError(msg, argument="queries", value=str(file))
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"cannot read --queries {str(file)!r}: {exc}"
        raise InputError(msg, argument="queries", value=str(file)) from None
    queries: list[str] = []
    if file.suffix.lower() in (".jsonl", ".json"):
        lines = text.splitlines()
        if file.suffix.lower() == ".json":
            try:
                items = json.loads(text)
            except json.JSONDecodeError as exc:
                msg = f"{file}: not valid JSON ({exc.msg})"
                raise InputError(msg, argument="queries", value=str(file)) from None
            lines = [json.dumps(i) for i in (items if isinstance(items, list) else [items])]
        for number, item in _json_lines(lines, file, "queries"):
            query = (
                item
                if isinstance(item, str)
                else next(
                    (
                        item.get(k)
                        for k in ("query", "question", "question_text")
                        if isinstance(item, dict) and isinstance(item.get(k), str)
                    ),
                    None,
                )
            )
            if not isinstance(query, str) or not query.strip():
                msg = f"{file}:{number}: no 'query', 'question' or 'question_text' string"
                raise InputError(msg, argument="queries", value=str(file))
            queries.append(query.strip())
    else:
        queries = [line.strip() for line in text.splitlines() if line.strip()]
    if not queries:
        msg = f"--queries {str(file)!r} holds no query"
        raise InputError(msg, argument="queries", value=str(file))
    return queries


def distill_direction(
    teacher: BaseDirectionClassifier | Any,
    queries: Sequence[str],
    out: str | Path,
    *,
    seed: int = 13,
) -> dict[str, Any]:
    """Label ``queries`` with the teacher and write training rows to ``out`` (JSONL).

    Rows get a stratified 80/10/10 ``split``, so the file feeds
    ``sarg train-direction --data OUT`` directly. Answers the teacher's LLM left
    unparseable are left out and counted.

    Args:
        teacher: An :class:`LLMDirectionTeacher` or an LLM to wrap in one.
        queries: The queries to label.
        out: The JSONL file to write.
        seed: Seed of the split assignment.

    Returns:
        Counts: ``labeled``, ``unparseable``, and per label.
    """
    if not isinstance(teacher, LLMDirectionTeacher):
        teacher = LLMDirectionTeacher(teacher)
    texts = _check_queries(queries)
    predictions = teacher.predict_batch(texts)
    rows = []
    skipped = 0
    identity = getattr(teacher.model, "identity", "llm")
    for query, p in zip(texts, predictions):
        if p.confidence == 0.0 and p.rationale.startswith("unparseable"):
            skipped += 1
            continue
        rows.append({"query": query, "label": p.direction.value, "source": f"teacher:{identity}"})
    rng = random.Random(seed)
    for label in LABELS:
        group = [r for r in rows if r["label"] == label]
        rng.shuffle(group)
        n = len(group)
        n_eval = n // 10 if n >= 10 else 0
        for i, row in enumerate(group):
            row["split"] = "test" if i < n_eval else "validation" if i < 2 * n_eval else "train"
    target = Path(out)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:
        msg = f"cannot write --out {str(target)!r}: {exc}"
        raise InputError(msg, argument="out", value=str(target)) from None
    counts: dict[str, Any] = {"labeled": len(rows), "unparseable": skipped}
    counts.update({label: sum(r["label"] == label for r in rows) for label in LABELS})
    return counts


# --------------------------------------------------------------------------- CLI commands
# ``sarg_integrations.cli`` wires argparse to these; each returns the exit status.


def cli_direction(args: Any) -> int:
    """``sarg direction QUERY [QUERY ...] [--model PATH] [--margin M] [--json]``."""
    import sys

    classifier = DirectionClassifier.load(
        getattr(args, "model", None), margin=getattr(args, "margin", None)
    )
    queries = list(args.queries)
    predictions = classifier.predict_batch(queries)
    if args.json:
        payload = [
            {
                "query": query,
                "label": p.direction.value,
                "probabilities": {label: float(p.scores[label]) for label in LABELS},
            }
            for query, p in zip(queries, predictions)
        ]
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return 0
    for query, p in zip(queries, predictions):
        probs = "  ".join(f"{label} {p.scores[label]:.3f}" for label in LABELS)
        note = " (low margin: fell back)" if "fell back" in p.rationale else ""
        sys.stdout.write(f"{p.direction.value:<13} {probs}{note}  {query}\n")
    return 0


def cli_train_direction(args: Any) -> int:
    """``sarg train-direction [--data FILE] [--base-model PATH] [--out DIR] ...``."""
    import sys

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    rows = load_direction_dataset(args.data)
    start = time.perf_counter()
    report = train_direction_classifier(
        rows,
        base_model=args.base_model,
        fine_tune_pairs=args.pairs,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        ngram_buckets=args.ngram_buckets,
        margin=args.margin,
        max_train=args.max_train,
        eval_split=args.eval_split,
        out=args.out,
        log=say,
    )
    total = time.perf_counter() - start
    body = "fine-tuned body" if report.n_pairs else "frozen body"
    say(f"Trained on {report.n_train} queries ({body}, {report.n_pairs} pairs) in {total:.1f} s")
    say("Timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in report.timings.items()))
    if report.accuracy is None:
        say(f"No rows of split {args.eval_split!r} to evaluate on.")
    else:
        say(
            f"Accuracy on the {args.eval_split} split ({report.n_eval} queries): "
            f"{report.accuracy:.4f}"
        )
        say(report.report.rstrip())
        say(
            "Confusion (rows gold, columns predicted; "
            + ", ".join(LABELS)
            + "): "
            + str(report.confusion)
        )
    if report.saved_to is not None:
        say(
            f"Saved to {report.saved_to}; use it with `sarg direction --model {args.out} ...` "
            f"or DirectionClassifier.load({str(args.out)!r})"
        )
    return 0


def cli_distill_direction(args: Any) -> int:
    """``sarg distill-direction --llm SPEC --queries FILE --out FILE``."""
    import sys

    from sarg_integrations.llm import specs

    queries = read_queries(args.queries)
    teacher = LLMDirectionTeacher(
        specs.resolve_llm_spec(args.llm), max_concurrency=args.max_concurrency or 4
    )
    start = time.perf_counter()
    counts = distill_direction(teacher, queries, args.out)
    sys.stdout.write(
        f"Labeled {counts['labeled']} of {len(queries)} queries with {args.llm} in "
        f"{time.perf_counter() - start:.1f} s: "
        + ", ".join(f"{label} {counts[label]}" for label in LABELS)
        + f"; {counts['unparseable']} unparseable answer(s) left out.\n"
        f"Wrote {args.out}; train the student with: "
        f"sarg train-direction --data {args.out} --out DIR\n"
    )
    return 0
