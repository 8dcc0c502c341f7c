"""The per-chunk extraction cache: keys, SQLite / key-value / memory backends, reuse."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from fakes import CountingEcho

from sarg_integrations import LLMTripleExtractor
from sarg_integrations.errors import ConfigError
from sarg_integrations.extraction.llm import REASONING_PROMPT
from sarg_integrations.extraction.llm.cache import (
    KeyValueStoreCache,
    MemoryCache,
    SQLiteCache,
    as_cache,
    cache_key,
)
from sarg_integrations.schema import SourceDocument

DOCS = [
    SourceDocument("a", "Rain causes floods. Floods causes damage."),
    SourceDocument("b", "Heat causes drought. The museum opened."),
    SourceDocument("c", "Smoke causes coughing."),
]


def triples_of(outcomes: list[Any]) -> list[tuple[str, str, str, str, tuple[int, int] | None]]:
    return [
        (t.document_id, t.cause, t.relation, t.effect, t.sentence_span)
        for o in outcomes
        for t in o.triples
    ]


def run(extractor: LLMTripleExtractor, docs: list[SourceDocument] = DOCS) -> list[Any]:
    return extractor.extract_many(docs)


def test_second_run_makes_zero_calls_and_returns_the_same_triples(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    model = CountingEcho()
    first = run(LLMTripleExtractor(model, cache=path, model_identity="echo"))
    assert model.calls == 3
    assert sum(o.stats["cache_hits"] for o in first) == 0

    again = CountingEcho()
    second = run(LLMTripleExtractor(again, cache=str(path), model_identity="echo"))
    assert again.calls == 0
    assert sum(o.stats["llm_calls"] for o in second) == 0
    assert sum(o.stats["cache_hits"] for o in second) == 3
    assert triples_of(second) == triples_of(first)
    assert len(triples_of(first)) == 4


def test_changing_the_prompt_version_invalidates_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    run(LLMTripleExtractor(CountingEcho(), cache=path, model_identity="echo"))
    model = CountingEcho()
    bumped = REASONING_PROMPT.replace(version="2")
    run(LLMTripleExtractor(model, cache=path, model_identity="echo", prompt=bumped))
    assert model.calls == 3


def test_changing_the_model_or_the_schema_invalidates_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    run(LLMTripleExtractor(CountingEcho(), cache=path, model_identity="echo"))
    other_model = CountingEcho()
    run(LLMTripleExtractor(other_model, cache=path, model_identity="echo-v2"))
    assert other_model.calls == 3
    spo = CountingEcho()
    run(LLMTripleExtractor(spo, cache=path, model_identity="echo", prompt="generic_spo"))
    assert spo.calls == 3


def test_overlapping_document_sets_reuse_chunks(tmp_path: Path) -> None:
    cache = MemoryCache()
    model = CountingEcho()
    extractor = LLMTripleExtractor(model, cache=cache, model_identity="echo")
    run(extractor, DOCS[:2])
    outcomes = run(extractor, [DOCS[1], DOCS[2], SourceDocument("a2", DOCS[0].text)])
    assert model.calls == 3  # only "c" was new
    assert [o.stats["cache_hits"] for o in outcomes] == [1, 0, 1]
    assert outcomes[2].triples[0].document_id == "a2"


def test_values_are_json_not_pickle(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    run(LLMTripleExtractor(CountingEcho(), cache=path, model_identity="echo"))
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT key, value FROM sarg_extraction").fetchall()
    assert len(rows) == 3
    for key, value in rows:
        assert re.fullmatch(r"[0-9a-f]{64}", key)
        data = json.loads(value)
        assert data["model"] == "echo" and data["prompt"] == REASONING_PROMPT.fingerprint
        assert isinstance(data["triples"], list)


def test_failures_are_not_cached(tmp_path: Path) -> None:
    cache = MemoryCache()
    LLMTripleExtractor(lambda p: "nonsense", cache=cache, model_identity="bad").extract_many(
        DOCS[:1]
    )
    assert len(cache) == 0


def test_corrupt_entries_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    model = CountingEcho()
    extractor = LLMTripleExtractor(model, cache=path, model_identity="echo")
    run(extractor, DOCS[:1])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE sarg_extraction SET value = 'not json'")
    outcomes = run(LLMTripleExtractor(model, cache=path, model_identity="echo"), DOCS[:1])
    assert model.calls == 2 and len(outcomes[0].triples) == 2


class BytesStore:
    """A LangChain-style BaseStore[str, bytes] (duck-typed: mget / mset)."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def mget(self, keys: list[str]) -> list[bytes | None]:
        return [self.data.get(k) for k in keys]

    def mset(self, pairs: list[tuple[str, bytes]]) -> None:
        for key, value in pairs:
            assert isinstance(value, bytes)
            self.data[key] = value


def test_key_value_store_backend() -> None:
    store = BytesStore()
    model = CountingEcho()
    run(LLMTripleExtractor(model, cache=store, model_identity="echo"))
    assert len(store.data) == 3 and all(k.startswith("sarg-extraction/") for k in store.data)
    run(LLMTripleExtractor(model, cache=store, model_identity="echo"))
    assert model.calls == 3


def test_langchain_in_memory_byte_store_works_as_cache() -> None:
    storage = pytest.importorskip("langchain_core.stores")
    store = storage.InMemoryByteStore()
    model = CountingEcho()
    for _ in range(2):
        run(LLMTripleExtractor(model, cache=store, model_identity="echo"))
    assert model.calls == 3


def test_cache_key_parts() -> None:
    base = cache_key("text", "model", "prompt")
    assert base == cache_key("text", "model", "prompt")
    assert (
        len(
            {
                base,
                cache_key("text2", "model", "prompt"),
                cache_key("text", "m2", "prompt"),
                cache_key("text", "model", "p2"),
            }
        )
        == 4
    )


def test_as_cache_rejects_other_objects(tmp_path: Path) -> None:
    assert as_cache(None) is None
    assert isinstance(as_cache(tmp_path / "x.sqlite"), SQLiteCache)
    assert isinstance(as_cache(BytesStore()), KeyValueStoreCache)
    with pytest.raises(ConfigError, match="cache=3"):
        as_cache(3)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match="cannot be used as an SQLite cache"):
        SQLiteCache(blocker / "cache.sqlite")


def test_sqlite_cache_survives_concurrent_thread_writers(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "c.sqlite")

    def writer(n: int) -> None:
        for i in range(50):
            cache.set_many({f"{n}-{i}": {"triples": [], "n": n}})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 400
    assert cache.get_many(["3-7"]) == {"3-7": {"triples": [], "n": 3}}
    cache.close()


def _process_writer(path: str, n: int) -> None:
    cache = SQLiteCache(path)
    for i in range(40):
        cache.set_many({f"{n}-{i}": {"triples": [n, i]}})
    cache.close()


def test_sqlite_cache_survives_concurrent_process_writers(tmp_path: Path) -> None:
    path = str(tmp_path / "p.sqlite")
    SQLiteCache(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process_writer, args=(path, n)) for n in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs)
    assert len(SQLiteCache(path)) == 120


def test_async_batch_with_cache(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    model = CountingEcho()
    extractor = LLMTripleExtractor(model, cache=path, model_identity="echo")
    first = asyncio.run(extractor.aextract_many(DOCS))
    second = asyncio.run(extractor.aextract_many(DOCS))
    assert model.calls == 3
    assert triples_of(first) == triples_of(second)


class BrokenCache:
    def get_many(self, keys: list[str]) -> dict[str, Any]:
        raise OSError("disk on fire")

    def set_many(self, items: dict[str, Any]) -> None:
        raise OSError("disk on fire")


def test_a_broken_cache_never_stops_extraction() -> None:
    outcomes = run(LLMTripleExtractor(CountingEcho(), cache=BrokenCache(), model_identity="echo"))
    assert len(triples_of(outcomes)) == 4
    assert sum(o.stats.get("cache_errors", 0) for o in outcomes) == 1 + 3


# --------------------------------------------------------------------------- damaged files


def _filled(path: Path, n: int = 400) -> None:
    cache = SQLiteCache(path)
    cache.set_many({f"k{i}": {"triples": [], "pad": "x" * 400} for i in range(n)})
    cache.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def test_garbage_over_the_file_is_moved_aside_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cache.sqlite"
    _filled(path)
    wal = path.with_name("cache.sqlite-wal")
    wal.write_bytes(b"stale wal")
    path.write_bytes(b"\x00garbage" * 4096)
    with caplog.at_level("WARNING", logger="sarg_integrations.extraction.llm.cache"):
        cache = SQLiteCache(path)
    assert cache.recovered_from is not None
    assert cache.recovered_from.read_bytes().startswith(b"\x00garbage")
    assert Path(f"{cache.recovered_from}-wal").read_bytes() == b"stale wal"
    (record,) = [r for r in caplog.records if "is damaged" in r.getMessage()]
    assert "not an SQLite file" in record.getMessage()
    assert str(cache.recovered_from) in record.getMessage()
    assert len(cache) == 0
    cache.set_many({"new": {"triples": []}})
    assert cache.get_many(["new"]) == {"new": {"triples": []}}
    cache.close()


@pytest.mark.parametrize("damage", ["torn copy", "garbage page"])
def test_damage_inside_a_valid_header_is_detected(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "cache.sqlite"
    _filled(path)
    data = bytearray(path.read_bytes())
    if damage == "torn copy":
        data = data[: len(data) // 2]
    else:
        data[8192 : 8192 + 4096] = bytes(range(256)) * 16
    path.write_bytes(bytes(data))
    cache = SQLiteCache(path)
    assert cache.recovered_from is not None and len(cache) == 0
    cache.close()
    again = SQLiteCache(path)  # the rebuilt file is healthy: no second move
    assert again.recovered_from is None
    moved = list(tmp_path.glob("cache.sqlite.corrupt-*"))
    assert [p for p in moved if not p.name.endswith(("-wal", "-shm"))] == [cache.recovered_from]
    again.close()


def test_healthy_and_older_caches_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with sqlite3.connect(path) as conn:  # a cache written before the format table existed
        conn.execute(
            "CREATE TABLE sarg_extraction (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
            "created REAL NOT NULL)"
        )
        conn.execute("INSERT INTO sarg_extraction VALUES ('k', '{\"triples\": []}', 0)")
    cache = SQLiteCache(path)
    assert cache.recovered_from is None
    assert cache.get_many(["k"]) == {"k": {"triples": []}}
    cache.close()


def test_a_foreign_table_or_a_newer_format_is_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "app.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE sarg_extraction (id INTEGER, name TEXT)")
    with pytest.raises(ConfigError, match=r"columns \['id', 'name'\].*pass another file path"):
        SQLiteCache(foreign)
    newer = tmp_path / "newer.sqlite"
    SQLiteCache(newer).close()
    with sqlite3.connect(newer) as conn:
        conn.execute("UPDATE sarg_extraction_meta SET value = '99' WHERE name = 'format'")
    with pytest.raises(ConfigError, match=r"cache format '99'.*reads format 1"):
        SQLiteCache(newer)


# --------------------------------------------------------------------------- cache URLs


@pytest.mark.parametrize(
    "url", ["memcached://127.0.0.1:11211", "http://cache:80/", "s3://bucket/cache", "file:///x"]
)
def test_an_unsupported_url_scheme_is_a_config_error_not_a_path(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    expected = r"not supported; use redis://HOST:PORT/DB.*sqlite"
    with pytest.raises(ConfigError, match=expected) as info:
        LLMTripleExtractor(CountingEcho(), cache=url, model_identity="echo")
    assert info.value.field == "cache" and info.value.value == url
    assert list(tmp_path.iterdir()) == []


def test_a_redis_url_never_becomes_a_local_sqlite_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("redis")
    from sarg_integrations.extraction.llm.redis_cache import RedisCache

    monkeypatch.chdir(tmp_path)
    cache = as_cache("redis://127.0.0.1:1/0")  # nothing listens there; no connection yet
    assert isinstance(cache, RedisCache) and list(tmp_path.iterdir()) == []


def test_a_redis_url_without_the_client_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from sarg_integrations.errors import MissingDependencyError

    monkeypatch.setitem(__import__("sys").modules, "redis", None)
    with pytest.raises(MissingDependencyError, match=r"sarg-integrations\[redis\]"):
        as_cache("redis://127.0.0.1:6379/0")


def test_an_unreachable_redis_degrades_to_no_cache() -> None:
    pytest.importorskip("redis")
    extractor = LLMTripleExtractor(
        CountingEcho(), cache="redis://127.0.0.1:1/0?timeout=0.2", model_identity="echo"
    )
    outcomes = run(extractor)
    assert len(triples_of(outcomes)) == 4
    assert sum(o.stats["cache_errors"] for o in outcomes) == 1 + 3


def test_sqlite_urls_and_redis_options_are_checked(tmp_path: Path) -> None:
    cache = as_cache(f"sqlite://{tmp_path}/c.sqlite")
    assert isinstance(cache, SQLiteCache) and cache.path == tmp_path / "c.sqlite"
    pytest.importorskip("redis")
    with pytest.raises(ConfigError, match=r"ttl=-5 is invalid"):
        as_cache("redis://127.0.0.1:1/0?ttl=-5")
    with pytest.raises(ConfigError, match=r"timeout=soon is invalid"):
        as_cache("redis://127.0.0.1:1/0?timeout=soon")
    with pytest.raises(ConfigError, match=r"not a usable Redis URL"):
        as_cache("redis://127.0.0.1:notaport/0")


def test_a_value_that_is_not_json_in_a_byte_store_is_reported() -> None:
    store = BytesStore()
    extractor = LLMTripleExtractor(CountingEcho(), cache=store, model_identity="echo")
    key = extractor.cache_key(DOCS[2].text)
    store.data["sarg-extraction/" + key] = b"\x80\x04not json"
    (outcome,) = extractor.extract_many(DOCS[2:])
    assert outcome.stats["cache_invalid_entries"] == 1 and len(outcome.triples) == 1
