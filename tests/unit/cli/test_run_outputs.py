"""``sarg run --json/--html``: outputs are replaced atomically (issue 16, item 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import fake_pipeline  # noqa: F401 - a fixture

from sarg_integrations import cli
from sarg_integrations.schema import SARGResult

QUERY = "What does a storm lead to?"
OLD = '{"old": "valid result"}\n'


@pytest.fixture
def docs(tmp_path: Path, fake_pipeline: None) -> Path:
    deep: dict = {"leaf": True}
    for _ in range(700):
        deep = {"down": deep}
    rows = [
        {"id": "d1", "text": "Storm causes rain.", "metadata": {"deep": deep}},
        {"id": "d2", "text": "Rain leads to flood."},
    ]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_metadata_700_levels_deep_writes_valid_json(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "result.json"
    out.write_text(OLD, encoding="utf-8")
    code = cli.main(["run", "-q", QUERY, "-d", str(docs), "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    assert json.loads(out.read_text(encoding="utf-8"))["query"] == QUERY


def test_a_failing_serialisation_keeps_the_old_file(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: SARGResult, **_: object) -> str:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(SARGResult, "to_json", broken)
    out = tmp_path / "result.json"
    out.write_text(OLD, encoding="utf-8")
    with pytest.raises(RecursionError):
        cli.main(["run", "-q", QUERY, "-d", str(docs), "--json", str(out)])
    assert out.read_text(encoding="utf-8") == OLD  # was truncated to 0 bytes
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
