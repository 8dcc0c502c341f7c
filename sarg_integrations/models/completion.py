"""The completion-model protocol the LLM extractor talks to, and how objects become one.

The extractor needs one thing from a model: given chat messages (and optionally a JSON
schema for native structured output), return the answer. :class:`CompletionModel` is
that one-method protocol. :func:`as_completion_model` turns what users already have
into one:

* a plain callable ``str -> str`` (sync or ``async def``), which receives the messages
  flattened into one prompt;
* a LangChain ``BaseChatModel`` or ``BaseLLM`` (adapter in
  :mod:`sarg_integrations.langchain.llm`);
* a LlamaIndex ``LLM`` (adapter in :mod:`sarg_integrations.llama_index.llm`).

Frameworks are recognised by duck typing and module name, and their adapters are
imported only then: importing this module never imports LangChain or LlamaIndex.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from sarg_integrations.errors import ConfigError

__all__ = [
    "CallableModel",
    "Completion",
    "CompletionModel",
    "CompletionRequest",
    "as_completion_model",
    "flatten_text",
    "model_identity",
    "usage_from",
]

ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class CompletionRequest:
    """One request to a model.

    Attributes:
        messages: ``(role, content)`` pairs, role one of ``system``, ``user``,
            ``assistant``; a repair re-ask appends the bad answer and a correction.
        json_schema: A JSON schema (an object with a ``triples`` array) the answer must
            follow; adapters with native structured output use it, others ignore it.
        schema_name: The name under which the schema is offered as a tool / format.
    """

    messages: tuple[tuple[str, str], ...]
    json_schema: Mapping[str, Any] | None = None
    schema_name: str = "extract_triples"

    def as_prompt(self) -> str:
        """The messages flattened into one text prompt (for text-only models).

        The system message comes first without a label; later turns are labelled so a
        completion model can follow a repair re-ask.
        """
        parts: list[str] = []
        for index, (role, content) in enumerate(self.messages):
            if index == 0 and role == "system":
                parts.append(content)
            elif role == "assistant":
                parts.append(f"Your previous answer:\n{content}")
            else:
                parts.append(content)
        return "\n\n".join(parts)


@dataclass(frozen=True)
class Completion:
    """A model's answer.

    Attributes:
        text: The answer text (may be empty; reasoning blocks may still be inside).
        data: The already-parsed structured answer when native structured output
            produced one (a dict or list), else ``None``; the text is then the fallback.
        prompt_tokens: Input tokens the provider reported, or ``None`` when unknown.
        completion_tokens: Output tokens the provider reported, or ``None``.
        calls: How many model calls producing this answer took (an adapter that falls
            back from structured output to plain text reports 2).
        refusal: The provider's explicit refusal message, if it sent one.
    """

    text: str = ""
    data: Any = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    calls: int = 1
    refusal: str | None = None


@runtime_checkable
class CompletionModel(Protocol):
    """What :class:`~sarg_integrations.extraction.llm.LLMTripleExtractor` needs from a model.

    Attributes:
        identity: A stable string naming the model and its settings; it is part of the
            cache key, so two models that can answer differently must differ here.
    """

    identity: str

    async def acomplete(self, request: CompletionRequest) -> Completion:
        """Answer ``request``; raise on transport errors (they are retried by the caller)."""
        ...


class CallableModel:
    """Wraps a plain ``str -> str`` function (or ``async def``) as a :class:`CompletionModel`.

    A sync function runs in this wrapper's own thread pool, sized to the extractor's
    concurrency, so a slow sync model still runs ``max_concurrency`` calls at once.
    The function may also return a :class:`Completion` (to report token usage) or a
    ``(text, {"prompt_tokens": .., "completion_tokens": ..})`` pair.

    Args:
        fn: The function; it receives the flattened prompt.
        identity: The cache identity; default ``callable:<module>.<qualname>``.
        max_workers: Threads for a sync function.
    """

    supports_structured_output = False

    def __init__(
        self, fn: Callable[[str], Any], *, identity: str | None = None, max_workers: int = 8
    ) -> None:
        self.fn = fn
        self.identity = identity or _callable_identity(fn)
        self._is_async = _is_async_callable(fn)
        self._max_workers = max(1, int(max_workers))
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CallableModel({self.identity!r})"

    def set_max_workers(self, n: int) -> None:
        """Size the thread pool for a sync function (before the first call)."""
        with self._lock:
            if self._executor is None:
                self._max_workers = max(1, int(n))

    def close(self) -> None:
        """Shut the thread pool down (it is re-created on the next call)."""
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=False)
                self._executor = None

    async def acomplete(self, request: CompletionRequest) -> Completion:
        """Call the function with the flattened prompt."""
        prompt = request.as_prompt()
        if self._is_async:
            out = await self.fn(prompt)
        else:
            loop = asyncio.get_running_loop()
            out = await loop.run_in_executor(self._pool(), self.fn, prompt)
            if inspect.isawaitable(out):  # a sync function that returned a coroutine
                out = await out
        return _to_completion(out, self.identity)

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=self._max_workers, thread_name_prefix="sarg-llm"
                )
            return self._executor


def _to_completion(out: Any, identity: str) -> Completion:
    if isinstance(out, Completion):
        return out
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Mapping):
        prompt_tokens, completion_tokens = usage_from(out[1])
        return Completion(str(out[0] or ""), None, prompt_tokens, completion_tokens)
    if out is None:
        return Completion("")
    if isinstance(out, str):
        return Completion(out)
    msg = (
        f"the model {identity} returned {type(out).__name__}; a callable model must return "
        "a str (or a Completion, or (text, usage))"
    )
    raise TypeError(msg)


def _is_async_callable(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - instances with async __call__
    return inspect.iscoroutinefunction(call)


def _callable_identity(fn: Any) -> str:
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn)
    module = getattr(target, "__module__", "") or ""
    name = (
        getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    )
    return f"callable:{module}.{name}" if module else f"callable:{name}"


def usage_from(source: Any) -> tuple[int | None, int | None]:
    """Read ``(prompt_tokens, completion_tokens)`` from a provider's usage record.

    Understands the OpenAI (``prompt_tokens`` / ``completion_tokens``), Anthropic and
    LangChain (``input_tokens`` / ``output_tokens``), Ollama (``prompt_eval_count`` /
    ``eval_count``) and Gemini (``prompt_token_count`` / ``candidates_token_count``)
    spellings, as mappings or attributes, and nested ``usage`` / ``token_usage`` /
    ``usage_metadata`` records.

    Example:
        >>> usage_from({"usage": {"prompt_tokens": 12, "completion_tokens": 3}})
        (12, 3)
        >>> usage_from(None)
        (None, None)
    """
    pairs = (
        ("prompt_tokens", "completion_tokens"),
        ("input_tokens", "output_tokens"),
        ("prompt_eval_count", "eval_count"),
        ("prompt_token_count", "candidates_token_count"),
    )
    seen: set[int] = set()
    stack = [source]
    while stack:
        obj = stack.pop(0)
        if obj is None or id(obj) in seen or isinstance(obj, (str, bytes, int, float)):
            continue
        seen.add(id(obj))
        for p_key, c_key in pairs:
            p, c = _get(obj, p_key), _get(obj, c_key)
            if isinstance(p, int) or isinstance(c, int):
                return (
                    p if isinstance(p, int) and not isinstance(p, bool) else None,
                    c if isinstance(c, int) and not isinstance(c, bool) else None,
                )
        for nested in ("usage_metadata", "usage", "token_usage", "raw", "response_metadata"):
            value = _get(obj, nested)
            if value is not None:
                stack.append(value)
    return None, None


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    try:
        return getattr(obj, key, None)
    except Exception:
        return None


def _module_of(obj: Any) -> str:
    return " ".join(getattr(c, "__module__", "") or "" for c in type(obj).__mro__)


def _is_langchain(obj: Any) -> bool:
    modules = _module_of(obj)
    return "langchain_core.language_models" in modules or (
        "langchain" in modules and callable(getattr(obj, "ainvoke", None))
    )


def _is_llama_index(obj: Any) -> bool:
    modules = _module_of(obj)
    return "llama_index.core" in modules and (
        callable(getattr(obj, "achat", None)) or callable(getattr(obj, "acomplete", None))
    )


def is_framework_model(obj: Any) -> bool:
    """Whether ``obj`` is a LangChain language model or a LlamaIndex LLM (by duck typing).

    Example:
        >>> is_framework_model(lambda prompt: "[]")
        False
    """
    return _is_langchain(obj) or _is_llama_index(obj)


def as_completion_model(
    obj: Any,
    *,
    identity: str | None = None,
    structured_output: bool | str = "auto",
    max_workers: int = 8,
) -> CompletionModel:
    """Return ``obj`` as a :class:`CompletionModel`.

    Args:
        obj: A :class:`CompletionModel`, a LangChain chat model / LLM, a LlamaIndex
            ``LLM`` or a callable ``str -> str`` (sync or async).
        identity: Overrides the model's cache identity.
        structured_output: ``"auto"`` uses native structured output when the model
            supports it, ``False`` never, ``True`` requires it.
        max_workers: Threads for sync callables.

    Raises:
        ConfigError: ``obj`` is none of the above, or ``structured_output=True`` with a
            model that does not support it.
    """
    if structured_output not in (True, False, "auto"):
        msg = f"structured_output={structured_output!r} is invalid; use True, False or 'auto'"
        raise ConfigError(msg, field="structured_output", value=structured_output)
    model: Any
    if _is_langchain(obj):
        from sarg_integrations.langchain.llm import LangChainCompletionModel

        model = LangChainCompletionModel(
            obj, identity=identity, structured_output=structured_output
        )
    elif _is_llama_index(obj):
        from sarg_integrations.llama_index.llm import LlamaIndexCompletionModel

        model = LlamaIndexCompletionModel(
            obj, identity=identity, structured_output=structured_output
        )
    elif isinstance(obj, CompletionModel) and not isinstance(obj, type):
        model = obj
        if identity is not None:
            with contextlib.suppress(AttributeError):  # a read-only identity stays
                model.identity = identity
    elif callable(obj) and not isinstance(obj, type):
        model = CallableModel(obj, identity=identity, max_workers=max_workers)
    else:
        msg = (
            f"llm={obj!r} is not a model this extractor can use; pass a LangChain chat "
            "model or LLM, a LlamaIndex LLM, a function str -> str (sync or async), or "
            "an object with `identity` and `async acomplete(request)`"
        )
        raise ConfigError(msg, field="llm", value=obj)
    if structured_output is True and not getattr(model, "supports_structured_output", False):
        msg = (
            f"structured_output=True but {model_identity(model)} has no native structured "
            "output (LangChain with_structured_output / LlamaIndex function calling); "
            "pass structured_output='auto' to fall back to the tolerant JSON parser"
        )
        raise ConfigError(msg, field="structured_output", value=structured_output)
    return model


def model_identity(model: Any) -> str:
    """The cache identity of a completion model (its ``identity`` attribute, else its class)."""
    identity = getattr(model, "identity", None)
    if isinstance(identity, str) and identity:
        return identity
    return f"{type(model).__module__}.{type(model).__qualname__}"


def flatten_text(content: Any) -> str:
    """Join a message's content into text: strings as-is, ``text`` blocks of a list.

    Reasoning / thinking blocks (``type`` ``thinking`` or ``reasoning``) are left out.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        out = []
        for block in content:
            if isinstance(block, str):
                out.append(block)
            elif isinstance(block, Mapping) and block.get("type", "text") == "text":
                out.append(str(block.get("text", "")))
        return "".join(out)
    return str(content)
