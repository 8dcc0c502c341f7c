"""Stage tracing for LlamaIndex: an instrumentation span and two events per SARG stage."""

from __future__ import annotations

import contextlib
import inspect
import uuid
from collections.abc import Iterator
from contextvars import Token
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events.base import BaseEvent
from llama_index.core.instrumentation.events.span import SpanDropEvent
from llama_index.core.instrumentation.span import active_span_id

from sarg_integrations.schema import to_jsonable

__all__ = ["InstrumentationStageObserver", "SARGStageEndEvent", "SARGStageStartEvent", "dispatcher"]

dispatcher = get_dispatcher("sarg_integrations.llama_index")


class SARGStageStartEvent(BaseEvent):
    """Emitted when a SARG stage starts, inside the stage's span.

    Args:
        stage: ``extract``, ``load_models``, ``encode``, ``build``, ``direction``,
            ``match``, ``traverse`` or ``compile``.
    """

    stage: str

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "SARGStageStartEvent"


class SARGStageEndEvent(BaseEvent):
    """Emitted when a SARG stage ends, with the stage's counters.

    Args:
        stage: The stage name.
        counters: What the stage reported (``triples``, ``nodes``, ``chains_kept``…).
    """

    stage: str
    counters: dict[str, Any]

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "SARGStageEndEvent"


def sarg_stage(stage: str) -> None:
    """The signature bound into each stage span (span handlers read ``bound_args``)."""


_STAGE_SIGNATURE = inspect.signature(sarg_stage)


class InstrumentationStageObserver:
    """A :class:`~sarg_integrations.pipeline.StageObserver` emitting LlamaIndex spans/events.

    Each stage opens a span ``SARG.<stage>-<uuid>`` (child of the active span, e.g. the
    postprocessor's or query engine's), dispatches :class:`SARGStageStartEvent`, then
    :class:`SARGStageEndEvent` with the counters and closes the span with the counters as
    its result; an error drops the span.

    Args:
        instance: The component on whose behalf the stages run (given to span handlers).
    """

    def __init__(self, instance: Any = None) -> None:
        self.instance = instance

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[dict[str, Any]]:
        """Run stage ``name`` inside a span; yields the dict the pipeline fills."""
        span_id = f"SARG.{name}-{uuid.uuid4()}"
        bound = _STAGE_SIGNATURE.bind(name)
        token = active_span_id.set(span_id)
        parent = None if token.old_value is Token.MISSING else token.old_value
        dispatcher.span_enter(
            id_=span_id, bound_args=bound, instance=self.instance, parent_id=parent, tags={}
        )
        counters: dict[str, Any] = {}
        try:
            dispatcher.event(SARGStageStartEvent(stage=name))
            yield counters
        except BaseException as exc:
            dispatcher.event(SpanDropEvent(span_id=span_id, err_str=str(exc)))
            dispatcher.span_drop(id_=span_id, bound_args=bound, instance=self.instance, err=exc)
            raise
        else:
            dispatcher.event(SARGStageEndEvent(stage=name, counters=to_jsonable(counters)))
            dispatcher.span_exit(
                id_=span_id, bound_args=bound, instance=self.instance, result=counters
            )
        finally:
            with contextlib.suppress(ValueError):  # reset from another context
                active_span_id.reset(token)
