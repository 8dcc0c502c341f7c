"""The distilled direction classifier: shipped head, training, teacher, data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from fakes import HashingEmbedder

from sarg_integrations import (
    CueWordDirectionClassifier,
    DirectionClassifier,
    LLMDirectionTeacher,
    SARGPipeline,
)
from sarg_integrations.direction import (
    LABELS,
    MAX_QUERY_CHARS,
    default_direction_classifier,
    distill_direction,
    load_direction_dataset,
    parse_direction_answer,
    read_queries,
    train_direction_classifier,
)
from sarg_integrations.errors import (
    ConfigError,
    InputError,
    MissingDependencyError,
    ModelLoadError,
)
from sarg_integrations.schema import Direction

REPO = Path(__file__).resolve().parents[3]

FORWARD = [
    "What does a mutation in the GBA1 gene ultimately lead to?",
    "What happens if interest rates keep rising?",
    "What are the consequences of deforestation?",
]
BACKWARD = [
    "Why did technology stocks sell off?",
    "What caused the bridge to collapse?",
    "What are the root causes of inflation?",
]
BIDIRECTIONAL = [
    "How are inflation and margin calls connected?",
    "What is the relationship between sleep and memory?",
    "What government position was held by the woman who portrayed Corliss Archer in the film "
    "Kiss and Tell?",
]


@pytest.fixture(scope="module")
def clf() -> DirectionClassifier:
    return DirectionClassifier.load()


# --------------------------------------------------------------------------- shipped model


@pytest.mark.slow
def test_shipped_model_predicts_the_obvious_cases(clf):
    queries = FORWARD + BACKWARD + BIDIRECTIONAL
    expected = ["forward"] * 3 + ["backward"] * 3 + ["bidirectional"] * 3
    assert clf.predict(queries) == expected


@pytest.mark.slow
def test_shipped_model_reads_past_effect_frames_forward(clf):
    # "What did X do to Y?" read backward, as the training frame "What did X do to be
    # fined?", until the data gained its effect-seeking form (2026-12-03).
    asked = clf.predict_direction("What did the marine heatwave do to fishing in Palu bay?")
    assert asked.asked is Direction.FORWARD
    assert clf.predict([
        "What did the drought do to wheat prices?",
        "How did the drought affect farmers?",
        "What did the heatwave lead to?",
        "What did the mayor do to be arrested?",
    ]) == ["forward", "forward", "forward", "backward"]


@pytest.mark.slow
def test_predict_proba_is_a_distribution_per_query(clf):
    probs = clf.predict_proba(FORWARD[:1] + BACKWARD[:1])
    assert len(probs) == 2
    for row in probs:
        assert set(row) == set(LABELS)
        assert sum(row.values()) == pytest.approx(1.0, abs=1e-5)
    assert max(probs[1], key=probs[1].get) == "backward"


@pytest.mark.slow
def test_predict_direction_records_scores_and_method(clf):
    p = clf.predict_direction(BACKWARD[0])
    assert p.direction is Direction.BACKWARD
    assert p.method == "setfit-head"
    assert set(p.scores) == set(LABELS) and p.confidence == p.scores["backward"]


def test_shipped_file_is_small_json_without_pickle():
    head = REPO / "sarg_integrations" / "data" / "direction_head.json"
    assert head.stat().st_size < 1_000_000
    data = json.loads(head.read_text())
    assert data["format"] == "sarg-direction-head" and data["labels"] == list(LABELS)
    assert data["dimension"] == 384


@pytest.mark.slow
def test_reuses_the_pipeline_embedding_without_encoding():
    fresh = DirectionClassifier.load(reuse_embedding=True)
    vector = DirectionClassifier.load().embed([FORWARD[0]])[0]
    p = fresh.predict_direction(FORWARD[0], vector)
    assert p.direction is Direction.FORWARD
    assert fresh._embedder is None  # no encoder was loaded: the given vector was used


@pytest.mark.slow
def test_wrong_dimension_embedding_is_ignored(clf):
    p = clf.predict_direction(BACKWARD[0], np.ones(64))
    assert p.direction is Direction.BACKWARD


def test_pipeline_default_is_the_shipped_classifier_and_shares_only_minilm():
    pipe = SARGPipeline()
    assert isinstance(pipe.direction_classifier, DirectionClassifier)
    assert pipe.direction_classifier.reuse_embedding is True
    other = default_direction_classifier(HashingEmbedder(dim=384))
    assert other.reuse_embedding is False
    assert CueWordDirectionClassifier().predict([BACKWARD[0]]) == ["backward"]


@pytest.mark.slow
def test_low_margin_falls_back_to_bidirectional_and_keeps_probabilities():
    strict = DirectionClassifier.load(margin=1.0)
    p = strict.predict_direction(FORWARD[0])
    assert p.direction is Direction.BIDIRECTIONAL
    assert "fell back" in p.rationale
    assert max(p.scores, key=p.scores.get) == "forward"
    assert strict.predict([BACKWARD[0]]) == ["bidirectional"]


def _probs(**by_label):
    return [by_label[label] for label in LABELS]


def test_an_unsure_bidirectional_reading_follows_the_questions_cue_words():
    clf = DirectionClassifier(np.zeros((3, 4)), np.zeros(3), margin=0.15)
    unsure = _probs(bidirectional=0.50, backward=0.45, forward=0.05)
    why = "Why was the Pirn ski resort closed in January?"
    direction, rationale = clf._decide(unsure, why)
    assert direction is Direction.BACKWARD and "cue words ask backward" in rationale
    # The wording must ask the runner-up's way, the head must be unsure, and a text given.
    assert clf._decide(unsure, "Who founded the Pirn ski resort?")[0] is Direction.BIDIRECTIONAL
    assert clf._decide(unsure, "What did the closure lead to?")[0] is Direction.BIDIRECTIONAL
    sure = _probs(bidirectional=0.70, backward=0.25, forward=0.05)
    assert clf._decide(sure, why)[0] is Direction.BIDIRECTIONAL
    assert clf._decide(unsure)[0] is Direction.BIDIRECTIONAL


@pytest.mark.parametrize("margin", [-0.1, 1.5, "0.2", True])
def test_bad_margin_is_a_config_error(margin):
    with pytest.raises(ConfigError, match="margin"):
        DirectionClassifier.load(margin=margin)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("query", ["", "   \n", None, 42, ["why?"]])
def test_bad_query_is_an_input_error(clf, query):
    with pytest.raises(InputError, match="query"):
        clf.predict_direction(query)


def test_bad_batches_are_input_errors(clf):
    with pytest.raises(InputError, match="list of strings"):
        clf.predict("Why did it fail?")
    with pytest.raises(InputError, match=r"queries\[1\]"):
        clf.predict(["Why?", None])
    with pytest.raises(InputError, match=r"queries\[0\]"):
        clf.predict_proba([""])
    assert clf.predict([]) == [] and clf.predict_proba([]) == []


@pytest.mark.slow
def test_very_long_query_is_cut_and_still_classified(clf):
    query = "Why did technology stocks sell off? " + "background " * 2000
    p = clf.predict_direction(query)
    assert p.direction in set(Direction)
    assert f"cut to {MAX_QUERY_CHARS}" in p.rationale


# --------------------------------------------------------------------------- persistence


def test_save_and_load_round_trip(clf, tmp_path):
    path = clf.save(tmp_path / "model")
    assert path.name == "direction_head.json"
    again = DirectionClassifier.load(tmp_path / "model")
    np.testing.assert_allclose(again.weights, clf.weights, rtol=1e-5)
    assert again.ngram_buckets == clf.ngram_buckets and again.margin == clf.margin


def test_a_failed_save_keeps_the_previous_head(clf, tmp_path, monkeypatch):
    path = clf.save(tmp_path / "model")
    before = path.read_bytes()

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("sarg_integrations._atomic.os.replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        clf.save(tmp_path / "model")
    assert path.read_bytes() == before
    assert [p.name for p in (tmp_path / "model").iterdir()] == ["direction_head.json"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"version": 99}, "version"),
        ({"format": "other"}, "not a direction head"),
        ({"labels": ["a", "b", "c"]}, "labels"),
        ({"dimension": 10}, "dimension"),
    ],
)
def test_load_validates_the_file(clf, tmp_path, change, message):
    data = clf.to_dict()
    data.update(change)
    path = tmp_path / "head.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ModelLoadError, match=message):
        DirectionClassifier.load(path)


def test_load_missing_or_broken_file(tmp_path):
    with pytest.raises(ModelLoadError, match="no direction classifier"):
        DirectionClassifier.load(tmp_path / "nothing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ModelLoadError, match="cannot read"):
        DirectionClassifier.load(broken)


# --------------------------------------------------------------------------- data


def test_packaged_data_is_large_balanced_and_split():
    rows = load_direction_dataset()
    assert len(rows) >= 1500
    counts = {label: sum(r["label"] == label for r in rows) for label in LABELS}
    assert len(set(counts.values())) == 1
    splits = {s: sum(r["split"] == s for r in rows) for s in ("train", "validation", "test")}
    assert splits["train"] == 8 * splits["test"] == 8 * splits["validation"]
    assert len({r["domain"] for r in rows}) >= 8
    assert len({r["query"] for r in rows}) == len(rows)


def test_real_questions_are_not_in_the_training_data():
    real = [
        json.loads(line)
        for line in (REPO / "benchmarks/data/direction_real_questions.jsonl").open()
    ]
    assert len(real) >= 100
    train = {r["query"].lower() for r in load_direction_dataset()}
    assert not [r for r in real if r["question"].lower() in train]


def test_bad_data_file_is_reported(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "Why?", "label": "sideways"}\n')
    with pytest.raises(InputError, match="sideways"):
        load_direction_dataset(bad)
    with pytest.raises(InputError, match="does not exist"):
        load_direction_dataset(tmp_path / "missing.jsonl")


# --------------------------------------------------------------------------- training


def _tiny_rows() -> list[dict]:
    rows = load_direction_dataset()
    out = []
    for label in LABELS:
        of_label = [r for r in rows if r["label"] == label]
        out += [dict(r, split="train") for r in of_label[:8]] + [
            dict(r, split="test") for r in of_label[8:11]
        ]
    return out


@pytest.mark.slow
def test_training_runs_end_to_end_with_a_fine_tuned_body(tmp_path):
    report = train_direction_classifier(
        _tiny_rows(), fine_tune_pairs=16, batch_size=8, ngram_buckets=64
    )
    assert report.n_pairs == 16 and report.n_train == 24 and report.n_eval == 9
    assert 0.0 <= report.accuracy <= 1.0 and "bidirectional" in report.report
    tuned = report.classifier
    assert not tuned.frozen_default_encoder and tuned.ngram_buckets == 64
    assert tuned.predict([BACKWARD[0]])[0] in LABELS
    # A fine-tuned body never reuses the pipeline's (frozen MiniLM) embedding.
    assert not tuned._can_reuse(np.ones(384, dtype=np.float32))
    with pytest.raises(ConfigError, match="only in memory"):
        tuned.save(tmp_path / "m")


@pytest.mark.slow
def test_frozen_training_saves_and_reloads(tmp_path):
    report = train_direction_classifier(_tiny_rows(), ngram_buckets=16, out=tmp_path / "m")
    assert report.saved_to == tmp_path / "m" / "direction_head.json"
    loaded = DirectionClassifier.load(tmp_path / "m")
    assert loaded.frozen_default_encoder and loaded.metadata["trained_on"] == 24


@pytest.mark.slow
def test_frozen_training_is_deterministic():
    a = train_direction_classifier(_tiny_rows(), ngram_buckets=32).classifier
    b = train_direction_classifier(_tiny_rows(), ngram_buckets=32).classifier
    np.testing.assert_array_equal(a.weights, b.weights)


@pytest.mark.slow
def test_training_rejects_bad_settings(tmp_path):
    with pytest.raises(ConfigError, match="fine_tune_pairs"):
        train_direction_classifier(_tiny_rows(), fine_tune_pairs=-1)
    with pytest.raises(InputError, match="no example"):
        train_direction_classifier([r for r in _tiny_rows() if r["label"] != "forward"])


def test_setfit_trainer_without_setfit_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "setfit", None)  # `import setfit` now fails
    with pytest.raises(MissingDependencyError, match=r'pip install "sarg-integrations\[train\]"'):
        train_direction_classifier(_tiny_rows(), fine_tune_pairs=16, trainer="setfit")
    with pytest.raises(ConfigError, match="trainer='sklearn' must be one of"):
        train_direction_classifier(_tiny_rows(), trainer="sklearn")


@pytest.mark.slow
def test_setfit_trainer_saves_a_head_that_loads_without_setfit(tmp_path, monkeypatch):
    pytest.importorskip("setfit")
    report = train_direction_classifier(
        _tiny_rows(), fine_tune_pairs=16, batch_size=8, trainer="setfit", out=tmp_path / "m"
    )
    assert report.n_pairs == 16 and report.n_train == 24 and 0.0 <= report.accuracy <= 1.0
    assert report.classifier.metadata["trainer"].startswith("setfit ")
    assert (tmp_path / "m" / "body").is_dir()
    import sys

    monkeypatch.setitem(sys.modules, "setfit", None)
    loaded = DirectionClassifier.load(tmp_path / "m")
    assert not loaded.frozen_default_encoder and loaded.ngram_buckets == 0
    np.testing.assert_allclose(loaded.weights, report.classifier.weights, atol=1e-6)
    assert loaded.predict([BACKWARD[0], FORWARD[0]])[0] in LABELS


# --------------------------------------------------------------------------- teacher


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Backward.", "backward"),
        ("direction: forward", "forward"),
        ('{"direction": "bidirectional"}', "bidirectional"),
        ('```json\n{"label": "Backward"}\n```', "backward"),
        ("**Forward**\nBecause it asks about effects.", "forward"),
        ("<think>maybe forward? no</think> Answer: backward", "backward"),
        ("The question asks how two things connect, so: bi-directional", "bidirectional"),
        ("  FORWARDS  ", "forward"),
        ("effect -> cause", "backward"),
        ({"direction": "forward"}, "forward"),
    ],
)
def test_teacher_parses_messy_answers(answer, expected):
    assert parse_direction_answer(answer) is Direction(expected)


@pytest.mark.parametrize("answer", ["", None, "I am not sure.", "forward or backward", "{}"])
def test_unreadable_answers_parse_to_none(answer):
    assert parse_direction_answer(answer) is None


def test_teacher_with_callable_and_async_llm():
    prompts = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        question = prompt.rsplit("Question: ", 1)[1]
        return "Direction: Backward." if question.startswith("Why") else '{"direction": "forward"}'

    async def allm(prompt: str) -> str:
        return "bidirectional"

    teacher = LLMDirectionTeacher(llm)
    assert teacher.predict(["Why did it rain?", "What does rain lead to?"]) == [
        "backward",
        "forward",
    ]
    assert "Why did it rain?" in prompts[0]
    assert (
        LLMDirectionTeacher(allm).predict_direction("How are A and B related?").direction
        is Direction.BIDIRECTIONAL
    )
    odd = LLMDirectionTeacher(lambda p: "no idea").predict_direction("q?")
    assert (
        odd.direction is Direction.BIDIRECTIONAL
        and odd.confidence == 0.0
        and "unparseable" in odd.rationale
    )


def test_teacher_with_a_langchain_chat_model():
    fake = pytest.importorskip("langchain_core.language_models.fake_chat_models")
    model = fake.FakeListChatModel(responses=["Backward.", "direction: forward"])
    teacher = LLMDirectionTeacher(model, max_concurrency=1)
    assert teacher.predict(["Why?", "What next?"]) == ["backward", "forward"]


def test_teacher_rejects_bad_settings():
    with pytest.raises(ConfigError, match="query"):
        LLMDirectionTeacher(lambda p: "forward", prompt="no slot")
    with pytest.raises(ConfigError, match="llm"):
        LLMDirectionTeacher(42)


def test_distill_writes_training_rows(tmp_path):
    queries = [f"Why did event {i} happen?" for i in range(12)] + ["What now?"]
    answers = {q: "backward" for q in queries[:12]}
    out = tmp_path / "labeled.jsonl"
    counts = distill_direction(
        lambda p: answers.get(p.rsplit("Question: ", 1)[1].split("\n")[0], "??"), queries, out
    )
    assert counts["labeled"] == 12 and counts["unparseable"] == 1 and counts["backward"] == 12
    rows = load_direction_dataset(out)
    assert {r["split"] for r in rows} == {"train", "validation", "test"}


def test_read_queries_formats(tmp_path):
    (tmp_path / "q.txt").write_text("Why?\n\nWhat next?\n")
    (tmp_path / "q.jsonl").write_text('{"question": "Why?"}\n{"question_text": "How?"}\n"What?"\n')
    assert read_queries(tmp_path / "q.txt") == ["Why?", "What next?"]
    assert read_queries(tmp_path / "q.jsonl") == ["Why?", "How?", "What?"]
    with pytest.raises(InputError, match="does not exist"):
        read_queries(tmp_path / "none.txt")


def test_auto_trainer_takes_setfit_only_when_installed(monkeypatch):
    from sarg_integrations.direction import training

    calls = []
    monkeypatch.setattr(training, "_setfit_installed", lambda: False)
    monkeypatch.setattr(training, "_require_setfit", lambda: calls.append("setfit"))
    lines = []
    with pytest.raises(InputError):  # no rows: stops after choosing, before any model
        train_direction_classifier([], log=lines.append)
    assert lines == ["trainer: builtin (auto)"] and calls == []
    monkeypatch.setattr(training, "_setfit_installed", lambda: True)
    lines.clear()
    with pytest.raises(InputError):
        train_direction_classifier([], log=lines.append)
    assert lines == ["trainer: setfit (auto)"] and calls == ["setfit"]
