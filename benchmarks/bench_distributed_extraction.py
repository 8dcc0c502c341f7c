"""Benchmark pre-extraction (``sarg extract``) and a shared Redis cache, with a simulated model.

No LLM is reachable here, so the model is a fake that sleeps ``--model-seconds`` (0.5 s,
as in ``bench_llm_extraction.py``) per call and answers ``[]``. The corpus is the
MuSiQue-Ans dev questions in ``../shared/data/multihop`` (20 retrieved paragraphs per
question; 200 questions = 4,000 paragraphs). Three figures:

1. **Pre-extraction wall time** – :func:`~sarg_integrations.extraction.prefill.prefill`
   (what ``sarg extract`` runs) over the distinct paragraphs into an empty Redis cache,
   with 1, 2 and 4 local worker processes and with 4 Ray actors on this machine
   (``max_concurrency`` 8 model calls per worker). Ideal: ``ceil(chunks / (8 × workers))
   × model seconds``.
2. **Query-time LLM calls before and after pre-extraction** – every question's paragraph
   set extracted as a query would (``extract_many``), first against an empty cache,
   then against the pre-filled one (goal: 0 calls).
3. **Cache hit rate of 4 replicas** – a query stream (every question asked twice, in a
   seeded random order) spread round-robin over 4 replica processes, each with its own
   extractor: one shared Redis cache vs 4 private SQLite caches.

Usage::

    python benchmarks/bench_distributed_extraction.py --questions 20    # a few minutes
    python benchmarks/bench_distributed_extraction.py                   # all 200 questions
    python benchmarks/bench_distributed_extraction.py --skip-ray --workers 1,4

A private ``redis-server`` is started on a free port in a temporary folder (the Debian
package); pass ``--redis URL`` to use a running one (its database is flushed!). The
data folder is ``<repo>/../shared/data`` or ``$SARG_SHARED_DATA``.

Figures measured on 2026-12-01 (2 busy CPUs, all 200 questions; 3,141 distinct chunks,
475 s in all): pre-extraction 200.3 / 103.8 / 55.4 s with 1 / 2 / 4 local workers and
59.2 s with 4 Ray actors (ideal 196.5 / 98.5 / 49.5 s); query-time calls 3,141 with an
empty cache, 0 after pre-extraction; 4 replicas: shared Redis 60.6 % hits (3,149 calls),
private SQLite 21.7 % (6,265 calls). See the README and ``docs/deployment.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import math
import multiprocessing
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sarg_integrations.extraction.llm import LLMTripleExtractor
from sarg_integrations.extraction.prefill import LocalExecutor, prefill
from sarg_integrations.schema import SourceDocument

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SARG_SHARED_DATA", REPO.parent / "shared" / "data"))
MUSIQUE = "multihop/musique_ans_dev_200_migres.jsonl"
IDENTITY = "simulated-model"


class SlowFake:
    """An async fake model: sleeps ``seconds`` per call and answers ``[]``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.calls = 0

    async def __call__(self, prompt: str) -> str:
        self.calls += 1
        await asyncio.sleep(self.seconds)
        return "[]"


def make_extractor(cache: str, seconds: float, concurrency: int = 8) -> LLMTripleExtractor:
    """The picklable factory body every worker and replica calls."""
    return LLMTripleExtractor(
        SlowFake(seconds), cache=cache, model_identity=IDENTITY, max_concurrency=concurrency
    )


def load_questions(limit: int) -> list[list[SourceDocument]]:
    with (DATA / MUSIQUE).open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()][:limit]
    return [
        [SourceDocument(f"{r['id']}#{p['idx']}", p["paragraph_text"]) for p in r["paragraphs"]]
        for r in rows
    ]


# --------------------------------------------------------------------------- redis


def start_redis(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (apt-get install -y redis-server), or pass --redis")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder)]
    args += ["--save", "", "--appendonly", "no"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    import redis

    for _ in range(100):
        try:
            if redis.Redis(port=port).ping():
                # a generous timeout: on a busy machine a 1 s read timeout would degrade
                # the cache to "no cache" and distort the figures
                return process, f"redis://127.0.0.1:{port}/0?timeout=30"
        except redis.RedisError:
            time.sleep(0.05)
    process.kill()
    sys.exit("redis-server did not start")


def flush(url: str) -> None:
    import redis

    redis.Redis.from_url(url.split("?")[0]).flushdb()


# --------------------------------------------------------------------------- figures


def bench_prefill(
    url: str, docs: list[SourceDocument], seconds: float, workers: list[int], ray: bool
) -> tuple[list[str], int]:
    lines = [
        f"### Pre-extraction wall time (simulated model: {seconds} s per call, "
        "8 calls in flight per worker)",
        "",
        "| where | distinct chunks | model calls | wall time (s) | ideal (s) | speed-up vs 1 |",
        "|---|---|---|---|---|---|",
    ]
    factory = functools.partial(make_extractor, url, seconds)
    base = None
    chunks = 0
    runs: list[tuple[str, Any, int]] = [(f"{n} local", LocalExecutor(n), n) for n in workers]
    if ray:
        from sarg_integrations.extraction.prefill_ray import RayExecutor

        runs.append(("4 Ray actors", RayExecutor(workers=4), 4))
    for label, executor, n in runs:
        flush(url)
        if "Ray" in label:
            _start_ray()
        try:
            report = prefill(docs, factory, executor=executor, batch_size=32)
        except Exception as exc:  # e.g. a starved machine misses Ray's heartbeats
            lines.append(f"| {label} | – | – | failed: {type(exc).__name__} | – | – |")
            print(lines[-1], exc, file=sys.stderr, flush=True)
            continue
        finally:
            if "Ray" in label:
                import ray as ray_module

                ray_module.shutdown()
        chunks = report.chunks
        base = base or report.wall_seconds
        ideal = math.ceil(report.chunks / (8 * n)) * seconds
        lines.append(
            f"| {label} | {report.chunks} | {report.llm_calls} | {report.wall_seconds:.1f} | "
            f"{ideal:.1f} | {base / report.wall_seconds:.1f}× |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    return lines, chunks


def _start_ray() -> None:
    import ray

    ray.init(
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={
            "env_vars": {"PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "benchmarks")])}
        },
    )


def query_calls(cache: str, questions: list[list[SourceDocument]]) -> dict[str, float]:
    """Extract every question's paragraph set as a query would; count calls and hits."""
    extractor = make_extractor(cache, 0.0)
    calls = hits = requests = 0
    for docs in questions:
        outcomes = extractor.extract_many(docs)
        calls += sum(int(o.stats["llm_calls"]) for o in outcomes)
        hits += sum(int(o.stats["cache_hits"]) for o in outcomes)
        requests += sum(int(o.stats["chunks"]) for o in outcomes)
    extractor.close()
    return {"calls": calls, "hits": hits, "requests": requests}


def bench_before_after(
    url: str, questions: list[list[SourceDocument]], seconds: float
) -> list[str]:
    flush(url)
    before = query_calls(url, questions)  # an empty cache (it fills as the queries run)
    flush(url)
    docs = [d for q in questions for d in q]
    report = prefill(docs, functools.partial(make_extractor, url, 0.0), executor=LocalExecutor(1))
    after = query_calls(url, questions)
    return [
        f"### Query-time LLM calls, {len(questions)} questions "
        f"({sum(len(q) for q in questions)} retrieved paragraphs)",
        "",
        "| cache | LLM calls | calls / query | cache hit rate |",
        "|---|---|---|---|",
        f"| empty at the start (fills as queries run) | {before['calls']} | "
        f"{before['calls'] / len(questions):.2f} | {before['hits'] / before['requests']:.1%} |",
        f"| after `sarg extract` ({report.chunks} chunks pre-extracted) | {after['calls']} | "
        f"{after['calls'] / len(questions):.2f} | {after['hits'] / after['requests']:.1%} |",
    ]


def replica(cache: str, questions: list[list[SourceDocument]]) -> dict[str, float]:
    return query_calls(cache, questions)


def bench_replicas(url: str, questions: list[list[SourceDocument]], tmp: Path) -> list[str]:
    stream = [q for q in questions for _ in range(2)]
    random.Random(0).shuffle(stream)
    shares = [stream[r::4] for r in range(4)]
    ctx = multiprocessing.get_context("spawn")
    rows = []
    for label, caches in (
        ("4 replicas, one shared Redis", [url] * 4),
        ("4 replicas, private SQLite each", [str(tmp / f"replica{r}.sqlite") for r in range(4)]),
    ):
        flush(url)
        with ctx.Pool(4) as pool:
            results = pool.starmap(replica, list(zip(caches, shares)))
        calls = sum(r["calls"] for r in results)
        hits = sum(r["hits"] for r in results)
        requests = sum(r["requests"] for r in results)
        rows.append(f"| {label} | {len(stream)} | {requests} | {calls} | {hits / requests:.1%} |")
    return [
        f"### Cache hit rate of 4 replicas ({len(questions)} questions, each asked twice, "
        "round-robin over the replicas)",
        "",
        "| setup | queries | chunk requests | LLM calls | cache hit rate |",
        "|---|---|---|---|---|",
        *rows,
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--questions", type=int, default=200, help="MuSiQue questions (20 paragraphs each)"
    )
    parser.add_argument("--model-seconds", type=float, default=0.5)
    parser.add_argument("--workers", default="1,2,4", help="local worker counts (default 1,2,4)")
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--redis", metavar="URL", help="a running Redis (its database is flushed)")
    args = parser.parse_args(argv)
    if not (DATA / MUSIQUE).is_file():
        sys.exit(f"shared data not found at {DATA / MUSIQUE}; set SARG_SHARED_DATA")
    questions = load_questions(args.questions)
    docs = [d for q in questions for d in q]
    workers = [int(n) for n in args.workers.split(",")]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        server = None
        url = args.redis
        if url is None:
            server, url = start_redis(Path(tmp))
        try:
            lines, _ = bench_prefill(url, docs, args.model_seconds, workers, not args.skip_ray)
            lines += ["", *bench_before_after(url, questions, args.model_seconds)]
            lines += ["", *bench_replicas(url, questions, Path(tmp))]
        finally:
            if server is not None:
                server.kill()
    lines += [
        "",
        f"(whole benchmark: {time.perf_counter() - started:.0f} s, {os.cpu_count()} CPUs)",
    ]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
