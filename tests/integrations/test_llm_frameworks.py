"""LLMTripleExtractor driven by LangChain and LlamaIndex models (offline fakes)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

from fakes import CLEAN, T_CROPS, T_RAIN
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.language_models.fake_chat_models import (
    FakeListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage
from llama_index.core.llms import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CustomLLM,
    LLMMetadata,
    MessageRole,
)

from sarg_integrations import LLMTripleExtractor
from sarg_integrations.direction import CueWordDirectionClassifier
from sarg_integrations.errors import ConfigError
from sarg_integrations.models.completion import as_completion_model
from sarg_integrations.schema import SourceDocument

DOC = SourceDocument("d1", "Heavy rain causes floods in the valley. Floods damage the crops.")


def causes(outcome: Any) -> list[str]:
    return [t.cause for t in outcome.triples]


# --------------------------------------------------------------------------- LangChain


def test_generic_fake_chat_model_with_usage_metadata() -> None:
    message = AIMessage(
        content=f"```json\n{CLEAN}\n```",
        usage_metadata={"input_tokens": 321, "output_tokens": 54, "total_tokens": 375},
    )
    model = GenericFakeChatModel(messages=iter([message]))
    extractor = LLMTripleExtractor(model)
    assert not extractor.use_structured_output  # the fake has no tool calling
    assert extractor.model_identity.startswith("langchain:GenericFakeChatModel")
    (outcome,) = extractor.extract_many([DOC])
    assert causes(outcome) == ["heavy rain", "floods"]
    assert outcome.stats["prompt_tokens"] == 321 and outcome.stats["completion_tokens"] == 54


def test_fake_list_chat_model_thinking_then_repair() -> None:
    model = FakeListChatModel(responses=["<think>I should think a long time", CLEAN])
    (outcome,) = LLMTripleExtractor(model).extract_many([DOC])
    assert causes(outcome) == ["heavy rain", "floods"]
    assert outcome.stats["parse_repairs"] == 1 and outcome.stats["llm_calls"] == 2


def test_content_blocks_skip_reasoning() -> None:
    message = AIMessage(
        content=[
            {"type": "reasoning", "reasoning": "[not json] hmm"},
            {"type": "text", "text": CLEAN},
        ]
    )
    (outcome,) = LLMTripleExtractor(GenericFakeChatModel(messages=iter([message]))).extract_many(
        [DOC]
    )
    assert causes(outcome) == ["heavy rain", "floods"]


def test_langchain_text_llm() -> None:
    (outcome,) = LLMTripleExtractor(FakeListLLM(responses=[CLEAN])).extract_many([DOC])
    assert causes(outcome) == ["heavy rain", "floods"]


BOUND_TOOLS: list[Any] = []


class ToolCallingFake(GenericFakeChatModel):
    """A fake chat model that 'supports' tool calling: answers are tool calls."""

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        BOUND_TOOLS.append(tools)
        return self


def tool_message(args: dict[str, Any]) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": "extract_triples", "args": args, "id": "call_1"}],
        usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
    )


def test_native_structured_output_is_used_when_supported() -> None:
    model = ToolCallingFake(messages=iter([tool_message({"triples": [T_RAIN, T_CROPS]})]))
    extractor = LLMTripleExtractor(model)
    assert extractor.use_structured_output
    (outcome,) = extractor.extract_many([DOC])
    assert causes(outcome) == ["heavy rain", "floods"]
    assert outcome.stats["prompt_tokens"] == 10 and outcome.stats["llm_calls"] == 1
    schema = BOUND_TOOLS[-1][0]
    assert schema["title"] == "extract_triples"


def test_structured_output_can_be_switched_off() -> None:
    model = ToolCallingFake(messages=iter([AIMessage(content=CLEAN)]))
    extractor = LLMTripleExtractor(model, structured_output=False)
    assert not extractor.use_structured_output
    assert causes(extractor.extract_many([DOC])[0]) == ["heavy rain", "floods"]


def test_structured_output_required_but_missing() -> None:
    with pytest.raises(ConfigError, match="structured_output=True"):
        LLMTripleExtractor(FakeListChatModel(responses=[CLEAN]), structured_output=True)


def test_openai_style_refusal_is_reported() -> None:
    refusal = AIMessage(content="", additional_kwargs={"refusal": "I can't help with that."})
    model = GenericFakeChatModel(messages=iter([refusal, refusal]))
    (outcome,) = LLMTripleExtractor(model).extract_many([DOC])
    assert outcome.triples == [] and "refused" in outcome.error


def test_langchain_in_a_pipeline_with_cache(tmp_path: Any) -> None:
    from fakes import FixedKeyphrases, HashingEmbedder

    from sarg_integrations import SARGConfig, SARGPipeline

    model = FakeListChatModel(responses=[CLEAN])
    extractor = LLMTripleExtractor(model, cache=tmp_path / "c.sqlite")
    pipe = SARGPipeline(
        SARGConfig(similarity_threshold=0.3),
        extractor=extractor,
        embedder=HashingEmbedder(),
        direction_classifier=CueWordDirectionClassifier(),
        keyphrase_extractor=FixedKeyphrases("heavy rain"),
    )
    first = pipe.run("What does heavy rain lead to?", [DOC])
    second = pipe.run("What does heavy rain lead to?", [DOC])
    assert first.stats["llm_calls"] == 1 and second.stats["llm_calls"] == 0
    assert second.stats["cache_hits"] == 1
    assert [t.cause for t in second.triples] == [t.cause for t in first.triples]


# --------------------------------------------------------------------------- LlamaIndex


class ScriptedLlamaLLM(CustomLLM):
    """A LlamaIndex CustomLLM replaying answers; reports OpenAI-style usage in ``raw``."""

    answers: list[str] = []
    prompts: list[str] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted-llama")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        answer = self.answers[min(len(self.prompts) - 1, len(self.answers) - 1)]
        return CompletionResponse(
            text=answer, raw={"usage": {"prompt_tokens": 11, "completion_tokens": 4}}
        )

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError


def test_llama_index_custom_llm() -> None:
    llm = ScriptedLlamaLLM(answers=[f"Sure:\n{CLEAN}"], prompts=[])
    extractor = LLMTripleExtractor(llm)
    assert extractor.model_identity == "llama_index:ScriptedLlamaLLM:scripted-llama"
    (outcome,) = extractor.extract_many([DOC])
    assert causes(outcome) == ["heavy rain", "floods"]
    assert outcome.stats["prompt_tokens"] == 11 and outcome.stats["completion_tokens"] == 4
    assert "<document>" in llm.prompts[0]


class ChatLlamaLLM(ScriptedLlamaLLM):
    """A chat model: achat receives role-tagged messages."""

    seen: list[list[ChatMessage]] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="chat-llama", is_chat_model=True)

    def chat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        self.seen.append(list(messages))
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=CLEAN))


def test_llama_index_chat_model_gets_system_and_user_messages() -> None:
    llm = ChatLlamaLLM(answers=[], prompts=[], seen=[])
    (outcome,) = LLMTripleExtractor(llm).extract_many([DOC])
    assert causes(outcome) == ["heavy rain", "floods"]
    roles = [m.role for m in llm.seen[0]]
    assert roles == [MessageRole.SYSTEM, MessageRole.USER]
    assert outcome.stats.get("llm_calls_without_usage") == 1


class FunctionCallingLlamaLLM(ScriptedLlamaLLM):
    """Claims function calling; structured_predict returns the pydantic object or fails."""

    fail: bool = False
    templates: list[Any] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="fc-llama", is_function_calling_model=True)

    async def astructured_predict(
        self, output_cls: Any, prompt: Any, llm_kwargs: Any = None, **args: Any
    ) -> Any:
        self.templates.append(prompt.format_messages(**args))
        if self.fail:
            raise ValueError("1 validation error for ExtractedTriples")
        return output_cls(triples=[T_RAIN, T_CROPS])


def test_llama_index_structured_predict_path() -> None:
    llm = FunctionCallingLlamaLLM(answers=[CLEAN], prompts=[], templates=[])
    extractor = LLMTripleExtractor(llm)
    assert extractor.use_structured_output
    (outcome,) = extractor.extract_many([DOC])
    assert causes(outcome) == ["heavy rain", "floods"]
    assert outcome.stats["llm_calls"] == 1
    messages = llm.templates[0]
    assert "<document>" in messages[1].content and '"cause"' in messages[0].content  # braces intact


def test_llama_index_structured_failure_falls_back_to_text() -> None:
    llm = FunctionCallingLlamaLLM(answers=[CLEAN], prompts=[], templates=[], fail=True)
    (outcome,) = LLMTripleExtractor(llm).extract_many([DOC])
    assert causes(outcome) == ["heavy rain", "floods"]
    assert outcome.stats["llm_calls"] == 2


# --------------------------------------------------------------------------- misc


def test_as_completion_model_dispatch() -> None:
    assert (
        type(as_completion_model(FakeListChatModel(responses=["[]"]))).__name__
        == "LangChainCompletionModel"
    )
    llm = ScriptedLlamaLLM(answers=["[]"], prompts=[])
    assert type(as_completion_model(llm)).__name__ == "LlamaIndexCompletionModel"


def test_core_llm_package_imports_no_framework() -> None:
    code = (
        "import sys; import sarg_integrations.extraction.llm, sarg_integrations.models.specs; "
        "from sarg_integrations import LLMTripleExtractor; "
        "bad = [m for m in sys.modules if m.startswith(('langchain', 'llama_index'))]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
