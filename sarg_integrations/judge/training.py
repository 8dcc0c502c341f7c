"""Training the evidence judge: LoRA over the packaged MiniLM, with ``peft``.

The training data are causal stories: a question, the retrieved documents, and the ids
of the documents whose chain answers it (the same JSON Lines the story benchmark reads,
``benchmarks/data/causal_stories*.jsonl``)::

    {"id": "clinic", "question": "Why was the clinic overwhelmed?",
     "chain": ["d4", "d1", "d3"],
     "documents": [{"id": "d1", "text": "…"}, …]}

Each (question, document) pair is one example, labelled 1 when the document is in the
chain; a judge reading sets (``reads="set"``) takes each story as one example, its
documents in a new random order each epoch, one label per document. A share of the
stories is held out (by story) to pick the epoch: the one whose judge alone, keeping the
documents it scores at 0.5 or more, returns exactly the chain for the most held-out
stories.

Example (a few steps on a tiny file; the test suite runs this)::

    stories = read_story_files(["my_stories.jsonl"])
    report = train_judge(stories, out_dir="my-judge", epochs=1, max_steps=4)
    judge = LearnedEvidenceJudge.load("my-judge")
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sarg_integrations.errors import ConfigError, InputError, MissingDependencyError
from sarg_integrations.extraction.tagger_training import save_model_folder, warmup_then_decay
from sarg_integrations.judge.model import (
    CONFIG_FILE,
    HEADS,
    READS,
    WEIGHTS_FILE,
    JudgeConfig,
    judge_network_class,
    pack_set,
    score_texts,
    set_batch,
)

__all__ = ["JudgeStory", "JudgeTrainingReport", "read_story_files", "train_judge"]


@dataclass(frozen=True)
class JudgeStory:
    """One training story: the question, its documents (id → text) and the chain's ids."""

    question: str
    documents: dict[str, str]
    chain: frozenset[str]
    source: str = ""


@dataclass
class JudgeTrainingReport:
    """What a training run did and measured (also written into ``judge.json``)."""

    stories: int
    held_out: int
    examples: int
    steps: int
    seconds: float
    best_epoch: int
    held_out_scores: dict[str, float] = field(default_factory=dict)
    history: list[dict[str, float]] = field(default_factory=list)


def read_story_files(paths: Iterable[str | Path]) -> list[JudgeStory]:
    """Read causal stories from JSON Lines files.

    Raises:
        InputError: A file is missing, empty or unreadable, or a line is not a story
            (not JSON, no question, no documents, a chain id naming no document); the
            message names the file and the line.
    """
    stories: list[JudgeStory] = []
    for path in map(Path, paths):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            msg = f"the story file {str(path)!r} does not exist; pass a JSON Lines file of stories"
            raise InputError(msg) from None
        except (OSError, UnicodeDecodeError) as exc:
            msg = f"the story file {str(path)!r} cannot be read as UTF-8 text: {exc}"
            raise InputError(msg) from None
        found = 0
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{str(path)!r} line {number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                msg = f"{where} is not JSON: {exc}"
                raise InputError(msg) from None
            stories.append(_story(row, where))
            found += 1
        if not found:
            msg = f"the story file {str(path)!r} holds no story; each line is one JSON story"
            raise InputError(msg)
    return stories


def _story(row: Any, where: str) -> JudgeStory:
    def bad(why: str) -> InputError:
        return InputError(
            f"{where} is not a causal story: {why} (expected "
            '{"question": str, "chain": [ids], "documents": [{"id": str, "text": str}]})'
        )

    if not isinstance(row, dict):
        why = f"a {type(row).__name__}, not an object"
        raise bad(why)
    question, chain, documents = row.get("question"), row.get("chain"), row.get("documents")
    if not isinstance(question, str) or not question.strip():
        why = f"question={question!r}"
        raise bad(why)
    if not isinstance(documents, list) or not documents:
        why = f"documents={documents!r}"
        raise bad(why)
    texts: dict[str, str] = {}
    for doc in documents:
        if (
            not isinstance(doc, dict)
            or not isinstance(doc.get("id"), str)
            or not isinstance(doc.get("text"), str)
        ):
            why = f"the document {doc!r} lacks a string id or text"
            raise bad(why)
        texts[doc["id"]] = doc["text"]
    if not isinstance(chain, list) or not chain or any(c not in texts for c in chain):
        why = f"chain={chain!r} names no document or one that is not there"
        raise bad(why)
    return JudgeStory(question, texts, frozenset(chain), where)


def _split(
    stories: Sequence[JudgeStory], fraction: float, seed: int
) -> tuple[list[JudgeStory], list[JudgeStory]]:
    order = list(range(len(stories)))
    random.Random(seed).shuffle(order)
    cut = round(len(stories) * fraction)
    held = set(order[:cut])
    return [s for i, s in enumerate(stories) if i not in held], [
        s for i, s in enumerate(stories) if i in held
    ]


def _held_out_scores(
    network: Any, tokenizer: Any, config: JudgeConfig, stories: Sequence[JudgeStory]
) -> dict[str, float]:
    exact = tp = fp = fn = 0
    for story in stories:
        ids = list(story.documents)
        texts = [story.documents[i] for i in ids]
        scores = score_texts(network, tokenizer, config, story.question, texts)
        kept = {i for i, s in zip(ids, scores) if s >= 0.5}
        exact += kept == story.chain
        tp += len(kept & story.chain)
        fp += len(kept - story.chain)
        fn += len(story.chain - kept)
    return {
        "stories_exact": round(exact / max(1, len(stories)), 4),
        "document_precision": round(tp / max(1, tp + fp), 4),
        "document_recall": round(tp / max(1, tp + fn), 4),
    }


def train_judge(
    stories: Sequence[JudgeStory],
    out_dir: str | Path,
    *,
    epochs: int = 4,
    rank: int = 8,
    alpha: float = 16.0,
    learning_rate: float = 5e-4,
    batch_size: int | None = None,
    max_length: int | None = None,
    reads: str = "document",
    document_tokens: int = 110,
    documents_per_window: int = 8,
    held_out_fraction: float = 0.1,
    seed: int = 0,
    max_steps: int | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    info: dict[str, Any] | None = None,
) -> JudgeTrainingReport:
    """Fine-tune a judge on ``stories``; save ``judge.json`` + ``judge.safetensors`` to ``out_dir``.

    ``reads`` picks what the judge reads with the question: one ``"document"`` (pairs;
    by default batches of 16 pairs, 160 word pieces) or the whole ``"set"`` of
    retrieved documents (by default batches of 8 stories, 512 word pieces, each
    document cut to ``document_tokens``, ``documents_per_window`` documents read
    together at most).

    Raises:
        ConfigError: A setting out of range.
        InputError: No story, or no story with both a chain document and another one.
        MissingDependencyError: ``peft`` (the ``train`` extra) is absent.
    """
    if reads not in READS:
        msg = f"reads={reads!r} must be one of {READS}"
        raise ConfigError(msg)
    by_set = reads == "set"
    if batch_size is None:
        batch_size = 8 if by_set else 16
    if max_length is None:
        max_length = 512 if by_set else 160
    if epochs < 1 or batch_size < 1 or rank < 1 or not 0 <= held_out_fraction < 1:
        msg = (
            f"epochs={epochs}, batch_size={batch_size}, rank={rank} must be >= 1 and "
            f"held_out_fraction={held_out_fraction} in [0, 1)"
        )
        raise ConfigError(msg)
    config = JudgeConfig(
        rank=rank,
        alpha=alpha,
        max_length=max_length,
        info=info,
        reads=reads,
        document_tokens=document_tokens,
        documents_per_window=documents_per_window,
    )
    if not config.in_range():
        msg = (
            f"max_length={max_length} must be in [8, 512], alpha={alpha} finite and, reading "
            f"sets, document_tokens={document_tokens} in [1, max_length - 51] (the question "
            f"takes up to 51) and documents_per_window={documents_per_window} >= 1"
        )
        raise ConfigError(msg)
    if not any(len(s.documents) > len(s.chain) for s in stories):
        msg = "the training stories hold no document outside a chain; nothing to tell apart"
        raise InputError(msg)
    try:
        import torch
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise MissingDependencyError(
            "peft", extra="train", feature="Training the evidence judge"
        ) from exc
    from tqdm.auto import tqdm

    from sarg_integrations.extraction import tagger_model  # looked up at call time

    say = log or (lambda _m: None)
    torch.manual_seed(seed)
    train, held = (
        _split(stories, held_out_fraction, seed) if held_out_fraction else (list(stories), [])
    )
    examples: list[Any] = (
        list(train)
        if by_set
        else [
            (story.question, text, float(doc_id in story.chain))
            for story in train
            for doc_id, text in story.documents.items()
        ]
    )
    encoder, tokenizer = tagger_model.load_base_encoder()
    encoder = get_peft_model(
        encoder,
        LoraConfig(
            r=rank,
            lora_alpha=alpha,
            target_modules=tagger_model.lora_targets(0),
            lora_dropout=0.1,
            bias="none",
        ),
    )
    for name, param in encoder.named_parameters():
        if "LayerNorm" in name and "embeddings" not in name:
            param.requires_grad = True
    network = judge_network_class()(encoder, 384)
    rng = random.Random(seed)
    steps_per_epoch = (len(examples) + batch_size - 1) // batch_size
    total = min(max_steps or steps_per_epoch * epochs, steps_per_epoch * epochs)
    params = [p for p in network.parameters() if p.requires_grad]
    optimizer, scheduler = warmup_then_decay(params, learning_rate, total)
    history: list[dict[str, float]] = []
    best: tuple[float, int, dict[str, Any]] | None = None
    step, started = 0, time.perf_counter()
    bar = tqdm(total=total, desc="training the evidence judge", unit="step", disable=not progress)
    for epoch in range(1, epochs + 1):
        network.train()
        rng.shuffle(examples)
        running = 0.0
        for start in range(0, len(examples), batch_size):
            if step >= total:
                break
            chunk = examples[start : start + batch_size]
            if by_set:
                loss = _set_loss(network, tokenizer, config, chunk, rng)
            else:
                batch = tokenizer(
                    [q for q, _, _ in chunk],
                    [t for _, t, _ in chunk],
                    padding=True,
                    truncation="longest_first",
                    max_length=max_length,
                    return_tensors="pt",
                )
                logits = network(
                    batch["input_ids"], batch["attention_mask"], batch["token_type_ids"]
                )
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    logits, torch.tensor([y for _, _, y in chunk])
                )
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            step += 1
            running = 0.9 * running + 0.1 * loss.item() if running else loss.item()
            bar.update(1)
            bar.set_postfix(epoch=epoch, loss=f"{running:.3f}")
        network.eval()
        record: dict[str, float] = {"epoch": epoch, "step": step, "loss": round(running, 4)}
        if held:
            record.update(_held_out_scores(network, tokenizer, config, held))
        history.append(record)
        say(f"epoch {epoch}: {record}")
        score = record.get("stories_exact", float(epoch))
        if best is None or score > best[0]:
            best = (score, epoch, tagger_model.adapter_tensors(network, heads=HEADS))
        if step >= total:
            break
    bar.close()
    assert best is not None
    _, best_epoch, tensors = best
    report = JudgeTrainingReport(
        stories=len(train),
        held_out=len(held),
        examples=len(examples),
        steps=step,
        seconds=round(time.perf_counter() - started, 1),
        best_epoch=best_epoch,
        held_out_scores={
            k: v for k, v in history[best_epoch - 1].items() if k not in ("epoch", "step", "loss")
        },
        history=history,
    )
    _save(Path(out_dir), config, tensors, report)
    return report


def _set_loss(
    network: Any,
    tokenizer: Any,
    config: JudgeConfig,
    stories: Sequence[JudgeStory],
    rng: random.Random,
) -> Any:
    """Mean binary cross-entropy over the documents of ``stories``, each read as a set."""
    import torch

    windows, labels = [], []
    for story in stories:
        ids = list(story.documents)
        rng.shuffle(ids)  # a new order each time: the judge must not learn positions
        for window in pack_set(
            tokenizer,
            story.question,
            [story.documents[i] for i in ids],
            config.max_length,
            config.document_tokens,
            config.documents_per_window,
        ):
            windows.append(window)
            labels.append([float(ids[index] in story.chain) for index, _, _ in window.spans])
    logits = network(*set_batch(windows))
    target = torch.zeros(logits.shape)
    mask = torch.zeros(logits.shape)
    for row, values in enumerate(labels):
        target[row, : len(values)] = torch.tensor(values)
        mask[row, : len(values)] = 1.0
    losses = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
    return (losses * mask).sum() / mask.sum().clamp(min=1.0)


def _save(
    out: Path, config: JudgeConfig, tensors: dict[str, Any], report: JudgeTrainingReport
) -> None:
    data = config.to_json()
    data["info"] = {**data["info"], "training": asdict(report)}
    save_model_folder(out, data, tensors, CONFIG_FILE, WEIGHTS_FILE, "evidence judge")
