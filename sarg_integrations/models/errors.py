"""What a failed model call means: retry it (rate limit, transient) or give up (fatal).

Shared by everything that calls models (:mod:`sarg_integrations.extraction.llm`).
"""

from __future__ import annotations

import asyncio
import math

__all__ = ["classify_error", "retry_after"]

_RATE_LIMIT_NAMES = (
    "ratelimit",
    "toomanyrequests",
    "resourceexhausted",
    "throttl",
    "quotaexceeded",
)
_TRANSIENT_NAMES = (
    "timeout",
    "connection",
    "serviceunavailable",
    "internalserver",
    "overloaded",
    "badgateway",
    "gatewaytimeout",
    "temporar",
    "unavailable",
    "serverdisconnected",
    "remoteprotocol",
    "readerror",
    "apiconnection",
)
_TRANSIENT_STATUS = frozenset({408, 409, 425, 500, 502, 503, 504, 520, 522, 524, 529})


def _status_of(exc: BaseException) -> int | None:
    for candidate in (
        getattr(exc, "status_code", None),
        getattr(exc, "status", None),
        getattr(getattr(exc, "response", None), "status_code", None),
        getattr(exc, "code", None),
    ):
        if isinstance(candidate, int) and not isinstance(candidate, bool):
            return candidate
    return None


def classify_error(exc: BaseException) -> str:
    """``"rate_limit"``, ``"transient"`` (both retried) or ``"fatal"`` for a model error.

    Looks at the HTTP status (``status_code`` / ``response.status_code``), the class
    names in the exception's MRO (``RateLimitError``, ``APITimeoutError``,
    ``ServiceUnavailable``…) and, for plain exceptions, the message.

    Example:
        >>> class RateLimitError(Exception): ...
        >>> classify_error(RateLimitError("slow down")), classify_error(TimeoutError())
        ('rate_limit', 'transient')
        >>> classify_error(ValueError("bad api key"))
        'fatal'
    """
    chain = [exc]
    if exc.__cause__ is not None:
        chain.append(exc.__cause__)
    for err in chain:
        status = _status_of(err)
        names = " ".join(c.__name__.lower() for c in type(err).__mro__)
        if status == 429 or any(n in names for n in _RATE_LIMIT_NAMES):
            return "rate_limit"
        if isinstance(err, (TimeoutError, asyncio.TimeoutError, ConnectionError)):
            return "transient"
        if status in _TRANSIENT_STATUS or any(n in names for n in _TRANSIENT_NAMES):
            return "transient"
        message = str(err).lower()
        if "rate limit" in message or "too many requests" in message or "429" in message:
            return "rate_limit"
        if "overloaded" in message or "temporarily unavailable" in message:
            return "transient"
    return "fatal"


def retry_after(exc: BaseException) -> float | None:
    """The seconds a model error asks to wait (``retry_after`` or a Retry-After header).

    ``None`` when the error says nothing usable (missing, not a number, negative).
    """
    value = getattr(exc, "retry_after", None)
    if value is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
        if headers is not None:
            try:
                value = headers.get("retry-after")
            except Exception:
                value = None
    try:
        seconds = float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None
