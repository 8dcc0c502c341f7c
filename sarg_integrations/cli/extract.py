"""``sarg extract``: pre-extract a corpus into the extraction cache, locally or on Ray."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from sarg_integrations.cli.common import add_docs_option, emit, isatty, positive_int

if TYPE_CHECKING:
    from sarg_integrations.extraction.prefill import BatchExecutor

__all__ = ["add_commands", "build_executor", "build_factory"]


def add_commands(sub: Any) -> None:
    """Add ``extract`` to the ``sarg`` subparsers ``sub``."""
    extract = sub.add_parser(
        "extract",
        help="pre-extract documents into the extraction cache (so queries make no model calls)",
        description=(
            "Split the documents exactly as `sarg run` does, extract every chunk that is not "
            "cached yet with the --llm model (or every document with the offline --extractor), "
            "and store the answers in --cache. Chunks already "
            "cached are skipped, so an interrupted run resumes. Later runs with the same model, "
            "prompt and cache (sarg run --llm SPEC --cache URL, or "
            "LLMTripleExtractor(model, cache=URL)) find every chunk. Use a redis:// cache to "
            "share the answers between machines and replicas."
        ),
    )
    add_docs_option(extract)
    extract.add_argument(
        "--llm",
        metavar="SPEC",
        help="the LangChain chat model PROVIDER:MODEL, e.g. openai:gpt-4o-mini",
    )
    extract.add_argument(
        "--extractor",
        metavar="NAME|DIR",
        help=(
            "or an offline extractor: tagger, rules, union, or a folder from `sarg "
            "train-extractor` (cached per document; `sarg run --extractor NAME --cache URL` "
            "reads it)"
        ),
    )
    extract.add_argument(
        "--cache",
        required=True,
        metavar="PATH|URL",
        help=(
            "where the answers go: redis://HOST:PORT/DB[?ttl=SECONDS] (shared) or an SQLite "
            "file (one machine)"
        ),
    )
    extract.add_argument(
        "--schema",
        choices=("reasoning", "generic_spo"),
        default="reasoning",
        help="the extraction prompt, as `sarg run --schema` (default reasoning)",
    )
    extract.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="worker processes (default 1), or Ray actors with --ray (default 4)",
    )
    extract.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help=(
            "run on Ray: a cluster ADDRESS (auto, ray://head:10001), or none for RAY_ADDRESS / "
            'a local instance (needs "sarg-integrations[ray]")'
        ),
    )
    extract.add_argument(
        "--max-concurrency",
        type=positive_int,
        metavar="N",
        help="model calls in flight per worker (default 8)",
    )
    extract.add_argument(
        "--batch-size",
        type=positive_int,
        default=32,
        metavar="N",
        help="chunks per batch handed to a worker (default 32)",
    )
    extract.add_argument(
        "--json",
        metavar="OUT",
        help="also write the summary as JSON to OUT ('-' = stdout; the summary goes to stderr)",
    )
    extract.add_argument("--no-progress", action="store_true", help="no progress bar")
    extract.set_defaults(
        handler=_cmd_extract,
        paths=(("cache", "--cache", "cache"), ("json", "--json", "out-file")),
    )


def build_factory(args: argparse.Namespace) -> Any:
    """The picklable extractor factory every worker calls (tests replace this).

    Raises:
        InputError: Neither ``--llm`` nor a usable ``--extractor``.
        ConfigError: A malformed ``--llm`` spec or cache.
    """
    from sarg_integrations.errors import InputError
    from sarg_integrations.extraction.llm.cache import as_cache
    from sarg_integrations.extraction.prefill import ExtractorRecipe
    from sarg_integrations.models import specs

    if args.extractor and args.llm:
        msg = (
            f"--extractor {args.extractor} and --llm {args.llm} both choose the extractor; "
            "drop one of them"
        )
        raise InputError(msg, argument="--extractor", value=args.extractor)
    if not args.llm and not args.extractor:
        msg = (
            "sarg extract needs the extractor: add --llm PROVIDER:MODEL (e.g. "
            "openai:gpt-4o-mini) or --extractor NAME (tagger, rules, union)"
        )
        raise InputError(msg, argument="--llm", value=None)
    # a malformed spec or cache fails here, once, not in every worker
    if args.llm:
        specs.parse_llm_spec(args.llm)
    cache = as_cache(args.cache)
    closer = getattr(cache, "close", None)
    if callable(closer):
        closer()
    return ExtractorRecipe(
        cache=args.cache,
        llm=args.llm,
        extractor=args.extractor,
        schema=args.schema,
        max_concurrency=args.max_concurrency or 8,
    )


def build_executor(args: argparse.Namespace) -> BatchExecutor:
    """``--ray [ADDRESS]`` → Ray actors; otherwise ``--workers`` local processes."""
    if args.ray is not None:
        from sarg_integrations.extraction.prefill_ray import RayExecutor

        return RayExecutor(args.ray or None, workers=args.workers or 4)
    from sarg_integrations.extraction.prefill import LocalExecutor

    return LocalExecutor(args.workers or 1)


def _cmd_extract(args: argparse.Namespace) -> int:
    from sarg_integrations.extraction.prefill import prefill
    from sarg_integrations.io import load_documents

    factory = build_factory(args)
    executor = build_executor(args)
    documents = load_documents(args.docs)
    to_stdout = args.json == "-"
    stream = sys.stderr if to_stdout else sys.stdout
    bar = _ProgressBar(enabled=not args.no_progress and isatty(sys.stderr))
    try:
        report = prefill(
            documents,
            factory,
            executor=executor,
            batch_size=args.batch_size,
            progress=bar.update,
        )
    finally:
        bar.close()
    lines = report.lines()
    if args.json and not to_stdout:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report.to_dict(), handle, indent=2)
            handle.write("\n")
        lines.append(f"JSON summary written to {args.json}")
    emit(lines, stream)
    if to_stdout:
        sys.stdout.write(json.dumps(report.to_dict()) + "\n")
    return 0


class _ProgressBar:
    """A tqdm bar over chunks, opened when the total is known (on a terminal only)."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self._bar: Any = None

    def update(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc="pre-extracting", unit="chunk")
        self._bar.update(done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
