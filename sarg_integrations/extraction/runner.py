"""Extraction scheduling: batching, async, deadlines, and the per-document outcomes.

:class:`ExtractionRunner` calls a :class:`~sarg_integrations.extraction.TripleExtractor`
over the documents of a run the best way the extractor allows (``extract_many``,
``aextract_many``, ``aextract``, or ``extract`` per document) and, under a deadline,
keeps what finished in time. :func:`collect` turns the outcomes into the run's triples
and skipped documents.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from sarg_integrations.extraction.base import ExtractionOutcome, TripleExtractor
from sarg_integrations.schema import SkippedDocument, SourceDocument, Triple

__all__ = ["PAST_DEADLINE", "ExtractionRunner", "collect", "progress_bar"]

PAST_DEADLINE = "deadline of {seconds:g} s passed before extraction finished"
_DEADLINE_BATCH = 8  # documents per extract_many call when a deadline is set
_DEADLINE_GRACE = 0.25  # seconds an extractor that takes deadline= gets to wind down


class ExtractionRunner:
    """Runs one extractor over the documents of a run.

    Args:
        extractor: The extractor.
        show_progress: Show a progress bar (extracting one document at a time).
    """

    def __init__(self, extractor: TripleExtractor, *, show_progress: bool = False) -> None:
        self.extractor = extractor
        self.show_progress = show_progress

    def run(self, docs: Sequence[SourceDocument], deadline: float | None = None) -> list[Any]:
        """One outcome per document (``None`` for an empty one), within ``deadline`` seconds.

        Without a deadline, ``extract_many`` is used when the extractor has it (and no
        progress bar is shown), else ``extract`` per document. With one, extraction runs
        in a daemon worker thread that is abandoned if it does not return in time, so
        even an extractor that hangs cannot hang the caller; documents without an
        outcome by then are reported as past the deadline (:data:`PAST_DEADLINE`).
        """
        if deadline is None:
            return self._extract(docs)
        return self._extract_until(docs, deadline)

    async def arun(
        self, docs: Sequence[SourceDocument], deadline: float | None = None
    ) -> list[Any]:
        """Async :meth:`run`: ``aextract_many`` / ``aextract`` when the extractor has them.

        Otherwise the sync path runs in a worker thread. Under a deadline, pending async
        extractions are cancelled when it passes.
        """
        if deadline is None:
            return await self._aextract(docs)
        return await self._aextract_until(docs, deadline)

    def _extract(self, docs: Sequence[SourceDocument]) -> list[Any]:
        """One outcome per document: triples, an ExtractionOutcome or an exception."""
        usable = [d for d in docs if d.text.strip()]
        outcomes: list[Any] = []
        extract_many = getattr(self.extractor, "extract_many", None)
        if callable(extract_many) and not self.show_progress and usable:
            try:
                outcomes = list(extract_many(usable))
            except Exception:
                outcomes = []
            if len(outcomes) != len(usable):
                outcomes = []
        if not outcomes:
            outcomes = [self._extract_one(doc) for doc in self._progress(usable)]
        return _align(docs, usable, outcomes)

    def _extract_until(self, docs: Sequence[SourceDocument], seconds: float) -> list[Any]:
        """:meth:`_extract` in a daemon worker thread that the caller waits on for ``seconds``.

        An extractor whose ``extract_many`` takes ``deadline=`` gets the whole batch (it
        stops itself); any other is fed small batches so that documents finished
        before the deadline are kept. Documents without an outcome when the time is up
        are reported as past the deadline; a worker that is still busy is abandoned
        (Python cannot stop a thread; it ends when the extractor returns).
        """
        usable = [d for d in docs if d.text.strip()]
        done: dict[int, Any] = {}
        lock = threading.Lock()
        finished, abandoned = threading.Event(), threading.Event()
        many = getattr(self.extractor, "extract_many", None)
        stops_itself = callable(many) and _takes_deadline(many)

        def record(first: int, outcomes: Sequence[Any]) -> None:
            with lock:
                done.update(enumerate(outcomes, start=first))

        def work() -> None:
            try:
                if stops_itself:
                    try:
                        outcomes: list[Any] = list(many(usable, deadline=seconds))
                    except Exception as exc:
                        outcomes = [exc] * len(usable)
                    if len(outcomes) != len(usable):
                        msg = f"extract_many returned {len(outcomes)} outcomes for {len(usable)}"
                        outcomes = [ExtractionOutcome(error=msg)] * len(usable)
                    record(0, outcomes)
                    return
                step = _DEADLINE_BATCH if callable(many) else 1
                for first in range(0, len(usable), step):
                    if abandoned.is_set():
                        return
                    batch = usable[first : first + step]
                    record(first, self._extract(batch))
            except BaseException as exc:  # keep the worker quiet; the caller reports it
                with lock:
                    for i in range(len(usable)):
                        done.setdefault(i, ExtractionOutcome(error=_describe(exc)))
            finally:
                finished.set()

        if usable:
            worker = threading.Thread(target=work, name="sarg-extract", daemon=True)
            worker.start()
            finished.wait(seconds + (_DEADLINE_GRACE if stops_itself else 0.0))
            abandoned.set()
        late = _past_deadline(seconds)
        with lock:
            outcomes = [done.get(i, late) for i in range(len(usable))]
        return _align(docs, usable, outcomes)

    async def _aextract_until(self, docs: Sequence[SourceDocument], seconds: float) -> list[Any]:
        """:meth:`_aextract` under a deadline: late async extractions are cancelled."""
        usable = [d for d in docs if d.text.strip()]
        many = getattr(self.extractor, "aextract_many", None)
        one = getattr(self.extractor, "aextract", None)
        late = _past_deadline(seconds)
        outcomes: list[Any]
        if not usable:
            return _align(docs, usable, [])
        if inspect.iscoroutinefunction(many) and _takes_deadline(many):
            outcomes = await _within(many(usable, deadline=seconds), seconds + _DEADLINE_GRACE)
        elif inspect.iscoroutinefunction(one):
            tasks = [asyncio.ensure_future(one(d)) for d in usable]
            _, pending = await asyncio.wait(tasks, timeout=seconds)
            for task in pending:
                task.cancel()
            outcomes = [
                late if task in pending or task.cancelled() else (task.exception() or task.result())
                for task in tasks
            ]
            return _align(docs, usable, outcomes)
        elif inspect.iscoroutinefunction(many):
            outcomes = await _within(many(usable), seconds)
        else:
            return await asyncio.to_thread(self._extract_until, docs, seconds)
        if outcomes is None:
            outcomes = [late] * len(usable)
        elif isinstance(outcomes, Exception):
            outcomes = [outcomes] * len(usable)
        elif len(outcomes) != len(usable):
            msg = f"aextract_many returned {len(outcomes)} outcomes for {len(usable)} documents"
            outcomes = [ExtractionOutcome(error=msg)] * len(usable)
        return _align(docs, usable, outcomes)

    def _extract_one(self, doc: SourceDocument) -> Any:
        try:
            return list(self.extractor.extract(doc))
        except Exception as exc:
            return exc

    async def _aextract(self, docs: Sequence[SourceDocument]) -> list[Any]:
        usable = [d for d in docs if d.text.strip()]
        many = getattr(self.extractor, "aextract_many", None)
        one = getattr(self.extractor, "aextract", None)
        if usable and many is not None and inspect.iscoroutinefunction(many):
            try:
                outcomes = list(await many(usable))
            except Exception as exc:
                outcomes = [exc] * len(usable)
        elif usable and one is not None and inspect.iscoroutinefunction(one):
            outcomes = list(await asyncio.gather(*(one(d) for d in usable), return_exceptions=True))
        else:
            return await asyncio.to_thread(self._extract, docs)
        if len(outcomes) != len(usable):
            msg = f"aextract_many returned {len(outcomes)} outcomes for {len(usable)} documents"
            outcomes = [ExtractionOutcome(error=msg)] * len(usable)
        return _align(docs, usable, outcomes)

    def _progress(self, items: Sequence[SourceDocument]) -> Iterable[SourceDocument]:
        return progress_bar(items) if self.show_progress else items


def collect(
    docs: Sequence[SourceDocument], outcomes: Sequence[Any], stats: dict[str, Any]
) -> tuple[list[Triple], list[SkippedDocument]]:
    """The kept triples and the skipped documents of one outcome per document.

    An outcome is ``None`` (an empty document), a list of triples, an
    :class:`ExtractionOutcome` or the exception extracting the document raised. Triples
    without a cause or an effect are dropped, and every triple is attributed to its
    document. Numeric counters of the outcomes are summed into ``stats``.

    Raises:
        BaseException: An outcome that is a ``KeyboardInterrupt``, ``SystemExit`` or
            ``CancelledError`` is re-raised.
    """
    triples: list[Triple] = []
    skipped: list[SkippedDocument] = []
    for doc, outcome in zip(docs, outcomes):
        if outcome is None:
            skipped.append(SkippedDocument(doc.id, "empty or whitespace-only text"))
            continue
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome  # KeyboardInterrupt, SystemExit, CancelledError
            outcome = ExtractionOutcome(
                error=f"extractor error: {type(outcome).__name__}: {outcome}"
            )
        elif not isinstance(outcome, ExtractionOutcome):
            outcome = ExtractionOutcome(triples=list(outcome))
        for key, value in outcome.stats.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                stats[key] = stats.get(key, 0) + value
        kept = [
            t if t.document_id == doc.id else dataclasses.replace(t, document_id=doc.id)
            for t in outcome.triples
            if isinstance(t, Triple) and t.cause.strip() and t.effect.strip()
        ]
        if outcome.error:
            skipped.append(SkippedDocument(doc.id, outcome.error))
        elif not kept:
            skipped.append(SkippedDocument(doc.id, "no reasoning-schema triples found"))
        triples.extend(kept)
    return triples, skipped


def progress_bar(items: Sequence[SourceDocument]) -> Iterable[SourceDocument]:
    """``items`` behind a tqdm progress bar."""
    from tqdm.auto import tqdm

    return tqdm(items, desc="extracting", unit="doc")


def _takes_deadline(method: Any) -> bool:
    """Whether an extractor method accepts ``deadline=`` (it then stops itself in time)."""
    try:
        return "deadline" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


async def _within(call: Any, seconds: float) -> Any:
    """Await ``call`` for at most ``seconds``: its result, the exception it raised, or None."""
    try:
        return list(await asyncio.wait_for(call, seconds))
    except asyncio.TimeoutError:
        return None
    except Exception as exc:
        return exc


def _past_deadline(seconds: float) -> ExtractionOutcome:
    """The outcome of a document that was not extracted within ``seconds``."""
    return ExtractionOutcome(
        error=PAST_DEADLINE.format(seconds=seconds), stats={"documents_past_deadline": 1}
    )


def _describe(exc: BaseException) -> str:
    return f"extractor error: {type(exc).__name__}: {exc}"


def _align(
    docs: Sequence[SourceDocument], usable: Sequence[SourceDocument], outcomes: Sequence[Any]
) -> list[Any]:
    """Spread outcomes of the non-empty documents back over all documents (None = empty)."""
    by_position = dict(zip((id(d) for d in usable), outcomes))
    return [by_position.get(id(d)) for d in docs]
