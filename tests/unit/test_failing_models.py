"""Failing models (issue 8, part 3): deadlines, hangs, wrong languages, retry-after.

The LLM extractor's own retry, timeout and repair paths are covered call by call in
``test_llm_extractor.py``; this module covers what those tests leave out: a per-query
deadline over the whole extraction (sync and async, with extractors and models that
never answer), answers in the wrong language, ``Retry-After`` honoured end to end, and
the invariant that every input document is either used or listed in
``skipped_documents`` with a reason.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from fakes import CLEAN, FixedKeyphrases, HashingEmbedder, PastTenseWords, PatternExtractor

from sarg_integrations import LLMTripleExtractor, SARGConfig, SARGPipeline
from sarg_integrations.direction import CueWordDirectionClassifier
from sarg_integrations.errors import ConfigError
from sarg_integrations.extraction.base import ExtractionOutcome
from sarg_integrations.schema import SARGResult, SourceDocument, Triple
from sarg_integrations.strategies.sarg import NO_TRIPLES

QUERY = "What does heavy rain lead to?"
STORY = [
    {"id": "s1", "text": "Heavy rain causes river flooding."},
    {"id": "s2", "text": "River flooding leads to crop damage."},
    {"id": "s3", "text": "Crop damage leads to food shortage."},
]
HANG = {"id": "stuck", "text": "HANG This document makes the extractor hang."}


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """An event hung workers wait on; set at teardown so no thread outlives the test."""
    event = threading.Event()
    yield event
    event.set()


def make_pipeline(extractor: Any, **config: Any) -> SARGPipeline:
    return SARGPipeline(
        SARGConfig(similarity_threshold=0.3, **config),
        extractor=extractor,
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("heavy rain"),
        direction_classifier=CueWordDirectionClassifier(),
        event_reader=PastTenseWords(),
    )


def assert_nothing_lost(result: SARGResult, documents: Sequence[dict[str, str]]) -> None:
    """Every input document either gave triples or is listed as skipped, with a reason."""
    used = {t.document_id for t in result.triples}
    skipped = {s.document_id for s in result.skipped_documents}
    assert {d["id"] for d in documents} <= used | skipped
    assert all(s.reason for s in result.skipped_documents)
    json.loads(result.to_json())


def chain_ends(result: SARGResult) -> list[str]:
    return [c.nodes[-1] for c in result.chains]


class HangingExtractor(PatternExtractor):
    """The test pattern extractor, except that it blocks forever on "HANG" documents."""

    def __init__(self, gate: threading.Event) -> None:
        super().__init__()
        self.gate = gate

    def extract(self, document: SourceDocument) -> list[Triple]:
        if "HANG" in document.text:
            self.gate.wait()
        return super().extract(document)


class HangingBatchExtractor(HangingExtractor):
    """Has extract_many (no deadline parameter): one hanging document blocks its batch."""

    def extract_many(self, documents: Sequence[SourceDocument]) -> list[list[Triple]]:
        return [self.extract(d) for d in documents]


class AsyncHangingExtractor(PatternExtractor):
    """Only an async per-document method; "HANG" documents never finish."""

    def __init__(self) -> None:
        super().__init__()
        self.cancelled = 0

    async def aextract(self, document: SourceDocument) -> list[Triple]:
        if "HANG" in document.text:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        return self.extract(document)


def story_model(prompt: str) -> str:
    """A well-behaved model for the STORY documents (answers from the prompt's text)."""
    for doc in STORY:
        if doc["text"] in prompt:
            cause, effect = (
                doc["text"]
                .rstrip(".")
                .split(" causes " if " causes " in doc["text"] else " leads to ")
            )
            relation = "causes" if " causes " in doc["text"] else "leads to"
            item = {
                "cause": cause,
                "relation": relation,
                "effect": effect,
                "relation_type": "causal",
                "evidence": doc["text"],
            }
            return json.dumps([item])
    return "[]"


# --------------------------------------------------------------------------- config


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), True, "2"])
def test_deadline_must_be_positive_seconds(value: Any) -> None:
    with pytest.raises(ConfigError, match="deadline_seconds=") as info:
        SARGConfig(deadline_seconds=value)
    assert info.value.field == "deadline_seconds"
    pipe = make_pipeline(PatternExtractor())
    with pytest.raises(ConfigError, match=r"deadline=.*seconds > 0"):
        pipe.run(QUERY, STORY, deadline=value)


def test_deadline_is_part_of_the_config_and_its_dict() -> None:
    config = SARGConfig(deadline_seconds=2)
    assert config.deadline_seconds == 2.0
    assert config.to_dict()["deadline_seconds"] == 2.0
    assert SARGConfig().deadline_seconds is None


# --------------------------------------------------------------------------- sync deadline


def test_hanging_sync_extractor_is_abandoned_at_the_deadline(gate: threading.Event) -> None:
    documents = [*STORY, HANG]
    pipe = make_pipeline(HangingExtractor(gate), deadline_seconds=0.5)
    start = time.perf_counter()
    result = pipe.run(QUERY, documents)
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, f"the caller waited {elapsed:.2f} s on a hung extractor"
    assert chain_ends(result)[0] == "food shortage"  # the documents done in time are used
    reasons = {s.document_id: s.reason for s in result.skipped_documents}
    assert reasons == {"stuck": "deadline of 0.5 s passed before extraction finished"}
    assert result.stats["documents_past_deadline"] == 1
    assert result.stats["deadline_seconds"] == 0.5
    assert_nothing_lost(result, documents)


def test_per_call_deadline_overrides_the_config(gate: threading.Event) -> None:
    pipe = make_pipeline(HangingExtractor(gate))  # no deadline in the config
    result = pipe.run(QUERY, [*STORY, HANG], deadline=0.3)
    assert "deadline of 0.3 s" in result.skipped_documents[0].reason


def test_nothing_extracted_in_time_falls_back_to_the_flat_context(gate: threading.Event) -> None:
    documents = [{"id": f"h{i}", "text": f"HANG number {i} causes nothing."} for i in range(3)]
    result = make_pipeline(HangingExtractor(gate)).run(QUERY, documents, deadline=0.3)
    assert result.fallback_reason == NO_TRIPLES
    # The default fallback: the most relevant documents within the word budget.
    assert result.evidence and {p.document_id for p in result.evidence} <= {"h0", "h1", "h2"}
    assert {p.selected_by for p in result.evidence} <= {"relevance", "bridge"}
    assert [s.document_id for s in result.skipped_documents] == ["h0", "h1", "h2"]
    assert result.stats["documents_past_deadline"] == 3
    assert_nothing_lost(result, documents)


def test_batch_extractor_keeps_the_batches_finished_in_time(gate: threading.Event) -> None:
    # 16 story-like documents, then the hanging one: the batches before it are kept.
    documents = [{"id": f"n{i}", "text": f"Cause{i} causes effect{i}."} for i in range(16)]
    documents += [*STORY, HANG]
    result = make_pipeline(HangingBatchExtractor(gate)).run(QUERY, documents, deadline=0.5)
    used = {t.document_id for t in result.triples}
    assert {f"n{i}" for i in range(16)} <= used
    assert {s.document_id for s in result.skipped_documents} == {"s1", "s2", "s3", "stuck"}
    assert_nothing_lost(result, documents)


def test_extractor_that_raises_under_a_deadline_is_reported() -> None:
    class Broken:
        def extract_many(self, documents: Any, *, deadline: float | None = None) -> Any:
            raise RuntimeError("backend exploded")

        def extract(self, document: SourceDocument) -> list[Triple]:
            raise AssertionError("extract_many(deadline=) is used instead")

    result = make_pipeline(Broken()).run(QUERY, STORY, deadline=1.0)
    assert [s.reason for s in result.skipped_documents] == [
        "extractor error: RuntimeError: backend exploded"
    ] * 3
    assert result.fallback_reason == NO_TRIPLES


def test_no_deadline_keeps_the_plain_path() -> None:
    extractor = PatternExtractor()
    result = make_pipeline(extractor).run(QUERY, STORY)
    assert "deadline_seconds" not in result.stats
    assert chain_ends(result)[0] == "food shortage" and extractor.calls == 3


# --------------------------------------------------------------------------- async deadline


def test_arun_cancels_async_extractions_past_the_deadline() -> None:
    extractor = AsyncHangingExtractor()
    documents = [*STORY, HANG]
    start = time.perf_counter()
    result = asyncio.run(make_pipeline(extractor).arun(QUERY, documents, deadline=0.3))
    assert time.perf_counter() - start < 1.5
    assert chain_ends(result)[0] == "food shortage"
    assert [(s.document_id, s.reason) for s in result.skipped_documents] == [
        ("stuck", "deadline of 0.3 s passed before extraction finished")
    ]
    assert extractor.cancelled == 1
    assert_nothing_lost(result, documents)


def test_arun_abandons_a_hanging_sync_extractor(gate: threading.Event) -> None:
    pipe = make_pipeline(HangingExtractor(gate), deadline_seconds=0.3)
    start = time.perf_counter()
    result = asyncio.run(pipe.arun(QUERY, [*STORY, HANG]))
    assert time.perf_counter() - start < 1.5
    assert [s.document_id for s in result.skipped_documents] == ["stuck"]


# --------------------------------------------------------------------------- LLM models


def llm_pipeline(model: Any, **kwargs: Any) -> SARGPipeline:
    kwargs.setdefault("model_identity", "fake")
    kwargs.setdefault("backoff_base", 0.01)
    return make_pipeline(LLMTripleExtractor(model, **kwargs))


@pytest.mark.parametrize("mode", ["sync-run", "async-arun"])
def test_async_model_that_never_answers_is_cut_at_the_deadline(mode: str) -> None:
    async def model(prompt: str) -> str:
        if "HANG" in prompt:
            await asyncio.sleep(3600)
        return story_model(prompt)

    pipe = llm_pipeline(model, timeout=None)
    documents = [*STORY, HANG]
    start = time.perf_counter()
    if mode == "sync-run":
        result = pipe.run(QUERY, documents, deadline=0.5)
    else:
        result = asyncio.run(pipe.arun(QUERY, documents, deadline=0.5))
    assert time.perf_counter() - start < 1.5
    assert chain_ends(result)[0] == "food shortage"
    ((doc_id, reason),) = [(s.document_id, s.reason) for s in result.skipped_documents]
    assert doc_id == "stuck"
    assert reason == "LLM extraction failed: deadline of 0.5 s passed before the model answered"
    assert_nothing_lost(result, documents)


def test_sync_model_that_hangs_is_cut_at_the_deadline(gate: threading.Event) -> None:
    def model(prompt: str) -> str:
        if "HANG" in prompt:
            gate.wait()
        return story_model(prompt)

    pipe = llm_pipeline(model, timeout=None)
    start = time.perf_counter()
    result = pipe.run(QUERY, [*STORY, HANG], deadline=0.5)
    assert time.perf_counter() - start < 1.5
    assert [s.document_id for s in result.skipped_documents] == ["stuck"]
    assert "deadline of 0.5 s" in result.skipped_documents[0].reason


def test_hanging_sync_model_with_a_call_timeout_is_retried_then_reported(
    gate: threading.Event,
) -> None:
    calls = {"n": 0}

    def model(prompt: str) -> str:
        calls["n"] += 1
        gate.wait()
        return "[]"

    start = time.perf_counter()
    (outcome,) = LLMTripleExtractor(
        model, timeout=0.1, max_retries=1, backoff_base=0.01, max_concurrency=4
    ).extract_many([SourceDocument("d1", "Heavy rain causes floods.")])
    assert time.perf_counter() - start < 1.0
    assert outcome.error == (
        "LLM extraction failed: model call failed after 2 attempt(s) "
        "(no answer within timeout=0.1 s)"
    )
    assert calls["n"] == 2


def test_answer_in_the_wrong_language_is_dropped_and_reported() -> None:
    french = json.dumps(
        [
            {
                "cause": "fortes pluies",
                "relation": "provoquent",
                "effect": "inondations",
                "relation_type": "causal",
                "evidence": "Les fortes pluies provoquent des inondations dans la vallée.",
            }
        ]
    )
    doc = SourceDocument("en", "Heavy rain causes floods in the valley.")
    (outcome,) = LLMTripleExtractor(lambda p: french, model_identity="fr").extract_many([doc])
    assert outcome.triples == []
    assert outcome.stats["dropped_ungrounded"] == 1
    assert outcome.error is not None
    assert outcome.error.startswith("all 1 triple(s) the model proposed were dropped by grounding")
    assert "fortes pluies" in outcome.error


def test_answer_in_the_document_language_is_kept() -> None:
    item = {
        "cause": "fortes pluies",
        "relation": "provoquent",
        "effect": "des inondations",
        "relation_type": "causal",
        "evidence": "Les fortes pluies provoquent des inondations.",
    }
    doc = SourceDocument("fr", "Les fortes pluies provoquent des inondations.")
    extractor = LLMTripleExtractor(lambda p: json.dumps([item]), model_identity="fr")
    (outcome,) = extractor.extract_many([doc])
    assert [(t.cause, t.effect) for t in outcome.triples] == [("fortes pluies", "des inondations")]


class RateLimited(Exception):
    status_code = 429


class Headers:
    def __init__(self, **values: str) -> None:
        self.values = values

    def get(self, name: str) -> str | None:
        return self.values.get(name)


def _retry_after_attribute() -> Exception:
    exc = RateLimited("slow down")
    exc.retry_after = 0.4  # type: ignore[attr-defined]
    return exc


def _retry_after_header() -> Exception:
    exc = RateLimited("slow down")
    exc.response = type("Response", (), {"headers": Headers(**{"retry-after": "0.4"})})()  # type: ignore[attr-defined]
    return exc


@pytest.mark.parametrize("error", [_retry_after_attribute, _retry_after_header])
def test_retry_after_is_honoured_end_to_end(error: Any) -> None:
    answers: list[Any] = [error(), CLEAN]

    async def model(prompt: str) -> str:
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    doc = SourceDocument("d1", "Heavy rain causes floods in the valley. Floods damage the crops.")
    start = time.perf_counter()
    (outcome,) = LLMTripleExtractor(model, backoff_base=0.01).extract_many([doc])
    elapsed = time.perf_counter() - start
    assert 0.4 <= elapsed < 2.0, f"waited {elapsed:.2f} s; Retry-After asked for 0.4 s"
    assert outcome.error is None and len(outcome.triples) == 2
    assert outcome.stats["rate_limited"] == 1 and outcome.stats["llm_retries"] == 1


def test_retry_after_longer_than_backoff_max_is_capped() -> None:
    extractor = LLMTripleExtractor(lambda p: "[]", backoff_base=0.01, backoff_max=0.2)
    exc = _retry_after_attribute()
    exc.retry_after = 3600  # type: ignore[attr-defined]
    assert extractor._backoff(0, exc) == pytest.approx(0.2)


def test_answer_cut_before_the_first_triple_is_repaired() -> None:
    answers = ['[{"cause": "heavy rain", "rel', CLEAN]

    def model(prompt: str) -> str:
        return answers.pop(0)

    doc = SourceDocument("d1", "Heavy rain causes floods in the valley. Floods damage the crops.")
    (outcome,) = LLMTripleExtractor(model).extract_many([doc])
    assert len(outcome.triples) == 2 and outcome.stats["parse_repairs"] == 1


def test_answer_always_cut_is_reported_with_the_fix() -> None:
    doc = SourceDocument("d1", "Heavy rain causes floods in the valley.")
    (outcome,) = LLMTripleExtractor(lambda p: '[{"cause": "he').extract_many([doc])
    assert outcome.error is not None
    assert "cut off before the first complete triple" in outcome.error
    assert "raise the model's output token limit" in outcome.error


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (42, "returned int"),
        (ValueError("invalid api key"), "not retried"),
        (KeyError("choices"), "not retried"),
    ],
)
def test_model_errors_are_reported_per_document(answer: Any, reason: str) -> None:
    def model(prompt: str) -> Any:
        if "Heavy rain" in prompt:
            if isinstance(answer, Exception):
                raise answer
            return answer
        return story_model(prompt)

    documents = [
        {"id": "bad", "text": "Heavy rain causes floods in the valley."},
        *STORY[1:],
    ]
    result = llm_pipeline(model).run("What does river flooding lead to?", documents)
    ((doc_id, text),) = [(s.document_id, s.reason) for s in result.skipped_documents]
    assert doc_id == "bad" and reason in text
    assert_nothing_lost(result, documents)


def test_transient_errors_then_success_lose_nothing() -> None:
    class Unavailable(Exception):
        status_code = 503

    failures: dict[str, int] = {}

    def model(prompt: str) -> str:
        key = prompt[-200:]
        if failures.get(key, 0) < 2:  # every call fails twice before it answers
            failures[key] = failures.get(key, 0) + 1
            raise Unavailable("service unavailable")
        return story_model(prompt)

    result = llm_pipeline(model).run(QUERY, STORY)
    assert result.skipped_documents == []
    assert result.stats["llm_retries"] == 6 and result.stats["llm_calls"] == 9
    assert chain_ends(result)[0] == "food shortage"


def test_outcome_objects_with_errors_are_kept_under_a_deadline() -> None:
    class Partial:
        def extract_many(self, documents: Any, *, deadline: float | None = None) -> Any:
            return [ExtractionOutcome(error="quota exhausted") for _ in documents]

        def extract(self, document: SourceDocument) -> list[Triple]:
            return []

    result = make_pipeline(Partial()).run(QUERY, STORY, deadline=1.0)
    assert [s.reason for s in result.skipped_documents] == ["quota exhausted"] * 3
