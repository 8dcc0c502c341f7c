"""``sarg train-extractor`` and ``--extractor`` on ``sarg run``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sarg_integrations import cli


def test_extractor_and_llm_together_are_refused(tmp_path: Path, capsys) -> None:
    doc = tmp_path / "d.txt"
    doc.write_text("Heavy rain causes floods.")
    code = cli.main(["run", "-q", "Why floods?", "-d", str(doc), "--extractor", "rules", "--llm", "openai:x"])
    assert code == 2
    assert "--extractor rules and --llm openai:x both choose the extractor" in capsys.readouterr().err


def test_unknown_extractor_is_a_clear_error(tmp_path: Path, capsys) -> None:
    doc = tmp_path / "d.txt"
    doc.write_text("Heavy rain causes floods.")
    assert cli.main(["run", "-q", "Why floods?", "-d", str(doc), "--extractor", "nope"]) == 2
    assert "extractor='nope' is neither tagger, rules, union" in capsys.readouterr().err


def test_train_extractor_bad_data_names_file_and_line(tmp_path: Path, capsys) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text('{"text": "Rain fell.", "pairs": []}\n{"text": "x", "pairs": [{"cause": "y", "effect": "x"}]}\n')
    assert cli.main(["train-extractor", "--data", str(data), "--out", str(tmp_path / "m")]) == 2
    assert f"{data}:2: the cause 'y' does not occur" in capsys.readouterr().err


def test_train_extractor_missing_file(tmp_path: Path, capsys) -> None:
    assert cli.main(["train-extractor", "--data", str(tmp_path / "no.csv"), "--out", str(tmp_path / "m")]) == 2
    assert "no.csv' does not exist or is not a file" in capsys.readouterr().err


@pytest.mark.slow
def test_train_extractor_end_to_end(tmp_path: Path, capsys) -> None:
    rows = [
        {"text": f"Storm {i} caused floods in the valley.", "doc_id": i,
         "pairs": [{"cause": f"Storm {i}", "effect": "floods in the valley", "signal": "caused"}]}
        for i in range(10)
    ]
    data = tmp_path / "pairs.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "model"
    code = cli.main(["train-extractor", "--data", str(data), "--dev", str(data), "--out", str(out),
                     "--max-steps", "2", "--rank", "2", "--no-progress"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["steps"] == 2 and set(report["dev"]) >= {"strict_f1", "relaxed_recall"}
    assert (out / "tagger.json").is_file() and (out / "tagger.safetensors").is_file()
