"""End-to-end `sarg eval` on three synthetic questions with fake models, and resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FixedKeyphrases, HashingEmbedder, PatternExtractor

from sarg_integrations import cli
from sarg_integrations.direction import CueWordDirectionClassifier
from sarg_integrations.errors import InputError
from sarg_integrations.evaluation import harness
from sarg_integrations.evaluation.methods import MethodSuite, long_context_reorder


def _row(i: int) -> dict:
    return {
        "id": f"{2 + i % 2}hop__{i}",
        "question": "What does heavy rain cause?",
        "answer": "crop loss",
        "answer_aliases": [],
        "paragraphs": [
            {
                "idx": 0,
                "title": "Rain",
                "paragraph_text": "Heavy rain causes flooding.",
                "is_supporting": True,
            },
            {
                "idx": 1,
                "title": "Flood",
                "paragraph_text": "Flooding causes crop loss.",
                "is_supporting": True,
            },
            {
                "idx": 2,
                "title": "Cats",
                "paragraph_text": "Cats sleep a lot. Dogs bark.",
                "is_supporting": False,
            },
            {
                "idx": 3,
                "title": "Tea",
                "paragraph_text": "Tea requires hot water.",
                "is_supporting": False,
            },
        ],
    }


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "musique.jsonl"
    path.write_text("\n".join(json.dumps(_row(i)) for i in range(3)) + "\n")
    return path


def _fake_suite() -> MethodSuite:
    return MethodSuite(
        embedder=HashingEmbedder(),
        extractors={"reasoning": PatternExtractor(), "generic_spo": PatternExtractor()},
        keyphrase_extractor=FixedKeyphrases("heavy rain"),
        direction_classifier=CueWordDirectionClassifier(),
        flat_top_k=2,
    )


def fake_llm(prompt: str) -> str:
    """Answers 'crop loss' when the prompt shows it, else 'unknown' (plumbing only)."""
    return "Reasoning...\nAnswer: crop loss" if "crop loss" in prompt else "Answer: unknown"


def test_sarg_eval_end_to_end_with_fake_llm(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(harness, "MethodSuite", lambda **_: _fake_suite())
    monkeypatch.setattr("sarg_integrations.models.specs.resolve_llm_spec", lambda spec: fake_llm)
    out = tmp_path / "out"
    code = cli.main(
        [
            "eval",
            "--dataset",
            "musique",
            "--data",
            str(data),
            "--limit",
            "3",
            "--llm",
            "fake:model",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "| sarg |" in printed and "EM" in printed
    summary = json.loads((out / "musique.json").read_text())
    assert len(summary["records"]) == 3
    methods = summary["aggregates"]["methods"]
    assert methods["flat"]["support_recall"] == 1.0 and methods["flat"]["em"] == 1.0
    assert methods["direct"]["em"] == 0.0 and methods["direct"]["support_recall"] == 0.0
    sarg = methods["sarg"]
    assert sarg["chains"] >= 1 and sarg["fallback"] == 0.0 and sarg["faithful_hop_share"] == 1.0
    assert sarg["support_recall"] == 1.0 and sarg["support_precision"] == 1.0
    assert {"sarg_beam1", "sarg_beam10", "sarg_topk15", "sarg_spo", "sarg_flat_evidence"} <= set(
        methods
    )
    record = summary["records"][0]["methods"]
    assert record["flat_topk_budget"]["prompt_tokens"] <= record["sarg"]["prompt_tokens"]
    assert record["flat_topk_budget"]["budget_tokens"] == record["sarg"]["prompt_tokens"]
    assert set(summary["aggregates"]["by_hops"]) == {"2", "3"}
    markdown = (out / "musique.md").read_text()
    assert markdown.startswith("### musique") and "`sarg` against flat top-k" in markdown
    # TaSR is not a default method: its comparison is empty and has no table.
    assert summary["aggregates"]["tasr_vs_flat_topk_budget_tasr"] is None
    assert "`tasr` against" not in markdown
    pytest.importorskip("matplotlib")
    assert (out / "musique_sweeps.png").stat().st_size > 0
    assert (out / "musique_by_hops.png").stat().st_size > 0


def test_resume_after_interruption(data: Path, tmp_path: Path) -> None:
    suite = _fake_suite()
    seen: list[str] = []
    original = suite.run

    def run(question, names):
        seen.append(question.id)
        if interrupt_on and question.id == interrupt_on:
            raise KeyboardInterrupt
        return original(question, names)

    suite.run = run  # type: ignore[method-assign]
    out = tmp_path / "out"
    interrupt_on = "3hop__1"  # the second question
    with pytest.raises(KeyboardInterrupt):
        harness.run_evaluation(
            "musique", data, out_dir=out, suite=suite, llm=fake_llm, progress=False, plots=False
        )
    lines = (out / "musique.records.jsonl").read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["id"] == "2hop__0"  # header + question 1
    seen.clear()
    interrupt_on = None
    report = harness.run_evaluation(
        "musique", data, out_dir=out, suite=suite, llm=fake_llm, progress=False, plots=False
    )
    assert seen == ["3hop__1", "2hop__2"]  # the first question was not recomputed
    assert [r["id"] for r in report.records] == ["2hop__0", "3hop__1", "2hop__2"]
    assert all("em" in r["methods"]["sarg"] for r in report.records)
    # Other settings must not silently mix with these records.
    with pytest.raises(InputError, match="other settings"):
        harness.run_evaluation(
            "musique", data, out_dir=out, suite=suite, seed=7, progress=False, plots=False
        )


def test_an_out_dir_that_is_a_file_is_an_input_error(data: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "results"
    blocker.write_text("not a folder")
    with pytest.raises(InputError, match="out_dir=.*results.* is a file") as info:
        harness.run_evaluation(
            "musique", data, out_dir=blocker, suite=_fake_suite(), progress=False, plots=False
        )
    assert info.value.argument == "out_dir"
    with pytest.raises(InputError, match="cannot be created"):
        harness.run_evaluation(
            "musique", data, out_dir=blocker / "sub", suite=_fake_suite(), progress=False
        )


@pytest.mark.slow
def test_tasr_against_flat_topk_at_its_own_budget(data: Path, tmp_path: Path) -> None:
    report = harness.run_evaluation(
        "musique",
        data,
        out_dir=tmp_path / "out",
        suite=_fake_suite(),
        methods=["tasr", "flat_topk_budget_tasr"],
        sweeps=False,
        progress=False,
        plots=False,
    )
    assert len(report.records) == 3
    for record in report.records:
        tasr, flat = record["methods"]["tasr"], record["methods"]["flat_topk_budget_tasr"]
        assert set(record["methods"]) == {"tasr", "flat_topk_budget_tasr"}
        assert flat["budget_tokens"] == tasr["prompt_tokens"] >= flat["prompt_tokens"]
    overall = report.aggregates["tasr_vs_flat_topk_budget_tasr"]
    assert overall["n"] == 3
    assert {k: v["comparison_tasr"]["n"] for k, v in report.aggregates["by_hops"].items()} == {
        "2": 2,
        "3": 1,
    }
    assert report.aggregates["by_hops"]["2"]["comparison"] is None  # sarg was not run
    assert "`tasr` against flat top-k at `tasr`'s own prompt-token budget" in report.markdown
    assert "| hops=2 | 2 |" in report.markdown and "`sarg` against" not in report.markdown


@pytest.mark.slow
def test_budget_baseline_runs_the_method_whose_budget_it_takes(data: Path) -> None:
    from sarg_integrations.evaluation.datasets import load_dataset

    question = load_dataset("musique", data, limit=1)[0]
    out = _fake_suite().run(question, ["flat_topk_budget_tasr"])
    assert list(out) == ["tasr", "flat_topk_budget_tasr"]
    assert out["flat_topk_budget_tasr"].stats["budget_tokens"] == out["tasr"].prompt_tokens


def test_long_context_reorder_puts_best_at_the_ends() -> None:
    # LangChain's ordering: the two most relevant at the two ends, least in the middle.
    assert long_context_reorder([1, 2, 3, 4]) == [2, 4, 3, 1]
    assert long_context_reorder([1, 2, 3, 4, 5]) == [1, 3, 5, 4, 2]
    assert long_context_reorder([]) == []


def _counting_suite() -> tuple[MethodSuite, list[str]]:
    suite = _fake_suite()
    seen: list[str] = []
    original = suite.run

    def run(question, names):
        seen.append(question.id)
        return original(question, names)

    suite.run = run  # type: ignore[method-assign]
    return suite, seen


def test_a_record_cut_mid_line_is_ignored_with_a_warning_and_recomputed(
    data: Path, tmp_path: Path
) -> None:
    # Issue 16 (eval records): a crash mid-append left half a record without its "\n";
    # the next record was glued to it, so that line stayed invalid on every resume.
    suite, seen = _counting_suite()
    out = tmp_path / "out"
    kwargs = {"out_dir": out, "suite": suite, "progress": False, "plots": False}
    harness.run_evaluation("musique", data, **kwargs)
    path = out / "musique.records.jsonl"
    raw = path.read_bytes()
    last = raw.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(raw[: last + 60])  # the third record cut 60 bytes in
    seen.clear()
    with pytest.warns(UserWarning, match=r"last line was cut by an interrupted run"):
        report = harness.run_evaluation("musique", data, **kwargs)
    assert seen == ["2hop__2"]  # only the cut record is recomputed
    assert [r["id"] for r in report.records] == ["2hop__0", "3hop__1", "2hop__2"]
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(line) for line in lines)
    seen.clear()
    harness.run_evaluation("musique", data, **kwargs)
    assert seen == []  # nothing left to recompute


def test_a_question_without_paragraphs_is_skipped_and_reported(tmp_path: Path) -> None:
    # HotpotQA fullwiki holds two questions whose retrieval found nothing: the run used to
    # stop there with "documents is empty", losing the questions after them.
    rows = [_row(0), {**_row(1), "paragraphs": []}, _row(2)]
    rows[1]["id"] = "3hop__empty"
    path = tmp_path / "musique.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    suite, seen = _counting_suite()
    kwargs = {"out_dir": tmp_path / "out", "suite": suite, "progress": False, "plots": False}
    skipped = r"skipped 1 question\(s\) with no paragraph text: 3hop__empty"
    with pytest.warns(UserWarning, match=skipped):
        report = harness.run_evaluation("musique", path, **kwargs)
    assert seen == ["2hop__0", "2hop__2"]
    assert [r["id"] for r in report.records] == ["2hop__0", "2hop__2"]
    assert report.settings["skipped_no_paragraphs"] == ["3hop__empty"]
    assert "3hop__empty" in report.markdown


def test_the_cli_names_the_skipped_questions_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `sarg eval` silences warnings during a run (model-library chatter), so the skip is
    # said on stderr as well as in the report's settings.
    rows = [_row(0), {**_row(1), "id": "3hop__empty", "paragraphs": []}]
    path = tmp_path / "musique.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.setattr(harness, "MethodSuite", lambda **_: _fake_suite())
    argv = ["eval", "--dataset", "musique", "--data", str(path), "--out", str(tmp_path / "o"),
            "--no-progress", "--no-sweeps", "--no-plots", "--methods", "sarg"]
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    assert "skipped 1 question(s) with no paragraph text: 3hop__empty" in captured.err
    assert "skipped_no_paragraphs" in captured.out


def test_a_header_cut_mid_line_starts_the_records_over(data: Path, tmp_path: Path) -> None:
    suite, seen = _counting_suite()
    out = tmp_path / "out"
    out.mkdir()
    (out / "musique.records.jsonl").write_text('{"_settings": {"lim')
    with pytest.warns(UserWarning, match="cut by an interrupted run"):
        harness.run_evaluation(
            "musique", data, out_dir=out, suite=suite, progress=False, plots=False
        )  # before: InputError "holds records of a run with other settings (None)"
    assert len(seen) == 3
    lines = (out / "musique.records.jsonl").read_text().splitlines()
    assert "_settings" in json.loads(lines[0]) and len(lines) == 4


def test_a_corrupt_line_in_the_middle_is_reported(data: Path, tmp_path: Path) -> None:
    suite, seen = _counting_suite()
    out = tmp_path / "out"
    kwargs = {"out_dir": out, "suite": suite, "progress": False, "plots": False}
    harness.run_evaluation("musique", data, **kwargs)
    path = out / "musique.records.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:30]
    path.write_text("\n".join(lines) + "\n")
    seen.clear()
    with pytest.warns(UserWarning, match=r"records\.jsonl:3: not a JSON record"):
        harness.run_evaluation("musique", data, **kwargs)
    assert seen == ["3hop__1"]


def test_a_failed_append_leaves_no_half_record(tmp_path: Path) -> None:
    """A full disk mid-write: the file is cut back to its last whole line."""
    import errno
    from pathlib import PosixPath

    class HalfWriter:
        def __init__(self, handle):
            self.handle = handle

        def __getattr__(self, name):
            return getattr(self.handle, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, data):
            self.handle.write(data[: len(data) // 2])
            self.handle.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

    class FullDisk(PosixPath):
        def open(self, *args, **kwargs):  # type: ignore[override]
            return HalfWriter(super().open(*args, **kwargs))

    path = tmp_path / "r.jsonl"
    path.write_text('{"_settings": {}}\n')
    with pytest.raises(OSError, match="No space"):
        harness._append_line(FullDisk(path), json.dumps({"id": "q", "x": "y" * 100}) + "\n")
    assert path.read_text() == '{"_settings": {}}\n'


def _unescaped_pipes(line: str) -> int:
    import re

    return len(re.findall(r"(?<!\\)\|", line))


def _tables_keep_their_shape(markdown: str) -> None:
    """Every row of every table has as many cells as its header."""
    width = None
    for line in markdown.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        if width is None:
            width = _unescaped_pipes(line)
        assert _unescaped_pipes(line) == width, line


def test_markdown_escapes_names_types_and_settings(data: Path, tmp_path: Path) -> None:
    # Issue 16: strings from the data file (question types), method and dataset names
    # and settings went into the Markdown tables raw; a "|" or a line break forged cells
    # and rows.
    rows = [_row(i) for i in range(3)]
    rows[0]["id"] = "2hop|x\n| forged | 9 |\x1b[31m__0"  # MuSiQue's type is the id prefix
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = harness.run_evaluation(
        "musique",
        hostile,
        out_dir=tmp_path / "out",
        suite=_fake_suite(),
        progress=False,
        plots=False,
    )
    md = report.markdown
    assert "| forged | 9 |" not in md and "\x1b" not in md
    assert "type=2hop\\|x \\| forged \\| 9 \\|\\\\x1b[31m" in md.replace("\\[", "[")
    _tables_keep_their_shape(md)
    assert (tmp_path / "out" / "musique.md").read_text() == md

    aggregates = dict(report.aggregates)
    methods = dict(aggregates["methods"])
    methods["evil|name\n| x |\r<!--"] = methods.pop("flat")
    aggregates["methods"] = methods
    settings = {**report.settings, "llm": "spec`with\n| a |"}
    md = harness.markdown_report("musique\n## Injected <b>", aggregates, settings)
    lines = md.splitlines()
    assert lines[0] == "### musique ## Injected &lt;b&gt;: 3 questions"
    assert not any(line.startswith("## Injected") for line in lines)
    assert "| evil\\|name \\| x \\|\\\\x0d&lt;!-- | 3 |" in md
    (settings_line,) = [line for line in lines if line.startswith("Settings:")]
    assert settings_line.startswith("Settings: ``{") and settings_line.endswith("}``")
    assert '"spec`with\\n| a |"' in settings_line  # JSON keeps it one line; the fence holds "`"
    _tables_keep_their_shape(md)


def test_markdown_code_and_cell_helpers() -> None:
    from sarg_integrations._text import markdown_cell, markdown_code

    assert markdown_code("my`dir\n| x |") == "``my`dir | x |``"
    assert markdown_code("`x`") == "`` `x` ``"
    assert markdown_code("a\x1bb") == "`a\\x1bb`"
    assert markdown_cell("a\u2028b\tc") == "a\\\\u2028b c"
    assert markdown_cell("[link](x)") == "\\[link\\](x)"


def test_budget_baseline_passes_over_a_paragraph_that_would_overflow() -> None:
    # The same packing as SARG's fill: a long paragraph that does not fit is skipped and
    # the next one in the ranking is tried, instead of stopping there.
    from sarg_integrations.evaluation.methods import _flat_output
    from sarg_integrations.schema import SourceDocument

    suite = _fake_suite()
    short = SourceDocument("short", "Flooding causes crop loss.")
    long = SourceDocument("long", "Rain " * 200)
    last = SourceDocument("last", "Tea requires hot water.")
    budget = _flat_output("q?", [short, last], suite.template).prompt_tokens
    out = suite._budgeted("q?", [short, long, last], budget)
    assert out.evidence_ids == ["short", "last"]
    assert out.prompt_tokens <= budget
    # With one token less, "last" no longer fits either.
    assert suite._budgeted("q?", [short, long, last], budget - 1).evidence_ids == ["short"]
