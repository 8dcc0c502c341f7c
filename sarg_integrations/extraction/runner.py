"""Extraction scheduling: batching, async, deadlines, and the per-document outcomes.

:class:`ExtractionRunner` calls a :class:`~sarg_integrations.extraction.TripleExtractor`
over the documents of a run the best way the extractor allows (``extract_many``,
``aextract_many``, ``aextract``, or ``extract`` per document) and, under a deadline,
keeps what finished in time. :func:`collect` turns the outcomes into the run's triples
and skipped documents.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import inspect
import os
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

from sarg_integrations.extraction.base import STOPPED, ExtractionOutcome, TripleExtractor
from sarg_integrations.schema import SkippedDocument, SourceDocument, Triple

__all__ = [
    "EXIT_WAIT_SECONDS",
    "PAST_DEADLINE",
    "WIND_DOWN_SECONDS",
    "ExtractionRunner",
    "collect",
    "progress_bar",
    "set_exit_status",
    "wait_for_workers",
]

PAST_DEADLINE = "deadline of {seconds:g} s passed before extraction finished"
WIND_DOWN_SECONDS = 10.0
"""After a deadline, how long the caller waits for a ``stop=`` extractor's piece in hand."""
EXIT_WAIT_SECONDS = 30.0
"""At interpreter exit, how long workers still busy after a deadline are waited for."""
_DEADLINE_BATCH = 8  # documents per extract_many call when a deadline is set
_DEADLINE_GRACE = 0.25  # seconds an extractor that takes deadline= gets to wind down

_workers: set[threading.Thread] = set()  # started under a deadline, not finished yet
_workers_lock = threading.Lock()
_exit_hook_registered = False


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
        in a worker thread that is told to stop at the deadline, so even an extractor
        that hangs cannot hang the caller; documents without an outcome by then are
        reported as past the deadline (:data:`PAST_DEADLINE`). See :meth:`_extract_until`.
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
        """:meth:`_extract` in a worker thread that the caller waits on for ``seconds``.

        An extractor whose ``extract_many`` takes ``deadline=`` gets the whole batch (it
        stops itself); one that takes ``stop=`` gets the whole batch and a stop event,
        set at the deadline, after which the caller waits up to :data:`WIND_DOWN_SECONDS`
        for the piece in hand (a chunk, a sentence window) to finish; any other is fed
        small batches, and no batch starts after the deadline. Documents without an
        outcome when the time is up are reported as past the deadline. A worker still
        busy is left to finish its piece and joined at interpreter exit
        (:func:`wait_for_workers`): a thread inside native code (BLAS) while the
        interpreter shuts down aborted the process (``libblis: Aborting``, exit 134).
        """
        usable = [d for d in docs if d.text.strip()]
        done: dict[int, Any] = {}
        lock = threading.Lock()
        finished, stop = threading.Event(), threading.Event()
        many = getattr(self.extractor, "extract_many", None)
        stops_itself = callable(many) and _accepts(many, "deadline")
        takes_stop = callable(many) and not stops_itself and _accepts(many, "stop")

        def record(first: int, outcomes: Sequence[Any]) -> None:
            with lock:
                done.update(enumerate(outcomes, start=first))

        def whole(**kwargs: Any) -> None:
            try:
                outcomes: list[Any] = list(many(usable, **kwargs))
            except Exception as exc:
                outcomes = [exc] * len(usable)
            if len(outcomes) != len(usable):
                msg = f"extract_many returned {len(outcomes)} outcomes for {len(usable)}"
                outcomes = [ExtractionOutcome(error=msg)] * len(usable)
            record(0, outcomes)

        def work() -> None:
            try:
                if stops_itself:
                    whole(deadline=seconds)
                    return
                if takes_stop:
                    whole(stop=stop)
                    return
                step = _DEADLINE_BATCH if callable(many) else 1
                for first in range(0, len(usable), step):
                    if stop.is_set():
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
            try:  # started inside the try: a Ctrl-C right after the start also stops it
                worker = _start_worker(work)
                finished.wait(seconds + (_DEADLINE_GRACE if stops_itself else 0.0))
            finally:  # also on Ctrl-C: the worker stops after the piece in hand
                stop.set()
            if takes_stop:
                finished.wait(WIND_DOWN_SECONDS)
            if finished.is_set():
                worker.join()
        late = _past_deadline(seconds)
        with lock:
            outcomes = [_late_if_stopped(done.get(i, late), seconds) for i in range(len(usable))]
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
        if inspect.iscoroutinefunction(many) and _accepts(many, "deadline"):
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


def _accepts(method: Any, keyword: str) -> bool:
    """Whether an extractor method accepts ``keyword=`` (``deadline``, ``stop``)."""
    try:
        return keyword in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def _start_worker(work: Any) -> threading.Thread:
    """Start ``work`` in a daemon thread that :func:`wait_for_workers` joins at exit."""

    def run() -> None:
        try:
            work()
        finally:
            with _workers_lock:
                _workers.discard(threading.current_thread())

    global _exit_hook_registered
    worker = threading.Thread(target=run, name="sarg-extract", daemon=True)
    with _workers_lock:
        if not _exit_hook_registered:
            _register_exit_hook()
            _exit_hook_registered = True
        _workers.add(worker)
    worker.start()
    return worker


def _register_exit_hook() -> None:
    """Run :func:`_wait_at_exit` before anything else tears down at interpreter exit.

    ``atexit`` handlers run last-registered first, so a library imported after the first
    worker started (spaCy, thinc, torch, loaded lazily inside the worker) had its exit
    handlers run *before* the wait, while the worker was still inside its native code:
    ``libblis: Aborting`` (134) or a segmentation fault (139) in 3 of 3 runs of
    ``sarg run --deadline 3`` on 1 MB. ``threading._register_atexit`` hooks run at the
    start of the interpreter's shutdown, before every ``atexit`` handler (the mechanism
    ``concurrent.futures`` uses for its workers).
    """
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        try:
            register(_wait_at_exit)
            return
        except RuntimeError:  # already shutting down
            pass
    atexit.register(_wait_at_exit)


def wait_for_workers(timeout: float = EXIT_WAIT_SECONDS) -> bool:
    """Wait up to ``timeout`` seconds for extraction workers left running after a deadline.

    They stop before their next piece of work; this lets the piece in hand finish.
    Returns whether none is left.
    """
    end = time.monotonic() + timeout
    while True:
        with _workers_lock:
            alive = [w for w in _workers if w.is_alive()]
        if not alive:
            return True
        left = end - time.monotonic()
        if left <= 0:
            return False
        alive[0].join(left)


_exit_status: int | None = None


def set_exit_status(code: int) -> None:
    """Record the status the process is about to exit with (the ``sarg`` command does).

    If a worker is still busy after :data:`EXIT_WAIT_SECONDS` at exit, the process then
    leaves at once with this status (``os._exit``, after flushing stdout and stderr)
    instead of tearing the interpreter down under a thread inside native code, which
    aborts (``libblis: Aborting``, exit 134). Without it (a host application, whose
    status is unknown here) the interpreter's own exit goes on.
    """
    global _exit_status
    _exit_status = int(code)


def _wait_at_exit() -> None:
    """Before the interpreter tears down, let workers past a deadline finish their piece."""
    with _workers_lock:
        busy = any(w.is_alive() for w in _workers)
    if not busy:
        return
    try:
        if not wait_for_workers(EXIT_WAIT_SECONDS):
            leaving = "exiting now" if _exit_status is not None else "exiting"
            sys.stderr.write(
                f"sarg: an extraction worker is still busy after {EXIT_WAIT_SECONDS:g} s; "
                f"{leaving}\n"
            )
            if _exit_status is not None:
                for stream in (sys.stdout, sys.stderr):
                    with contextlib.suppress(Exception):
                        stream.flush()
                os._exit(_exit_status)
    except KeyboardInterrupt:  # a second Ctrl-C: leave now, without tearing down under it
        os._exit(130)


def _late_if_stopped(outcome: Any, seconds: float) -> Any:
    """A document its extractor stopped reading at the deadline is past the deadline."""
    if isinstance(outcome, ExtractionOutcome) and outcome.error == STOPPED:
        return _past_deadline(seconds, outcome.triples)
    return outcome


async def _within(call: Any, seconds: float) -> Any:
    """Await ``call`` for at most ``seconds``: its result, the exception it raised, or None."""
    try:
        return list(await asyncio.wait_for(call, seconds))
    except asyncio.TimeoutError:
        return None
    except Exception as exc:
        return exc


def _past_deadline(seconds: float, triples: Sequence[Triple] = ()) -> ExtractionOutcome:
    """The outcome of a document not extracted within ``seconds`` (with what was read of it)."""
    return ExtractionOutcome(
        triples=list(triples),
        error=PAST_DEADLINE.format(seconds=seconds),
        stats={"documents_past_deadline": 1},
    )


def _describe(exc: BaseException) -> str:
    return f"extractor error: {type(exc).__name__}: {exc}"


def _align(
    docs: Sequence[SourceDocument], usable: Sequence[SourceDocument], outcomes: Sequence[Any]
) -> list[Any]:
    """Spread outcomes of the non-empty documents back over all documents (None = empty)."""
    by_position = dict(zip((id(d) for d in usable), outcomes))
    return [by_position.get(id(d)) for d in docs]
