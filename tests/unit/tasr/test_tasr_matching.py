"""TaSR building blocks: taxonomy, typed matching, decomposition parsing, binding table."""

from __future__ import annotations

import json

import pytest
from fakes import HashingEmbedder

from sarg_integrations import ConfigError
from sarg_integrations.errors import ExtractionError
from sarg_integrations.schema import Triple
from sarg_integrations.tasr import (
    OTHER,
    BindingTable,
    EntityType,
    LLMEntityTyper,
    LLMQueryDecomposer,
    Mention,
    SubQuery,
    Taxonomy,
    default_taxonomy,
    load_taxonomy,
    match_triples,
    parse_decomposition,
    structural_score,
    type_agreement,
)

DB = EntityType("WORK", "Database")
COMPANY = EntityType("ORGANIZATION", "Company")
FILM = EntityType("WORK", "Film")

# ------------------------------------------------------------------ taxonomy


def test_packaged_taxonomy_is_table5() -> None:
    tax = default_taxonomy()
    assert tax.l1 == ("PERSON", "ORGANIZATION", "LOCATION", "FACILITY", "EVENT", "WORK")
    assert len(tax.l2) == 66
    assert tax.parent("MilitaryPerson") == "PERSON" and tax.parent("Dataset") == "WORK"
    assert str(tax.parse("organization / company")) == "ORGANIZATION/Company"
    assert str(tax.parse("Film")) == "WORK/Film"  # an L2 alone finds its L1
    assert str(tax.parse("PERSON/Database")) == "PERSON"  # unknown L2 keeps the L1
    assert tax.parse("OTHER") is OTHER and tax.parse("spaceship") is None


def test_taxonomy_is_extendable_and_loadable(tmp_path) -> None:
    tax = default_taxonomy().extend({"WORK": ["Database"], "PRODUCT": ["Vehicle"]}, name="mine")
    assert tax.parent("Database") == "WORK" and tax.parent("Vehicle") == "PRODUCT"
    path = tmp_path / "tax.json"
    path.write_text(json.dumps(tax.to_dict()))
    assert load_taxonomy(path) == tax
    with pytest.raises(ConfigError, match="listed under both"):
        Taxonomy({"A": ["Film"], "B": ["film"]})
    with pytest.raises(ConfigError, match="cannot read the taxonomy file"):
        load_taxonomy(tmp_path / "missing.json")


# ------------------------------------------------------------------ typed matching


def test_type_agreement_by_depth() -> None:
    # Same L1 and L2: full agreement; a different L1: none; unknown: neutral.
    assert type_agreement(DB, DB) == 1.0
    assert type_agreement(DB, COMPANY) == 0.0
    assert type_agreement(DB, OTHER) == type_agreement(None, DB) == 0.5
    # Same L1, different L2: half at depth 2, full at depth 1 (only L1 compared).
    assert type_agreement(DB, FILM, depth=2) == 0.5
    assert type_agreement(DB, FILM, depth=1) == 1.0
    # A query type given only at L1 (who → PERSON) agrees with any person.
    assert type_agreement(EntityType("PERSON"), EntityType("PERSON", "Actor")) == 1.0
    # Depth 3 also compares the head word: over-specific types disagree more.
    a, b = EntityType("WORK", "Database", "database"), EntityType("WORK", "Database", "mysql")
    assert type_agreement(a, b, depth=2) == 1.0
    assert type_agreement(a, b, depth=3) == pytest.approx(2 / 3)


def test_structural_score_rewards_type_consistent_triples() -> None:
    consistent = structural_score((DB, COMPANY), (DB, COMPANY), 1.0)
    swapped = structural_score((DB, COMPANY), (COMPANY, DB), 1.0)
    assert consistent == 1.0 and swapped == pytest.approx(1 / 3)


TRIPLES = [
    Triple("MySQL", "developed by", "Oracle Corporation", document_id="a", sentence="s1"),
    Triple("Oracle Corporation", "developed", "MySQL", document_id="b", sentence="s2"),
    Triple("PostgreSQL", "developed by", "PostgreSQL Global Development Group", document_id="c"),
]
TYPES = [(DB, COMPANY), (COMPANY, DB), (DB, COMPANY)]


def test_match_triples_gates_on_the_anchor_and_reads_inverse_triples() -> None:
    step = SubQuery("MySQL", "developed by", "?y")
    matches = match_triples(
        step, (DB, COMPANY), TRIPLES, TYPES, HashingEmbedder(), hints={"?y": "company"}
    )
    # The PostgreSQL triple fails the anchor gate; the passive/active pair both match,
    # the forward one first (the inverse one is scaled by the inverse penalty).
    assert [(m.triple.document_id, m.forward) for m in matches] == [("a", True), ("b", False)]
    assert all(m.bindings == {"?y": "Oracle Corporation"} for m in matches)
    assert matches[0].score > matches[1].score
    assert matches[0].structural == 1.0


def test_alpha_selects_semantic_only_structural_only_or_hybrid() -> None:
    step = SubQuery("MySQL", "developed by", "?y")
    scores = {}
    for alpha in (0.0, 0.5, 1.0):
        best = match_triples(
            step, (DB, COMPANY), TRIPLES[:1], TYPES[:1], HashingEmbedder(), alpha=alpha
        )[0]
        scores[alpha] = best.score
        assert best.score == pytest.approx(
            alpha * best.semantic + (1 - alpha) * best.structural, abs=1e-5
        )
    assert scores[0.0] == 1.0 and scores[0.0] > scores[0.5] > scores[1.0]


def test_typing_changes_the_ranking_of_otherwise_equal_triples() -> None:
    # Two triples with the same words; only the tail types differ.
    triples = [
        Triple("Kiss and Tell", "directed by", "Richard Wallace", document_id="person"),
        Triple("Kiss and Tell", "directed by", "Richard Wallace", document_id="company"),
    ]
    types = [(FILM, EntityType("PERSON")), (FILM, COMPANY)]
    step = SubQuery("Kiss and Tell", "directed by", "?y")
    ranked = match_triples(step, (FILM, EntityType("PERSON")), triples, types, HashingEmbedder())
    assert [m.triple.document_id for m in ranked] == ["person", "company"]
    semantic_only = match_triples(
        step, (FILM, EntityType("PERSON")), triples, types, HashingEmbedder(), alpha=1.0
    )
    assert semantic_only[0].score == semantic_only[1].score  # ties broken by input order


# ------------------------------------------------------------------ decomposition + binding


def test_parse_decomposition_is_tolerant() -> None:
    value = {
        "steps": [
            {"s": "Annie Morton", "p": "born_on", "o": "?A"},
            ["Terry Richardson", "born on", "$b"],
        ]
    }
    d = parse_decomposition("Who is older?", value)
    assert [s.to_text() for s in d.steps] == [
        "(Annie Morton, born on, ?a)",
        "(Terry Richardson, born on, ?b)",
    ]
    assert d.kind == "comparison"
    with pytest.raises(ExtractionError, match="names no entity"):
        parse_decomposition("q", [["?x", "r", "?y"]])
    with pytest.raises(ExtractionError, match="no list of sub-queries"):
        parse_decomposition("q", {"answer": 3})


def test_llm_decomposer_repairs_once_and_reads_fenced_thinking_answers() -> None:
    answers = iter(
        ["no idea", "<think>hmm</think>```json\n{'subqueries': [['X', 'made', '?y'],]}\n```"]
    )
    decomposer = LLMQueryDecomposer(lambda prompt: next(answers))
    d = decomposer.decompose("Who made X?")
    assert d.steps == (SubQuery("X", "made", "?y"),) and decomposer.calls == 2


def test_llm_typer_reads_labels_and_falls_back() -> None:
    class Backup:
        def type_mentions(self, mentions):
            return [FILM for _ in mentions]

    typer = LLMEntityTyper(
        lambda prompt: (
            '{"types": [{"id": 1, "type": "Organization/Company"}, {"id": 2, "type": "Spaceship"}]}'
        ),
        fallback=Backup(),
    )
    kinds = typer.type_mentions([Mention("Oracle", "Oracle developed MySQL."), Mention("Kiss", "")])
    assert kinds == [EntityType("ORGANIZATION", "Company"), FILM]
    broken = LLMEntityTyper(lambda prompt: "sorry", fallback=Backup())
    assert broken.type_mentions([Mention("Oracle")]) == [FILM] and broken.failures == 1


def test_binding_table_substitutes_and_keeps_the_first_binding() -> None:
    table = BindingTable()
    table.bind("?x", "MySQL", step=1)
    table.bind("?x", "PostgreSQL", step=2)
    assert table.as_dict() == {"?x": "MySQL"} and table.step_of("?x") == 1
    assert (
        table.substitute(SubQuery("?x", "developed by", "?y")).to_text()
        == "(MySQL, developed by, ?y)"
    )
    assert "?y" not in table


@pytest.mark.slow
def test_rule_decomposer_on_simple_bridge_and_comparison_questions() -> None:
    from sarg_integrations.tasr import RuleQueryDecomposer

    rules = RuleQueryDecomposer()
    comparison = rules.decompose("Who is older, Annie Morton or Terry Richardson?")
    assert [s.to_text() for s in comparison.steps] == [
        "(Annie Morton, born on, ?a)",
        "(Terry Richardson, born on, ?b)",
    ]
    bridge = rules.decompose(
        'The director of the romantic comedy "Big Stone Gap" is based in what New York city?'
    )
    assert bridge.kind == "bridge" and bridge.steps[0].to_text() == "(Big Stone Gap, director, ?x)"
    assert bridge.hints["?y"] == "New York city"
    relative = rules.decompose(
        "What government position was held by the woman who portrayed Corliss Archer?"
    )
    assert relative.steps[0].object == "Corliss Archer" and relative.hints["?x"] == "woman"
    assert relative.steps[1].subject == "?x"


def test_llm_typer_never_moves_a_type_onto_another_mention() -> None:
    class Backup:
        def type_mentions(self, mentions):
            return [FILM for _ in mentions]

    # The answer types "MySQL AB" (not asked about) first, then "Oracle" by name: the
    # stray label must not land on the first mention by position.
    typer = LLMEntityTyper(
        lambda prompt: (
            '[{"entity": "MySQL AB", "type": "Organization/Company"},'
            ' {"entity": "oracle", "type": "Organization/Company"}]'
        ),
        fallback=Backup(),
    )
    kinds = typer.type_mentions([Mention("Kiss and Tell"), Mention("Oracle")])
    assert kinds == [FILM, EntityType("ORGANIZATION", "Company")]
