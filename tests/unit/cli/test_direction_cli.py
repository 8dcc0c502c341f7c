"""The ``sarg direction``, ``train-direction`` and ``distill-direction`` commands."""

from __future__ import annotations

import json

import pytest

from sarg_integrations.cli import main
from sarg_integrations.direction import load_direction_dataset


@pytest.mark.slow
def test_direction_json(capsys):
    code = main(
        ["direction", "--json", "Why did technology stocks sell off?", "What does smoking lead to?"]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["label"] for r in out] == ["backward", "forward"]
    assert set(out[0]) == {"query", "label", "probabilities"}
    assert set(out[0]["probabilities"]) == {"forward", "backward", "bidirectional"}


@pytest.mark.slow
def test_direction_text_and_margin(capsys):
    assert main(["direction", "How are inflation and margin calls connected?"]) == 0
    assert capsys.readouterr().out.startswith("bidirectional")
    assert main(["direction", "--margin", "1", "What does smoking lead to?"]) == 0
    assert "fell back" in capsys.readouterr().out


@pytest.mark.slow
def test_direction_text_escapes_control_characters_of_the_query(capsys):
    assert main(["direction", "Why did \x1b[2Jprices\rfall?"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out
    assert "\\x1b" in out  # shown as a visible escape


def test_direction_bad_input(capsys):
    assert main(["direction", "  "]) == 2
    assert main(["direction", "--margin", "2", "Why?"]) == 2
    assert main(["direction", "--model", "/nonexistent/head.json", "Why?"]) == 2
    assert "no direction classifier" in capsys.readouterr().err


@pytest.mark.slow
def test_train_direction_on_a_small_file(tmp_path, capsys):
    rows = load_direction_dataset()
    small = [r for r in rows if r["split"] == "train"][:60] + [
        r for r in rows if r["split"] == "test"
    ][:15]
    data = tmp_path / "small.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in small))
    out = tmp_path / "model"
    assert (
        main(["train-direction", "--data", str(data), "--out", str(out), "--ngram-buckets", "64"])
        == 0
    )
    text = capsys.readouterr().out
    assert "Accuracy on the test split (15 queries)" in text and "bidirectional" in text
    assert (out / "direction_head.json").is_file()
    assert main(["direction", "--model", str(out), "--json", "Why?"]) == 0


def test_train_direction_with_setfit_missing_says_how_to_install(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "setfit", None)
    assert main(["train-direction", "--trainer", "setfit", "--pairs", "16"]) != 0
    assert "sarg-integrations[train]" in capsys.readouterr().err


def test_distill_direction_with_a_fake_llm(tmp_path, monkeypatch, capsys):
    from sarg_integrations.models import specs

    monkeypatch.setattr(specs, "resolve_llm_spec", lambda spec, **kw: lambda prompt: "Backward.")
    queries = tmp_path / "q.txt"
    queries.write_text("Why did sales drop?\nWhy is the server slow?\n")
    out = tmp_path / "labeled.jsonl"
    assert (
        main(
            [
                "distill-direction",
                "--llm",
                "openai:gpt-4o-mini",
                "--queries",
                str(queries),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "Labeled 2 of 2" in capsys.readouterr().out
    assert [r["label"] for r in load_direction_dataset(out)] == ["backward", "backward"]


def test_distill_direction_missing_queries(tmp_path, capsys):
    assert (
        main(
            [
                "distill-direction",
                "--llm",
                "openai:x",
                "--queries",
                str(tmp_path / "no.txt"),
                "--out",
                str(tmp_path / "o.jsonl"),
            ]
        )
        == 2
    )
    assert "does not exist" in capsys.readouterr().err
