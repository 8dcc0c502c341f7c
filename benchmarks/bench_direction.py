"""Benchmark the distilled direction classifier (issue 4; paper §3.4, App. B, §5.6).

Reports:

1. accuracy on the packaged test split (argmax and with the margin fallback), per class;
2. agreement with the hand-labeled real multi-hop questions
   (``benchmarks/data/direction_real_questions.jsonl``, never used in training), next to
   the cue-word fallback;
3. latency: with the pipeline's shared embedding (the head only), standalone for one
   query (one MiniLM forward pass + head) and batch throughput;
4. optionally a fine-tuned SetFit body (``--fine-tuned DIR``, trained with
   ``sarg train-direction --pairs 2000 --out DIR``): accuracy versus cost;
5. optionally (``--compare-trainers PAIRS``) the builtin trainer against the ``setfit``
   library's Trainer, side by side in one run: same data, pairs budget, batch 16, lr 2e-5
   and seed; accuracy, training wall time and per-query inference for each;
6. the §5.6 ablation: beam expansions and chains found with the classifier's direction
   versus blind bidirectional traversal, on the demo corpus and on HotpotQA distractor
   questions with their own paragraphs (default offline pipeline).

Run::

    HF_HUB_OFFLINE=1 python benchmarks/bench_direction.py [--fine-tuned DIR] [--ablation N] \
        [--threads 1] [--json OUT] [--compare-trainers PAIRS [--compare-only]]
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
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

from sarg_integrations import CueWordDirectionClassifier, DirectionClassifier
from sarg_integrations.direction import (
    LABELS,
    evaluate_direction_classifier,
    load_direction_dataset,
)

HERE = Path(__file__).resolve().parent
REAL = HERE / "data" / "direction_real_questions.jsonl"
SHARED = Path(os.environ.get("SARG_SHARED_DATA", HERE.parents[1] / "shared" / "data"))


def _real_rows() -> list[dict]:
    return [
        {"query": r["question"], "label": r["label"]}
        for r in (json.loads(line) for line in REAL.open(encoding="utf-8"))
    ]


def _agreement(predictions: list[str], rows: list[dict]) -> float:
    return float(np.mean([p == r["label"] for p, r in zip(predictions, rows)]))


def _ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def accuracy_section(clf: DirectionClassifier, name: str, out: dict) -> None:
    test = load_direction_dataset(split="test")
    real = _real_rows()
    s_test = evaluate_direction_classifier(clf, test)
    s_real = evaluate_direction_classifier(clf, real)
    out[name] = {
        "test_accuracy": s_test["accuracy"],
        "test_accuracy_with_fallback": s_test["accuracy_with_fallback"],
        "real_agreement": s_real["accuracy"],
        "real_agreement_with_fallback": s_real["accuracy_with_fallback"],
        "real_confusion": s_real["confusion"],
        "n_test": len(test),
        "n_real": len(real),
    }
    print(f"\n== {name}: {clf!r}")
    print(
        f"test split ({len(test)}): accuracy {s_test['accuracy']:.4f}, "
        f"with fallback {s_test['accuracy_with_fallback']:.4f}"
    )
    print(s_test["report"].rstrip())
    print(
        f"real multi-hop questions ({len(real)}): agreement {s_real['accuracy']:.4f}, "
        f"with fallback {s_real['accuracy_with_fallback']:.4f}; confusion {s_real['confusion']}"
    )


def _head_ms_rounds(clf: DirectionClassifier, queries: list[str], vectors) -> list[float]:
    """Per-query ms of the head over given vectors: 30 rounds over all the queries."""
    rounds = []
    for _ in range(30):
        start = time.perf_counter()
        for q, v in zip(queries, vectors):
            clf.predict_direction(q, v)
        rounds.append((time.perf_counter() - start) * 1000.0 / len(queries))
    return rounds


def latency_section(clf: DirectionClassifier, name: str, out: dict, *, shared: bool) -> None:
    queries = [r["query"] for r in load_direction_dataset(split="test")]
    clf.predict(queries[:4])  # load the encoder
    result: dict = {}
    if shared:
        # The pipeline path: the head over the embedding the pipeline already computed.
        # Per-query time over all test queries, 30 rounds: min (least disturbed by other
        # processes on a shared machine, as timeit recommends) and median.
        rounds = _head_ms_rounds(clf, queries, clf.embed(queries))
        result["shared_embedding_ms_min"] = min(rounds)
        result["shared_embedding_ms_median"] = statistics.median(rounds)
    from sarg_integrations.embedding import SentenceTransformerEmbedder

    encoder = SentenceTransformerEmbedder()
    encoder.embed(queries[:2])
    result["minilm_forward_one_query_ms"] = statistics.median(
        _ms(lambda q=q: encoder.embed([q]), 1) for q in queries[:60]
    )
    result["standalone_one_query_ms"] = statistics.median(
        _ms(lambda q=q: clf.predict_direction(q), 1) for q in queries[:60]
    )
    start = time.perf_counter()
    clf.predict(queries)
    elapsed = time.perf_counter() - start
    result["batch_queries_per_s"] = len(queries) / elapsed
    result["batch_ms_per_query"] = elapsed * 1000.0 / len(queries)
    out.setdefault(name, {}).update(result)
    line = ", ".join(f"{k} {v:.3f}" for k, v in result.items())
    print(f"latency [{name}]: {line}")


def trainers_section(n_pairs: int, ngram_buckets: int, head_c: float, out: dict) -> None:
    """Train with the builtin loop and with setfit on the same budget; compare."""
    from sarg_integrations.direction import train_direction_classifier

    test = load_direction_dataset(split="test")
    queries = [r["query"] for r in test]
    out["trainers"] = {"pairs": n_pairs, "ngram_buckets": ngram_buckets, "head_c": head_c}
    print(
        f"\n== trainers: builtin vs setfit ({n_pairs} pairs, batch 16, lr 2e-5, seed 13, "
        f"{ngram_buckets} n-gram buckets, C={head_c})"
    )
    for trainer in ("builtin", "setfit"):
        load_before = _machine()["load_average_1_5_15"][0]
        start = time.perf_counter()
        report = train_direction_classifier(
            fine_tune_pairs=n_pairs,
            ngram_buckets=ngram_buckets,
            head_c=head_c,
            trainer=trainer,
        )
        wall = time.perf_counter() - start
        clf = report.classifier
        scores = evaluate_direction_classifier(clf, test)
        real = _real_rows()
        real_scores = evaluate_direction_classifier(clf, real)
        # Per-query inference: the head over a precomputed embedding of its own body
        # (what the pipeline pays when it can hand the vector over), and one query
        # end to end (a forward pass of the tuned body + the head).
        vectors = clf.embed(queries)
        clf.reuse_embedding = True
        rounds = _head_ms_rounds(clf, queries, vectors)
        clf.reuse_embedding = None
        predict = clf.predict_direction
        one = statistics.median(_ms(lambda q=q, p=predict: p(q), 1) for q in queries[:60])
        row = {
            "test_accuracy": scores["accuracy"],
            "test_accuracy_with_fallback": scores["accuracy_with_fallback"],
            "real_agreement": real_scores["accuracy"],
            "train_wall_s": wall,
            "timings": report.timings,
            "head_ms_per_query_min": min(rounds),
            "head_ms_per_query_median": statistics.median(rounds),
            "standalone_one_query_ms": one,
            "load_average_before": load_before,
        }
        out["trainers"][trainer] = row
        print(
            f"{trainer:>7}: test accuracy {row['test_accuracy']:.4f} (with fallback "
            f"{row['test_accuracy_with_fallback']:.4f}), real agreement "
            f"{row['real_agreement']:.4f}, train {wall:.1f} s "
            f"({', '.join(f'{k} {v:.1f}' for k, v in report.timings.items())}), "
            f"head {row['head_ms_per_query_min']:.4f} ms/query (median "
            f"{row['head_ms_per_query_median']:.4f}), one query end to end {one:.2f} ms, "
            f"load before {load_before}"
        )


def cue_word_section(out: dict) -> None:
    cue = CueWordDirectionClassifier()
    test = load_direction_dataset(split="test")
    real = _real_rows()
    queries = [r["query"] for r in test]
    rounds = []
    for _ in range(30):
        start = time.perf_counter()
        preds = cue.predict(queries)
        rounds.append((time.perf_counter() - start) * 1000.0 / len(queries))
    per_query = min(rounds)
    out["cue_words"] = {
        "test_accuracy": _agreement(preds, test),
        "real_agreement": _agreement(cue.predict([r["query"] for r in real]), real),
        "ms_per_query_min": per_query,
    }
    print(f"\n== cue-word fallback: {out['cue_words']}")


# Directed questions over the demo corpus (written for this ablation, not training data).
DIRECTED_DEMO_QUESTIONS = [
    "What are the consequences of glucocerebroside accumulation?",
    "What happens after glucocerebrosidase deficiency sets in?",
    "Why do patients with Gaucher disease have an enlarged spleen?",
    "What caused the margin calls for leveraged investors?",
    "What did persistent inflation lead to?",
    "What are the effects of rising bond yields?",
    "Why did technology valuations fall?",
    "What explains the rise in bond yields?",
]


def _hotpot_items(n: int) -> list[tuple[str, str, list[dict]]]:
    path = SHARED / "multihop" / "hotpotqa_dev_distractor_500_ircot_format.jsonl"
    if not path.is_file():
        return []
    items = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            docs = [
                {
                    "id": f"{row['question_id']}-{c['id']}",
                    "text": " ".join(c["paragraph_text"].split()),
                }
                for c in row["contexts"]
            ]
            items.append((row["question_id"], row["question_text"], docs))
            if len(items) >= n:
                break
    return items


def ablation_section(n_hotpot: int, out: dict) -> None:
    from sarg_integrations import SARGConfig, SARGPipeline
    from sarg_integrations.io import DEMO_QUESTIONS, load_demo_corpus

    predicted = SARGPipeline()
    blind = SARGPipeline(SARGConfig(direction="bidirectional"))
    blind.embedder = predicted.embedder  # share the encoder cache: same vectors, less time
    demo_questions = [*DEMO_QUESTIONS, *DIRECTED_DEMO_QUESTIONS]
    sets = {"demo": [(f"demo-{i}", q, load_demo_corpus()) for i, q in enumerate(demo_questions)]}
    hotpot = _hotpot_items(n_hotpot)
    if hotpot:
        sets[f"hotpotqa-{len(hotpot)}"] = hotpot
    out["ablation"] = {}
    print("\n== §5.6 ablation: predicted direction vs blind bidirectional traversal")
    for name, items in sets.items():
        totals = {"classifier": [0, 0, 0], "bidirectional": [0, 0, 0]}
        directions: dict[str, int] = {}
        start = time.perf_counter()
        for _, question, docs in items:
            for label, pipe in (("classifier", predicted), ("bidirectional", blind)):
                result = pipe.run(question, docs)
                totals[label][0] += int(result.stats.get("beam_expansions", 0))
                totals[label][1] += len(result.chains)
                totals[label][2] += len(result.candidate_chains)
                if label == "classifier":
                    d = result.direction.direction.value
                    directions[d] = directions.get(d, 0) + 1
        row = {
            "questions": len(items),
            "predicted_directions": directions,
            **{
                f"{label}_{key}": value
                for label, (exp, kept, cand) in totals.items()
                for key, value in (
                    ("beam_expansions", exp),
                    ("chains_kept", kept),
                    ("candidate_chains", cand),
                )
            },
            "seconds": round(time.perf_counter() - start, 1),
        }
        out["ablation"][name] = row
        print(f"{name}: {json.dumps(row)}")


def _machine() -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {"cpus": os.cpu_count(), "load_average_1_5_15": [round(x, 2) for x in load]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--fine-tuned", metavar="DIR", help="also evaluate a fine-tuned SetFit model folder"
    )
    parser.add_argument(
        "--ablation",
        type=int,
        default=50,
        metavar="N",
        help="HotpotQA questions in the ablation (0 = demo only)",
    )
    parser.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    parser.add_argument(
        "--compare-trainers",
        type=int,
        metavar="PAIRS",
        help="also train with the builtin loop and with setfit on PAIRS pairs and compare",
    )
    parser.add_argument(
        "--compare-ngram-buckets",
        type=int,
        default=0,
        metavar="N",
        help="n-gram buckets of the compared heads (default 0: setfit fits the head too)",
    )
    parser.add_argument(
        "--compare-head-c", type=float, default=4.0, metavar="C", help="their head's C (4.0)"
    )
    parser.add_argument(
        "--compare-only", action="store_true", help="run only the trainer comparison"
    )
    parser.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help=(
            "torch intra-op threads (default: torch's choice). On a busy 2-core machine "
            "--threads 1 avoids thread oversubscription: a single-query MiniLM pass went "
            "from ~500 ms to ~14 ms there"
        ),
    )
    args = parser.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    out: dict = {
        "labels": list(LABELS),
        "machine_before": _machine(),
        "torch_threads": args.threads,
    }
    print(f"machine: {out['machine_before']}")
    if args.compare_trainers:
        trainers_section(
            args.compare_trainers, args.compare_ngram_buckets, args.compare_head_c, out
        )
    if args.compare_only:
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        return 0
    shipped = DirectionClassifier.load()
    accuracy_section(shipped, "shipped_frozen_head", out)
    latency_section(shipped, "shipped_frozen_head", out, shared=True)
    cue_word_section(out)
    if args.fine_tuned:
        tuned = DirectionClassifier.load(args.fine_tuned)
        accuracy_section(tuned, "fine_tuned_body", out)
        latency_section(tuned, "fine_tuned_body", out, shared=False)
    out["machine_after_latency"] = _machine()
    print(f"machine: {out['machine_after_latency']}")
    ablation_section(args.ablation, out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
