"""The persistent per-chunk extraction cache.

Keys are SHA-256 digests of ``(chunk text, model identity, prompt fingerprint)`` (see
:func:`cache_key`); values are JSON (never pickle): the parsed raw triples of the
chunk and the token usage of the call that produced them. Grounding runs after the
cache, so cached answers are re-checked against each document that contains the chunk.

Backends:

* :class:`SQLiteCache` – the default for a path: one file, WAL journal, a busy timeout
  and retries, so several threads and processes can read and write it at once.
* :class:`KeyValueStoreCache` – any store with ``mget(keys)`` / ``mset(pairs)`` of
  bytes, e.g. LangChain's ``BaseStore[str, bytes]`` (``LocalFileStore``,
  ``InMemoryByteStore``, Redis…), found by duck typing.
* :class:`MemoryCache` – a dict, for tests and one-off runs.

Anything with ``get_many(keys) -> dict`` and ``set_many(mapping)`` also works.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from sarg_integrations.errors import ConfigError

__all__ = [
    "CACHE_FORMAT",
    "ExtractionCache",
    "KeyValueStoreCache",
    "MemoryCache",
    "SQLiteCache",
    "as_cache",
    "cache_key",
]

log = logging.getLogger(__name__)

CACHE_FORMAT = 1
"""Bumped when the cached value layout changes (it is part of every key)."""


def cache_key(chunk_text: str, model_identity: str, prompt_fingerprint: str) -> str:
    """The cache key of one chunk: a hex SHA-256 of text hash, model and prompt.

    Example:
        >>> cache_key("Rain causes floods.", "m", "reasoning/1/x") == cache_key(
        ...     "Rain causes floods.", "m", "reasoning/1/x")
        True
        >>> cache_key("a", "m", "p1") != cache_key("a", "m", "p2")
        True
    """
    text_hash = hashlib.sha256(chunk_text.encode("utf-8")).hexdigest()
    material = json.dumps([CACHE_FORMAT, text_hash, model_identity, prompt_fingerprint])
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


@runtime_checkable
class ExtractionCache(Protocol):
    """A key-value store of JSON-ready values."""

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Return the values found for ``keys`` (missing keys are left out)."""
        ...

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Store ``items``."""
        ...


class MemoryCache:
    """An in-process dict cache (values are stored as JSON text, like the others)."""

    def __init__(self) -> None:
        self._data: dict[str, str] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._data)

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Return the values found for ``keys``."""
        with self._lock:
            return {k: json.loads(self._data[k]) for k in keys if k in self._data}

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Store ``items``."""
        encoded = {k: json.dumps(v, ensure_ascii=False) for k, v in items.items()}
        with self._lock:
            self._data.update(encoded)

    def clear(self) -> None:
        """Remove every entry."""
        with self._lock:
            self._data.clear()


class SQLiteCache:
    """A SQLite file cache, safe for concurrent writers (threads and processes).

    The database uses WAL journaling and a busy timeout; a write that still finds the
    file locked is retried with backoff. One connection per thread.

    Args:
        path: The database file; parent folders are created.
        timeout: Seconds to wait for a lock before a write is retried.
        table: The table name.

    Raises:
        ConfigError: The file cannot be created or is not a SQLite database.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, timeout: float = 30.0, table: str = "sarg_extraction"
    ) -> None:
        self.path = Path(path).expanduser()
        self.timeout = float(timeout)
        if not table.isidentifier():
            msg = f"table={table!r} must be a plain identifier such as 'sarg_extraction'"
            raise ConfigError(msg, field="table", value=table)
        self.table = table
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        try:
            if self.path.parent and not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write(
                f"CREATE TABLE IF NOT EXISTS {self.table} "
                "(key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)",
                (),
            )
        except (OSError, sqlite3.Error) as exc:
            msg = (
                f"cache={str(path)!r} cannot be used as an SQLite cache ({exc}); pass a "
                "writable file path such as '.sarg-cache.sqlite'"
            )
            raise ConfigError(msg, field="cache", value=str(path)) from exc

    def __repr__(self) -> str:
        return f"SQLiteCache({str(self.path)!r})"

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self.timeout, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def _write(self, sql: str, rows: Sequence[Any] | tuple[()], *, many: bool = False) -> None:
        delay = 0.05
        for attempt in range(8):
            try:
                conn = self._conn()
                with conn:
                    if many:
                        conn.executemany(sql, rows)
                    else:
                        conn.execute(sql, rows)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc).lower() and "busy" not in str(exc).lower():
                    raise
                if attempt == 7:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Return the values found for ``keys``; unreadable values are logged and skipped."""
        out: dict[str, Any] = {}
        keys = list(dict.fromkeys(keys))
        conn = self._conn()
        for start in range(0, len(keys), 500):
            batch = keys[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = conn.execute(
                f"SELECT key, value FROM {self.table} WHERE key IN ({marks})", batch
            ).fetchall()
            for key, value in rows:
                try:
                    out[key] = json.loads(value)
                except ValueError:
                    log.warning("ignoring a corrupt cache entry %s in %s", key[:12], self.path)
        return out

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Store ``items`` (one transaction)."""
        if not items:
            return
        now = time.time()
        rows = [(k, json.dumps(v, ensure_ascii=False), now) for k, v in items.items()]
        self._write(
            f"INSERT OR REPLACE INTO {self.table} (key, value, created) VALUES (?, ?, ?)",
            rows,
            many=True,
        )

    def __len__(self) -> int:
        return int(self._conn().execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0])

    def clear(self) -> None:
        """Remove every entry."""
        self._write(f"DELETE FROM {self.table}", ())

    def close(self) -> None:
        """Close every connection this cache opened."""
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()


class KeyValueStoreCache:
    """Adapts a bytes key-value store with ``mget`` / ``mset`` (LangChain ``BaseStore``).

    Values are written as UTF-8 JSON bytes; keys get ``namespace`` as a prefix.

    Args:
        store: The store.
        namespace: Key prefix, so the cache can share a store.
    """

    def __init__(self, store: Any, *, namespace: str = "sarg-extraction/") -> None:
        self.store = store
        self.namespace = namespace

    def __repr__(self) -> str:
        return f"KeyValueStoreCache({type(self.store).__name__})"

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Return the values found for ``keys``; unreadable values are logged and skipped."""
        keys = list(keys)
        values = self.store.mget([self.namespace + k for k in keys])
        out: dict[str, Any] = {}
        for key, value in zip(keys, values):
            if value is None:
                continue
            try:
                text = value.decode("utf-8") if isinstance(value, (bytes, bytearray)) else value
                out[key] = json.loads(text) if isinstance(text, str) else text
            except ValueError:
                log.warning("ignoring a corrupt cache entry %s in %r", key[:12], self.store)
        return out

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Store ``items`` as JSON bytes."""
        if items:
            self.store.mset(
                [
                    (self.namespace + k, json.dumps(v, ensure_ascii=False).encode("utf-8"))
                    for k, v in items.items()
                ]
            )


def as_cache(cache: Any) -> ExtractionCache | None:
    """Return ``cache`` as an :class:`ExtractionCache`.

    Args:
        cache: ``None`` (no cache), a path (SQLite file), an object with
            ``get_many`` / ``set_many``, or a store with ``mget`` / ``mset``.

    Raises:
        ConfigError: Anything else.
    """
    if cache is None or cache is False:
        return None
    if isinstance(cache, (str, os.PathLike)):
        return SQLiteCache(cache)
    if callable(getattr(cache, "get_many", None)) and callable(getattr(cache, "set_many", None)):
        return cache  # type: ignore[no-any-return]
    if callable(getattr(cache, "mget", None)) and callable(getattr(cache, "mset", None)):
        return KeyValueStoreCache(cache)
    msg = (
        f"cache={cache!r} is not a cache; pass a file path (SQLite), a LangChain "
        "BaseStore[str, bytes] (mget/mset), or an object with get_many/set_many"
    )
    raise ConfigError(msg, field="cache", value=cache)
