"""Write an output file so that it is either the old file or the whole new one.

A plain ``open(path, "w")`` truncates the old file first: if serialising or writing
then fails (a ``RecursionError``, a full disk, Ctrl-C), the user is left with an empty
or half-written file where a valid result used to be. Here the bytes go to a temporary
file beside the target, are flushed to disk, and only then renamed over it
(``os.replace`` is atomic on POSIX and Windows within one file system).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_text"]


def _target(path: str | os.PathLike[str]) -> Path:
    # Replace what a symlink points at, not the link itself.
    return Path(os.path.realpath(os.fspath(path)))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path``.

    For writers that take a path (``matplotlib.savefig``). On any exception the
    temporary file is removed and ``path`` is left as it was.
    """
    target = _target(path)
    temp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        yield temp
        if target.exists():  # keep the old file's permissions
            with contextlib.suppress(OSError):
                os.chmod(temp, target.stat().st_mode & 0o7777)
        os.replace(temp, target)
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: the old file survives any failure.

    Raises:
        OSError: The folder is not writable, the disk is full… (``path`` unchanged).

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> atomic_write_text(folder / "out.json", "{}\\n")
        >>> (folder / "out.json").read_text(), [p.name for p in folder.iterdir()]
        ('{}\\n', ['out.json'])
    """
    with atomic_path(path) as temp:
        # O_EXCL: never write through a file (or link) placed at the temporary name;
        # 0o666 lets the umask decide the mode, as open(path, "w") does.
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
