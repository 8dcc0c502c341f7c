"""Tests of the ``sarg`` command line, in-process with fakes (plus one slow end-to-end run)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fakes import HashingEmbedder, PatternExtractor, QueryWords

from sarg_integrations import cli
from sarg_integrations.config import SARGConfig
from sarg_integrations.direction import CueWordDirectionClassifier
from sarg_integrations.extraction import runner
from sarg_integrations.pipeline import SARGPipeline
from sarg_integrations.schema import SourceDocument

Capsys = pytest.CaptureFixture[str]
Configs = list[SARGConfig]

RESULT_FIELDS = {
    "query",
    "document_ids",
    "triples",
    "graph_size",
    "graph",
    "keyphrases",
    "entry_nodes",
    "direction",
    "candidate_chains",
    "chains",
    "evidence",
    "prompt",
    "fallback_reason",
    "skipped_documents",
    "stats",
    "config",
    "strategy",
    "trace",
    "notes",
}

@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[SARGConfig]:
    """Replace the CLI's pipeline with fakes; collect the configs it was built with."""
    configs: list[SARGConfig] = []

    def fake_build(config: SARGConfig) -> SARGPipeline:
        configs.append(config)
        return SARGPipeline(
            config,
            extractor=PatternExtractor(lowercase=True, fail_on="EXPLODE"),
            embedder=HashingEmbedder(dim=512),
            keyphrase_extractor=QueryWords(),
            direction_classifier=CueWordDirectionClassifier(),
        )

    monkeypatch.setattr(cli.run, "build_pipeline", fake_build)
    return configs


STORY = {
    "d1": "Storm causes rain. The sky is grey.",
    "d2": "Rain leads to flood.",
    "d3": "Flood results in damage.",
    "d4": "Museums open on Sundays.",
}
QUERY = "What does a storm lead to?"
EXPECTED = "storm --[causes]--> rain --[leads to]--> flood --[results in]--> damage"


@pytest.fixture
def story(tmp_path: Path) -> Path:
    folder = tmp_path / "story"
    folder.mkdir()
    for doc_id, text in STORY.items():
        (folder / f"{doc_id}.txt").write_text(text, encoding="utf-8")
    return folder


def run_cli(argv: list[str], capsys: Capsys) -> tuple[int, str, str]:
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --------------------------------------------------------------------------- run


def test_run_on_txt_files(built: Configs, story: Path, capsys: Capsys) -> None:
    files = [str(story / f"{d}.txt") for d in STORY]
    code, out, err = run_cli(["run", "--query", QUERY, "--docs", *files], capsys)
    assert code == 0, err
    assert err == ""
    assert "Loaded 4 document(s)" in out
    assert "Direction: forward" in out
    assert "Key phrases: storm" in out
    assert re.search(r"- storm\s+\[similarity 1\.000", out)
    assert EXPECTED in out
    assert "hop 1: storm -> rain  cited by: d1" in out
    assert "hop 3: flood -> damage  cited by: d3" in out
    assert "Graph: 4 nodes, 3 edges, 0 merges" in out
    assert "d4: no reasoning-schema triples found" in out
    assert "Timings (ms): extract" in out
    assert "total" in out
    assert "Fallback" not in out
    assert "Prompt:" not in out
    assert "Traceback" not in out + err


def test_run_on_folder_uses_file_names_as_ids(
    built: Configs, story: Path, tmp_path: Path, capsys: Capsys
) -> None:
    out_json = tmp_path / "result.json"
    argv = ["run", "-q", QUERY, "-d", str(story), "--json", str(out_json)]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert set(data) == RESULT_FIELDS
    assert data["document_ids"] == ["d1", "d2", "d3", "d4"]
    assert data["query"] == QUERY
    assert data["direction"]["direction"] == "forward"
    assert data["chains"][0]["nodes"] == ["storm", "rain", "flood", "damage"]
    assert [hop["document_ids"] for hop in data["chains"][0]["hops"]] == [["d1"], ["d2"], ["d3"]]
    assert data["graph_size"] == {"nodes": 4, "edges": 3}
    assert data["fallback_reason"] is None
    assert data["skipped_documents"] == [
        {"document_id": "d4", "reason": "no reasoning-schema triples found"}
    ]
    assert all(key in data["stats"] for key in ("time_extract_ms", "time_total_ms"))
    assert data["config"]["top_k"] == 3
    assert f"JSON result written to {out_json}" in out


def test_run_on_jsonl(built: Configs, tmp_path: Path, capsys: Capsys) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"id": f"rec-{k}", "text": v, "lang": "en"}) for k, v in STORY.items()
        ),
        encoding="utf-8",
    )
    code, out, err = run_cli(["run", "--query", QUERY, "--docs", str(path), "--json", "-"], capsys)
    assert code == 0, err
    data = json.loads(out)  # stdout holds only the JSON
    assert set(data) == RESULT_FIELDS
    assert data["document_ids"] == ["rec-d1", "rec-d2", "rec-d3", "rec-d4"]
    assert data["evidence"][0]["metadata"] == {"lang": "en", "source": str(path)}
    assert EXPECTED in err  # the report went to stderr
    assert "Loaded 4 document(s)" in err


def test_options_are_passed_through(
    built: Configs, story: Path, tmp_path: Path, capsys: Capsys
) -> None:
    out_json = tmp_path / "r.json"
    argv = [
        "run", "--query", QUERY, "--docs", str(story), "--json", str(out_json),
        "--top-k", "1", "--beam-width", "5", "--threshold", "0.25", "--max-depth", "2",
        "--direction", "bidirectional", "--schema", "generic_spo", "--evidence", "sentences",
    ]  # fmt: skip
    code, _out, err = run_cli(argv, capsys)
    assert code == 0, err
    (config,) = built
    assert config.top_k == 1
    assert config.beam_width == 5
    assert config.similarity_threshold == 0.25
    assert config.max_depth == 2
    assert config.direction is not None and config.direction.value == "bidirectional"
    assert config.schema == "generic_spo"
    assert config.evidence == "sentences"
    assert config.show_progress is False
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["config"]["top_k"] == 1
    assert data["config"]["beam_width"] == 5
    assert len(data["chains"]) <= 1
    assert all(len(chain["hops"]) <= 2 for chain in data["candidate_chains"])


def test_defaults_when_options_are_omitted(built: Configs, story: Path, capsys: Capsys) -> None:
    assert run_cli(["run", "--query", QUERY, "--docs", str(story)], capsys)[0] == 0
    assert built[0] == SARGConfig()


def test_paper_is_the_papers_setting(built: Configs, story: Path, capsys: Capsys) -> None:
    base = ["run", "--query", QUERY, "--docs", str(story), "--paper"]
    assert run_cli(base, capsys)[0] == 0
    assert built[-1] == SARGConfig.paper()
    assert built[-1].evidence_budget is None and built[-1].entry_margin == 0.0
    # An option given with --paper wins; the evidence options conflict with it.
    assert run_cli([*base, "--entry-margin", "0.1", "--top-k", "2"], capsys)[0] == 0
    assert built[-1] == SARGConfig.paper(entry_margin=0.1, top_k=2)
    code, _out, err = run_cli([*base, "--evidence-budget", "0.4"], capsys)
    assert code == 2 and "--paper" in err
    code, _out, err = run_cli([*base, "--causal-evidence-budget", "0.6"], capsys)
    assert code == 2 and "--causal-evidence-budget" in err
    assert built[-1].causal_evidence_budget is None  # the paper's setting has no budget
    # Without --paper the causal budget is an ordinary option.
    plain = ["run", "--query", QUERY, "--docs", str(story), "--causal-evidence-budget", "0.6"]
    assert run_cli(plain, capsys)[0] == 0
    assert built[-1] == SARGConfig(causal_evidence_budget=0.6)


def test_show_prompt(built: Configs, story: Path, capsys: Capsys) -> None:
    argv = ["run", "--query", QUERY, "--docs", str(story), "--show-prompt"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert "Prompt:" in out
    assert QUERY in out.split("Prompt:", 1)[1]


def test_fallback_and_extractor_errors_are_reported(
    built: Configs, tmp_path: Path, capsys: Capsys
) -> None:
    (tmp_path / "a.txt").write_text("Nothing causal here.", encoding="utf-8")
    (tmp_path / "b.txt").write_text("EXPLODE", encoding="utf-8")
    (tmp_path / "c.txt").write_text("   ", encoding="utf-8")
    code, out, err = run_cli(["run", "--query", QUERY, "--docs", str(tmp_path)], capsys)
    assert code == 0, err
    assert "Fallback: the prompt uses the flat retrieved context because no reasoning-schema" in out
    assert "b: extractor error: RuntimeError: fake extractor failure" in out
    assert "c: empty or whitespace-only text" in out
    assert "Reasoning chains: 0 kept of 0 candidate(s)" in out


def test_progress_only_on_a_terminal_with_many_documents(
    built: Configs, tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(25):
        (tmp_path / f"doc{i:02d}.txt").write_text(f"Cause{i} causes effect{i}.", encoding="utf-8")
    monkeypatch.setattr(cli.run, "isatty", lambda stream: True)
    monkeypatch.setattr(runner, "progress_bar", lambda items: items)  # no real bar
    argv = ["run", "-q", "What does cause3 lead to?", "-d", str(tmp_path)]
    assert run_cli(argv, capsys)[0] == 0
    assert run_cli([*argv, "--no-progress"], capsys)[0] == 0
    assert [c.show_progress for c in built] == [True, False]


def test_no_progress_for_few_documents_or_no_terminal(
    built: Configs, story: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli.run, "isatty", lambda stream: True)
    assert run_cli(["run", "-q", QUERY, "-d", str(story)], capsys)[0] == 0
    assert built[0].show_progress is False


# --------------------------------------------------------------------------- demo


def test_demo_uses_demo_corpus_and_default_question(
    built: Configs, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sarg_integrations import io

    text = "Gba1 mutation causes enzyme deficiency. Enzyme deficiency leads to parkinson."
    docs = [SourceDocument("gba", text)]
    monkeypatch.setattr(io, "load_demo_corpus", lambda: docs)
    code, out, err = run_cli(["demo"], capsys)
    assert code == 0, err
    assert "Demo corpus: sarg_integrations/data/demo_corpus.jsonl (1 documents)" in out
    assert f"Question: {io.DEMO_QUESTIONS[0]}" in out
    assert io.DEMO_QUESTIONS[1] in out  # listed as another question to try
    assert "Reasoning chains:" in out


def test_demo_with_question_and_json(
    built: Configs, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sarg_integrations import io

    docs = [SourceDocument(k, v) for k, v in STORY.items()]
    monkeypatch.setattr(io, "load_demo_corpus", lambda: docs)
    code, out, err = run_cli(["demo", "--question", QUERY, "--json", "-", "--show-prompt"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["query"] == QUERY
    assert f"Question: {QUERY}" in err
    assert "Prompt:" in err


def test_demo_missing_corpus_is_a_clean_error(
    built: Configs, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sarg_integrations import io
    from sarg_integrations.errors import DocumentLoadError

    def missing() -> list[SourceDocument]:
        raise DocumentLoadError("the packaged demo corpus x is missing; reinstall", path="x")

    monkeypatch.setattr(io, "load_demo_corpus", missing)
    code, out, err = run_cli(["demo"], capsys)
    assert code == 2
    assert err.startswith("sarg: error: the packaged demo corpus")
    assert "Traceback" not in err


# --------------------------------------------------------------------------- errors


def test_missing_docs_path_exits_2(built: Configs, tmp_path: Path, capsys: Capsys) -> None:
    missing = tmp_path / "missing.txt"
    code, out, err = run_cli(["run", "--query", QUERY, "--docs", str(missing)], capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("sarg: error: ")
    assert str(missing) in err and "does not exist" in err
    assert "Traceback" not in err
    assert built == []  # failed before building a pipeline


def test_bad_jsonl_exits_2(built: Configs, tmp_path: Path, capsys: Capsys) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "ok"}\n{not json}\n', encoding="utf-8")
    code, _out, err = run_cli(["run", "--query", QUERY, "--docs", str(path)], capsys)
    assert code == 2
    assert "line 2" in err and "invalid JSON" in err
    assert "Traceback" not in err


def test_unsupported_file_exits_2(built: Configs, tmp_path: Path, capsys: Capsys) -> None:
    path = tmp_path / "x.pdf"
    path.write_text("x", encoding="utf-8")
    code, _out, err = run_cli(["run", "--query", QUERY, "--docs", str(path)], capsys)
    assert code == 2
    assert "unsupported extension" in err


def test_unwritable_json_exits_2(
    built: Configs, story: Path, tmp_path: Path, capsys: Capsys
) -> None:
    target = tmp_path / "no-such-dir" / "out.json"
    code, _out, err = run_cli(["run", "-q", QUERY, "-d", str(story), "--json", str(target)], capsys)
    assert code == 2
    assert f"cannot write the --json file {target}" in err


def test_config_error_exits_2(
    monkeypatch: pytest.MonkeyPatch, story: Path, capsys: Capsys
) -> None:
    from sarg_integrations.errors import ConfigError

    def broken(config: SARGConfig) -> SARGPipeline:
        raise ConfigError("extractor=None is broken; pass an extractor", field="extractor")

    monkeypatch.setattr(cli.run, "build_pipeline", broken)
    code, _out, err = run_cli(["run", "-q", QUERY, "-d", str(story)], capsys)
    assert code == 2
    assert err == "sarg: error: extractor=None is broken; pass an extractor\n"


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("--top-k", "0", "must be >= 1"),
        ("--top-k", "abc", "expected a whole number"),
        ("--beam-width", "-2", "must be >= 1"),
        ("--max-depth", "1.5", "expected a whole number"),
        ("--threshold", "1.5", "between -1 and 1"),
        ("--threshold", "nan", "between -1 and 1"),
        ("--direction", "sideways", "invalid choice"),
    ],
)
def test_bad_option_values_are_usage_errors(
    built: Configs, story: Path, capsys: Capsys, option: str, value: str, expected: str
) -> None:
    code, _out, err = run_cli(["run", "-q", QUERY, "-d", str(story), option, value], capsys)
    assert code == 2
    assert option in err
    assert expected in err
    assert "Traceback" not in err
    assert built == []


def test_empty_query_is_a_usage_error(built: Configs, story: Path, capsys: Capsys) -> None:
    code, _out, err = run_cli(["run", "-q", "  ", "-d", str(story)], capsys)
    assert code == 2
    assert "must not be empty" in err


def test_missing_command_and_required_options(capsys: Capsys) -> None:
    assert run_cli([], capsys)[0] == 2
    code, _out, err = run_cli(["run", "--query", QUERY], capsys)
    assert code == 2
    assert "--docs" in err


def test_keyboard_interrupt_exits_130(
    monkeypatch: pytest.MonkeyPatch, story: Path, capsys: Capsys
) -> None:
    def interrupted(config: SARGConfig) -> SARGPipeline:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.run, "build_pipeline", interrupted)
    code, _out, err = run_cli(["run", "-q", QUERY, "-d", str(story)], capsys)
    assert code == 130
    assert err == "sarg: interrupted\n"


def test_version(capsys: Capsys) -> None:
    from sarg_integrations import __version__

    code, out, _err = run_cli(["--version"], capsys)
    assert code == 0
    assert out.strip() == f"sarg {__version__}"


def test_help(capsys: Capsys) -> None:
    code, out, _err = run_cli(["run", "--help"], capsys)
    assert code == 0
    assert "--top-k" in out and "--docs" in out


def test_importing_cli_does_not_import_models() -> None:
    code = (
        "import sys, sarg_integrations.cli; "
        "heavy = [m for m in ('numpy', 'torch', 'spacy', 'sentence_transformers', "
        "'sarg_integrations.pipeline') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_console_script_end_to_end_with_real_models(tmp_path: Path) -> None:
    """The real default pipeline (spaCy extractor, MiniLM, KeyBERT) finds a 3-hop chain."""
    docs = tmp_path / "docs"
    docs.mkdir()
    texts = {
        "drought": "A severe drought causes crop failure. Farmers watched the sky.",
        "harvest": "Crop failure leads to food shortages.",
        "markets": "Food shortages result in rising food prices. Traders were cautious.",
        "museum": "The city museum opened a new gallery of modern sculpture in spring.",
    }
    for name, text in texts.items():
        (docs / f"{name}.txt").write_text(text, encoding="utf-8")
    out_json = tmp_path / "result.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run(
        [
            sys.executable, "-m", "sarg_integrations.cli", "run",
            "--query", "What does a severe drought ultimately lead to?",
            "--docs", str(docs), "--json", str(out_json), "--no-progress",
        ],  # fmt: skip
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    data: dict[str, Any] = json.loads(out_json.read_text(encoding="utf-8"))
    assert set(data) == RESULT_FIELDS
    assert data["direction"]["direction"] == "forward"
    assert data["fallback_reason"] is None, data["fallback_reason"]

    def is_expected(chain: dict[str, Any]) -> bool:
        hops = chain["hops"]
        if len(hops) < 3:
            return False
        stages = [r"drought", r"crop failure", r"food shortage", r"price"]
        nodes = chain["nodes"]
        return all(re.search(p, n, re.I) for p, n in zip(stages, nodes)) and [
            h["document_ids"] for h in hops[:3]
        ] == [["drought"], ["harvest"], ["markets"]]

    assert any(is_expected(c) for c in data["chains"]), json.dumps(data["chains"], indent=1)
    assert "Reasoning chains:" in proc.stdout
