"""Train the span tagger that ships in ``sarg_integrations/data/tagger/``.

The training files (``shared/data/causal``, README §2) are train splits only; the dev and
test rows the README and ``bench_extraction.py`` report are never read here. Model
selection (best epoch, span threshold) uses a 10% document-level held-out share of these
training files.

Usage::

    python benchmarks/train_shipped_tagger.py                       # ~30-40 min, 2 cores
    python benchmarks/train_shipped_tagger.py --out /tmp/t --max-steps 20   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from sarg_integrations.extraction.tagger_data import read_training_files
from sarg_integrations.extraction.tagger_training import balance_negatives, train_tagger

TRAIN_FILES = {
    "cnc_v2_train_subtask2.csv": "Causal News Corpus v2 train (CC0 1.0)",
    "unicausal_because_train.csv": "BECAUSE 2.0 public part, UniCausal train split (BECAUSE license)",
    "unicausal_altlex_train.csv": "AltLex, UniCausal train split (research)",
    "unicausal_semeval2010t8_train.csv": "SemEval-2010 Task 8 train, UniCausal (research use)",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(os.environ.get("SARG_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    parser.add_argument("--data-dir", type=Path, default=root / "causal")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "sarg_integrations" / "data" / "tagger")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--negatives-ratio", type=float, default=0.6)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--frozen-layers", type=int, default=2)
    args = parser.parse_args(argv)
    files = [args.data_dir / name for name in TRAIN_FILES]
    sentences = balance_negatives(read_training_files(files), args.negatives_ratio)
    info = {
        "data": TRAIN_FILES,
        "negatives_ratio": args.negatives_ratio,
        "command": "python benchmarks/train_shipped_tagger.py " + " ".join(argv or sys.argv[1:]),
    }
    report = train_tagger(
        sentences,
        args.out,
        epochs=args.epochs,
        rank=args.rank,
        learning_rate=args.lr,
        batch_size=args.batch_size,
        max_steps=args.max_steps,
        frozen_layers=args.frozen_layers,
        info=info,
        log=lambda m: print(m, flush=True),
    )
    print(json.dumps(report.__dict__, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
