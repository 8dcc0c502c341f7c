"""Structuring overhead versus graph size: build, match and beam search, 100 → 100,000 triples.

Synthetic graphs: ``N`` random triples over ``N`` distinct node phrases (mean out-degree
~1, total degree d ~2), seeded. A fast hashing embedder (bag of hashed words, no model)
stands in for the sentence encoder so the large sizes finish in minutes; encoder time is
therefore NOT included (with all-MiniLM-L6-v2 on CPU it costs roughly 1-3 ms per new
phrase and dominates build and match; see ``sarg eval``'s per-stage times).

Measured, side by side, in one run:

* **build (normal-form merge)**: ``build_reasoning_graph(triples, embedder=None)``,
  the string-normalisation entity resolution + graph construction: near-linear.
* **build (embedding merge)**: with the hashing embedder, which adds the pairwise
  cosine entity resolution: O(V²) time and memory, so it is measured only up to
  ``--max-embed-triples`` (default 5,000) and the growth ratio is printed honestly.
* **match**: ``match_entry_nodes`` of 5 query phrases against every node: linear in V.
* **beam search**: ``beam_search_chains`` from 5 fixed entry nodes with β ∈ {1, 3, 10}:
  the work is bounded by entries × depth × β × d expansions, independent of graph size.

For the direction classifier's latency see ``benchmarks/bench_direction.py``; for
extraction concurrency and cache effects with a simulated-latency fake LLM see
``benchmarks/bench_llm_extraction.py``.

Usage::

    python benchmarks/bench_scaling.py                # 100 … 100,000 triples
    python benchmarks/bench_scaling.py --sizes 100 1000 --repeats 3
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import random
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sarg_integrations.graph import build_reasoning_graph
from sarg_integrations.matching import match_entry_nodes
from sarg_integrations.schema import Direction, Triple
from sarg_integrations.traversal import BeamSearchStats, beam_search_chains

WORDS = [
    "rate",
    "inflation",
    "demand",
    "supply",
    "price",
    "wage",
    "credit",
    "yield",
    "bond",
    "storm",
    "flood",
    "crop",
    "drought",
    "enzyme",
    "protein",
    "cell",
    "lipid",
    "gene",
]


class HashingEmbedder:
    """Bag of hashed words, 256 dims, cached per word: fast and deterministic."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self._bucket: dict[str, int] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                b = self._bucket.get(word)
                if b is None:
                    b = self._bucket[word] = (
                        int(hashlib.md5(word.encode()).hexdigest()[:8], 16) % self.dim
                    )
                out[row, b] += 1.0
        return out


def synthetic_triples(n: int, seed: int = 0) -> list[Triple]:
    """``n`` triples over ``n`` distinct phrases (``"<word> <word> <i>"``)."""
    rng = random.Random(seed)
    phrases = [f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i}" for i in range(n)]
    out = []
    for i in range(n):
        cause, effect = rng.randrange(n), rng.randrange(n)
        if cause == effect:
            effect = (effect + 1) % n
        out.append(Triple(phrases[cause], "leads to", phrases[effect], document_id=f"d{i % 50}"))
    return out


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best wall time (ms) of ``repeats`` calls, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, (time.perf_counter() - start) * 1000.0)
    return best, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-embed-triples", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    embedder = HashingEmbedder()
    query_phrases = ["rate inflation", "storm flood", "enzyme gene", "credit bond", "crop drought"]
    q_vecs = embedder.embed(query_phrases)
    rows = []
    print(
        "synthetic graphs, hashing embedder (encoder time excluded); best of",
        args.repeats,
        "runs\n",
    )
    header = (
        f"{'triples':>8} {'nodes':>8} {'edges':>8} | {'build ms':>9} {'build+emb ms':>12} | "
        f"{'match ms':>9} | "
        + " ".join(f"{'β=' + str(b) + ' ms':>8} {'exp':>5}" for b in (1, 3, 10))
    )
    print(header)
    print("-" * len(header))
    for n in args.sizes:
        triples = synthetic_triples(n, args.seed)
        build_ms, graph = timed(lambda: build_reasoning_graph(triples, embedder=None), args.repeats)  # noqa: B023 (called at once)
        emb_ms = None
        if n <= args.max_embed_triples:
            emb_ms, _ = timed(
                lambda: build_reasoning_graph(triples, embedder=embedder, merge_threshold=0.99), 1  # noqa: B023 (called at once)
            )
        g = graph.graph
        nodes = sorted(g.nodes)
        node_vecs = embedder.embed(nodes)
        match_ms, entries = timed(
            lambda: match_entry_nodes(
                nodes, node_vecs, query_phrases, q_vecs, threshold=0.0, max_nodes=5  # noqa: B023 (called at once)
            ),
            args.repeats,
        )
        sources = [e.node for e in entries][:5]
        rng = random.Random(args.seed)
        sims = {node: rng.random() for node in nodes}
        beams = {}
        for width in (1, 3, 10):
            stats = BeamSearchStats()

            def search(width: int = width, stats: BeamSearchStats = stats) -> list[Any]:
                return list(
                    beam_search_chains(
                        g,  # noqa: B023 (called at once)
                        sources,  # noqa: B023 (called at once)
                        sims,  # noqa: B023 (called at once)
                        Direction.BIDIRECTIONAL,
                        width=width,
                        max_depth=8,
                        stats=stats,
                    )
                )

            ms, _ = timed(search, args.repeats)
            beams[width] = (ms, stats.expansions // args.repeats)
        rows.append(
            (n, g.number_of_nodes(), g.number_of_edges(), build_ms, emb_ms, match_ms, beams)
        )
        emb_text = f"{emb_ms:12.1f}" if emb_ms is not None else f"{'(skipped)':>12}"
        print(
            f"{n:>8} {g.number_of_nodes():>8} {g.number_of_edges():>8} | {build_ms:9.1f} {emb_text} | "  # noqa: E501
            f"{match_ms:9.2f} | "
            + " ".join(f"{beams[b][0]:8.2f} {beams[b][1]:>5}" for b in (1, 3, 10))
        )
    print("\ngrowth ratios between consecutive sizes (size ratio in brackets):")
    for prev, cur in itertools.pairwise(rows):
        size_ratio = cur[0] / prev[0]
        emb = f"{cur[4] / prev[4]:.1f}x" if cur[4] and prev[4] else "n/a"
        print(
            f"  {prev[0]:>6} -> {cur[0]:<6} [{size_ratio:.0f}x]: build {cur[3] / prev[3]:.1f}x, "
            f"build+embedding-merge {emb}, match {cur[5] / prev[5]:.1f}x, "
            f"beam β=3 {cur[6][3][0] / max(prev[6][3][0], 1e-6):.1f}x "
            f"(expansions {prev[6][3][1]} -> {cur[6][3][1]})"
        )
    if rows:
        last = rows[-1]
        print(
            f"\nbeam search at {last[0]} triples, β=1/3/10: "
            + ", ".join(f"{last[6][b][0]:.2f} ms ({last[6][b][1]} expansions)" for b in (1, 3, 10))
            + f"; β=10 / β=1 time ratio {last[6][10][0] / max(last[6][1][0], 1e-6):.1f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
