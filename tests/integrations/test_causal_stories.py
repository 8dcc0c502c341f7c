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
    # "The power cut shut down the cooling systems" is read as "power cut --cut shut down-->
    # systems", which shares one word with the next document's "failure of cooling systems":
    # the chain breaks there, and "Its milk comes from farms" becomes a chain of its own.
    "dairy": "the tagger misreads the middle link; the chain breaks and a distractor enters",
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
