"""The union's merge of the tagger's and the rules' triples (issue 16, item 2 follow-up).

Each rule triple was compared with every kept triple of its document: quadratic in the
triples of one document (7,578 tagger triples at 0.5 MB, ~75,000 at 5 MB). Now only the
triples of the same or an overlapping sentence span are compared, with the same result.
"""

from __future__ import annotations

import random

from sarg_integrations.extraction import union
from sarg_integrations.extraction.union import UnionExtractor, same_relation
from sarg_integrations.schema import SourceDocument, Triple

WORDS = ["rain", "flood", "crop", "loss", "price", "rise", "heat", "drought"]


def _triples(rng: random.Random, n: int, text_length: int) -> list[Triple]:
    out = []
    for _ in range(n):
        start = rng.randrange(0, text_length)
        span = None if rng.random() < 0.1 else (start, start + rng.randrange(0, 300))
        sentence = f"s{start // 50}" if span is None else f"s{start}"
        out.append(
            Triple(
                " ".join(rng.sample(WORDS, 2)),
                "causes",
                " ".join(rng.sample(WORDS, 2)),
                document_id="d",
                sentence=sentence,
                sentence_span=span,
            )
        )
    return out


def _naive(kept: list[Triple], extra: list[Triple]) -> list[Triple]:
    out = list(kept)
    for triple in extra:
        if not any(same_relation(triple, k) for k in out):
            out.append(triple)
    return out


def test_merge_keeps_what_comparing_with_every_triple_kept() -> None:
    rng = random.Random(16)
    for length in (500, 5_000, 50_000):
        kept, extra = _triples(rng, 300, length), _triples(rng, 300, length)
        merged = list(kept)
        union._merge(merged, extra)
        assert merged == _naive(kept, extra)


def test_merge_compares_only_nearby_triples(monkeypatch) -> None:
    calls = 0
    real = union.same_relation

    def counting(a: Triple, b: Triple) -> bool:
        nonlocal calls
        calls += 1
        return real(a, b)

    monkeypatch.setattr(union, "same_relation", counting)
    rng = random.Random(2)
    # one long document: 4,000 triples from each extractor over 5 MB of text
    kept, extra = _triples(rng, 4_000, 5_000_000), _triples(rng, 4_000, 5_000_000)
    union._merge(list(kept), extra)
    assert calls < 50_000  # was up to 4,000 x 4,000+ = 16 million


def test_union_extract_many_still_merges() -> None:
    class Fixed:
        def __init__(self, triples: list[Triple]) -> None:
            self.triples = triples

        def extract(self, document: SourceDocument) -> list[Triple]:
            return list(self.triples)

    a = Triple(
        "heavy rain", "causes", "floods", document_id="d", sentence="S", sentence_span=(0, 9)
    )
    b = Triple(
        "rain", "leads to", "the floods", document_id="d", sentence="S", sentence_span=(0, 9)
    )
    c = Triple("floods", "cause", "losses", document_id="d", sentence="T", sentence_span=(10, 20))
    out = UnionExtractor(Fixed([a]), Fixed([b, c])).extract(SourceDocument("d", "x" * 20))
    assert out == [a, c]


def test_one_shared_word_does_not_make_the_same_relation() -> None:
    sentence = "Ratners raised its price after another concern said it would outbid the offer."
    tagger = Triple("Ratners Group PLC", "raised", "price", document_id="d", sentence=sentence,
                    sentence_span=(0, len(sentence)))
    rules = Triple("concern prepared to outbid Ratners's offer", "precedes",
                   "Ratners raised price", document_id="d", sentence=sentence,
                   sentence_span=(0, len(sentence)))
    assert not same_relation(tagger, rules)  # they share only "Ratners" on the cause side
    shorter = Triple("Ratners Group", "lifted", "its price", document_id="d", sentence=sentence,
                     sentence_span=(0, len(sentence)))
    assert same_relation(tagger, shorter)  # "the" and "its" name nothing; the rest is shared
