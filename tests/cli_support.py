"""The CLI tests' shared fixture (a module: a second conftest.py shadows tests/conftest.py)."""

from __future__ import annotations

import pytest
from fakes import HashingEmbedder, PatternExtractor, QueryWords

from sarg_integrations import cli
from sarg_integrations.config import SARGConfig
from sarg_integrations.direction import CueWordDirectionClassifier
from sarg_integrations.pipeline import SARGPipeline


@pytest.fixture
def fake_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``sarg run`` build its pipeline from the fakes (no models)."""

    def fake_build(config: SARGConfig) -> SARGPipeline:
        return SARGPipeline(
            config,
            extractor=PatternExtractor(lowercase=True),
            embedder=HashingEmbedder(dim=512),
            keyphrase_extractor=QueryWords(),
            direction_classifier=CueWordDirectionClassifier(),
        )

    monkeypatch.setattr(cli.run, "build_pipeline", fake_build)
