"""The ``sarg eval`` command: argparse wiring and its handler.

The harness itself is :mod:`sarg_integrations.evaluation`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from sarg_integrations.cli.common import emit, isatty, positive_int, quiet_models
from sarg_integrations.evaluation.causal_qa import CAUSAL_DATASETS
from sarg_integrations.evaluation.datasets import DATASETS
from sarg_integrations.evaluation.methods import BASE_METHODS, TASR_METHODS

__all__ = ["add_commands", "add_eval_arguments", "cli_eval"]


def add_commands(sub: Any) -> None:
    """Add ``eval`` to the ``sarg`` subparsers ``sub``."""
    evaluate = sub.add_parser(
        "eval",
        help="evaluate SARG against flat RAG on multi-hop QA data, or on causal news (ester, esc)",
        description=(
            "Run Direct, flat RAG, flat top-k, LongContextReorder, CoT-RAG and SARG (plus "
            "ablations and beam/top-K sweeps) on HotpotQA, MuSiQue or 2WikiMultiHopQA; write "
            "per-question records (resumable), a JSON summary, Markdown tables and plots. "
            "--dataset ester / esc: the causal evaluation (answers in chains against dense "
            "top sentences at the same word budget; extractor link recall and precision)."
        ),
    )
    add_eval_arguments(evaluate, positive_int=positive_int)
    evaluate.set_defaults(handler=_cmd_eval)


def _cmd_eval(args: argparse.Namespace) -> int:
    with quiet_models():
        return cli_eval(args)


def add_eval_arguments(
    parser: argparse.ArgumentParser, *, positive_int: Callable[[str], int]
) -> None:
    """Add the ``sarg eval`` options to ``parser``."""
    parser.add_argument(
        "--dataset",
        required=True,
        choices=(*DATASETS, *CAUSAL_DATASETS),
        help="the benchmark (ester, esc: the causal evaluation, see docs/evaluation.md)",
    )
    parser.add_argument(
        "--data",
        metavar="PATH",
        help=(
            "the data file, as downloaded from the dataset's official page (listed in "
            "docs/evaluation.md); default: $SARG_SHARED_DATA/multihop/<file> (ester and "
            "esc: causal_qa/<file or folder>) when that variable is set"
        ),
    )
    parser.add_argument(
        "--limit",
        type=positive_int,
        metavar="N",
        help="the first N questions (esc: the first N documents)",
    )
    parser.add_argument(
        "--offset",
        type=int,
        default=0,
        metavar="N",
        help="skip the first N questions (evaluate on questions a setting was not tuned on)",
    )
    parser.add_argument(
        "--extractor",
        default=None,
        metavar="NAME|DIR",
        help="ester/esc: the triple extractor: 'union' (the default: the learned tagger plus "
        "the rules' cues), 'tagger', 'rules' or a folder written by `sarg train-extractor`",
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="shuffle seed (default 0)")
    parser.add_argument(
        "--shuffle-distractors", action="store_true", help="shuffle each question's paragraph order"
    )
    parser.add_argument(
        "--llm",
        metavar="SPEC",
        help="answer the prompts with a LangChain chat model PROVIDER:MODEL to get EM/F1",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        default="benchmarks/results/eval",
        help="output folder (default %(default)s)",
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=(*BASE_METHODS, *TASR_METHODS),
        metavar="NAME",
        help=(
            f"methods to compare (default all: {', '.join(BASE_METHODS)}; optional: "
            f"{', '.join(TASR_METHODS)})"
        ),
    )
    parser.add_argument(
        "--no-sweeps", action="store_true", help="skip the beam-width / top-K sweeps"
    )
    parser.add_argument(
        "--sweep-limit", type=int, metavar="N", help="run the sweeps on the first N questions only"
    )
    parser.add_argument(
        "--flat-top-k",
        type=positive_int,
        default=5,
        metavar="K",
        help="k of flat top-k (default 5)",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="discard earlier records instead of resuming"
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="compute nothing: tabulate the records already in --out (same settings)",
    )
    parser.add_argument("--no-plots", action="store_true", help="do not write PNG plots")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def cli_eval(args: argparse.Namespace) -> int:
    """Run ``sarg eval``; prints the Markdown tables and the written paths."""
    if args.dataset in CAUSAL_DATASETS:
        return _cli_causal(args)
    from sarg_integrations.evaluation.harness import run_evaluation, skipped_message

    report = run_evaluation(
        args.dataset,
        args.data,
        limit=args.limit,
        offset=args.offset,
        seed=args.seed,
        shuffle_distractors=args.shuffle_distractors,
        llm=args.llm,
        out_dir=args.out,
        methods=args.methods,
        sweeps=not args.no_sweeps,
        sweep_limit=args.sweep_limit,
        flat_top_k=args.flat_top_k,
        progress=not args.no_progress and isatty(sys.stderr),
        fresh=args.fresh,
        plots=not args.no_plots,
        report_only=args.report_only,
    )
    skipped = report.settings.get("skipped_no_paragraphs")
    if skipped:  # the run's warnings are silenced (model chatter); this one matters
        emit([f"sarg eval: {skipped_message(skipped)}"], sys.stderr)
    return _print_report(report)


def _cli_causal(args: argparse.Namespace) -> int:
    """``sarg eval --dataset ester|esc`` (the multi-hop options do not apply)."""
    from sarg_integrations.errors import InputError
    from sarg_integrations.evaluation.causal_eval import run_causal_evaluation

    if args.llm:
        msg = f"--llm is not supported with --dataset {args.dataset} (no generation is scored)"
        raise InputError(msg, argument="llm", value=args.llm)
    report = run_causal_evaluation(
        args.dataset,
        args.data,
        extractor=args.extractor,
        limit=args.limit,
        out_dir=args.out,
        progress=not args.no_progress and isatty(sys.stderr),
        fresh=args.fresh,
        report_only=args.report_only,
    )
    return _print_report(report)


def _print_report(report: Any) -> int:
    print(report.markdown)
    for kind, path in report.paths.items():
        print(f"{kind}: {path}")
    return 0
