"""The ``sarg`` command line: run SARG on files, or on the packaged demo corpus.

Examples::

    sarg run --query "Why did technology stocks sell off?" --docs notes/ --json out.json
    sarg demo --show-prompt
    sarg run -q "Why did yields rise?" -d notes/ --llm openai:gpt-4o-mini --cache .sarg-cache.sqlite
    sarg demo --html gaucher.html --png gaucher.png
    sarg direction "Why did technology stocks sell off?" --json
    sarg train-direction --out my-direction-model/
    sarg train-extractor --data my_pairs.jsonl --out my-tagger/
    sarg run -q "Why did yields fall?" -d notes/ --extractor rules
    sarg extract -d corpus/ --llm openai:gpt-4o-mini --cache redis://cache:6379/0 --workers 4
    sarg eval --dataset musique --limit 200 --out benchmarks/results/eval
    sarg --version

Errors in the input (missing files, bad JSONL, invalid settings) print
``sarg: error: <message>`` and exit with status 2; Ctrl-C exits with 130.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from sarg_integrations.cli import direction, extract, extractor, run
from sarg_integrations.cli.paths import check_path_options

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    from sarg_integrations import __version__

    parser = argparse.ArgumentParser(
        prog="sarg",
        description=(
            "Structure-Augmented Reasoning Generation: build a reasoning graph from "
            "documents, find the causal chains that answer a query, and compile a prompt."
        ),
    )
    parser.add_argument("--version", action="version", version=f"sarg {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run.add_commands(sub)
    direction.add_commands(sub)
    extractor.add_commands(sub)
    extract.add_commands(sub)
    from sarg_integrations.cli import evaluate  # imports the evaluation harness

    evaluate.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``sarg`` command line and return its exit status.

    Args:
        argv: The arguments after the program name; ``None`` reads ``sys.argv[1:]``.

    Returns:
        0 on success, 2 on bad input (usage errors, unreadable documents, invalid
        settings), 130 when interrupted.
    """
    code = _main(argv)
    runner = sys.modules.get("sarg_integrations.extraction.runner")
    if argv is None and runner is not None:
        # The process's own command line: if a worker past a deadline is still stuck in
        # native code at exit, leave with this status rather than tear down under it.
        runner.set_exit_status(code)
    return code


def _main(argv: list[str] | None) -> int:
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)

    from sarg_integrations.errors import SARGError

    try:
        check_path_options(args)
        return int(args.handler(args))
    except SARGError as exc:
        from sarg_integrations._text import terminal_safe

        # Error messages quote paths and ids: escape what could drive the terminal.
        print(f"sarg: error: {terminal_safe(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sarg: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `sarg run ... | head`); stop quietly.
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 0
