"""LlamaIndex LLMs as SARG completion models (used by ``LLMTripleExtractor``).

:class:`LlamaIndexCompletionModel` wraps any ``llama_index.core.llms.LLM``:

* native structured output through ``astructured_predict`` with a pydantic model of
  the triples when the LLM is a function-calling model
  (``metadata.is_function_calling_model``); should that fail to validate, the same
  request is sent once as plain chat and parsed tolerantly (reported as 2 calls);
* plain ``achat`` (chat models) or ``acomplete`` (completion models) otherwise;
* token usage from ``ChatResponse.raw`` / ``additional_kwargs`` (OpenAI, Anthropic,
  Ollama spellings) when the integration reports it.

Only ``llama-index-core`` is needed. You rarely use this class directly:
``LLMTripleExtractor(llm)`` wraps the LLM itself.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sarg_integrations.errors import MissingDependencyError
from sarg_integrations.models.completion import (
    Completion,
    CompletionRequest,
    flatten_text,
    usage_from,
)

__all__ = ["LlamaIndexCompletionModel", "llama_index_identity"]


def _require_core() -> None:
    try:
        import llama_index.core  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the object came from llama_index
        raise MissingDependencyError(
            "llama-index-core", feature="LlamaIndex LLMs", extra="llama-index"
        ) from exc


def llama_index_identity(llm: Any) -> str:
    """``llama_index:<Class>:<metadata.model_name>``."""
    name = ""
    try:
        name = str(llm.metadata.model_name or "")
    except Exception:
        name = str(getattr(llm, "model", "") or "")
    return f"llama_index:{type(llm).__name__}:{name}"


def _triples_model() -> Any:
    from pydantic import BaseModel, Field

    class ExtractedTriple(BaseModel):
        """One reasoning-schema triple with its exact source sentence."""

        cause: str = Field(description="antecedent / prerequisite phrase")
        relation: str = Field(description="the relation as worded")
        effect: str = Field(description="consequence / dependent phrase")
        relation_type: str = Field(default="", description="the relation type")
        evidence: str = Field(description="the exact source sentence, copied verbatim")

    class ExtractedTriples(BaseModel):
        """The triples of a document."""

        triples: list[ExtractedTriple] = Field(default_factory=list)

    return ExtractedTriples


class LlamaIndexCompletionModel:
    """A LlamaIndex ``LLM`` as a :class:`~sarg_integrations.models.CompletionModel`.

    Args:
        llm: The LlamaIndex LLM.
        identity: Overrides the cache identity (default :func:`llama_index_identity`).
        structured_output: ``"auto"``/``True`` use ``astructured_predict`` for
            function-calling models; ``False`` never does.
    """

    def __init__(
        self, llm: Any, *, identity: str | None = None, structured_output: bool | str = "auto"
    ) -> None:
        _require_core()
        self.llm = llm
        self.identity = identity or llama_index_identity(llm)
        try:
            metadata = llm.metadata
            self.is_chat = bool(getattr(metadata, "is_chat_model", False))
            function_calling = bool(getattr(metadata, "is_function_calling_model", False))
        except Exception:
            self.is_chat, function_calling = False, False
        self.supports_structured_output = bool(structured_output and function_calling)
        self._output_cls: Any = None

    def __repr__(self) -> str:
        return f"LlamaIndexCompletionModel({self.identity!r})"

    @staticmethod
    def _chat_messages(request: CompletionRequest) -> list[Any]:
        from llama_index.core.llms import ChatMessage, MessageRole

        roles = {
            "system": MessageRole.SYSTEM,
            "user": MessageRole.USER,
            "assistant": MessageRole.ASSISTANT,
        }
        return [
            ChatMessage(role=roles.get(r, MessageRole.USER), content=c) for r, c in request.messages
        ]

    async def acomplete(self, request: CompletionRequest) -> Completion:
        """Ask the LLM; ``astructured_predict`` first when enabled and a schema is given."""
        if request.json_schema is not None and self.supports_structured_output:
            try:
                data = await self._structured(request)
            except (ValueError, TypeError):  # pydantic's ValidationError is a ValueError
                plain = await self._plain(request)
                return Completion(
                    plain.text, None, plain.prompt_tokens, plain.completion_tokens, 2, plain.refusal
                )
            return Completion("", data, None, None, 1)
        return await self._plain(request)

    def _sync_only(self, method: str) -> bool:
        """Whether ``method`` is CustomLLM's default, which runs the sync call on the loop."""
        from llama_index.core.llms import CustomLLM

        return isinstance(self.llm, CustomLLM) and getattr(type(self.llm), method) is getattr(
            CustomLLM, method
        )

    async def _structured(self, request: CompletionRequest) -> Any:
        from llama_index.core.llms import ChatMessage
        from llama_index.core.prompts import ChatPromptTemplate

        if self._output_cls is None:
            self._output_cls = _triples_model()
        messages = self._chat_messages(request)
        # Contents go in as template variables so braces in the text are never parsed.
        template = ChatPromptTemplate(
            message_templates=[
                ChatMessage(role=m.role, content=f"{{m{i}}}") for i, m in enumerate(messages)
            ]
        )
        values = {f"m{i}": content for i, (_, content) in enumerate(request.messages)}
        result = await self.llm.astructured_predict(self._output_cls, template, **values)
        return result.model_dump() if hasattr(result, "model_dump") else result

    async def _plain(self, request: CompletionRequest) -> Completion:
        if self.is_chat:
            if self._sync_only("achat"):
                response = await asyncio.to_thread(self.llm.chat, self._chat_messages(request))
            else:
                response = await self.llm.achat(self._chat_messages(request))
            message = getattr(response, "message", None)
            text = flatten_text(getattr(message, "content", None) or "")
            sources = (getattr(response, "raw", None), getattr(response, "additional_kwargs", None))
        else:
            if self._sync_only("acomplete"):
                response = await asyncio.to_thread(self.llm.complete, request.as_prompt())
            else:
                response = await self.llm.acomplete(request.as_prompt())
            text = getattr(response, "text", "") or ""
            sources = (getattr(response, "raw", None), getattr(response, "additional_kwargs", None))
        prompt_tokens = completion_tokens = None
        for source in sources:
            if source is None:
                continue
            prompt_tokens, completion_tokens = usage_from(source)
            if prompt_tokens is not None or completion_tokens is not None:
                break
        return Completion(text, None, prompt_tokens, completion_tokens)
