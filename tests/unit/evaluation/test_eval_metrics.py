"""Evaluation metrics against hand-computed cases (official HotpotQA/SQuAD rules)."""

from __future__ import annotations

import pytest

from sarg_integrations.evaluation.metrics import (
    answer_in_text,
    chain_faithfulness,
    count_tokens,
    exact_match,
    f1_score,
    max_over_answers,
    normalize_answer,
    support_precision,
    support_recall,
)
from sarg_integrations.schema import ChainHop, Direction, ReasoningChain, RelationType


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Beatles", "beatles"),  # article
        ("a  an the", ""),  # only articles
        ("Theatre", "theatre"),  # 'the' inside a word stays
        ("U.S.A.", "usa"),  # punctuation removed, not replaced by spaces
        ("  New\tYork \n City ", "new york city"),  # whitespace collapsed
        ("HELLO, World!", "hello world"),  # case and punctuation
        ("rock-and-roll", "rockandroll"),
        ("café", "café"),  # non-ASCII letters kept
    ],
)
def test_normalize_answer_edge_cases(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_exact_match_ignores_case_articles_punctuation() -> None:
    assert exact_match("The Eiffel Tower.", "eiffel tower") == 1.0
    assert exact_match("Eiffel", "Eiffel Tower") == 0.0


def test_f1_hand_computed() -> None:
    # pred tokens: [new, york, city]; gold: [new, york]; common 2 -> P=2/3, R=1 -> F1=0.8
    assert f1_score("New York City", "New York") == pytest.approx(0.8)
    # pred [paris, france, capital]; gold [paris]; P=1/3 R=1 -> 0.5
    assert f1_score("Paris, France capital", "the Paris") == pytest.approx(0.5)
    assert f1_score("London", "Paris") == 0.0
    # repeated tokens count with multiplicity: pred [a?] -> "the the cat" -> [cat]
    assert f1_score("cat cat dog", "cat dog dog") == pytest.approx(2 / 3)


def test_f1_yes_no_noanswer_rule() -> None:
    assert f1_score("yes", "yes") == 1.0
    assert f1_score("yes indeed", "yes") == 0.0  # official rule: must be identical
    assert f1_score("no", "no way") == 0.0
    assert f1_score("noanswer", "something") == 0.0
    assert f1_score("Yes.", "yes") == 1.0  # after normalisation


def test_max_over_answers_uses_aliases() -> None:
    assert max_over_answers(exact_match, "NYC", ["New York City", "nyc"]) == 1.0
    assert max_over_answers(f1_score, "anything", []) == 0.0


def test_support_recall_and_precision() -> None:
    assert support_recall(["1", "4", "5"], ["1", "2"]) == 0.5
    assert support_precision(["1", "4", "5", "2"], ["1", "2"]) == 0.5
    assert support_recall([], ["1"]) == 0.0
    assert support_precision([], ["1"]) == 0.0
    assert support_recall(["1"], []) == 1.0
    assert support_recall(["1", "1", "2"], ["1", "2"]) == 1.0


def test_answer_in_text_word_bounds_and_yes_no() -> None:
    assert answer_in_text("He was born in the U.S.A. in 1950", ["USA"]) == 1.0
    assert answer_in_text("Parisian cafés", ["Paris"]) == 0.0
    assert answer_in_text("yes, it is", ["yes"]) == 0.0  # yes/no are not spans
    assert answer_in_text("Chief of Protocol of the US", ["chief of protocol"]) == 1.0


def test_count_tokens_regex_estimate() -> None:
    assert count_tokens("") == 0
    assert count_tokens("Who wrote 'Hamlet'?") == 6
    assert count_tokens("a,b") == 3


def test_chain_faithfulness_counts_hops() -> None:
    ok = ChainHop("a", "b", "causes", RelationType.CAUSAL, True, ("d1",), ("A causes B.",))
    bad = ChainHop("b", "c", "causes", RelationType.CAUSAL, True, ("d2",), ("B causes C.",))
    missing = ChainHop("c", "d", "causes", RelationType.CAUSAL, True, ("zz",), ("C causes D.",))
    chain = ReasoningChain(("a", "b", "c", "d"), (ok, bad, missing), 0.5, Direction.FORWARD)
    docs = {"d1": "A  causes\nB. More.", "d2": "Something else."}
    assert chain_faithfulness([chain], docs) == (1, 3)
    assert chain_faithfulness([], docs) == (0, 0)
