"""LLM triple extraction: prompts, tolerant parsing, chunking, cache, concurrency.

The framework-free core of SARG's LLM extractor. It reaches models through
:mod:`sarg_integrations.models` and grounds answers with
:mod:`sarg_integrations.extraction.grounding` (shared with the rule extractor).
Nothing here imports LangChain or LlamaIndex at import time.

Example:
    >>> from sarg_integrations.extraction.llm import LLMTripleExtractor, REASONING_PROMPT
    >>> REASONING_PROMPT.name
    'reasoning'
"""

from __future__ import annotations

from sarg_integrations.extraction.chunking import (
    Chunk,
    estimate_tokens,
    sentence_spans,
    split_into_chunks,
)
from sarg_integrations.extraction.llm.cache import (
    ExtractionCache,
    KeyValueStoreCache,
    MemoryCache,
    SQLiteCache,
    as_cache,
    cache_key,
)
from sarg_integrations.extraction.llm.extractor import (
    STATS_KEYS,
    LLMTripleExtractor,
    classify_error,
)
from sarg_integrations.extraction.llm.parsing import AnswerParseError, ParsedAnswer, parse_answer
from sarg_integrations.extraction.llm.prompts import (
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
    "Chunk",
    "ExtractionCache",
    "ExtractionPrompt",
    "FewShotExample",
    "KeyValueStoreCache",
    "LLMTripleExtractor",
    "MemoryCache",
    "ParsedAnswer",
    "SQLiteCache",
    "as_cache",
    "cache_key",
    "classify_error",
    "estimate_tokens",
    "get_prompt",
    "parse_answer",
    "sentence_spans",
    "split_into_chunks",
]
