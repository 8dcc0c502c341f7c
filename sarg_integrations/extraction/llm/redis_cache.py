"""A Redis-backed extraction cache, shared by every replica and batch worker.

``LLMTripleExtractor(..., cache="redis://host:6379/0")`` builds a :class:`RedisCache`
(``pip install "sarg-integrations[redis]"``; the ``redis`` client is imported only
then). Keys are ``<namespace><cache_key>``, where :func:`~.cache.cache_key` hashes the
chunk text with the model identity and the prompt fingerprint, so a new model or prompt
version never reads the old answers. Values are UTF-8 JSON, never pickle.

The cache never fails a query: a server that is down, refuses the connection or does
not answer within ``timeout`` raises :class:`~sarg_integrations.errors.CacheUnavailableError`,
which the extractor turns into "no cache" for that call, a warning and
``stats["cache_errors"]``. After a failure the cache does not touch the network for
``retry_after`` seconds (calls fail at once), so a dead server costs one timeout, not
one per chunk.

URL options (query string, removed before the URL reaches the client):

* ``ttl=SECONDS`` – entries expire after this long (default: never);
* ``timeout=SECONDS`` – connect and read timeout (default 1.0);
* ``namespace=TEXT`` – the key prefix (default ``sarg-extraction/``).

Other query arguments (``ssl_cert_reqs``, ``health_check_interval``, …) go to
``redis.Redis.from_url``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sarg_integrations.errors import CacheUnavailableError, ConfigError, MissingDependencyError
from sarg_integrations.extraction.llm.cache import decode_value

__all__ = ["DEFAULT_NAMESPACE", "RedisCache", "redact_url"]

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_NAMESPACE = "sarg-extraction/"
"""The key prefix of a :class:`RedisCache` (``namespace=`` changes it)."""


class RedisCache:
    """An extraction cache on a Redis server (``redis://``, ``rediss://`` or ``unix://``).

    Args:
        url: The server, e.g. ``redis://127.0.0.1:6379/0``; may carry ``ttl``,
            ``timeout`` and ``namespace`` in its query string (see the module).
        ttl: Seconds an entry lives (``None``: forever); overrides the URL's ``ttl``.
        timeout: Connect and read timeout in seconds; overrides the URL's ``timeout``.
        namespace: Key prefix; overrides the URL's ``namespace``.
        retry_after: Seconds the cache stays "down" (failing at once) after an error.
        client: A ready ``redis.Redis`` (or compatible) client; default: built from
            ``url``.

    Raises:
        MissingDependencyError: The ``redis`` package is not installed.
        ConfigError: A malformed URL or option (the message names it and the fix).

    Example:
        >>> RedisCache("redis://127.0.0.1:1/0?ttl=60&timeout=0.2").ttl  # nothing listens on 1
        60
        >>> RedisCache("redis://127.0.0.1:1/0?ttl=0")
        Traceback (most recent call last):
        ...
        sarg_integrations.errors.ConfigError: cache='redis://127.0.0.1:1/0?ttl=0': ttl=0 is invalid; use a whole number of seconds >= 1 (e.g. ttl=604800 for a week), or leave it out for no expiry
    """

    def __init__(
        self,
        url: str,
        *,
        ttl: int | None = None,
        timeout: float | None = None,
        namespace: str | None = None,
        retry_after: float = 10.0,
        client: Any = None,
    ) -> None:
        parts = urlsplit(url)
        options = dict(parse_qsl(parts.query, keep_blank_values=True))
        self.url = redact_url(url)
        self.ttl = _ttl(url, ttl if ttl is not None else options.pop("ttl", None))
        options.pop("ttl", None)
        raw_timeout = timeout if timeout is not None else options.pop("timeout", 1.0)
        options.pop("timeout", None)
        self.timeout = _positive_float(url, "timeout", raw_timeout, "e.g. timeout=1.0")
        self.namespace = namespace if namespace is not None else options.pop("namespace", None)
        options.pop("namespace", None)
        if self.namespace is None:
            self.namespace = DEFAULT_NAMESPACE
        self.retry_after = _positive_float(url, "retry_after", retry_after, "e.g. 10")
        self._down_until = 0.0
        self._last_error = ""
        self._lock = threading.Lock()
        if client is None:
            client = _client(
                urlunsplit(parts._replace(query=urlencode(options))), self.timeout, url
            )
        self.client = client

    def __repr__(self) -> str:
        return f"RedisCache({self.url!r})"

    # ------------------------------------------------------------------ protocol

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Return the values found for ``keys``; unreadable ones as ``InvalidEntry``.

        Raises:
            CacheUnavailableError: The server is down or did not answer in time.
        """
        keys = list(dict.fromkeys(keys))
        if not keys:
            return {}
        values = self._guarded(lambda: self.client.mget([self.namespace + k for k in keys]))
        return {
            key: decode_value(value, key, self.url)
            for key, value in zip(keys, values)
            if value is not None
        }

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Store ``items`` as UTF-8 JSON, with the TTL when there is one.

        Raises:
            CacheUnavailableError: The server is down or did not answer in time.
        """
        if not items:
            return
        encoded = {
            self.namespace + k: json.dumps(v, ensure_ascii=False).encode("utf-8")
            for k, v in items.items()
        }

        def write() -> None:
            pipe = self.client.pipeline(transaction=False)
            for key, value in encoded.items():
                pipe.set(key, value, ex=self.ttl)
            pipe.execute()

        self._guarded(write)

    # ------------------------------------------------------------------ helpers

    def keys(self) -> list[str]:
        """Every cache key stored under this namespace (without the prefix)."""
        pattern = _escape_glob(self.namespace) + "*"
        found = self._guarded(lambda: list(self.client.scan_iter(match=pattern, count=1000)))
        start = len(self.namespace)
        return sorted(
            k.decode("utf-8")[start:] if isinstance(k, bytes) else k[start:] for k in found
        )

    def __len__(self) -> int:
        return len(self.keys())

    def clear(self) -> None:
        """Remove every entry under this namespace."""
        full = [self.namespace + k for k in self.keys()]
        for start in range(0, len(full), 1000):
            batch = full[start : start + 1000]
            self._guarded(lambda batch=batch: self.client.delete(*batch))

    def close(self) -> None:
        """Close the client's connections."""
        closer = getattr(self.client, "close", None)
        if callable(closer):
            closer()

    def _guarded(self, call: Callable[[], T]) -> T:
        """Run one server call; a failure marks the server down for ``retry_after`` s."""
        with self._lock:
            left = self._down_until - time.monotonic()
            last = self._last_error
        if left > 0:
            msg = (
                f"the Redis cache {self.url} is unavailable ({last}); "
                f"not retried for another {left:.1f} s"
            )
            raise CacheUnavailableError(msg, url=self.url)
        try:
            return call()
        except Exception as exc:
            if not _is_connection_error(exc):
                raise
            detail = f"{type(exc).__name__}: {exc}".rstrip(": ")
            with self._lock:
                first = self._down_until == 0.0 or time.monotonic() >= self._down_until
                self._down_until = time.monotonic() + self.retry_after
                self._last_error = detail
            if first:
                log.warning(
                    "the Redis cache %s is unavailable (%s); extracting without it, "
                    "retrying in %g s",
                    self.url,
                    detail,
                    self.retry_after,
                )
            msg = f"the Redis cache {self.url} is unavailable ({detail})"
            raise CacheUnavailableError(msg, url=self.url) from exc


def redact_url(url: str) -> str:
    """``url`` without its password (for messages and logs).

    Example:
        >>> redact_url("redis://user:secret@cache:6379/0")
        'redis://user:***@cache:6379/0'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def _client(url: str, timeout: float, given: str) -> Any:
    try:
        import redis
    except ImportError:
        raise MissingDependencyError(
            "redis", feature=f"cache={redact_url(given)!r} (a Redis cache)", extra="redis"
        ) from None
    try:
        return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    except (ValueError, TypeError) as exc:
        msg = (
            f"cache={redact_url(given)!r} is not a usable Redis URL ({exc}); use "
            "redis://HOST:PORT/DB, e.g. redis://127.0.0.1:6379/0"
        )
        raise ConfigError(msg, field="cache", value=redact_url(given)) from None


def _is_connection_error(exc: BaseException) -> bool:
    """Whether ``exc`` means the server is unreachable or slow (not a bad request)."""
    if isinstance(exc, (ConnectionError, TimeoutError, OSError)):
        return True
    try:
        import redis
    except ImportError:  # pragma: no cover - a client was injected without redis
        return False
    return isinstance(exc, (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError))


def _ttl(url: str, value: Any) -> int | None:
    if value is None or value == "":
        return None
    try:
        ttl = int(value)
    except (TypeError, ValueError):
        ttl = 0
    if ttl < 1 or isinstance(value, bool) or (isinstance(value, float) and value != ttl):
        msg = (
            f"cache={redact_url(url)!r}: ttl={value} is invalid; use a whole number of seconds "
            ">= 1 (e.g. ttl=604800 for a week), or leave it out for no expiry"
        )
        raise ConfigError(msg, field="ttl", value=value)
    return ttl


def _positive_float(url: str, name: str, value: Any, hint: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not number > 0 or number == float("inf"):
        msg = f"cache={redact_url(url)!r}: {name}={value} is invalid; use seconds > 0 ({hint})"
        raise ConfigError(msg, field=name, value=value)
    return number


def _escape_glob(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
