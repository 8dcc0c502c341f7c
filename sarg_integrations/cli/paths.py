"""Checks of the file and folder options, before any work starts."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

__all__ = ["check_path_options"]

_CACHE_SUFFIXES = ("", ".sqlite", ".sqlite3", ".db", ".cache")


_FILE_NOUNS = {"--json": "--json file", "--html": "HTML file (--html)", "--png": "picture (--png)"}


def check_path_options(args: argparse.Namespace) -> None:
    """Check the file and folder options of ``args`` before any work starts.

    Inputs must exist and be of the right kind (file or folder) and readable; outputs
    must not be folders (or files, for folders), and their folder must exist and be
    writable. Each command lists its path options as ``(attribute, option, kind)`` in
    ``args.paths`` (``set_defaults(paths=...)``); kinds: ``in-file``, ``in-dir``,
    ``in-any``, ``out-file``, ``out-any`` (a folder or a .json file), ``cache``. The
    ``eval`` subcommand checks its own paths.

    Raises:
        InputError: Naming the option, the path and the fix.

    Example:
        >>> ns = argparse.Namespace(json="/no/such/folder/out.json",
        ...                         paths=(("json", "--json", "out-file"),))
        >>> check_path_options(ns)
        Traceback (most recent call last):
        ...
        sarg_integrations.errors.InputError: cannot write the --json file \
/no/such/folder/out.json: the folder /no/such/folder does not exist; create it \
first (mkdir -p /no/such/folder) or pass a path in an existing folder
    """
    for attribute, option, kind in getattr(args, "paths", ()):
        value = getattr(args, attribute, None)
        if not isinstance(value, str) or not value or (option == "--json" and value == "-"):
            continue
        problem = _path_problem(value, option, kind)
        if problem:
            from sarg_integrations.errors import InputError

            raise InputError(problem, argument=option, value=value)


def _path_problem(value: str, option: str, kind: str) -> str | None:
    from pathlib import Path

    if kind == "cache" and "://" in value:
        return None  # a cache URL (redis://…); the extractor checks its scheme
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
