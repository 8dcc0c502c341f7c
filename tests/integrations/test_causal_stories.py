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
    # Written on 2026-12-02 as checks of stories nobody had tuned on, and run once. The
    # first three (port, school, orchard) were then used to fix the links (port and
    # orchard pass since); the last three (flu, estuary, bank) were written after that
    # fix and run once more: estuary passes, flu and bank fall back.
    # "The cold classrooms forced the school to close" / "the boilers … stopped working":
    # the link is world knowledge (no boiler, no heat), no shared word; the school's
    # profile comes in by relevance to fill the budget.
    "school": "'cold classrooms' / 'boilers stopped working' share no word: two documents stay out",
    # "The flu wave filled the beds …, and waiting times … rose": the extractor reads no
    # relation into the waiting times (a bare "and"), so no node names what is asked.
    "flu": "no triple names the waiting times: the query falls back",
    # "Without that connection, no customer could log in": "that connection" is the
    # previous document's "server's connection to the customer database", an anaphor
    # across documents the graph does not resolve; the one-document chain is not anchored.
    "bank": "'that connection' is not resolved across documents: the query falls back",
    # A fourth set (blackout, billing, locust), run once: locust passes; billing passes since
    # open ends are read in their whole span ("accounts into overdraft" / "overdraft fees").
    # "The plant had to cut its output by half" / "the shortfall in electricity": no word.
    "blackout": "'cut its output' / 'shortfall in electricity' share no word",
    # A fifth set, run once after that change: all three miss, each for want of a shared
    # word or of a relation: "Without the ferry, hotels received fewer visitors" yields no
    # triple; "no local catch" / "banned fishing"; "lacking books" / "textbooks".
    # The rules now read "Without the ferry, …" (ferry -> fewer visitors), but that chain
    # is in a document less relevant than the terminal's profile, so it is not anchored.
    "ferry": "the 'Without the ferry' chain is not anchored: the query falls back",
    "market": "'no local catch' / 'banned fishing' share no word",
    "exams": "'lacking books' / 'the library's textbooks' share no word",
}


@pytest.fixture(scope="module")
def pipeline() -> SARGPipeline:
    return SARGPipeline()


# Where a chain document stays out, the budget's relevance fill can bring a distractor in:
# the most relevant document left is a profile; on the bank's fallback the profile is
# bridged from the update document (both name "Palo Bank").
KNOWN_DISTRACTORS = {
    "school": "the school's profile fills the budget the missing chain documents leave",
    "bank": "on fallback the bank's profile is bridged in from the update document",
    "blackout": "the operator's and the reservoir's profiles fill the budget left",
    "ferry": "the terminal's profile fills the budget left",
    "market": "the market's history fills the budget left",
    "exams": "the exam hall document fills the budget left",
}


def _stories(known: dict[str, str]) -> list:
    """Every story as a test parameter; those in ``known`` are strict expected failures."""
    return [
        pytest.param(s, id=s["id"], marks=pytest.mark.xfail(strict=True, reason=known[s["id"]]))
        if s["id"] in known
        else pytest.param(s, id=s["id"])
        for s in bench.load_stories()
    ]


@pytest.mark.parametrize("story", _stories(KNOWN_MISSES))
def test_default_evidence_holds_the_chain_documents_and_no_distractor(pipeline, story) -> None:
    out = bench.check(pipeline, story)
    assert not out["missing"] and not out["distractors"], out
    assert not out["fallback"]


@pytest.mark.parametrize("story", _stories(KNOWN_DISTRACTORS))
def test_no_distractor_enters_the_default_evidence(pipeline, story) -> None:
    assert not bench.check(pipeline, story)["distractors"]
