"""The LlamaIndex adapter inside real LlamaIndex pipelines, offline (a scripted CustomLLM)."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("sarg_integrations.llama_index")

from adapter_support import (  # noqa: E402
    CORPUS,
    FALLBACK_QUERY,
    QUERY,
    components,
    core_result,
    scripted_llm_answer,
)
from fakes import HashingEmbedder  # noqa: E402
from llama_index.core import Document, VectorStoreIndex  # noqa: E402
from llama_index.core.base.base_retriever import BaseRetriever  # noqa: E402
from llama_index.core.base.response.schema import AsyncStreamingResponse, StreamingResponse  # noqa: E402
from llama_index.core.bridge.pydantic import Field  # noqa: E402
from llama_index.core.instrumentation import get_dispatcher  # noqa: E402
from llama_index.core.instrumentation.event_handlers import BaseEventHandler  # noqa: E402
from llama_index.core.instrumentation.span_handlers import SimpleSpanHandler  # noqa: E402
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata  # noqa: E402
from llama_index.core.llms.callbacks import llm_completion_callback  # noqa: E402
from llama_index.core.query_engine import RetrieverQueryEngine  # noqa: E402
from llama_index.core.response_synthesizers import get_response_synthesizer  # noqa: E402
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode  # noqa: E402

from sarg_integrations import ConfigError, InputError, SARGConfig, SARGPipeline  # noqa: E402
from sarg_integrations.llama_index import (  # noqa: E402
    LlamaIndexEmbedder,
    SARGEmbedding,
    SARGNodePostprocessor,
    SARGQueryEngine,
    SARGStageEndEvent,
    SARGStageStartEvent,
)
from sarg_integrations.prompting import serialize_chains  # noqa: E402

STAGES = ["extract", "load_models", "encode", "build", "direction", "match", "traverse", "compile"]


class EchoLLM(CustomLLM):
    """A scripted LLM: records every prompt and answers with ``answer`` (default: the prompt)."""

    prompts: list[str] = Field(default_factory=list)
    answer: str | None = None

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="echo")

    def _reply(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answer if self.answer is not None else prompt

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._reply(prompt))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Iterator[CompletionResponse]:
        reply = self._reply(prompt)

        def tokens() -> Iterator[CompletionResponse]:
            text = ""
            for word in reply.split(" "):
                delta = word if not text else " " + word
                text += delta
                yield CompletionResponse(text=text, delta=delta)

        return tokens()


class FixedRetriever(BaseRetriever):
    """Returns the given nodes for every query."""

    def __init__(self, nodes: list[NodeWithScore]) -> None:
        super().__init__()
        self.nodes = nodes

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return list(self.nodes)


def nodes() -> list[NodeWithScore]:
    return [
        NodeWithScore(node=TextNode(id_=d["id"], text=d["text"], metadata=dict(d["metadata"])), score=1.0 - i / 10)
        for i, d in enumerate(CORPUS)
    ]


def postprocessor(**settings: Any) -> SARGNodePostprocessor:
    return SARGNodePostprocessor(**components(), **settings)


def vector_index() -> VectorStoreIndex:
    documents = [Document(text=d["text"], doc_id=d["id"], metadata=dict(d["metadata"])) for d in CORPUS]
    return VectorStoreIndex.from_documents(documents, embed_model=SARGEmbedding(HashingEmbedder()))


# --------------------------------------------------------------------- postprocessor


def test_postprocessor_returns_chains_node_then_evidence() -> None:
    given = nodes()
    before = copy.deepcopy(given)
    out = postprocessor().postprocess_nodes(given, query_str=QUERY)
    expected = core_result()
    assert out[0].node.node_id == "sarg-reasoning-chains"
    assert out[0].node.get_content() == serialize_chains(expected.chains)
    assert out[0].score == pytest.approx(expected.chains[0].score)
    assert [n.node.node_id for n in out[1:]] == ["d1", "d2", "d3", "d5"]
    assert [n.score for n in out[1:]] == [1.0, 0.9, 0.8, 0.6]  # retrieval scores kept
    first = out[1].node
    assert first.metadata["source"] == "weather.txt"
    assert first.metadata["sarg"]["chain_ids"] == [1, 2]
    # "sarg" never reaches the LLM or the embedder as text.
    assert "sarg" not in first.get_content(metadata_mode=MetadataMode.LLM)
    assert "sarg" not in first.get_content(metadata_mode=MetadataMode.EMBED)
    assert "weather.txt" in first.get_content(metadata_mode=MetadataMode.LLM)
    # Inputs untouched.
    assert [n.model_dump() for n in given] == [n.model_dump() for n in before]


def test_postprocessor_async_is_native_and_agrees() -> None:
    sarg = postprocessor()
    calls: list[str] = []
    pipeline = sarg.sarg_pipeline
    original_arun = pipeline.arun

    async def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append("arun")
        return await original_arun(*args, **kwargs)

    pipeline.arun = spy  # type: ignore[method-assign]
    sync = sarg.postprocess_nodes(nodes(), query_str=QUERY)
    out = asyncio.run(sarg.apostprocess_nodes(nodes(), query_bundle=QueryBundle(QUERY)))
    assert calls == ["arun"]
    assert [n.model_dump() for n in out] == [n.model_dump() for n in sync]


def test_postprocessor_requires_a_query_and_handles_empty_input() -> None:
    with pytest.raises(InputError, match="needs the query: call postprocess_nodes"):
        postprocessor().postprocess_nodes(nodes())
    assert postprocessor().postprocess_nodes([], query_str=QUERY) == []
    with pytest.raises(InputError, match=r"nodes\[0\] is a TextNode"):
        postprocessor().postprocess_nodes([TextNode(text="x")], query_str=QUERY)  # type: ignore[list-item]


def test_postprocessor_paper_fallback_returns_copies_of_every_node() -> None:
    out = postprocessor(evidence_budget=None).postprocess_nodes(nodes(), query_str=FALLBACK_QUERY)
    assert [n.node.node_id for n in out] == [d["id"] for d in CORPUS]
    assert all(n.node.metadata["sarg"]["fallback"] for n in out)


def test_sentence_evidence_replaces_the_text_of_the_copy_only() -> None:
    given = nodes()
    out = postprocessor(evidence="sentences").postprocess_nodes(given, query_str=QUERY)
    assert out[1].node.get_content() == "Heavy rain causes flooding."
    assert given[0].node.get_content() == CORPUS[0]["text"]


def test_as_query_engine_with_the_postprocessor() -> None:
    llm = EchoLLM()
    engine = vector_index().as_query_engine(
        llm=llm, similarity_top_k=len(CORPUS), node_postprocessors=[postprocessor()]
    )
    response = engine.query(QUERY)
    expected = core_result()
    prompt = llm.prompts[-1]
    chains = serialize_chains(expected.chains).split("\n")[0].split(":", 1)[1].strip()
    # The chains node comes first in the context, before every evidence passage.
    assert prompt.index(chains) < prompt.index("Heavy rain causes flooding.")
    assert prompt.index(chains) < prompt.index("crop damage leads to food shortage.")
    assert "Tourism" not in prompt  # not behind any chain
    assert response.source_nodes[0].node.node_id == "sarg-reasoning-chains"
    async_response = asyncio.run(engine.aquery(QUERY))
    assert [n.node.get_content() for n in async_response.source_nodes] == [
        n.node.get_content() for n in response.source_nodes
    ]


def test_retriever_query_engine_with_the_postprocessor() -> None:
    llm = EchoLLM()
    engine = RetrieverQueryEngine(
        retriever=FixedRetriever(nodes()),
        response_synthesizer=get_response_synthesizer(llm=llm),
        node_postprocessors=[postprocessor()],
    )
    response = engine.query(QUERY)
    assert [n.node.node_id for n in response.source_nodes] == ["sarg-reasoning-chains", "d1", "d2", "d3", "d5"]
    assert serialize_chains(core_result().chains).split("\n")[1].strip() in llm.prompts[-1]


# --------------------------------------------------------------------- query engine


def engine(llm: EchoLLM, **kwargs: Any) -> SARGQueryEngine:
    return SARGQueryEngine.from_args(retriever=FixedRetriever(nodes()), llm=llm, **components(), **kwargs)


def test_query_engine_sends_the_core_prompt() -> None:
    llm = EchoLLM()
    response = engine(llm).query(QUERY)
    expected = core_result()
    assert llm.prompts == [expected.prompt]
    assert response.response == expected.prompt
    assert [n.node.node_id for n in response.source_nodes] == ["d1", "d2", "d3", "d5"]
    sarg = response.metadata["sarg"]
    assert [c["text"] for c in sarg["chains"]] == [c.to_text() for c in expected.chains]
    assert sarg["direction"]["direction"] == "forward"
    assert sarg["entry_nodes"][0]["node"] == "Heavy rain"
    assert sarg["counters"]["chains_kept"] == 2 and sarg["prompt"] == expected.prompt
    assert response.metadata["sarg_result"].chains == expected.chains


def test_query_engine_async_and_streaming() -> None:
    expected = core_result().prompt
    llm = EchoLLM()
    assert asyncio.run(engine(llm).aquery(QUERY)).response == expected
    streamed = engine(EchoLLM(), streaming=True).query(QUERY)
    assert isinstance(streamed, StreamingResponse)
    tokens = list(streamed.response_gen)
    assert len(tokens) > 10 and "".join(tokens) == expected
    assert [n.node.node_id for n in streamed.source_nodes] == ["d1", "d2", "d3", "d5"]

    async def collect() -> tuple[AsyncStreamingResponse, list[str]]:
        response = await engine(EchoLLM(), streaming=True).aquery(QUERY)
        return response, [t async for t in response.async_response_gen()]

    aresponse, atokens = asyncio.run(collect())
    assert isinstance(aresponse, AsyncStreamingResponse) and "".join(atokens) == expected


def test_query_engine_without_nodes_sends_a_flat_prompt() -> None:
    llm = EchoLLM()
    qe = SARGQueryEngine.from_args(retriever=FixedRetriever([]), llm=llm, **components())
    response = qe.query(QUERY)
    assert response.source_nodes == [] and response.metadata["sarg"]["fallback"]
    assert "## Context" in llm.prompts[0]


def test_query_engine_validates_its_arguments() -> None:
    with pytest.raises(ConfigError, match="retriever="):
        SARGQueryEngine.from_args(retriever="nope", llm=EchoLLM())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="llm="):
        SARGQueryEngine.from_args(retriever=FixedRetriever([]), llm="gpt-4")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="top_k=0"):
        SARGQueryEngine.from_args(retriever=FixedRetriever([]), llm=EchoLLM(), top_k=0)


# --------------------------------------------------------------------- instrumentation


class EventRecorder(BaseEventHandler):
    events: list[Any] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "EventRecorder"

    def handle(self, event: Any, **kwargs: Any) -> None:
        self.events.append(event)


@pytest.fixture
def instrumented() -> Iterator[tuple[EventRecorder, SimpleSpanHandler]]:
    root = get_dispatcher()
    events, spans = EventRecorder(), SimpleSpanHandler()
    root.add_event_handler(events)
    root.add_span_handler(spans)
    try:
        yield events, spans
    finally:
        root.event_handlers.remove(events)
        root.span_handlers.remove(spans)


def test_stages_emit_spans_and_events(instrumented: tuple[EventRecorder, SimpleSpanHandler]) -> None:
    events, spans = instrumented
    postprocessor().postprocess_nodes(nodes(), query_str=QUERY)
    starts = [e.stage for e in events.events if isinstance(e, SARGStageStartEvent)]
    ends = {e.stage: e.counters for e in events.events if isinstance(e, SARGStageEndEvent)}
    assert starts == STAGES and list(ends) == STAGES
    assert ends["extract"]["triples"] == 5 and ends["traverse"]["chains_kept"] == 2
    stage_spans = [s for s in spans.completed_spans if s.id_.startswith("SARG.")]
    parents = {s.parent_id for s in stage_spans}
    assert len(stage_spans) == len(STAGES)
    assert len(parents) == 1 and next(iter(parents)).startswith("SARGNodePostprocessor._postprocess_nodes")


def test_async_query_engine_stages_sit_under_the_engine_span(
    instrumented: tuple[EventRecorder, SimpleSpanHandler],
) -> None:
    events, spans = instrumented
    asyncio.run(engine(EchoLLM()).aquery(QUERY))
    stage_spans = [s for s in spans.completed_spans if s.id_.startswith("SARG.")]
    assert sorted(s.id_.split("-")[0] for s in stage_spans) == sorted(f"SARG.{s}" for s in STAGES)
    assert {s.parent_id.split("-")[0] for s in stage_spans} == {"SARGQueryEngine.acustom_query"}
    assert [e.stage for e in events.events if isinstance(e, SARGStageEndEvent)] == STAGES


# --------------------------------------------------------------------- configuration / embeddings


def test_settings_and_shared_pipeline() -> None:
    sarg = postprocessor(beam_width=4, top_k=1, similarity_threshold=0.1, max_depth=3)
    config = sarg.sarg_pipeline.config
    assert (config.beam_width, config.top_k, config.similarity_threshold, config.max_depth) == (4, 1, 0.1, 3)
    pipeline = SARGPipeline(SARGConfig(top_k=1), **components())
    assert SARGNodePostprocessor(pipeline=pipeline).sarg_pipeline is pipeline
    with pytest.raises(ConfigError, match=r"max_depth=0 must be an integer >= 1"):
        SARGNodePostprocessor(max_depth=0)
    with pytest.raises(ConfigError, match=r"unexpected keyword argument\(s\) \['topk'\]"):
        SARGNodePostprocessor(topk=2)


def test_llama_index_embeddings_are_accepted_as_embedder() -> None:
    li_embedding = SARGEmbedding(HashingEmbedder())
    sarg = SARGNodePostprocessor(**{**components(), "embedder": li_embedding})
    inner = sarg.sarg_pipeline.embedder.embedder
    assert isinstance(inner, LlamaIndexEmbedder)
    assert inner.embed(["heavy rain"]).tolist() == HashingEmbedder().embed(["heavy rain"]).astype("float32").tolist()
    # Same vectors, so the same result as with the SARG embedder directly.
    out = sarg.postprocess_nodes(nodes(), query_str=QUERY)
    assert out[0].node.get_content() == serialize_chains(core_result().chains)
    assert asyncio.run(li_embedding.aget_query_embedding("x")) == li_embedding.get_query_embedding("x")
    with pytest.raises(ConfigError, match="get_text_embedding_batch"):
        LlamaIndexEmbedder(object())  # type: ignore[arg-type]


def test_a_llama_index_llm_is_accepted_as_extractor() -> None:
    llm_module = pytest.importorskip("sarg_integrations.extraction.llm")

    class ScriptedLLM(EchoLLM):
        def _reply(self, prompt: str) -> str:
            self.prompts.append(prompt)
            return scripted_llm_answer(prompt)

    settings = {**components(), "extractor": ScriptedLLM()}
    sarg = SARGNodePostprocessor(**settings)
    assert isinstance(sarg.sarg_pipeline.extractor, llm_module.LLMTripleExtractor)
    out = sarg.postprocess_nodes(nodes(), query_str=QUERY)
    assert out[0].node.get_content() == serialize_chains(core_result().chains)
    aout = asyncio.run(sarg.apostprocess_nodes(nodes(), query_str=QUERY))
    assert [n.node.get_content() for n in aout] == [n.node.get_content() for n in out]


# --------------------------------------------------------------------- real models


@pytest.mark.slow
def test_demo_corpus_with_real_models_finds_the_gba1_chain() -> None:
    from sarg_integrations.io import load_demo_corpus

    corpus = load_demo_corpus()
    documents = [Document(text=d.text, doc_id=d.id, metadata=dict(d.metadata)) for d in corpus]
    index = VectorStoreIndex.from_documents(documents, embed_model=SARGEmbedding())
    llm = EchoLLM(answer="Splenomegaly.")
    question = "What does a mutation in the GBA1 gene ultimately lead to?"
    qe = SARGQueryEngine.from_args(retriever=index.as_retriever(similarity_top_k=6), llm=llm)
    response = qe.query(question)
    first = response.metadata["sarg"]["chains"][0]
    assert first["nodes"][-1] == "splenomegaly" and len(first["hops"]) == 4
    assert llm.prompts[0].index("splenomegaly") < llm.prompts[0].index("## Evidence")
    engine_pp = index.as_query_engine(llm=llm, similarity_top_k=6, node_postprocessors=[SARGNodePostprocessor()])
    assert "splenomegaly" in engine_pp.query(question).source_nodes[0].node.get_content()


# ------------------------------------------------------ issue 16, item 11: caller data


def test_the_callers_own_metadata_sarg_is_kept_and_still_hidden() -> None:
    given = nodes()
    given[0].node.metadata["sarg"] = {"team": "ir"}
    out = postprocessor().postprocess_nodes(given, query_str=QUERY)
    first = out[1].node
    assert first.metadata["sarg"]["team"] == "ir" and first.metadata["sarg"]["caller"] == {"team": "ir"}
    assert first.metadata["sarg"]["chain_ids"] == [1, 2]
    assert "sarg" not in first.get_content(metadata_mode=MetadataMode.LLM)


def test_an_input_node_id_equal_to_the_chains_id_is_renamed() -> None:
    given = nodes()
    given[0].node.id_ = "sarg-reasoning-chains"
    out = postprocessor().postprocess_nodes(given, query_str=QUERY)
    ids = [n.node.node_id for n in out]
    assert ids[0] == "sarg-reasoning-chains" and len(set(ids)) == len(ids)


# ---------------------------------------------- issue 16, item 13: readable citations


def _uuid_nodes(meta_key: str | None) -> list[NodeWithScore]:
    out = []
    for i, d in enumerate(CORPUS):
        metadata = dict(d["metadata"])
        if meta_key:
            metadata[meta_key] = f"{d['id']}.txt"
        node = TextNode(id_=f"2ad9436e-0000-4000-8000-00000000000{i}", text=d["text"], metadata=metadata)
        out.append(NodeWithScore(node=node, score=1.0))
    return out


@pytest.mark.parametrize("key", ["file_name", "title", "doc_id"])
def test_chains_cite_readable_ids_not_node_uuids(key: str) -> None:
    out = postprocessor().postprocess_nodes(_uuid_nodes(key), query_str=QUERY)
    chains = out[0].node.get_content()
    assert "[d1.txt]" in chains and "2ad9436e" not in chains
    assert out[1].node.metadata["sarg"]["document_id"] == "d1.txt"
    assert out[1].node.metadata["sarg"]["node_id"] == "2ad9436e-0000-4000-8000-000000000000"
    assert out[0].node.metadata["sarg"]["node_ids"]["d1.txt"] == out[1].node.node_id
    assert out[1].node.node_id.startswith("2ad9436e")  # the node itself keeps its id


def test_node_id_is_the_last_resort() -> None:
    out = postprocessor().postprocess_nodes(_uuid_nodes(None), query_str=QUERY)
    assert "[2ad9436e-0000-4000-8000-000000000000]" in out[0].node.get_content()


def test_query_engine_prompt_cites_file_names() -> None:
    llm = EchoLLM()
    documents = [
        Document(text=d["text"], metadata={**d["metadata"], "file_name": f"{d['id']}.txt"})
        for d in CORPUS
    ]
    index = VectorStoreIndex.from_documents(documents, embed_model=SARGEmbedding(HashingEmbedder()))
    retriever = index.as_retriever(similarity_top_k=len(CORPUS))
    response = SARGQueryEngine.from_args(retriever=retriever, llm=llm, **components()).query(QUERY)
    assert "[d1.txt]" in llm.prompts[-1] and '<document id="d1.txt"' in llm.prompts[-1]
    mapping = response.metadata["sarg"]["node_ids"]
    assert {n.node.node_id for n in response.source_nodes} <= set(mapping.values())
