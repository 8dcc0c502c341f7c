"""One contract, three implementations: the core pipeline, LangChain and LlamaIndex.

For the same query and documents every adapter must produce what the core produces:
the same chains (serialized the same way), the same evidence in the same order, and,
where an LLM is involved, exactly the core's compiled prompt. ``CoreContract`` runs the
suite on the core itself, so a failure there is a harness bug, not an adapter bug.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from adapter_support import CORPUS, FALLBACK_QUERY, QUERY, components, core_result, source_documents

from sarg_integrations import SARGConfig, SARGPipeline, SARGResult
from sarg_integrations.prompting import serialize_chains


@dataclass
class Outcome:
    """What an adapter handed on, normalised for comparison."""

    chains_text: str | None  # the reasoning-chains document/node; None on fallback
    evidence: list[tuple[str, str]]  # (document id, text), in output order
    chain_ids: list[list[int]]  # metadata["sarg"]["chain_ids"] of each evidence item
    prompt: str  # what the LLM received


def expected_outcome(result: SARGResult) -> Outcome:
    return Outcome(
        chains_text=None if result.used_fallback else serialize_chains(result.chains),
        evidence=[(p.document_id, p.text) for p in result.evidence],
        chain_ids=[list(p.chain_ids) for p in result.evidence],
        prompt=result.prompt,
    )


class AdapterContract(abc.ABC):
    """The parity contract. Subclass it and implement :meth:`run` (and :meth:`arun`)."""

    @abc.abstractmethod
    def run(self, query: str, settings: dict[str, Any]) -> Outcome:
        """Run the adapter on ``CORPUS`` for ``query`` with SARG ``settings``."""

    def arun(self, query: str, settings: dict[str, Any]) -> Outcome:
        """The async path; defaults to :meth:`run` when an implementation has none."""
        return self.run(query, settings)

    @pytest.mark.parametrize("settings", [{}, {"top_k": 1}, {"evidence": "sentences"}, {"max_depth": 1}])
    def test_same_chains_as_the_core(self, settings: dict[str, Any]) -> None:
        """Troubleshooting: the chains document must be ``serialize_chains(result.chains)``."""
        assert self.run(QUERY, settings).chains_text == expected_outcome(core_result(**settings)).chains_text

    @pytest.mark.parametrize(
        "settings",
        [{}, {"top_k": 1}, {"evidence": "sentences"}, {"evidence_fill": 1}, {"evidence_budget": None}],
    )
    def test_same_evidence_in_the_same_order(self, settings: dict[str, Any]) -> None:
        """Troubleshooting: build evidence from ``result.evidence`` in order, not from the input."""
        got, want = self.run(QUERY, settings), expected_outcome(core_result(**settings))
        assert got.evidence == want.evidence
        assert got.chain_ids == want.chain_ids

    @pytest.mark.parametrize(
        "settings", [{}, {"evidence": "sentences"}, {"evidence_fill": 2}, {"evidence_budget": None}]
    )
    def test_the_llm_receives_the_core_prompt(self, settings: dict[str, Any]) -> None:
        """Troubleshooting: send ``result.prompt`` unchanged; do not re-template it."""
        assert self.run(QUERY, settings).prompt == core_result(**settings).prompt

    def test_paper_fallback_hands_on_every_document(self) -> None:
        """Troubleshooting: with ``evidence_budget=None`` (the paper) return all (non-empty) inputs on fallback."""
        got = self.run(FALLBACK_QUERY, {"evidence_budget": None})
        want = expected_outcome(core_result(FALLBACK_QUERY, evidence_budget=None))
        assert got == want
        assert [doc_id for doc_id, _ in got.evidence] == [d["id"] for d in CORPUS]

    def test_default_fallback_hands_on_the_budgeted_documents(self) -> None:
        """Troubleshooting: by default the fallback is ``result.evidence`` (within the word budget), not every input."""
        got = self.run(FALLBACK_QUERY, {})
        want = expected_outcome(core_result(FALLBACK_QUERY))
        assert got == want and 0 < len(got.evidence) < len(CORPUS)

    def test_filled_fallback_hands_on_the_filled_documents(self) -> None:
        """Troubleshooting: with ``evidence_fill`` the fallback is ``result.evidence``, not every input."""
        got = self.run(FALLBACK_QUERY, {"evidence_fill": 2})
        want = expected_outcome(core_result(FALLBACK_QUERY, evidence_fill=2))
        assert got == want and len(got.evidence) == 2

    def test_async_path_matches_sync(self) -> None:
        """Troubleshooting: the async path must call the same core (``arun``) with the same inputs."""
        assert self.arun(QUERY, {}) == self.run(QUERY, {})


class TestCoreContract(AdapterContract):
    """The reference implementation: the core pipeline itself."""

    def _pipeline(self, settings: dict[str, Any]) -> SARGPipeline:
        return SARGPipeline(SARGConfig(**settings), **components())

    def run(self, query: str, settings: dict[str, Any]) -> Outcome:
        return expected_outcome(self._pipeline(settings).run(query, source_documents()))

    def arun(self, query: str, settings: dict[str, Any]) -> Outcome:
        return expected_outcome(asyncio.run(self._pipeline(settings).arun(query, source_documents())))


class TestLangChainContract(AdapterContract):
    """``SARGDocumentTransformer`` for the context, ``create_sarg_chain`` for the prompt."""

    @pytest.fixture(autouse=True)
    def _framework(self) -> None:
        pytest.importorskip("langchain_core")
        pytest.importorskip("sarg_integrations.langchain")

    @staticmethod
    def _documents() -> list[Any]:
        from langchain_core.documents import Document

        return [Document(id=d["id"], page_content=d["text"], metadata=dict(d["metadata"])) for d in CORPUS]

    @staticmethod
    def _outcome(docs: list[Any], prompt: str) -> Outcome:
        has_chains = docs and docs[0].metadata["sarg"]["role"] == "chains"
        evidence = docs[1:] if has_chains else docs
        return Outcome(
            chains_text=docs[0].page_content if has_chains else None,
            evidence=[(d.metadata["sarg"]["document_id"], d.page_content) for d in evidence],
            chain_ids=[d.metadata["sarg"]["chain_ids"] for d in evidence],
            prompt=prompt,
        )

    def _chain(self, settings: dict[str, Any]) -> Any:
        from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
        from langchain_core.runnables import RunnableLambda

        docs = self._documents()
        return create_chain(RunnableLambda(lambda q: docs), ParrotFakeChatModel(), settings)

    def run(self, query: str, settings: dict[str, Any]) -> Outcome:
        from sarg_integrations.langchain import SARGDocumentTransformer

        sarg = SARGDocumentTransformer(**components(), **settings)
        docs = sarg.invoke({"query": query, "documents": self._documents()})
        out = self._chain(settings).invoke(query)
        assert out["answer"] == out["prompt"]  # the parrot model echoes what it received
        return self._outcome(docs, out["answer"])

    def arun(self, query: str, settings: dict[str, Any]) -> Outcome:
        from sarg_integrations.langchain import SARGDocumentTransformer

        sarg = SARGDocumentTransformer(**components(), **settings)
        docs = asyncio.run(sarg.ainvoke({"query": query, "documents": self._documents()}))
        out = asyncio.run(self._chain(settings).ainvoke(query))
        return self._outcome(docs, out["answer"])


def create_chain(retriever: Any, llm: Any, settings: dict[str, Any]) -> Any:
    from sarg_integrations.langchain import create_sarg_chain

    return create_sarg_chain(retriever, llm, **components(), **settings)


class TestLlamaIndexContract(AdapterContract):
    """``SARGNodePostprocessor`` for the context, ``SARGQueryEngine`` for the prompt."""

    @pytest.fixture(autouse=True)
    def _framework(self) -> None:
        pytest.importorskip("llama_index.core")
        pytest.importorskip("sarg_integrations.llama_index")

    @staticmethod
    def _nodes() -> list[Any]:
        from llama_index.core.schema import NodeWithScore, TextNode

        return [
            NodeWithScore(node=TextNode(id_=d["id"], text=d["text"], metadata=dict(d["metadata"])), score=0.5)
            for d in CORPUS
        ]

    @staticmethod
    def _outcome(nodes: list[Any], prompt: str) -> Outcome:
        has_chains = nodes and nodes[0].node.metadata["sarg"]["role"] == "chains"
        evidence = nodes[1:] if has_chains else nodes
        return Outcome(
            chains_text=nodes[0].node.get_content() if has_chains else None,
            evidence=[(n.node.node_id, n.node.get_content()) for n in evidence],
            chain_ids=[n.node.metadata["sarg"]["chain_ids"] for n in evidence],
            prompt=prompt,
        )

    def _engine(self, settings: dict[str, Any]) -> tuple[Any, list[str]]:
        from llama_index.core.base.base_retriever import BaseRetriever
        from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata

        from sarg_integrations.llama_index import SARGQueryEngine

        received: list[str] = []
        nodes = self._nodes()

        class Echo(CustomLLM):
            @property
            def metadata(self) -> LLMMetadata:
                return LLMMetadata(model_name="echo")

            def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
                received.append(prompt)
                return CompletionResponse(text=prompt)

            def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Iterator[CompletionResponse]:
                yield self.complete(prompt)

        class Fixed(BaseRetriever):
            def _retrieve(self, query_bundle: Any) -> list[Any]:
                return list(nodes)

        return SARGQueryEngine.from_args(retriever=Fixed(), llm=Echo(), **components(), **settings), received

    def run(self, query: str, settings: dict[str, Any]) -> Outcome:
        from sarg_integrations.llama_index import SARGNodePostprocessor

        sarg = SARGNodePostprocessor(**components(), **settings)
        nodes = sarg.postprocess_nodes(self._nodes(), query_str=query)
        engine, received = self._engine(settings)
        response = engine.query(query)
        assert received == [response.response]
        assert [n.node.node_id for n in response.source_nodes] == [
            n.node.node_id for n in (nodes[1:] if nodes[0].node.metadata["sarg"]["role"] == "chains" else nodes)
        ]
        return self._outcome(nodes, received[0])

    def arun(self, query: str, settings: dict[str, Any]) -> Outcome:
        from sarg_integrations.llama_index import SARGNodePostprocessor

        sarg = SARGNodePostprocessor(**components(), **settings)
        nodes = asyncio.run(sarg.apostprocess_nodes(self._nodes(), query_str=query))
        engine, received = self._engine(settings)
        asyncio.run(engine.aquery(query))
        return self._outcome(nodes, received[0])
