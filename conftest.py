"""Collection rules for the whole repository (doctests included).

The adapter subpackages import their framework at module level; in an environment
without that framework (the core-only install), their modules are not collected for
doctests instead of failing collection.
"""

from __future__ import annotations

import importlib.util


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package is missing
        return False


collect_ignore: list[str] = []
if not _installed("langchain_core"):
    collect_ignore.append("sarg_integrations/langchain")
if not _installed("llama_index.core"):
    collect_ignore.append("sarg_integrations/llama_index")
if not _installed("redis"):
    collect_ignore.append("sarg_integrations/extraction/llm/redis_cache.py")
