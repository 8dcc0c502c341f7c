"""The sentence-length cap shared by the offline extractors, and how a skip is reported."""

from __future__ import annotations

from collections.abc import Collection

from sarg_integrations._checks import is_whole
from sarg_integrations.errors import ConfigError
from sarg_integrations.extraction.base import ExtractionOutcome, stopped_outcome
from sarg_integrations.schema import Triple

__all__ = ["check_max_sentence_chars", "report_too_long"]


def check_max_sentence_chars(value: object) -> int | None:
    """Return ``value`` if it is a valid ``max_sentence_chars`` (an int >= 100, or None).

    Example:
        >>> check_max_sentence_chars(5000), check_max_sentence_chars(None)
        (5000, None)
        >>> check_max_sentence_chars(5)
        Traceback (most recent call last):
        ...
        sarg_integrations.errors.ConfigError: max_sentence_chars=5 is invalid; pass an integer of at least 100 (default 5000), or None for no cap
    """
    if value is not None and not is_whole(value, 100):
        msg = (
            f"max_sentence_chars={value!r} is invalid; pass an integer of "
            "at least 100 (default 5000), or None for no cap"
        )
        raise ConfigError(msg, field="max_sentence_chars", value=value)
    return value


def report_too_long(
    results: list[list[Triple]],
    too_long: dict[int, int],
    cap: int | None,
    unfinished: Collection[int] = (),
) -> list[list[Triple] | ExtractionOutcome]:
    """Per-document results, with an outcome that counts (and explains) skipped sentences.

    Documents in ``unfinished`` (not read to the end: the ``stop`` event was set) get
    :func:`~sarg_integrations.extraction.base.stopped_outcome` with their triples so far.

    Example:
        >>> out = report_too_long([[], []], {1: 2}, 5000)
        >>> out[0], out[1].stats, out[1].error.split(" were")[0]
        ([], {'sentences_skipped_too_long': 2}, '2 sentence(s) longer than max_sentence_chars=5000 characters')
    """
    out: list[list[Triple] | ExtractionOutcome] = list(results)
    for index, count in too_long.items():
        error = None
        if not results[index]:
            error = (
                f"{count} sentence(s) longer than max_sentence_chars={cap} characters were not "
                "parsed, and no reasoning-schema triples were found in the rest"
            )
        stats = {"sentences_skipped_too_long": count}
        out[index] = ExtractionOutcome(triples=results[index], error=error, stats=stats)
    for index in unfinished:
        out[index] = stopped_outcome(results[index])
    return out
