"""Length-aware batching of the sentence-transformers embedder (no model is loaded)."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from sarg_integrations.embedding import SentenceTransformerEmbedder, length_batches
from sarg_integrations.errors import InputError


def test_length_batches_keeps_long_texts_apart_and_short_ones_together():
    # Two paragraphs of ~1,000 characters fill a 2,000-character batch; the three
    # short phrases share one.
    assert length_batches([900, 20, 1000, 25, 30], max_texts=64, max_chars=2000) == [
        [2, 0],
        [4, 3, 1],
    ]


def test_length_batches_counts_the_longest_text_only_up_to_the_encoder_limit():
    # Past ~2,048 characters the encoder truncates, so a 50,000-character text pads its
    # batch no more than a 2,048-character one.
    assert length_batches([50_000, 2048], max_texts=8, max_chars=4096) == [[0, 1]]
    assert length_batches([50_000, 2048, 2048], max_texts=8, max_chars=4096) == [[0, 1], [2]]


def test_length_batches_brute_force():
    """Every position once; each batch within both limits; batches run longest first."""
    rng = random.Random(7)
    for _ in range(300):
        lengths = [rng.choice([0, 3, 40, 400, 1500, 5000]) for _ in range(rng.randint(0, 30))]
        max_texts = rng.randint(1, 9)
        max_chars = rng.choice([1, 100, 2000, 10_000])
        batches = length_batches(lengths, max_texts=max_texts, max_chars=max_chars)
        assert sorted(itertools.chain.from_iterable(batches)) == list(range(len(lengths)))
        flat = [lengths[i] for i in itertools.chain.from_iterable(batches)]
        assert flat == sorted(flat, reverse=True)
        for batch in batches:
            assert len(batch) <= max_texts
            if len(batch) > 1:
                assert len(batch) * min(lengths[batch[0]], 2048) <= max_chars


class _CountingModel:
    """Stands in for a SentenceTransformer: a text's vector is its length and vowels."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts, **_):
        self.calls.append(list(texts))
        rows = np.array([[len(t), sum(c in "aeiou" for c in t) + 1.0] for t in texts])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _embedder(**kwargs) -> tuple[SentenceTransformerEmbedder, _CountingModel]:
    embedder = SentenceTransformerEmbedder(**kwargs)
    model = _CountingModel()
    embedder._model = model
    return embedder, model


def test_embed_encodes_long_and_short_texts_in_separate_batches_in_input_order():
    texts = ["flood " * 250, "rain", "storm surge " * 100, "dam"]
    embedder, model = _embedder()
    vectors = embedder.embed(texts)
    assert [len(call) for call in model.calls] == [1, 1, 2]
    expected = np.array([[len(t), sum(c in "aeiou" for c in t) + 1.0] for t in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)
    assert vectors.dtype == np.float32


def test_embed_with_batch_chars_none_makes_one_call():
    embedder, model = _embedder(batch_chars=None)
    embedder.embed(["flood " * 150, "rain", "storm surge " * 100])
    assert len(model.calls) == 1


@pytest.mark.parametrize("value", [0, -5, 2.5, "2000"])
def test_batch_chars_must_be_a_positive_integer(value):
    with pytest.raises(InputError, match="batch_chars"):
        SentenceTransformerEmbedder(batch_chars=value)
