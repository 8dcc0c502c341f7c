"""The distilled direction classifier (paper §3.4, Appendix B): the shipped student.

:class:`DirectionClassifier` is a logistic-regression head over sentence embeddings (by
default the frozen, embedded all-MiniLM-L6-v2). Its weights are plain JSON
(``sarg_integrations/data/direction_head.json``); nothing is pickled. Inside
:class:`~sarg_integrations.SARGPipeline` it reuses the query embedding the pipeline
already computed, so a prediction costs one small matrix product.

Example:
    >>> clf = DirectionClassifier.load()  # doctest: +SKIP
    >>> clf.predict(["Why did technology stocks sell off?"])  # doctest: +SKIP
    ['backward']
"""

from __future__ import annotations

import itertools
import json
import math
import re
import threading
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sarg_integrations._checks import is_whole
from sarg_integrations.direction.base import (
    LABELS,
    MAX_QUERY_CHARS,
    BaseDirectionClassifier,
    CueWordDirectionClassifier,
    check_queries,
    check_query,
)
from sarg_integrations.direction.data import resource_path
from sarg_integrations.errors import ConfigError, InputError, ModelLoadError
from sarg_integrations.schema import Direction, DirectionPrediction

__all__ = [
    "DEFAULT_ENCODER",
    "DEFAULT_MARGIN",
    "MAX_HEAD_BYTES",
    "DirectionClassifier",
    "check_margin",
    "default_direction_classifier",
    "ngram_features",
]

FORMAT = "sarg-direction-head"
FORMAT_VERSION = 1
DEFAULT_ENCODER = "embedded:all-MiniLM-L6-v2"
"""Encoder identity of the embedded all-MiniLM-L6-v2 (the pipeline's default encoder)."""
DEFAULT_DIMENSION = 384
MAX_HEAD_BYTES = 64_000_000
"""A direction head file larger than this is refused before it is read."""
DEFAULT_MARGIN = 0.15
"""Top-1 minus top-2 probability below which a prediction falls back to bidirectional."""
_CUES = CueWordDirectionClassifier()
IN_MEMORY_ENCODER = "memory:fine-tuned"
"""Encoder identity of a fine-tuned body that was not saved (it cannot be saved later)."""
HEAD_FILE = "direction_head.json"
BODY_DIR = "body"


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
    A bidirectional prediction that unsure goes to the runner-up direction when the
    question's cue words (:class:`CueWordDirectionClassifier`) ask that way: "*Why* was
    the Pirn ski resort closed in January?" (bidirectional 0.50, backward 0.45).

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
        self.margin = check_margin(margin)
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
        texts = check_queries(queries, normalize=True)
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

    def _decide(self, probs: Sequence[float], text: str | None = None) -> tuple[Direction, str]:
        order = sorted(range(len(LABELS)), key=lambda i: -probs[i])
        top, second = order[0], order[1]
        gap = float(probs[top] - probs[second])
        label = LABELS[top]
        runner_up = LABELS[second]
        if (
            label == Direction.BIDIRECTIONAL.value
            and gap < self.margin
            and text is not None
            and runner_up != label
            and _CUES.predict_direction(text).direction.value == runner_up
        ):
            # Unsure between "about X" and a direction the question's own wording asks
            # ("*Why* was the Pirn ski resort closed in January?": bidirectional 0.50,
            # backward 0.45): the wording decides.
            return Direction(runner_up), (
                f"low confidence: {label} {probs[top]:.2f} vs {runner_up} "
                f"{probs[second]:.2f} (margin {gap:.2f} < {self.margin}); "
                f"the question's cue words ask {runner_up}"
            )
        if label != Direction.BIDIRECTIONAL.value and gap < self.margin:
            return Direction.BIDIRECTIONAL, (
                f"low confidence: {label} {probs[top]:.2f} vs {LABELS[second]} "
                f"{probs[second]:.2f} (margin {gap:.2f} < {self.margin}); "
                "fell back to bidirectional"
            )
        return Direction(label), f"head: {label} {probs[top]:.2f} (margin {gap:.2f})"

    def _prediction(
        self, probs: Sequence[float], note: str = "", text: str | None = None
    ) -> DirectionPrediction:
        direction, rationale = self._decide(probs, text)
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
        text, cut = check_query(query)
        note = f" (query cut to {MAX_QUERY_CHARS} characters)" if cut else ""
        if query_embedding is not None:
            candidate = np.asarray(query_embedding)
            if candidate.ndim == 2 and candidate.shape[0] == 1:
                candidate = candidate[0]
            if self._can_reuse(candidate):
                probs = self._proba_one(candidate, text)
                if probs is not None:
                    return self._prediction(probs, note, text)
        vector = self.embed([text])[0]
        return self._prediction(self.proba_from_embeddings(vector, [text])[0], note, text)

    def predict_proba(self, queries: Sequence[str]) -> list[dict[str, float]]:
        """Return each query's probability per label (one batched forward pass).

        Raises:
            InputError: ``queries`` is a bare string, or an item is not a non-empty string.
        """
        texts = check_queries(queries, normalize=True)
        if not texts:
            return []
        probs = self.proba_from_embeddings(self.embed(texts), texts)
        return [{label: float(p) for label, p in zip(LABELS, row)} for row in probs]

    def predict(self, queries: Sequence[str]) -> list[str]:
        """Return each query's label, with the low-margin fallback to bidirectional.

        Raises:
            InputError: ``queries`` is a bare string, or an item is not a non-empty string.
        """
        texts = check_queries(queries, normalize=True)
        if not texts:
            return []
        probs = self.proba_from_embeddings(self.embed(texts), texts)
        return [self._decide(row, text)[0].value for row, text in zip(probs, texts)]

    def predict_batch(self, queries: Sequence[str]) -> list[DirectionPrediction]:
        """Return a full :class:`DirectionPrediction` per query (batched)."""
        texts = check_queries(queries, normalize=True)
        if not texts:
            return []
        probs = self.proba_from_embeddings(self.embed(texts), texts)
        return [self._prediction(row, text=text) for row, text in zip(probs, texts)]

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
        from sarg_integrations._atomic import atomic_write_text

        # Atomic: a failed save (full disk) leaves the previous head in place.
        atomic_write_text(target, json.dumps(data, indent=1) + "\n")
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
        file = Path(path) if path is not None else resource_path(f"data/{HEAD_FILE}")
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
        if not is_whole(dimension, 1) or not is_whole(buckets, 0):
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


def check_margin(margin: Any) -> float:
    """Return ``margin`` as a float in [0, 1], or raise a :class:`ConfigError`."""
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
