"""The TaSR strategy end to end on the paper's worked example (Table 7), model-free."""

from __future__ import annotations

import json

import pytest
from fakes import HashingEmbedder
from tasr_support import ANSWER, DOCS, QUESTION, DictTyper, FixedTriples, pipeline, scripted_llm

from sarg_integrations import ConfigError, SARGConfig, SARGPipeline
from sarg_integrations.tasr import LLMQueryDecomposer, QueryDecomposition, SubQuery, TaSRTrace


def test_table7_worked_example() -> None:
    llm = scripted_llm()
    result = pipeline(llm).run(QUESTION, DOCS)
    trace = result.trace
    assert isinstance(trace, TaSRTrace) and result.strategy == "tasr"
    # Step 2: decomposition with latent variables, typed with the (extended) taxonomy.
    steps = [s.to_text() for s in trace.decomposition.steps]
    assert steps == ["(Science Activity Planner, uses, ?x)", "(?x, developed by, ?y)"]
    assert [h.typed for h in trace.hops] == [
        "(WORK/System, uses, WORK/Database)",
        "(WORK/Database, developed by, ORGANIZATION/Company)",
    ]
    # Hop 1: Doc[1] kept, Doc[3] (the option list) filtered by θ; ?x bound to MySQL.
    hop1, hop2 = trace.hops
    assert hop1.status == "bound" and [d for d, _ in hop1.documents] == ["Doc[1]"]
    assert hop1.bindings == {"?x": "MySQL"}
    # Hop 2 runs on the resolved sub-query (MySQL, developed by, ?y) and binds ?y.
    assert hop2.resolved.to_text() == "(MySQL, developed by, ?y)"
    assert [d for d, _ in hop2.documents] == ["Doc[6]"]
    assert trace.bindings == {"?x": "MySQL", "?y": "Oracle Corporation"}
    # The binding path is the chain, each hop citing its document and sentence.
    assert result.fallback_reason is None
    assert [c.to_text() for c in result.chains] == [
        "Science Activity Planner --[uses]--> MySQL --[developed by]--> Oracle Corporation"
    ]
    assert result.chains[0].document_ids == ("Doc[1]", "Doc[6]")
    assert result.chains[0].hops[1].sentences == ("MySQL was developed by Oracle Corporation.",)
    assert [p.document_id for p in result.evidence] == ["Doc[1]", "Doc[6]"]
    assert "## Reasoning chains" in result.prompt and "Doc[3]" not in result.prompt
    assert result.stats["hops_bound"] == 2 and result.stats["subqueries"] == 2
    assert "time_decompose_ms" in result.stats and "time_match_ms" in result.stats
    # The LLM was asked once, with the taxonomy in the prompt.
    assert len(llm.prompts) == 1 and "SoftwareProject" in llm.prompts[0]
    # The result serialises and draws like a SARG result.
    data = json.loads(result.to_json())
    assert data["strategy"] == "tasr"
    assert data["trace"]["bindings"] == {"?x": "MySQL", "?y": "Oracle Corporation"}
    assert data["trace"]["hops"][0]["documents"] == [["Doc[1]", pytest.approx(0.9, abs=0.05)]]
    assert "<html" in result.to_html().lower()
    assert "MySQL" in result.to_mermaid()


def test_hybrid_score_orders_documents_and_theta_filters() -> None:
    hop1 = pipeline(tasr_threshold=0.3).run(QUESTION, DOCS).trace.hops[0]
    # With a low θ the weak option list is selected too, but ranked below Doc[1].
    assert [d for d, _ in hop1.documents] == ["Doc[1]", "Doc[3]"]
    assert hop1.documents[0][1] > hop1.documents[1][1]
    assert hop1.best is not None and hop1.best.triple.document_id == "Doc[1]"


def test_a_hop_that_finds_nothing_falls_back_and_is_recorded() -> None:
    docs = [d for d in DOCS if d["id"] != "Doc[6]"]
    result = pipeline().run(QUESTION, docs)
    hop1, hop2 = result.trace.hops
    assert hop1.status == "bound" and hop2.status == "unresolved"
    assert "(MySQL, developed by, ?y)" in hop2.reason and "threshold 0.7" in hop2.reason
    assert result.fallback_reason.startswith("hop 2 unresolved: no document triple matched")
    # Flat context: every document, no chain section; the resolved prefix stays visible.
    assert [p.document_id for p in result.evidence] == ["Doc[1]", "Doc[3]"]
    assert "## Context" in result.prompt and "## Reasoning chains" not in result.prompt
    assert [c.to_text() for c in result.chains] == ["Science Activity Planner --[uses]--> MySQL"]
    assert result.trace.bindings == {"?x": "MySQL"}
    assert result.stats["hops_unresolved"] == 1


def test_steps_that_need_an_unbound_variable_are_skipped() -> None:
    answer = json.dumps(
        [
            ["Science Activity Planner", "written in", "?x"],
            ["?x", "developed by", "?y"],
            ["?y", "headquartered in", "?z"],
        ]
    )
    result = pipeline(scripted_llm(answer)).run(QUESTION, DOCS)
    statuses = [(h.status, h.reason) for h in result.trace.hops]
    assert statuses[0][0] == "unresolved"
    assert statuses[1] == ("skipped", "needs ?x, which an earlier step left unbound")
    assert statuses[2] == ("skipped", "needs ?y, which an earlier step left unbound")
    assert result.fallback_reason.startswith("hop 1 unresolved")


def test_independent_comparison_steps_run_even_when_one_fails() -> None:
    answer = json.dumps([["MySQL", "developed by", "?a"], ["PostgreSQL", "developed by", "?b"]])
    result = pipeline(scripted_llm(answer)).run("Who made MySQL or PostgreSQL?", DOCS)
    assert result.trace.decomposition.kind == "comparison"
    assert [h.status for h in result.trace.hops] == ["bound", "unresolved"]
    assert result.trace.bindings == {"?a": "Oracle Corporation"}


def test_unusable_decomposition_falls_back_with_the_reason() -> None:
    llm = scripted_llm("I cannot decompose this question.")
    result = pipeline(llm).run(QUESTION, DOCS)
    assert result.fallback_reason.startswith("query decomposition failed: ExtractionError")
    assert len(llm.prompts) == 2  # one repair re-ask
    assert result.trace.hops == () and result.chains == []
    assert [p.document_id for p in result.evidence] == [d["id"] for d in DOCS]


def test_no_triples_falls_back() -> None:
    pipe = SARGPipeline(
        SARGConfig(strategy="tasr"),
        extractor=FixedTriples({}),
        embedder=HashingEmbedder(),
        query_decomposer=LLMQueryDecomposer(scripted_llm()),
        entity_typer=DictTyper(),
    )
    result = pipe.run(QUESTION, DOCS)
    assert result.fallback_reason == "no triples were extracted from the documents"


def test_a_custom_decomposer_object_and_async_run() -> None:
    class Fixed:
        def decompose(self, query: str) -> QueryDecomposition:
            return QueryDecomposition(
                query, (SubQuery("MySQL", "developed by", "?y"),), {"?y": "company"}
            )

    pipe = SARGPipeline(
        SARGConfig(strategy="tasr", tasr_threshold=0.6),
        extractor=FixedTriples(),
        embedder=HashingEmbedder(),
        query_decomposer=Fixed(),
        entity_typer=DictTyper(),
    )
    import asyncio

    result = asyncio.run(pipe.arun("Who developed MySQL?", DOCS))
    assert result.trace.bindings == {"?y": "Oracle Corporation"}
    assert result.chains[0].to_text() == "MySQL --[developed by]--> Oracle Corporation"


def test_config_knobs_are_validated_and_schema_follows_the_strategy() -> None:
    assert SARGConfig().schema == "reasoning"
    assert SARGConfig(strategy="tasr").schema == "generic_spo"
    assert SARGConfig(strategy="tasr", schema="reasoning").schema == "reasoning"
    assert SARGConfig().replace(strategy="tasr").schema == "generic_spo"
    assert SARGConfig(schema="reasoning").replace(strategy="tasr").schema == "generic_spo"
    for bad in (
        {"strategy": "graph"},
        {"tasr_alpha": 1.5},
        {"tasr_threshold": -0.1},
        {"tasr_taxonomy_depth": 4},
        {"tasr_taxonomy_depth": True},
    ):
        with pytest.raises(ConfigError) as info:
            SARGConfig(**bad)
        assert info.value.field == next(iter(bad))
        assert repr(next(iter(bad.values()))) in str(info.value)


def test_bad_collaborators_are_rejected_with_the_argument_named() -> None:
    with pytest.raises(ConfigError, match="query_decomposer=42"):
        SARGPipeline(SARGConfig(strategy="tasr"), embedder=HashingEmbedder(), query_decomposer=42)
    with pytest.raises(ConfigError, match="entity_typer="):
        SARGPipeline(SARGConfig(strategy="tasr"), embedder=HashingEmbedder(), entity_typer=object())


def test_llm_convenience_builds_the_llm_decomposer_and_typer() -> None:
    pipe = SARGPipeline(
        SARGConfig(strategy="tasr"), embedder=HashingEmbedder(), llm=scripted_llm(ANSWER)
    )
    strategy = pipe.tasr_strategy
    assert type(strategy.decomposer).__name__ == "LLMQueryDecomposer"
    assert type(strategy.typer).__name__ == "LLMEntityTyper"
    assert type(strategy.typer.fallback).__name__ == "OfflineEntityTyper"


def test_evidence_fill_applies_to_tasr_as_to_sarg() -> None:
    result = pipeline(scripted_llm(), evidence_fill=1).run(QUESTION, DOCS)
    assert [(p.document_id, p.selected_by) for p in result.evidence] == [
        ("Doc[1]", "chain"),
        ("Doc[6]", "chain"),
        ("Doc[3]", "relevance"),
    ]
    assert result.stats["evidence_filled"] == 1
    # On fallback (hop 2 finds nothing) the filled documents replace the flat context.
    docs = [d for d in DOCS if d["id"] != "Doc[6]"]
    fallback = pipeline(evidence_fill=1).run(QUESTION, docs)
    assert fallback.fallback_reason is not None and len(fallback.evidence) == 1


def test_tasr_result_has_no_made_up_direction_or_key_phrases() -> None:
    from sarg_integrations.cli.report import report_lines
    from sarg_integrations.strategies import Strategy

    pipe = pipeline(scripted_llm())
    assert isinstance(pipe.strategy, Strategy) and pipe.strategy.name == "tasr"
    result = pipe.run(QUESTION, DOCS)
    assert result.direction is None and result.keyphrases is None
    assert [e.node for e in result.entry_nodes] == ["Science Activity Planner"]
    data = json.loads(result.to_json())
    assert data["direction"] is None and data["keyphrases"] is None
    report = "\n".join(report_lines(result))
    assert "Direction:" not in report and "Key phrases:" not in report
    assert "Reasoning chains: 1 kept" in report
    assert "strategy <strong>tasr</strong>" in result._repr_html_()
    assert "- strategy: **tasr**" in result._repr_markdown_()
    assert result.to_networkx().graph["direction"] == "none"
