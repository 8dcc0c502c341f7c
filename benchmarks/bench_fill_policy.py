"""Replay the default evidence fill on every multi-hop question, against flat top-k.

For a question about something (what the direction classifier calls nearly every
HotpotQA, MuSiQue and 2Wiki question), the default evidence is the bridge-guided
relevance fill within half of the retrieved tokens, plus the rare chain told across
documents. This script replays that fill with the package's own
:func:`~sarg_integrations.evidence.fill_evidence` (no extraction, so a whole file takes
minutes instead of an hour) and prints supporting-paragraph recall, side by side in one
run, for:

* ``flat``: flat top-k by the same MiniLM relevance, packed the same way (a paragraph
  that would overflow the tokens is passed over, the next one tried);
* ``bridges``: the fill following entity bridges on every question;
* ``before``: the fill as shipped before the nineteenth session, which followed a topic
  however many documents mention it (``bridge_max_mentions=None``), and no bridge for
  any comparison;
* ``default``: the fill as shipped
  (:func:`~sarg_integrations.evidence.fill_follows_bridges`), relevance alone for a
  question comparing the things it names unless it compares things related to them by
  a role ("the director of …"), and no bridge over a
  topic more than :data:`~sarg_integrations.links.BRIDGE_MAX_MENTIONS` documents mention.

``sarg eval`` measures the whole pipeline at the same token budget; on HotpotQA 0-199 the
two agree within two points (token budget, 2026-12-03: this replay 89.5 vs 79.5 %, ``sarg
eval`` 88.8 vs 81.0 %; HotpotQA 200-499, 246 of 300 comparisons: 92.8 vs 91.8 %, following
bridges everywhere 80.3 %). MuSiQue 140-199 (2026-12-04): this replay 70.0 (every topic)
and 73.3 % (default) against flat 70.3 %, ``sarg eval`` 70.0 vs 70.4 % and 73.3 vs 69.9 %.

Usage::

    python benchmarks/bench_fill_policy.py                       # every question of the three files
    python benchmarks/bench_fill_policy.py --datasets musique --offset 150 --limit 30

The data folder is ``<repo>/../shared/data`` or ``$SARG_SHARED_DATA``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sarg_integrations.embedding import SentenceTransformerEmbedder  # noqa: E402
from sarg_integrations.evaluation.datasets import load_dataset  # noqa: E402
from sarg_integrations.evidence import (  # noqa: E402
    asks_to_compare,
    document_relevance,
    fill_evidence,
    fill_follows_bridges,
    passage_tokens,
)
from sarg_integrations.links import BRIDGE_MAX_MENTIONS  # noqa: E402

POLICIES = ("flat", "bridges", "before", "default")


def replay(question, embedder, share: float) -> dict[str, float]:
    """Supporting-paragraph recall of each policy on one question."""
    docs = [d for d in question.paragraphs if d.text.strip()]
    query_vector = embedder.embed([question.question])
    relevance = document_relevance(docs, embedder, query_vector)
    budget = round(share * sum(passage_tokens(d) for d in docs))
    supporting = set(question.supporting_ids)
    bridges = {"flat": False, "bridges": True, "before": not asks_to_compare(question.question),
               "default": fill_follows_bridges(question.question)}
    out = {}
    for policy in POLICIES:
        picked = fill_evidence(
            docs, [], None, embedder, query_vector, {},
            budget_tokens=budget, relevance=relevance, bridges=bridges[policy],
            bridge_max_mentions=None if policy == "before" else BRIDGE_MAX_MENTIONS,
        )
        found = supporting & {p.document_id for p in picked}
        out[policy] = len(found) / len(supporting) if supporting else 0.0
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="hotpotqa,musique,2wiki")
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None, help="default: every question")
    parser.add_argument("--share", type=float, default=0.5, help="the token budget's share")
    args = parser.parse_args(argv)
    embedder = SentenceTransformerEmbedder()
    print(f"supporting-paragraph recall (%), fill within {args.share:.0%} of the tokens")
    print("| dataset | questions | comparisons | flat top-k, packed | bridges everywhere "
          "| before (every topic bridges, none on a comparison) | default | default − flat |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        questions = load_dataset(name, offset=args.offset, limit=args.limit)
        totals = dict.fromkeys(POLICIES, 0.0)
        for question in questions:
            for policy, recall in replay(question, embedder, args.share).items():
                totals[policy] += recall
        n = max(len(questions), 1)
        mean = {p: 100 * totals[p] / n for p in POLICIES}
        compared = sum(asks_to_compare(q.question) for q in questions)
        print(f"| {name} {args.offset}–{args.offset + len(questions) - 1} | {len(questions)} "
              f"| {compared} | {mean['flat']:.1f} | {mean['bridges']:.1f} "
              f"| {mean['before']:.1f} | {mean['default']:.1f} "
              f"| {mean['default'] - mean['flat']:+.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
