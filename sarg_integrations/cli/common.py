"""What every ``sarg`` command shares: argparse value types, quiet model loading, output."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    pass

__all__ = [
    "add_docs_option",
    "emit",
    "isatty",
    "non_empty",
    "positive_int",
    "quiet_models",
    "seconds",
    "similarity",
    "unit_interval",
]

_NOISY_LOGGERS = (
    "transformers",
    "sentence_transformers",
    "huggingface_hub",
    "torch",
    "keybert",
    "spacy",
    "urllib3",
    "filelock",
    "setfit",
    "datasets",
)


def add_docs_option(parser: argparse.ArgumentParser) -> None:
    """Add the ``--docs/-d PATH...`` option that ``run`` and ``extract`` share."""
    parser.add_argument(
        "--docs",
        "-d",
        required=True,
        nargs="+",
        metavar="PATH",
        help=(
            ".txt/.md files (one document each), .jsonl files ({'id', 'text'} per line) or folders"
        ),
    )


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        msg = f"invalid value {text!r}: expected a whole number >= 1, e.g. 3"
        raise argparse.ArgumentTypeError(msg) from None
    if value < 1:
        msg = f"invalid value {value}: must be >= 1"
        raise argparse.ArgumentTypeError(msg)
    return value


def similarity(text: str) -> float:
    """An argparse type: a cosine similarity threshold in [-1, 1]."""
    try:
        value = float(text)
    except ValueError:
        msg = f"invalid value {text!r}: expected a number between -1 and 1, e.g. 0.5"
        raise argparse.ArgumentTypeError(msg) from None
    if not -1.0 <= value <= 1.0:  # also rejects NaN
        msg = f"invalid value {text}: a cosine similarity threshold must be between -1 and 1"
        raise argparse.ArgumentTypeError(msg)
    return value


def unit_interval(text: str) -> float:
    """An argparse type: a number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:
        msg = f"expected a number between 0 and 1, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def seconds(text: str) -> float:
    """An argparse type: a number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < float("inf"):  # also rejects NaN
        msg = f"invalid value {text!r}: expected a number of seconds > 0, e.g. 30"
        raise argparse.ArgumentTypeError(msg)
    return value


def non_empty(text: str) -> str:
    """An argparse type: a string with some non-space character."""
    if not text.strip():
        msg = "must not be empty; pass the question to reason about"
        raise argparse.ArgumentTypeError(msg)
    return text


def isatty(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (False when it cannot tell)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def quiet_models() -> Iterator[None]:
    """Keep model-library warnings and log chatter off the terminal during a run."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # transformers resets its logger level on import, from this variable.
    set_verbosity = "TRANSFORMERS_VERBOSITY" not in os.environ
    if set_verbosity:
        os.environ["TRANSFORMERS_VERBOSITY"] = "error"
    loggers = [logging.getLogger(name) for name in _NOISY_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)
        if set_verbosity:
            os.environ.pop("TRANSFORMERS_VERBOSITY", None)


def emit(lines: Sequence[str], stream: TextIO) -> None:
    """Write ``lines`` to ``stream`` and flush, control characters escaped.

    Ids, file names and document text are untrusted: an ESC could recolour or rewrite
    the terminal, a "\\r" overwrite a line, so the text goes through
    :func:`~sarg_integrations._text.terminal_safe`.
    """
    from sarg_integrations._text import terminal_safe

    stream.write(terminal_safe("\n".join(lines)) + "\n")
    stream.flush()
