"""The LangChain adapter inside real LangChain pipelines, offline (fakes from langchain-core)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any
from uuid import UUID

import pytest

pytest.importorskip("langchain_core")
sarg_langchain = pytest.importorskip("sarg_integrations.langchain")

from adapter_support import (  # noqa: E402
    CORPUS,
    FALLBACK_QUERY,
    QUERY,
    components,
    core_result,
    scripted_llm_answer,
)
from fakes import HashingEmbedder  # noqa: E402
from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.language_models.fake_chat_models import (  # noqa: E402
    GenericFakeChatModel,
    ParrotFakeChatModel,
)
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.runnables import RunnableLambda, RunnablePassthrough  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402

from sarg_integrations import ConfigError, InputError, SARGConfig, SARGPipeline  # noqa: E402
from sarg_integrations.langchain import (  # noqa: E402
    LangChainEmbedder,
    SARGDocumentCompressor,
    SARGDocumentTransformer,
    SARGEmbeddings,
    create_sarg_chain,
)
from sarg_integrations.prompting import serialize_chains  # noqa: E402

STAGES = ["extract", "load_models", "encode", "build", "direction", "match", "traverse", "compile"]


def documents() -> list[Document]:
    return [Document(id=d["id"], page_content=d["text"], metadata=dict(d["metadata"])) for d in CORPUS]


def transformer(**settings: Any) -> SARGDocumentTransformer:
    return SARGDocumentTransformer(**components(), **settings)


def retriever_over(docs: list[Document]) -> Any:
    """An in-memory vector store retriever returning every document (ranking is irrelevant)."""
    store = InMemoryVectorStore(embedding=DeterministicFakeEmbedding(size=32))
    store.add_documents(docs)
    return store.as_retriever(search_kwargs={"k": len(docs)})


class Recorder(BaseCallbackHandler):
    """Records chain runs (name, parent, outputs) and the messages chat models receive."""

    def __init__(self) -> None:
        self.runs: dict[UUID, dict[str, Any]] = {}
        self.chat_inputs: list[str] = []

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self.runs[run_id] = {"name": kwargs.get("name"), "parent": parent_run_id, "tags": kwargs.get("tags")}

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.runs[run_id]["outputs"] = outputs

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.chat_inputs.extend(m.content for batch in messages for m in batch)

    def stage_runs(self) -> dict[str, dict[str, Any]]:
        return {r["name"]: r for r in self.runs.values() if r["name"] in STAGES}

    def run_id(self, name: str) -> UUID:
        return next(k for k, r in self.runs.items() if r["name"] == name)


# --------------------------------------------------------------------- transformer


def test_transformer_returns_chains_document_then_evidence() -> None:
    docs = documents()
    before = copy.deepcopy(docs)
    out = transformer().invoke({"query": QUERY, "documents": docs})
    expected = core_result()
    # First the chains, serialized exactly as the core serializes them.
    assert out[0].page_content == serialize_chains(expected.chains)
    assert out[0].metadata["sarg"]["role"] == "chains"
    assert [c["text"] for c in out[0].metadata["sarg"]["chains"]] == [c.to_text() for c in expected.chains]
    # Then the evidence in the core's order, original metadata kept next to "sarg".
    assert [d.id for d in out[1:]] == ["d1", "d2", "d3", "d5"]
    assert out[1].metadata["source"] == "weather.txt" and out[1].metadata["page"] == 1
    sarg = out[1].metadata["sarg"]
    assert sarg["chain_ids"] == [1, 2] and sarg["role"] == "evidence" and sarg["rank"] == 0
    assert {(h["chain"], h["hop"]) for h in sarg["hops"]} == {(1, 1), (2, 1)}
    assert sarg["scores"] == [round(c.score, 6) for c in expected.chains]
    # The inputs are untouched.
    assert docs == before
    assert all("sarg" not in d.metadata for d in docs)


def test_lcel_composition_with_a_vector_store_retriever() -> None:
    chain = {"query": RunnablePassthrough(), "documents": retriever_over(documents())} | transformer()
    out = chain.invoke(QUERY)
    assert out[0].id == "sarg-reasoning-chains"
    assert sorted(d.id for d in out[1:]) == ["d1", "d2", "d3", "d5"]


def test_question_key_async_batch_and_with_config_agree() -> None:
    sarg = transformer()
    docs = documents()
    sync = sarg.invoke({"query": QUERY, "documents": docs})
    assert sarg.invoke({"question": QUERY, "documents": docs}) == sync
    assert asyncio.run(sarg.ainvoke({"query": QUERY, "documents": docs})) == sync
    inputs = [{"query": QUERY, "documents": docs}, {"query": FALLBACK_QUERY, "documents": docs}]
    batched = sarg.batch(inputs)
    assert batched[0] == sync and asyncio.run(sarg.abatch(inputs)) == batched
    recorder = Recorder()
    bound = sarg.with_config(run_name="my-sarg", callbacks=[recorder])
    assert bound.invoke({"query": QUERY, "documents": docs}) == sync
    assert "my-sarg" in {r["name"] for r in recorder.runs.values()}


def test_transform_documents_interface() -> None:
    sarg = transformer()
    docs = documents()
    out = sarg.transform_documents(docs, query=QUERY)
    assert out == sarg.invoke({"query": QUERY, "documents": docs})
    assert asyncio.run(sarg.atransform_documents(docs, query=QUERY)) == out
    with pytest.raises(InputError, match="query="):
        sarg.transform_documents(docs)


def test_paper_fallback_returns_copies_of_every_document() -> None:
    docs = documents()
    out = transformer(evidence_budget=None).invoke({"query": FALLBACK_QUERY, "documents": docs})
    assert [d.id for d in out] == [d.id for d in docs]  # no chains document, nothing lost
    assert all(d.metadata["sarg"]["fallback"] for d in out)
    assert "no graph node is similar enough" in out[0].metadata["sarg"]["fallback_reason"]
    assert all("sarg" not in d.metadata for d in docs)


def test_documents_without_ids_get_stable_unique_ids() -> None:
    docs = [Document(page_content=d["text"]) for d in CORPUS]
    docs[1] = Document(page_content=CORPUS[1]["text"], metadata={"id": "farm-1"})
    out = transformer().invoke({"query": QUERY, "documents": docs})
    cited = [d.metadata["sarg"]["document_id"] for d in out[1:]]
    assert cited == ["doc-0", "farm-1", "doc-2", "doc-4"]
    assert "[farm-1]" in out[0].page_content
    assert out[1].id is None  # the copy keeps the original's (missing) id


def test_empty_documents_give_empty_output() -> None:
    assert transformer().invoke({"query": QUERY, "documents": []}) == []


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("just a string", "takes"),
        ({"documents": []}, "'query'"),
        ({"query": QUERY}, "'documents'"),
        ({"query": "  ", "documents": []}, "empty"),
        ({"query": QUERY, "documents": ["text"]}, r"documents\[0\] is a str"),
    ],
)
def test_bad_input_is_rejected_with_a_clear_error(value: Any, match: str) -> None:
    with pytest.raises(InputError, match=match):
        transformer().invoke(value)


def test_stages_are_child_runs_with_counters() -> None:
    recorder = Recorder()
    transformer().invoke({"query": QUERY, "documents": documents()}, {"callbacks": [recorder]})
    parent = recorder.run_id("SARGDocumentTransformer")
    stages = recorder.stage_runs()
    assert list(stages) == STAGES
    assert all(r["parent"] == parent for r in stages.values())
    assert stages["extract"]["outputs"]["triples"] == 5
    assert stages["traverse"]["outputs"]["chains_kept"] == 2
    assert stages["direction"]["outputs"]["direction"] == "forward"
    assert "sarg:build" in stages["build"]["tags"]


def test_async_stages_are_child_runs_too() -> None:
    recorder = Recorder()
    asyncio.run(
        transformer().ainvoke({"query": QUERY, "documents": documents()}, {"callbacks": [recorder]})
    )
    parent = recorder.run_id("SARGDocumentTransformer")
    stages = recorder.stage_runs()
    assert list(stages) == STAGES and all(r["parent"] == parent for r in stages.values())


def test_stage_error_is_reported_on_the_stage_run() -> None:
    class Broken:
        def embed(self, texts: Any) -> Any:
            raise RuntimeError("encoder down")

    errors: list[str] = []

    class ErrorRecorder(Recorder):
        def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            errors.append(self.runs[run_id]["name"])

    sarg = SARGDocumentTransformer(**{**components(), "embedder": Broken()})
    with pytest.raises(RuntimeError, match="encoder down"):
        sarg.invoke({"query": QUERY, "documents": documents()}, {"callbacks": [ErrorRecorder()]})
    # The first stage to encode (the query with the documents) reports the failure.
    assert errors == ["encode", "SARGDocumentTransformer"]


# --------------------------------------------------------------------- configuration


def test_settings_mirror_the_core_config() -> None:
    sarg = transformer(beam_width=5, top_k=1, similarity_threshold=0.2, max_depth=2, schema="generic_spo")
    config = sarg.sarg_pipeline.config
    assert (config.beam_width, config.top_k, config.similarity_threshold, config.max_depth) == (5, 1, 0.2, 2)
    assert config.schema == "generic_spo"
    out = sarg.invoke({"query": QUERY, "documents": documents()})
    assert len(out[0].metadata["sarg"]["chains"]) == 1
    assert max(len(c["hops"]) for c in out[0].metadata["sarg"]["chains"]) <= 2


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"beam_width": 0}, r"beam_width=0 must be an integer >= 1"),
        ({"similarity_threshold": 1.5}, r"similarity_threshold=1.5"),
        ({"direction": "sideways"}, r"sideways"),
        ({"beam_widht": 3}, r"unexpected keyword argument\(s\) \['beam_widht'\]"),
        ({"embedder": object()}, r"embedder=.* has no embed"),
        ({"pipeline": SARGPipeline(), "top_k": 1}, r"either pipeline= or the settings \['top_k'\]"),
        ({"pipeline": "nope"}, r"pipeline='nope' must be a SARGPipeline"),
    ],
)
def test_invalid_settings_raise_config_error(settings: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        SARGDocumentTransformer(**settings)
    with pytest.raises(ConfigError, match=match):
        SARGDocumentCompressor(**settings)


def test_a_shared_pipeline_is_used_as_is() -> None:
    pipeline = SARGPipeline(SARGConfig(top_k=1), **components())
    sarg = SARGDocumentTransformer(pipeline=pipeline)
    assert sarg.sarg_pipeline is pipeline
    assert SARGDocumentCompressor(pipeline=pipeline).sarg_pipeline is pipeline


def test_langchain_embeddings_are_accepted_as_embedder() -> None:
    fake = DeterministicFakeEmbedding(size=16)
    sarg = SARGDocumentTransformer(**{**components(), "embedder": fake})
    assert isinstance(sarg.sarg_pipeline.embedder.embedder, LangChainEmbedder)
    assert sarg.sarg_pipeline.embedder.embedder.embed(["a", "b"]).shape == (2, 16)
    # SARGEmbeddings goes the other way: the same vectors as the SARG embedder.
    wrapped = SARGEmbeddings(HashingEmbedder())
    assert wrapped.embed_query("heavy rain") == HashingEmbedder().embed(["heavy rain"])[0].tolist()
    with pytest.raises(ConfigError, match="embed_documents"):
        LangChainEmbedder(object())  # type: ignore[arg-type]


def test_a_langchain_chat_model_is_accepted_as_extractor() -> None:
    llm_module = pytest.importorskip("sarg_integrations.extraction.llm")
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedChat(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            prompt = "\n".join(str(m.content) for m in messages)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=scripted_llm_answer(prompt)))])

    settings = {**components(), "extractor": ScriptedChat()}
    sarg = SARGDocumentTransformer(**settings)
    assert isinstance(sarg.sarg_pipeline.extractor, llm_module.LLMTripleExtractor)
    out = sarg.invoke({"query": QUERY, "documents": documents()})
    assert out[0].page_content == serialize_chains(core_result().chains)
    assert asyncio.run(sarg.ainvoke({"query": QUERY, "documents": documents()})) == out


# --------------------------------------------------------------------- compressor


def test_compressor_matches_the_transformer() -> None:
    docs = documents()
    expected = transformer().invoke({"query": QUERY, "documents": docs})
    compressor = SARGDocumentCompressor(**components())
    assert compressor.compress_documents(docs, QUERY) == expected
    assert asyncio.run(compressor.acompress_documents(docs, QUERY)) == expected
    assert compressor.compress_documents([], QUERY) == []


def test_contextual_compression_retriever_and_pipeline() -> None:
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline

    docs = documents()
    base = retriever_over(docs)
    recorder = Recorder()
    retriever = ContextualCompressionRetriever(
        base_compressor=SARGDocumentCompressor(**components()), base_retriever=base
    )
    out = retriever.invoke(QUERY, {"callbacks": [recorder]})
    assert out[0].id == "sarg-reasoning-chains"
    assert sorted(d.id for d in out[1:]) == ["d1", "d2", "d3", "d5"]
    # The compressor's run sits under the retriever's, and the stages under the compressor.
    compressor_run = recorder.run_id("SARGDocumentCompressor")
    assert all(r["parent"] == compressor_run for r in recorder.stage_runs().values())
    assert asyncio.run(retriever.ainvoke(QUERY)) == out
    in_pipeline = DocumentCompressorPipeline(transformers=[SARGDocumentCompressor(**components())])
    expected = transformer().invoke({"query": QUERY, "documents": docs})
    assert in_pipeline.compress_documents(docs, QUERY) == expected


# --------------------------------------------------------------------- create_sarg_chain


def test_create_sarg_chain_sends_the_core_prompt() -> None:
    recorder = Recorder()
    docs = documents()
    chain = create_sarg_chain(RunnableLambda(lambda q: docs), ParrotFakeChatModel(), **components())
    out = chain.invoke(QUERY, {"callbacks": [recorder]})
    expected = core_result()
    assert set(out) == {"answer", "chains", "source_documents", "prompt", "sarg_result"}
    assert out["prompt"] == expected.prompt
    assert recorder.chat_inputs == [expected.prompt]  # exactly what the model received
    assert out["answer"] == expected.prompt  # the parrot echoes it
    prompt = recorder.chat_inputs[0]
    assert prompt.index("## Reasoning chains") < prompt.index(serialize_chains(expected.chains)) < prompt.index("## Evidence")
    assert [c["text"] for c in out["chains"]] == [c.to_text() for c in expected.chains]
    assert [d.id for d in out["source_documents"]] == ["d1", "d2", "d3", "d5"]
    assert out["sarg_result"].chains == expected.chains
    assert {"SARGChain", "SARG"} <= {r["name"] for r in recorder.runs.values()}
    assert chain.invoke({"question": QUERY})["prompt"] == expected.prompt
    assert asyncio.run(chain.ainvoke(QUERY))["prompt"] == expected.prompt
    assert [o["prompt"] for o in chain.batch([QUERY, QUERY])] == [expected.prompt] * 2


def test_create_sarg_chain_streams_answer_tokens_after_the_context() -> None:
    def model() -> GenericFakeChatModel:
        return GenericFakeChatModel(messages=iter([AIMessage(content="Food shortage, via flooding [d1].")]))

    docs = documents()
    chain = create_sarg_chain(RunnableLambda(lambda q: docs), model(), **components())
    chunks = list(chain.stream(QUERY))
    assert set(chunks[0]) == {"chains", "source_documents", "prompt", "sarg_result"}
    answer_chunks = [c["answer"] for c in chunks[1:]]
    assert len(answer_chunks) > 1 and all(set(c) == {"answer"} for c in chunks[1:])
    assert "".join(answer_chunks) == "Food shortage, via flooding [d1]."

    async def collect() -> list[dict[str, Any]]:
        achain = create_sarg_chain(RunnableLambda(lambda q: docs), model(), **components())
        return [c async for c in achain.astream(QUERY)]

    achunks = asyncio.run(collect())
    assert achunks[0]["prompt"] == chunks[0]["prompt"]
    assert "".join(c.get("answer", "") for c in achunks) == "Food shortage, via flooding [d1]."


def test_create_sarg_chain_without_documents_sends_a_flat_prompt() -> None:
    chain = create_sarg_chain(RunnableLambda(lambda q: []), ParrotFakeChatModel(), **components())
    out = chain.invoke(QUERY)
    assert out["sarg_result"] is None and out["chains"] == [] and out["source_documents"] == []
    assert "## Context" in out["prompt"] and QUERY in out["prompt"]


def test_create_sarg_chain_validates_its_arguments() -> None:
    with pytest.raises(ConfigError, match="llm="):
        create_sarg_chain(RunnableLambda(lambda q: []), "gpt-4")
    with pytest.raises(ConfigError, match="retriever="):
        create_sarg_chain(42, ParrotFakeChatModel())
    with pytest.raises(ConfigError, match="either transformer= or settings"):
        create_sarg_chain(RunnableLambda(lambda q: []), ParrotFakeChatModel(), transformer=transformer(), top_k=2)
    with pytest.raises(InputError, match="question"):
        create_sarg_chain(RunnableLambda(lambda q: []), ParrotFakeChatModel(), **components()).invoke({"x": 1})


# --------------------------------------------------------------------- real models


@pytest.mark.slow
def test_demo_corpus_with_real_models_finds_the_gba1_chain() -> None:
    from sarg_integrations.io import load_demo_corpus

    corpus = load_demo_corpus()
    docs = [Document(id=d.id, page_content=d.text, metadata=dict(d.metadata)) for d in corpus]
    store = InMemoryVectorStore(embedding=SARGEmbeddings())
    store.add_documents(docs)
    question = "What does a mutation in the GBA1 gene ultimately lead to?"
    chain = {"query": RunnablePassthrough(), "documents": store.as_retriever(search_kwargs={"k": 6})}
    out = (chain | SARGDocumentTransformer()).invoke(question)
    first = out[0].metadata["sarg"]["chains"][0]
    assert first["nodes"][-1] == "splenomegaly" and len(first["hops"]) == 4
    assert "GBA1" in first["nodes"][0]


def test_stages_appear_in_astream_events() -> None:
    async def ended() -> list[str]:
        sarg = transformer()
        stream = sarg.astream_events({"query": QUERY, "documents": documents()}, version="v2")
        return [e["name"] async for e in stream if e["event"] == "on_chain_end"]

    assert asyncio.run(ended()) == [*STAGES, "SARGDocumentTransformer"]


def test_evidence_fill_adds_documents_with_their_reason() -> None:
    out = transformer(evidence_fill=1).invoke({"query": QUERY, "documents": documents()})
    assert [d.id for d in out[1:]] == ["d1", "d2", "d3", "d5", "d4"]
    assert [d.metadata["sarg"]["selected_by"] for d in out[1:]] == [
        "chain", "chain", "chain", "chain", "relevance",
    ]
    assert out[-1].metadata["sarg"]["chain_ids"] == []
    # On fallback the output is the filled context only, not every document.
    fallback = transformer(evidence_fill=2).invoke(
        {"query": FALLBACK_QUERY, "documents": documents()}
    )
    assert len(fallback) == 2
    assert all(d.metadata["sarg"]["role"] == "context" for d in fallback)


# ------------------------------------------------------ issue 16, item 11: caller data


def test_the_callers_own_metadata_sarg_is_kept() -> None:
    docs = documents()
    docs[0] = Document(id="d1", page_content=CORPUS[0]["text"], metadata={"sarg": {"team": "ir", "rank": 7}})
    docs[1] = Document(id="d2", page_content=CORPUS[1]["text"], metadata={"sarg": "v2-index"})
    out = transformer().invoke({"query": QUERY, "documents": docs})
    first, second = out[1].metadata["sarg"], out[2].metadata["sarg"]
    assert first["team"] == "ir" and first["rank"] == 0  # merged; SARG's own keys win
    assert first["caller"] == {"team": "ir", "rank": 7}  # and the original is kept whole
    assert second["caller"] == "v2-index" and second["role"] == "evidence"


def test_an_input_id_equal_to_the_chains_id_is_renamed() -> None:
    docs = documents()
    docs[0] = Document(id="sarg-reasoning-chains", page_content=CORPUS[0]["text"])
    out = transformer().invoke({"query": QUERY, "documents": docs})
    ids = [d.id for d in out]
    assert ids[0] == "sarg-reasoning-chains" and len(set(ids)) == len(ids)
    assert ids[1] == "sarg-reasoning-chains#0" == out[1].metadata["sarg"]["document_id"]
    assert "[sarg-reasoning-chains#0]" in out[0].page_content


def test_metadata_id_that_is_a_numpy_array_is_a_clear_error() -> None:
    np = pytest.importorskip("numpy")
    docs = [Document(page_content=d["text"], metadata={"id": np.array([1, 2])}) for d in CORPUS]
    with pytest.raises(InputError, match=r"documents\[0\]\.metadata\['id'\] is a ndarray"):
        transformer().invoke({"query": QUERY, "documents": docs})
    docs = [Document(page_content=d["text"], metadata={"id": np.int64(40 + i)}) for i, d in enumerate(CORPUS)]
    out = transformer().invoke({"query": QUERY, "documents": docs})
    assert out[1].metadata["sarg"]["document_id"] == "40"
