"""Running the span tagger over sentences and decoding its labels into relations.

Pure decoding helpers (:func:`bio_spans`, :func:`widen_to_words`) are separate from
the torch batching (:func:`predict_relations`), so they are tested without a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sarg_integrations.extraction.tagger_model import ARGUMENT_LABELS, SIGNAL_LABELS, TaggerConfig

__all__ = ["Relation", "bio_spans", "merge_touching", "predict_relations", "widen_to_words"]

Span = tuple[int, int]


@dataclass(frozen=True)
class Relation:
    """One decoded relation in a sentence, as character spans of that sentence.

    Attributes:
        cause: The cause span, or ``None`` when only the effect was tagged (a relation
            whose cause is in the previous sentence: "As a result, …").
        effect: The effect span.
        signal: The signal span the relation was read for, or ``None``.
        score: The lower of the cause and effect spans' mean label probabilities.
    """

    cause: Span | None
    effect: Span
    signal: Span | None
    score: float


def bio_spans(labels: Sequence[str], scores: Sequence[float]) -> dict[str, list[tuple[int, int, float]]]:
    """Group BIO labels into ``{kind: [(first token, last token + 1, mean score)]}``.

    An ``I-X`` that does not continue an ``X`` span starts one (lenient decoding).

    Example:
        >>> bio_spans(["O", "B-CAUSE", "I-CAUSE", "O", "I-EFFECT"], [1, .9, .7, 1, .6])
        {'CAUSE': [(1, 3, 0.8)], 'EFFECT': [(4, 5, 0.6)]}
    """
    out: dict[str, list[tuple[int, int, float]]] = {}
    kind, start, total = None, 0, 0.0
    for i, (label, score) in enumerate([*zip(labels, scores), ("O", 0.0)]):
        tag, _, name = label.partition("-")
        continues = tag == "I" and name == kind
        if kind is not None and not continues:
            out.setdefault(kind, []).append((start, i, round(total / (i - start), 6)))
            kind = None
        if tag in {"B", "I"} and not continues:
            kind, start, total = name, i, 0.0
        if kind is not None:
            total += float(score)
    return out


def widen_to_words(text: str, start: int, end: int) -> Span:
    """Widen a character span to whole words (word pieces tag parts of words).

    Example:
        >>> widen_to_words("antibiotics selected", 3, 8)
        (0, 11)
    """
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    return start, end


def merge_touching(spans: list[tuple[int, int, float]], text: str) -> list[tuple[int, int, float]]:
    """Join spans of one kind separated only by spaces or hyphens (a split-up span).

    The merged score is the length-weighted mean of the parts.

    Example:
        >>> merge_touching([(0, 3, 0.9), (4, 9, 0.5), (15, 19, 0.8)], "the heavy rain fell")
        [(0, 9, 0.65), (15, 19, 0.8)]
    """
    out: list[tuple[int, int, float]] = []
    for start, end, score in sorted(spans):
        if out and not text[out[-1][1] : start].strip(" -"):
            s0, e0, sc0 = out[-1]
            w0, w1 = e0 - s0, end - start
            out[-1] = (s0, end, round((sc0 * w0 + score * w1) / max(1, w0 + w1), 3))
        else:
            out.append((start, end, score))
    return out


def _best(spans: list[tuple[int, int, float]]) -> tuple[int, int, float] | None:
    # The most confident span; ties go to the longer, then the earlier one.
    return max(spans, key=lambda s: (s[2], s[1] - s[0], -s[0]), default=None)


class _Batch:
    """Tokenised sentences with their offsets (special tokens have offset (0, 0))."""

    def __init__(self, tokenizer: Any, texts: Sequence[str], max_length: int) -> None:
        self.encoding = tokenizer(
            list(texts),
            return_offsets_mapping=True,
            truncation=True,
            max_length=max_length,
            padding=True,
            return_tensors="pt",
        )
        self.offsets = self.encoding["offset_mapping"].tolist()
        self.mask = self.encoding["attention_mask"].tolist()

    def token_types(self, row: int, signal: Span | None) -> list[int]:
        if signal is None:
            return [0] * len(self.offsets[row])
        s, e = signal
        return [int(a < e and b > s and b > a) for a, b in self.offsets[row]]

    def char_span(self, text: str, row: int, first: int, last: int) -> Span:
        start = self.offsets[row][first][0]
        end = self.offsets[row][last - 1][1]
        return widen_to_words(text, start, end)


def _decode(
    probs: Any, labels: Sequence[str], batch: _Batch, row: int, text: str
) -> dict[str, list[tuple[int, int, float]]]:
    """Spans of one row (argmax labels over real tokens), as character spans."""
    ids = probs.argmax(-1).tolist()
    top = probs.max(-1).values.tolist()
    real = [
        i for i, ((a, b), m) in enumerate(zip(batch.offsets[row], batch.mask[row])) if m and b > a
    ]
    spans = bio_spans([labels[ids[i]] for i in real], [top[i] for i in real])
    return {
        kind: merge_touching(
            [(*batch.char_span(text, row, real[s], real[e - 1] + 1), score) for s, e, score in items], text
        )
        for kind, items in spans.items()
    }


def predict_relations(
    network: Any,
    tokenizer: Any,
    config: TaggerConfig,
    texts: Sequence[str],
    *,
    batch_size: int = 32,
    bfloat16: bool = False,
) -> list[list[Relation]]:
    """The relations the tagger reads in each sentence of ``texts``.

    Pass 1 tags signals and the unconditioned pair of every sentence; pass 2 reads the
    cause and effect of each signal found (token type 1 on the signal). A sentence
    whose signals yield nothing falls back to its unconditioned pair. Spans scoring
    below ``config.threshold`` are dropped; duplicate pairs are kept once.

    ``bfloat16`` runs the encoder's matrix products in bfloat16 (``torch.autocast``);
    the label probabilities are computed in float32 either way.
    """
    import torch

    def run(*inputs: Any) -> tuple[Any, Any]:
        if not bfloat16:
            return network(*inputs)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            sig, arg = network(*inputs)
        return sig.float(), arg.float()

    results: list[list[Relation]] = [[] for _ in texts]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    jobs: list[tuple[int, Span]] = []
    fallback: dict[int, Relation] = {}
    with torch.inference_mode():
        for chunk_start in range(0, len(order), batch_size):
            rows = order[chunk_start : chunk_start + batch_size]
            batch = _Batch(tokenizer, [texts[i] for i in rows], config.max_length)
            enc = batch.encoding
            sig, arg = run(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"] * 0)
            sig_p, arg_p = sig.softmax(-1), arg.softmax(-1)
            for r, i in enumerate(rows):
                signals = _decode(sig_p[r], SIGNAL_LABELS, batch, r, texts[i]).get("SIG", [])
                signals = [s for s in signals if s[2] >= config.threshold]
                jobs.extend((i, (s, e)) for s, e, _ in signals)
                pair = _pair(_decode(arg_p[r], ARGUMENT_LABELS, batch, r, texts[i]), None, config)
                if pair is not None and pair.cause is not None:
                    fallback[i] = pair
        jobs.sort(key=lambda job: len(texts[job[0]]))
        for chunk_start in range(0, len(jobs), batch_size):
            chunk = jobs[chunk_start : chunk_start + batch_size]
            batch = _Batch(tokenizer, [texts[i] for i, _ in chunk], config.max_length)
            enc = batch.encoding
            types = torch.tensor([batch.token_types(r, sig) for r, (_, sig) in enumerate(chunk)])
            _, arg = run(enc["input_ids"], enc["attention_mask"], types)
            arg_p = arg.softmax(-1)
            for r, (i, signal) in enumerate(chunk):
                pair = _pair(_decode(arg_p[r], ARGUMENT_LABELS, batch, r, texts[i]), signal, config)
                if pair is not None:
                    results[i].append(pair)
    for i, found in enumerate(results):
        if not any(rel.cause is not None for rel in found) and i in fallback:
            found.append(fallback[i])
        results[i] = _dedupe(found)
    return results


def _pair(
    spans: dict[str, list[tuple[int, int, float]]], signal: Span | None, config: TaggerConfig
) -> Relation | None:
    cause = _best([s for s in spans.get("CAUSE", []) if s[2] >= config.threshold])
    effect = _best([s for s in spans.get("EFFECT", []) if s[2] >= config.threshold])
    if effect is None:
        return None
    if cause is None:
        return Relation(None, effect[:2], signal, effect[2])
    if cause[0] < effect[1] and effect[0] < cause[1]:
        return None  # overlapping cause and effect: not a relation
    return Relation(cause[:2], effect[:2], signal, min(cause[2], effect[2]))


def _dedupe(relations: list[Relation]) -> list[Relation]:
    seen: dict[tuple[Span | None, Span], Relation] = {}
    for rel in sorted(relations, key=lambda r: -r.score):
        seen.setdefault((rel.cause, rel.effect), rel)
    return sorted(seen.values(), key=lambda r: (r.effect, r.cause or (-1, -1)))
