"""Adapter overhead over the core pipeline, and end-to-end time of the adapter examples.

1. Overhead: one query on the same documents through the core ``SARGPipeline.run`` and
   through each adapter (``SARGDocumentTransformer.invoke``,
   ``SARGDocumentCompressor.compress_documents``, ``SARGNodePostprocessor``), each with
   its own warm pipeline (the first run is discarded). Medians over repeats, with the
   ratio adapter / core. Two workloads: the test fakes on a 5-document corpus (pure
   framework overhead) and the real default models on the packaged demo corpus.
2. End to end on the demo corpus with the real models: the LangChain example
   (``InMemoryVectorStore`` over ``SARGEmbeddings`` → ``create_sarg_chain`` with a fake
   chat model) and the LlamaIndex example (``VectorStoreIndex`` over ``SARGEmbedding`` →
   ``SARGQueryEngine`` with a scripted LLM): index build, first query, warm query.

Usage:
    python benchmarks/bench_adapters.py [--repeats 30] [--fake-repeats 300] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from adapter_support import CORPUS, QUERY, components  # noqa: E402
from langchain_core.documents import Document as LCDocument  # noqa: E402
from llama_index.core.schema import NodeWithScore, TextNode  # noqa: E402

from sarg_integrations import SARGConfig, SARGPipeline, SentenceTransformerEmbedder  # noqa: E402
from sarg_integrations.io import load_demo_corpus  # noqa: E402
from sarg_integrations.langchain import (  # noqa: E402
    SARGDocumentCompressor,
    SARGDocumentTransformer,
    SARGEmbeddings,
    create_sarg_chain,
)
from sarg_integrations.llama_index import (  # noqa: E402
    SARGEmbedding,
    SARGNodePostprocessor,
    SARGQueryEngine,
)

DEMO_QUESTION = "What does a mutation in the GBA1 gene ultimately lead to?"


def median_ms(fn: Callable[[], Any], repeats: int) -> float:
    fn()  # warm: models loaded, embeddings cached
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def overhead(label: str, docs: list[tuple[str, str, dict]], query: str, make: Callable[[], dict], repeats: int) -> list[dict]:
    lc_docs = [LCDocument(id=i, page_content=t, metadata=m) for i, t, m in docs]
    li_nodes = [NodeWithScore(node=TextNode(id_=i, text=t, metadata=m), score=0.5) for i, t, m in docs]
    core = SARGPipeline(SARGConfig(), **make())
    from sarg_integrations import SourceDocument

    sources = [SourceDocument(i, t, m) for i, t, m in docs]
    transformer = SARGDocumentTransformer(**make())
    compressor = SARGDocumentCompressor(**make())
    postprocessor = SARGNodePostprocessor(**make())
    async_core = SARGPipeline(SARGConfig(), **make())
    async_transformer = SARGDocumentTransformer(**make())
    cases = {
        "core run": lambda: core.run(query, sources),
        "LangChain transformer.invoke": lambda: transformer.invoke({"query": query, "documents": lc_docs}),
        "LangChain compressor": lambda: compressor.compress_documents(lc_docs, query),
        "LlamaIndex postprocessor": lambda: postprocessor.postprocess_nodes(li_nodes, query_str=query),
        "core arun": lambda: asyncio.run(async_core.arun(query, sources)),
        "LangChain transformer.ainvoke": lambda: asyncio.run(
            async_transformer.ainvoke({"query": query, "documents": lc_docs})
        ),
    }
    rows = []
    base = {"sync": None, "async": None}
    for name, fn in cases.items():
        ms = median_ms(fn, repeats)
        kind = "async" if ("arun" in name or "ainvoke" in name) else "sync"
        if name.startswith("core"):
            base[kind] = ms
        rows.append({"workload": label, "path": name, "median_ms": round(ms, 3), "ratio_vs_core": round(ms / base[kind], 3)})
    return rows


def fake_components() -> dict:
    return components()


def real_components() -> dict:
    return {}


def end_to_end() -> list[dict]:
    from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
    from langchain_core.vectorstores import InMemoryVectorStore
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata

    class Echo(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="echo")

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            return CompletionResponse(text="Splenomegaly.")

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Iterator[CompletionResponse]:
            yield self.complete(prompt)

    corpus = load_demo_corpus()
    rows = []

    # LangChain example.
    start = time.perf_counter()
    store = InMemoryVectorStore(embedding=SARGEmbeddings())
    store.add_documents([LCDocument(id=d.id, page_content=d.text, metadata=dict(d.metadata)) for d in corpus])
    build = time.perf_counter() - start
    chain = create_sarg_chain(store.as_retriever(search_kwargs={"k": 6}), ParrotFakeChatModel())
    start = time.perf_counter()
    out = chain.invoke(DEMO_QUESTION)
    first = time.perf_counter() - start
    assert out["chains"] and out["chains"][0]["nodes"][-1] == "splenomegaly", out["chains"]
    warm = statistics.median(_timed(lambda: chain.invoke(DEMO_QUESTION)) for _ in range(5))
    rows.append({"example": "LangChain: InMemoryVectorStore → create_sarg_chain", "index_build_s": build,
                 "first_query_s": first, "warm_query_s": warm})

    # LlamaIndex example.
    start = time.perf_counter()
    index = VectorStoreIndex.from_documents(
        [Document(text=d.text, doc_id=d.id, metadata=dict(d.metadata)) for d in corpus], embed_model=SARGEmbedding()
    )
    build = time.perf_counter() - start
    engine = SARGQueryEngine.from_args(retriever=index.as_retriever(similarity_top_k=6), llm=Echo())
    start = time.perf_counter()
    response = engine.query(DEMO_QUESTION)
    first = time.perf_counter() - start
    assert response.metadata["sarg"]["chains"][0]["nodes"][-1] == "splenomegaly"
    warm = statistics.median(_timed(lambda: engine.query(DEMO_QUESTION)) for _ in range(5))
    rows.append({"example": "LlamaIndex: VectorStoreIndex → SARGQueryEngine", "index_build_s": build,
                 "first_query_s": first, "warm_query_s": warm})
    return [{k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()} for r in rows]


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=30, help="repeats with the real models")
    parser.add_argument("--fake-repeats", type=int, default=300, help="repeats with the fakes")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    e2e = end_to_end()  # first, so that its first query includes loading the models
    print(f"(end-to-end section, including model loading: {time.perf_counter() - t0:.1f}s)")
    fake_docs = [(d["id"], d["text"], dict(d["metadata"])) for d in CORPUS]
    demo = [(d.id, d.text, dict(d.metadata)) for d in load_demo_corpus()]
    SentenceTransformerEmbedder().warm_up()
    rows = overhead("fakes, 5 docs", fake_docs, QUERY, fake_components, args.fake_repeats)
    rows += overhead("real models, demo corpus (8 docs)", demo, DEMO_QUESTION, real_components, args.repeats)

    print("\nAdapter overhead over the core (median of repeats, warm pipeline)")
    print(f"{'workload':36} {'path':32} {'median ms':>10} {'× core':>8}")
    for r in rows:
        print(f"{r['workload']:36} {r['path']:32} {r['median_ms']:>10.3f} {r['ratio_vs_core']:>8.3f}")
    print("\nEnd to end on the demo corpus (real models, fake LLM)")
    print(f"{'example':52} {'build s':>8} {'1st q s':>8} {'warm q s':>9}")
    for r in e2e:
        print(f"{r['example']:52} {r['index_build_s']:>8.3f} {r['first_query_s']:>8.3f} {r['warm_query_s']:>9.3f}")
    if args.json:
        args.json.write_text(json.dumps({"overhead": rows, "end_to_end": e2e}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
