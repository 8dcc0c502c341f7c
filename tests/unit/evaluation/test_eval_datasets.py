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
    with pytest.raises(InputError, match="line 1 is not a musique record"):
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
        ("ester", "github.com/fd-semantics/causal-schema-public"),
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


# --------------------------------------------------------------------------- official formats
# Issue 16 item 17: the files as downloaded from the official pages load as they are,
# into the same records as the team's converted files. Tiny hand-made fixtures in the
# official shapes live in tests/unit/evaluation/fixtures/.

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _same_questions(a: list, b: list) -> None:
    assert [q.id for q in a] == [q.id for q in b]
    for x, y in zip(a, b, strict=True):
        assert (x.question, x.answer, x.hops) == (y.question, y.answer, y.hops)
        assert x.paragraphs == y.paragraphs and x.supporting_ids == y.supporting_ids


def test_official_hotpotqa_json_array_loads_like_the_ircot_file() -> None:
    official = load_dataset("hotpotqa", FIXTURES / "hotpot_dev_distractor_v1.official.json")
    team = load_dataset("hotpotqa", FIXTURES / "hotpot_dev.ircot.jsonl")
    _same_questions(official, team)
    assert [q.qtype for q in official] == ["comparison", "bridge"]  # the IRCoT file has none
    assert official[1].supporting_ids == ("1", "2")
    assert official[0].paragraphs[0].text == (
        "Adam Collis is an American filmmaker and actor. He attended the Duke University "
        "from 1986 to 1990."
    )


def test_official_2wiki_dev_json_loads_like_the_pandas_columns_file() -> None:
    official = load_dataset("2wiki", FIXTURES / "2wiki_dev.official.json")
    team = load_dataset("2wiki", FIXTURES / "2wiki_dev.pandas_columns.json")
    _same_questions(official, team)
    assert official == team  # ids, types and gold evidences too
    assert official[0].id == "8813f87c0bdd11eba7f7acde48001122" and official[0].hops == 2
    assert official[1].extra["evidences"][1] == ["The Mask of Fu Manchu", "publication date", "1932"]


def test_official_musique_jsonl_loads_as_the_team_file_does(tmp_path: Path) -> None:
    # The team's musique_ans_dev_200_migres.jsonl is the official format already.
    official = load_dataset("musique", FIXTURES / "musique_ans_v1.0_dev.official.jsonl")
    assert [(q.id, q.hops, q.qtype) for q in official] == [
        ("2hop__460946_294723", 2, "2hop"),
        ("3hop1__9285_5188_23307", 3, "3hop1"),
    ]
    assert official[0].aliases == ("Stephen Hillage",) and official[0].supporting_ids == ("1", "2")


@pytest.mark.parametrize(
    ("dataset", "source"),
    [
        ("2wiki", "2wiki_dev.official.json"),
        ("hotpotqa", "hotpot_dev_distractor_v1.official.json"),
        ("musique", "musique_ans_v1.0_dev.official.jsonl"),
    ],
)
def test_the_layout_is_read_from_the_content_not_the_name(
    tmp_path: Path, dataset: str, source: str
) -> None:
    """A JSON array saved as `.jsonl`, JSON Lines saved as `.json`: same questions."""
    text = (FIXTURES / source).read_text("utf-8")
    rows = json.loads(text) if text.lstrip().startswith("[") else [
        json.loads(line) for line in text.splitlines() if line.strip()
    ]
    as_lines = tmp_path / "data.json"
    as_lines.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    as_array = tmp_path / "data.jsonl"
    as_array.write_text(json.dumps(rows, indent=2), "utf-8")
    one = tmp_path / "one.txt"
    one.write_text(json.dumps(rows[0], indent=1), "utf-8")
    expected = load_dataset(dataset, FIXTURES / source)
    assert load_dataset(dataset, as_lines) == expected  # before: 2wiki JSON Lines failed
    assert load_dataset(dataset, as_array) == expected
    assert load_dataset(dataset, one) == expected[:1]  # one pretty-printed record


def test_a_file_in_neither_format_names_the_file_position_and_keys(tmp_path: Path) -> None:
    good = json.loads((FIXTURES / "hotpot_dev.ircot.jsonl").read_text("utf-8").splitlines()[0])
    lines = tmp_path / "mixed.jsonl"
    lines.write_text(json.dumps(good) + "\n\n" + json.dumps({"q": "?", "a": "!"}) + "\n")
    with pytest.raises(InputError) as caught:
        load_dataset("hotpotqa", lines)
    message = str(caught.value)
    assert str(lines) in message and "line 3" in message
    assert "_id, question, answer, supporting_facts, context" in message
    assert "question_id, question_text, answers_objects, contexts" in message

    array = tmp_path / "array.json"
    array.write_text(json.dumps([_musique_row("2hop__1"), {"id": "x", "question": "q"}]))
    with pytest.raises(InputError, match=r"record 1 of the JSON array .*missing answer, paragraphs"):
        load_dataset("musique", array)
    with pytest.raises(InputError, match=r"record 0 of the JSON array is not a 2wiki record"):
        load_dataset("2wiki", array)  # a MuSiQue file given as 2wiki

    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"_id": "a",\n   "question": }\n]')
    with pytest.raises(InputError, match=r"broken\.json: not valid JSON .* line 3, column"):
        load_dataset("hotpotqa", broken)
    not_json = tmp_path / "notes.txt"
    not_json.write_text(json.dumps(good) + "\nquestion: why?\n")
    with pytest.raises(InputError, match=r"notes\.txt:2: not valid JSON Lines"):
        load_dataset("hotpotqa", not_json)
    scalars = tmp_path / "scalars.jsonl"
    scalars.write_text("1\n2\n")
    with pytest.raises(InputError, match=r"line 1 is a JSON int, not a hotpotqa record"):
        load_dataset("hotpotqa", scalars)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(InputError, match="holds no records"):
        load_dataset("hotpotqa", empty)


def test_the_upstream_torquestra_file_loads_like_its_dev_subset() -> None:
    # The team's torquestra_ester_dev_0_89.json is a dev-only subset of the upstream
    # torquestra-human-2023-02-23.json; the upstream file also holds TORQUE train
    # records (temporal questions), which were read as passages before.
    from sarg_integrations.evaluation.causal_qa import load_ester

    upstream = load_ester(FIXTURES / "torquestra-human.upstream.json")
    team = load_ester(FIXTURES / "torquestra_ester_dev.team.json")
    assert upstream == team
    assert [p.torque_id for p in upstream] == ["docid_T1_sentid_1", "docid_T2_sentid_3"]
    assert [q.qtype for p in upstream for q in p.questions] == ["backward", "forward"]
    assert upstream[0].gold_edges[0] == ("storm hit", "ENABLES", "lines came down")
