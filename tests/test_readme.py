"""The README's Python examples run and print what their ``#>`` lines say."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from conftest import REPO_ROOT

README = REPO_ROOT / "README.md"


def _examples() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    return [b for b in blocks if "#>" in b]


def test_readme_has_checked_examples():
    assert _examples(), "README.md should contain a python example with #> outputs"


@pytest.mark.slow
@pytest.mark.parametrize("block", _examples(), ids=lambda b: b.splitlines()[0][:40])
def test_readme_example_output(block):
    expected = [line[3:] for line in block.splitlines() if line.startswith("#> ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, str(README), "exec"), {})  # noqa: S102 - our own README
    assert out.getvalue().splitlines() == expected
