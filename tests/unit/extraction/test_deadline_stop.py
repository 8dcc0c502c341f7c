"""Issue 16, item 3: a deadline ends cleanly; no worker is left inside native code at exit.

``sarg run --deadline 3`` printed its report and then died with ``libblis: Aborting``
(exit 134), and Ctrl-C under ``--deadline`` gave -6 instead of 130: the abandoned worker
thread was still in BLAS code while the interpreter tore down. Now the worker is told
to stop, finishes the piece in hand, and is waited for (before ``run`` returns for
``stop=``-aware extractors, at interpreter exit otherwise).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from sarg_integrations.extraction import runner, tagger, tagger_inference
from sarg_integrations.extraction.base import STOPPED, ExtractionOutcome, stopped_outcome
from sarg_integrations.extraction.rules import RuleBasedExtractor
from sarg_integrations.extraction.runner import ExtractionRunner
from sarg_integrations.extraction.tagger import TaggerExtractor
from sarg_integrations.extraction.union import UnionExtractor
from sarg_integrations.schema import SourceDocument, Triple

REPO = Path(__file__).resolve().parents[3]
CHUNK_SECONDS = 0.05


class ChunkedSlowExtractor:
    """Reads each document in 10 chunks of 50 ms (think: BLAS work), checking ``stop``."""

    def __init__(self) -> None:
        self.in_chunk = False
        self.chunks_read = 0

    def extract(self, document: SourceDocument) -> list[Triple]:
        raise AssertionError("extract_many(stop=) is used under a deadline")

    def extract_many(
        self, documents: Sequence[SourceDocument], *, stop: threading.Event | None = None
    ) -> list[Any]:
        out: list[Any] = []
        for document in documents:
            triples: list[Triple] = []
            for chunk in range(10):
                if stop is not None and stop.is_set():
                    break
                self.in_chunk = True
                time.sleep(CHUNK_SECONDS)
                self.in_chunk = False
                self.chunks_read += 1
                triples.append(Triple(f"c{chunk}", "causes", f"e{chunk}", document_id=document.id))
            out.append(triples if len(triples) == 10 else stopped_outcome(triples))
        return out


def _live_workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "sarg-extract" and t.is_alive()]


def test_a_stop_aware_extractor_finishes_its_chunk_and_the_worker_is_joined() -> None:
    extractor = ChunkedSlowExtractor()
    docs = [SourceDocument(f"d{i}", "text") for i in range(3)]  # 1.5 s of work in all
    start = time.perf_counter()
    outcomes = ExtractionRunner(extractor).run(docs, deadline=0.3)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"the caller waited {elapsed:.2f} s"
    assert _live_workers() == [] and not extractor.in_chunk  # nothing left running
    assert extractor.chunks_read < 30
    past = [o for o in outcomes if isinstance(o, ExtractionOutcome)]
    assert [o.error for o in past] == ["deadline of 0.3 s passed before extraction finished"] * len(past)
    assert past and past[0].triples  # what was read of a document is kept
    assert all(o.stats == {"documents_past_deadline": 1} for o in past)


def test_a_plain_extractor_starts_no_new_document_after_the_deadline() -> None:
    started: list[str] = []

    class Slow:
        def extract(self, document: SourceDocument) -> list[Triple]:
            started.append(document.id)
            time.sleep(0.3)
            return []

    docs = [SourceDocument(f"d{i}", "text") for i in range(5)]
    ExtractionRunner(Slow()).run(docs, deadline=0.1)
    assert runner.wait_for_workers(timeout=5.0)
    assert started == ["d0"]


# ---------------------------------------------------------------- the real extractors stop


class _StoppingNLP:
    """spaCy stand-in: sets ``stop`` once ``after`` chunks were handed out."""

    pipe_names = ["parser"]
    max_length = 1_000_000

    def __init__(self, stop: threading.Event, after: int) -> None:
        self.stop, self.after, self.handed = stop, after, 0

    def pipe(self, texts: Iterable[str], **_: Any) -> Iterator[Any]:
        for text in texts:
            self.handed += 1
            if self.handed > self.after:
                self.stop.set()
            yield type("Doc", (), {"text": text, "sents": []})()


def test_rules_stop_between_chunks() -> None:
    stop = threading.Event()
    nlp = _StoppingNLP(stop, after=2)
    text = "Rain fell on the hills. " * 3_000  # 72,000 characters: 4 chunks of 20,000
    docs = [SourceDocument("big", text), SourceDocument("next", "Rain causes floods.")]
    outcomes = RuleBasedExtractor(nlp=nlp).extract_many(docs, stop=stop)
    assert [o.error for o in outcomes] == [STOPPED, STOPPED]
    assert nlp.handed == 3  # no chunk is read after the stop
    assert RuleBasedExtractor(nlp=nlp).extract_many(docs[1:]) == [[]]  # no stop: read


def test_tagger_and_union_stop_between_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    stop = threading.Event()
    windows: list[int] = []

    def predict(network: Any, tokenizer: Any, config: Any, texts: list[str], **_: Any) -> Any:
        windows.append(len(texts))
        stop.set()  # the deadline passes during the first window
        return [[] for _ in texts]

    monkeypatch.setattr(tagger_inference, "predict_relations", predict)
    monkeypatch.setattr(TaggerExtractor, "network", property(lambda self: (None, None, None)))
    nlp = _StoppingNLP(threading.Event(), after=10**9)
    extractor = TaggerExtractor(nlp=nlp)
    text = " ".join(f"Rain{i} fell." for i in range(600))  # 600 sentences: 3 windows
    outcomes = extractor.extract_many([SourceDocument("big", text)], stop=stop)
    assert windows == [extractor.batch_size]  # one encoder batch, not the whole window
    assert [o.error for o in outcomes] == [STOPPED]
    union = UnionExtractor(extractor, RuleBasedExtractor(nlp=nlp))
    assert [o.error for o in union.extract_many([SourceDocument("big", text)], stop=stop)] == [STOPPED]


def test_tagger_stops_between_encoder_batches_of_a_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `sarg run --deadline 3` on 1 MB: the tagger's piece in hand was a 256-sentence
    # window, which took over 40 s on two busy cores, so the worker was still in native
    # code when the process exited. Now stop is checked between batches of batch_size.
    stop = threading.Event()
    batches: list[int] = []

    def predict(network: Any, tokenizer: Any, config: Any, texts: list[str], **_: Any) -> Any:
        batches.append(len(texts))
        if len(batches) == 3:
            stop.set()  # the deadline passes during the third batch of the first window
        return [[] for _ in texts]

    monkeypatch.setattr(tagger_inference, "predict_relations", predict)
    monkeypatch.setattr(TaggerExtractor, "network", property(lambda self: (None, None, None)))
    extractor = TaggerExtractor(nlp=_StoppingNLP(threading.Event(), after=10**9), batch_size=16)
    text = " ".join(f"Rain{i} fell." for i in range(600))
    outcomes = extractor.extract_many([SourceDocument("big", text)], stop=stop)
    assert batches == [16, 16, 16]
    assert [o.error for o in outcomes] == [STOPPED]
    batches.clear()  # without a deadline a window is still one call (unchanged batching)
    extractor.extract_many([SourceDocument("big", text)])
    assert batches == [tagger.SENTENCE_WINDOW, tagger.SENTENCE_WINDOW, 600 - 2 * 256]


# -------------------------------------------------------------------- process exit


def _python(script: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


SLOW_EXTRACTOR = """
    import time
    from sarg_integrations.schema import SourceDocument

    class Slow:  # stands in for an extractor inside native code
        def extract(self, document):
            print("started", document.id, flush=True)
            time.sleep(3.0)  # long enough that a loaded machine still signals mid-piece
            print("finished", document.id, flush=True)
            return []
"""


def test_the_interpreter_waits_for_the_piece_in_hand_before_exiting() -> None:
    child = _python(SLOW_EXTRACTOR + """
    from sarg_integrations.extraction.runner import ExtractionRunner

    docs = [SourceDocument("a", "x"), SourceDocument("b", "y")]
    outcome = ExtractionRunner(Slow()).run(docs, deadline=0.2)[0]
    print("returned:", outcome.error, flush=True)
    """)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.splitlines() == [
        "started a",
        "returned: deadline of 0.2 s passed before extraction finished",
        "finished a",  # the worker was waited for, not torn down mid-call
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery differs on Windows")
def test_ctrl_c_under_a_deadline_exits_130_after_the_piece_in_hand(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Rain causes floods.", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Floods cause damage.", encoding="utf-8")
    child = _python(SLOW_EXTRACTOR + f"""
    import sys
    from fakes import HashingEmbedder, QueryWords
    from sarg_integrations import cli
    from sarg_integrations.direction import CueWordDirectionClassifier
    from sarg_integrations.pipeline import SARGPipeline

    cli.run.build_pipeline = lambda config, **_: SARGPipeline(
        config, extractor=Slow(), embedder=HashingEmbedder(dim=64),
        keyphrase_extractor=QueryWords(), direction_classifier=CueWordDirectionClassifier())
    sys.exit(cli.main(["run", "-q", "What do floods cause?", "-d", {str(tmp_path)!r},
                       "--deadline", "30", "--no-progress"]))
    """)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "started a"
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert "sarg: interrupted" in err
    assert out.splitlines() == ["finished a"]


def test_a_worker_stuck_past_the_exit_wait_leaves_with_the_commands_status(
    tmp_path: Path,
) -> None:
    # The exit wait ran out and the interpreter went on tearing down under the thread in
    # native code: the abort of item 3 again. Now `sarg` leaves at once with its status.
    (tmp_path / "a.txt").write_text("Rain causes floods.", encoding="utf-8")
    child = _python(SLOW_EXTRACTOR.replace("time.sleep(3.0)", "time.sleep(20)") + f"""
    import atexit, sys
    from fakes import HashingEmbedder, QueryWords
    from sarg_integrations import cli
    from sarg_integrations.direction import CueWordDirectionClassifier
    from sarg_integrations.extraction import runner
    from sarg_integrations.pipeline import SARGPipeline

    atexit.register(lambda: print("interpreter teardown went on", flush=True))
    runner.EXIT_WAIT_SECONDS = 0.5
    cli.run.build_pipeline = lambda config, **_: SARGPipeline(
        config, extractor=Slow(), embedder=HashingEmbedder(dim=64),
        keyphrase_extractor=QueryWords(), direction_classifier=CueWordDirectionClassifier())
    sys.argv = ["sarg", "run", "-q", "What do floods cause?", "-d", {str(tmp_path)!r},
                "--deadline", "0.3", "--no-progress"]
    sys.exit(cli.main())
    """)
    start = time.monotonic()
    out, err = child.communicate(timeout=60)
    assert time.monotonic() - start < 15  # not the 20 s of the stuck call
    assert child.returncode == 0, err
    assert "still busy after 0.5 s; exiting now" in err
    assert "deadline of 0.3 s passed" in out  # the report was printed (and flushed)
    assert "finished a" not in out and "interpreter teardown went on" not in out


def test_the_wait_runs_before_exit_handlers_registered_after_the_worker_started() -> None:
    # spaCy / thinc / torch loaded lazily inside the worker register their exit handlers
    # after the runner's: atexit runs last-registered first, so they ran while the
    # worker was still inside native code (libblis abort or segfault, 3 runs in 3).
    child = _python(SLOW_EXTRACTOR + """
    import atexit, threading
    from sarg_integrations.extraction.runner import ExtractionRunner

    ExtractionRunner(Slow()).run([SourceDocument("a", "x")], deadline=0.2)
    atexit.register(lambda: print("late handler; worker alive:", any(
        t.name == "sarg-extract" and t.is_alive() for t in threading.enumerate()), flush=True))
    """)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.splitlines() == ["started a", "finished a", "late handler; worker alive: False"]
