"""The evaluation run loop: per-question records (resumable), aggregates, Markdown, plots.

:func:`run_evaluation` loads a dataset, runs every method of a
:class:`~sarg_integrations.evaluation.methods.MethodSuite` on each question and appends
one JSON line per question to ``<out>/<dataset>.records.jsonl`` as soon as it is done.
Rerunning with the same settings skips the questions already recorded, so an
interrupted run resumes where it stopped. At the end it writes ``<dataset>.json``
(settings, aggregates, records), ``<dataset>.md`` (tables) and, when matplotlib is
installed, ``<dataset>_sweeps.png`` and ``<dataset>_by_hops.png``.

Metrics without an LLM are always computed; with ``llm`` the method prompts are also
answered and scored by EM/F1 (official normalisation), answer tokens and latency.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sarg_integrations._text import markdown_cell, markdown_code
from sarg_integrations.errors import InputError
from sarg_integrations.io import split_json_lines
from sarg_integrations.evaluation.datasets import EvalQuestion, load_dataset
from sarg_integrations.evaluation.methods import (
    BASE_METHODS,
    BUDGET_BASELINES,
    TASR_METHODS,
    MethodOutput,
    MethodSuite,
)
from sarg_integrations.evaluation.metrics import (
    answer_in_text,
    count_tokens,
    exact_match,
    f1_score,
    max_over_answers,
    support_precision,
    support_recall,
)

__all__ = ["ANSWER_SUFFIX", "EvalReport", "aggregate", "markdown_report", "run_evaluation"]

ANSWER_SUFFIX = "\nEnd with one line 'Answer: <short answer>' (a few words, or yes/no)."
RECORD_VERSION = 1


@dataclass
class EvalReport:
    """The outcome of one :func:`run_evaluation`.

    Attributes:
        dataset: The dataset name.
        settings: The run's settings (what resume checks).
        records: One dict per question, in dataset order.
        aggregates: Method → metric → mean (and the breakdowns).
        markdown: The Markdown tables.
        paths: Written files by kind (``records``, ``json``, ``markdown``, plots).
    """

    dataset: str
    settings: dict[str, Any]
    records: list[dict[str, Any]]
    aggregates: dict[str, Any]
    markdown: str
    paths: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------- LLM


class _Answerer:
    """Answers prompts with any LangChain / LlamaIndex / callable model."""

    def __init__(self, llm: Any) -> None:
        from sarg_integrations.models.completion import as_completion_model
        from sarg_integrations.models.sync import SyncRunner

        if isinstance(llm, str):
            from sarg_integrations.models.specs import resolve_llm_spec

            llm = resolve_llm_spec(llm)
        self.model = as_completion_model(llm, structured_output=False, max_workers=1)
        self._runner = SyncRunner()  # not asyncio.run: that fails inside Jupyter's loop

    def __call__(self, prompt: str) -> dict[str, Any]:
        from sarg_integrations.models.completion import CompletionRequest

        request = CompletionRequest(messages=(("user", prompt),))
        start = time.perf_counter()
        completion = self._runner.run(self.model.acomplete(request))
        latency = (time.perf_counter() - start) * 1000.0
        text = completion.text or ""
        return {
            "prediction": extract_answer(text),
            "raw_answer": text,
            "latency_ms": round(latency, 3),
            "answer_tokens": completion.completion_tokens
            if completion.completion_tokens is not None
            else count_tokens(text),
            "llm_prompt_tokens": completion.prompt_tokens,
        }


def extract_answer(text: str) -> str:
    r"""The short answer in a model's reply: after the last ``Answer:``, else the last line.

    Example:
        >>> extract_answer("Step 1 ... so.\nAnswer: Paris.")
        'Paris.'
    """
    matches = re.findall(r"answer\s*:\s*(.+)", text, flags=re.IGNORECASE)
    if matches:
        return matches[-1].strip()
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


# --------------------------------------------------------------------------- records


def _score(question: EvalQuestion, output: MethodOutput) -> dict[str, Any]:
    gold = question.supporting_ids
    ids = list(dict.fromkeys(output.evidence_ids))
    row: dict[str, Any] = {
        "support_recall": support_recall(ids, gold),
        "support_precision": support_precision(ids, gold) if ids else None,
        "answer_recall": answer_in_text(output.evidence_text, question.answers),
        "prompt_tokens": output.prompt_tokens,
        "paragraphs": len(ids),
        "evidence_ids": ids,
        "times_ms": output.times_ms,
    }
    if output.chains is not None:
        row.update(
            chains=output.chains,
            fallback=output.fallback,
            faithful_hops=output.faithful_hops,
            total_hops=output.total_hops,
            faithfulness=(output.faithful_hops / output.total_hops) if output.total_hops else None,
            stats=output.stats,
        )
    elif output.fallback is not None:
        row["fallback"] = output.fallback
    if "budget_tokens" in output.stats:
        row["budget_tokens"] = output.stats["budget_tokens"]
    return row


def _record(
    question: EvalQuestion,
    outputs: Mapping[str, MethodOutput],
    answerer: _Answerer | None,
) -> dict[str, Any]:
    methods: dict[str, Any] = {}
    answers_by_prompt: dict[str, dict[str, Any]] = {}
    for name, output in outputs.items():
        row = _score(question, output)
        if answerer is not None:
            prompt = output.prompt + ANSWER_SUFFIX
            if prompt not in answers_by_prompt:
                answers_by_prompt[prompt] = answerer(prompt)
            answer = dict(answers_by_prompt[prompt])
            answer["em"] = max_over_answers(exact_match, answer["prediction"], question.answers)
            answer["f1"] = max_over_answers(f1_score, answer["prediction"], question.answers)
            row.update(answer)
        methods[name] = row
    return {
        "id": question.id,
        "question": question.question,
        "answer": question.answer,
        "aliases": list(question.aliases),
        "hops": question.hops,
        "qtype": question.qtype,
        "supporting_ids": list(question.supporting_ids),
        "n_paragraphs": len(question.paragraphs),
        "methods": methods,
    }


def _read_records(path: Path, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    r"""Records already on disk for these settings (resume); id → record.

    A run killed while appending leaves a last line without its ``\n`` (a record cut
    mid-way): it is cut off the file with a warning, so that question is recomputed and
    the next record starts on a line of its own. Any other line that is not JSON is
    skipped with a warning (its question is recomputed). A file holding only a cut
    header is started over.
    """
    if not path.is_file():
        return {}
    done: dict[str, dict[str, Any]] = {}
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        complete = data[: data.rfind(b"\n") + 1]
        cut = data[len(complete) :]
        with path.open("r+b") as handle:
            handle.truncate(len(complete))
        warnings.warn(
            f"{path}: the last line was cut by an interrupted run ({len(cut)} bytes "
            f"without an end of line, starting {cut[:40]!r}); ignored, its question is "
            "recomputed",
            stacklevel=3,
        )
        data = complete
    text = data.decode("utf-8", errors="replace")
    numbered = [
        (number, line)
        for number, line in enumerate(split_json_lines(text), start=1)
        if line.strip()
    ]
    if not numbered:
        return {}
    try:
        header = json.loads(numbered[0][1])
    except json.JSONDecodeError:
        header = {}
    if not isinstance(header, dict) or header.get("_settings") != json.loads(json.dumps(settings)):
        found = header.get("_settings") if isinstance(header, dict) else None
        msg = (
            f"{path} holds records of a run with other settings ({found}); "
            "pass another --out folder, or fresh=True / --fresh to start over"
        )
        raise InputError(msg, argument="out", value=str(path))
    for number, line in numbered[1:]:
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            warnings.warn(
                f"{path}:{number}: not a JSON record ({exc.msg}); ignored, its question "
                "is recomputed",
                stacklevel=3,
            )
            continue
        if isinstance(record, dict) and "id" in record:
            done[record["id"]] = record
    return done


# --------------------------------------------------------------------------- aggregates


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(statistics.fmean(vals), 4) if vals else None


_METRICS = (
    "support_recall",
    "support_precision",
    "answer_recall",
    "prompt_tokens",
    "paragraphs",
    "chains",
    "fallback",
    "faithfulness",
    "em",
    "f1",
    "answer_tokens",
    "latency_ms",
)


def _method_means(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for metric in _METRICS:
        values = [r.get(metric) for r in rows if metric in r]
        if values:
            out[metric] = _mean([float(v) if v is not None else None for v in values])
    hops = sum(r.get("total_hops", 0) for r in rows)
    if any("total_hops" in r for r in rows):
        out["faithful_hop_share"] = (
            round(sum(r.get("faithful_hops", 0) for r in rows) / hops, 4) if hops else None
        )
    times: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        for stage, ms in (r.get("times_ms") or {}).items():
            times[stage].append(ms)
    out["times_ms"] = {stage: round(statistics.fmean(v), 2) for stage, v in sorted(times.items())}
    for key in ("beam_expansions", "nodes", "edges", "triples"):
        values = [
            r["stats"].get(key) for r in rows if r.get("stats") and r["stats"].get(key) is not None
        ]
        if values:
            out[key] = round(statistics.fmean(values), 2)
    return out


def _compare(records: Sequence[Mapping[str, Any]], a: str, b: str) -> dict[str, Any] | None:
    pairs = [
        (r["methods"][a], r["methods"][b])
        for r in records
        if a in r["methods"] and b in r["methods"]
    ]
    if not pairs:
        return None
    non_fb = [(x, y) for x, y in pairs if not x.get("fallback")]
    return {
        "n": len(pairs),
        f"{a}_recall": _mean([x["support_recall"] for x, _ in pairs]),
        f"{b}_recall": _mean([y["support_recall"] for _, y in pairs]),
        "share_below": round(
            sum(x["support_recall"] < y["support_recall"] for x, y in pairs) / len(pairs), 4
        ),
        "share_above": round(
            sum(x["support_recall"] > y["support_recall"] for x, y in pairs) / len(pairs), 4
        ),
        f"{a}_tokens": _mean([x["prompt_tokens"] for x, _ in pairs]),
        f"{b}_tokens": _mean([y["prompt_tokens"] for _, y in pairs]),
        "fallback_share": _mean([float(bool(x.get("fallback"))) for x, _ in pairs]),
        "n_chain_questions": len(non_fb),
        f"{a}_recall_chain_questions": _mean([x["support_recall"] for x, _ in non_fb]),
        f"{b}_recall_chain_questions": _mean([y["support_recall"] for _, y in non_fb]),
    }


def aggregate(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Means per method and the :data:`COMPARISONS`, overall, by hops and by type.

    A comparison whose two methods were not both run is ``None``.
    """
    by_method: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        for name, row in record["methods"].items():
            by_method[name].append(row)
    out: dict[str, Any] = {"n_questions": len(records)}
    out["methods"] = {name: _method_means(rows) for name, rows in by_method.items()}
    for a, b, _ in COMPARISONS:
        out[f"{a}_vs_{b}"] = _compare(records, a, b)
    for key in ("hops", "qtype"):
        groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for record in records:
            groups[str(record.get(key))].append(record)
        out[f"by_{key}"] = {
            group: {
                **{group_key: _compare(rows, a, b) for a, b, group_key in COMPARISONS},
                "methods": {
                    name: {
                        m: v
                        for m, v in _method_means(
                            [r["methods"][name] for r in rows if name in r["methods"]]
                        ).items()
                        if m
                        in (
                            "n",
                            "support_recall",
                            "answer_recall",
                            "prompt_tokens",
                            "em",
                            "f1",
                            "fallback",
                        )
                    }
                    for name in by_method
                    if any(name in r["methods"] for r in rows)
                },
            }
            for group, rows in sorted(groups.items())
        }
    return out


# --------------------------------------------------------------------------- Markdown


def _fmt(value: Any, pct: bool = False) -> str:
    if value is None:
        return "–"
    if pct:
        return f"{100 * value:.1f}"
    if isinstance(value, float):
        return (
            f"{value:.0f}"
            if abs(value) >= 100
            else f"{value:.3g}"
            if abs(value) < 1
            else f"{value:.1f}"
        )
    return str(value)


COMPARISONS = tuple(
    (method, baseline, "comparison" + baseline.removeprefix("flat_topk_budget"))
    for baseline, method in BUDGET_BASELINES.items()
)
"""(method, flat top-k at that method's prompt-token budget, key in ``by_hops`` /
``by_qtype`` groups) triples compared, one per :data:`BUDGET_BASELINES` entry:
``("sarg", "flat_topk_budget", "comparison")``, ``("sarg_fill", "flat_topk_budget_fill",
"comparison_fill")``, ``("tasr", "flat_topk_budget_tasr", "comparison_tasr")``. The
overall comparison is ``"{a}_vs_{b}"``."""


def _comparison_table(aggregates: Mapping[str, Any], a: str, b: str, group_key: str) -> list[str]:
    """Markdown rows comparing method ``a`` with ``b`` overall, by hops and by type.

    No rows when the pair was not run (its comparison is ``None`` or absent).
    """
    overall = aggregates.get(f"{a}_vs_{b}")
    if not overall:
        return []
    lines = [
        "",
        f"`{a}` against flat top-k at `{a}`'s own prompt-token budget (`{b}`; "
        f"supporting-paragraph recall, %; 'below' = share of questions where `{a}`'s "
        f"recall is lower; 'chain q.' = only the questions where `{a}` found chains, i.e. "
        "did not fall back):",
        "",
        f"| group | n | {a} | {b} | below | above | fallback | chain q. n | "
        f"{a} (chain q.) | {b} (chain q.) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups = [("all", overall)]
    groups += [(f"hops={k}", v.get(group_key)) for k, v in aggregates.get("by_hops", {}).items()]
    groups += [
        (f"type={markdown_cell(k)}", v.get(group_key))
        for k, v in aggregates.get("by_qtype", {}).items()
        if k != "None"
    ]
    for label, c in groups:
        if not c:
            continue
        lines.append(
            f"| {label} | {c['n']} | {_fmt(c[f'{a}_recall'], True)} | "
            f"{_fmt(c[f'{b}_recall'], True)} | {_fmt(c['share_below'], True)} | "
            f"{_fmt(c['share_above'], True)} | {_fmt(c['fallback_share'], True)} | "
            f"{c['n_chain_questions']} | {_fmt(c[f'{a}_recall_chain_questions'], True)} | "
            f"{_fmt(c[f'{b}_recall_chain_questions'], True)} |"
        )
    return lines


def markdown_report(
    dataset: str, aggregates: Mapping[str, Any], settings: Mapping[str, Any]
) -> str:
    """Render the aggregates as Markdown tables."""
    methods = aggregates["methods"]
    has_llm = any("em" in m for m in methods.values())
    keys = ("limit", "offset", "seed", "shuffle_distractors", "flat_top_k", "sweep_limit", "llm")
    shown = {k: settings[k] for k in keys if k in settings}
    lines = [
        f"### {markdown_cell(dataset)}: {aggregates['n_questions']} questions",
        "",
        f"Settings: {markdown_code(json.dumps(shown))}",
        "",
        "Supp. R/P: supporting-paragraph recall/precision of the paragraphs in the prompt (%); "
        "Ans. R: gold answer string in the prompt's evidence (%); tokens: estimated prompt tokens "
        "(regex estimate); fallback: share of questions where SARG used the flat context (%); "
        "faithful: share of chain hops whose source sentence is in the cited paragraph (%); "
        "time: mean wall time per question (ms).",
        "",
    ]
    header = "| method | n | Supp. R | Supp. P | Ans. R | tokens | chains | fallback | faithful | time ms |"  # noqa: E501
    sep = "|---|---|---|---|---|---|---|---|---|---|"
    if has_llm:
        header += " EM | F1 | ans. tokens | latency ms |"
        sep += "---|---|---|---|"
    lines += [header, sep]
    order = [m for m in BASE_METHODS if m in methods] + sorted(
        m for m in methods if m not in BASE_METHODS
    )
    for name in order:
        m = methods[name]
        row = (
            f"| {markdown_cell(name)} | {m['n']} | {_fmt(m.get('support_recall'), True)} | "
            f"{_fmt(m.get('support_precision'), True)} | {_fmt(m.get('answer_recall'), True)} | "
            f"{_fmt(m.get('prompt_tokens'))} | {_fmt(m.get('chains'))} | "
            f"{_fmt(m.get('fallback'), True)} | {_fmt(m.get('faithful_hop_share'), True)} | "
            f"{_fmt(m.get('times_ms', {}).get('total'))} |"
        )
        if has_llm:
            row += (
                f" {_fmt(m.get('em'), True)} | {_fmt(m.get('f1'), True)} | "
                f"{_fmt(m.get('answer_tokens'))} | {_fmt(m.get('latency_ms'))} |"
            )
        lines.append(row)
    stage_rows = [(n, methods[n]["times_ms"]) for n in ("sarg", "sarg_spo") if n in methods]
    if stage_rows:
        stages = [
            "extract",
            "build",
            "match",
            "direction",
            "traverse",
            "compile",
            "encoder",
            "total",
        ]
        lines += [
            "",
            "Per-stage time of SARG (mean ms per question; extraction is done once per "
            "schema and cached for the other variants):",
            "",
            "| method | " + " | ".join(stages) + " | nodes | edges | beam expansions |",
            "|---" * (len(stages) + 4) + "|",
        ]
        for name, times in stage_rows:
            m = methods[name]
            lines.append(
                f"| {markdown_cell(name)} | "
                + " | ".join(_fmt(times.get(s)) for s in stages)
                + f" | {_fmt(m.get('nodes'))} | {_fmt(m.get('edges'))} | {_fmt(m.get('beam_expansions'))} |"  # noqa: E501
            )
    for a, b, group_key in COMPARISONS:
        lines += _comparison_table(aggregates, a, b, group_key)
    sweeps = [n for n in order if n.startswith(("sarg_beam", "sarg_topk"))]
    if sweeps:
        lines += [
            "",
            "Sweeps (β = beam width, K = chains kept; the default β=3, K=3 is `sarg`):",
            "",
            "| setting | n | Supp. R | Supp. P | Ans. R | tokens | chains | fallback | beam expansions | traverse ms |",  # noqa: E501
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name in sorted(
            sweeps, key=lambda n: (n.startswith("sarg_topk"), int(re.sub(r"\D", "", n)))
        ):
            m = methods[name]
            lines.append(
                f"| {markdown_cell(name)} | {m['n']} | {_fmt(m.get('support_recall'), True)} | {_fmt(m.get('support_precision'), True)} | "  # noqa: E501
                f"{_fmt(m.get('answer_recall'), True)} | {_fmt(m.get('prompt_tokens'))} | {_fmt(m.get('chains'))} | "  # noqa: E501
                f"{_fmt(m.get('fallback'), True)} | {_fmt(m.get('beam_expansions'))} | "
                f"{_fmt(m.get('times_ms', {}).get('traverse'))} |"
            )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- run


def make_out_dir(out_dir: str | os.PathLike[str]) -> Path:
    """Create the output folder; a file in the way or a read-only parent is an InputError."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, a read-only parent, …
        problem = "is a file" if out.is_file() else f"cannot be created ({exc.strerror})"
        msg = f"out_dir={str(out)!r} {problem}; pass a folder path (it is created if missing)"
        raise InputError(msg, argument="out_dir", value=str(out)) from None
    return out


def record_each(
    todo: Sequence[Any],
    compute: Callable[[Any], dict[str, Any]],
    records_path: Path,
    settings: Mapping[str, Any],
    done: dict[str, dict[str, Any]],
    *,
    total: int,
    progress: bool,
    desc: str,
    unit: str = "it",
) -> None:
    """Compute each item's record and append it to ``records_path`` at once (resumable).

    Writes the settings header first when the file is new; adds each record to
    ``done`` under the item's ``id``.
    """
    if not records_path.exists() or records_path.stat().st_size == 0:
        from sarg_integrations._atomic import atomic_write_text

        atomic_write_text(records_path, json.dumps({"_settings": settings}) + "\n")
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=total - len(todo), desc=desc, unit=unit)
    try:
        for item in todo:
            record = compute(item)
            _append_line(records_path, json.dumps(record, ensure_ascii=False) + "\n")
            done[item.id] = record
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()


def _append_line(path: Path, line: str) -> None:
    """Append one whole line to ``path``, or nothing: a failed write is cut back off.

    A full disk or an error mid-write truncates the file back to its size before the
    write, so no half record is left for the next line to be glued to. (A process killed
    mid-write can still leave one; :func:`_read_records` cuts it off on resume.)
    """
    data = line.encode("utf-8")
    with path.open("ab") as handle:
        size = handle.tell()
        try:
            handle.write(data)
            handle.flush()
        except BaseException:
            with contextlib.suppress(OSError):
                handle.truncate(size)
            raise


def write_summary(
    out: Path,
    dataset: str,
    settings: Mapping[str, Any],
    aggregates: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    markdown: str,
) -> dict[str, str]:
    """Write ``<dataset>.json`` (settings, aggregates, records) and ``<dataset>.md``."""
    from sarg_integrations._atomic import atomic_write_text

    json_path = out / f"{dataset}.json"
    atomic_write_text(
        json_path,
        json.dumps(
            {"settings": settings, "aggregates": aggregates, "records": records},
            indent=1,
            ensure_ascii=False,
        ),
    )
    md_path = out / f"{dataset}.md"
    atomic_write_text(md_path, markdown)
    return {"json": str(json_path), "markdown": str(md_path)}


def run_evaluation(
    dataset: str,
    data: str | os.PathLike[str] | None = None,
    *,
    limit: int | None = None,
    offset: int = 0,
    seed: int = 0,
    shuffle_distractors: bool = False,
    llm: Any = None,
    out_dir: str | os.PathLike[str] = "benchmarks/results/eval",
    methods: Sequence[str] | None = None,
    sweeps: bool = True,
    sweep_limit: int | None = None,
    flat_top_k: int = 5,
    suite: MethodSuite | None = None,
    suite_factory: Callable[[], MethodSuite] | None = None,
    progress: bool = True,
    fresh: bool = False,
    plots: bool = True,
    report_only: bool = False,
) -> EvalReport:
    """Evaluate every method on ``dataset`` and write records, tables and plots.

    Args:
        dataset: ``"hotpotqa"``, ``"musique"`` or ``"2wiki"``.
        data: The data file; default the shared data folder (see
            :func:`~sarg_integrations.evaluation.default_data_path`).
        limit: Evaluate ``limit`` questions.
        offset: Skip the first ``offset`` questions (held-out evaluation).
        seed: Seed of the distractor shuffle.
        shuffle_distractors: Shuffle each question's paragraph order.
        llm: A model to answer the prompts (a ``PROVIDER:MODEL`` spec, a LangChain or
            LlamaIndex model, or a callable ``str -> str``); ``None``: no EM/F1.
        out_dir: Folder for the outputs (created).
        methods: The methods to compare; default every base method.
        sweeps: Also run the beam-width and top-K sweeps.
        sweep_limit: Run the sweeps on the first ``sweep_limit`` questions only.
        flat_top_k: ``k`` of the flat top-k baseline.
        suite: A ready :class:`MethodSuite` (e.g. with fake models for tests).
        suite_factory: Builds the suite lazily (only if questions remain to be run).
        progress: Show a progress bar.
        fresh: Discard records of an earlier run instead of resuming.
        plots: Write PNG plots (skipped with a warning without matplotlib).
        report_only: Compute nothing; report on the records already on disk (e.g. of an
            interrupted run, which a later call with the same settings resumes).

    Returns:
        The :class:`EvalReport`.

    Raises:
        InputError: Bad dataset, data path, ``limit``, or records of other settings.
    """
    if sweep_limit is not None and (
        isinstance(sweep_limit, bool) or not isinstance(sweep_limit, int) or sweep_limit < 0
    ):
        msg = f"sweep_limit={sweep_limit!r} must be a non-negative integer or None"
        raise InputError(msg, argument="sweep_limit", value=sweep_limit)
    questions = load_dataset(
        dataset, data, limit=limit, offset=offset, shuffle_distractors=shuffle_distractors, seed=seed
    )
    methods = list(methods or BASE_METHODS)
    unknown = [m for m in methods if m not in (*BASE_METHODS, *TASR_METHODS)]
    if unknown:
        msg = f"unknown method(s) {unknown}; valid: {', '.join((*BASE_METHODS, *TASR_METHODS))}"
        raise InputError(msg, argument="methods", value=unknown)
    llm_name = (
        llm
        if isinstance(llm, str) or llm is None
        else f"{type(llm).__module__}.{type(llm).__qualname__}"
    )
    settings = {
        "version": RECORD_VERSION,
        "dataset": dataset,
        "data": str(data) if data is not None else None,
        "limit": limit,
        **({"offset": offset} if offset else {}),  # records of earlier runs stay resumable
        "seed": seed,
        "shuffle_distractors": shuffle_distractors,
        "methods": methods,
        "sweeps": sweeps,
        "sweep_limit": sweep_limit,
        "flat_top_k": flat_top_k,
        "llm": llm_name,
    }
    out = make_out_dir(out_dir)
    records_path = out / f"{dataset}.records.jsonl"
    if fresh and records_path.exists():
        records_path.unlink()
    done = _read_records(records_path, settings)
    todo = [] if report_only else [q for q in questions if q.id not in done]
    if todo:
        if suite is None:
            suite = (
                suite_factory() if suite_factory is not None else MethodSuite(flat_top_k=flat_top_k)
            )
        answerer = _Answerer(llm) if llm is not None else None
        index_of = {q.id: i for i, q in enumerate(questions)}

        def compute(question: EvalQuestion) -> dict[str, Any]:
            names = list(methods)
            if sweeps and (sweep_limit is None or index_of[question.id] < sweep_limit):
                names += suite.sweep_methods()
            suite.reset()
            return _record(question, suite.run(question, names), answerer)

        record_each(
            todo,
            compute,
            records_path,
            settings,
            done,
            total=len(questions),
            progress=progress,
            desc=f"eval {dataset}",
            unit="q",
        )
    records = [done[q.id] for q in questions if q.id in done]
    aggregates = aggregate(records)
    markdown = markdown_report(dataset, aggregates, settings)
    paths = {"records": str(records_path)}
    paths.update(write_summary(out, dataset, settings, aggregates, records, markdown))
    if plots:
        from sarg_integrations.evaluation.plots import write_plots

        paths.update(write_plots(dataset, aggregates, out))
    return EvalReport(dataset, settings, records, aggregates, markdown, paths)
