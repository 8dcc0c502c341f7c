"""Exports and pictures of a SARGResult (sarg_integrations.viz), on fakes."""

from __future__ import annotations

import builtins
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from fakes import FixedKeyphrases, HashingEmbedder, PastTenseWords, PatternExtractor

from sarg_integrations import viz as visualize
from sarg_integrations.config import SARGConfig
from sarg_integrations.direction import CueWordDirectionClassifier
from sarg_integrations.errors import MissingDependencyError
from sarg_integrations.pipeline import SARGPipeline
from sarg_integrations.schema import SARGResult
from sarg_integrations.viz import exports, view

HOSTILE = '<script>alert("pwned")</script> "quoted" & <b>bold</b>'
DOCS = [
    {"id": "d1", "text": "storm causes rain. " + HOSTILE + " causes havoc."},
    {"id": "d2", "text": "Rain leads to flood."},
    {"id": "d<3>", "text": 'Flood causes "damage" [x] {y} | z.'},
    {"id": "d4", "text": "drought causes famine."},
]
QUERY = "What does a storm lead to? <img src=x onerror=alert(1)>"


def pipeline(**settings: Any) -> SARGPipeline:
    return SARGPipeline(
        SARGConfig(similarity_threshold=0.3, **settings),
        extractor=PatternExtractor(),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("storm"),
    )


@pytest.fixture(scope="module")
def result() -> SARGResult:
    out = pipeline(direction="forward").run(QUERY, DOCS)
    assert out.chains, out.fallback_reason
    return out


def chain_edges(result: SARGResult) -> set[tuple[str, str]]:
    return {hop.edge for chain in result.chains for hop in chain.hops}


# --------------------------------------------------------------------------- data exports


def test_to_networkx_carries_entry_and_chain_attributes(result: SARGResult) -> None:
    g = result.to_networkx()
    assert set(g.nodes) == set(result.graph.graph.nodes)
    assert set(g.edges) == set(result.graph.graph.edges)
    assert g is not result.graph.graph
    entry = result.entry_nodes[0].node
    assert g.nodes[entry]["entry"] is True
    for u, v in chain_edges(result):
        assert 1 in g.edges[u, v]["chains"]
        assert g.edges[u, v]["documents"] and g.edges[u, v]["sentences"]
    assert g.graph["direction"] == "forward"


def test_node_link_json_round_trips_to_networkx(result: SARGResult) -> None:
    data = json.loads(json.dumps(result.to_node_link()))
    g = nx.node_link_graph(data, edges="edges")
    assert g.is_directed()
    assert set(g.nodes) == set(result.graph.graph.nodes)
    assert set(g.edges) == set(result.graph.graph.edges)
    assert g.edges["storm", "rain"]["relation"] == "causes"


def test_graphml_is_readable_by_networkx(result: SARGResult, tmp_path: Path) -> None:
    path = tmp_path / "graph.graphml"
    text = result.to_graphml(path)
    assert path.read_text(encoding="utf-8") == text
    g = nx.read_graphml(path)
    assert set(g.nodes) == set(result.graph.graph.nodes)
    assert set(g.edges) == set(result.graph.graph.edges)
    assert json.loads(g.edges["storm", "rain"]["chains"]) == [1]
    assert nx.read_graphml(io.BytesIO(result.to_graphml().encode())).number_of_edges() == len(
        g.edges
    )


def test_mermaid_has_every_chain_edge_and_escapes_labels(result: SARGResult) -> None:
    text = result.to_mermaid()
    assert text.startswith("flowchart LR\n")
    ids = dict(re.findall(r'^\s+(n\d+)\["(.*)"\]$', text, flags=re.M))
    names = {v: k for k, v in ids.items()}
    for u, v in chain_edges(result):
        assert re.search(
            rf"^\s+{names[exports._mermaid_text(u)]} ==>\|\"[^\"]+\"\| "
            rf"{names[exports._mermaid_text(v)]}$",
            text,
            re.M,
        )
    # Labels never contain a raw quote, bracket or pipe that could end them early.
    for label in ids.values():
        assert not set(label) & set('"[]{}()|<>`')
    assert "#34;damage#34;" in text
    assert "#60;script#62;" in text and "<script" not in text
    assert "linkStyle" in text and "class " in text


def test_mermaid_rejects_unknown_orientation(result: SARGResult) -> None:
    with pytest.raises(ValueError, match="orientation"):
        visualize.to_mermaid(result, orientation="sideways")


# --------------------------------------------------------------------------- HTML


def test_html_is_self_contained_and_escapes_document_text(
    result: SARGResult, tmp_path: Path
) -> None:
    path = tmp_path / "graph.html"
    page = result.to_html(path)
    assert path.read_text(encoding="utf-8") == page
    assert page.startswith("<!DOCTYPE html>")
    # No external resources of any kind.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page, re.I)
    assert "@import" not in page and "url(http" not in page
    assert "<link" not in page
    assert page.count("<script") == 2  # the data block and the renderer
    # Untrusted text never appears as markup: not the hostile script, nor the query's tag.
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert "<b>bold</b>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # the escaped query heading
    data = json.loads(
        re.search(r'<script type="application/json" id="sarg-data">(.*?)</script>', page, re.S)[1]
    )
    assert HOSTILE in {n["id"] for n in data["nodes"]}  # the hostile text is a node, as data
    sentences = [ev["sentence"] for e in data["edges"] for ev in e["evidence"]]
    assert any('"damage"' in s for s in sentences)
    assert data["query"] == QUERY
    assert [c["colour"] for c in data["chains"]] == list(
        visualize.CHAIN_COLOURS[: len(result.chains)]
    )
    assert any(n["entry"] for n in data["nodes"])


@pytest.mark.parametrize("slot", ["__SCRIPT__", "__DATA__", "__STYLE__", "__TITLE__", "__META__"])
def test_html_query_naming_a_template_slot_stays_text(slot: str) -> None:
    # Issue 16 item 12: chained str.replace once spliced the renderer into <title>/<h1>.
    query = f"What does a storm lead to? {slot} {slot.lower()}"
    page = pipeline(direction="forward").run(query, DOCS).to_html()
    title = re.search(r"<title>(.*?)</title>", page, re.S)[1]
    heading = re.search(r"<h1>(.*?)</h1>", page, re.S)[1]
    assert title == f"SARG: {query}" and heading == query
    assert page.count("<script") == 2 and page.count("<style") == 1
    assert page.count(slot) == 3  # title, heading and the query in the JSON data


def test_html_is_deterministic() -> None:
    first = pipeline(direction="forward").run(QUERY, DOCS).to_html()
    second = pipeline(direction="forward").run(QUERY, DOCS).to_html()
    assert first == second


def test_html_scope_chains_drops_unrelated_components(result: SARGResult) -> None:
    page = visualize.to_html(result, scope="chains")
    assert '"drought"' not in page and '"drought"' in result.to_html()
    with pytest.raises(ValueError, match="scope"):
        visualize.to_html(result, scope="everything")


def test_each_kept_chain_gets_its_own_colour() -> None:
    docs = ["storm causes rain. rain causes flood.", "storm causes wind. wind causes damage."]
    res = pipeline(direction="forward", top_k=2).run("What does a storm lead to?", docs)
    assert len(res.chains) == 2
    colours = [c["colour"] for c in view.picture_data(res)["chains"]]
    assert len(set(colours)) == 2


def test_layout_is_layered_and_handles_cycles() -> None:
    layout = visualize.layout_graph(["a", "b", "c", "x"], [("a", "b"), ("b", "c"), ("c", "a")])
    assert layout.layers["a"] < layout.layers["b"] < layout.layers["c"]
    assert set(layout.positions) == {"a", "b", "c", "x"}
    assert len(set(layout.positions.values())) == 4


# --------------------------------------------------------------------------- images


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_image_is_written(result: SARGResult, tmp_path: Path, suffix: str) -> None:
    pytest.importorskip("matplotlib")
    path = result.to_image(tmp_path / f"graph.{suffix}")
    data = path.read_bytes()
    assert len(data) > 2000
    if suffix == "png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    else:
        assert b"<svg" in data[:2000]


def test_svg_is_reproducible(result: SARGResult, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    a = result.to_image(tmp_path / "a.svg").read_bytes()
    b = result.to_image(tmp_path / "b.svg").read_bytes()
    assert a == b


def test_image_rejects_unknown_format(result: SARGResult, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="png"):
        result.to_image(tmp_path / "graph.gif")


def test_image_without_matplotlib_names_the_extra(
    result: SARGResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_matplotlib(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(MissingDependencyError, match=r"sarg-integrations\[viz\]"):
        result.to_image(tmp_path / "graph.png")


# --------------------------------------------------------------------------- Jupyter


def test_repr_html_shows_direction_chains_citations_size_timings(result: SARGResult) -> None:
    out = result._repr_html_()
    assert "forward" in out
    assert "storm --[causes]--&gt; rain" in out
    assert "[d1]" in out and "[d2]" in out
    assert f"{result.graph.number_of_nodes} nodes" in out
    assert "timings (ms)" in out
    assert "<img src=x" not in out and "<script>alert" not in out
    assert '<iframe sandbox="allow-scripts" srcdoc="' in out


def test_repr_markdown_shows_direction_chains_and_mermaid(result: SARGResult) -> None:
    out = result._repr_markdown_()
    assert "**forward**" in out
    assert "\\[d1\\]" in out
    assert f"{result.graph.number_of_nodes} nodes" in out
    assert "timings (ms)" in out
    assert "```mermaid\nflowchart LR" in out
    assert "<img" not in out


def test_fallback_result_still_renders() -> None:
    res = pipeline(direction="forward").run("What about museums?", ["Museums open on Sundays."])
    assert res.used_fallback
    assert "data-sarg-render" in res.to_html()
    assert "fallback" in res._repr_markdown_()
    assert res.to_mermaid().startswith("flowchart LR")


def test_importing_the_package_does_not_import_visualize() -> None:
    code = (
        "import sys, sarg_integrations; "
        "print('sarg_integrations.viz' in sys.modules, 'matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def fake_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    from sarg_integrations import cli

    def fake_build(config: SARGConfig, extractor: Any = None) -> SARGPipeline:
        return SARGPipeline(
            config,
            extractor=PatternExtractor(),
            embedder=HashingEmbedder(),
            direction_classifier=CueWordDirectionClassifier(),
            keyphrase_extractor=FixedKeyphrases("storm"),
            event_reader=PastTenseWords(),
        )

    monkeypatch.setattr(cli.run, "build_pipeline", fake_build)


def write_docs(folder: Path) -> Path:
    folder.mkdir()
    for doc in DOCS:
        name = re.sub(r"\W", "_", doc["id"])
        (folder / f"{name}.txt").write_text(doc["text"], encoding="utf-8")
    return folder


@pytest.mark.parametrize("picture", ["graph.png", "graph.svg"])
def test_cli_run_writes_html_and_picture(
    fake_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], picture: str
) -> None:
    pytest.importorskip("matplotlib")
    from sarg_integrations import cli

    docs = write_docs(tmp_path / "docs")
    html_out, pic_out = tmp_path / "graph.html", tmp_path / picture
    code = cli.main(
        [
            "run",
            "-q",
            "What does a storm lead to?",
            "-d",
            str(docs),
            "--threshold",
            "0.3",
            "--html",
            str(html_out),
            "--png",
            str(pic_out),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"HTML page written to {html_out}" in out
    assert f"Picture written to {pic_out}" in out
    assert html_out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert pic_out.stat().st_size > 2000


def test_cli_demo_accepts_html(
    fake_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sarg_integrations import cli

    out_file = tmp_path / "demo.html"
    assert cli.main(["demo", "--html", str(out_file)]) == 0
    assert "HTML page written to" in capsys.readouterr().out
    assert "data-sarg-render" in out_file.read_text(encoding="utf-8")


def test_cli_png_rejects_other_suffixes_before_running(
    fake_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sarg_integrations import cli

    docs = write_docs(tmp_path / "docs")
    code = cli.main(["run", "-q", "storm?", "-d", str(docs), "--png", str(tmp_path / "graph.gif")])
    assert code == 2
    assert "must end in .png or .svg" in capsys.readouterr().err


def test_cli_png_without_matplotlib_names_the_extra(
    fake_cli: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sarg_integrations import cli

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    docs = write_docs(tmp_path / "docs")
    code = cli.main(["run", "-q", "storm?", "-d", str(docs), "--png", str(tmp_path / "g.png")])
    assert code == 2
    assert 'pip install "sarg-integrations[viz]"' in capsys.readouterr().err


def test_cli_html_to_unwritable_path_is_a_clear_error(
    fake_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sarg_integrations import cli

    docs = write_docs(tmp_path / "docs")
    target = tmp_path / "missing" / "graph.html"
    code = cli.main(["run", "-q", "storm?", "-d", str(docs), "--html", str(target)])
    assert code == 2
    assert "cannot write the HTML file" in capsys.readouterr().err
