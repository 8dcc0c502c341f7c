"""``sarg eval``: the evaluation harness's command.

Its options and logic live in :mod:`sarg_integrations.evaluation.cli`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

from sarg_integrations.cli.common import positive_int, quiet_models

__all__ = ["add_commands"]


def add_commands(sub: Any) -> None:
    """Add ``eval`` to the ``sarg`` subparsers ``sub``."""
    from sarg_integrations.evaluation.cli import add_eval_arguments

    evaluate = sub.add_parser(
        "eval",
        help="evaluate SARG against flat RAG on multi-hop QA data",
        description=(
            "Run Direct, flat RAG, flat top-k, LongContextReorder, CoT-RAG and SARG (plus "
            "ablations and beam/top-K sweeps) on HotpotQA, MuSiQue or 2WikiMultiHopQA; write "
            "per-question records (resumable), a JSON summary, Markdown tables and plots."
        ),
    )
    add_eval_arguments(evaluate, positive_int=positive_int)
    evaluate.set_defaults(handler=_cmd_eval)


def _cmd_eval(args: argparse.Namespace) -> int:
    from sarg_integrations.evaluation.cli import cli_eval

    with quiet_models():
        return cli_eval(args)
