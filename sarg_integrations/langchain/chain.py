"""``create_sarg_chain``: retrieve → SARG → prompt → any LangChain chat model or LLM."""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompt_values import StringPromptValue
from langchain_core.runnables import (
    Runnable,
    RunnableConfig,
    RunnableLambda,
    RunnableParallel,
    RunnablePassthrough,
    RunnableSerializable,
)
from pydantic import ConfigDict

from sarg_integrations._adapters import chain_records, empty_prompt
from sarg_integrations.errors import ConfigError, InputError
from sarg_integrations.langchain._convert import arun_sarg, evidence_documents, run_sarg
from sarg_integrations.langchain.transformer import SARGDocumentTransformer
from sarg_integrations.schema import SARGResult

__all__ = ["create_sarg_chain"]


def create_sarg_chain(
    retriever: Any,
    llm: Any,
    *,
    transformer: SARGDocumentTransformer | None = None,
    **settings: Any,
) -> Runnable[Any, dict[str, Any]]:
    """Build ``question → retriever → SARG → prompt → llm`` as one runnable.

    The runnable takes a question (a string, or a dict with ``"question"``, ``"query"``
    or ``"input"``) and returns ``{"answer", "chains", "source_documents", "prompt",
    "sarg_result"}``: the model's answer as a string, the kept chains as JSON-ready
    dicts, the evidence documents (with ``metadata["sarg"]``), the exact prompt the model
    received (the core's compiled prompt) and the full
    :class:`~sarg_integrations.SARGResult` (``None`` when nothing was retrieved). With
    ``stream``/``astream`` the structured context arrives as the first chunk and the
    answer then streams token by token (chunks ``{"answer": token}``).

    !!! note "Installation"
        ``pip install "sarg-integrations[langchain]"``

    Args:
        retriever: Any runnable (or callable) mapping a question to ``list[Document]``,
            e.g. ``vector_store.as_retriever()``.
        llm: Any LangChain chat model or LLM. It receives the prompt as one user message.
        transformer: A configured :class:`SARGDocumentTransformer` to reuse; otherwise
            one is built from ``settings``.
        **settings: ``SARGDocumentTransformer`` settings (``beam_width``, ``top_k``,
            ``similarity_threshold``, ``max_depth``, ``extractor``, ``embedder``, …).

    Returns:
        A runnable supporting ``invoke``, ``ainvoke``, ``batch``, ``stream``, ``astream``.

    Raises:
        ConfigError: ``retriever`` or ``llm`` is not a runnable, a setting is invalid, or
            both ``transformer`` and settings were given.

    Example:
        ```python
        from sarg_integrations.langchain import create_sarg_chain

        chain = create_sarg_chain(store.as_retriever(k=6), ChatOpenAI(model="gpt-4o-mini"))
        out = chain.invoke("What does a mutation in the GBA1 gene ultimately lead to?")
        print(out["answer"], out["chains"][0]["text"])
        for chunk in chain.stream("Why did the bridge collapse?"):
            print(chunk.get("answer", ""), end="")
        ```
    """
    if transformer is not None and settings:
        msg = (
            f"create_sarg_chain: pass either transformer= or settings {sorted(settings)}, "
            "not both; configure the transformer instead"
        )
        raise ConfigError(msg, field=sorted(settings)[0], value=settings)
    if transformer is not None and not isinstance(transformer, SARGDocumentTransformer):
        msg = f"transformer={transformer!r} must be a SARGDocumentTransformer"
        raise ConfigError(msg, field="transformer", value=transformer)
    sarg = transformer if transformer is not None else SARGDocumentTransformer(**settings)
    retrieve = _as_runnable(retriever, "retriever", "e.g. vector_store.as_retriever()")
    if not isinstance(llm, Runnable):
        msg = (
            f"llm={llm!r} is not a LangChain chat model or LLM (a Runnable); pass e.g. "
            "ChatOpenAI(...) or ChatOllama(...)"
        )
        raise ConfigError(msg, field="llm", value=llm)
    question = RunnableLambda(_question, name="SARGQuestion")
    gather = RunnableParallel(query=RunnablePassthrough(), documents=retrieve)
    answer = itemgetter("prompt") | RunnableLambda(_prompt_value, name="SARGPrompt") | llm
    chain = (
        question
        | gather
        | _SARGContext(transformer=sarg)
        | RunnablePassthrough.assign(answer=answer | StrOutputParser())
    )
    return chain.with_config(run_name="SARGChain")


def _as_runnable(value: Any, argument: str, hint: str) -> Runnable[Any, Any]:
    if isinstance(value, Runnable):
        return value
    if callable(value):
        return RunnableLambda(value)
    msg = (
        f"{argument}={value!r} is not a runnable or callable; pass a LangChain {argument} ({hint})"
    )
    raise ConfigError(msg, field=argument, value=value)


def _question(value: Any) -> str:
    if isinstance(value, Mapping):
        for key in ("question", "query", "input"):
            if key in value:
                value = value[key]
                break
        else:
            msg = (
                f"the SARG chain takes a question string or a dict with 'question'; got keys "
                f"{sorted(map(str, value))}"
            )
            raise InputError(msg, argument="question", value=value)
    if not isinstance(value, str) or not value.strip():
        msg = f"the SARG chain needs a non-empty question string, got {value!r}"
        raise InputError(msg, argument="question", value=value)
    return value


def _prompt_value(prompt: str) -> StringPromptValue:
    # A chat model sees one user message; a completion LLM sees the text itself.
    return StringPromptValue(text=prompt)


def _context(
    transformer: SARGDocumentTransformer, query: str, result: SARGResult | None, originals: Any
) -> dict[str, Any]:
    if result is None:
        return {
            "chains": [],
            "source_documents": [],
            "prompt": empty_prompt(transformer.sarg_pipeline, query),
            "sarg_result": None,
        }
    return {
        "chains": chain_records(result.chains),
        "source_documents": evidence_documents(result, originals),
        "prompt": result.prompt,
        "sarg_result": result,
    }


class _SARGContext(RunnableSerializable[dict[str, Any], dict[str, Any]]):
    """``{"query", "documents"}`` → chains, evidence, prompt and result (one traced run)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    transformer: SARGDocumentTransformer
    name: str | None = "SARG"

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return self._call_with_config(self._invoke, input, config)

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return await self._acall_with_config(self._ainvoke, input, config)

    def _invoke(
        self, input: dict[str, Any], run_manager: CallbackManagerForChainRun
    ) -> dict[str, Any]:
        pipeline = self.transformer.sarg_pipeline
        result, originals = run_sarg(pipeline, input["query"], input["documents"], run_manager)
        return _context(self.transformer, input["query"], result, originals)

    async def _ainvoke(
        self, input: dict[str, Any], run_manager: AsyncCallbackManagerForChainRun
    ) -> dict[str, Any]:
        pipeline = self.transformer.sarg_pipeline
        result, originals = await arun_sarg(
            pipeline, input["query"], input["documents"], run_manager
        )
        return _context(self.transformer, input["query"], result, originals)
