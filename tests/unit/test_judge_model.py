"""The shipped evidence judge: its files, validation on load, training end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sarg_integrations.errors import ModelLoadError
from sarg_integrations.judge import DEFAULT_JUDGE_DIR, LearnedEvidenceJudge
from sarg_integrations.judge.model import CONFIG_FILE, WEIGHTS_FILE

pytestmark = pytest.mark.slow  # these load the packaged MiniLM


def test_shipped_files_are_small_safetensors_and_json() -> None:
    files = sorted(p.name for p in DEFAULT_JUDGE_DIR.iterdir() if p.is_file())
    assert CONFIG_FILE in files and WEIGHTS_FILE in files
    assert not [f for f in files if f.endswith((".bin", ".pt", ".pkl", ".pickle"))]
    assert (
        sum(p.stat().st_size for p in DEFAULT_JUDGE_DIR.iterdir() if p.is_file()) < 10 * 1024 * 1024
    )


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


def test_training_runs_end_to_end_on_a_tiny_file(tmp_path: Path) -> None:
    from sarg_integrations.judge.training import read_story_files, train_judge

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
    file = tmp_path / "stories.jsonl"
    file.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    report = train_judge(
        read_story_files([file]),
        tmp_path / "out",
        epochs=1,
        max_steps=2,
        batch_size=4,
        held_out_fraction=0.25,
        progress=False,
    )
    assert report.steps == 2 and report.stories == 3 and report.held_out == 1
    assert set(report.held_out_scores) == {"stories_exact", "document_precision", "document_recall"}
    config = json.loads((tmp_path / "out" / CONFIG_FILE).read_text(encoding="utf-8"))
    assert config["info"]["training"]["steps"] == 2
    scores = LearnedEvidenceJudge.load(tmp_path / "out").score("Why?", ["A.", "B."])
    assert len(scores) == 2 and all(0.0 <= s <= 1.0 for s in scores)
