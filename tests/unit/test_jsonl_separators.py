"""Issue 16, item 6: JSON Lines split on ``\\n`` only, never at U+2028/U+2029/U+0085."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sarg_integrations.direction.data import read_queries
from sarg_integrations.evaluation import datasets, harness
from sarg_integrations.io import load_documents

# What json.dumps(ensure_ascii=False) writes raw inside a string.
SEPARATORS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c"]


@pytest.mark.parametrize("sep", SEPARATORS)
def test_docs_loader_keeps_text_with_unicode_line_separators(tmp_path: Path, sep: str) -> None:
    text = f"Rain fell.{sep}Roads flooded."
    file = tmp_path / "docs.jsonl"
    file.write_text(json.dumps({"id": "a", "text": text}, ensure_ascii=False) + "\n", encoding="utf-8")
    [document] = load_documents([file])
    assert document.text == text


def test_crlf_lines_still_split() -> None:
    from sarg_integrations.io import split_json_lines

    assert split_json_lines('{"a": 1}\r\n{"b": 2}\r\n') == ['{"a": 1}', '{"b": 2}', ""]


def test_eval_resume_reads_records_with_unicode_line_separators(tmp_path: Path) -> None:
    settings = {"limit": 1}
    path = tmp_path / "records.jsonl"
    record = {"id": "q1", "answer": "a\u2028b\x85c"}
    path.write_text(
        json.dumps({"_settings": settings}) + "\n" + json.dumps(record, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    assert harness._read_records(path, settings) == {"q1": record}


def test_dataset_jsonl_rows_with_unicode_line_separators(tmp_path: Path) -> None:
    file = tmp_path / "rows.jsonl"
    rows = [{"question": "why\u2029?"}, {"question": "how\u2028?"}]
    file.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    assert list(datasets._rows(file, "musique")) == rows


def test_direction_queries_jsonl_with_unicode_line_separators(tmp_path: Path) -> None:
    file = tmp_path / "queries.jsonl"
    file.write_text(json.dumps({"query": "why\u2028did rain fall?"}, ensure_ascii=False), encoding="utf-8")
    assert read_queries(file) == ["why\u2028did rain fall?"]
