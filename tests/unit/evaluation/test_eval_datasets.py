"""Loaders of the multi-hop QA formats: real files (team workspace) and tiny synthetic ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sarg_integrations.errors import InputError
from sarg_integrations.evaluation.datasets import DATASETS, default_data_path, load_dataset


def test_hotpotqa_ircot_real_file(shared_data: Path) -> None:
    qs = load_dataset("hotpotqa", shared_data / "multihop" / DATASETS["hotpotqa"], limit=3)
    assert len(qs) == 3
    q = qs[0]
    assert q.id == "5a8c7595554299585d9e36b6"
    assert q.answer == "Chief of Protocol"
    assert len(q.paragraphs) == 10 and len(q.supporting_ids) == 2
    assert {q.paragraphs[int(i)].metadata["title"] for i in q.supporting_ids} >= {"Shirley Temple"}
    assert q.hops == 2 and "  " not in q.paragraphs[0].text


def test_hotpotqa_original_format_real_file(shared_data: Path) -> None:
    path = shared_data / "multihop" / "hotpotqa_dev_distractor_200_migres.jsonl"
    q = load_dataset("hotpotqa", path, limit=2)[0]
    assert q.answer == "Rush" and q.qtype == "bridge"
    titles = {p.metadata["title"] for p in q.paragraphs if p.id in q.supporting_ids}
    assert titles == {"Nobody's Hero", "Neil Peart"}


def test_musique_real_file(shared_data: Path) -> None:
    q = load_dataset("musique", shared_data / "multihop" / DATASETS["musique"], limit=2)[0]
    assert q.id == "2hop__574419_270105" and q.hops == 2 and q.qtype == "2hop"
    assert len(q.paragraphs) == 20 and set(q.supporting_ids) == {"1", "8"}
    assert q.answer == "Stanley"


def test_2wiki_real_file(shared_data: Path) -> None:
    q = load_dataset("2wiki", shared_data / "multihop" / DATASETS["2wiki"], limit=3)[0]
    assert q.id == "100c512a0bde11eba7f7acde48001122" and q.answer == "Cork"
    assert q.qtype == "compositional" and len(q.paragraphs) == 10
    assert q.hops == len(q.supporting_ids) == 2


def _musique_row(qid: str) -> dict:
    return {
        "id": qid,
        "question": "Q?",
        "answer": "A",
        "answer_aliases": ["Alpha"],
        "paragraphs": [
            {"idx": 0, "title": "T0", "paragraph_text": "zero  text", "is_supporting": True},
            {"idx": 1, "title": "T1", "paragraph_text": "one", "is_supporting": False},
            {"idx": 2, "title": "T2", "paragraph_text": "two", "is_supporting": True},
        ],
    }


def test_synthetic_musique_and_shuffle(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps(_musique_row(f"3hop1__{i}")) for i in range(4)) + "\n")
    qs = load_dataset("musique", path)
    assert [q.hops for q in qs] == [3] * 4 and qs[0].aliases == ("Alpha",)
    assert qs[0].paragraphs[0].text == "zero text" and qs[0].supporting_ids == ("0", "2")
    a = load_dataset("musique", path, shuffle_distractors=True, seed=1)
    b = load_dataset("musique", path, shuffle_distractors=True, seed=1)
    assert [p.id for p in a[0].paragraphs] == [p.id for p in b[0].paragraphs]  # deterministic
    assert {p.id for p in a[0].paragraphs} == {"0", "1", "2"}
    assert load_dataset("musique", path, limit=2)[1].id == "3hop1__1"


def test_synthetic_2wiki_columns(tmp_path: Path) -> None:
    rows = {
        "_1": {"0": "x0", "1": "x1"},
        "type": {"0": "comparison", "1": "inference"},
        "question": {"0": "Q0", "1": "Q1"},
        "answer": {"0": "yes", "1": "B"},
        "context": {"0": [["A", ["a1", "a2"]], ["B", ["b"]]], "1": [["C", ["c"]]]},
        "supporting_facts": {"0": [["A", 0], ["A", 1]], "1": [["C", 0]]},
    }
    path = tmp_path / "w.json"
    path.write_text(json.dumps(rows))
    qs = load_dataset("2wiki", path)
    assert [q.id for q in qs] == ["x0", "x1"]
    assert (
        qs[0].paragraphs[0].text == "a1 a2" and qs[0].supporting_ids == ("0",) and qs[0].hops == 1
    )


def test_errors_name_argument_and_fix(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="hotpotqa, musique, 2wiki"):
        load_dataset("squad")
    with pytest.raises(InputError, match="looked at"):
        load_dataset("musique", tmp_path / "absent.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"foo": 1}\n')
    with pytest.raises(InputError, match="not in the musique format"):
        load_dataset("musique", bad)
    with pytest.raises(InputError, match="limit"):
        load_dataset("musique", bad, limit=0)


def test_default_path_respects_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SARG_SHARED_DATA", str(tmp_path))
    assert default_data_path("musique") == tmp_path / "multihop" / DATASETS["musique"]


@pytest.mark.parametrize(
    ("dataset", "page"),
    [
        ("musique", "github.com/StonyBrookNLP/musique"),
        ("hotpotqa", "hotpotqa.github.io"),
        ("2wiki", "github.com/Alab-NII/2wikimultihop"),
        ("ester", "github.com/PlusLabNLP/ESTER"),
        ("esc", "github.com/tommasoc80/EventStoryLine"),
    ],
)
def test_without_data_or_env_the_error_names_the_download_page(
    monkeypatch: pytest.MonkeyPatch, dataset: str, page: str
) -> None:
    # Issue 16 item 17: the default was the team's ../shared/data folder.
    from sarg_integrations.evaluation.causal_qa import CAUSAL_DATASETS, default_causal_data_path

    monkeypatch.delenv("SARG_SHARED_DATA", raising=False)
    with pytest.raises(InputError, match=rf"pass --data PATH.*{re.escape(page)}") as caught:
        if dataset in CAUSAL_DATASETS:
            default_causal_data_path(dataset)
        else:
            load_dataset(dataset)
    assert "shared/data" not in str(caught.value)
    docs = (Path(__file__).resolve().parents[3] / "docs" / "evaluation.md").read_text("utf-8")
    assert page in docs
