"""The default evidence on the team's causal stories, with the real models (slow)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from sarg_integrations import SARGPipeline

pytestmark = pytest.mark.slow

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_causal_stories.py"
_spec = importlib.util.spec_from_file_location("bench_causal_stories", _BENCH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

KNOWN_MISSES = {
    # The storm "knocked out power lines"; the next document starts from "the power cut".
    # One event, named in words that share only "power": no node, no near-miss link
    # joins them, so the storm document stays out (the profile's chain, which used to
    # bring a distractor in, leaves since anchoring focuses on the named event).
    "dairy": "'power lines' / 'power cut' are not linked: the first chain document stays out",
    # Written on 2026-12-02 as a check of stories nobody had tuned on, and run once: both
    # miss their first document. The fire's "main plant of chip supplier Renta" and the
    # next document's "loss of Naka plant" share one word; "coral reefs" and "bleached
    # reefs" too (and the fish document is in by relevance, not as a link). A looser
    # one-word link would let the dairy story's profile in through "milk".
    "chips": "'main plant of chip supplier' / 'loss of Naka plant' are not linked",
    "coral": "'coral reefs' / 'bleached reefs' are not linked",
}


@pytest.fixture(scope="module")
def pipeline() -> SARGPipeline:
    return SARGPipeline()


@pytest.mark.parametrize(
    "story",
    [
        pytest.param(s, id=s["id"], marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[s["id"]]))
        if s["id"] in KNOWN_MISSES
        else pytest.param(s, id=s["id"])
        for s in bench.load_stories()
    ],
)
def test_default_evidence_holds_the_chain_documents_and_no_distractor(pipeline, story) -> None:
    out = bench.check(pipeline, story)
    assert not out["missing"] and not out["distractors"], out
    assert not out["fallback"]


@pytest.mark.parametrize("story", [pytest.param(s, id=s["id"]) for s in bench.load_stories()])
def test_no_distractor_enters_the_default_evidence(pipeline, story) -> None:
    assert not bench.check(pipeline, story)["distractors"]
