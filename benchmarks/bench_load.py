"""Load benchmark (issue 8, part 4): concurrent queries and a cache shared by processes.

Two figures, with scripted fakes (no LLM is reachable here):

1. **Concurrent queries** – ``--queries`` (64) questions go through one shared
   ``SARGPipeline.arun`` at once. Extraction uses ``LLMTripleExtractor`` over a fake
   async model with latency (5–25 ms per call) and a 5 % error rate: each call fails
   with a retryable 503 with probability ``--error-rate``, and the documents marked
   ``[flaky-source]`` (one query in 20) always fail with a non-retryable error. The
   script counts completed and lost queries, per-query latency, the peak number of model
   calls in flight (bounded by ``--max-concurrency``), resident memory over
   ``--rounds`` rounds, injected vs reported errors, and whether every result equals
   the one the same query gives when the queries run one after another.
2. **Cache under processes** – ``--processes`` (4) spawned processes write and read one
   ``SQLiteCache`` file at once (own keys and shared keys); every entry is read back and
   compared. Then garbage is written over the file and the processes open it at once:
   the damage must be detected, the file moved aside once, and every new write kept.

Usage::

    python benchmarks/bench_load.py                 # about 10 s on 2 cores
    python benchmarks/bench_load.py --queries 256 --rounds 5

``tests/unit/test_load.py`` runs the same functions with the default sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import multiprocessing
import queue
import random
import re
import resource
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sarg_integrations import LLMTripleExtractor, SARGConfig, SARGPipeline
from sarg_integrations.direction import CueWordDirectionClassifier
from sarg_integrations.extraction.llm.cache import SQLiteCache
from sarg_integrations.schema import SARGResult

_DOCUMENT = re.compile(r"<document>\n(.*?)\n</document>\n\nAnswer with only", re.DOTALL)
_CUE = re.compile(r"([A-Z][^.]*?) (causes|leads to) ([^.]+)\.")
FLAKY = "[flaky-source]"


class InjectedFatal(Exception):
    """A non-retryable model error (think: a content filter rejecting the document)."""


class InjectedUnavailable(Exception):
    """A retryable model error (HTTP 503)."""

    status_code = 503


class LoadModel:
    """A fake async chat model: slow, sometimes failing, otherwise a perfect extractor.

    Answers one triple per "X causes Y." / "X leads to Y." sentence of the document in
    the prompt. Latency is a function of the prompt (5–25 ms); transient errors come
    from a seeded generator (they are retried, so results do not depend on them); the
    ``[flaky-source]`` documents always fail.
    """

    def __init__(self, *, error_rate: float = 0.05, seed: int = 0) -> None:
        self.error_rate = error_rate
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.calls = 0
        self.in_flight = 0
        self.peak = 0
        self.transient_injected = 0
        self.fatal_injected = 0

    async def __call__(self, prompt: str) -> str:
        with self.lock:
            self.calls += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            transient = self.rng.random() < self.error_rate
        try:
            digest = hashlib.sha256(prompt.encode()).digest()
            await asyncio.sleep(0.005 + digest[0] % 21 / 1000)
            text = _DOCUMENT.findall(prompt)[-1]
            if FLAKY in text:
                with self.lock:
                    self.fatal_injected += 1
                raise InjectedFatal("content filter rejected the document")
            if transient:
                with self.lock:
                    self.transient_injected += 1
                raise InjectedUnavailable("503 service unavailable")
            items = [
                {
                    "cause": m.group(1),
                    "relation": m.group(2),
                    "effect": m.group(3),
                    "relation_type": "causal",
                    "evidence": m.group(0),
                }
                for m in _CUE.finditer(text)
            ]
            return json.dumps(items)
        finally:
            with self.lock:
                self.in_flight -= 1


class HashingEmbedder:
    """Bag-of-words vectors from hashed words (deterministic, model-free)."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def embed(self, texts: Any) -> np.ndarray:
        out = np.zeros((len(texts), self.dim))
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        return out


class QueryPhrase:
    """The key phrase of "What does X lead to?" is X."""

    def extract(self, query: str) -> list[str]:
        found = re.search(r"does (.+?) lead to", query)
        return [found.group(1)] if found else [query]


def workload(n: int) -> list[tuple[str, list[dict[str, str]]]]:
    """``n`` queries, each with a three-hop story and three shared distractors."""
    shared = [
        {"id": "museum", "text": "The museum opened in 1901 and has a glass roof."},
        {"id": "weather", "text": "The weather report is published every morning."},
        {"id": "bridge", "text": "The old bridge is painted green."},
    ]
    out = []
    for i in range(n):
        flaky = f"{FLAKY} " if i % 20 == 7 else ""
        story = [
            {"id": f"q{i}-a", "text": f"Factor{i} causes stage{i} alpha."},
            {"id": f"q{i}-b", "text": f"{flaky}Stage{i} alpha leads to stage{i} beta."},
            {"id": f"q{i}-c", "text": f"Stage{i} beta leads to outcome{i}."},
        ]
        out.append((f"What does factor{i} lead to?", story + shared))
    return out


def make_pipeline(model: LoadModel, max_concurrency: int) -> SARGPipeline:
    extractor = LLMTripleExtractor(
        model,
        model_identity="load-fake",
        max_concurrency=max_concurrency,
        max_retries=8,
        backoff_base=0.005,
        backoff_max=0.05,
    )
    return SARGPipeline(
        SARGConfig(similarity_threshold=0.3),
        extractor=extractor,
        embedder=HashingEmbedder(),
        keyphrase_extractor=QueryPhrase(),
        direction_classifier=CueWordDirectionClassifier(),
    )


def fingerprint(result: SARGResult) -> str:
    """Everything a caller reads from a result, except timings and counters."""
    return json.dumps(
        {
            "prompt": result.prompt,
            "chains": [(c.nodes, round(c.score, 9)) for c in result.chains],
            "triples": [(t.cause, t.relation, t.effect, t.document_id) for t in result.triples],
            "skipped": [(s.document_id, s.reason) for s in result.skipped_documents],
            "fallback": result.fallback_reason,
            "direction": result.direction.direction.value,
        },
        sort_keys=True,
    )


def rss_mb() -> float:
    """Resident memory now, in MB (Linux ``/proc``; else the peak from ``getrusage``)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class LoadReport:
    """The figures of :func:`run_load`."""

    queries: int
    rounds: int
    max_concurrency: int
    completed: int = 0
    exceptions: list[str] = field(default_factory=list)
    lost_documents: int = 0
    chains_found: int = 0
    latency_p50_ms: float = 0.0
    latency_p95_ms: float = 0.0
    wall_s: float = 0.0
    peak_in_flight: int = 0
    model_calls: int = 0
    transient_injected: int = 0
    retries_reported: int = 0
    fatal_injected: int = 0
    fatal_reported: int = 0
    rss_mb: list[float] = field(default_factory=list)
    sequential_mismatches: int = 0

    @property
    def lost(self) -> int:
        """Queries without a result."""
        return self.queries * self.rounds - self.completed


async def _concurrent(
    pipeline: SARGPipeline, work: list[tuple[str, list[dict[str, str]]]]
) -> tuple[list[Any], list[float], float]:
    latencies: list[float] = []

    async def one(query: str, documents: list[dict[str, str]]) -> SARGResult:
        start = time.perf_counter()
        try:
            return await pipeline.arun(query, documents)
        finally:
            latencies.append((time.perf_counter() - start) * 1000.0)

    start = time.perf_counter()
    results = await asyncio.gather(*(one(q, d) for q, d in work), return_exceptions=True)
    return list(results), latencies, time.perf_counter() - start


async def _sequential(
    pipeline: SARGPipeline, work: list[tuple[str, list[dict[str, str]]]]
) -> list[SARGResult]:
    return [await pipeline.arun(q, d) for q, d in work]


def run_load(
    queries: int = 64,
    *,
    rounds: int = 1,
    max_concurrency: int = 8,
    error_rate: float = 0.05,
    seed: int = 0,
) -> LoadReport:
    """Run ``queries`` concurrently ``rounds`` times, then once sequentially; return figures."""
    work = workload(queries)
    report = LoadReport(queries, rounds, max_concurrency)
    model = LoadModel(error_rate=error_rate, seed=seed)
    pipeline = make_pipeline(model, max_concurrency)
    gc.collect()
    report.rss_mb.append(round(rss_mb(), 1))
    latencies: list[float] = []
    concurrent_prints: list[str] = []
    for _ in range(rounds):
        results, round_latencies, wall = asyncio.run(_concurrent(pipeline, work))
        latencies.extend(round_latencies)
        report.wall_s = round(report.wall_s + wall, 3)
        concurrent_prints = []
        for (_, documents), result in zip(work, results):
            if isinstance(result, BaseException):
                report.exceptions.append(f"{type(result).__name__}: {result}")
                concurrent_prints.append("")
                continue
            report.completed += 1
            used = {t.document_id for t in result.triples}
            skipped = {s.document_id for s in result.skipped_documents}
            report.lost_documents += len({d["id"] for d in documents} - used - skipped)
            report.chains_found += bool(result.chains)
            report.retries_reported += int(result.stats.get("llm_retries", 0))
            report.fatal_reported += sum(
                "InjectedFatal" in s.reason for s in result.skipped_documents
            )
            concurrent_prints.append(fingerprint(result))
        gc.collect()
        report.rss_mb.append(round(rss_mb(), 1))
    report.peak_in_flight = model.peak
    report.model_calls = model.calls
    report.transient_injected = model.transient_injected
    report.fatal_injected = model.fatal_injected
    ordered = sorted(latencies)
    report.latency_p50_ms = round(statistics.median(ordered), 1)
    report.latency_p95_ms = round(ordered[int(0.95 * (len(ordered) - 1))], 1)
    # One query after another (a fresh model, other transient failures).
    reference = make_pipeline(LoadModel(error_rate=error_rate, seed=seed + 1), max_concurrency)
    sequential = asyncio.run(_sequential(reference, work))
    report.sequential_mismatches = sum(
        fingerprint(r) != p for r, p in zip(sequential, concurrent_prints)
    )
    return report


# --------------------------------------------------------------------------- processes


def _cache_worker(path: str, worker: int, entries: int, shared: int, out: Any) -> None:
    """Write own and shared keys in small transactions, reading back as it goes."""
    recovered = False
    bad = 0
    try:
        cache = SQLiteCache(path)
        recovered = cache.recovered_from is not None
        for start in range(0, entries, 10):
            batch = {
                f"w{worker}-{i}": {"worker": worker, "i": i, "triples": [[worker, i]]}
                for i in range(start, min(entries, start + 10))
            }
            batch.update({f"shared-{j}": {"shared": j} for j in range(shared)})
            cache.set_many(batch)
            back = cache.get_many(list(batch))
            bad += sum(back.get(k) != v for k, v in batch.items())
        cache.close()
        out.put((worker, recovered, bad, None))
    except Exception as exc:  # reported to the parent, which fails the check
        out.put((worker, recovered, bad, f"{type(exc).__name__}: {exc}"))


@dataclass
class CacheReport:
    """The figures of :func:`run_cache_processes`."""

    processes: int
    entries_written: int
    entries_missing: int = 0
    entries_wrong: int = 0
    readback_mismatches: int = 0
    worker_errors: list[str] = field(default_factory=list)
    integrity: str = ""
    rebuilds: int = 0
    moved_aside_files: int = 0
    wall_s: float = 0.0


def _run_workers(path: Path, processes: int, entries: int, shared: int) -> list[tuple[Any, ...]]:
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_cache_worker, args=(str(path), w, entries, shared, out))
        for w in range(processes)
    ]
    for p in procs:
        p.start()
    rows: list[tuple[Any, ...]] = []
    deadline = time.monotonic() + 120
    while len(rows) < processes and time.monotonic() < deadline:
        try:
            rows.append(out.get(timeout=0.5))
        except queue.Empty:
            if not any(p.is_alive() for p in procs) and out.empty():
                break  # a worker died without reporting
    for p in procs:
        p.join(10)
        if p.is_alive():
            p.kill()
    reported = {row[0] for row in rows}
    rows += [
        (w, False, 0, f"exited with code {p.exitcode} without a report")
        for w, p in enumerate(procs)
        if w not in reported
    ]
    return rows


def _verify(path: Path, processes: int, entries: int, shared: int, report: CacheReport) -> None:
    cache = SQLiteCache(path)
    expected = {
        f"w{w}-{i}": {"worker": w, "i": i, "triples": [[w, i]]}
        for w in range(processes)
        for i in range(entries)
    }
    expected.update({f"shared-{j}": {"shared": j} for j in range(shared)})
    found = cache.get_many(list(expected))
    report.entries_missing += len(set(expected) - set(found))
    report.entries_wrong += sum(found[k] != v for k, v in expected.items() if k in found)
    report.integrity = cache._conn().execute("PRAGMA integrity_check").fetchone()[0]
    cache.close()


def run_cache_processes(
    processes: int = 4, entries: int = 100, shared: int = 20, folder: Path | None = None
) -> tuple[CacheReport, CacheReport]:
    """Concurrent writers on a healthy file, then on a file overwritten with garbage."""
    folder = Path(folder or tempfile.mkdtemp(prefix="sarg-cache-load-"))
    path = folder / "cache.sqlite"
    reports = []
    for damaged in (False, True):
        report = CacheReport(processes, processes * entries + shared)
        if damaged:
            path.write_bytes(random.Random(1).randbytes(64 * 1024))
        start = time.perf_counter()
        rows = _run_workers(path, processes, entries, shared)
        report.wall_s = round(time.perf_counter() - start, 2)
        report.worker_errors = [f"worker {w}: {e}" for w, _, _, e in rows if e]
        report.readback_mismatches = sum(bad for _, _, bad, _ in rows)
        report.rebuilds = sum(recovered for _, recovered, _, _ in rows)
        report.moved_aside_files = sum(
            not p.name.endswith(("-wal", "-shm")) for p in folder.glob("cache.sqlite.corrupt-*")
        )
        _verify(path, processes, entries, shared, report)
        reports.append(report)
    return reports[0], reports[1]


def main(argv: list[str] | None = None) -> int:
    """Print the figures; exit 1 when anything was lost, wrong or mismatched."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-concurrency", type=int, default=8)
    parser.add_argument("--error-rate", type=float, default=0.05)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--entries", type=int, default=200)
    args = parser.parse_args(argv)

    load = run_load(
        args.queries,
        rounds=args.rounds,
        max_concurrency=args.max_concurrency,
        error_rate=args.error_rate,
    )
    total = load.queries * load.rounds
    print(f"Concurrent queries: {load.queries} x {load.rounds} round(s) through arun")
    print(
        f"  completed {load.completed}/{total}, lost {load.lost}, exceptions {len(load.exceptions)}"
    )
    print(f"  documents lost (neither used nor skipped): {load.lost_documents}")
    print(f"  results with a chain: {load.chains_found}/{load.completed}")
    print(f"  latency per query: p50 {load.latency_p50_ms} ms, p95 {load.latency_p95_ms} ms")
    print(f"  wall time of the concurrent rounds: {load.wall_s} s")
    print(
        f"  model calls {load.model_calls}, peak in flight {load.peak_in_flight} "
        f"(max_concurrency {load.max_concurrency})"
    )
    print(
        f"  transient errors injected {load.transient_injected}, retried "
        f"{load.retries_reported}; fatal injected {load.fatal_injected}, documents "
        f"reported skipped for it {load.fatal_reported}"
    )
    print(f"  RSS MB before / after each round: {load.rss_mb}")
    print(f"  results differing from a sequential run: {load.sequential_mismatches}/{load.queries}")

    healthy, damaged = run_cache_processes(args.processes, args.entries)
    for name, rep in (("healthy file", healthy), ("garbage over the file", damaged)):
        print(f"SQLite cache, {rep.processes} processes, {name}:")
        print(
            f"  entries {rep.entries_written}, missing {rep.entries_missing}, wrong "
            f"{rep.entries_wrong}, read-back mismatches {rep.readback_mismatches}, "
            f"integrity_check {rep.integrity!r}, worker errors {len(rep.worker_errors)}, "
            f"rebuilds {rep.rebuilds}, files moved aside {rep.moved_aside_files}, "
            f"{rep.wall_s} s"
        )
    bad = (
        load.lost
        or load.lost_documents
        or load.sequential_mismatches
        or load.peak_in_flight > load.max_concurrency
        or any(
            r.entries_missing or r.entries_wrong or r.readback_mismatches or r.worker_errors
            for r in (healthy, damaged)
        )
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
