"""The slow marker is the real boundary: an unmarked test cannot load a real model."""

from __future__ import annotations

import pytest
from _pytest.outcomes import Failed

from sarg_integrations import _models
from sarg_integrations.embedding import SentenceTransformerEmbedder


def test_an_unmarked_test_that_loads_minilm_fails() -> None:
    with pytest.raises(Failed, match="without @pytest.mark.slow"):
        SentenceTransformerEmbedder().embed(["heavy rain"])


def test_an_unmarked_test_that_loads_spacy_fails() -> None:
    with pytest.raises(Failed, match="load_spacy without @pytest.mark.slow"):
        _models.load_spacy()


@pytest.mark.slow
def test_a_slow_test_may_load_the_real_loaders() -> None:
    assert _models.load_spacy.__module__ == "sarg_integrations._models"
    assert _models.load_sentence_transformer.__module__ == "sarg_integrations._models"
