"""The evaluation run loop: per-question records (resumable), aggregates, Markdown, plots.

:func:`run_evaluation` loads a dataset, runs every method of a
:class:`~sarg_integrations.evaluation.methods.MethodSuite` on each question and appends
one JSON line per question to ``<out>/<dataset>.records.jsonl`` as soon as it is done.
Rerunning with the same settings skips the questions already recorded, so an
interrupted run resumes where it stopped. At the end it writes ``<dataset>.json``
(settings, aggregates, records), ``<dataset>.md`` (tables) and, when matplotlib is
installed, ``<dataset>_sweeps.png`` and ``<dataset>_by_hops.png``.
The records file handling is in :mod:`~sarg_integrations.evaluation.records`, the
aggregates and tables in :mod:`~sarg_integrations.evaluation.report` (both re-exported
here).

Metrics without an LLM are always computed; with ``llm`` the method prompts are also
answered and scored by EM/F1 (official normalisation), answer tokens and latency.
"""

from __future__ import annotations

import os
import re
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sarg_integrations._checks import is_whole
from sarg_integrations.errors import InputError
from sarg_integrations.evaluation.datasets import EvalQuestion, load_dataset
from sarg_integrations.evaluation.methods import (
    BASE_METHODS,
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
from sarg_integrations.evaluation.records import (  # noqa: F401  (_append_line: kept importable here)
    _append_line,
    make_out_dir,
    record_each,
    write_summary,
)
from sarg_integrations.evaluation.records import read_records as _read_records
from sarg_integrations.evaluation.report import (  # noqa: F401  (COMPARISONS: kept importable here)
    COMPARISONS,
    aggregate,
    markdown_report,
)

__all__ = ["ANSWER_SUFFIX", "EvalReport", "aggregate", "markdown_report", "run_evaluation"]
# Also importable from here, as before the split: COMPARISONS (report.py); make_out_dir,
# record_each, write_summary, _read_records, _append_line (records.py).

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


# --------------------------------------------------------------------------- one record


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


# --------------------------------------------------------------------------- run


def skipped_message(question_ids: Sequence[str]) -> str:
    """How a run reports the questions it skipped for having no paragraph text.

    Example:
        >>> skipped_message(["q7", "q9"])
        'skipped 2 question(s) with no paragraph text: q7, q9'
    """
    listed = ", ".join(question_ids)
    return f"skipped {len(question_ids)} question(s) with no paragraph text: {listed}"


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
    if sweep_limit is not None and not is_whole(sweep_limit, 0):
        msg = f"sweep_limit={sweep_limit!r} must be a non-negative integer or None"
        raise InputError(msg, argument="sweep_limit", value=sweep_limit)
    questions = load_dataset(
        dataset, data, limit=limit, offset=offset, shuffle_distractors=shuffle_distractors, seed=seed
    )
    # A question retrieved nothing for (HotpotQA fullwiki has two) has no documents to
    # reason over: it is skipped, named in the report and warned about, not a crash.
    empty = [q.id for q in questions if not any(p.text.strip() for p in q.paragraphs)]
    if empty:
        warnings.warn(f"{dataset}: {skipped_message(empty)}", stacklevel=2)
        dropped = set(empty)
        questions = [q for q in questions if q.id not in dropped]
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
        **({"skipped_no_paragraphs": empty} if empty else {}),
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
