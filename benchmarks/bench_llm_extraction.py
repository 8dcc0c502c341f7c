"""Benchmark the LLM extractor's concurrency, cache reuse and LLM-call budget (offline fakes).

Three figures, all with scripted fake models (no LLM is reachable here):

1. **Concurrency** – wall time and peak in-flight calls for 20 and 200 chunks at
   ``max_concurrency`` 1 / 8 / 32 with a simulated model that takes 0.5 s per call
   (``--model-seconds``). The ideal time is ``ceil(chunks / concurrency) × 0.5 s``.
2. **Cache reuse** – MuSiQue-Ans dev (``shared/data/multihop``): every question comes
   with 20 retrieved paragraphs and questions share paragraphs. SARG extracts each
   question's set with one persistent SQLite cache; pass 1 reuses paragraphs already
   seen for earlier questions, pass 2 repeats the questions.
3. **LLM calls per query vs a corpus-wide index** – the same question set and the same
   counting fake LLM (a LlamaIndex ``CustomLLM``) drive (a) SARG's per-query extraction
   with the cache and (b) LlamaIndex ``PropertyGraphIndex`` (``SimpleLLMPathExtractor``,
   ``embed_kg_nodes=False``) built once over the union of all paragraphs.

Usage::

    python benchmarks/bench_llm_extraction.py                  # full run, about 2.5 min
    python benchmarks/bench_llm_extraction.py --quick          # skips 200 chunks at concurrency 1
    python benchmarks/bench_llm_extraction.py --questions 50

The data folder is ``<repo>/../shared/data`` or ``$SARG_SHARED_DATA``.

Figures measured on 2026-11-29 (2 CPU cores, ``python benchmarks/bench_llm_extraction.py``,
about 2.5 min):

| chunks | max_concurrency | wall (s) | ideal (s) | peak in flight |
|---|---|---|---|---|
| 20 | 1 / 8 / 32 | 10.03 / 1.51 / 0.52 | 10.0 / 1.5 / 0.5 | 1 / 8 / 20 |
| 200 | 1 / 8 / 32 | 100.35 / 12.63 / 3.61 | 100.0 / 12.5 / 3.5 | 1 / 8 / 32 |

MuSiQue (200 questions, 4000 retrieved paragraphs, 3141 distinct): pass 1 makes 3141
calls (21.5 % cache hits from shared paragraphs, 15.71 calls per query), pass 2 makes 0
(100 % hits). PropertyGraphIndex over the union makes the same 3141 calls, all before
the first answer; SARG needs 20 before its first answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from sarg_integrations.extraction.llm import LLMTripleExtractor, SQLiteCache
from sarg_integrations.schema import SourceDocument

DATA = Path(
    os.environ.get(
        "SARG_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"
    )
)
MUSIQUE = "multihop/musique_ans_dev_200_migres.jsonl"


class SlowFake:
    """An async fake model: sleeps ``seconds`` per call, counts calls and peak in flight."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.calls = 0
        self.in_flight = 0
        self.peak = 0

    async def __call__(self, prompt: str) -> str:
        self.calls += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.seconds)
            return "[]"
        finally:
            self.in_flight -= 1


def bench_concurrency(seconds: float, quick: bool) -> list[str]:
    lines = [
        f"### Concurrency (simulated model: {seconds} s per call)",
        "",
        "| chunks | max_concurrency | LLM calls | wall time (s) | ideal (s) | peak in flight | speed-up vs 1 |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in (20, 200):
        baseline = n * seconds
        for conc in (1, 8, 32):
            ideal = math.ceil(n / conc) * seconds
            if quick and n == 200 and conc == 1:
                lines.append(
                    f"| {n} | {conc} | – | (skipped, ≈{baseline:.0f}) | {ideal:.1f} | – | 1.0 |"
                )
                continue
            model = SlowFake(seconds)
            extractor = LLMTripleExtractor(model, max_concurrency=conc, model_identity="slow-fake")
            docs = [SourceDocument(f"c{i}", f"Chunk {i} causes outcome {i}.") for i in range(n)]
            start = time.perf_counter()
            extractor.extract_many(docs)
            wall = time.perf_counter() - start
            extractor.close()
            lines.append(
                f"| {n} | {conc} | {model.calls} | {wall:.2f} | {ideal:.1f} | {model.peak} | "
                f"{baseline / wall:.1f}× |"
            )
    return lines


def _counting_llm() -> Any:
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata

    class CountingFakeLLM(CustomLLM):
        """Counts calls; answers [] to SARG's prompt and one triple line to LlamaIndex's."""

        calls: int = 0

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="counting-fake")

        def complete(
            self, prompt: str, formatted: bool = False, **kwargs: Any
        ) -> CompletionResponse:
            with _LOCK:
                self.calls += 1
            if "<document>" in prompt:
                return CompletionResponse(text="[]")
            return CompletionResponse(text="(paragraph, mentions, something)")

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            raise NotImplementedError

    return CountingFakeLLM()


_LOCK = threading.Lock()


def load_musique(limit: int) -> list[dict[str, Any]]:
    path = DATA / MUSIQUE
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return rows[:limit]


def question_docs(row: dict[str, Any]) -> list[SourceDocument]:
    return [
        SourceDocument(f"{row['id']}#{p['idx']}", p["paragraph_text"], {"title": p["title"]})
        for p in row["paragraphs"]
    ]


def bench_cache_and_calls(n_questions: int) -> list[str]:
    rows = load_musique(n_questions)
    llm = _counting_llm()
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = SQLiteCache(Path(tmp) / "cache.sqlite")
        extractor = LLMTripleExtractor(llm, cache=cache, max_concurrency=8)
        passes = []
        for _ in range(2):
            calls_before = llm.calls
            hits = requests = 0
            per_query: list[int] = []
            start = time.perf_counter()
            for row in rows:
                before = llm.calls
                outcomes = extractor.extract_many(question_docs(row))
                per_query.append(llm.calls - before)
                hits += sum(int(o.stats["cache_hits"]) for o in outcomes)
                requests += sum(int(o.stats["chunks"]) for o in outcomes)
            passes.append(
                {
                    "calls": llm.calls - calls_before,
                    "hits": hits,
                    "requests": requests,
                    "per_query": per_query,
                    "seconds": time.perf_counter() - start,
                }
            )
        extractor.close()
        cache.close()
    paragraphs = [p["paragraph_text"] for row in rows for p in row["paragraphs"]]
    unique = len(set(paragraphs))
    lines += [
        f"### Cache reuse on MuSiQue-Ans dev ({len(rows)} questions, {len(paragraphs)} retrieved "
        f"paragraphs, {unique} distinct)",
        "",
        "| pass | chunk requests | LLM calls | cache hits | hit rate | LLM calls / query | wall (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for number, p in enumerate(passes, start=1):
        lines.append(
            f"| {number} | {p['requests']} | {p['calls']} | {p['hits']} | "
            f"{p['hits'] / max(1, p['requests']):.1%} | {p['calls'] / len(rows):.2f} | {p['seconds']:.1f} |"
        )

    # corpus-wide index over the union of paragraphs, same counting fake
    from llama_index.core import Document, PropertyGraphIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.indices.property_graph import SimpleLLMPathExtractor

    pg_llm = _counting_llm()
    corpus = [Document(text=t) for t in dict.fromkeys(paragraphs)]
    start = time.perf_counter()
    PropertyGraphIndex.from_documents(
        corpus,
        llm=pg_llm,
        embed_model=MockEmbedding(embed_dim=8),
        kg_extractors=[SimpleLLMPathExtractor(llm=pg_llm, num_workers=4)],
        embed_kg_nodes=False,
        show_progress=False,
    )
    pg_seconds = time.perf_counter() - start
    sarg_total = passes[0]["calls"]
    first_query = passes[0]["per_query"][0]
    lines += [
        "",
        f"### LLM calls: SARG per-query extraction vs a corpus-wide index ({len(rows)} questions)",
        "",
        "| approach | calls before the first answer | total calls (all questions) "
        "| calls / query (amortised) | repeat questions |",
        "|---|---|---|---|---|",
        f"| SARG, per-query extraction + cache | {first_query} | {sarg_total} | "
        f"{sarg_total / len(rows):.2f} | {passes[1]['calls']} |",
        f"| LlamaIndex PropertyGraphIndex (SimpleLLMPathExtractor) over the union "
        f"| {pg_llm.calls} | {pg_llm.calls} (+ query-time calls) "
        f"| {pg_llm.calls / len(rows):.2f} | 0 (+ query-time calls) |",
        "",
        f"Index build wall time with the instant fake: {pg_seconds:.1f} s; SARG pass 1: "
        f"{passes[0]['seconds']:.1f} s. Ratio of calls before the first answer: "
        f"{pg_llm.calls / max(1, first_query):.0f}× fewer for SARG.",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model-seconds", type=float, default=0.5)
    parser.add_argument("--quick", action="store_true", help="skip 200 chunks at concurrency 1")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--skip-concurrency", action="store_true")
    args = parser.parse_args(argv)
    lines: list[str] = []
    if not args.skip_concurrency:
        lines += bench_concurrency(args.model_seconds, args.quick)
        lines.append("")
    if not (DATA / MUSIQUE).is_file():
        print("\n".join(lines))
        print(
            f"shared data not found at {DATA / MUSIQUE}; set SARG_SHARED_DATA to the folder "
            "holding multihop/musique_ans_dev_200_migres.jsonl to run the cache figures",
            file=sys.stderr,
        )
        return 2
    try:
        import llama_index.core  # noqa: F401
    except ImportError:
        print("\n".join(lines))
        print(
            "llama-index-core is not installed: pip install 'sarg-integrations[llama-index]'",
            file=sys.stderr,
        )
        return 2
    lines += bench_cache_and_calls(args.questions)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
