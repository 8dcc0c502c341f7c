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
* :class:`~sarg_integrations.extraction.llm.redis_cache.RedisCache` – a Redis server
  shared by replicas and batch workers (``cache="redis://host:6379/0"``; needs the
  ``redis`` extra), with an optional TTL; a server that is down or slow degrades to
  "no cache" with a warning.
* :class:`MemoryCache` – a dict, for tests and one-off runs.

Anything with ``get_many(keys) -> dict`` and ``set_many(mapping)`` also works. A stored
value that is not valid JSON (written by another tool, or torn) comes back from
``get_many`` as an :class:`InvalidEntry`; the extractor ignores it, extracts the chunk
again and counts it in ``stats["cache_invalid_entries"]``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from sarg_integrations.errors import ConfigError

__all__ = [
    "CACHE_FORMAT",
    "CACHE_SCHEMES",
    "ExtractionCache",
    "InvalidEntry",
    "KeyValueStoreCache",
    "MemoryCache",
    "SQLiteCache",
    "as_cache",
    "cache_key",
    "decode_value",
    "holds_triples",
    "url_scheme",
]

log = logging.getLogger(__name__)

CACHE_FORMAT = 1
"""Bumped when the cached value layout changes (it is part of every key)."""


CACHE_SCHEMES = ("redis", "rediss", "unix", "sqlite")
"""The URL schemes ``cache=`` accepts (anything else with ``://`` is a ConfigError)."""


@dataclass(frozen=True)
class InvalidEntry:
    """A stored value that could not be read as JSON (the caller ignores and reports it).

    Attributes:
        reason: Why it was rejected, e.g. ``"not valid JSON"``.
    """

    reason: str


def decode_value(raw: Any, key: str, where: str) -> Any:
    r"""Decode one stored value (JSON text or UTF-8 JSON bytes); :class:`InvalidEntry` if not.

    Example:
        >>> decode_value(b'{"triples": []}', "k", "here")
        {'triples': []}
        >>> decode_value(b"\x80\x04pickle", "k", "here")  # logs a warning
        InvalidEntry(reason='not valid JSON (UnicodeDecodeError)')
    """
    try:
        text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw
        return json.loads(text) if isinstance(text, str) else text
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        log.warning("ignoring a cache entry %s in %s that is not valid JSON", key[:12], where)
        return InvalidEntry(f"not valid JSON ({type(exc).__name__})")


def holds_triples(value: Any) -> bool:
    """Whether a cached value has the shape the extractors store: a dict with a ``triples`` list.

    Example:
        >>> holds_triples({"triples": []}), holds_triples([]), holds_triples(InvalidEntry("x"))
        (True, False, False)
    """
    return (
        not isinstance(value, InvalidEntry)
        and isinstance(value, dict)
        and isinstance(value.get("triples"), list)
    )


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

    The file is checked when the cache is opened: its header, ``PRAGMA quick_check``,
    the table's columns and the cache format recorded in ``<table>_meta``. A damaged
    file (garbage bytes, a torn copy) is moved aside to ``<name>.corrupt-<time>`` (with
    its ``-wal``/``-shm`` files) and an empty cache is started in its place, with a
    logged warning; :attr:`recovered_from` then names the moved file. Processes that
    open the same damaged file at once agree on one rebuild (a lock file,
    ``<name>.lock``, guards the check on POSIX).

    Args:
        path: The database file; parent folders are created.
        timeout: Seconds to wait for a lock before a write is retried.
        table: The table name.

    Raises:
        ConfigError: The file cannot be created, holds a table of the same name with
            other columns, or was written by a newer cache format.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "cache.sqlite"
        >>> _ = path.write_bytes(b"garbage" * 100)
        >>> cache = SQLiteCache(path)  # logs: ... is damaged ...; moved it to ...
        >>> cache.recovered_from is not None, len(cache)
        (True, 0)
        >>> cache.close()
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
        self.recovered_from: Path | None = None
        """Where a damaged cache file was moved to when this cache was opened, else None."""
        try:
            if self.path.parent and not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            with _file_lock(self.path):
                problem = _damage(self.path, self.timeout)
                if problem is not None:
                    self.recovered_from = _move_aside(self.path)
                    log.warning(
                        "the extraction cache %s is damaged (%s); moved it to %s and started "
                        "an empty cache (cached answers are lost, nothing else)",
                        self.path,
                        problem,
                        self.recovered_from,
                    )
                self._write(
                    f"CREATE TABLE IF NOT EXISTS {self.table} "
                    "(key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)",
                    (),
                )
                self._write(
                    f"CREATE TABLE IF NOT EXISTS {self.table}_meta "
                    "(name TEXT PRIMARY KEY, value TEXT NOT NULL)",
                    (),
                )
                self._write(
                    f"INSERT OR IGNORE INTO {self.table}_meta (name, value) VALUES (?, ?)",
                    ("format", str(CACHE_FORMAT)),
                )
        except (OSError, sqlite3.Error) as exc:
            msg = (
                f"cache={str(path)!r} cannot be used as an SQLite cache ({exc}); pass a "
                "writable file path such as '.sarg-cache.sqlite'"
            )
            raise ConfigError(msg, field="cache", value=str(path)) from exc
        self._check_layout(str(path))

    def __repr__(self) -> str:
        return f"SQLiteCache({str(self.path)!r})"

    def _check_layout(self, given: str) -> None:
        """Refuse a table of this name with other columns, or a newer cache format."""
        conn = self._conn()
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({self.table})")]
        if columns != ["key", "value", "created"]:
            msg = (
                f"cache={given!r} already has a table {self.table!r} with columns {columns}, "
                "which is not a sarg extraction cache; pass another file path or table="
            )
            raise ConfigError(msg, field="cache", value=given)
        row = conn.execute(f"SELECT value FROM {self.table}_meta WHERE name = 'format'").fetchone()
        found = row[0] if row else None
        if found != str(CACHE_FORMAT):
            msg = (
                f"cache={given!r} was written in cache format {found!r}; this version of "
                f"sarg-integrations reads format {CACHE_FORMAT}; pass another file path "
                "(or delete the file to start an empty cache)"
            )
            raise ConfigError(msg, field="cache", value=given)

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
        """Return the values found for ``keys``; unreadable ones as :class:`InvalidEntry`."""
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
                out[key] = decode_value(value, key, str(self.path))
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


_SQLITE_HEADER = b"SQLite format 3\x00"


def _damage(path: Path, timeout: float) -> str | None:
    """Why the SQLite file at ``path`` is unusable, or None (also for a missing file).

    A lock held by another process is not damage: the check then passes and the busy
    timeout of the normal connection deals with it.
    """
    try:
        if not path.exists() or path.stat().st_size == 0:
            return None
        with open(path, "rb") as handle:
            header = handle.read(len(_SQLITE_HEADER))
    except OSError:
        return None  # unreadable: creating the table fails with a clear error instead
    if header != _SQLITE_HEADER:
        return f"not an SQLite file: it starts with {header[:8]!r}"
    try:
        conn = sqlite3.connect(path, timeout=timeout)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.OperationalError as exc:
        text = str(exc).lower()
        if "locked" in text or "busy" in text or "unable to open" in text:
            return None
        return str(exc)
    except sqlite3.DatabaseError as exc:
        return str(exc)
    if rows != [("ok",)]:
        report = " ".join(" ".join(str(r[0]) for r in rows[:3]).split())
        return f"PRAGMA quick_check: {report[:200]}"
    return None


def _move_aside(path: Path) -> Path:
    """Rename a damaged database (and its -wal/-shm files) to ``<name>.corrupt-<time>``."""
    stem = f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    aside, n = path.with_name(stem), 1
    while aside.exists():
        aside, n = path.with_name(f"{stem}-{n}"), n + 1
    for suffix in ("-wal", "-shm", ""):
        source = path.with_name(path.name + suffix)
        if source.exists():
            os.replace(source, aside.with_name(aside.name + suffix))
    return aside


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive inter-process lock on ``<path>.lock`` (POSIX ``flock``; else a no-op)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the check runs unguarded
        yield
        return
    with open(path.with_name(path.name + ".lock"), "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


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
        """Return the values found for ``keys``; unreadable ones as :class:`InvalidEntry`."""
        keys = list(keys)
        values = self.store.mget([self.namespace + k for k in keys])
        return {
            key: decode_value(value, key, repr(self.store))
            for key, value in zip(keys, values)
            if value is not None
        }

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
        cache: ``None`` (no cache), a path (SQLite file), a URL
            (``redis://host:6379/0``, ``rediss://…``, ``unix:///run/redis.sock``,
            ``sqlite:///path/cache.sqlite``; see :data:`CACHE_SCHEMES`), an object
            with ``get_many`` / ``set_many``, or a store with ``mget`` / ``mset``.

    Raises:
        ConfigError: A URL with another scheme (it never becomes a local path), or
            anything else that is not a cache.
        MissingDependencyError: A Redis URL without the ``redis`` package.

    Example:
        >>> as_cache("memcached://127.0.0.1:11211")
        Traceback (most recent call last):
        ...
        sarg_integrations.errors.ConfigError: cache='memcached://127.0.0.1:11211' has the URL scheme 'memcached', which is not supported; use redis://HOST:PORT/DB, rediss://HOST:PORT/DB, unix:///PATH/redis.sock, sqlite:///PATH or a plain file path (SQLite)
    """
    if cache is None or cache is False:
        return None
    if isinstance(cache, str):
        scheme = url_scheme(cache)
        if scheme in ("redis", "rediss", "unix"):
            from sarg_integrations.extraction.llm.redis_cache import RedisCache

            return RedisCache(cache)
        if scheme == "sqlite":
            return SQLiteCache(cache[len("sqlite://") :])
        if scheme is not None:
            msg = (
                f"cache={cache!r} has the URL scheme {scheme!r}, which is not supported; use "
                "redis://HOST:PORT/DB, rediss://HOST:PORT/DB, unix:///PATH/redis.sock, "
                "sqlite:///PATH or a plain file path (SQLite)"
            )
            raise ConfigError(msg, field="cache", value=cache)
    if isinstance(cache, (str, os.PathLike)):
        return SQLiteCache(cache)
    if callable(getattr(cache, "get_many", None)) and callable(getattr(cache, "set_many", None)):
        return cache  # type: ignore[no-any-return]
    if callable(getattr(cache, "mget", None)) and callable(getattr(cache, "mset", None)):
        return KeyValueStoreCache(cache)
    msg = (
        f"cache={cache!r} is not a cache; pass a file path (SQLite), a redis:// URL, a LangChain "
        "BaseStore[str, bytes] (mget/mset), or an object with get_many/set_many"
    )
    raise ConfigError(msg, field="cache", value=cache)


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def url_scheme(text: str) -> str | None:
    """The lower-cased scheme of ``text`` when it is a URL (``scheme://…``), else None.

    Example:
        >>> url_scheme("Redis://h:6379/0"), url_scheme("cache.sqlite"), url_scheme("C:/x.db")
        ('redis', None, None)
    """
    match = _SCHEME.match(text.strip())
    return match.group(1).lower() if match else None
