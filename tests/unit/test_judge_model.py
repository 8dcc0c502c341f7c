"""The shipped evidence judge: its files, validation on load, training end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sarg_integrations.errors import ModelLoadError
from sarg_integrations.judge import DEFAULT_JUDGE_DIR, DEFAULT_SET_JUDGE_DIR, LearnedEvidenceJudge
from sarg_integrations.judge.model import CONFIG_FILE, WEIGHTS_FILE

pytestmark = pytest.mark.slow  # these load the packaged MiniLM


@pytest.mark.parametrize("folder", [DEFAULT_JUDGE_DIR, DEFAULT_SET_JUDGE_DIR])
def test_shipped_files_are_small_safetensors_and_json(folder: Path) -> None:
    files = sorted(p.name for p in folder.iterdir() if p.is_file())
    assert CONFIG_FILE in files and WEIGHTS_FILE in files
    assert not [f for f in files if f.endswith((".bin", ".pt", ".pkl", ".pickle"))]
    assert sum(p.stat().st_size for p in folder.iterdir() if p.is_file()) < 10 * 1024 * 1024


# Stories written for this test (no judge saw them): the chain's steps against a profile,
# a history fact and another event at the same place.
QUESTION = "Why did the Larkhill swimming pool close for the summer?"
STEPS = [
    "A crack in the main filtration tank at Larkhill pool was found during a routine inspection "
    "in May.",
    "Engineers said the tank could not be repaired and would have to be replaced, which takes "
    "ten weeks.",
]
OTHERS = [
    "Larkhill pool was built in 1968 and was refurbished in 2004.",
    "The Larkhill swimming club won three medals at the county gala last year.",
]


def test_the_shipped_judge_tells_steps_from_background() -> None:
    scores = LearnedEvidenceJudge().score(QUESTION, STEPS + OTHERS)
    assert min(scores[:2]) > max(scores[2:])
    assert max(scores[2:]) < 0.5 < min(scores[:2])


def test_the_shipped_judge_scores_in_batches_the_same() -> None:
    texts = STEPS + OTHERS
    one = LearnedEvidenceJudge(batch_size=1).score(QUESTION, texts)
    many = LearnedEvidenceJudge(batch_size=32).score(QUESTION, texts)
    assert one == pytest.approx(many, abs=1e-4)
    assert LearnedEvidenceJudge().score(QUESTION, []) == []


def test_garbage_text_is_scored_not_a_crash() -> None:
    raw = b"caf\xe9 \x00 \xd8\x00 mixed \u202e rtl \xf0\x9f\x92\xa5"
    texts = [raw.decode("utf-8", errors="surrogateescape"), "", "\x00" * 50]
    scores = LearnedEvidenceJudge().score("Why did it fail? \udcff", texts)
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)
    from sarg_integrations.judge import default_evidence_judge

    scores = default_evidence_judge().score("Why did it fail? \udcff", texts)
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "judge"
    shutil.copytree(DEFAULT_JUDGE_DIR, folder)
    return folder


def test_corrupt_weights_name_the_file(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / WEIGHTS_FILE).write_bytes(b"\x00garbage" * 10)
    with pytest.raises(ModelLoadError, match=r"judge\.safetensors.*not a readable safetensors"):
        LearnedEvidenceJudge.load(folder)


def test_mismatched_or_missing_weights_name_the_file(tmp_path: Path) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    folder = _copy(tmp_path)
    tensors = load_file(str(folder / WEIGHTS_FILE))
    tensors["head.weight"] = torch.zeros(2, 384)
    save_file(tensors, str(folder / WEIGHTS_FILE))
    with pytest.raises(ModelLoadError, match=r"judge\.safetensors.*head\.weight has shape"):
        LearnedEvidenceJudge.load(folder)
    tensors.pop("head.weight")
    save_file(tensors, str(folder / WEIGHTS_FILE))
    with pytest.raises(ModelLoadError, match=r"'head\.weight' is missing"):
        LearnedEvidenceJudge.load(folder)
    (folder / WEIGHTS_FILE).unlink()
    with pytest.raises(ModelLoadError, match=r"judge\.safetensors.*missing"):
        LearnedEvidenceJudge.load(folder)


def _train_two_steps(tmp_path: Path, rows: list[dict], **settings: object) -> object:
    """Write ``rows`` as a story file and train a judge two steps on it into tmp_path/out."""
    from sarg_integrations.judge.training import read_story_files, train_judge

    file = tmp_path / "stories.jsonl"
    file.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return train_judge(
        read_story_files([file]),
        tmp_path / "out",
        epochs=1,
        max_steps=2,
        progress=False,
        **settings,
    )


def test_training_runs_end_to_end_on_a_tiny_file(tmp_path: Path) -> None:

    rows = [
        {
            "question": f"Why did the {place} bridge close?",
            "chain": ["flood", "close"],
            "documents": [
                {
                    "id": "flood",
                    "text": f"Floodwater undermined the {place} bridge's pier in March.",
                },
                {"id": "close", "text": f"The council closed the {place} bridge to traffic."},
                {"id": "built", "text": f"The {place} bridge was built in 1890."},
            ],
        }
        for place in ("Ashby", "Brent", "Calder", "Dunmore")
    ]
    report = _train_two_steps(tmp_path, rows, batch_size=4, held_out_fraction=0.25)
    assert report.steps == 2 and report.stories == 3 and report.held_out == 1
    assert set(report.held_out_scores) == {"stories_exact", "document_precision", "document_recall"}
    config = json.loads((tmp_path / "out" / CONFIG_FILE).read_text(encoding="utf-8"))
    assert config["info"]["training"]["steps"] == 2
    scores = LearnedEvidenceJudge.load(tmp_path / "out").score("Why?", ["A.", "B."])
    assert len(scores) == 2 and all(0.0 <= s <= 1.0 for s in scores)


def _tokenizer():
    from sarg_integrations.extraction.tagger_model import load_base_encoder

    return load_base_encoder()[1]


def test_a_set_is_packed_in_order_into_windows_that_fit() -> None:
    from sarg_integrations.judge.model import pack_set

    tokenizer = _tokenizer()
    texts = [f"Document number {i} says the river rose after a week of rain." for i in range(30)]
    windows = pack_set(tokenizer, "Why did the river rise?", texts, 128, 20)
    question = len(tokenizer("Why did the river rise?", add_special_tokens=False)["input_ids"])
    assert len(windows) > 1
    assert [index for w in windows for index, _, _ in w.spans] == list(range(30))
    for window in windows:
        assert len(window.input_ids) <= 128
        assert len(window.input_ids) == len(window.token_type_ids)
        assert window.input_ids[0] == tokenizer.cls_token_id
        assert window.input_ids[question + 1] == tokenizer.sep_token_id
        assert set(window.token_type_ids[: question + 2]) == {0}
        assert set(window.token_type_ids[question + 2 :]) == {1}
        first = question + 2
        for _, start, end in window.spans:
            assert start == first and window.input_ids[end - 1] == tokenizer.sep_token_id
            first = end
        assert first == len(window.input_ids)
    # each document is cut to document_tokens word pieces (+ its [SEP])
    long = pack_set(tokenizer, "Why?", ["word " * 300], 512, 40)
    ((_, start, end),) = long[0].spans
    assert end - start == 41


def test_a_judge_reading_sets_trains_loads_and_scores_every_document(tmp_path: Path) -> None:
    rows = [
        {
            "question": f"Why did the {place} bridge close?",
            "chain": ["flood", "close"],
            "documents": [
                {"id": "flood", "text": f"Floodwater undermined the {place} bridge's pier."},
                {"id": "close", "text": f"The council closed the {place} bridge to traffic."},
                {"id": "jam", "text": f"Queues on the {place} bypass doubled after the closure."},
                {"id": "built", "text": f"The {place} bridge was built in 1890."},
            ],
        }
        for place in ("Ashby", "Brent", "Calder", "Dunmore", "Elton")
    ]
    report = _train_two_steps(tmp_path, rows, reads="set", batch_size=2, held_out_fraction=0.2)
    assert report.steps == 2 and report.stories == 4 and report.held_out == 1
    judge = LearnedEvidenceJudge.load(tmp_path / "out")
    assert judge.config.reads == "set" and judge.config.max_length == 512
    texts = [d["text"] for d in rows[0]["documents"]] * 12  # more than one window
    scores = judge.score(rows[0]["question"], texts)
    assert len(scores) == 48 and all(0.0 <= s <= 1.0 for s in scores)
    # batching windows changes nothing
    one = LearnedEvidenceJudge(tmp_path / "out", batch_size=1).score(rows[0]["question"], texts)
    assert one == pytest.approx(scores, abs=1e-4)
    assert judge.score("Why?", []) == []


def test_training_refuses_an_unknown_reading(tmp_path: Path) -> None:
    from sarg_integrations.errors import ConfigError
    from sarg_integrations.judge.training import JudgeStory, train_judge

    story = JudgeStory("Why?", {"a": "A.", "b": "B."}, frozenset({"a"}))
    with pytest.raises(ConfigError, match="reads='paragraph' must be one of"):
        train_judge([story], tmp_path, reads="paragraph")
    with pytest.raises(ConfigError, match="document_tokens=500"):
        train_judge([story], tmp_path, reads="set", document_tokens=500)


def test_the_default_judges_keep_steps_and_drop_two_dozen_others() -> None:
    # The set reader alone scores relative to the others: in a window with no step it
    # rates profiles up to 0.98 (0.88 with the fortieth session's). The document reader
    # checks it in the default's mean (0.061 at most here).
    from sarg_integrations.judge import DEFAULT_SET_JUDGE_DIR, default_evidence_judge

    places = ["library", "museum", "town hall", "cricket club", "bus station", "market"]
    places += ["school", "park", "theatre", "cinema", "bakery", "post office"]
    months = ["June", "July", "August", "September", "October", "November", "December"]
    months += ["January", "February", "March", "April", "May"]
    profiles = [f"The Larkhill {p} was opened in {1900 + 7 * i}." for i, p in enumerate(places)]
    open_days = [f"Larkhill's {p} will host an open day in {m}." for p, m in zip(places, months)]
    texts = profiles + STEPS[:1] + open_days + STEPS[1:]
    steps = {len(profiles), len(texts) - 1}
    assert LearnedEvidenceJudge(DEFAULT_SET_JUDGE_DIR).config.reads == "set"
    scores = default_evidence_judge().score(QUESTION, texts)
    assert min(scores[i] for i in steps) > 0.9
    assert max(s for i, s in enumerate(scores) if i not in steps) < 0.5
