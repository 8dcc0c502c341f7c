"""LLM triple extraction: prompts, tolerant parsing, grounding, chunking, cache, concurrency.

The framework-free core of SARG's LLM extractor. Nothing here imports LangChain or
LlamaIndex at import time; their adapters (:mod:`sarg_integrations.langchain.llm`,
:mod:`sarg_integrations.llama_index.llm`) are loaded only when such a model is passed.

Example:
    >>> from sarg_integrations.llm import LLMTripleExtractor, REASONING_PROMPT
    >>> REASONING_PROMPT.name
    'reasoning'
"""

from __future__ import annotations

from sarg_integrations.llm.cache import (
    ExtractionCache,
    KeyValueStoreCache,
    MemoryCache,
    SQLiteCache,
    as_cache,
    cache_key,
)
from sarg_integrations.llm.chunking import Chunk, estimate_tokens, sentence_spans, split_into_chunks
from sarg_integrations.llm.extractor import STATS_KEYS, LLMTripleExtractor, classify_error
from sarg_integrations.llm.models import (
    CallableModel,
    Completion,
    CompletionModel,
    CompletionRequest,
    as_completion_model,
)
from sarg_integrations.llm.parsing import AnswerParseError, ParsedAnswer, parse_answer
from sarg_integrations.llm.prompts import (
    GENERIC_SPO_PROMPT,
    REASONING_PROMPT,
    ExtractionPrompt,
    FewShotExample,
    get_prompt,
)

__all__ = [
    "GENERIC_SPO_PROMPT",
    "REASONING_PROMPT",
    "STATS_KEYS",
    "AnswerParseError",
    "CallableModel",
    "Chunk",
    "Completion",
    "CompletionModel",
    "CompletionRequest",
    "ExtractionCache",
    "ExtractionPrompt",
    "FewShotExample",
    "KeyValueStoreCache",
    "LLMTripleExtractor",
    "MemoryCache",
    "ParsedAnswer",
    "SQLiteCache",
    "as_cache",
    "as_completion_model",
    "cache_key",
    "classify_error",
    "estimate_tokens",
    "get_prompt",
    "parse_answer",
    "sentence_spans",
    "split_into_chunks",
]
