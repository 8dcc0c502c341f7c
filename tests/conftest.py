"""Shared fixtures: offline settings, the slow-marker guard, the team's shared data.

The helpers next to this file (``fakes``, ``adapter_support``, ``tasr_support``) are
importable because ``pythonpath = ["tests"]`` is set in ``pyproject.toml``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Models load from packages only; never reach for a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("SARG_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


@pytest.fixture
def shared_data() -> Path:
    """The team's evaluation data; tests needing it skip in a user's clone."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared evaluation data not found at {SHARED_DATA} (only in the team's workspace)")
    return SHARED_DATA


# minilm_model_dir: every other way to the packaged MiniLM (a fine-tuned direction body,
# the tagger's encoder) starts there.
REAL_MODEL_LOADERS = ("load_sentence_transformer", "load_spacy", "minilm_model_dir")


@pytest.fixture(autouse=True)
def _real_models_only_in_slow_tests(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test without ``@pytest.mark.slow`` must not load a real model (MiniLM, spaCy).

    The loaders of :mod:`sarg_integrations._models` fail the test instead (with
    ``pytest.fail``, which no ``except Exception`` in the code under test swallows).
    """
    if request.node.get_closest_marker("slow") is not None:
        return
    from sarg_integrations import _models

    for name in REAL_MODEL_LOADERS:
        if name == "minilm_model_dir" and "fake_minilm" in request.fixturenames:
            continue  # that test unpacks a fake MiniLM package of a few bytes

        def refuse(*args: object, _name: str = name, **kwargs: object) -> None:
            pytest.fail(
                f"{request.node.nodeid} called sarg_integrations._models.{_name} without "
                "@pytest.mark.slow; inject a fake (tests/fakes.py) or mark the test slow",
                pytrace=False,
            )

        monkeypatch.setattr(_models, name, refuse)

    from sarg_integrations.extraction import tagger_model

    def refuse_tagger(*args: object, **kwargs: object) -> None:
        pytest.fail(
            f"{request.node.nodeid} loaded the span tagger's encoder without "
            "@pytest.mark.slow; inject a fake extractor (tests/fakes.py) or mark the test slow",
            pytrace=False,
        )

    monkeypatch.setattr(tagger_model, "load_base_encoder", refuse_tagger)

    # The pipeline's default event reader parses with spaCy; a causal question's fill asks
    # it of every candidate document, so a fast test that injects none gets the fake's
    # rule (a word ending in "-ed" tells an event) instead of a refusal.
    from fakes import PastTenseWords

    from sarg_integrations import links

    fake = PastTenseWords()
    monkeypatch.setattr(
        links.PastTenseEventReader, "tells_event", lambda self, text: fake.tells_event(text)
    )

    # The default evidence judge reads a causal question's documents with the MiniLM; a
    # fast test that injects none gets a judge unsure of every document (0.5: nothing
    # leaves or joins at the default thresholds), so the structure's evidence stands.
    from sarg_integrations.judge import LearnedEvidenceJudge

    monkeypatch.setattr(LearnedEvidenceJudge, "score", lambda self, query, texts: [0.5] * len(texts))


@pytest.fixture
def redis_server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A private ``redis-server`` on a free port (skips with the reason when it cannot start)."""
    from redis_support import RedisUnavailable, start_redis

    try:
        server = start_redis(tmp_path_factory.mktemp("redis"))
    except RedisUnavailable as exc:
        pytest.skip(f"no Redis server for this test: {exc}")
    try:
        yield server
    finally:
        server.kill()
