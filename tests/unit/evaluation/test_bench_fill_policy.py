"""The offline replay of the default fill (``benchmarks/bench_fill_policy.py``), on a toy."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fakes import HashingEmbedder

from sarg_integrations.evaluation.datasets import EvalQuestion
from sarg_integrations.schema import SourceDocument

_BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_fill_policy.py"
_spec = importlib.util.spec_from_file_location("bench_fill_policy", _BENCH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

PARAGRAPHS = (
    # The film's page names its director, whose page is about her: a bridge.
    SourceDocument("film", "Big Stone Gap is a comedy film directed by Adriana Trigiani."),
    SourceDocument("director", "Adriana Trigiani is an author based in Greenwich Village."),
    SourceDocument("d1", "A comedy film festival is based in a small town."),
    SourceDocument("d2", "The old gap in the stone wall was closed."),
)


def question(text: str) -> EvalQuestion:
    return EvalQuestion("q", text, "x", paragraphs=PARAGRAPHS, supporting_ids=("film", "director"))


def test_the_replay_follows_the_bridge_except_on_a_comparison():
    bridge = bench.replay(question("Where is the director of the comedy film Big Stone Gap based?"),
                          HashingEmbedder(), 0.5)
    assert set(bridge) == {"flat", "bridges", "before", "default"}
    assert bridge["bridges"] == bridge["before"] == bridge["default"] == 1.0 > bridge["flat"]
    compare = bench.replay(question("Which comedy film is older, Big Stone Gap or Tootsie?"),
                           HashingEmbedder(), 0.5)
    assert compare["default"] == compare["before"] == compare["flat"] < compare["bridges"]


def test_the_replay_follows_the_bridge_on_a_comparison_of_related_things():
    # The compared attribute is the director's: her page is the bridge's far end.
    asked = question("Which comedy film has the director born later, Big Stone Gap or Tootsie?")
    related = bench.replay(asked, HashingEmbedder(), 0.5)
    assert related["default"] == related["bridges"] == 1.0 > related["before"] == related["flat"]
