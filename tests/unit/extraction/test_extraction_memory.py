"""Issue 16, item 2: the offline extractors bound what they hold at once, by construction.

The rule extractor parsed 200,000-character chunks 64 at a time (~3 GB per MB of text);
the tagger read every sentence of every document in one go. Fakes stand in for spaCy
and the encoder; ``benchmarks/bench_memory.py`` measures the real peak RSS.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from sarg_integrations.extraction import rules, tagger, tagger_inference
from sarg_integrations.extraction.rules import PARSE_CHARS_IN_FLIGHT, RuleBasedExtractor
from sarg_integrations.extraction.tagger import TaggerExtractor
from sarg_integrations.extraction.tagger_inference import Relation
from sarg_integrations.schema import SourceDocument


class _Doc:
    def __init__(self, text: str) -> None:
        self.text = text
        self.sents: list[Any] = []  # the rules find nothing: only the batching is under test

    def char_span(self, *_: Any, **__: Any) -> None:
        return None  # no tokens: the tagger's negation check finds none

    def __iter__(self) -> Any:
        return iter(())  # no tokens: no ", and" clause either


class _RecordingNLP:
    """A spaCy stand-in that records the batch size and the texts it is given."""

    pipe_names = ["tok2vec", "parser"]
    max_length = 1_000_000

    def __init__(self) -> None:
        self.calls: list[tuple[int, list[int]]] = []

    def pipe(self, texts: Iterable[str], batch_size: int = 64, **_: Any) -> Iterator[_Doc]:
        sizes: list[int] = []
        self.calls.append((batch_size, sizes))
        for text in texts:
            sizes.append(len(text))
            yield _Doc(text)


def _big_text(chars: int) -> str:
    sentence = "Heavy rain over the hills caused the river to flood the lower town. "
    return sentence * (chars // len(sentence) + 1)


@pytest.mark.parametrize("chunk", [None, 200_000])
def test_rules_parse_a_bounded_number_of_characters_at_once(chunk: int | None) -> None:
    nlp = _RecordingNLP()
    options = {} if chunk is None else {"max_chars_per_document": chunk}
    extractor = RuleBasedExtractor(nlp=nlp, max_sentence_chars=None, **options)
    extractor.extract_many([SourceDocument("big", _big_text(1_500_000))])
    [(batch_size, sizes)] = nlp.calls
    assert sum(sizes) >= 1_500_000  # all of it was parsed
    assert max(sizes) <= (chunk or rules.DEFAULT_CHUNK_CHARS)
    # What spaCy holds at once: one batch of chunks.
    assert batch_size * max(sizes) <= max(PARSE_CHARS_IN_FLIGHT, max(sizes))


def test_rules_still_batch_many_small_documents() -> None:
    nlp = _RecordingNLP()
    docs = [SourceDocument(f"d{i}", "Rain causes floods.") for i in range(100)]
    RuleBasedExtractor(nlp=nlp).extract_many(docs)
    assert nlp.calls[0][0] == 64


# ----------------------------------------------------------------------------- tagger

_CAUSES = re.compile(r"^(?P<cause>\w+) causes (?P<effect>\w+)\.$")
_AS_A_RESULT = re.compile(r"^As a result, (?P<effect>\w+) \w+\.$")


def _fake_relations(texts: list[str]) -> list[list[Relation]]:
    out: list[list[Relation]] = []
    for text in texts:
        if m := _CAUSES.match(text):
            out.append([Relation(m.span("cause"), m.span("effect"), (m.end("cause") + 1, m.end("cause") + 7), 0.9)])
        elif m := _AS_A_RESULT.match(text):
            out.append([Relation(None, m.span("effect"), (0, 11), 0.9)])
        else:
            out.append([])
    return out


@pytest.fixture
def fake_tagger(monkeypatch: pytest.MonkeyPatch) -> tuple[TaggerExtractor, list[int], _RecordingNLP]:
    """A TaggerExtractor whose encoder and parser are fakes; records the sentences per call."""
    window_sizes: list[int] = []

    def predict(network: Any, tokenizer: Any, config: Any, texts: list[str], **_: Any) -> Any:
        window_sizes.append(len(texts))
        return _fake_relations(list(texts))

    monkeypatch.setattr(tagger_inference, "predict_relations", predict)
    monkeypatch.setattr(TaggerExtractor, "network", property(lambda self: (None, None, None)))
    monkeypatch.setattr(tagger, "_name", lambda doc, span: doc.text[span[0] : span[1]])
    monkeypatch.setattr(tagger, "_conjunct_subject", lambda doc, relation: None)
    nlp = _RecordingNLP()
    return TaggerExtractor(nlp=nlp), window_sizes, nlp


def test_tagger_reads_sentences_in_bounded_windows(fake_tagger: Any) -> None:
    extractor, window_sizes, nlp = fake_tagger
    text = " ".join(f"Rain{i} causes flood{i}." for i in range(2_000))
    triples = extractor.extract(SourceDocument("big", text))
    assert len(triples) == 2_000
    assert sum(window_sizes) == 2_000
    assert max(window_sizes) <= tagger.SENTENCE_WINDOW
    assert max(len(sizes) for _, sizes in nlp.calls) <= tagger.SENTENCE_WINDOW + 1


def test_cross_sentence_links_survive_a_window_boundary(
    fake_tagger: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    extractor, _, _ = fake_tagger
    text = "Rain causes flood. As a result, crops failed. Sun causes heat. As a result, ice melted."
    whole = extractor.extract(SourceDocument("d", text))
    monkeypatch.setattr(tagger, "SENTENCE_WINDOW", 1)  # every boundary is a window boundary
    windowed = extractor.extract(SourceDocument("d", text))
    assert whole == windowed
    assert [(t.cause, t.effect) for t in windowed] == [
        ("Rain", "flood"), ("flood", "crops"), ("Sun", "heat"), ("heat", "ice")
    ]
