"""The one test behind every integer argument's error (batch sizes, limits, workers).

Each caller keeps its own error class and message (which argument, what to pass); only
the test is shared, so that ``True`` is never taken for ``1`` anywhere.
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_whole"]


def is_whole(value: Any, minimum: int) -> bool:
    """Whether ``value`` is an ``int`` (not a ``bool``) of at least ``minimum``.

    Example:
        >>> is_whole(3, 1), is_whole(0, 1), is_whole(True, 1), is_whole(2.0, 1)
        (True, False, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum
