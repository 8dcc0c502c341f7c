"""The Redis extraction cache against a real ``redis-server`` (skipped when none can start).

``.ci/run`` installs the Debian ``redis-server`` package when it is missing; the
``redis_server`` fixture starts a private server on a free port in a temporary folder.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
import time
from typing import Any

import pytest
from fakes import CountingEcho
from redis_support import RedisServer, corpus, extract_in_process

from sarg_integrations import LLMTripleExtractor
from sarg_integrations.extraction.llm.cache import as_cache
from sarg_integrations.schema import SourceDocument

pytest.importorskip("redis", reason='the redis client is not installed (pip install "redis>=5")')

from sarg_integrations.extraction.llm.redis_cache import DEFAULT_NAMESPACE, RedisCache


def docs_of(pairs: list[tuple[str, str]]) -> list[SourceDocument]:
    return [SourceDocument(i, t) for i, t in pairs]


def total(outcomes: list[Any], key: str) -> int:
    return sum(int(o.stats.get(key, 0)) for o in outcomes)


def test_a_redis_url_is_a_redis_cache_not_a_local_folder(
    redis_server: RedisServer, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cache = as_cache(redis_server.url)
    assert isinstance(cache, RedisCache)
    assert list(tmp_path.iterdir()) == []  # no "redis:" folder, no SQLite file


def test_entries_are_namespaced_json_and_reused(redis_server: RedisServer) -> None:
    model = CountingEcho()
    extractor = LLMTripleExtractor(model, cache=redis_server.url, model_identity="echo")
    first = extractor.extract_many(docs_of(corpus(5)))
    assert model.calls == 5
    client = redis_server.client()
    keys = sorted(k.decode() for k in client.keys("*"))
    assert len(keys) == 5 and all(k.startswith(DEFAULT_NAMESPACE) for k in keys)
    value = json.loads(client.get(keys[0]))
    assert value["model"] == "echo" and isinstance(value["triples"], list)
    assert client.ttl(keys[0]) == -1  # no TTL unless asked

    again = CountingEcho()
    second = LLMTripleExtractor(again, cache=redis_server.url, model_identity="echo").extract_many(
        docs_of(corpus(5))
    )
    assert again.calls == 0 and total(second, "cache_hits") == 5
    assert [o.triples for o in second] == [o.triples for o in first]

    other = CountingEcho()  # another model identity: its own keys, no stale answers
    LLMTripleExtractor(other, cache=redis_server.url, model_identity="echo-2").extract_many(
        docs_of(corpus(5))
    )
    assert other.calls == 5 and len(client.keys("*")) == 10


def test_ttl_from_the_url_or_the_argument(redis_server: RedisServer) -> None:
    cache = RedisCache(redis_server.url + "?ttl=120")
    cache.set_many({"k": {"triples": []}})
    ttl = redis_server.client().ttl(DEFAULT_NAMESPACE + "k")
    assert 0 < ttl <= 120
    RedisCache(redis_server.url, ttl=5, namespace="other/").set_many({"k": {"triples": []}})
    assert 0 < redis_server.client().ttl("other/k") <= 5
    assert RedisCache(redis_server.url, namespace="other/").keys() == ["k"]


def test_four_processes_share_one_server_without_losing_entries(redis_server: RedisServer) -> None:
    # 4 processes over overlapping slices of 60 documents (each document in 1 or 2 slices)
    slices = [corpus(20, offset) for offset in (0, 13, 26, 40)]
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        results = pool.starmap(extract_in_process, [(redis_server.url, s) for s in slices])
    assert all(r["cache_errors"] == 0 for r in results)
    distinct = {text for s in slices for _, text in s}
    assert len(distinct) == 60
    # calls >= 60: two processes may both miss a shared chunk before either writes it
    assert sum(r["calls"] for r in results) >= 60
    assert len(RedisCache(redis_server.url)) == 60  # 0 lost entries

    model = CountingEcho()
    outcomes = LLMTripleExtractor(
        model, cache=redis_server.url, model_identity="echo"
    ).extract_many(docs_of(corpus(60)))
    assert model.calls == 0 and total(outcomes, "cache_hits") == 60
    assert sum(len(o.triples) for o in outcomes) == 60


def test_a_server_killed_mid_run_degrades_to_no_cache(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    def kill_on_fourth_call(n: int) -> None:
        if n == 4:
            redis_server.kill()

    model = CountingEcho(on_call=kill_on_fourth_call)
    extractor = LLMTripleExtractor(
        model, cache=redis_server.url, model_identity="echo", max_concurrency=1
    )
    with caplog.at_level("WARNING"):
        outcomes = extractor.extract_many(docs_of(corpus(10)))
    assert model.calls == 10
    assert sum(len(o.triples) for o in outcomes) == 10  # every query completed
    assert all(o.error is None for o in outcomes)
    # the writes after calls 4..10 failed, and, depending on timing, the writes of earlier
    # calls still in flight when the server died (seen: 7, 8 and 9 on a loaded machine)
    assert 7 <= total(outcomes, "cache_errors") <= 10
    assert any("unavailable" in r.getMessage() for r in caplog.records)

    started = time.perf_counter()  # the server stays down: the next batch does not wait on it
    later = extractor.extract_many(docs_of(corpus(10, 100)))
    assert time.perf_counter() - started < 5
    assert sum(len(o.triples) for o in later) == 10
    assert total(later, "cache_errors") >= 1


def test_a_stalled_server_is_a_timeout_not_a_hang(redis_server: RedisServer) -> None:
    cache = RedisCache(redis_server.url, timeout=0.3, retry_after=0.5)
    extractor = LLMTripleExtractor(CountingEcho(), cache=cache, model_identity="echo")
    os.kill(redis_server.process.pid, signal.SIGSTOP)
    try:
        started = time.perf_counter()
        outcomes = extractor.extract_many(docs_of(corpus(4)))
        assert time.perf_counter() - started < 5
    finally:
        os.kill(redis_server.process.pid, signal.SIGCONT)
    assert sum(len(o.triples) for o in outcomes) == 4
    assert total(outcomes, "cache_errors") >= 1
    time.sleep(0.6)  # past retry_after: the cache is used again
    model = CountingEcho()
    LLMTripleExtractor(model, cache=cache, model_identity="echo").extract_many(docs_of(corpus(2)))
    assert len(cache) == 2


def test_a_value_that_is_not_json_is_ignored_and_reported(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    extractor = LLMTripleExtractor(CountingEcho(), cache=redis_server.url, model_identity="echo")
    (doc,) = docs_of(corpus(1))
    key = extractor.cache_key(extractor.chunk(doc)[0].text)
    client = redis_server.client()
    client.set(DEFAULT_NAMESPACE + key, b"\x80\x04\x95pickled by another tool")
    with caplog.at_level("WARNING"):
        (outcome,) = extractor.extract_many([doc])
    assert len(outcome.triples) == 1
    assert outcome.stats["cache_invalid_entries"] == 1 and outcome.stats["llm_calls"] == 1
    assert any("not valid JSON" in r.getMessage() for r in caplog.records)
    assert json.loads(client.get(DEFAULT_NAMESPACE + key))["model"] == "echo"  # repaired


def test_fill_cache_skips_cached_chunks(redis_server: RedisServer) -> None:
    model = CountingEcho()
    extractor = LLMTripleExtractor(model, cache=redis_server.url, model_identity="echo")
    texts = [t for _, t in corpus(6)]
    first = extractor.fill_cache(texts[:4])
    assert (first["extracted"], first["cached"], first["llm_calls"]) == (4, 0, 4)
    second = extractor.fill_cache(texts)
    assert (second["chunks"], second["extracted"], second["cached"]) == (6, 2, 4)
    assert model.calls == 6


def test_concurrent_threads_share_one_cache_object(redis_server: RedisServer) -> None:
    cache = RedisCache(redis_server.url)

    def writer(n: int) -> None:
        for i in range(25):
            cache.set_many({f"{n}-{i}": {"triples": [], "n": n}})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 100
    assert cache.get_many(["2-3", "missing"]) == {"2-3": {"triples": [], "n": 2}}
