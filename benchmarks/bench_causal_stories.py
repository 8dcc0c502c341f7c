"""The default evidence on causal stories: every chain document in, no distractor.

Runs ``SARGPipeline()`` (the default: learned tagger, ``evidence_budget=0.5``) and the
paper's evidence (``SARGConfig.paper()``) on the team's causal stories
(``benchmarks/data/causal_stories.jsonl``: a story told across three documents plus two
attributive distractor documents, and a why / what-led-to question) and on the demo
corpus's two questions (the other story's documents are the distractors). Prints, per
story, the chain documents the evidence holds and misses, the distractors it lets in, and
the share of the retrieved words used.

``--stories FILE`` runs another file of stories in the same format instead, without the
demo corpus's questions: ``benchmarks/data/causal_stories_untuned.jsonl`` holds 4,180
stories written from 2026-12-05 on by helpers that saw no code (sets ``a`` and ``b`` of
50, ``c`` to ``z``, ``za`` to ``zz``, ``zza`` to ``zzz`` and ``zzza`` to ``zzzz`` of 40
with more varied writing; see ``docs/evaluation.md``).

Usage::

    python benchmarks/bench_causal_stories.py
    python benchmarks/bench_causal_stories.py --stories benchmarks/data/causal_stories_untuned.jsonl
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sarg_integrations import SARGConfig, SARGPipeline, SourceDocument  # noqa: E402
from sarg_integrations.io import load_demo_corpus  # noqa: E402

STORIES = Path(__file__).resolve().parent / "data" / "causal_stories.jsonl"
_WORD = re.compile(r"\w+")


def load_stories(path: Path = STORIES, *, demo: bool = True) -> list[dict]:
    """The stories of ``path`` plus (``demo``) the demo corpus's two questions, as dicts
    with ``id``, ``question``, ``documents`` (SourceDocument), ``chain`` and
    ``distractors``."""
    stories = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        s = json.loads(line)
        docs = [SourceDocument(d["id"], d["text"]) for d in s["documents"]]
        chain = list(s["chain"])
        stories.append({"id": s["id"], "set": s.get("set"), "question": s["question"],
                        "documents": docs, "chain": chain,
                        "distractors": [d.id for d in docs if d.id not in chain]})
    if not demo:
        return stories
    corpus = load_demo_corpus()
    gaucher = [d.id for d in corpus if d.id.startswith("gaucher-")]
    market = [d.id for d in corpus if d.id.startswith("market-")]
    stories.append({"id": "demo-gba1", "question": "What does a mutation in the GBA1 gene ultimately lead to?",
                    "documents": corpus, "chain": gaucher, "distractors": market})
    # market-leverage is the story's forward continuation (margin calls), neither part of
    # the answer to "why" nor a distractor.
    stories.append({"id": "demo-selloff", "question": "Why did technology stocks sell off?",
                    "documents": corpus,
                    "chain": ["market-central-bank", "market-bonds", "market-tech"], "distractors": gaucher})
    return stories


def check(pipeline: SARGPipeline, story: dict) -> dict:
    result = pipeline.run(story["question"], story["documents"])
    held = [p.document_id for p in result.evidence]
    words = {d.id: len(_WORD.findall(d.text)) for d in story["documents"]}
    return {
        "missing": [d for d in story["chain"] if d not in held],
        "distractors": [d for d in held if d in story["distractors"]],
        "share": sum(words[d] for d in held) / sum(words.values()),
        "fallback": result.used_fallback,
        "selected_by": [(p.document_id, p.selected_by) for p in result.evidence],
    }


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--stories", type=Path, help="another JSONL file of stories (no demo questions)"
    )
    args = parser.parse_args(argv)
    pipelines = {"default": SARGPipeline(), "paper": SARGPipeline(SARGConfig.paper())}
    print("| story | evidence | chain docs held | missing | distractors in | words used | fallback |")
    print("|---|---|---:|---|---|---:|---|")
    passed = dict.fromkeys(pipelines, 0)
    by_set: dict[tuple[str, str], list[int]] = {}
    stories = load_stories() if args.stories is None else load_stories(args.stories, demo=False)
    for story in stories:
        for name, pipeline in pipelines.items():
            out = check(pipeline, story)
            ok = not out["missing"] and not out["distractors"]
            passed[name] += ok
            if story.get("set"):
                tally = by_set.setdefault((name, story["set"]), [0, 0])
                tally[0] += ok
                tally[1] += 1
            held = len(story["chain"]) - len(out["missing"])
            print(f"| {story['id']} | {name} | {held}/{len(story['chain'])} | {', '.join(out['missing']) or '–'} | "
                  f"{', '.join(out['distractors']) or '–'} | {out['share']:.0%} | {out['fallback']} |")
    for name, n in passed.items():
        print(f"{name}: {n}/{len(stories)} stories with every chain document and no distractor")
    for (name, tag), (ok, total) in sorted(by_set.items()):
        print(f"{name}, set {tag}: {ok}/{total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
