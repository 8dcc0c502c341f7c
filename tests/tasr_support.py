"""The TaSR-RAG paper's worked example (Table 7) as scripted, model-free fixtures."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from fakes import HashingEmbedder

from sarg_integrations import SARGConfig, SARGPipeline
from sarg_integrations.schema import RelationType, SourceDocument, Triple
from sarg_integrations.tasr import OTHER, EntityType, LLMQueryDecomposer, Mention
from sarg_integrations.tasr.taxonomy import default_taxonomy

QUESTION = "Which database does Science Activity Planner use, and which company developed it?"

# The candidate pool D_cand of Table 7: Doc[1] answers hop 1, Doc[3] is an option list
# (a weak match that θ filters out), Doc[6] answers hop 2.
DOCS = [
    {"id": "Doc[1]", "text": "Science Activity Planner uses MySQL."},
    {"id": "Doc[3]", "text": "Science Activity Planner lists option PostgreSQL."},
    {"id": "Doc[6]", "text": "MySQL was developed by Oracle Corporation."},
]
TRIPLES = {
    "Doc[1]": [("Science Activity Planner", "uses", "MySQL")],
    "Doc[3]": [("Science Activity Planner", "lists option", "PostgreSQL")],
    "Doc[6]": [("MySQL", "developed by", "Oracle Corporation")],
}

# The paper types the planner as Work/System and the database as Work/Database, which
# Table 5 lacks: the taxonomy is extended, as users can.
TAXONOMY = default_taxonomy().extend({"WORK": ["System", "Database"]})
TYPES = {
    "Science Activity Planner": EntityType("WORK", "System"),
    "MySQL": EntityType("WORK", "Database"),
    "PostgreSQL": EntityType("WORK", "SoftwareProject"),
    "Oracle Corporation": EntityType("ORGANIZATION", "Company"),
}

# What an LLM answers when asked to decompose the question (Table 7, step 2).
DECOMPOSITION = {
    "subqueries": [
        {
            "subject": "Science Activity Planner",
            "relation": "uses",
            "object": "?x",
            "subject_type": "Work/System",
            "object_type": "Work/Database",
        },
        {
            "subject": "?x",
            "relation": "developed_by",
            "object": "?y",
            "subject_type": "Work/Database",
            "object_type": "Organization/Company",
        },
    ],
    "variables": {"?x": "database", "?y": "company"},
}
ANSWER = "```json\n" + json.dumps(DECOMPOSITION) + "\n```"


# How an LLM types the example's entities with the default taxonomy (Table 5, which has
# no Work/Database): what `llm=` alone, without DictTyper, types them as.
LLM_TYPES = {
    "Science Activity Planner": "WORK/SoftwareProject",
    "MySQL": "WORK/SoftwareProject",
    "PostgreSQL": "WORK/SoftwareProject",
    "Oracle Corporation": "ORGANIZATION/Company",
}


def reply(prompt: str) -> str:
    """An LLM's answer to a TaSR prompt: the decomposition, or the numbered mentions' types."""
    if "You type entities" not in prompt:
        return ANSWER
    mentions = re.findall(r"^(\d+)\. (.+?)(?:  \(in: .*)?$", prompt, flags=re.MULTILINE)
    types = [{"id": int(i), "type": LLM_TYPES.get(text, "OTHER")} for i, text in mentions]
    return json.dumps({"types": types})


def tasr_llm() -> Any:
    """A plain callable answering both TaSR prompts (:func:`reply`); records its prompts."""

    def llm(prompt: str) -> str:
        llm.prompts.append(prompt)  # type: ignore[attr-defined]
        return reply(prompt)

    llm.prompts = []  # type: ignore[attr-defined]
    return llm


class FixedTriples:
    """Returns the given triples of each document (sentence = the document text)."""

    def __init__(self, triples: dict[str, list[tuple[str, str, str]]] | None = None) -> None:
        self.triples = TRIPLES if triples is None else triples

    def extract(self, document: SourceDocument) -> list[Triple]:
        return [
            Triple(
                c, r, e, RelationType.GENERIC, document.id, document.text, (0, len(document.text))
            )
            for c, r, e in self.triples.get(document.id, [])
        ]


class DictTyper:
    """Types mentions from a fixed table (OTHER for anything else)."""

    def __init__(self, table: dict[str, EntityType] | None = None) -> None:
        self.table = TYPES if table is None else table
        self.seen: list[str] = []

    def type_mentions(self, mentions: Sequence[Mention]) -> list[EntityType]:
        self.seen.extend(m.text for m in mentions)
        return [self.table.get(m.text, OTHER) for m in mentions]


def scripted_llm(answer: str = ANSWER) -> Any:
    """A plain callable standing in for the decomposing LLM; records its prompts."""

    def llm(prompt: str) -> str:
        llm.prompts.append(prompt)  # type: ignore[attr-defined]
        return answer

    llm.prompts = []  # type: ignore[attr-defined]
    return llm


def components(llm: Any = None) -> dict[str, Any]:
    """The collaborators of a TaSR pipeline / adapter on the worked example."""
    return {
        "extractor": FixedTriples(),
        "embedder": HashingEmbedder(),
        "query_decomposer": LLMQueryDecomposer(llm or scripted_llm(), taxonomy=TAXONOMY),
        "entity_typer": DictTyper(),
    }


CONFIG = {"strategy": "tasr", "tasr_threshold": 0.7}


def pipeline(llm: Any = None, **config: Any) -> SARGPipeline:
    return SARGPipeline(SARGConfig(**{**CONFIG, **config}), **components(llm))
