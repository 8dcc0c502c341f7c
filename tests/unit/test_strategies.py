"""The strategy seam: any object with ``name`` and ``structure`` drives the pipeline."""

from __future__ import annotations

from fakes import FixedKeyphrases, HashingEmbedder, PatternExtractor

from sarg_integrations import CueWordDirectionClassifier, SARGConfig, SARGPipeline
from sarg_integrations.graph import build_reasoning_graph
from sarg_integrations.schema import Direction
from sarg_integrations.strategies import RunContext, Strategy, Structure
from sarg_integrations.strategies.sarg import SARGStrategy
from sarg_integrations.traversal import chain_from_nodes

DOCS = ["storm causes rain. rain causes flood.", "flood causes damage."]


class FirstTriple:
    """A toy strategy: the chain is the first extracted triple."""

    name = "first-triple"

    def structure(self, query, documents, triples, ctx: RunContext) -> Structure:
        with ctx.stage("build") as summary:
            graph = build_reasoning_graph(triples)
            summary.update(nodes=graph.number_of_nodes)
        first = triples[0]
        chain = chain_from_nodes(graph.graph, [first.cause, first.effect], 1.0, Direction.FORWARD)
        return Structure(graph=graph, chains=[chain], counters={"toy": 1})


def pipeline() -> SARGPipeline:
    return SARGPipeline(
        SARGConfig(similarity_threshold=0.1),
        extractor=PatternExtractor(),
        embedder=HashingEmbedder(),
        keyphrase_extractor=FixedKeyphrases("storm"),
        direction_classifier=CueWordDirectionClassifier(),
    )


def test_the_default_strategy_is_sarg() -> None:
    pipe = pipeline()
    assert isinstance(pipe.strategy, SARGStrategy) and isinstance(pipe.strategy, Strategy)


def test_a_custom_strategy_runs_between_extraction_and_compile() -> None:
    pipe = pipeline()
    pipe.strategy = FirstTriple()
    result = pipe.run("What does a storm lead to?", DOCS)
    assert result.strategy == "first-triple"
    assert [c.to_text() for c in result.chains] == ["storm --[causes]--> rain"]
    assert result.direction is None and result.keyphrases is None
    assert result.stats["toy"] == 1 and result.stats["triples"] == 3
    assert {"time_extract_ms", "time_build_ms", "time_compile_ms"} <= set(result.stats)
    assert [p.document_id for p in result.evidence] == ["doc-0"]
