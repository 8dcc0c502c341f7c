"""Issue 16, item 1: concurrent first loads load once and never touch ``sys.stdout``."""

from __future__ import annotations

import ast
import sys
import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sarg_integrations import _models

# Taken at import, before the autouse fixture swaps the loader for a refusal: the real
# loader runs here with a fake SentenceTransformer class, so no model is loaded.
REAL_LOAD_SENTENCE_TRANSFORMER = _models.load_sentence_transformer
PACKAGE = Path(_models.__file__).resolve().parent
THREADS = 16


class _SlowChattyModel:
    """Stands in for SentenceTransformer: slow to build, and prints while building."""

    built = 0
    lock = threading.Lock()

    def __init__(self, path: str, device: str = "cpu") -> None:
        print("Loading weights ...")  # what a noisy library does
        time.sleep(0.05)  # long enough for every thread to be inside the loader
        with self.lock:
            type(self).built += 1
        self.path = path


def _fake_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "encoder"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"not read by the fake")
    return folder


def test_sixteen_concurrent_first_loads_build_once_and_keep_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = types.ModuleType("sentence_transformers")
    fake.SentenceTransformer = _SlowChattyModel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    _SlowChattyModel.built = 0
    folder = str(_fake_folder(tmp_path))
    stdout_before = sys.stdout
    barrier = threading.Barrier(THREADS)

    def first_call(_: int) -> object:
        barrier.wait()
        return REAL_LOAD_SENTENCE_TRANSFORMER(folder)

    with ThreadPoolExecutor(THREADS) as pool:
        models = list(pool.map(first_call, range(THREADS)))
    assert sys.stdout is stdout_before
    assert _SlowChattyModel.built == 1
    assert all(m is models[0] for m in models)


def test_load_once_serialises_first_calls_and_does_not_cache_failures() -> None:
    calls: list[int] = []
    failures = iter([ValueError("disk busy")])

    def loader(x: int) -> list[int]:
        time.sleep(0.02)
        calls.append(x)
        error = next(failures, None)
        if error is not None:
            raise error
        return [x]

    once = _models.load_once(loader)
    with pytest.raises(ValueError, match="disk busy"):
        once(1)
    barrier = threading.Barrier(8)

    def call(_: int) -> list[int]:
        barrier.wait()
        return once(1)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(call, range(8)))
    assert calls == [1, 1]  # the failed load, then one successful one for all eight
    assert all(r is results[0] for r in results)


def test_no_module_of_the_package_swaps_stdout() -> None:
    offenders = []
    for file in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in {"redirect_stdout", "redirect_stderr"}:
                offenders.append(f"{file.relative_to(PACKAGE)}:{node.lineno}")
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr in {"stdout", "stderr"} for t in node.targets
            ):
                offenders.append(f"{file.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []
