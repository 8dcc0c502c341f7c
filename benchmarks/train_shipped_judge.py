"""Train the evidence judge that ships in ``sarg_integrations/data/judge/``.

The training stories are the team's (``benchmarks/data/causal_stories.jsonl`` and the
demo corpus's questions) and the helper-written sets ``a``-``s`` of
``benchmarks/data/causal_stories_untuned.jsonl`` (``a``-``n`` until the thirty-second
session). Set ``t`` onward is never read here: those sets are the judge's held-out check
(``bench_causal_stories.py``). The epoch is picked on a 10% story-level held-out share of
the training stories.

Usage::

    python benchmarks/train_shipped_judge.py   # about 8 min on 2 cores
    python benchmarks/train_shipped_judge.py --out /tmp/j --max-steps 20   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sarg_integrations.judge.model import DEFAULT_JUDGE_DIR
from sarg_integrations.judge.training import JudgeStory, train_judge

HERE = Path(__file__).resolve().parent
TRAINING_SETS = tuple("abcdefghijklmnopqrs")


def training_stories() -> list[JudgeStory]:
    """The team's stories and the helper sets a-s, as judge training stories."""
    sys.path.insert(0, str(HERE))
    from bench_causal_stories import load_stories

    stories = load_stories() + [
        s
        for s in load_stories(HERE / "data" / "causal_stories_untuned.jsonl", demo=False)
        if s["set"] in TRAINING_SETS
    ]
    return [
        JudgeStory(
            s["question"], {d.id: d.text for d in s["documents"]}, frozenset(s["chain"]), s["id"]
        )
        for s in stories
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_JUDGE_DIR)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=None)
    args = parser.parse_args(argv)
    stories = training_stories()
    info = {
        "command": "python benchmarks/train_shipped_judge.py",
        "data": {
            "benchmarks/data/causal_stories.jsonl + the demo corpus's questions": (
                "the team's causal stories (this project's license)"
            ),
            "benchmarks/data/causal_stories_untuned.jsonl sets "
            + ",".join(TRAINING_SETS): "helper-written causal stories (this project's license)",
        },
        "held_out_sets": "t onward (benchmarks/data/causal_stories_untuned.jsonl)",
    }
    report = train_judge(
        stories, args.out, epochs=args.epochs, max_steps=args.max_steps, log=print, info=info
    )
    print(json.dumps({k: v for k, v in vars(report).items() if k != "history"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
