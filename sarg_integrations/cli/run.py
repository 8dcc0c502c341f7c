"""``sarg run`` and ``sarg demo``: run SARG on files or on the packaged demo corpus."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sarg_integrations.config import SARGConfig
    from sarg_integrations.extraction.base import TripleExtractor
    from sarg_integrations.pipeline import SARGPipeline
    from sarg_integrations.schema import SARGResult, SkippedDocument, SourceDocument

from sarg_integrations.cli.common import (
    add_docs_option,
    emit,
    isatty,
    non_empty,
    positive_int,
    quiet_models,
    seconds,
    similarity,
    unit_interval,
)
from sarg_integrations.cli.report import report_lines

__all__ = ["add_commands", "build_llm_extractor", "build_pipeline"]

DEFAULT_MAX_FILE_MB = 64
"""``--max-file-mb``: the largest file ``sarg run --docs`` reads, in MiB."""

PROGRESS_MIN_DOCUMENTS = 20
"""A progress bar is shown (on a terminal) when there are more documents than this."""

_OUTPUT_PATHS = (
    ("json", "--json", "out-file"),
    ("html", "--html", "out-file"),
    ("png", "--png", "out-file"),
    ("cache", "--cache", "cache"),
)


def add_commands(sub: Any) -> None:
    """Add ``run`` and ``demo`` to the ``sarg`` subparsers ``sub``."""
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
    settings_group = common.add_argument_group(
        "SARG settings (defaults follow the paper, except the evidence budget and entry margin)"
    )
    _add_config_options(settings_group)
    settings_group.add_argument(
        "--paper",
        action="store_true",
        help="the SARG paper's setting, for reproduction: the chain documents only, every "
        "document on fallback, entry nodes strictly above tau (SARGConfig.paper(); no "
        "--evidence-budget top-up, --entry-margin 0 unless given)",
    )

    offline = common.add_argument_group("offline extraction")
    offline.add_argument(
        "--extractor",
        metavar="NAME|DIR",
        help=(
            "the offline triple extractor: tagger (default, the learned span tagger), rules "
            "(spaCy cue rules), union (tagger + rules), or a folder from `sarg train-extractor`"
        ),
    )
    llm = common.add_argument_group("LLM extraction (instead of the offline extractor)")
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
        metavar="PATH|URL",
        help=(
            "cache of the model's answers per chunk (with --extractor: of the triples per "
            "document), reused across runs: an SQLite file, or "
            "redis://HOST:PORT/DB[?ttl=SECONDS] shared by every replica (needs "
            '"sarg-integrations[redis]")'
        ),
    )
    llm.add_argument(
        "--max-concurrency",
        type=positive_int,
        metavar="N",
        help="at most N model calls in flight (default 8)",
    )

    run = sub.add_parser(
        "run",
        parents=[common],
        help="run SARG on your documents",
        description="Run SARG on .txt/.md/.jsonl files or folders and print a report.",
    )
    run.add_argument("--query", "-q", required=True, type=non_empty, help="the question")
    add_docs_option(run)
    folders = run.add_argument_group("reading --docs folders")
    folders.add_argument(
        "--strict",
        action="store_true",
        help=(
            "fail on a file of a folder that cannot be read as UTF-8 text (or is a FIFO, a "
            "device, a bad symlink, too large) instead of skipping and reporting it"
        ),
    )
    folders.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="follow symlinks that lead out of a --docs folder (by default they are skipped)",
    )
    folders.add_argument(
        "--max-file-mb",
        type=positive_int,
        default=DEFAULT_MAX_FILE_MB,
        metavar="N",
        help=f"skip files over N MiB in folders, refuse them when named (default {DEFAULT_MAX_FILE_MB})",
    )
    run.set_defaults(handler=_cmd_run, paths=_OUTPUT_PATHS)

    demo = sub.add_parser(
        "demo",
        parents=[common],
        help="run SARG on the packaged demo corpus",
        description="Run SARG on the packaged demo corpus with a demo question.",
    )
    demo.add_argument(
        "--question",
        type=non_empty,
        metavar="TEXT",
        help="the question to ask (default: the first demo question)",
    )
    demo.set_defaults(handler=_cmd_demo, paths=_OUTPUT_PATHS)


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
    from sarg_integrations.extraction.llm.extractor import LLMTripleExtractor
    from sarg_integrations.models import specs

    if model is None:
        model = specs.resolve_llm_spec(args.llm)
    return LLMTripleExtractor(
        model,
        prompt=config.schema,
        cache=args.cache,
        max_concurrency=args.max_concurrency or 8,
    )


def _offline_extractor(args: argparse.Namespace, config: SARGConfig) -> TripleExtractor:
    """``--extractor NAME``, behind the ``--cache`` when one is given."""
    if args.cache:
        from sarg_integrations.extraction.cached import cached_offline_extractor

        return cached_offline_extractor(args.extractor, args.cache, config.schema)
    from sarg_integrations.extraction.choice import resolve_extractor

    return resolve_extractor(args.extractor, config.schema)


def _check_llm_options(args: argparse.Namespace) -> None:
    from sarg_integrations.errors import InputError

    if getattr(args, "llm", None):
        if getattr(args, "extractor", None):
            msg = (
                f"--extractor {args.extractor} and --llm {args.llm} both choose the extractor; "
                "drop one of them"
            )
            raise InputError(msg, argument="extractor", value=args.extractor)
        return
    options = [("--max-concurrency", args.max_concurrency)]
    if not getattr(args, "extractor", None):  # an offline extractor may use a cache too
        options.append(("--cache", args.cache))
    for option, value in options:
        if value is not None:
            msg = (
                f"{option} {value} only applies to LLM extraction; add --llm SPEC "
                "(e.g. --llm openai:gpt-4o-mini) or drop it"
            )
            raise InputError(msg, argument=option, value=value)


def _add_config_options(group: Any) -> None:
    """One option per :class:`~sarg_integrations.SARGConfig` field that has one.

    The option's name, help, choices and value check come from the field's
    :class:`~sarg_integrations.config.Setting`; its ``dest`` is the field's name.
    """
    from sarg_integrations.config import SARGConfig, settings

    defaults = SARGConfig()
    for name, setting in settings().items():
        if setting.option is None:
            continue
        help_text = setting.help
        default = getattr(defaults, name)
        if default is not None and name != "schema":
            limit = f", at most {setting.maximum}" if setting.maximum is not None else ""
            help_text += f" (default {default}{limit})"
        option: dict[str, Any] = {"dest": name, "help": help_text}
        if setting.metavar:
            option["metavar"] = setting.metavar
        if setting.choices is not None:
            option["choices"] = setting.choices
            if not isinstance(setting.choices[0], str):
                option["type"] = type(setting.choices[0])
        elif setting.minimum is not None:
            option["type"] = positive_int
        elif setting.low is not None:
            option["type"] = similarity if setting.low < 0 else unit_interval
        else:
            option["type"] = seconds
        group.add_argument(setting.option, **option)


def _config_from_args(args: argparse.Namespace, n_documents: int) -> SARGConfig:
    from sarg_integrations.config import SARGConfig, settings

    given = {
        name: getattr(args, name, None)
        for name, setting in settings().items()
        if setting.option is not None
    }
    config = {name: value for name, value in given.items() if value is not None}
    paper = bool(getattr(args, "paper", False))
    conflicting = [
        name
        for name in ("evidence_budget", "causal_evidence_budget", "evidence_fill")
        if name in config
    ]
    if paper and conflicting:
        from sarg_integrations.errors import ConfigError

        msg = (
            "--paper keeps the paper's evidence; leave out --evidence-budget, "
            "--causal-evidence-budget and --evidence-fill"
        )
        # Name the option given, with its value (it was always evidence_budget's).
        raise ConfigError(msg, field=conflicting[0], value=config[conflicting[0]])
    config["show_progress"] = bool(
        not args.no_progress
        and not getattr(args, "llm", None)  # LLM extraction runs as one concurrent batch
        and n_documents > PROGRESS_MIN_DOCUMENTS
        and isatty(sys.stderr)
    )
    return SARGConfig.paper(**config) if paper else SARGConfig(**config)


def _execute(
    args: argparse.Namespace,
    query: str,
    documents: list[SourceDocument],
    header: list[str],
    skipped_files: Sequence[SkippedDocument] = (),
) -> int:
    _check_llm_options(args)
    _check_picture_options(args)
    config = _config_from_args(args, len(documents))
    json_to_stdout = args.json == "-"
    report_stream = sys.stderr if json_to_stdout else sys.stdout
    with quiet_models():
        if getattr(args, "llm", None):
            from sarg_integrations.models import specs

            model = specs.resolve_llm_spec(args.llm)
            extractor = build_llm_extractor(args, config, model=model)
            if config.strategy == "tasr":  # one model extracts, decomposes and types
                pipeline = build_pipeline(config, extractor=extractor, llm=model)
            else:
                pipeline = build_pipeline(config, extractor=extractor)
        elif getattr(args, "extractor", None):
            pipeline = build_pipeline(config, extractor=_offline_extractor(args, config))
        else:
            pipeline = build_pipeline(config)
        result = pipeline.run(query, documents)
    # Files of --docs folders that were not read are skipped documents too.
    result.skipped_documents[:0] = skipped_files
    if args.json and not json_to_stdout:
        _write_json(result, args.json)
    lines = [*header, *report_lines(result, show_prompt=args.show_prompt)]
    if args.json and not json_to_stdout:
        lines.append(f"JSON result written to {args.json}")
    lines.extend(_write_pictures(args, result))
    emit(lines, report_stream)
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

    from sarg_integrations._atomic import atomic_write_text

    text = result.to_json() + "\n"  # serialise first: a failure leaves the old file intact
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        msg = (
            f"cannot write the --json file {path}: {exc.strerror or exc}; "
            "pass a writable path, or '-' for stdout"
        )
        raise InputError(msg, argument="--json", value=path) from None


def _cmd_run(args: argparse.Namespace) -> int:
    from sarg_integrations.io import read_documents

    loaded = read_documents(
        args.docs,
        strict=args.strict,
        follow_symlinks=args.follow_symlinks,
        max_file_bytes=args.max_file_mb * 2**20,
    )
    sources = ", ".join(args.docs[:3])
    if len(args.docs) > 3:
        sources += f" and {len(args.docs) - 3} more path(s)"
    header = [f"Loaded {len(loaded.documents)} document(s) from {sources}"]
    if loaded.skipped:
        header[0] += f"; skipped {len(loaded.skipped)} file(s) (listed under Skipped documents)"
    return _execute(args, args.query, loaded.documents, header, loaded.skipped)


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
