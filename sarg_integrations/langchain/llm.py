"""LangChain models as SARG completion models (used by ``LLMTripleExtractor``).

:class:`LangChainCompletionModel` wraps a ``BaseChatModel`` (or a text ``BaseLLM``):

* native structured output through ``with_structured_output(schema, include_raw=True)``
  when the model implements it (tool calling / JSON-schema mode); when the parsed
  object is missing, the raw message text (or the tool call's arguments) goes to the
  tolerant parser;
* token usage from ``AIMessage.usage_metadata`` (or ``response_metadata``'s
  ``token_usage`` / ``usage``) and, for text LLMs, ``LLMResult.llm_output``;
* an explicit refusal (``additional_kwargs["refusal"]``) is passed on as such;
* ``<think>`` / reasoning content blocks are left out of the text.

Only ``langchain-core`` is needed. You rarely use this class directly:
``LLMTripleExtractor(chat_model)`` wraps the model itself.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sarg_integrations.errors import MissingDependencyError
from sarg_integrations.models.completion import (
    Completion,
    CompletionRequest,
    flatten_text,
    usage_from,
)

__all__ = ["LangChainCompletionModel", "langchain_identity"]


def _require_core() -> None:
    try:
        import langchain_core  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the object came from langchain
        raise MissingDependencyError(
            "langchain-core", feature="LangChain models", extra="langchain"
        ) from exc


def langchain_identity(model: Any) -> str:
    """``langchain:<Class>:<model name>:<hash of the identifying params>``."""
    name = ""
    for attr in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            name = value
            break
    try:
        params = dict(getattr(model, "_identifying_params", {}) or {})
    except Exception:
        params = {}
    blob = json.dumps(params, sort_keys=True, default=lambda o: type(o).__name__)
    digest = hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]
    return f"langchain:{type(model).__name__}:{name}:{digest}"


class LangChainCompletionModel:
    """A LangChain chat model or LLM as a :class:`~sarg_integrations.models.CompletionModel`.

    Args:
        model: A ``BaseChatModel`` or ``BaseLLM``.
        identity: Overrides the cache identity (default :func:`langchain_identity`).
        structured_output: ``"auto"``/``True`` use ``with_structured_output`` when the
            model implements it; ``False`` never does.
    """

    def __init__(
        self, model: Any, *, identity: str | None = None, structured_output: bool | str = "auto"
    ) -> None:
        _require_core()
        from langchain_core.language_models import BaseChatModel

        self.model = model
        self.is_chat = isinstance(model, BaseChatModel)
        self.identity = identity or langchain_identity(model)
        self._structured_cache: dict[str, Any] = {}
        self.supports_structured_output = bool(
            structured_output and self.is_chat and self._has_structured_output()
        )

    def __repr__(self) -> str:
        return f"LangChainCompletionModel({self.identity!r})"

    def _has_structured_output(self) -> bool:
        from langchain_core.language_models import BaseChatModel

        cls = type(self.model)
        overridden = cls.with_structured_output is not BaseChatModel.with_structured_output
        tools = cls.bind_tools is not BaseChatModel.bind_tools
        return overridden or tools

    def _structured(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema, sort_keys=True)
        runnable = self._structured_cache.get(key)
        if runnable is None:
            runnable = self.model.with_structured_output(schema, include_raw=True)
            self._structured_cache[key] = runnable
        return runnable

    @staticmethod
    def _messages(request: CompletionRequest) -> list[Any]:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
        return [
            kinds.get(role, HumanMessage)(content=content) for role, content in request.messages
        ]

    async def acomplete(self, request: CompletionRequest) -> Completion:
        """Ask the model; structured output first when enabled and a schema is given."""
        if not self.is_chat:
            return await self._acomplete_text_llm(request)
        messages = self._messages(request)
        if request.json_schema is not None and self.supports_structured_output:
            try:
                runnable = self._structured(dict(request.json_schema))
            except NotImplementedError:
                self.supports_structured_output = False
            else:
                out = await runnable.ainvoke(messages)
                return self._from_structured(out)
        message = await self.model.ainvoke(messages)
        return self._from_message(message)

    def _from_structured(self, out: Any) -> Completion:
        raw = out.get("raw") if isinstance(out, dict) else None
        parsed = out.get("parsed") if isinstance(out, dict) else out
        base = self._from_message(raw) if raw is not None else Completion("")
        if parsed is not None and hasattr(parsed, "model_dump"):
            parsed = parsed.model_dump()
        text = base.text
        if parsed is None and not text.strip() and raw is not None:
            calls = getattr(raw, "tool_calls", None) or []
            if calls:
                text = json.dumps(calls[0].get("args", {}), ensure_ascii=False)
        return Completion(text, parsed, base.prompt_tokens, base.completion_tokens, 1, base.refusal)

    @staticmethod
    def _from_message(message: Any) -> Completion:
        content = getattr(message, "content", message)
        text = flatten_text(content)
        usage = getattr(message, "usage_metadata", None)
        prompt_tokens, completion_tokens = usage_from(usage) if usage else (None, None)
        if prompt_tokens is None and completion_tokens is None:
            prompt_tokens, completion_tokens = usage_from(
                getattr(message, "response_metadata", None)
            )
        extra = getattr(message, "additional_kwargs", None) or {}
        refusal = extra.get("refusal") if isinstance(extra, dict) else None
        return Completion(
            text,
            None,
            prompt_tokens,
            completion_tokens,
            1,
            refusal if isinstance(refusal, str) else None,
        )

    async def _acomplete_text_llm(self, request: CompletionRequest) -> Completion:
        result = await self.model.agenerate([request.as_prompt()])
        generation = (
            result.generations[0][0] if result.generations and result.generations[0] else None
        )
        text = getattr(generation, "text", "") if generation is not None else ""
        prompt_tokens, completion_tokens = usage_from(result.llm_output or {})
        if prompt_tokens is None and completion_tokens is None and generation is not None:
            prompt_tokens, completion_tokens = usage_from(
                getattr(generation, "generation_info", None)
            )
        return Completion(text or "", None, prompt_tokens, completion_tokens)
