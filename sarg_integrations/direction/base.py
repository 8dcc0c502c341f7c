"""Direction classification (paper §3.4): forward, backward or bidirectional.

The pipeline talks to a :class:`DirectionPredictor`: one method,
``predict_direction(query, query_embedding=None) -> DirectionPrediction``. The
pipeline passes the query embedding it already computed for matching, so a classifier
that is a head over the shared encoder costs no extra forward pass.

Every classifier here also offers the batch API ``predict(queries) -> list[str]`` and
``predict_proba(queries) -> list[dict[str, float]]`` through
:class:`BaseDirectionClassifier`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from sarg_integrations.errors import InputError
from sarg_integrations.schema import Direction, DirectionPrediction

__all__ = [
    "LABELS",
    "MAX_QUERY_CHARS",
    "TRAINERS",
    "BaseDirectionClassifier",
    "CueWordDirectionClassifier",
    "DirectionPredictor",
    "FixedDirection",
    "check_queries",
    "check_query",
]

LABELS: tuple[str, ...] = ("forward", "backward", "bidirectional")
"""The class labels, in the order of the classifier head's rows."""

TRAINERS = ("auto", "setfit", "builtin")
"""The ways ``train_direction_classifier`` can train (its ``trainer`` argument);
``"auto"`` is ``"setfit"`` when the package is installed, else ``"builtin"``."""
MAX_QUERY_CHARS = 2000
"""Longer queries are cut to this many characters before encoding (the encoder reads
at most 256 word pieces anyway); the prediction's rationale says so."""


@runtime_checkable
class DirectionPredictor(Protocol):
    """Predicts which way to walk the reasoning graph for a query."""

    def predict_direction(
        self, query: str, query_embedding: Any | None = None
    ) -> DirectionPrediction:
        """Return the predicted direction of ``query``.

        Args:
            query: The user's question.
            query_embedding: The query's vector from the pipeline's encoder, when the
                caller has it; classifiers that need no vector ignore it.
        """
        ...


def check_query(query: Any, argument: str = "query") -> tuple[str, bool]:
    """Validate one query; return it (cut to :data:`MAX_QUERY_CHARS`) and whether it was cut.

    Runs of whitespace become one space.

    Raises:
        InputError: ``query`` is not a string, or is empty.
    """
    if not isinstance(query, str):
        msg = f"{argument} must be a string, got {type(query).__name__}; pass the question as text"
        raise InputError(msg, argument=argument, value=query)
    text = " ".join(query.split())
    if not text:
        msg = f"{argument}={query!r} is empty; pass a non-empty question"
        raise InputError(msg, argument=argument, value=query)
    if len(text) > MAX_QUERY_CHARS:
        return text[:MAX_QUERY_CHARS], True
    return text, False


def check_queries(queries: Any, *, normalize: bool = False) -> list[str]:
    """Validate a batch of queries: a list (not a single string) of strings.

    With ``normalize`` each query goes through :func:`check_query` (non-empty,
    whitespace collapsed, cut to :data:`MAX_QUERY_CHARS`); otherwise queries are kept
    as given.

    Raises:
        InputError: ``queries`` is a single string or not iterable, or a query is not
            a string (or, with ``normalize``, is empty).
    """
    if isinstance(queries, str):
        msg = (
            f"queries must be a list of strings, got the single string {queries[:60]!r}; "
            "wrap it in a list"
        )
        raise InputError(msg, argument="queries", value=queries)
    if not isinstance(queries, Iterable):
        msg = f"queries must be a list of strings, got {type(queries).__name__}"
        raise InputError(msg, argument="queries", value=queries)
    if normalize:
        return [check_query(q, f"queries[{i}]")[0] for i, q in enumerate(queries)]
    out = list(queries)
    for i, query in enumerate(out):
        if not isinstance(query, str):
            msg = f"queries[{i}] must be a string, got {type(query).__name__}"
            raise InputError(msg, argument=f"queries[{i}]", value=query)
    return out


class BaseDirectionClassifier:
    """Batch API over :meth:`predict_direction`: ``predict`` and ``predict_proba``."""

    def predict_direction(
        self, query: str, query_embedding: Any | None = None
    ) -> DirectionPrediction:
        """Return the predicted direction of one query."""
        raise NotImplementedError

    def predict(self, queries: Sequence[str]) -> list[str]:
        """Return the direction label (``"forward"``…) of each query."""
        return [self.predict_direction(q).direction.value for q in check_queries(queries)]

    def predict_proba(self, queries: Sequence[str]) -> list[dict[str, float]]:
        """Return each query's probability per direction label."""
        return [dict(self.predict_direction(q).scores) for q in check_queries(queries)]


class FixedDirection(BaseDirectionClassifier):
    """Always answers one direction (for ablations such as blind bidirectional search).

    Example:
        >>> FixedDirection("bidirectional").predict(["why?"])
        ['bidirectional']
    """

    def __init__(self, direction: Direction | str) -> None:
        self.direction = Direction.parse(direction)

    def predict_direction(
        self, query: str, query_embedding: Any | None = None
    ) -> DirectionPrediction:
        """Return the fixed direction."""
        return DirectionPrediction(
            direction=self.direction,
            confidence=1.0,
            scores={d.value: float(d is self.direction) for d in Direction},
            method="fixed",
            rationale=f"direction fixed to {self.direction.value}",
        )


# Each cue: (regular expression, weight). Weights let a specific cue ("what caused")
# outvote a generic one ("how").
_BACKWARD_CUES: tuple[tuple[str, float], ...] = (
    (r"\bwhy\b", 2.0),
    (
        r"\bwhat (?:\w+ ){0,2}(?:caused|causes|triggered|triggers|led to|leads to|drove|drives)\b",
        2.5,
    ),
    (r"\b(?:causes?|origins?|roots?|sources?|reasons?|drivers?) (?:of|for|behind)\b", 2.0),
    (r"\b(?:due to what|because of what|what explains|explains?|account(?:s|ed)? for)\b", 2.0),
    (
        r"\bhow (?:did|does|do|could|can|was|were) .+ (?:come about|happen|arise|develop|occur|start|begin)\b",
        2.0,
    ),
    (r"\b(?:what|which) (?:\w+ ){0,3}(?:is|are|was|were) (?:responsible|to blame)\b", 2.0),
    (
        r"\b(?:result(?:ed|s)? from|stem(?:med|s)? from|arise[sn]? from|prerequisites?|requires?|required|needed for)\b",
        1.5,
    ),
    (r"\bwhat (?:made|makes)\b", 1.5),
)
_FORWARD_CUES: tuple[tuple[str, float], ...] = (
    (r"\bwhat (?:happens|will happen|would happen|happened) (?:if|when|after)\b", 2.5),
    (r"\bwhat if\b", 2.5),
    (
        r"\b(?:effects?|consequences?|impacts?|outcomes?|results?|implications?|side effects?) of\b",
        2.0,
    ),
    (
        r"\bwhat (?:does|do|did|will|would|can|could) .+ (?:lead to|result in|cause|trigger|affect|produce|bring about|mean for)\b",
        2.5,
    ),
    (r"\b(?:lead|leads|led) to what\b", 2.5),
    (r"\b(?:affect|affects|impact|impacts|influence|influences)\b", 1.5),
    (r"\b(?:ultimately|eventually|downstream|in turn|go on to)\b", 1.0),
    (r"\bwhat (?:follows|comes next|comes after)\b", 2.0),
    (r"\bpredict\b", 1.5),
)
_BIDIRECTIONAL_CUES: tuple[tuple[str, float], ...] = (
    (r"\bhow (?:are|is|were|was) .+ (?:related|connected|linked|associated)\b", 3.0),
    (
        r"\b(?:relationship|connection|link|association|interplay|pathway|mechanism) (?:between|linking|connecting|from)\b",
        3.0,
    ),
    (r"\b(?:between .+ and)\b", 1.5),
    (r"\b(?:compare|comparison|versus|vs\.?|differ|difference)\b", 2.0),
    (r"\b(?:connect|connects|link|links|relate|relates)\b", 1.5),
    (r"\bboth\b", 1.0),
)


def _match(cues: tuple[tuple[str, float], ...], text: str) -> tuple[float, list[str]]:
    total, hits = 0.0, []
    for pattern, weight in cues:
        found = re.search(pattern, text)
        if found:
            total += weight
            hits.append(found.group(0))
    return total, hits


class CueWordDirectionClassifier(BaseDirectionClassifier):
    """A transparent rule classifier: weighted cue phrases per direction.

    Backward cues ask for causes ("why", "what caused", "reason for"); forward cues ask
    for effects ("what happens if", "consequences of", "what does X lead to");
    bidirectional cues ask for a link ("how are X and Y related", "between X and Y").
    With no cue, or a tie, the query gets ``default`` (bidirectional: explore both ways
    rather than miss the chain).

    Example:
        >>> clf = CueWordDirectionClassifier()
        >>> clf.predict(["Why did technology stocks sell off?",
        ...              "What does a GBA1 mutation ultimately lead to?",
        ...              "How are inflation and margin calls connected?"])
        ['backward', 'forward', 'bidirectional']
    """

    def __init__(self, default: Direction | str = Direction.BIDIRECTIONAL) -> None:
        self.default = Direction.parse(default)

    def predict_direction(
        self, query: str, query_embedding: Any | None = None
    ) -> DirectionPrediction:
        """Score each direction's cues and return the best one."""
        text = " ".join(query.lower().split())
        scored = {
            Direction.BACKWARD: _match(_BACKWARD_CUES, text),
            Direction.FORWARD: _match(_FORWARD_CUES, text),
            Direction.BIDIRECTIONAL: _match(_BIDIRECTIONAL_CUES, text),
        }
        totals = {d: s for d, (s, _) in scored.items()}
        best = max(totals.values())
        winners = [d for d, s in totals.items() if s == best]
        if best == 0.0 or len(winners) > 1:
            direction = self.default
            reason = (
                "no cue words"
                if best == 0.0
                else "tied cues " + ", ".join(f"{d.value}: {scored[d][1]}" for d in winners)
            )
            rationale = f"{reason}; default {direction.value}"
        else:
            direction = winners[0]
            rationale = f"cues {scored[direction][1]}"
        grand = sum(totals.values())
        # Add-one smoothing so a single weak cue does not claim certainty.
        probabilities = {d.value: (totals[d] + 1.0) / (grand + 3.0) for d in Direction}
        return DirectionPrediction(
            direction=direction,
            confidence=round(probabilities[direction.value], 4),
            scores={k: round(v, 4) for k, v in probabilities.items()},
            method="cue-words",
            rationale=rationale,
        )
