"""Small deterministic stand-ins for the models, shared by the unit tests."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Sequence

import numpy as np

from sarg_integrations.schema import RelationType, SourceDocument, Triple

CUES = {
    " causes ": ("causes", RelationType.CAUSAL),
    " leads to ": ("leads to", RelationType.CAUSAL),
    " results in ": ("results in", RelationType.CAUSAL),
    " requires ": ("requires", RelationType.PROCEDURAL),
    " precedes ": ("precedes", RelationType.TEMPORAL),
}


class PatternExtractor:
    """Turns sentences of the form "X causes Y." (and a few other cues) into triples.

    Args:
        lowercase: Lower-case the cause and the effect ("Storm" → "storm").
        fail_on: Raise ``RuntimeError("fake extractor failure")`` for a document
            containing this text (an extractor error the pipeline must survive).
    """

    def __init__(self, *, lowercase: bool = False, fail_on: str | None = None) -> None:
        self.calls = 0
        self.lowercase = lowercase
        self.fail_on = fail_on

    def extract(self, document: SourceDocument) -> list[Triple]:
        self.calls += 1
        if self.fail_on is not None and self.fail_on in document.text:
            raise RuntimeError("fake extractor failure")
        triples = []
        for match in re.finditer(r"[^.!?]+[.!?]?", document.text):
            sentence = match.group(0).strip()
            if not sentence:
                continue
            start = document.text.index(sentence, match.start())
            body = sentence.rstrip(".!?")
            for cue, (relation, kind) in CUES.items():
                if cue in body:
                    cause, effect = body.split(cue, 1)
                    if self.lowercase:
                        cause, effect = cause.lower(), effect.lower()
                    triples.append(
                        Triple(
                            cause.strip(),
                            relation,
                            effect.strip(),
                            kind,
                            document.id,
                            sentence,
                            (start, start + len(sentence)),
                        )
                    )
                    break
        return triples


class HashingEmbedder:
    """Bag-of-words vectors from hashed lower-cased words: same words, same vector."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim))
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                bucket = int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim
                out[row, bucket] += 1.0
        return out


class FixedKeyphrases:
    """Returns the given phrases for every query."""

    def __init__(self, *phrases: str) -> None:
        self.phrases = list(phrases)

    def extract(self, query: str) -> list[str]:
        return list(self.phrases)


class PastTenseWords:
    """An event reader: a document tells an event when a word ends in "-ed"."""

    def tells_event(self, text: str) -> bool:
        return re.search(r"[a-z]ed\b", text) is not None


class NoProfiles:
    """A profile reader that finds none: every statement may be a step of a story."""

    def states_profile(self, text: str) -> bool:
        return False


class ProfileWords:
    """A profile reader: a statement is a profile when it says "in general" or
    "provides"."""

    def states_profile(self, text: str) -> bool:
        return re.search(r"\bin general\b|\bprovides\b", text) is not None


STOPWORDS = frozenset(
    {"what", "does", "do", "a", "an", "the", "to", "lead", "leads", "why", "did", "of", "in"}
)


class QueryWords:
    """Every content word of the query is a key phrase (the query itself if none)."""

    def extract(self, query: str) -> list[str]:
        words = [w for w in re.findall(r"[a-z0-9]+", query.lower()) if w not in STOPWORDS]
        return words or [query]


# Two grounded triples a well-behaved LLM extracts from "Heavy rain causes floods in the
# valley. Floods damage the crops.", as the JSON answer the extractor asks for.
T_RAIN = {
    "cause": "heavy rain",
    "relation": "causes",
    "effect": "floods",
    "relation_type": "causal",
    "evidence": "Heavy rain causes floods in the valley.",
}
T_CROPS = {
    "cause": "floods",
    "relation": "damage",
    "effect": "the crops",
    "relation_type": "causal",
    "evidence": "Floods damage the crops.",
}
CLEAN = json.dumps([T_RAIN, T_CROPS])


_PROMPT_DOCUMENT = re.compile(r"<document>\n(.*?)\n</document>\n\nAnswer with only", re.DOTALL)
_CAUSES = re.compile(r"([A-Z][^.]*?) causes ([^.]+)\.")


def echo_answer(prompt: str) -> str:
    """Answer an LLM extraction prompt like a perfect model: one triple per "X causes Y."."""
    text = _PROMPT_DOCUMENT.findall(prompt)[-1]
    return json.dumps(
        [
            {
                "cause": m.group(1).lower(),
                "relation": "causes",
                "effect": m.group(2),
                "relation_type": "causal",
                "evidence": m.group(0),
            }
            for m in _CAUSES.finditer(text)
        ]
    )


class CountingEcho:
    """A sync fake LLM answering like :func:`echo_answer`; counts its calls (thread-safe).

    Args:
        on_call: Called with the call number (1, 2, …) before answering.
    """

    def __init__(self, on_call: Callable[[int], None] | None = None) -> None:
        self.calls = 0
        self.on_call = on_call
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        with self._lock:
            self.calls += 1
            n = self.calls
        if self.on_call is not None:
            self.on_call(n)
        return echo_answer(prompt)


def echo_extractor(cache: object, max_chunk_tokens: int = 1500) -> object:
    """An LLM extractor over :class:`CountingEcho` with ``cache`` (a picklable factory body:
    pass ``functools.partial(echo_extractor, cache)`` to worker processes and Ray)."""
    from sarg_integrations import LLMTripleExtractor

    return LLMTripleExtractor(
        CountingEcho(), cache=cache, model_identity="echo", max_chunk_tokens=max_chunk_tokens
    )
