"""Bad documents (issue 8, part 1): each gets a defined outcome, the rest still works.

Outcomes: a document the pipeline cannot use is *skipped with a reason* in
``result.skipped_documents``; input that is not a document at all is an ``InputError``
at the API boundary. Every run here mixes the bad document(s) with a three-hop causal
story and checks the story's chain is still found and the result serialises to JSON.
The fast cases use the fakes; the ``slow`` ones use the real spaCy rule extractor.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from fakes import FixedKeyphrases, HashingEmbedder, PatternExtractor

from sarg_integrations import CueWordDirectionClassifier, SARGConfig, SARGPipeline, SourceDocument
from sarg_integrations.errors import InputError

QUERY = "What does heavy rain lead to?"
STORY = [
    {"id": "s1", "text": "Heavy rain causes river flooding."},
    {"id": "s2", "text": "River flooding leads to crop damage."},
    {"id": "s3", "text": "Crop damage causes food shortage."},
]
EMPTY = "empty or whitespace-only text"
NO_TRIPLES = "no reasoning-schema triples found"


def make(extractor=None) -> SARGPipeline:
    return SARGPipeline(
        SARGConfig(similarity_threshold=0.6, direction="forward"),
        extractor=extractor or PatternExtractor(),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("heavy rain"),
        direction_classifier=CueWordDirectionClassifier(),
    )


def run_with(*bad, extractor=None):
    """Run the story plus ``bad`` documents; check the rest of the result is valid."""
    docs = [*STORY, *bad]
    result = make(extractor).run(QUERY, docs)
    data = json.loads(result.to_json())  # always serialisable
    assert data["document_ids"] == [d["id"] for d in docs]
    assert result.fallback_reason is None
    assert "food shortage" in [n.casefold() for n in result.chains[0].nodes]
    return result


def reasons(result) -> dict[str, str]:
    return {s.document_id: s.reason for s in result.skipped_documents}


# ----------------------------------------------------------------- skipped with a reason


@pytest.mark.parametrize("text", ["", " ", "\n\t \r\n", "\u3000\u00a0 \u2003"])
def test_empty_and_whitespace_only_are_skipped(text):
    assert reasons(run_with({"id": "bad", "text": text}))["bad"] == EMPTY


def test_one_megabyte_single_sentence_is_skipped_without_triples():
    text = " ".join(["word"] * 200_000) + "."  # 1 MB, no sentence end before the last
    assert len(text) >= 1_000_000
    assert reasons(run_with({"id": "big", "text": text}))["big"] == NO_TRIPLES


def test_ten_thousand_tiny_documents():
    tiny = [{"id": f"t{i}", "text": "ok."} for i in range(10_000)]
    start = time.perf_counter()
    result = run_with(*tiny)
    assert time.perf_counter() - start < 30
    skipped = reasons(result)
    assert len(skipped) == 10_000 and set(skipped.values()) == {NO_TRIPLES}


def test_binary_garbage_decoded_leniently_is_skipped():
    raw = os.urandom(4096) + bytes(range(256))
    garbage = [
        raw.decode("latin-1"),
        raw.decode("utf-8", errors="replace"),
        raw.decode("utf-8", errors="surrogateescape"),  # lone surrogates
    ]
    result = run_with(*({"id": f"g{i}", "text": t} for i, t in enumerate(garbage)))
    assert set(reasons(result)) >= {"g0", "g1", "g2"}


def test_nul_bytes_inside_a_causal_sentence_are_kept_as_text():
    result = run_with({"id": "nul", "text": "Food shortage\x00 causes unrest.\x00\x00"})
    assert "nul" not in reasons(result)
    assert any(t.document_id == "nul" for t in result.triples)


def test_mixed_scripts_rtl_and_emoji():
    docs = [
        {"id": "ar", "text": "المطر causes الفيضان. ‏שלום עולם‏"},
        {"id": "zh", "text": "大雨 causes 洪水."},
        {"id": "emoji", "text": "🌧️ causes 🌊🌊. 👍🏽‍🔥 \u202eevil\u202c"},
    ]
    result = run_with(*docs)
    assert {t.document_id for t in result.triples} >= {"ar", "zh", "emoji"}
    assert "🌊🌊" in {t.effect for t in result.triples}


def test_duplicated_text_under_different_ids_is_accepted_and_cited_once_each():
    result = run_with({"id": "copy", "text": STORY[0]["text"]})
    first_hop = result.chains[0].hops[0]
    assert set(first_hop.document_ids) == {"s1", "copy"}
    ids = [p.document_id for p in result.evidence]
    assert len(ids) == len(set(ids))


def test_metadata_that_is_not_json_serialisable():
    bad = {
        "id": "meta",
        "text": "Food shortage causes unrest.",
        "metadata": {"obj": object(), "set": {1, 2}, "bytes": b"\x00"},
        "extra": 1j,
    }
    result = run_with(bad)
    assert "meta" not in reasons(result)


def _nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth):
        value = {"down": value}
    return value


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_hostile_metadata_still_serialises():
    # Issue 16 item 8: each of these made to_json() raise (RecursionError, ValueError,
    # RuntimeError) although it is documented never to fail.
    cyclic: dict = {"name": "loop"}
    cyclic["self"] = cyclic
    bad = {
        "id": "meta",
        "text": "Food shortage causes unrest.",
        "metadata": {
            "deep": _nested(5000),
            "cyclic": cyclic,
            "repr": _BadRepr(),
            "huge": 10**5000,
            "surrogate": "caf\udce9",
        },
    }
    result = run_with(bad)
    meta = json.loads(result.to_json())["evidence"][-1]["metadata"]
    assert meta["cyclic"] == {"name": "loop", "self": "<cycle>"}
    assert meta["repr"] == "<unrepresentable _BadRepr>"
    assert meta["huge"].startswith("<int of ")
    assert meta["surrogate"] == "caf\\udce9"
    result.to_json().encode("utf-8")  # writable as UTF-8
    depth, node = 0, meta["deep"]
    while isinstance(node, dict):
        node, depth = node["down"], depth + 1
    assert node.startswith("<nested deeper than") and depth < 100


def test_extractor_crash_on_one_document_is_skipped_with_its_error():
    class Fragile(PatternExtractor):
        def extract(self, document):
            if document.id == "boom":
                raise RuntimeError("parser exploded")
            return super().extract(document)

    result = run_with({"id": "boom", "text": "x causes y."}, extractor=Fragile())
    assert reasons(result)["boom"] == "extractor error: RuntimeError: parser exploded"


# ------------------------------------------------------------- errors at the API boundary


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"id": "n", "text": None}, "is None"),
        ({"id": "n"}, "has no 'text' key"),
        ({"id": "n", "text": b"bytes"}, "must be a string"),
        ({"id": "n", "text": 42}, "must be a string"),
        ({"id": "n", "text": "x", "metadata": ["not", "a", "dict"]}, "metadata"),
        (None, "is a NoneType"),
        (b"raw bytes", "is a bytes"),
        ({"id": "s1", "text": "again"}, "share the id 's1'"),
    ],
)
def test_malformed_input_is_an_input_error(bad, message):
    with pytest.raises(InputError, match=message):
        make().run(QUERY, [*STORY, bad])


def test_duplicate_ids_name_both_positions():
    with pytest.raises(InputError, match=r"documents\[0\] and documents\[3\]"):
        make().run(QUERY, [*STORY, SourceDocument("s1", "x")])


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (SourceDocument("n", None), r"documents\[3\]\.text must be a string, got NoneType"),
        (SourceDocument("n", 42), r"documents\[3\]\.text must be a string, got int"),
        (SourceDocument(("a",), "x"), r"documents\[3\]\.id must be a string"),
        (SourceDocument("n", "x", ["no"]), r"documents\[3\]\.metadata must be a dict"),
    ],
)
def test_malformed_source_document_is_an_input_error_naming_its_position(bad, message):
    # The dataclass checks nothing itself: these used to fail deep inside the run.
    with pytest.raises(InputError, match=message) as caught:
        make().run(QUERY, [*STORY, bad])
    assert caught.value.argument == "documents[3]"


def test_source_document_int_id_and_none_metadata_are_accepted():
    result = make().run(QUERY, [*STORY, SourceDocument(42, "Food shortage causes unrest.", None)])
    assert result.document_ids[-1] == "42"
    assert "unrest" in result.chains[0].nodes
    json.loads(result.to_json())
    with pytest.raises(InputError, match="share the id '42'"):
        make().run(QUERY, [*STORY, SourceDocument(42, "x"), {"id": "42", "text": "y"}])


def test_langchain_document_without_text_is_an_input_error():
    documents = pytest.importorskip("langchain_core.documents")
    from sarg_integrations.langchain import SARGDocumentTransformer

    bad = documents.Document.model_construct(page_content=None, metadata={})  # skips pydantic
    sarg = SARGDocumentTransformer(
        keyphrase_extractor=FixedKeyphrases("heavy rain"),
        embedder=HashingEmbedder(),
        extractor=PatternExtractor(),
        direction="forward",
    )
    story = [documents.Document(page_content=d["text"], id=d["id"]) for d in STORY]
    with pytest.raises(InputError, match=r"documents\[3\]\.text must be a string"):
        sarg.transform_documents([*story, bad], query=QUERY)


@pytest.mark.parametrize("documents", [[], "a string", b"bytes", {"text": "a dict"}, 42])
def test_documents_that_are_not_a_list_are_an_input_error(documents):
    with pytest.raises(InputError):
        make().run(QUERY, documents)


# --------------------------- the real offline extractors: union, tagger and rules (slow)


@pytest.fixture(scope="module", params=["union", "tagger", "rules"])
def rules(request):
    """Each real offline extractor in turn (the default union, the tagger alone, the rules)."""
    from sarg_integrations.extraction.choice import resolve_extractor

    extractor = resolve_extractor(request.param)
    extractor.warm_up()
    return extractor


@pytest.mark.slow
def test_real_extractor_survives_garbage_nul_rtl_emoji(rules):
    raw = os.urandom(2048)
    docs = [
        {"id": "g", "text": raw.decode("utf-8", errors="surrogateescape")},
        {"id": "nul", "text": "Drought\x00 causes crop failure.\x00"},
        {"id": "rtl", "text": "المطر يسبب الفيضان. שלום 🌧️🌊 \u202eevil\u202c"},
        {"id": "empty", "text": "   "},
    ]
    result = run_with(*docs, extractor=rules)
    assert reasons(result)["empty"] == EMPTY


@pytest.mark.slow
def test_real_extractor_skips_a_one_megabyte_sentence_fast(rules):
    text = " ".join(["word"] * 200_000) + "."  # 1 MB, one sentence: ~70 s to parse uncapped
    start = time.perf_counter()
    result = run_with({"id": "big", "text": text}, extractor=rules)
    assert time.perf_counter() - start < 10
    assert reasons(result)["big"].startswith(
        "1 sentence(s) longer than max_sentence_chars=5000 characters were not parsed"
    )
    assert result.stats["sentences_skipped_too_long"] == 1


@pytest.mark.slow
def test_real_extractor_keeps_the_prose_around_an_overlong_sentence(rules):
    text = "Food shortage causes unrest. " + "x" * 6_000 + ". Unrest leads to migration."
    (outcome,) = rules.extract_many([SourceDocument("mix", text)])
    assert outcome.error is None and outcome.stats == {"sentences_skipped_too_long": 1}
    assert sorted({text[slice(*t.sentence_span)] for t in outcome.triples}) == [
        "Food shortage causes unrest.",
        "Unrest leads to migration.",
    ]


@pytest.mark.slow
def test_real_extractor_long_sentence_under_the_cap_is_parsed(rules):
    text = " ".join(["word"] * 10_000) + "."  # 50 KB
    if type(rules).__name__ == "UnionExtractor":
        pytest.skip("the union has no cap of its own: its two extractors are run above")
    uncapped = type(rules)(nlp=rules.nlp, max_sentence_chars=None)
    start = time.perf_counter()
    result = run_with({"id": "big", "text": text}, extractor=uncapped)
    assert time.perf_counter() - start < 20
    assert reasons(result)["big"] == NO_TRIPLES


@pytest.mark.parametrize("value", [0, 99, 5000.0, True, "5000"])
def test_max_sentence_chars_is_validated(value):
    from sarg_integrations.errors import ConfigError
    from sarg_integrations.extraction.rules import RuleBasedExtractor

    with pytest.raises(ConfigError, match="max_sentence_chars"):
        RuleBasedExtractor(max_sentence_chars=value)


@pytest.mark.slow
def test_real_extractor_two_thousand_tiny_documents(rules):
    tiny = [{"id": f"t{i}", "text": "ok."} for i in range(2_000)]
    result = run_with(*tiny, extractor=rules)
    assert len(reasons(result)) == 2_000
