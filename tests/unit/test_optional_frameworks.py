"""The core works without LangChain or LlamaIndex; the adapters say which extra to install."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# A meta-path finder that makes the frameworks look uninstalled, even though the test
# environment has them: the honest stand-in for a CI job without the extras.
BLOCKER = textwrap.dedent(
    """
    import sys

    BLOCKED = {"langchain", "langchain_core", "langchain_classic", "llama_index",
               "llama_index_instrumentation"}

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
            return None

    sys.meta_path.insert(0, Block())
    """
)

SCRIPT = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {tests!r})
    import sarg_integrations
    from sarg_integrations import SARGPipeline, SARGConfig, MissingDependencyError
    from fakes import FixedKeyphrases, HashingEmbedder, PatternExtractor

    pipeline = SARGPipeline(SARGConfig(), extractor=PatternExtractor(),
                            embedder=HashingEmbedder(), keyphrase_extractor=FixedKeyphrases("rain"))
    result = pipeline.run("What does rain lead to?", ["rain causes flood.", "flood causes damage."])
    report = {{"chain": result.chains[0].to_text(), "errors": {{}}}}
    for name in ("sarg_integrations.langchain", "sarg_integrations.llama_index"):
        try:
            __import__(name)
        except MissingDependencyError as exc:
            report["errors"][name] = [str(exc), exc.extra, isinstance(exc, ImportError)]
    report["loaded"] = sorted(m for m in sys.modules
                              if m.split(".")[0] in ("langchain_core", "llama_index"))
    print(json.dumps(report))
    """
)


def run_without_frameworks() -> dict:
    code = BLOCKER + SCRIPT.format(tests=str(REPO / "tests"))
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_core_runs_without_either_framework_and_adapters_name_their_extra() -> None:
    report = run_without_frameworks()
    assert report["chain"] == "rain --[causes]--> flood --[causes]--> damage"
    assert report["loaded"] == []
    langchain_msg, langchain_extra, is_import_error = report["errors"]["sarg_integrations.langchain"]
    assert 'pip install "sarg-integrations[langchain]"' in langchain_msg
    assert "langchain-core" in langchain_msg and langchain_extra == "langchain" and is_import_error
    llama_msg, llama_extra, _ = report["errors"]["sarg_integrations.llama_index"]
    assert 'pip install "sarg-integrations[llama-index]"' in llama_msg
    assert "llama-index-core" in llama_msg and llama_extra == "llama-index"


def test_the_core_package_never_imports_an_adapter() -> None:
    # Module level only: a function may import an adapter when handed a framework object.
    core = [
        p
        for p in (REPO / "sarg_integrations").rglob("*.py")
        if not {"langchain", "llama_index"} & set(p.relative_to(REPO / "sarg_integrations").parts)
        and p.name != "_adapters.py"
    ]
    pattern = re.compile(r"^(from|import)\s+(sarg_integrations\.(langchain|llama_index)|langchain|llama_index)\b", re.M)
    offenders = [str(p) for p in core if pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_every_advertised_extra_exists_in_pyproject() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    sources = [*(REPO / "sarg_integrations").rglob("*.py"), *REPO.glob("*.md"), *(REPO / "docs").glob("*.md")]
    named = set()
    for path in sources:
        for group in re.findall(r"pip install [\"']?sarg-integrations\[([A-Za-z0-9_,\- ]+)\]", path.read_text(encoding="utf-8")):
            named.update(e.strip() for e in group.split(","))
    for path in (REPO / "sarg_integrations").rglob("*.py"):
        for call in re.findall(r"MissingDependencyError\(([^)]*)\)", path.read_text(encoding="utf-8")):
            named.update(re.findall(r'extra="([A-Za-z0-9_\-]+)"', call))
    assert {"langchain", "llama-index"} <= named
    assert sorted(named - set(extras)) == []
    # The extras install what the adapters import.
    assert any(dep.startswith("langchain-core") for dep in extras["langchain"])
    assert any(dep.startswith("llama-index-core") for dep in extras["llama-index"])


def test_doctest_collection_skips_adapters_when_frameworks_are_missing(tmp_path: Path) -> None:
    # sitecustomize runs the blocker before pytest starts: a core-only environment.
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "sarg_integrations"],
        capture_output=True, text=True, cwd=REPO, timeout=300, env=env,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "sarg_integrations/langchain" not in proc.stdout
    assert "sarg_integrations/pipeline.py" in proc.stdout
