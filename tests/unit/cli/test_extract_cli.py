"""``sarg extract``: pre-extraction from the command line (a scripted model, in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import CountingEcho

from sarg_integrations import LLMTripleExtractor, cli
from sarg_integrations.io import load_documents
from sarg_integrations.models import specs


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> CountingEcho:
    fake = CountingEcho()
    monkeypatch.setattr(specs, "resolve_llm_spec", lambda spec, **kw: fake)
    return fake


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        text = " ".join(f"Factor {i}-{j} causes outcome {i}-{j}." for j in range(4))
        (folder / f"doc{i}.txt").write_text(text + "\nThe museum opened.\n", encoding="utf-8")
    return folder


def test_extract_fills_the_cache_that_queries_then_read(
    model: CountingEcho, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache, out = tmp_path / "cache.sqlite", tmp_path / "summary.json"
    argv = ["extract", "-d", str(corpus), "--llm", "openai:gpt-4o-mini", "--cache", str(cache)]
    assert cli.main([*argv, "--json", str(out), "--no-progress"]) == 0
    summary = json.loads(out.read_text())
    assert summary["chunks"] == 3 and summary["extracted"] == 3 and summary["llm_calls"] == 3
    assert summary["documents"] == 3 and summary["where"] == "this process"
    printed = capsys.readouterr().out
    assert "cached already: 0   extracted: 3   failed: 0" in printed
    assert "model calls: 3" in printed

    again = CountingEcho()  # a query-time extractor, as `sarg run --llm … --cache …` builds it
    outcomes = LLMTripleExtractor(again, cache=str(cache)).extract_many(
        load_documents([str(corpus)])
    )
    assert again.calls == 0 and sum(len(o.triples) for o in outcomes) == 12

    assert cli.main([*argv, "--json", "-"]) == 0  # resumed: nothing left to do
    captured = capsys.readouterr()
    assert json.loads(captured.out)["cached"] == 3 and model.calls == 3
    assert "cached already: 3" in captured.err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--extractor", "rules", "--llm", "openai:m"], "both choose the extractor"),
        ([], "needs the extractor: add --llm"),
        (["--extractor", "no-such-extractor"], "neither tagger, rules, union nor a folder"),
        (["--llm", "openai:m", "--cache", "memcached://h:1"], "URL scheme 'memcached'"),
        (["--llm", "nosuchprovider:m"], "nosuchprovider"),
    ],
)
def test_extract_usage_errors_exit_2_with_the_fix(
    extra: list[str], message: str, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["extract", "-d", str(corpus), "--cache", str(tmp_path / "c.sqlite"), *extra]
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_ray_and_workers_choose_the_executor(tmp_path: Path) -> None:
    from sarg_integrations.cli.extract import build_executor

    parser = cli._build_parser()
    base = ["extract", "-d", "x", "--llm", "openai:m", "--cache", "c.sqlite"]
    assert str(build_executor(parser.parse_args(base))) == "this process"
    assert str(build_executor(parser.parse_args([*base, "--workers", "3"]))) == "3 local processes"
    ray = build_executor(parser.parse_args([*base, "--ray"]))
    assert str(ray) == "Ray (4 actor(s), a local Ray instance)"
    ray = build_executor(parser.parse_args([*base, "--ray", "auto", "--workers", "8"]))
    assert (ray.address, ray.workers) == ("auto", 8)


def test_the_run_command_refuses_an_unsupported_cache_url(
    model: CountingEcho, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "-q", "Why?", "-d", str(tmp_path), "--llm", "openai:m", "--cache", "ftp://x/y"]
    (tmp_path / "a.txt").write_text("Rain causes floods.", encoding="utf-8")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "URL scheme 'ftp'" in err and "redis://HOST:PORT/DB" in err
    assert not (Path.cwd() / "ftp:").exists()
