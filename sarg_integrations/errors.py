"""The SARG exception hierarchy.

Every error raised at the package's API boundary is a :class:`SARGError`. Classes that
describe bad arguments also derive from the matching built-in (``ValueError``,
``ImportError``, ``FileNotFoundError``) so that existing ``except`` clauses keep working.
Messages name the argument, show the offending value and say how to fix it.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CacheUnavailableError",
    "ConfigError",
    "DocumentLoadError",
    "ExtractionError",
    "InputError",
    "MissingDependencyError",
    "ModelLoadError",
    "SARGError",
]


class SARGError(Exception):
    """Base class of every error raised by sarg-integrations."""


class ConfigError(SARGError, ValueError):
    """Raised when a configuration value is out of range or of the wrong type.

    Attributes:
        field: The name of the offending configuration field.
        value: The value that was given.
    """

    def __init__(self, message: str, *, field: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class InputError(SARGError, ValueError):
    """Raised when a query or a document passed to the pipeline cannot be used.

    Attributes:
        argument: The name of the offending argument (``"query"``, ``"documents[3]"``…).
        value: The value that was given (possibly truncated).
    """

    def __init__(self, message: str, *, argument: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.argument = argument
        self.value = value


class DocumentLoadError(InputError):
    """Raised when documents cannot be read from a path (missing file, bad encoding, bad JSONL).

    Attributes:
        path: The path that failed.
        line: The 1-based line number for JSONL errors, else ``None``.
    """

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        super().__init__(message, argument="docs", value=path)
        self.path = path
        self.line = line


class ExtractionError(SARGError):
    """Raised by an extractor that cannot turn a document into triples.

    The pipeline catches it per document, skips that document and reports the reason in
    :attr:`SARGResult.skipped_documents`; it never escapes :meth:`SARGPipeline.run`.

    Attributes:
        document_id: The id of the document being extracted.
        raw_output: The raw model output that could not be parsed, when there is one.
    """

    def __init__(
        self, message: str, *, document_id: str | None = None, raw_output: str | None = None
    ) -> None:
        super().__init__(message)
        self.document_id = document_id
        self.raw_output = raw_output


class MissingDependencyError(SARGError, ImportError):
    """Raised when an optional dependency needed for a feature is not installed.

    Attributes:
        package: The pip package that is missing.
        extra: The ``sarg-integrations[extra]`` that installs it, when there is one.
    """

    def __init__(self, package: str, *, feature: str, extra: str | None = None) -> None:
        install = f'pip install "sarg-integrations[{extra}]"' if extra else f"pip install {package}"
        msg = f"{feature} needs the package {package!r}, which is not installed. Fix: {install}"
        super().__init__(msg, name=package)
        self.package = package
        self.extra = extra


class ModelLoadError(SARGError, RuntimeError):
    """Raised when an embedded model (spaCy pipeline, sentence encoder) cannot be loaded."""


class CacheUnavailableError(SARGError, ConnectionError):
    """Raised by a shared cache whose server is down or too slow to answer.

    The LLM extractor catches it, extracts without the cache, logs a warning and counts
    ``stats["cache_errors"]``; it never fails a query.

    Attributes:
        url: The cache URL (without a password).
    """

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url
