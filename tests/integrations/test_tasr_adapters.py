"""strategy="tasr" through the LangChain and LlamaIndex adapters and the CLI (fakes only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import HashingEmbedder
from tasr_support import ANSWER, CONFIG, DOCS, QUESTION, TAXONOMY, DictTyper, FixedTriples

from sarg_integrations import SARGConfig, SARGPipeline
from sarg_integrations.tasr import LLMQueryDecomposer

CHAIN = "Science Activity Planner --[uses]--> MySQL --[developed by]--> Oracle Corporation"


def settings(llm: Any) -> dict[str, Any]:
    return {
        **CONFIG,
        "extractor": FixedTriples(),
        "embedder": HashingEmbedder(),
        "query_decomposer": llm,
        "entity_typer": DictTyper(),
    }


def test_langchain_transformer_with_a_fake_chat_model_decomposer() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from sarg_integrations.langchain import SARGDocumentTransformer

    # A chat model passed as query_decomposer is wrapped in an LLMQueryDecomposer; the
    # answer names Work/Database, so the transformer keeps the default taxonomy's WORK.
    transformer = SARGDocumentTransformer(**settings(FakeListChatModel(responses=[ANSWER])))
    assert transformer.sarg_pipeline.config.strategy == "tasr"
    docs = [
        Document(id=d["id"], page_content=d["text"], metadata={"n": i}) for i, d in enumerate(DOCS)
    ]
    out = transformer.invoke({"query": QUESTION, "documents": docs})
    sarg = out[0].metadata["sarg"]
    assert sarg["role"] == "chains" and [c["text"] for c in sarg["chains"]] == [CHAIN]
    assert [d.id for d in out[1:]] == ["Doc[1]", "Doc[6]"]
    assert out[1].metadata["n"] == 0 and out[1].metadata["sarg"]["chain_ids"] == [1]


def test_llama_index_postprocessor_and_query_engine_with_tasr() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.llms import MockLLM
    from llama_index.core.schema import NodeWithScore, TextNode

    from sarg_integrations.llama_index import SARGNodePostprocessor, SARGQueryEngine

    decomposer = LLMQueryDecomposer(lambda prompt: ANSWER, taxonomy=TAXONOMY)
    nodes = [NodeWithScore(node=TextNode(id_=d["id"], text=d["text"]), score=1.0) for d in DOCS]
    post = SARGNodePostprocessor(**settings(decomposer))
    out = post.postprocess_nodes(nodes, query_str=QUESTION)
    assert out[0].node.node_id == "sarg-reasoning-chains"
    assert [n.node.node_id for n in out[1:]] == ["Doc[1]", "Doc[6]"]

    from llama_index.core.retrievers import BaseRetriever

    class Fixed(BaseRetriever):
        def _retrieve(self, query_bundle: Any) -> list[NodeWithScore]:
            return nodes

    engine = SARGQueryEngine(retriever=Fixed(), llm=MockLLM(), **settings(decomposer))
    response = engine.query(QUESTION)
    assert CHAIN.split(" --")[0] in str(response)  # MockLLM echoes the TaSR prompt
    assert response.metadata["sarg"]["chains"][0]["text"] == CHAIN


def test_cli_strategy_options_reach_the_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    from sarg_integrations import cli

    configs: list[SARGConfig] = []

    def fake_build(config: SARGConfig, extractor: Any = None) -> SARGPipeline:
        configs.append(config)
        return SARGPipeline(
            config,
            extractor=FixedTriples(),
            embedder=HashingEmbedder(),
            query_decomposer=LLMQueryDecomposer(lambda prompt: ANSWER, taxonomy=TAXONOMY),
            entity_typer=DictTyper(),
        )

    monkeypatch.setattr(cli, "build_pipeline", fake_build)
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps(d) for d in DOCS))
    out_json = tmp_path / "out.json"
    argv = [
        "run",
        "-q",
        QUESTION,
        "-d",
        str(docs),
        "--strategy",
        "tasr",
        "--tasr-threshold",
        "0.7",
        "--tasr-alpha",
        "0.5",
        "--tasr-depth",
        "2",
        "--json",
        str(out_json),
    ]
    assert cli.main(argv) == 0
    config = configs[0]
    assert (config.strategy, config.tasr_threshold, config.tasr_taxonomy_depth, config.schema) == (
        "tasr",
        0.7,
        2,
        "generic_spo",
    )
    report = capsys.readouterr().out
    assert "TaSR sub-queries (bridge, llm):" in report and "binds ?x = MySQL" in report
    assert CHAIN in report
    assert json.loads(out_json.read_text())["trace"]["bindings"]["?y"] == "Oracle Corporation"
    assert cli.main([*argv[:6], "--tasr-alpha", "2"]) == 2
