"""Model access: any LangChain / LlamaIndex / callable model behind one completion API.

* :mod:`~sarg_integrations.models.completion`: :class:`CompletionRequest`,
  :class:`Completion`, the :class:`CompletionModel` protocol and
  :func:`as_completion_model`, which wraps a framework model or a function;
* :mod:`~sarg_integrations.models.specs`: ``PROVIDER:MODEL`` specs (``--llm``);
* :mod:`~sarg_integrations.models.errors`: whether a failed call is worth retrying;
* :mod:`~sarg_integrations.models.sync`: :class:`SyncRunner`, the one way sync code
  here runs async model calls (also inside Jupyter's running loop), and
  :class:`SyncModel`.

Nothing here imports LangChain or LlamaIndex at import time; their adapters
(:mod:`sarg_integrations.langchain.llm`, :mod:`sarg_integrations.llama_index.llm`) are
loaded only when such a model is passed.
"""

from __future__ import annotations

from sarg_integrations.models.completion import (
    CallableModel,
    Completion,
    CompletionModel,
    CompletionRequest,
    as_completion_model,
    is_framework_model,
)
from sarg_integrations.models.errors import classify_error, retry_after
from sarg_integrations.models.sync import SyncModel, SyncRunner

__all__ = [
    "CallableModel",
    "Completion",
    "CompletionModel",
    "CompletionRequest",
    "SyncModel",
    "SyncRunner",
    "as_completion_model",
    "classify_error",
    "is_framework_model",
    "retry_after",
]
