"""The interactive HTML page in a real headless browser (Debian ``chromium``).

Skipped when no Chromium is installed (``apt-get install chromium``; ``.ci/run`` does it).
Set ``SARG_CHROMIUM`` to a browser binary to use another one, and
``SARG_SCREENSHOT_DIR`` to keep the screenshot.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from fakes import FixedKeyphrases, HashingEmbedder, PatternExtractor

from sarg_integrations.config import SARGConfig
from sarg_integrations.pipeline import SARGPipeline
from sarg_integrations.schema import SARGResult

HOSTILE = '<script>throw "pwned"</script> "quoted" & <b>bold</b>'
DOCS = [
    {"id": "weather", "text": "storm causes rain. " + HOSTILE + " causes havoc."},
    {"id": "river", "text": "rain leads to flood."},
    {"id": 'town "<b>"', "text": "flood causes damage."},
    {"id": "fields", "text": "drought causes famine."},
]
QUERY = "What does a storm lead to? <img src=x onerror=alert(1)>"


def chromium() -> str:
    for candidate in (
        os.environ.get("SARG_CHROMIUM"),
        "chromium",
        "chromium-browser",
        "google-chrome",
    ):
        if candidate and (found := shutil.which(candidate)):
            return found
    pytest.skip(
        "no headless Chromium found (install Debian's `chromium`, e.g. "
        "`apt-get install -y chromium`, or set SARG_CHROMIUM); .ci/run installs it"
    )


def browse(binary: str, page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [
        binary,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-extensions",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={profile}",
        "--window-size=1400,900",
        "--virtual-time-budget=3000",
        *extra,
        page.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def result() -> SARGResult:
    pipe = SARGPipeline(
        SARGConfig(similarity_threshold=0.3, direction="forward"),
        extractor=PatternExtractor(),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("storm"),
    )
    out = pipe.run(QUERY, DOCS)
    assert out.chains
    return out


def test_page_renders_chain_nodes_without_errors(result: SARGResult, tmp_path: Path) -> None:
    binary = chromium()
    page = tmp_path / "graph.html"
    result.to_html(page)
    run = browse(binary, page, tmp_path / "profile", "--dump-dom")
    dom = run.stdout
    assert run.returncode == 0, run.stderr[-2000:]
    assert 'data-sarg-render="ok"' in dom, dom[:2000]

    # Every node of every kept chain is drawn as a chain node, with its text.
    drawn = {
        html.unescape(m)
        for m in re.findall(r'<g class="node chain-node[^"]*" data-id="([^"]*)"', dom)
    }
    wanted = {node for chain in result.chains for node in chain.nodes}
    assert wanted <= drawn
    assert int(re.search(r'data-sarg-chain-nodes="(\d+)"', dom)[1]) == len(wanted)
    chain_edges = re.findall(r'<g class="edge chain-edge"', dom)
    assert len(chain_edges) == sum(len(c.hops) for c in result.chains)
    assert re.search(r'<div id="sarg-errors" role="alert"></div>', dom)  # nothing reported

    # The hostile document text is shown as text: escaped in the DOM, never executed.
    assert "&lt;script&gt;throw" in dom
    assert "<script>throw" not in dom
    assert "<img src=" not in dom and "<b>bold</b>" not in dom
    assert dom.count("<script") == 2

    # No console errors or uncaught exceptions were logged.
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if re.search(r"error|uncaught", line, re.I)], console


def test_screenshot_shows_the_page(result: SARGResult, tmp_path: Path) -> None:
    binary = chromium()
    page = tmp_path / "graph.html"
    result.to_html(page)
    shot = tmp_path / "graph.png"
    run = browse(binary, page, tmp_path / "profile", f"--screenshot={shot}", "--hide-scrollbars")
    assert run.returncode == 0, run.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1400, 900)
    assert len(data) > 20_000  # a drawn graph, not a blank page
    keep = os.environ.get("SARG_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "sarg_graph_screenshot.png")


def test_clicking_a_chain_edge_shows_its_sentence_and_document(
    result: SARGResult, tmp_path: Path
) -> None:
    binary = chromium()
    page = tmp_path / "graph.html"
    click = (
        "<script>document.querySelector('.edge.chain-edge')"
        ".dispatchEvent(new MouseEvent('click', {bubbles: true}));"
        "document.querySelector('.chain-item').click();</script>"
    )
    page.write_text(result.to_html().replace("</body>", click + "</body>"), encoding="utf-8")
    dom = browse(binary, page, tmp_path / "profile", "--dump-dom").stdout
    assert 'data-sarg-render="ok"' in dom
    details = re.search(r'<div id="sarg-details">(.*?)</div>\s*</aside>', dom, re.S)[1]
    hop = result.chains[0].hops[0]
    assert f"document {hop.document_ids[0]}" in details
    assert html.escape(hop.sentences[0], quote=False) in details
    assert '<svg id="sarg-graph"' in dom and 'class="focus"' in dom  # the chain is focused
    keep = os.environ.get("SARG_SCREENSHOT_DIR")
    if keep:
        shot = Path(keep) / "sarg_graph_clicked.png"
        browse(binary, page, tmp_path / "profile2", f"--screenshot={shot}", "--hide-scrollbars")
