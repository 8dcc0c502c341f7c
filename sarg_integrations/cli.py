"""The ``sarg`` command line: run SARG on files, or on the packaged demo corpus.

Examples::

    sarg run --query "Why did technology stocks sell off?" --docs notes/ --json out.json
    sarg demo --show-prompt
    sarg run -q "Why did yields rise?" -d notes/ --llm openai:gpt-4o-mini --cache .sarg-cache.sqlite
    sarg demo --html gaucher.html --png gaucher.png
    sarg direction "Why did technology stocks sell off?" --json
    sarg train-direction --out my-direction-model/
    sarg eval --dataset musique --limit 200 --out benchmarks/results/eval
    sarg --version

Errors in the input (missing files, bad JSONL, invalid settings) print
``sarg: error: <message>`` and exit with status 2; Ctrl-C exits with 130.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from sarg_integrations.config import SARGConfig
    from sarg_integrations.extraction.base import TripleExtractor
    from sarg_integrations.pipeline import SARGPipeline
    from sarg_integrations.schema import SARGResult, SourceDocument

__all__ = ["build_llm_extractor", "build_pipeline", "main"]

PROGRESS_MIN_DOCUMENTS = 20
"""A progress bar is shown (on a terminal) when there are more documents than this."""

_DIRECTIONS = ("forward", "backward", "bidirectional")
_SCHEMAS = ("reasoning", "generic_spo")
_EVIDENCE = ("document", "sentences")
_NOISY_LOGGERS = (
    "transformers",
    "sentence_transformers",
    "huggingface_hub",
    "torch",
    "keybert",
    "spacy",
    "urllib3",
    "filelock",
)


# --------------------------------------------------------------------------- argparse types


def _positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        msg = f"invalid value {text!r}: expected a whole number >= 1, e.g. 3"
        raise argparse.ArgumentTypeError(msg) from None
    if value < 1:
        msg = f"invalid value {value}: must be >= 1"
        raise argparse.ArgumentTypeError(msg)
    return value


def _similarity(text: str) -> float:
    """An argparse type: a cosine similarity threshold in [-1, 1]."""
    try:
        value = float(text)
    except ValueError:
        msg = f"invalid value {text!r}: expected a number between -1 and 1, e.g. 0.5"
        raise argparse.ArgumentTypeError(msg) from None
    if not -1.0 <= value <= 1.0:  # also rejects NaN
        msg = f"invalid value {text}: a cosine similarity threshold must be between -1 and 1"
        raise argparse.ArgumentTypeError(msg)
    return value


def _unit_interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:
        msg = f"expected a number between 0 and 1, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _seconds(text: str) -> float:
    """An argparse type: a number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < float("inf"):  # also rejects NaN
        msg = f"invalid value {text!r}: expected a number of seconds > 0, e.g. 30"
        raise argparse.ArgumentTypeError(msg)
    return value


def _non_empty(text: str) -> str:
    """An argparse type: a string with some non-space character."""
    if not text.strip():
        msg = "must not be empty; pass the question to reason about"
        raise argparse.ArgumentTypeError(msg)
    return text


def _build_parser() -> argparse.ArgumentParser:
    from sarg_integrations import __version__

    parser = argparse.ArgumentParser(
        prog="sarg",
        description=(
            "Structure-Augmented Reasoning Generation: build a reasoning graph from "
            "documents, find the causal chains that answer a query, and compile a prompt."
        ),
    )
    parser.add_argument("--version", action="version", version=f"sarg {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    common = argparse.ArgumentParser(add_help=False)
    out = common.add_argument_group("output")
    out.add_argument(
        "--json",
        metavar="OUT",
        help=(
            "also write the full result as JSON to OUT "
            "('-' = stdout; the report then goes to stderr)"
        ),
    )
    out.add_argument("--show-prompt", action="store_true", help="print the compiled prompt")
    out.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write an interactive, self-contained HTML page of the reasoning graph",
    )
    out.add_argument(
        "--png",
        metavar="OUT.png",
        help=(
            "also write a static picture of the reasoning graph (.png, or .svg by suffix; "
            'needs matplotlib: pip install "sarg-integrations[viz]")'
        ),
    )
    out.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    tuning = common.add_argument_group("SARG settings (defaults follow the paper)")
    tuning.add_argument(
        "--top-k", type=_positive_int, metavar="N", help="chains to keep (default 3)"
    )
    tuning.add_argument(
        "--beam-width", type=_positive_int, metavar="N", help="beam width of the search (default 3)"
    )
    tuning.add_argument(
        "--threshold",
        type=_similarity,
        metavar="TAU",
        help="entry-node similarity threshold tau in [-1, 1] (default 0.5)",
    )
    tuning.add_argument(
        "--max-depth", type=_positive_int, metavar="N", help="at most N hops per chain (default 8)"
    )
    tuning.add_argument(
        "--direction",
        choices=_DIRECTIONS,
        help="force the traversal direction instead of predicting it from the query",
    )
    tuning.add_argument(
        "--schema",
        choices=_SCHEMAS,
        help="triple schema of the default extractor (default reasoning)",
    )
    tuning.add_argument(
        "--strategy",
        choices=("sarg", "tasr"),
        help=(
            "evidence selection: sarg (reasoning graph + beam search, default) or tasr "
            "(TaSR-RAG: sub-queries, taxonomy typing, hybrid triple matching, binding table)"
        ),
    )
    tuning.add_argument(
        "--tasr-alpha",
        type=_unit_interval,
        metavar="A",
        help="tasr: weight of the semantic score in the hybrid match, in [0, 1] (default 0.5)",
    )
    tuning.add_argument(
        "--tasr-threshold",
        type=_unit_interval,
        metavar="THETA",
        help="tasr: least hybrid score of a selected document, in [0, 1] (default 0.5)",
    )
    tuning.add_argument(
        "--tasr-depth",
        type=int,
        choices=(1, 2, 3),
        help="tasr: taxonomy levels compared by structural matching (default 2)",
    )
    tuning.add_argument(
        "--evidence",
        choices=_EVIDENCE,
        help="put whole documents or only the cited sentences in the prompt (default document)",
    )
    tuning.add_argument(
        "--evidence-fill",
        type=_positive_int,
        metavar="N",
        help=(
            "add N documents to the chain evidence by bridge-guided relevance (on fallback: "
            "those N instead of every document); default: chain documents only"
        ),
    )

    llm = common.add_argument_group("LLM extraction (instead of the offline rule-based extractor)")
    llm.add_argument(
        "--llm",
        metavar="SPEC",
        help=(
            "extract triples with a LangChain chat model PROVIDER:MODEL, e.g. "
            "openai:gpt-4o-mini or ollama:qwen2.5:7b (needs the provider's package, "
            "e.g. langchain-openai); with --strategy tasr the model also decomposes the "
            "question and types the entities"
        ),
    )
    llm.add_argument(
        "--cache",
        metavar="PATH",
        help="SQLite file caching the model's answers per chunk (reused across runs)",
    )
    llm.add_argument(
        "--max-concurrency",
        type=_positive_int,
        metavar="N",
        help="at most N model calls in flight (default 8)",
    )
    llm.add_argument(
        "--deadline",
        type=_seconds,
        metavar="SECONDS",
        help=(
            "stop extracting after SECONDS; documents not extracted by then are listed as "
            "skipped and the run goes on with what it has (default: no deadline)"
        ),
    )

    run = sub.add_parser(
        "run",
        parents=[common],
        help="run SARG on your documents",
        description="Run SARG on .txt/.md/.jsonl files or folders and print a report.",
    )
    run.add_argument("--query", "-q", required=True, type=_non_empty, help="the question")
    run.add_argument(
        "--docs",
        "-d",
        required=True,
        nargs="+",
        metavar="PATH",
        help=(
            ".txt/.md files (one document each), .jsonl files ({'id', 'text'} per line) or folders"
        ),
    )
    run.set_defaults(handler=_cmd_run)

    demo = sub.add_parser(
        "demo",
        parents=[common],
        help="run SARG on the packaged demo corpus",
        description="Run SARG on the packaged demo corpus with a demo question.",
    )
    demo.add_argument(
        "--question",
        type=_non_empty,
        metavar="TEXT",
        help="the question to ask (default: the first demo question)",
    )
    demo.set_defaults(handler=_cmd_demo)
    _add_direction_commands(sub)
    _add_eval_command(sub)
    return parser


def _add_eval_command(sub: Any) -> None:
    """The ``eval`` subcommand; its logic lives in ``sarg_integrations.evaluation.cli``."""
    from sarg_integrations.evaluation.cli import add_eval_arguments

    evaluate = sub.add_parser(
        "eval",
        help="evaluate SARG against flat RAG on multi-hop QA data",
        description=(
            "Run Direct, flat RAG, flat top-k, LongContextReorder, CoT-RAG and SARG (plus "
            "ablations and beam/top-K sweeps) on HotpotQA, MuSiQue or 2WikiMultiHopQA; write "
            "per-question records (resumable), a JSON summary, Markdown tables and plots."
        ),
    )
    add_eval_arguments(evaluate, positive_int=_positive_int)
    evaluate.set_defaults(handler=_cmd_eval)


def _cmd_eval(args: argparse.Namespace) -> int:
    from sarg_integrations.evaluation.cli import cli_eval

    with _quiet_models():
        return cli_eval(args)


def _add_direction_commands(sub: Any) -> None:
    """The direction-classifier subcommands; their logic lives in ``direction_model``."""
    from sarg_integrations.direction_model import DEFAULT_MARGIN

    def margin(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0.0 <= value <= 1.0:
            msg = f"invalid margin {text!r}: expected a number in [0, 1], e.g. {DEFAULT_MARGIN}"
            raise argparse.ArgumentTypeError(msg)
        return value

    direction = sub.add_parser(
        "direction",
        help="predict the traversal direction of queries",
        description=(
            "Print each query's direction (forward/backward/bidirectional) and class probabilities."
        ),
    )
    direction.add_argument(
        "queries", nargs="+", type=_non_empty, metavar="QUERY", help="the question(s)"
    )
    direction.add_argument(
        "--json",
        action="store_true",
        help='print a JSON list of {"query", "label", "probabilities"}',
    )
    direction.add_argument(
        "--model", metavar="PATH", help="a trained classifier (default: the packaged one)"
    )
    direction.add_argument(
        "--margin", type=margin, metavar="M", help="fallback margin in [0, 1] (default: model's)"
    )
    direction.set_defaults(handler=_cmd_direction)

    train = sub.add_parser(
        "train-direction",
        help="train the direction classifier (SetFit)",
        description=(
            "Train the direction classifier the SetFit way: optionally fine-tune the body on "
            "contrastive pairs (CosineSimilarityLoss), then fit a logistic-regression head; "
            "print test accuracy and a per-class report; save the model."
        ),
    )
    train.add_argument(
        "--data", metavar="FILE", help="JSONL with query, label, split (default: the packaged data)"
    )
    train.add_argument(
        "--base-model",
        metavar="PATH",
        help="local sentence-transformers folder (default: embedded all-MiniLM-L6-v2)",
    )
    train.add_argument("--out", metavar="DIR", help="folder to save the classifier to")
    train.add_argument(
        "--pairs",
        type=int,
        default=0,
        metavar="N",
        help="contrastive pairs to fine-tune the body on (0 = frozen body, default)",
    )
    train.add_argument(
        "--epochs", type=_positive_int, default=1, metavar="N", help="epochs over pairs (default 1)"
    )
    train.add_argument(
        "--batch-size", type=_positive_int, default=16, metavar="N", help="pairs/step (default 16)"
    )
    train.add_argument(
        "--lr", type=float, default=2e-5, metavar="LR", help="body learning rate (default 2e-5)"
    )
    train.add_argument(
        "--ngram-buckets",
        type=int,
        default=0,
        metavar="N",
        help="hashed word n-gram features added to the head (default 0; the shipped head: 1024)",
    )
    train.add_argument(
        "--margin",
        type=margin,
        default=DEFAULT_MARGIN,
        metavar="M",
        help=f"fallback margin saved with the model (default {DEFAULT_MARGIN})",
    )
    train.add_argument(
        "--max-train", type=_positive_int, metavar="N", help="use at most N training queries"
    )
    train.add_argument(
        "--eval-split",
        choices=("test", "validation"),
        default="test",
        help="split to report on (default test)",
    )
    train.set_defaults(handler=_cmd_train_direction)

    distill = sub.add_parser(
        "distill-direction",
        help="label your queries with an LLM teacher",
        description="Label queries with an LLM (the teacher) to retrain the student on your data.",
    )
    distill.add_argument(
        "--llm",
        required=True,
        metavar="SPEC",
        help="LangChain chat model PROVIDER:MODEL, e.g. openai:gpt-4o-mini",
    )
    distill.add_argument(
        "--queries",
        required=True,
        metavar="FILE",
        help=".txt (one query per line) or .jsonl ('query'/'question' per line)",
    )
    distill.add_argument(
        "--out", required=True, metavar="FILE", help="JSONL to write (query, label, split)"
    )
    distill.add_argument(
        "--max-concurrency",
        type=_positive_int,
        metavar="N",
        help="at most N model calls in flight (default 4)",
    )
    distill.set_defaults(handler=_cmd_distill_direction)


def _cmd_direction(args: argparse.Namespace) -> int:
    from sarg_integrations.direction_model import cli_direction

    with _quiet_models():
        return cli_direction(args)


def _cmd_train_direction(args: argparse.Namespace) -> int:
    from sarg_integrations.direction_model import cli_train_direction

    with _quiet_models():
        return cli_train_direction(args)


def _cmd_distill_direction(args: argparse.Namespace) -> int:
    from sarg_integrations.direction_model import cli_distill_direction

    return cli_distill_direction(args)


# --------------------------------------------------------------------------- pipeline


def build_pipeline(
    config: SARGConfig, extractor: TripleExtractor | None = None, llm: Any = None
) -> SARGPipeline:
    """Return the pipeline the CLI runs (tests replace this with one built from fakes).

    Args:
        config: The validated settings from the command line.
        extractor: The triple extractor (``--llm``); ``None`` uses the offline default.
            It is passed only when ``--llm`` is given.
        llm: The ``--llm`` model, for TaSR's query decomposition and entity typing
            (``SARGPipeline(llm=...)``). It is passed only with ``--llm`` and
            ``--strategy tasr``.
    """
    from sarg_integrations.pipeline import SARGPipeline

    return SARGPipeline(config, extractor=extractor, llm=llm)


def build_llm_extractor(
    args: argparse.Namespace, config: SARGConfig, model: Any = None
) -> TripleExtractor:
    """Return the :class:`~sarg_integrations.LLMTripleExtractor` for ``--llm SPEC``.

    Args:
        args: The parsed command line (``--llm``, ``--cache``, ``--max-concurrency``).
        config: The settings; ``config.schema`` selects the extraction prompt.
        model: The model ``--llm`` names, when already resolved; default: resolve it.

    Raises:
        ConfigError: A malformed ``--llm`` spec or ``--cache`` path.
        MissingDependencyError: The provider's LangChain package is not installed.
    """
    from sarg_integrations.llm import specs
    from sarg_integrations.llm.extractor import LLMTripleExtractor

    if model is None:
        model = specs.resolve_llm_spec(args.llm)
    return LLMTripleExtractor(
        model,
        prompt=config.schema,
        cache=args.cache,
        max_concurrency=args.max_concurrency or 8,
    )


def _check_llm_options(args: argparse.Namespace) -> None:
    from sarg_integrations.errors import InputError

    if getattr(args, "llm", None):
        return
    for option, value in (("--cache", args.cache), ("--max-concurrency", args.max_concurrency)):
        if value is not None:
            msg = (
                f"{option} {value} only applies to LLM extraction; add --llm SPEC "
                "(e.g. --llm openai:gpt-4o-mini) or drop it"
            )
            raise InputError(msg, argument=option, value=value)


def _config_from_args(args: argparse.Namespace, n_documents: int) -> SARGConfig:
    from sarg_integrations.config import SARGConfig

    settings: dict[str, Any] = {}
    for option, field in (
        ("top_k", "top_k"),
        ("beam_width", "beam_width"),
        ("threshold", "similarity_threshold"),
        ("max_depth", "max_depth"),
        ("direction", "direction"),
        ("schema", "schema"),
        ("evidence", "evidence"),
        ("evidence_fill", "evidence_fill"),
        ("deadline", "deadline_seconds"),
        ("strategy", "strategy"),
        ("tasr_alpha", "tasr_alpha"),
        ("tasr_threshold", "tasr_threshold"),
        ("tasr_depth", "tasr_taxonomy_depth"),
    ):
        value = getattr(args, option, None)
        if value is not None:
            settings[field] = value
    settings["show_progress"] = bool(
        not args.no_progress
        and not getattr(args, "llm", None)  # LLM extraction runs as one concurrent batch
        and n_documents > PROGRESS_MIN_DOCUMENTS
        and _isatty(sys.stderr)
    )
    return SARGConfig(**settings)


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def _quiet_models() -> Iterator[None]:
    """Keep model-library warnings and log chatter off the terminal during a run."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # transformers resets its logger level on import, from this variable.
    set_verbosity = "TRANSFORMERS_VERBOSITY" not in os.environ
    if set_verbosity:
        os.environ["TRANSFORMERS_VERBOSITY"] = "error"
    loggers = [logging.getLogger(name) for name in _NOISY_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)
        if set_verbosity:
            os.environ.pop("TRANSFORMERS_VERBOSITY", None)


def _execute(
    args: argparse.Namespace, query: str, documents: list[SourceDocument], header: list[str]
) -> int:
    _check_llm_options(args)
    _check_picture_options(args)
    config = _config_from_args(args, len(documents))
    json_to_stdout = args.json == "-"
    report_stream = sys.stderr if json_to_stdout else sys.stdout
    with _quiet_models():
        if getattr(args, "llm", None):
            from sarg_integrations.llm import specs

            model = specs.resolve_llm_spec(args.llm)
            extractor = build_llm_extractor(args, config, model=model)
            if config.strategy == "tasr":  # one model extracts, decomposes and types
                pipeline = build_pipeline(config, extractor=extractor, llm=model)
            else:
                pipeline = build_pipeline(config, extractor=extractor)
        else:
            pipeline = build_pipeline(config)
        result = pipeline.run(query, documents)
    if args.json and not json_to_stdout:
        _write_json(result, args.json)
    lines = [*header, *_report_lines(result, show_prompt=args.show_prompt)]
    if args.json and not json_to_stdout:
        lines.append(f"JSON result written to {args.json}")
    lines.extend(_write_pictures(args, result))
    _emit(lines, report_stream)
    if json_to_stdout:
        sys.stdout.write(result.to_json() + "\n")
        sys.stdout.flush()
    return 0


def _check_picture_options(args: argparse.Namespace) -> None:
    """Fail before the run on a bad ``--png`` suffix or a missing matplotlib."""
    from sarg_integrations.errors import InputError, MissingDependencyError

    png = getattr(args, "png", None)
    if not png:
        return
    suffix = os.path.splitext(png)[1].lower()
    if suffix not in (".png", ".svg"):
        msg = f"--png {png}: the file name must end in .png or .svg (e.g. graph.png)"
        raise InputError(msg, argument="--png", value=png)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingDependencyError("matplotlib", feature="sarg --png", extra="viz") from None


def _write_pictures(args: argparse.Namespace, result: SARGResult) -> list[str]:
    """Write the ``--html`` / ``--png`` files; return the report lines naming them."""
    lines = []
    if getattr(args, "html", None):
        result.to_html(args.html)
        lines.append(f"HTML page written to {args.html}")
    if getattr(args, "png", None):
        result.to_image(args.png)
        lines.append(f"Picture written to {args.png}")
    return lines


def _write_json(result: SARGResult, path: str) -> None:
    from sarg_integrations.errors import InputError

    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(result.to_json() + "\n")
    except OSError as exc:
        msg = (
            f"cannot write the --json file {path}: {exc.strerror or exc}; "
            "pass a writable path, or '-' for stdout"
        )
        raise InputError(msg, argument="--json", value=path) from None


def _cmd_run(args: argparse.Namespace) -> int:
    from sarg_integrations.io import load_documents

    documents = load_documents(args.docs)
    sources = ", ".join(args.docs[:3])
    if len(args.docs) > 3:
        sources += f" and {len(args.docs) - 3} more path(s)"
    header = [f"Loaded {len(documents)} document(s) from {sources}"]
    return _execute(args, args.query, documents, header)


def _cmd_demo(args: argparse.Namespace) -> int:
    from sarg_integrations.io import DEMO_CORPUS_RESOURCE, DEMO_QUESTIONS, load_demo_corpus

    documents = load_demo_corpus()
    question = args.question or DEMO_QUESTIONS[0]
    header = [
        f"Demo corpus: sarg_integrations/{DEMO_CORPUS_RESOURCE} ({len(documents)} documents)",
        f"Question: {question}",
    ]
    others = [q for q in DEMO_QUESTIONS if q != question]
    if others:
        header.append("Other demo questions (pass one with --question):")
        header.extend(f"  - {q}" for q in others)
    return _execute(args, question, documents, header)


# --------------------------------------------------------------------------- report


def _report_lines(result: SARGResult, *, show_prompt: bool = False) -> list[str]:
    """Render ``result`` as the human-readable report (a list of lines)."""
    lines = ["", f"Query: {result.query}"]
    d = result.direction
    if d is not None:  # None: the strategy predicts no direction (tasr)
        direction = f"Direction: {d.direction.value} (confidence {d.confidence:.2f}"
        direction += f", method {d.method})" if d.method else ")"
        if d.rationale:
            direction += f" - {d.rationale}"
        lines.append(direction)
    if result.keyphrases is not None:  # None: the strategy uses no key phrases (tasr)
        keyphrases = ", ".join(result.keyphrases) if result.keyphrases else "(none)"
        lines.append(f"Key phrases: {keyphrases}")

    threshold = result.config.get("similarity_threshold")
    tau = f" (similarity > {threshold})" if threshold is not None else ""
    lines.append(f"Entry nodes{tau}:" + ("" if result.entry_nodes else " (none)"))
    for entry in result.entry_nodes:
        lines.append(
            f"  - {entry.node}  [similarity {entry.similarity:.3f}, key phrase {entry.keyphrase!r}]"
        )

    lines.extend(_tasr_lines(result))
    lines.append("")
    considered = len(result.candidate_chains or result.chains)
    lines.append(f"Reasoning chains: {len(result.chains)} kept of {considered} candidate(s)")
    for number, chain in enumerate(result.chains, start=1):
        lines.append(f"  [{number}] score {chain.score:.3f}, {len(chain.hops)} hop(s)")
        lines.append(f"      {chain.to_text()}")
        for index, hop in enumerate(chain.hops, start=1):
            docs = ", ".join(hop.document_ids) or "(no document)"
            lines.append(f"      hop {index}: {hop.source} -> {hop.target}  cited by: {docs}")

    graph = result.graph
    lines.append("")
    lines.append(
        f"Graph: {graph.number_of_nodes} nodes, {graph.number_of_edges} edges, "
        f"{len(graph.merges)} merges ({len(result.triples)} triples from "
        f"{len(result.document_ids)} documents)"
    )
    if result.skipped_documents:
        lines.append(f"Skipped documents ({len(result.skipped_documents)}):")
        lines.extend(f"  - {s.document_id}: {s.reason}" for s in result.skipped_documents)
    if result.fallback_reason:
        lines.append(
            f"Fallback: the prompt uses the flat retrieved context because {result.fallback_reason}"
        )
    lines.extend(_accounting_lines(result.stats))
    timings = [
        (key[len("time_") : -len("_ms")], value)
        for key, value in result.stats.items()
        if key.startswith("time_") and key.endswith("_ms") and isinstance(value, (int, float))
    ]
    if timings:
        lines.append("Timings (ms): " + ", ".join(f"{name} {value:.1f}" for name, value in timings))
    if show_prompt:
        lines.extend(["", "Prompt:", "-" * 72, result.prompt.rstrip(), "-" * 72])
    return lines


def _tasr_lines(result: SARGResult) -> list[str]:
    """The TaSR sub-queries and binding table, when the run used ``--strategy tasr``."""
    trace = getattr(result, "trace", None)
    if getattr(result, "strategy", "sarg") != "tasr" or trace is None:
        return []
    method = trace.decomposition.method or "-"
    lines = ["", f"TaSR sub-queries ({trace.decomposition.kind}, {method}):"]
    for hop in trace.hops:
        docs = ", ".join(f"{d} {s:.3f}" for d, s in hop.documents) or "(none)"
        lines.append(f"  {hop.step}. {hop.resolved.to_text()}  typed {hop.typed}")
        lines.append(f"     {hop.status}: documents {docs}")
        if hop.bindings:
            lines.append("     binds " + ", ".join(f"{k} = {v}" for k, v in hop.bindings.items()))
        if hop.reason:
            lines.append(f"     {hop.reason}")
    return lines


def _accounting_lines(stats: dict[str, Any]) -> list[str]:
    """The LLM-extraction accounting line(s), when the run used an LLM extractor."""
    if "llm_calls" not in stats:
        return []

    def count(key: str) -> int:
        value = stats.get(key, 0)
        return int(value) if isinstance(value, (int, float)) else 0

    line = (
        f"LLM extraction: {count('llm_calls')} call(s), {count('cache_hits')} cache hit(s), "
        f"{count('prompt_tokens')} prompt + {count('completion_tokens')} completion tokens, "
        f"{count('parse_repairs')} parse repair(s), "
        f"{count('dropped_ungrounded')} ungrounded triple(s) dropped, "
        f"{float(stats.get('extraction_seconds', 0.0) or 0.0):.2f} s"
    )
    extras = []
    if count("llm_retries"):
        extras.append(f"{count('llm_retries')} retried call(s)")
    if count("llm_calls_without_usage"):
        extras.append(f"token usage not reported for {count('llm_calls_without_usage')} call(s)")
    if count("dropped_instruction"):
        extras.append(
            f"{count('dropped_instruction')} triple(s) from instruction-like text dropped"
        )
    if extras:
        line += " (" + "; ".join(extras) + ")"
    return [line]


def _emit(lines: Sequence[str], stream: TextIO) -> None:
    stream.write("\n".join(lines) + "\n")
    stream.flush()


# --------------------------------------------------------------------------- path options

_CACHE_SUFFIXES = ("", ".sqlite", ".sqlite3", ".db", ".cache")
# (attribute, option, kind) per subcommand; kinds: "in-file", "in-dir", "in-any",
# "out-file", "out-any" (a folder or a .json file), "cache".
_PATH_OPTIONS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "run": (
        ("json", "--json", "out-file"),
        ("html", "--html", "out-file"),
        ("png", "--png", "out-file"),
        ("cache", "--cache", "cache"),
    ),
    "demo": (
        ("json", "--json", "out-file"),
        ("html", "--html", "out-file"),
        ("png", "--png", "out-file"),
        ("cache", "--cache", "cache"),
    ),
    "direction": (("model", "--model", "in-any"),),
    "train-direction": (
        ("data", "--data", "in-file"),
        ("base_model", "--base-model", "in-dir"),
        ("out", "--out", "out-any"),
    ),
    "distill-direction": (("queries", "--queries", "in-file"), ("out", "--out", "out-file")),
}
_FILE_NOUNS = {"--json": "--json file", "--html": "HTML file (--html)", "--png": "picture (--png)"}


def check_path_options(args: argparse.Namespace) -> None:
    """Check the file and folder options of ``args`` before any work starts.

    Inputs must exist and be of the right kind (file or folder) and readable; outputs
    must not be folders (or files, for folders), and their folder must exist and be
    writable. The ``eval`` subcommand checks its own paths.

    Raises:
        InputError: Naming the option, the path and the fix.

    Example:
        >>> ns = argparse.Namespace(command="run", json="/no/such/folder/out.json",
        ...                         html=None, png=None, cache=None)
        >>> check_path_options(ns)
        Traceback (most recent call last):
        ...
        sarg_integrations.errors.InputError: cannot write the --json file \
/no/such/folder/out.json: the folder /no/such/folder does not exist; create it \
first (mkdir -p /no/such/folder) or pass a path in an existing folder
    """
    for attribute, option, kind in _PATH_OPTIONS.get(getattr(args, "command", ""), ()):
        value = getattr(args, attribute, None)
        if not isinstance(value, str) or not value or (option == "--json" and value == "-"):
            continue
        problem = _path_problem(value, option, kind)
        if problem:
            from sarg_integrations.errors import InputError

            raise InputError(problem, argument=option, value=value)


def _path_problem(value: str, option: str, kind: str) -> str | None:
    from pathlib import Path

    path = Path(value).expanduser()
    if kind.startswith("in-"):
        if option == "--model" and not path.exists():
            return (
                f"{option} {value}: no direction classifier there (the path does not exist); "
                "pass a direction_head.json file or the --out folder of `sarg train-direction`"
            )
        if not path.exists():
            return f"{option} {value}: the path does not exist; check the spelling"
        if kind == "in-file" and path.is_dir():
            return f"{option} {value}: is a folder; pass a file"
        if kind == "in-dir" and not path.is_dir():
            return (
                f"{option} {value}: is a file; pass a folder (a local sentence-transformers model)"
            )
        if not os.access(path, os.R_OK):
            return f"{option} {value}: cannot be read (permission denied); fix its permissions"
        return None
    noun = _FILE_NOUNS.get(option, f"{option} file")
    if kind == "cache":
        noun = "--cache file"
    if kind in ("out-file", "cache") and path.is_dir():
        return f"cannot write the {noun} {value}: it is a folder; pass a file path inside it"
    if kind == "out-any" and path.is_file() and path.suffix != ".json":
        return f"{option} {value}: is a file; pass a folder (or a .json file for the head only)"
    if kind == "cache" and path.is_file() and path.stat().st_size:
        with open(path, "rb") as handle:
            header = handle.read(16)
        if header != b"SQLite format 3\x00" and path.suffix.lower() not in _CACHE_SUFFIXES:
            return (
                f"--cache {value}: is not an SQLite cache (it starts with {header[:8]!r}); "
                "pass a new or existing cache file such as .sarg-cache.sqlite"
            )
    if kind == "out-any":
        folder = path if path.suffix != ".json" else path.parent
        existing = folder
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            return f"{option} {value}: {existing} is a file, so the folder cannot be created"
        if not os.access(existing, os.W_OK):
            return f"{option} {value}: the folder {existing} is not writable; pass another path"
        return None
    parent = path.parent
    if not parent.exists():
        return (
            f"cannot write the {noun} {value}: the folder {parent} does not exist; create it "
            f"first (mkdir -p {parent}) or pass a path in an existing folder"
        )
    if not parent.is_dir():
        return f"cannot write the {noun} {value}: {parent} is a file, not a folder"
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"cannot write the {noun} {value}: permission denied; pass a writable path"
    return None


# --------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    """Run the ``sarg`` command line and return its exit status.

    Args:
        argv: The arguments after the program name; ``None`` reads ``sys.argv[1:]``.

    Returns:
        0 on success, 2 on bad input (usage errors, unreadable documents, invalid
        settings), 130 when interrupted.
    """
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)

    from sarg_integrations.errors import SARGError

    try:
        check_path_options(args)
        return int(args.handler(args))
    except SARGError as exc:
        print(f"sarg: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sarg: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `sarg run ... | head`); stop quietly.
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
