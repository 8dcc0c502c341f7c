"""The cookbooks: stored without outputs, say what they show, and run top to bottom offline.

Execution uses nbclient (the engine nbmake runs on), which skips cells tagged
``skip-execution`` (the real-provider cells). ``pytest --nbmake cookbooks/`` runs the
same notebooks through nbmake.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

COOKBOOKS = Path(__file__).resolve().parents[1] / "cookbooks"
NOTEBOOKS = sorted(COOKBOOKS.glob("*.ipynb"))
EXPECTED = {
    "01_quickstart",
    "02_langchain_lcel",
    "03_llamaindex_query_engine",
    "04_case_study_multihop",
    "05_evaluation",
}
CELL_TIMEOUT_S = 600


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_planned_cookbooks_exist() -> None:
    assert {p.stem for p in NOTEBOOKS} >= EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    nb = load(path)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name}: a code cell has outputs; strip them"
            assert cell.get("execution_count") is None, f"{path.name}: execution_count is set"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_says_what_it_shows_first(path: Path) -> None:
    first = load(path)["cells"][0]
    assert first["cell_type"] == "markdown"
    text = "".join(first["source"])
    assert text.startswith("# "), "the first cell starts with a title"
    assert "**What this shows.**" in text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_provider_cells_are_skipped_in_ci(path: Path) -> None:
    """Cells that need a key or a network are tagged skip-execution (nbclient/nbmake honour it)."""
    for cell in load(path)["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and (
            "OPENAI_API_KEY" in source or "init_chat_model" in source
        ):
            assert "skip-execution" in cell["metadata"].get("tags", []), source[:80]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_offline(path: Path) -> None:
    nbformat = pytest.importorskip(
        "nbformat", reason="install the test extra: pip install -e '.[test]'"
    )
    nbclient = pytest.importorskip(
        "nbclient", reason="install the test extra: pip install -e '.[test]'"
    )
    pytest.importorskip("ipykernel", reason="install the test extra: pip install -e '.[test]'")
    nb = nbformat.read(path, as_version=4)
    env_before = os.environ.get("HF_HUB_OFFLINE")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    try:
        client = nbclient.NotebookClient(
            nb,
            timeout=CELL_TIMEOUT_S,
            kernel_name="python3",
            resources={"metadata": {"path": str(COOKBOOKS)}},
        )
        client.execute()
    finally:
        if env_before is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
    elapsed = time.perf_counter() - start
    skipped = [c for c in nb.cells if "skip-execution" in c.metadata.get("tags", [])]
    assert all(not c.get("outputs") for c in skipped)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    print(f"{path.name}: {elapsed:.1f} s")
