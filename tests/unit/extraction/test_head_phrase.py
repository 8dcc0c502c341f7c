"""Node names of tagged spans (``rules_phrases.head_phrase``) with the real spaCy parser."""

from __future__ import annotations

import pytest

from sarg_integrations.extraction.rules_phrases import head_phrase

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def nlp():
    from sarg_integrations._models import load_spacy

    return load_spacy()


def name(nlp, sentence: str) -> str:
    doc = nlp(sentence)
    return head_phrase(doc[0 : len(doc) - 1])  # the whole sentence less its full stop


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # A reporting verb names nothing: the clause it reports is the node.
        ("Experts say the move will ultimately improve personnel training in Tibet.",
         "move improve personnel training in Tibet"),
        ("Cineplex expects Rank Organisation PLC to acquire the film unit.",
         "Rank Organisation PLC acquire film unit"),
        # "ready / likely to": the adjective, its negation and the clause after it stay.
        ("Israel is ready to recognize a European role.", "Israel ready to recognize European role"),
        ("The Fed move was not likely to push consumer prices higher.",
         "Fed move not likely to push consumer prices"),
        # A negated report keeps its verb (dropping it would flip the meaning).
        ("Officials did not expect the dam to fail.", "officials not expect"),
        # Other clauses are named as before.
        ("The storm knocked out power lines.", "storm knocked out power lines"),
    ],
)
def test_head_phrase_names_what_a_clause_is_about(nlp, sentence: str, expected: str) -> None:
    assert name(nlp, sentence) == expected
