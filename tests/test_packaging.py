"""What the documentation promises about installing matches pyproject.toml (issue 16)."""

from __future__ import annotations

import re
import tomllib

from conftest import REPO_ROOT


def _extra(name: str) -> list[str]:
    data = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data["project"]["optional-dependencies"][name]


def test_the_langchain_extra_installs_what_the_compressor_example_imports():
    # Item 15: ContextualCompressionRetriever lives in langchain-classic, named nowhere.
    names = {re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0] for req in _extra("langchain")}
    assert "langchain-classic" in names
    for doc in ("README.md", "docs/adapters.md"):
        text = (REPO_ROOT / doc).read_text(encoding="utf-8")
        for line in text.splitlines():
            if "ContextualCompressionRetriever" in line and "import" not in line:
                context = text[max(0, text.index(line) - 400) : text.index(line) + len(line)]
                assert "langchain-classic" in context, (doc, line)
