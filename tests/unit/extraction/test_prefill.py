"""Pre-extraction (``prefill``): query-time chunking, resuming, failures, processes, Ray."""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

import pytest
from fakes import CountingEcho, echo_extractor

from sarg_integrations import LLMTripleExtractor
from sarg_integrations.errors import ConfigError
from sarg_integrations.extraction.llm.cache import MemoryCache
from sarg_integrations.extraction.prefill import LocalExecutor, chunk_texts, prefill
from sarg_integrations.schema import SourceDocument


def corpus(n: int) -> list[SourceDocument]:
    """``n`` documents of several sentences (several chunks each at a small token budget)."""
    return [
        SourceDocument(
            f"d{i}",
            " ".join(f"Factor {i}-{j} causes outcome {i}-{j} in the region." for j in range(6)),
        )
        for i in range(n)
    ]


def rows(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT key, value FROM sarg_extraction").fetchall())


def test_queries_after_prefill_make_no_model_calls() -> None:
    cache = MemoryCache()
    docs = corpus(5)
    report = prefill(docs, lambda: echo_extractor(cache, max_chunk_tokens=30))
    assert report.chunks > len(docs)  # the documents were split
    assert (report.extracted, report.cached, report.failed) == (report.chunks, 0, 0)
    assert report.llm_calls == report.chunks and report.documents == 5
    model = CountingEcho()
    query_time = LLMTripleExtractor(model, cache=cache, model_identity="echo", max_chunk_tokens=30)
    outcomes = query_time.extract_many(docs[1:3])
    assert model.calls == 0 and sum(len(o.triples) for o in outcomes) == 12


def test_prefill_resumes_and_dedupes_chunks() -> None:
    cache = MemoryCache()
    docs = corpus(4)
    first = prefill(docs[:2], lambda: echo_extractor(cache, max_chunk_tokens=30))
    again = prefill(
        [*docs, SourceDocument("copy", docs[0].text)],
        lambda: echo_extractor(cache, max_chunk_tokens=30),
    )
    assert again.chunks == 2 * first.chunks  # the copy adds no chunk
    assert again.cached == first.chunks and again.extracted == first.chunks
    seen: list[tuple[int, int]] = []
    prefill(
        docs,
        lambda: echo_extractor(cache, max_chunk_tokens=30),
        batch_size=3,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen[0] == (0, again.chunks) and {t for _, t in seen} == {again.chunks}
    assert sum(d for d, _ in seen) == again.chunks and max(d for d, _ in seen) == 3


def test_failed_chunks_are_counted_not_cached_and_retried() -> None:
    cache = MemoryCache()

    def flaky() -> LLMTripleExtractor:
        def model(prompt: str) -> str:
            return "nonsense" if "Factor 1-" in prompt else CountingEcho()(prompt)

        return LLMTripleExtractor(model, cache=cache, model_identity="echo", repair=False)

    report = prefill(corpus(3), flaky)
    assert (report.chunks, report.extracted, report.failed) == (3, 2, 1)
    assert "1 chunk(s) failed" in "\n".join(report.lines())
    assert prefill(corpus(3), lambda: echo_extractor(cache)).extracted == 1


def test_chunk_texts_match_the_query_time_split_and_skip_empty_documents() -> None:
    extractor = echo_extractor(None, max_chunk_tokens=30)
    docs = [*corpus(2), SourceDocument("empty", "   ")]
    expected = [c.text for d in docs[:2] for c in extractor.chunk(d)]
    assert chunk_texts(extractor, docs) == expected
    assert chunk_texts(object(), docs[:1]) == [docs[0].text]


def test_bad_arguments_name_the_fix() -> None:
    with pytest.raises(ConfigError, match="workers=0"):
        LocalExecutor(0)
    with pytest.raises(ConfigError, match="batch_size=0"):
        prefill(corpus(1), lambda: echo_extractor(MemoryCache()), batch_size=0)
    with pytest.raises(ConfigError, match="has no fill_cache"):
        prefill(corpus(1), object)
    with pytest.raises(ConfigError, match="needs a cache"):
        prefill(corpus(1), lambda: echo_extractor(None))


def test_two_processes_write_exactly_what_one_process_writes(tmp_path: Path) -> None:
    one, two = tmp_path / "one.sqlite", tmp_path / "two.sqlite"
    docs = corpus(12)
    a = prefill(docs, functools.partial(echo_extractor, str(one), 30), batch_size=8)
    b = prefill(
        docs,
        functools.partial(echo_extractor, str(two), 30),
        executor=LocalExecutor(2),
        batch_size=8,
    )
    assert a.extracted == b.extracted == a.chunks == len(rows(one))
    assert rows(one) == rows(two)
    assert str(LocalExecutor(2)) == "2 local processes"


def test_ray_gives_exactly_the_cache_contents_of_the_local_path(tmp_path: Path) -> None:
    ray = pytest.importorskip(
        "ray", reason='ray is not installed (pip install "sarg-integrations[ray]")'
    )
    from sarg_integrations.extraction.prefill_ray import RayExecutor

    local, distributed = tmp_path / "local.sqlite", tmp_path / "ray.sqlite"
    docs = corpus(10)
    prefill(docs, functools.partial(echo_extractor, str(local), 30), batch_size=8)
    tests_dir = str(Path(__file__).resolve().parents[2])
    repo = str(Path(__file__).resolve().parents[3])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": f"{repo}:{tests_dir}"}},
    )
    try:
        report = prefill(
            docs,
            functools.partial(echo_extractor, str(distributed), 30),
            executor=RayExecutor(workers=2),
            batch_size=8,
        )
    finally:
        ray.shutdown()
    assert report.extracted == report.chunks == len(rows(local))
    assert rows(distributed) == rows(local)
