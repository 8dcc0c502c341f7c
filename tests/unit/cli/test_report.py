"""The ``sarg run`` report: untrusted text cannot drive the terminal or blur ids (issue 16)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from cli_support import fake_pipeline  # noqa: F401 - a fixture

from sarg_integrations import cli
from sarg_integrations.cli.common import emit
from sarg_integrations.cli.report import show_id

ESC = "\x1b"


def test_emit_escapes_control_characters_but_keeps_lines():
    stream = io.StringIO()
    emit([f"id {ESC}[2J{ESC}]0;title\x07", "a\rb\u2028c\u202ed", "two\nlines\tok"], stream)
    text = stream.getvalue()
    assert ESC not in text and "\r" not in text and "\u2028" not in text and "\u202e" not in text
    assert "\\x1b[2J" in text and "\\x07" in text and "\\u202e" in text
    assert text.splitlines() == [
        "id \\x1b[2J\\x1b]0;title\\x07",
        "a\\x0db\\u2028c\\u202ed",
        "two",
        "lines\tok",
    ]


def test_ids_that_could_be_misread_are_quoted():
    assert show_id("gaucher-genetics") == "gaucher-genetics"
    assert show_id("a, b") == "'a, b'"
    assert show_id("x: y") == "'x: y'"


def test_sarg_run_report_has_no_raw_escape_sequences(
    fake_pipeline: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs.jsonl"
    rows = [
        {"id": f"d1{ESC}[31m", "text": f"Storm causes rain. {ESC}[2J"},
        {"id": "d2, d3", "text": "Rain leads to flood."},
        {"id": f"empty{ESC}]0;pwned\x07", "text": " "},
    ]
    docs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code = cli.main(["run", "--query", "What does a storm lead to?", "--docs", str(docs),
                     "--show-prompt"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert ESC not in out and "\x07" not in out
    assert "\\x1b[31m" in out
    assert "cited by: 'd2, d3'" in out


def test_backward_hop_lines_point_like_the_chain_line() -> None:
    # Issue 16 item 16: the chain line read "flood <--[causes]-- rain" but its hop line
    # "flood -> rain", as if flood caused rain.
    from sarg_integrations import SARGPipeline
    from sarg_integrations.cli.report import report_lines
    from sarg_integrations.config import SARGConfig
    from fakes import FixedKeyphrases, HashingEmbedder, NoProfiles, PatternExtractor

    pipeline = SARGPipeline(
        SARGConfig(similarity_threshold=0.6, direction="backward"),
        extractor=PatternExtractor(lowercase=True),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("flood"),
        profile_reader=NoProfiles(),
    )
    result = pipeline.run("Why was there a flood?", ["Storm causes rain.", "Rain causes flood."])
    lines = report_lines(result)
    assert "      flood <--[causes]-- rain <--[causes]-- storm" in lines
    assert any(line.startswith("      hop 1: flood <- rain  cited by: doc-1") for line in lines)
    assert any(line.startswith("      hop 2: rain <- storm  cited by: doc-0") for line in lines)
    assert not any(" -> " in line for line in lines if "hop " in line)
