"""The core pipeline end to end on fakes: results, fallbacks, bad input, async."""

from __future__ import annotations

import asyncio
import json

import pytest

from fakes import FixedKeyphrases, HashingEmbedder, PastTenseWords, PatternExtractor
from sarg_integrations import CueWordDirectionClassifier, SARGConfig, SARGPipeline, SourceDocument
from sarg_integrations.errors import ConfigError, ExtractionError, InputError
from sarg_integrations.schema import Direction, DirectionPrediction
from sarg_integrations.strategies.sarg import NO_CHAINS, NO_TRIPLES

STORY = [
    {"id": "d1", "text": "Heavy rain causes river flooding. Bakers like bread."},
    {"id": "d2", "text": "River flooding leads to crop damage."},
    {"id": "d3", "text": "Crop damage causes food shortage."},
    {"id": "d4", "text": "The museum opened in 1901."},
]


def make(config=None, **kwargs):
    kwargs.setdefault("extractor", PatternExtractor())
    kwargs.setdefault("embedder", HashingEmbedder())
    kwargs.setdefault("keyphrase_extractor", FixedKeyphrases("heavy rain"))
    # Model-free: the shipped classifier would load MiniLM for a non-MiniLM embedder.
    kwargs.setdefault("direction_classifier", CueWordDirectionClassifier())
    # Model-free too: the default event reader loads spaCy (a fallback's story reads it).
    kwargs.setdefault("event_reader", PastTenseWords())
    return SARGPipeline(config or SARGConfig(similarity_threshold=0.6), **kwargs)


def test_three_hop_chain_across_documents():
    result = make().run("What does heavy rain lead to?", STORY)
    assert result.direction.direction is Direction.FORWARD
    assert [e.node for e in result.entry_nodes] == ["Heavy rain"]
    best = result.chains[0]
    assert best.nodes == ("Heavy rain", "river flooding", "crop damage", "food shortage")
    assert [h.document_ids for h in best.hops] == [("d1",), ("d2",), ("d3",)]
    assert result.fallback_reason is None
    # Only the documents behind the chain reach the prompt, in citation order.
    assert [p.document_id for p in result.evidence] == ["d1", "d2", "d3"]
    assert "museum" not in result.prompt
    assert result.prompt.index("## Reasoning chains") < result.prompt.index("## Evidence")
    assert [s.document_id for s in result.skipped_documents] == ["d4"]


def test_result_serialises_to_json_with_documented_fields():
    result = make().run("What does heavy rain lead to?", STORY)
    data = json.loads(result.to_json())
    assert list(data) == [
        "query", "document_ids", "triples", "graph_size", "graph", "keyphrases", "entry_nodes",
        "direction", "candidate_chains", "chains", "evidence", "prompt", "fallback_reason",
        "skipped_documents", "stats", "config", "strategy", "trace", "notes",
    ]
    assert data["graph_size"] == {"nodes": 4, "edges": 3}
    assert data["chains"][0]["hops"][0]["relation_type"] == "causal"
    assert data["triples"][0]["sentence_span"] == [0, 33]
    for key in ("time_extract_ms", "time_build_ms", "time_match_ms", "time_direction_ms",
                "time_traverse_ms", "time_compile_ms", "time_structuring_ms", "time_total_ms",
                "triples", "nodes", "edges", "entry_nodes", "chains_considered", "chains_kept"):
        assert key in data["stats"], key


def test_each_text_is_embedded_once_per_run():
    embedder = HashingEmbedder()
    make(embedder=embedder).run("What does heavy rain lead to?", STORY)
    seen = [t for call in embedder.calls for t in call]
    assert len(seen) == len(set(seen))


def test_embeddings_are_reused_across_runs():
    pipe = make()
    pipe.run("What does heavy rain lead to?", STORY)
    second = pipe.run("What does heavy rain lead to?", STORY)
    assert second.stats["embeddings_computed"] == 0
    assert second.stats["embeddings_reused"] > 0


def test_fallback_when_no_triples_keeps_the_flat_context():
    docs = ["Bakers like bread.", "The museum opened in 1901."]
    result = make(SARGConfig.paper(similarity_threshold=0.6)).run("Why?", docs)
    assert result.fallback_reason == NO_TRIPLES
    assert result.used_fallback and result.chains == []
    assert "## Context" in result.prompt
    assert all(d in result.prompt for d in docs)


def test_fallback_when_no_entry_node():
    paper = SARGConfig.paper(similarity_threshold=0.6)
    result = make(paper, keyphrase_extractor=FixedKeyphrases("volcano eruption")).run("q?", STORY)
    assert "no graph node is similar enough" in result.fallback_reason
    assert all(doc["text"] in result.prompt for doc in STORY)


def test_fallback_when_entry_has_no_neighbour_in_the_direction():
    result = make(SARGConfig.paper(similarity_threshold=0.6, direction="backward")).run("q?", STORY)
    assert result.fallback_reason == NO_CHAINS.format(direction="backward")
    assert result.direction.method == "fixed"
    assert all(doc["text"] in result.prompt for doc in STORY)


def test_a_predicted_direction_with_no_neighbour_widens_to_both_ways():
    # "Why …?" is backward, but the corpus gives heavy rain no cause: rather than fall
    # back, the walk goes both ways from the entry node, and says so.
    result = make().run("Why is there heavy rain?", STORY)
    assert result.direction.direction is Direction.BACKWARD  # the prediction is kept
    assert result.stats["direction_widened"] == 1 and not result.used_fallback
    assert result.chains and {c.direction for c in result.chains} == {Direction.BIDIRECTIONAL}
    assert result.chains[0].nodes[:2] == ("Heavy rain", "river flooding")
    found = make().run("What does heavy rain lead to?", STORY)
    assert found.stats["direction_widened"] == 0
    assert {c.direction for c in found.chains} == {Direction.FORWARD}


def test_default_fallback_keeps_the_most_relevant_documents_within_the_budget():
    result = make(keyphrase_extractor=FixedKeyphrases("volcano eruption")).run("heavy rain?", STORY)
    assert result.used_fallback and "## Context" in result.prompt
    total = sum(len(d["text"].split()) for d in STORY)
    kept = [p for p in result.evidence]
    assert kept and sum(len(p.text.split()) for p in kept) <= max(0.5 * total, len(kept[0].text.split()))
    assert {p.selected_by for p in kept} <= {"relevance", "bridge"}
    assert kept[0].document_id == STORY[0]["id"]  # "Heavy rain causes ...": the most similar


def test_forced_bidirectional_ablation():
    result = make(SARGConfig(similarity_threshold=0.6, direction="bidirectional")).run("Why?", STORY)
    assert result.direction.direction is Direction.BIDIRECTIONAL
    assert result.chains[0].nodes[-1] == "food shortage"


def test_top_k_and_beam_width_are_honoured():
    docs = [f"Heavy rain causes effect {i}." for i in range(6)]
    result = make(SARGConfig(similarity_threshold=0.6, top_k=2, beam_width=4)).run("What does heavy rain lead to?", docs)
    assert len(result.chains) == 2
    assert result.stats["beam_pruned"] == 2  # six neighbours, four kept


class Exploding:
    def extract(self, document):
        if "boom" in document.text:
            raise ExtractionError("model output was not JSON", document_id=document.id)
        return PatternExtractor().extract(document)


def test_extractor_errors_skip_the_document_and_are_reported():
    docs = [*STORY, {"id": "bad", "text": "boom goes the model"}]
    result = make(extractor=Exploding()).run("What does heavy rain lead to?", docs)
    assert result.chains and result.chains[0].nodes[-1] == "food shortage"
    reasons = {s.document_id: s.reason for s in result.skipped_documents}
    assert reasons["bad"] == "extractor error: ExtractionError: model output was not JSON"


def test_empty_documents_are_skipped_with_a_reason():
    result = make().run("What does heavy rain lead to?", [*STORY, {"id": "blank", "text": "  \n"}])
    assert ("blank", "empty or whitespace-only text") in {(s.document_id, s.reason) for s in result.skipped_documents}


@pytest.mark.parametrize(
    ("query", "documents", "message"),
    [
        ("", ["x"], "query='' is empty"),
        ("   ", ["x"], "is empty"),
        (None, ["x"], "query must be a string, got NoneType"),
        ("q", [], "documents is empty"),
        ("q", "just a string", "wrap it in a list"),
        ("q", [{"id": "a"}], r"documents\[0\] has no 'text' key"),
        ("q", [{"id": "a", "text": 3}], r"documents\[0\]\['text'\] must be a string"),
        ("q", [{"id": "a", "text": None}], r"documents\[0\]\['text'\] is None"),
        ("q", [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], r"documents\[0\] and documents\[1\] share the id 'a'"),
        ("q", [42], r"documents\[0\] is a int"),
        ("q", [{"id": "a", "text": "x", "metadata": "oops"}], r"documents\[0\]\['metadata'\] must be a dict"),
    ],
)
def test_bad_input_gets_a_clear_error(query, documents, message):
    with pytest.raises(InputError, match=message):
        make().run(query, documents)


def test_documents_may_be_records_dicts_or_strings():
    result = make().run(
        "What does heavy rain lead to?",
        [
            SourceDocument("d1", "Heavy rain causes river flooding.", {"url": "u1"}),
            {"id": "d2", "text": "River flooding leads to crop damage.", "source": "s2"},
            "Crop damage causes food shortage.",
        ],
    )
    assert result.document_ids == ["d1", "d2", "doc-2"]
    assert result.evidence[0].metadata == {"url": "u1"}
    assert result.evidence[1].metadata == {"source": "s2"}


def test_sentence_evidence_mode():
    result = make(SARGConfig(similarity_threshold=0.6, evidence="sentences")).run("What does heavy rain lead to?", STORY)
    assert result.evidence[0].text == "Heavy rain causes river flooding."


@pytest.mark.parametrize(
    "kwargs",
    [{"extractor": object()}, {"embedder": "minilm"}, {"direction_classifier": 3}, {"keyphrase_extractor": []}],
)
def test_collaborators_are_checked_at_construction(kwargs):
    with pytest.raises(ConfigError, match=next(iter(kwargs))):
        make(**kwargs)


def test_config_type_is_checked():
    with pytest.raises(ConfigError, match="SARGConfig"):
        SARGPipeline({"beam_width": 3})


class WrongClassifier:
    def predict_direction(self, query, query_embedding=None):
        return "forward"


def test_classifier_returning_the_wrong_type_is_named():
    with pytest.raises(ConfigError, match="DirectionPrediction"):
        make(direction_classifier=WrongClassifier()).run("q", STORY)


class AsyncExtractor:
    def __init__(self):
        self.active = 0
        self.peak = 0

    def extract(self, document):
        return PatternExtractor().extract(document)

    async def aextract(self, document):
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.01)
        self.active -= 1
        return self.extract(document)


def test_arun_matches_run_and_extracts_concurrently():
    extractor = AsyncExtractor()
    pipe = make(extractor=extractor)
    result = asyncio.run(pipe.arun("What does heavy rain lead to?", STORY))
    assert extractor.peak > 1
    sync = pipe.run("What does heavy rain lead to?", STORY)
    assert [c.nodes for c in result.chains] == [c.nodes for c in sync.chains]
    assert result.prompt == sync.prompt


def test_classifier_prediction_is_used():
    class Backward:
        seen = None

        def predict_direction(self, query, query_embedding=None):
            Backward.seen = query_embedding
            return DirectionPrediction(Direction.BACKWARD, 0.9, {}, "test")

    keyphrases = FixedKeyphrases("food shortage")
    result = make(direction_classifier=Backward(), keyphrase_extractor=keyphrases).run("Why food shortage?", STORY)
    assert result.chains[0].nodes == ("food shortage", "crop damage", "river flooding", "Heavy rain")
    assert all(not hop.forward for hop in result.chains[0].hops)
    # The classifier received the query vector the pipeline computed for matching.
    assert Backward.seen is not None and Backward.seen.shape == (64,)


class ReportingExtractor:
    """Returns ExtractionOutcome records with counters, and errors as outcomes."""

    def extract(self, document):
        return PatternExtractor().extract(document)

    def extract_many(self, documents):
        from sarg_integrations.extraction.base import ExtractionOutcome

        out = []
        for doc in documents:
            if "refuse" in doc.text:
                out.append(ExtractionOutcome(error="model refused", stats={"llm_calls": 2}))
            else:
                out.append(ExtractionOutcome(self.extract(doc), stats={"llm_calls": 1, "prompt_tokens": 10}))
        return out


def test_extractor_counters_are_summed_and_errors_reported():
    docs = [*STORY, {"id": "r", "text": "please refuse"}, {"id": "e", "text": " "}]
    result = make(extractor=ReportingExtractor()).run("What does heavy rain lead to?", docs)
    assert result.stats["llm_calls"] == 6  # 4 documents x 1 + the refused one x 2
    assert result.stats["prompt_tokens"] == 40
    reasons = {s.document_id: s.reason for s in result.skipped_documents}
    assert reasons == {"d4": "no reasoning-schema triples found", "r": "model refused", "e": "empty or whitespace-only text"}
    assert [s.document_id for s in result.skipped_documents] == ["d4", "r", "e"]  # input order


class RecordingObserver:
    def __init__(self):
        self.events = []

    def stage(self, name):
        import contextlib

        @contextlib.contextmanager
        def manager():
            self.events.append(("start", name))
            summary = {}
            try:
                yield summary
            except BaseException as exc:
                self.events.append(("error", name, type(exc).__name__))
                raise
            self.events.append(("end", name, dict(summary)))

        return manager()


def test_observer_sees_every_stage_with_its_counters():
    observer = RecordingObserver()
    make().run("What does heavy rain lead to?", STORY, observer=observer)
    names = [e[1] for e in observer.events if e[0] == "start"]
    assert names == ["extract", "load_models", "encode", "build", "direction", "match", "traverse", "compile"]
    ends = {e[1]: e[2] for e in observer.events if e[0] == "end"}
    assert ends["extract"] == {"documents": 4, "documents_skipped": 1, "triples": 3}
    # The evidence budget ranks the 4 non-empty documents: encoded with the query at once.
    assert ends["encode"] == {"texts": 5}
    assert ends["build"]["nodes"] == 4
    assert ends["direction"]["direction"] == "forward"
    assert ends["traverse"]["chains_kept"] == 1
    assert ends["compile"]["fallback_reason"] is None


def test_the_query_and_the_documents_are_encoded_once_in_one_call():
    log = HashingEmbedder()
    query = "What does heavy rain lead to?"
    make(embedder=log).run(query, STORY)
    assert log.calls[0] == [query, *(d["text"] for d in STORY)]
    encoded = [text for call in log.calls for text in call]
    for text in [query, *(d["text"] for d in STORY)]:
        assert encoded.count(text) == 1


def test_without_the_evidence_budget_no_document_is_encoded_ahead():
    log = HashingEmbedder()
    observer = RecordingObserver()
    config = SARGConfig.paper().replace(similarity_threshold=0.6)
    make(config, embedder=log).run("What does heavy rain lead to?", STORY, observer=observer)
    ends = {e[1]: e[2] for e in observer.events if e[0] == "end"}
    assert ends["encode"] == {"texts": 0}
    assert STORY[3]["text"] not in [text for call in log.calls for text in call]


def test_observer_sees_a_failing_stage():
    observer = RecordingObserver()
    with pytest.raises(ConfigError):
        make(direction_classifier=WrongClassifier()).run("q", STORY, observer=observer)
    assert ("error", "direction", "ConfigError") in observer.events


class BatchAsyncExtractor:
    def extract(self, document):
        raise AssertionError("the async path must be used")

    async def aextract_many(self, documents):
        await asyncio.sleep(0)
        return [PatternExtractor().extract(d) for d in documents]


def test_arun_prefers_aextract_many():
    result = asyncio.run(make(extractor=BatchAsyncExtractor()).arun("What does heavy rain lead to?", STORY))
    assert result.chains[0].nodes[-1] == "food shortage"


def test_warm_up_loads_lazily_loading_components():
    class Lazy(HashingEmbedder):
        warmed = False

        def warm_up(self):
            Lazy.warmed = True

    make(embedder=Lazy()).warm_up()
    assert Lazy.warmed


# ------------------------------------------- issue 16, item 18: the graph fell apart


def _connection_run(texts):
    pipeline = SARGPipeline(
        SARGConfig(similarity_threshold=0.6, direction="bidirectional"),
        extractor=PatternExtractor(lowercase=True),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("heavy rain", "famine"),
    )
    return pipeline.run("How is heavy rain connected to famine?", texts)


def test_chains_from_disconnected_pieces_say_so_in_the_result_and_report():
    from sarg_integrations.cli.report import report_lines

    result = _connection_run(["Heavy rain causes flooding.", "Drought causes famine."])
    assert result.fallback_reason is None and len(result.chains) == 2
    (note,) = result.notes
    assert note.startswith("the graph fell apart: no chain links ")
    assert "'heavy rain'" in note and "'famine'" in note
    assert note.endswith("disconnected parts of the graph; each kept chain describes one side only")
    assert json.loads(result.to_json())["notes"] == result.notes
    assert f"Note: {result.notes[0]}" in report_lines(result)


def test_no_note_when_a_chain_links_the_two_ends():
    result = _connection_run(["Heavy rain causes flooding.", "flooding causes famine."])
    assert result.chains and result.notes == []


def test_near_miss_entry_nodes_seed_the_search_before_a_fallback():
    # "Heavy rain" matches the key phrase "heavy rain today" at 0.8165 with the hashing
    # embedder: under τ = 0.85, within the default margin (0.05) below it.
    question = "What does heavy rain lead to?"
    today = FixedKeyphrases("heavy rain today")
    config = SARGConfig(similarity_threshold=0.85)
    near = make(config, keyphrase_extractor=today).run(question, STORY)
    assert near.fallback_reason is None, near.entry_nodes
    assert near.chains[0].nodes[0] == "Heavy rain"
    assert near.stats["entry_threshold_lowered"] == 1
    for strict in (SARGConfig(similarity_threshold=0.85, entry_margin=0.0),
                   SARGConfig.paper(similarity_threshold=0.85),
                   SARGConfig(similarity_threshold=0.9)):  # 0.8165 is 0.08 under τ
        result = make(strict, keyphrase_extractor=today).run(question, STORY)
        assert "no graph node is similar enough" in result.fallback_reason
        assert result.stats["entry_threshold_lowered"] == 0
    # Above τ, the margin changes nothing.
    assert make().run(question, STORY).stats["entry_threshold_lowered"] == 0


@pytest.mark.parametrize("value", [-0.1, 1.5, "0.05", True])
def test_bad_entry_margin_is_a_config_error(value):
    with pytest.raises(ConfigError, match="entry_margin"):
        SARGConfig(entry_margin=value)
