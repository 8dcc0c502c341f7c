"""Whole-query latency of the default pipeline against a dense MiniLM re-rank, side by side.

For each HotpotQA question (10 distractor-setting paragraphs), in one process and one run:

* **re-rank**: encode the question and the 10 paragraphs with the packaged MiniLM and sort
  by cosine (what a user's dense re-ranker costs; nothing cached between questions), with
  sentence-transformers' default batching (the ratios' baseline);
* **re-rank, length-batched**: the same, encoded as SARG's embedder encodes (batches of
  similar length, :func:`~sarg_integrations.embedding.length_batches`), the stronger
  baseline: padding the paragraphs to the longest costs the default re-rank ~40 %;
* **SARG, <extractor>**: a whole ``SARGPipeline.run`` (extraction, graph, matching,
  direction, beam search, evidence, prompt) with each extractor named in ``--extractors``;
  each question's paragraphs are new to the pipeline, so nothing is cached either;
* **SARG, <extractor>, extracted at index time** (``--index-time``): the same run with the
  triples read from an extraction cache filled before the queries, as ``sarg extract
  --extractor NAME --cache URL`` fills it when the documents are indexed
  (:class:`~sarg_integrations.extraction.cached.CachedExtractor`, in memory here). The
  documents' and the question's embeddings are still computed at query time, as the
  re-rank's are; the filling is not timed.

Printed: p50 / p90 milliseconds, the ratio of each SARG p50 to the re-rank p50, the stage
breakdown (median ms per stage) and the extractor's sentences per second.

Usage::

    python benchmarks/bench_query_latency.py                       # 30 questions: union (default), tagger, rules
    python benchmarks/bench_query_latency.py --questions 10 --extractors tagger
    python benchmarks/bench_query_latency.py --questions 12 --extractors union --index-time
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sarg_integrations import SARGPipeline  # noqa: E402
from sarg_integrations.embedding import SentenceTransformerEmbedder  # noqa: E402
from sarg_integrations.extraction.tagger import split_sentences  # noqa: E402
from sarg_integrations.schema import SourceDocument  # noqa: E402

DATA = Path(os.environ.get("SARG_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
HOTPOT = DATA / "multihop" / "hotpotqa_dev_distractor_500_ircot_format.jsonl"


def questions(n: int) -> list[tuple[str, list[SourceDocument]]]:
    out = []
    with HOTPOT.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            docs = [SourceDocument(f"{c['title']}", c["paragraph_text"]) for c in row["contexts"]]
            if len(docs) == 10:
                out.append((row["question_text"], docs))
            if len(out) == n:
                break
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--extractors", default="union,tagger,rules")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--index-time", action="store_true",
        help="also time each extractor with its triples extracted ahead into a cache",
    )
    args = parser.parse_args(argv)
    if not HOTPOT.is_file():
        print(f"error: {HOTPOT} not found; set SARG_SHARED_DATA", file=sys.stderr)
        return 2
    work = questions(args.questions)
    names = [e.strip() for e in args.extractors.split(",") if e.strip()]
    pipelines = {f"{name} extractor": SARGPipeline(extractor=name) for name in names}
    if args.index_time:
        from sarg_integrations.extraction.cached import cached_offline_extractor
        from sarg_integrations.extraction.llm.cache import MemoryCache

        for name in names:
            cached = cached_offline_extractor(name, MemoryCache())
            # Index time: every paragraph extracted once before any question is asked.
            cached.fill_cache([d.text for _, docs in work for d in docs])
            pipelines[f"{name} extractor, extracted at index time"] = SARGPipeline(
                extractor=cached
            )
    names = list(pipelines)
    for pipe in pipelines.values():
        pipe.warm_up()
    import numpy as np

    from sarg_integrations._models import load_sentence_transformer

    st = load_sentence_transformer()
    st.encode(["warm up"])
    rerank: list[float] = []
    rerank_batched: list[float] = []
    batched = SentenceTransformerEmbedder()
    batched._model = st  # the same loaded model, encoded in length batches
    sarg: dict[str, list[float]] = {n: [] for n in names}
    stages: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    sentences = sum(len(split_sentences(d.text)) for _, docs in work for d in docs)
    extract_seconds: dict[str, float] = dict.fromkeys(names, 0.0)
    for query, docs in work:
        start = time.perf_counter()
        vectors = st.encode([query, *[d.text for d in docs]], normalize_embeddings=True)
        order = np.argsort(-(vectors[1:] @ vectors[0]))
        _ = [docs[i] for i in order]
        rerank.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        vectors = batched.embed([query, *[d.text for d in docs]])
        order = np.argsort(-(vectors[1:] @ vectors[0]))
        _ = [docs[i] for i in order]
        rerank_batched.append((time.perf_counter() - start) * 1000)
        for name, pipe in pipelines.items():
            start = time.perf_counter()
            result = pipe.run(query, docs)
            sarg[name].append((time.perf_counter() - start) * 1000)
            for key, value in result.stats.items():
                if key.startswith("time_") and key.endswith("_ms"):
                    stages[name].setdefault(key[5:-3], []).append(float(value))
            extract_seconds[name] += float(result.stats.get("time_extract_ms", 0.0)) / 1000
    base = statistics.median(rerank)
    rows = [{"method": "dense MiniLM re-rank", "p50_ms": round(base, 1), "p90_ms": round(pct(rerank, 0.9), 1), "ratio": 1.0}]
    batched_p50 = statistics.median(rerank_batched)
    rows.append({
        "method": "dense MiniLM re-rank, length-batched",
        "p50_ms": round(batched_p50, 1),
        "p90_ms": round(pct(rerank_batched, 0.9), 1),
        "ratio": round(batched_p50 / base, 2),
    })
    for name in names:
        p50 = statistics.median(sarg[name])
        rows.append({
            "method": f"SARG, {name}",
            "p50_ms": round(p50, 1),
            "p90_ms": round(pct(sarg[name], 0.9), 1),
            "ratio": round(p50 / base, 2),
            "stages_ms": {k: round(statistics.median(v), 1) for k, v in sorted(stages[name].items())},
            "sentences_per_second": round(sentences / extract_seconds[name], 1) if extract_seconds[name] else None,
        })
    print(f"{len(work)} HotpotQA questions x 10 paragraphs ({sentences} sentences)")
    print("| method | p50 ms | p90 ms | p50 / re-rank | extraction sentences/s |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['method']} | {row['p50_ms']} | {row['p90_ms']} | {row['ratio']} | {row.get('sentences_per_second', '–')} |")
    for row in rows[2:]:
        print(f"{row['method']} p50 / length-batched re-rank: {row['p50_ms'] / batched_p50:.2f}")
    for row in rows[2:]:
        print(f"{row['method']} stages (median ms): {row['stages_ms']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
