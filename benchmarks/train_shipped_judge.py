"""Train the evidence judges that ship in ``sarg_integrations/data/judge*/``.

Two judges ship; the default evidence judge is their geometric mean
(``sarg_integrations.judge.default_evidence_judge``):

* ``--reads document`` (``data/judge/``): the question with each document alone, trained
  on the team's stories (``benchmarks/data/causal_stories.jsonl`` and the demo corpus's
  questions) and the helper-written sets ``a``-``zh`` and ``zm``-``zz`` of
  ``benchmarks/data/causal_stories_untuned.jsonl`` (thirty-eighth session; ``a``-``n``
  until the thirty-second session, ``a``-``s`` until the thirty-seventh, ``a``-``zd``
  until the thirty-eighth); 4 epochs.
* ``--reads set`` (``data/judge_set/``, fortieth session): the question with the whole
  retrieved set at once, trained on the team's stories and every helper set up to
  ``zzzr`` (``zzm``-``zzt`` and ``zzzc``-``zzzj`` since the forty-first session, the
  latter written as training data: later consequences and earlier causes, or a rival's
  parallel story, as distractors; ``zzc``, ``zze``-``zzl``, ``zzu``-``zzzb`` and
  ``zzzk``-``zzzr``, the held-out check until then, since the forty-third); 5 epochs.

Sets ``zzzs``-``zzzz`` are never read by the set reader (nor ``zzc`` and ``zze`` onward
by the document reader): they are the judges' held-out check (``bench_causal_stories.py``).
The epoch is picked on a 10% story-level held-out share of the training stories.

Usage::

    python benchmarks/train_shipped_judge.py --reads set       # about 87 min, 2 cores, 2,260 steps
    python benchmarks/train_shipped_judge.py --reads document  # about 34 min, 2,688 steps
    python benchmarks/train_shipped_judge.py --reads set --out /tmp/j --max-steps 20   # a smoke run
    python benchmarks/train_shipped_judge.py --reads set --out /tmp/j --sets a,b,c --seed 1
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sarg_integrations.judge.model import DEFAULT_JUDGE_DIR, DEFAULT_SET_JUDGE_DIR
from sarg_integrations.judge.training import JudgeStory, train_judge

HERE = Path(__file__).resolve().parent
DOCUMENT_JUDGE_SETS = (
    *"abcdefghijklmnopqrstuvwxyz",
    *(f"z{c}" for c in "abcdefgh"),
    *(f"z{c}" for c in "mnopqrstuvwxyz"),
)
SET_JUDGE_SETS = (
    *"abcdefghijklmnopqrstuvwxyz",
    *(f"z{c}" for c in "abcdefghijkl"),
    *(f"z{c}" for c in "mnopqrstuvwxyz"),
    "zza",
    "zzb",
    "zzd",
    *(f"zz{c}" for c in "mnopqrst"),
    *(f"zzz{c}" for c in "cdefghij"),
    # the held-out check until the forty-third session
    "zzc",
    *(f"zz{c}" for c in "efghijkl"),
    *(f"zz{c}" for c in "uvwxyz"),
    "zzza",
    "zzzb",
    *(f"zzz{c}" for c in "klmnopqr"),
)
# what each reading ships as: its folder, helper sets, epochs, and the sets held out
SHIPPED = {
    "document": (DEFAULT_JUDGE_DIR, DOCUMENT_JUDGE_SETS, 4, "zi-zl and zza onward"),
    "set": (DEFAULT_SET_JUDGE_DIR, SET_JUDGE_SETS, 5, "zzzs-zzzz"),
}


def training_stories(sets: tuple[str, ...] = SET_JUDGE_SETS) -> list[JudgeStory]:
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
    parser.add_argument(
        "--out", type=Path, default=None, help="default: the reading's shipped folder"
    )
    parser.add_argument("--epochs", type=int, default=None, help="default: 4 / 5 (document / set)")
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument(
        "--sets", default=None, help="helper sets to train on, comma-separated (default: shipped)"
    )
    parser.add_argument("--seed", type=int, default=0, help="shuffling, held-out share, init")
    parser.add_argument(
        "--reads",
        choices=("document", "set"),
        default="set",
        help="read each document alone with the question, or the whole retrieved set at once",
    )
    args = parser.parse_args(argv)
    shipped_dir, shipped_sets, shipped_epochs, held_out = SHIPPED[args.reads]
    sets = tuple(args.sets.split(",")) if args.sets else shipped_sets
    stories = training_stories(sets)
    info = {
        "command": f"python benchmarks/train_shipped_judge.py --reads {args.reads}",
        "data": {
            "benchmarks/data/causal_stories.jsonl + the demo corpus's questions": (
                "the team's causal stories (this project's license)"
            ),
            "benchmarks/data/causal_stories_untuned.jsonl sets "
            + ",".join(sets): "helper-written causal stories (this project's license)",
        },
        "held_out_sets": (
            f"{held_out} (benchmarks/data/causal_stories_untuned.jsonl)"
            if sets == shipped_sets
            else "the sets not named above"
        ),
    }
    report = train_judge(
        stories,
        args.out or shipped_dir,
        epochs=args.epochs or shipped_epochs,
        max_steps=args.max_steps,
        seed=args.seed,
        reads=args.reads,
        log=print,
        info=info,
    )
    print(json.dumps({k: v for k, v in vars(report).items() if k != "history"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
