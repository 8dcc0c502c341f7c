"""Train the evidence judge that ships in ``sarg_integrations/data/judge/``.

The training stories are the team's (``benchmarks/data/causal_stories.jsonl`` and the
demo corpus's questions) and the helper-written sets ``a``-``zh`` and ``zm``-``zz`` of
``benchmarks/data/causal_stories_untuned.jsonl`` (``a``-``n`` until the thirty-second
session, ``a``-``s`` until the thirty-seventh, ``a``-``zd`` until the thirty-eighth). Sets
``zi``-``zl`` and ``zza`` onward are never read here: they are the judge's held-out check
(``bench_causal_stories.py``). The epoch is picked on a 10% story-level held-out share of
the training stories.

Usage::

    python benchmarks/train_shipped_judge.py   # about 34 min on 2 cores, 2,688 steps
    python benchmarks/train_shipped_judge.py --out /tmp/j --max-steps 20   # a smoke run
    python benchmarks/train_shipped_judge.py --out /tmp/j --sets a,b,c --seed 1
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sarg_integrations.judge.model import DEFAULT_JUDGE_DIR
from sarg_integrations.judge.training import JudgeStory, train_judge

HERE = Path(__file__).resolve().parent
TRAINING_SETS = (
    *"abcdefghijklmnopqrstuvwxyz",
    *(f"z{c}" for c in "abcdefgh"),
    *(f"z{c}" for c in "mnopqrstuvwxyz"),
)


def training_stories(sets: tuple[str, ...] = TRAINING_SETS) -> list[JudgeStory]:
    """The team's stories and the helper sets ``sets``, as judge training stories."""
    sys.path.insert(0, str(HERE))
    from bench_causal_stories import load_stories

    stories = load_stories() + [
        s
        for s in load_stories(HERE / "data" / "causal_stories_untuned.jsonl", demo=False)
        if s["set"] in sets
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
    parser.add_argument(
        "--sets", default=",".join(TRAINING_SETS), help="helper sets to train on, comma-separated"
    )
    parser.add_argument("--seed", type=int, default=0, help="shuffling, held-out share, init")
    args = parser.parse_args(argv)
    sets = tuple(args.sets.split(","))
    stories = training_stories(sets)
    info = {
        "command": "python benchmarks/train_shipped_judge.py",
        "data": {
            "benchmarks/data/causal_stories.jsonl + the demo corpus's questions": (
                "the team's causal stories (this project's license)"
            ),
            "benchmarks/data/causal_stories_untuned.jsonl sets "
            + ",".join(sets): "helper-written causal stories (this project's license)",
        },
        "held_out_sets": (
            "zi-zl and zza onward (benchmarks/data/causal_stories_untuned.jsonl)"
            if sets == TRAINING_SETS
            else "the sets not named above"
        ),
    }
    report = train_judge(
        stories,
        args.out,
        epochs=args.epochs,
        max_steps=args.max_steps,
        seed=args.seed,
        log=print,
        info=info,
    )
    print(json.dumps({k: v for k, v in vars(report).items() if k != "history"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
