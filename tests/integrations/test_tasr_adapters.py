"""strategy="tasr" through the LangChain and LlamaIndex adapters and the CLI (fakes only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import FixedKeyphrases, HashingEmbedder
from tasr_support import (
    ANSWER,
    CONFIG,
    DOCS,
    LLM_TYPES,
    QUESTION,
    TAXONOMY,
    DictTyper,
    FixedTriples,
    reply,
    tasr_llm,
)

from sarg_integrations import SARGConfig, SARGPipeline
from sarg_integrations.direction import CueWordDirectionClassifier
from sarg_integrations.errors import ConfigError
from sarg_integrations.tasr import LLMQueryDecomposer

CHAIN = "Science Activity Planner --[uses]--> MySQL --[developed by]--> Oracle Corporation"
# The example's one typing call lists each document's triple ends, then the question's
# entity; a FakeListChatModel answers the decomposition, then that call, in turn.
MENTIONS = [
    "Science Activity Planner",
    "MySQL",
    "Science Activity Planner",
    "PostgreSQL",
    "MySQL",
    "Oracle Corporation",
    "Science Activity Planner",
]
TYPING = json.dumps({"types": [{"id": i, "type": LLM_TYPES[m]} for i, m in enumerate(MENTIONS, 1)]})


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


def test_langchain_llm_setting_decomposes_and_types() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from sarg_integrations.langchain import SARGDocumentTransformer

    model = FakeListChatModel(responses=[ANSWER, TYPING])
    transformer = SARGDocumentTransformer(
        **CONFIG, extractor=FixedTriples(), embedder=HashingEmbedder(), llm=model
    )
    strategy = transformer.sarg_pipeline.tasr_strategy
    assert type(strategy.decomposer).__name__ == "LLMQueryDecomposer"
    assert type(strategy.typer).__name__ == "LLMEntityTyper"
    assert "llm" not in transformer.model_dump()  # a collaborator, not a setting
    docs = [Document(id=d["id"], page_content=d["text"]) for d in DOCS]
    out = transformer.invoke({"query": QUESTION, "documents": docs})
    assert [c["text"] for c in out[0].metadata["sarg"]["chains"]] == [CHAIN]
    assert [d.id for d in out[1:]] == ["Doc[1]", "Doc[6]"]
    assert (strategy.typer.calls, strategy.typer.failures) == (1, 0)

    # A decomposer or typer given as well takes precedence over llm for its part.
    mixed = SARGDocumentTransformer(
        **CONFIG, embedder=HashingEmbedder(), llm=model, entity_typer=DictTyper()
    )
    assert type(mixed.sarg_pipeline.tasr_strategy.typer).__name__ == "DictTyper"
    with pytest.raises(ConfigError, match=r"pass either pipeline= or the settings \['llm'\]"):
        SARGDocumentTransformer(pipeline=transformer.sarg_pipeline, llm=model)


def test_llama_index_llm_setting_decomposes_and_types() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.bridge.pydantic import Field
    from llama_index.core.llms import (
        CompletionResponse,
        CompletionResponseGen,
        CustomLLM,
        LLMMetadata,
        MockLLM,
    )
    from llama_index.core.llms.callbacks import llm_completion_callback
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    from sarg_integrations.llama_index import SARGNodePostprocessor, SARGQueryEngine

    class ScriptedLLM(CustomLLM):
        """Answers TaSR's decomposition and typing prompts; records them."""

        prompts: list[str] = Field(default_factory=list)

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="scripted-tasr")

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            self.prompts.append(prompt)
            return CompletionResponse(text=reply(prompt))

        @llm_completion_callback()
        def stream_complete(
            self, prompt: str, formatted: bool = False, **kwargs: Any
        ) -> CompletionResponseGen:
            raise NotImplementedError

    llm = ScriptedLLM()
    nodes = [NodeWithScore(node=TextNode(id_=d["id"], text=d["text"]), score=1.0) for d in DOCS]
    post = SARGNodePostprocessor(
        **CONFIG, extractor=FixedTriples(), embedder=HashingEmbedder(), llm=llm
    )
    out = post.postprocess_nodes(nodes, query_str=QUESTION)
    assert [n.node.node_id for n in out] == ["sarg-reasoning-chains", "Doc[1]", "Doc[6]"]
    assert out[0].node.metadata["sarg"]["chains"][0]["text"] == CHAIN
    assert len(llm.prompts) == 2 and QUESTION in llm.prompts[0]

    # SARGQueryEngine's own llm writes the answer; it does not decompose or type.
    class Fixed(BaseRetriever):
        def _retrieve(self, query_bundle: Any) -> list[NodeWithScore]:
            return nodes

    engine = SARGQueryEngine(retriever=Fixed(), llm=MockLLM(), **CONFIG, embedder=HashingEmbedder())
    strategy = engine.sarg_pipeline.tasr_strategy
    assert type(strategy.decomposer).__name__ == "RuleQueryDecomposer"
    assert type(strategy.typer).__name__ == "OfflineEntityTyper"


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

    monkeypatch.setattr(cli.run, "build_pipeline", fake_build)
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


@pytest.fixture
def llm_cli(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Route `--llm` to a scripted TaSR model and the pipeline to the worked example."""
    from sarg_integrations import cli, io
    from sarg_integrations.documents import coerce_documents
    from sarg_integrations.models import specs

    state: dict[str, Any] = {"model": tasr_llm(), "specs": [], "builds": []}

    def fake_resolve(spec: str, **kwargs: Any) -> Any:
        state["specs"].append(spec)
        return state["model"]

    def fake_build(config: SARGConfig, extractor: Any = None, llm: Any = None) -> SARGPipeline:
        state["builds"].append((config, extractor, llm))
        return SARGPipeline(
            config,
            extractor=FixedTriples(),
            embedder=HashingEmbedder(),
            keyphrase_extractor=FixedKeyphrases("database"),
            direction_classifier=CueWordDirectionClassifier(),
            llm=llm,
        )

    monkeypatch.setattr(specs, "resolve_llm_spec", fake_resolve)
    monkeypatch.setattr(cli.run, "build_pipeline", fake_build)
    monkeypatch.setattr(io, "load_demo_corpus", lambda: coerce_documents(DOCS))
    return state


@pytest.mark.parametrize("command", ["run", "demo"])
def test_cli_llm_decomposes_and_types_under_tasr(
    llm_cli: dict[str, Any], command: str, tmp_path: Path, capsys: Any
) -> None:
    from sarg_integrations import cli
    from sarg_integrations.extraction.llm import LLMTripleExtractor

    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps(d) for d in DOCS))
    source = ["run", "-q", QUESTION, "-d", str(docs)] if command == "run" else ["demo"]
    if command == "demo":
        source += ["--question", QUESTION]
    argv = [*source, "--llm", "fake:tasr", "--tasr-threshold", "0.7"]
    assert cli.main([*argv, "--strategy", "tasr"]) == 0
    config, extractor, llm = llm_cli["builds"][0]
    # One resolved model: the triple extractor's, and the pipeline's llm for TaSR.
    assert config.strategy == "tasr" and llm_cli["specs"] == ["fake:tasr"]
    assert llm is llm_cli["model"]
    assert isinstance(extractor, LLMTripleExtractor) and extractor.prompt.name == "generic_spo"
    report = capsys.readouterr().out
    assert "TaSR sub-queries (bridge, llm):" in report and "binds ?y = Oracle Corporation" in report
    assert CHAIN in report
    assert len(llm.prompts) == 2 and QUESTION in llm.prompts[0]
    assert "7. Science Activity Planner" in llm.prompts[1]  # the typing call

    # SARG does not use the model beyond extraction: no llm reaches the pipeline.
    assert cli.main(argv) == 0
    assert llm_cli["builds"][1][2] is None and llm_cli["builds"][1][0].strategy == "sarg"
