"""``sarg direction``, ``sarg train-direction`` and ``sarg distill-direction``."""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

from sarg_integrations.cli.common import non_empty, positive_int, quiet_models
from sarg_integrations.direction.base import LABELS, TRAINERS

__all__ = ["add_commands"]


def add_commands(sub: Any) -> None:
    """Add the direction-classifier commands to the ``sarg`` subparsers ``sub``."""
    from sarg_integrations.direction.classifier import DEFAULT_MARGIN

    def margin(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0.0 <= value <= 1.0:
            msg = f"invalid margin {text!r}: expected a number in [0, 1], e.g. {DEFAULT_MARGIN}"
            raise argparse.ArgumentTypeError(msg)
        return value

    direction = sub.add_parser(
        "direction",
        help="predict the traversal direction of queries",
        description=(
            "Print each query's direction (forward/backward/bidirectional) and class probabilities."
        ),
    )
    direction.add_argument(
        "queries", nargs="+", type=non_empty, metavar="QUERY", help="the question(s)"
    )
    direction.add_argument(
        "--json",
        action="store_true",
        help='print a JSON list of {"query", "label", "probabilities"}',
    )
    direction.add_argument(
        "--model", metavar="PATH", help="a trained classifier (default: the packaged one)"
    )
    direction.add_argument(
        "--margin", type=margin, metavar="M", help="fallback margin in [0, 1] (default: model's)"
    )
    direction.set_defaults(handler=_cmd_direction, paths=(("model", "--model", "in-any"),))

    train = sub.add_parser(
        "train-direction",
        help="train the direction classifier (SetFit)",
        description=(
            "Train the direction classifier the SetFit way: optionally fine-tune the body on "
            "contrastive pairs (CosineSimilarityLoss), then fit a logistic-regression head; "
            "print test accuracy and a per-class report; save the model. --trainer setfit "
            "does it with the setfit library."
        ),
    )
    train.add_argument(
        "--data", metavar="FILE", help="JSONL with query, label, split (default: the packaged data)"
    )
    train.add_argument(
        "--base-model",
        metavar="PATH",
        help="local sentence-transformers folder (default: embedded all-MiniLM-L6-v2)",
    )
    train.add_argument("--out", metavar="DIR", help="folder to save the classifier to")
    train.add_argument(
        "--pairs",
        type=int,
        default=0,
        metavar="N",
        help="contrastive pairs to fine-tune the body on (0 = frozen body, default)",
    )
    train.add_argument(
        "--epochs", type=positive_int, default=1, metavar="N", help="epochs over pairs (default 1)"
    )
    train.add_argument(
        "--batch-size", type=positive_int, default=16, metavar="N", help="pairs/step (default 16)"
    )
    train.add_argument(
        "--lr", type=float, default=2e-5, metavar="LR", help="body learning rate (default 2e-5)"
    )
    train.add_argument(
        "--ngram-buckets",
        type=int,
        default=0,
        metavar="N",
        help="hashed word n-gram features added to the head (default 0; the shipped head: 1024)",
    )
    train.add_argument(
        "--margin",
        type=margin,
        default=DEFAULT_MARGIN,
        metavar="M",
        help=f"fallback margin saved with the model (default {DEFAULT_MARGIN})",
    )
    train.add_argument(
        "--trainer",
        choices=TRAINERS,
        default="auto",
        help=(
            "setfit: the setfit library samples the pairs, fine-tunes the body and fits the "
            "head (pip install 'sarg-integrations[train]'); builtin: the same recipe without "
            "it; auto (default): setfit when installed, else builtin"
        ),
    )
    train.add_argument(
        "--max-train", type=positive_int, metavar="N", help="use at most N training queries"
    )
    train.add_argument(
        "--eval-split",
        choices=("test", "validation"),
        default="test",
        help="split to report on (default test)",
    )
    train.set_defaults(
        handler=_cmd_train_direction,
        paths=(
            ("data", "--data", "in-file"),
            ("base_model", "--base-model", "in-dir"),
            ("out", "--out", "out-any"),
        ),
    )

    distill = sub.add_parser(
        "distill-direction",
        help="label your queries with an LLM teacher",
        description="Label queries with an LLM (the teacher) to retrain the student on your data.",
    )
    distill.add_argument(
        "--llm",
        required=True,
        metavar="SPEC",
        help="LangChain chat model PROVIDER:MODEL, e.g. openai:gpt-4o-mini",
    )
    distill.add_argument(
        "--queries",
        required=True,
        metavar="FILE",
        help=".txt (one query per line) or .jsonl ('query'/'question' per line)",
    )
    distill.add_argument(
        "--out", required=True, metavar="FILE", help="JSONL to write (query, label, split)"
    )
    distill.add_argument(
        "--max-concurrency",
        type=positive_int,
        metavar="N",
        help="at most N model calls in flight (default 4)",
    )
    distill.set_defaults(
        handler=_cmd_distill_direction,
        paths=(("queries", "--queries", "in-file"), ("out", "--out", "out-file")),
    )


def _cmd_direction(args: argparse.Namespace) -> int:
    with quiet_models():
        return _direction(args)


def _cmd_train_direction(args: argparse.Namespace) -> int:
    with quiet_models():
        return _train_direction(args)


def _direction(args: argparse.Namespace) -> int:
    """``sarg direction QUERY [QUERY ...] [--model PATH] [--margin M] [--json]``."""
    import sys

    from sarg_integrations.direction.classifier import DirectionClassifier

    classifier = DirectionClassifier.load(
        getattr(args, "model", None), margin=getattr(args, "margin", None)
    )
    queries = list(args.queries)
    predictions = classifier.predict_batch(queries)
    if args.json:
        payload = [
            {
                "query": query,
                "label": p.direction.value,
                "probabilities": {label: float(p.scores[label]) for label in LABELS},
            }
            for query, p in zip(queries, predictions)
        ]
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return 0
    from sarg_integrations.cli.common import emit

    lines = []
    for query, p in zip(queries, predictions):
        probs = "  ".join(f"{label} {p.scores[label]:.3f}" for label in LABELS)
        note = " (low margin: fell back)" if "fell back" in p.rationale else ""
        lines.append(f"{p.direction.value:<13} {probs}{note}  {query}")
    emit(lines, sys.stdout)  # queries are user text: control characters escaped
    return 0


def _train_direction(args: argparse.Namespace) -> int:
    """``sarg train-direction [--data FILE] [--base-model PATH] [--out DIR] ...``."""
    import sys

    from sarg_integrations.direction.data import load_direction_dataset
    from sarg_integrations.direction.training import train_direction_classifier

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    rows = load_direction_dataset(args.data)
    start = time.perf_counter()
    report = train_direction_classifier(
        rows,
        base_model=args.base_model,
        fine_tune_pairs=args.pairs,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        ngram_buckets=args.ngram_buckets,
        margin=args.margin,
        max_train=args.max_train,
        eval_split=args.eval_split,
        out=args.out,
        log=say,
        trainer=args.trainer,
    )
    total = time.perf_counter() - start
    body = "fine-tuned body" if report.n_pairs else "frozen body"
    say(f"Trained on {report.n_train} queries ({body}, {report.n_pairs} pairs) in {total:.1f} s")
    say("Timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in report.timings.items()))
    if report.accuracy is None:
        say(f"No rows of split {args.eval_split!r} to evaluate on.")
    else:
        say(
            f"Accuracy on the {args.eval_split} split ({report.n_eval} queries): "
            f"{report.accuracy:.4f}"
        )
        say(report.report.rstrip())
        say(
            "Confusion (rows gold, columns predicted; "
            + ", ".join(LABELS)
            + "): "
            + str(report.confusion)
        )
    if report.saved_to is not None:
        say(
            f"Saved to {report.saved_to}; use it with `sarg direction --model {args.out} ...` "
            f"or DirectionClassifier.load({str(args.out)!r})"
        )
    return 0


def _cmd_distill_direction(args: argparse.Namespace) -> int:
    """``sarg distill-direction --llm SPEC --queries FILE --out FILE``."""
    import sys

    from sarg_integrations.direction.data import read_queries
    from sarg_integrations.direction.teacher import LLMDirectionTeacher, distill_direction
    from sarg_integrations.models import specs

    queries = read_queries(args.queries)
    teacher = LLMDirectionTeacher(
        specs.resolve_llm_spec(args.llm), max_concurrency=args.max_concurrency or 4
    )
    start = time.perf_counter()
    counts = distill_direction(teacher, queries, args.out)
    sys.stdout.write(
        f"Labeled {counts['labeled']} of {len(queries)} queries with {args.llm} in "
        f"{time.perf_counter() - start:.1f} s: "
        + ", ".join(f"{label} {counts[label]}" for label in LABELS)
        + f"; {counts['unparseable']} unparseable answer(s) left out.\n"
        f"Wrote {args.out}; train the student with: "
        f"sarg train-direction --data {args.out} --out DIR\n"
    )
    return 0
