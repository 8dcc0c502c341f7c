"""``sarg train-extractor``: fine-tune the span tagger on your own cause/effect data."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sarg_integrations.cli.common import isatty, positive_int, unit_interval

__all__ = ["add_commands"]


def add_commands(sub: Any) -> None:
    """Add ``train-extractor`` to the ``sarg`` subparsers ``sub``."""
    train = sub.add_parser(
        "train-extractor",
        help="train the learned span tagger on your own cause/effect data (needs [train])",
        description=(
            "Fine-tune the span tagger (packaged all-MiniLM-L6-v2 + a LoRA adapter + signal and "
            "argument heads) on CNC/UniCausal CSV files (<ARG0>cause</ARG0> <SIG0>signal</SIG0> "
            '<ARG1>effect</ARG1> markup) or JSON lines ({"text", "pairs": [{"cause", "effect", '
            '"signal"}]}). A held-out share of the data picks the best epoch and the span '
            "threshold; --dev files are scored at the end. Load the result with "
            "SARGPipeline(extractor=TaggerExtractor.load(DIR)) or `sarg run --extractor DIR`. "
            "Needs: pip install 'sarg-integrations[train]'."
        ),
    )
    train.add_argument("--data", required=True, nargs="+", metavar="FILE", help=".csv or .jsonl training files")
    train.add_argument("--out", required=True, metavar="DIR", help="the folder to write the tagger into")
    train.add_argument("--dev", nargs="+", metavar="FILE", help="files scored after training (never trained on)")
    train.add_argument("--epochs", type=positive_int, default=4, metavar="N", help="epochs (default 4)")
    train.add_argument("--batch-size", type=positive_int, default=16, metavar="N", help="default 16")
    train.add_argument("--learning-rate", type=float, default=6e-4, metavar="LR", help="default 6e-4")
    train.add_argument("--rank", type=positive_int, default=16, metavar="R", help="LoRA rank (default 16)")
    train.add_argument(
        "--held-out", type=unit_interval, default=0.1, metavar="F",
        help="share of the documents kept out for model selection (default 0.1)",
    )
    train.add_argument(
        "--negatives-ratio", type=float, default=None, metavar="X",
        help="keep at most X sentences without a relation per sentence with one, per corpus",
    )
    train.add_argument("--max-steps", type=positive_int, metavar="N", help="stop after N steps")
    train.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.set_defaults(
        handler=_cmd_train_extractor,
        paths=(("data", "--data", "in-file"), ("out", "--out", "out-any")),
    )


def _cmd_train_extractor(args: argparse.Namespace) -> int:
    from sarg_integrations.cli.common import quiet_models
    from sarg_integrations.extraction.tagger_data import read_training_files
    from sarg_integrations.extraction.tagger_training import (
        balance_negatives,
        evaluate_tagger,
        train_tagger,
    )

    sentences = read_training_files(args.data)
    dev = read_training_files(args.dev) if args.dev else []
    if args.negatives_ratio is not None:
        sentences = balance_negatives(sentences, args.negatives_ratio, args.seed)
    print(
        f"training on {len(sentences)} sentences "
        f"({sum(len(s.pairs) for s in sentences)} cause/effect pairs) from {len(args.data)} file(s)",
        file=sys.stderr,
    )
    with quiet_models():
        report = train_tagger(
            sentences,
            args.out,
            held_out_fraction=args.held_out,
            epochs=args.epochs,
            batch_size=args.batch_size,
            learning_rate=args.learning_rate,
            rank=args.rank,
            max_steps=args.max_steps,
            seed=args.seed,
            progress=not args.no_progress and isatty(sys.stderr),
            info={"data": [str(p) for p in args.data], "command": "sarg train-extractor"},
            log=lambda m: print(m, file=sys.stderr),
        )
        figures: dict[str, Any] = {"held_out": report.held_out_scores}
        if dev:
            from sarg_integrations.extraction.tagger_model import load_network

            network, tokenizer, config = load_network(__import__("pathlib").Path(args.out))
            tally = evaluate_tagger(network, tokenizer, config, dev)
            figures["dev"] = {
                "sentences": len(dev),
                "strict_f1": round(tally.strict_f1, 4),
                "relaxed_precision": round(tally.relaxed_precision, 4),
                "relaxed_recall": round(tally.relaxed_recall, 4),
            }
    print(json.dumps({"out": str(args.out), "steps": report.steps, "seconds": report.seconds,
                      "best_epoch": report.best_epoch, "threshold": report.threshold, **figures}, indent=1))
    return 0
