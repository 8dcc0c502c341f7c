"""The document cache in front of offline extractors (``sarg run/extract --extractor --cache``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import PatternExtractor

from sarg_integrations import cli
from sarg_integrations.extraction import choice
from sarg_integrations.extraction.base import ExtractionOutcome
from sarg_integrations.extraction.cached import CachedExtractor, offline_identity
from sarg_integrations.extraction.llm.cache import MemoryCache, SQLiteCache
from sarg_integrations.extraction.prefill import prefill
from sarg_integrations.schema import SourceDocument

DOCS = [
    SourceDocument("a", "Rain causes floods. Floods causes damage."),
    SourceDocument("b", "The museum opened."),
]


def test_second_pass_reads_the_same_triples_from_the_cache() -> None:
    inner = PatternExtractor()
    cached = CachedExtractor(inner, MemoryCache(), identity="pattern")
    first = cached.extract_many(DOCS)
    again = cached.extract_many([SourceDocument("a2", DOCS[0].text), DOCS[1]])
    assert inner.calls == 2
    assert [o.stats["cache_hits"] for o in again] == [1, 1]
    assert [t.document_id for t in again[0].triples] == ["a2", "a2"]
    strip = [
        (t.cause, t.relation, t.effect, t.relation_type, t.sentence, t.sentence_span)
        for t in first[0].triples
    ]
    assert strip == [
        (t.cause, t.relation, t.effect, t.relation_type, t.sentence, t.sentence_span)
        for t in again[0].triples
    ]
    other = CachedExtractor(PatternExtractor(), cached.cache, identity="pattern-v2")
    assert [o.stats["cache_hits"] for o in other.extract_many(DOCS)] == [0, 0]


def test_failures_are_reported_not_cached_and_a_broken_cache_is_skipped() -> None:
    cache = MemoryCache()
    failing = CachedExtractor(PatternExtractor(fail_on="Rain"), cache, identity="p")
    (outcome,) = failing.extract_many(DOCS[:1])
    assert "fake extractor failure" in (outcome.error or "") and len(cache) == 0

    class Broken:
        def get_many(self, keys: Any) -> dict[str, Any]:
            raise OSError("down")

        def set_many(self, items: Any) -> None:
            raise OSError("down")

    outcomes = CachedExtractor(PatternExtractor(), Broken(), identity="p").extract_many(DOCS)
    assert len(outcomes[0].triples) == 2 and outcomes[0].stats["cache_errors"] == 2


def test_fill_cache_and_prefill_with_an_offline_extractor() -> None:
    cache = MemoryCache()
    report = prefill(DOCS, lambda: CachedExtractor(PatternExtractor(), cache, identity="p"))
    assert (report.chunks, report.extracted, report.cached, report.llm_calls) == (2, 2, 0, 0)
    inner = PatternExtractor()
    outcomes = CachedExtractor(inner, cache, identity="p").extract_many(DOCS)
    assert inner.calls == 0 and isinstance(outcomes[0], ExtractionOutcome)


def test_offline_identity_names_the_version_the_extractor_and_a_folder_by_content(
    tmp_path: Path,
) -> None:
    assert offline_identity("rules").endswith("/rules/reasoning")
    folder = tmp_path / "tagger"
    folder.mkdir()
    (folder / "tagger.json").write_text('{"v": 1}')
    first = offline_identity(folder)
    (folder / "tagger.json").write_text('{"v": 2}')
    assert "tagger-folder:" in first and offline_identity(folder) != first


def test_cli_extract_then_run_with_an_offline_extractor(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[PatternExtractor] = []

    def fake_resolve(spec: Any, schema: str = "reasoning") -> PatternExtractor:
        built.append(PatternExtractor())
        return built[-1]

    monkeypatch.setattr(choice, "resolve_extractor", fake_resolve)
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "text": "Rain causes floods."}\n', encoding="utf-8")
    cache = tmp_path / "c.sqlite"
    argv = ["extract", "-d", str(docs), "--extractor", "rules", "--cache", str(cache)]
    assert cli.main([*argv, "--no-progress"]) == 0
    assert "extracted: 1" in capsys.readouterr().out
    assert len(SQLiteCache(cache)) == 1
    from sarg_integrations.extraction.cached import cached_offline_extractor

    reader = cached_offline_extractor("rules", str(cache))  # what `sarg run` builds
    (outcome,) = reader.extract_many([SourceDocument("q", "Rain causes floods.")])
    assert outcome.stats["cache_hits"] == 1 and built[-1].calls == 0


def test_sarg_run_puts_the_cache_in_front_of_an_offline_extractor(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import argparse

    from sarg_integrations.config import SARGConfig
    from sarg_integrations.errors import InputError

    monkeypatch.setattr(
        choice, "resolve_extractor", lambda spec, schema="reasoning": PatternExtractor()
    )
    args = argparse.Namespace(
        extractor="rules", cache=str(tmp_path / "c.sqlite"), llm=None, max_concurrency=None
    )
    cli.run._check_llm_options(args)  # --cache is accepted with --extractor
    assert isinstance(cli.run._offline_extractor(args, SARGConfig()), CachedExtractor)
    args.cache = None
    assert isinstance(cli.run._offline_extractor(args, SARGConfig()), PatternExtractor)
    with pytest.raises(InputError, match="only applies to LLM extraction"):
        cli.run._check_llm_options(
            argparse.Namespace(extractor=None, llm=None, cache="x", max_concurrency=None)
        )
