"""``--llm PROVIDER:MODEL`` → a LangChain chat model (used by the CLI).

``resolve_llm_spec("openai:gpt-4o-mini")`` checks that the provider's LangChain
integration package is installed (raising :class:`MissingDependencyError` naming it
otherwise) and builds the model with LangChain's ``init_chat_model`` when
``langchain`` or ``langchain-classic`` is installed, or the provider's chat class
directly when only ``langchain-core`` is. The model name may itself contain colons
(``ollama:qwen2.5:7b``). A bare name is accepted when the provider can be inferred
(``gpt-4o-mini`` → openai, ``claude-…`` → anthropic).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from sarg_integrations.errors import ConfigError, MissingDependencyError

__all__ = ["PROVIDERS", "parse_llm_spec", "resolve_llm_spec"]

PROVIDERS: dict[str, tuple[str, str, str]] = {
    "openai": ("langchain_openai", "ChatOpenAI", "langchain-openai"),
    "azure_openai": ("langchain_openai", "AzureChatOpenAI", "langchain-openai"),
    "anthropic": ("langchain_anthropic", "ChatAnthropic", "langchain-anthropic"),
    "ollama": ("langchain_ollama", "ChatOllama", "langchain-ollama"),
    "google_genai": ("langchain_google_genai", "ChatGoogleGenerativeAI", "langchain-google-genai"),
    "google_vertexai": ("langchain_google_vertexai", "ChatVertexAI", "langchain-google-vertexai"),
    "mistralai": ("langchain_mistralai", "ChatMistralAI", "langchain-mistralai"),
    "groq": ("langchain_groq", "ChatGroq", "langchain-groq"),
    "fireworks": ("langchain_fireworks", "ChatFireworks", "langchain-fireworks"),
    "together": ("langchain_together", "ChatTogether", "langchain-together"),
    "cohere": ("langchain_cohere", "ChatCohere", "langchain-cohere"),
    "deepseek": ("langchain_deepseek", "ChatDeepSeek", "langchain-deepseek"),
    "xai": ("langchain_xai", "ChatXAI", "langchain-xai"),
    "bedrock": ("langchain_aws", "ChatBedrock", "langchain-aws"),
    "bedrock_converse": ("langchain_aws", "ChatBedrockConverse", "langchain-aws"),
    "huggingface": ("langchain_huggingface", "ChatHuggingFace", "langchain-huggingface"),
    "nvidia": ("langchain_nvidia_ai_endpoints", "ChatNVIDIA", "langchain-nvidia-ai-endpoints"),
    "perplexity": ("langchain_perplexity", "ChatPerplexity", "langchain-perplexity"),
}
"""provider → (module, chat class, pip package)."""

_ALIASES = {
    "google": "google_genai",
    "gemini": "google_genai",
    "mistral": "mistralai",
    "azure": "azure_openai",
    "aws": "bedrock_converse",
}
_INFER = (
    (("gpt-", "o1", "o3", "o4", "chatgpt"), "openai"),
    (("claude",), "anthropic"),
    (("gemini",), "google_genai"),
    (("mistral", "mixtral", "codestral"), "mistralai"),
    (("deepseek",), "deepseek"),
    (("grok",), "xai"),
    (("command",), "cohere"),
)


def parse_llm_spec(spec: str) -> tuple[str, str]:
    """Split ``spec`` into ``(provider, model)``.

    Raises:
        ConfigError: An empty spec, an unknown provider, or a bare model name whose
            provider cannot be inferred.

    Example:
        >>> parse_llm_spec("ollama:qwen2.5:7b")
        ('ollama', 'qwen2.5:7b')
        >>> parse_llm_spec("gpt-4o-mini")
        ('openai', 'gpt-4o-mini')
    """
    text = (spec or "").strip()
    known = ", ".join(sorted(PROVIDERS))
    if not text:
        msg = (
            "--llm needs PROVIDER:MODEL, e.g. openai:gpt-4o-mini or ollama:qwen2.5:7b "
            f"(providers: {known})"
        )
        raise ConfigError(msg, field="llm", value=spec)
    head, sep, tail = text.partition(":")
    provider = _ALIASES.get(head.lower().replace("-", "_"), head.lower().replace("-", "_"))
    if sep and provider in PROVIDERS:
        if not tail.strip():
            msg = f"--llm {spec!r} names no model after '{head}:'; e.g. {head}:<model name>"
            raise ConfigError(msg, field="llm", value=spec)
        return provider, tail.strip()
    lowered = text.lower()
    for prefixes, inferred in _INFER:
        if lowered.startswith(prefixes):
            return inferred, text
    msg = (
        f"--llm {spec!r}: unknown provider {head!r}; write PROVIDER:MODEL with a provider "
        f"among {known} (e.g. openai:gpt-4o-mini, ollama:qwen2.5:7b)"
    )
    raise ConfigError(msg, field="llm", value=spec)


def resolve_llm_spec(spec: str, **kwargs: Any) -> Any:
    """Build the LangChain chat model named by ``spec`` (``PROVIDER:MODEL``).

    Args:
        spec: E.g. ``"openai:gpt-4o-mini"``, ``"anthropic:claude-3-5-haiku-latest"``,
            ``"ollama:qwen2.5:7b"``.
        **kwargs: Passed to the chat model (``temperature=0``…).

    Raises:
        ConfigError: A malformed spec.
        MissingDependencyError: ``langchain-core`` or the provider's integration
            package is not installed (the message names the package to install).
    """
    provider, model = parse_llm_spec(spec)
    module_name, class_name, package = PROVIDERS[provider]
    feature = f"--llm {spec}"
    if importlib.util.find_spec("langchain_core") is None:
        raise MissingDependencyError("langchain-core", feature=feature, extra="langchain")
    if importlib.util.find_spec(module_name) is None:
        raise MissingDependencyError(package, feature=feature)
    kwargs.setdefault("temperature", 0)
    init = _init_chat_model()
    if init is not None:
        return init(model, model_provider=provider, **kwargs)
    cls = getattr(importlib.import_module(module_name), class_name)
    key = "model_id" if provider in ("bedrock",) else "model"
    if provider == "huggingface":
        return cls.from_model_id(model_id=model, **kwargs)
    return cls(**{key: model}, **kwargs)


def _init_chat_model() -> Any:
    for module in ("langchain.chat_models", "langchain_classic.chat_models"):
        if importlib.util.find_spec(module.split(".")[0]) is None:
            continue
        try:
            return importlib.import_module(module).init_chat_model
        except (ImportError, AttributeError):
            continue
    return None
