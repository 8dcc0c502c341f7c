"""The paper's teacher: an LLM labels queries, and distillation writes training rows.

:class:`LLMDirectionTeacher` asks any LangChain / LlamaIndex / callable LLM for the
direction; :func:`distill_direction` labels a user's own queries with it, producing a
file :func:`~sarg_integrations.direction.training.train_direction_classifier` can learn
from.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sarg_integrations.direction.base import (
    LABELS,
    BaseDirectionClassifier,
    check_queries,
    check_query,
)
from sarg_integrations.errors import ConfigError, InputError
from sarg_integrations.models.sync import SyncRunner
from sarg_integrations.schema import Direction, DirectionPrediction

__all__ = ["TEACHER_PROMPT", "LLMDirectionTeacher", "distill_direction", "parse_direction_answer"]

TEACHER_PROMPT = """\
You classify the traversal direction of a question over a cause-effect reasoning graph.
Answer with exactly one word:
- forward: the question starts from a cause and asks for its effects or consequences
  ("What does X lead to?", "What happens if X?").
- backward: the question starts from an effect and asks for its causes or reasons
  ("Why did Y happen?", "What caused Y?").
- bidirectional: the question asks how two things are connected or compares them, or is
  a multi-hop factoid question that links entities through a bridge entity
  ("What position was held by the actress who played Z?").

Question: {query}
Direction:"""

_SYNONYMS = {
    "forward": "forward",
    "forwards": "forward",
    "cause->effect": "forward",
    "cause→effect": "forward",
    "backward": "backward",
    "backwards": "backward",
    "effect->cause": "backward",
    "effect→cause": "backward",
    "bidirectional": "bidirectional",
    "bi-directional": "bidirectional",
    "bidirectionnal": "bidirectional",
    "both": "bidirectional",
    "both directions": "bidirectional",
}
_WORD = re.compile(
    r"bi-?directional|backwards?|forwards?|both directions"
    r"|cause\s*(?:->|→)\s*effect|effect\s*(?:->|→)\s*cause",
    re.I,
)
_KEYED = re.compile(
    r"\b(?:direction|label|answer|class|classification)\b\W{0,4}\s*[:=]?\s*[\"'*`]*\s*("
    + _WORD.pattern
    + r")",
    re.I,
)


def parse_direction_answer(text: Any) -> Direction | None:
    """Read a direction out of an LLM's answer, however messy.

    Accepts JSON (``{"direction": "backward"}``, ``{"label": ...}``, ``"forward"``),
    keyed text (``direction: forward``, ``Answer: **Backward**``), a bare word with
    punctuation (``Backward.``) or a sentence that names exactly one direction.
    ``<think>…</think>`` blocks are ignored. Returns ``None`` when no single direction
    can be read.

    Example:
        >>> [parse_direction_answer(a).value for a in
        ...  ["Backward.", "direction: forward", '{"direction": "bidirectional"}']]
        ['backward', 'forward', 'bidirectional']
    """
    if text is None:
        return None
    if isinstance(text, Mapping):
        for key in ("direction", "label", "answer", "class"):
            if key in text:
                return parse_direction_answer(str(text[key]))
        return None
    s = re.sub(r"<(think|thinking|reasoning)>.*?</\1>", " ", str(text), flags=re.S | re.I).strip()
    if not s:
        return None
    fenced = re.search(r"```(?:json)?\s*(.*?)```", s, flags=re.S)
    candidate = fenced.group(1) if fenced else s
    brace = re.search(r"\{.*\}", candidate, flags=re.S)
    for blob in (candidate.strip(), brace.group(0) if brace else None):
        if not blob:
            continue
        try:
            value = json.loads(blob)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, (Mapping, str)):
            found = parse_direction_answer(value) if isinstance(value, Mapping) else _norm(value)
            if found is not None:
                return found
    keyed = _KEYED.search(s)
    if keyed:
        return _norm(keyed.group(1))
    first_line = s.lstrip(" \t\n*`'\"#>-").splitlines()[0]
    head = _WORD.match(first_line)
    if head and len({_norm(m.group(0)) for m in _WORD.finditer(first_line)}) == 1:
        return _norm(head.group(0))
    found = {_norm(m.group(0)) for m in _WORD.finditer(s)}
    found.discard(None)
    if len(found) == 1:
        return found.pop()
    return None


def _norm(word: str) -> Direction | None:
    key = (
        re.sub(r"\s+", " ", word.strip().strip(".!*`'\"").lower())
        .replace(" ->", "->")
        .replace("-> ", "->")
    )
    key = key.replace(" →", "→").replace("→ ", "→")
    label = _SYNONYMS.get(key)
    return Direction(label) if label else None


class LLMDirectionTeacher(BaseDirectionClassifier):
    """The paper's teacher: asks an LLM for each query's direction.

    Args:
        llm: A LangChain chat model / LLM, a LlamaIndex ``LLM``, a callable
            ``str -> str`` (sync or async) or a completion model.
        prompt: The prompt with a ``{query}`` slot (default :data:`TEACHER_PROMPT`).
        max_concurrency: Calls in flight for batch prediction.
        default: The direction given when the answer names no single direction.

    Example:
        >>> teacher = LLMDirectionTeacher(lambda prompt: "Direction: Backward.")
        >>> teacher.predict(["Why did the bridge fail?"])
        ['backward']
    """

    method = "llm-teacher"

    def __init__(
        self,
        llm: Any,
        *,
        prompt: str = "",
        max_concurrency: int = 4,
        default: Direction | str = Direction.BIDIRECTIONAL,
    ) -> None:
        from sarg_integrations.models.completion import as_completion_model

        prompt = prompt or TEACHER_PROMPT
        if "{query}" not in prompt:
            msg = "prompt must contain a {query} slot where the question goes"
            raise ConfigError(msg, field="prompt", value=prompt[:80])
        if (
            isinstance(max_concurrency, bool)
            or not isinstance(max_concurrency, int)
            or max_concurrency < 1
        ):
            msg = f"max_concurrency={max_concurrency!r} must be an integer >= 1"
            raise ConfigError(msg, field="max_concurrency", value=max_concurrency)
        self.model = as_completion_model(llm, structured_output=False, max_workers=max_concurrency)
        self.prompt = prompt
        self.max_concurrency = max_concurrency
        self.default = Direction.parse(default)
        self._runner = SyncRunner()

    async def _ask(self, query: str, semaphore: asyncio.Semaphore) -> DirectionPrediction:
        from sarg_integrations.models.completion import CompletionRequest

        request = CompletionRequest(messages=(("user", self.prompt.replace("{query}", query)),))
        async with semaphore:
            completion = await self.model.acomplete(request)
        answer = completion.data if completion.data is not None else completion.text
        direction = parse_direction_answer(answer)
        raw = str(answer)[:120]
        if direction is None:
            return DirectionPrediction(
                direction=self.default,
                confidence=0.0,
                scores={d.value: 0.0 for d in Direction},
                method=self.method,
                rationale=f"unparseable teacher answer {raw!r}; default {self.default.value}",
            )
        return DirectionPrediction(
            direction=direction,
            confidence=1.0,
            scores={d.value: float(d is direction) for d in Direction},
            method=self.method,
            rationale=f"teacher answered {raw!r}",
        )

    async def apredict_batch(self, queries: Sequence[str]) -> list[DirectionPrediction]:
        """Ask the LLM about every query, ``max_concurrency`` at a time."""
        texts = check_queries(queries, normalize=True)
        semaphore = asyncio.Semaphore(self.max_concurrency)
        return list(await asyncio.gather(*(self._ask(q, semaphore) for q in texts)))

    def predict_batch(self, queries: Sequence[str]) -> list[DirectionPrediction]:
        """Synchronous :meth:`apredict_batch`."""
        return self._runner.run(self.apredict_batch(queries))

    def predict_direction(
        self, query: str, query_embedding: Any | None = None
    ) -> DirectionPrediction:
        """Ask the LLM for one query's direction (the embedding is ignored)."""
        text, _ = check_query(query)
        return self.predict_batch([text])[0]

    def predict(self, queries: Sequence[str]) -> list[str]:
        """Return each query's label (concurrent calls)."""
        return [p.direction.value for p in self.predict_batch(queries)]

    def predict_proba(self, queries: Sequence[str]) -> list[dict[str, float]]:
        """Return one-hot probabilities from the teacher's answers."""
        return [dict(p.scores) for p in self.predict_batch(queries)]


def distill_direction(
    teacher: BaseDirectionClassifier | Any,
    queries: Sequence[str],
    out: str | Path,
    *,
    seed: int = 13,
) -> dict[str, Any]:
    """Label ``queries`` with the teacher and write training rows to ``out`` (JSONL).

    Rows get a stratified 80/10/10 ``split``, so the file feeds
    ``sarg train-direction --data OUT`` directly. Answers the teacher's LLM left
    unparseable are left out and counted.

    Args:
        teacher: An :class:`LLMDirectionTeacher` or an LLM to wrap in one.
        queries: The queries to label.
        out: The JSONL file to write.
        seed: Seed of the split assignment.

    Returns:
        Counts: ``labeled``, ``unparseable``, and per label.
    """
    if not isinstance(teacher, LLMDirectionTeacher):
        teacher = LLMDirectionTeacher(teacher)
    texts = check_queries(queries, normalize=True)
    predictions = teacher.predict_batch(texts)
    rows = []
    skipped = 0
    identity = getattr(teacher.model, "identity", "llm")
    for query, p in zip(texts, predictions):
        if p.confidence == 0.0 and p.rationale.startswith("unparseable"):
            skipped += 1
            continue
        rows.append({"query": query, "label": p.direction.value, "source": f"teacher:{identity}"})
    rng = random.Random(seed)
    for label in LABELS:
        group = [r for r in rows if r["label"] == label]
        rng.shuffle(group)
        n = len(group)
        n_eval = n // 10 if n >= 10 else 0
        for i, row in enumerate(group):
            row["split"] = "test" if i < n_eval else "validation" if i < 2 * n_eval else "train"
    target = Path(out)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:
        msg = f"cannot write --out {str(target)!r}: {exc}"
        raise InputError(msg, argument="out", value=str(target)) from None
    counts: dict[str, Any] = {"labeled": len(rows), "unparseable": skipped}
    counts.update({label: sum(r["label"] == label for r in rows) for label in LABELS})
    return counts
