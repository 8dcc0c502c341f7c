"""Read one input file as UTF-8 text, safely, with errors that say how to fix them.

The reading half of :mod:`sarg_integrations.io`, which knows nothing of documents: a
regular file's bytes are read without ever blocking (a FIFO, a socket or a device is
refused on the open descriptor) and up to a size limit (:func:`read_bytes`); they are
decoded as UTF-8, a leading BOM dropped, while UTF-16 and binary data are refused with
the encoding named and an ``iconv`` command to fix it (:func:`decode_utf8`). Every such
failure is an :class:`UnreadableFile`, which a folder walk skips and reports.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sarg_integrations.errors import DocumentLoadError

__all__ = ["UnreadableFile", "decode_utf8", "file_kind", "read_bytes", "read_text", "utf16_guess"]

_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = ((b"\xff\xfe", "UTF-16LE"), (b"\xfe\xff", "UTF-16BE"))
_NUL_SAMPLE = 4096  # bytes looked at for NULs (UTF-16 without a BOM, binary files)
_NUL_SHARE = 0.1  # text has (almost) none; UTF-16 of ASCII text has ~50%


class UnreadableFile(DocumentLoadError):
    """A file that cannot be read as text at all (a folder walk skips it unless strict)."""


def _iconv_fix(path: str, encoding: str) -> str:
    return f"Fix: re-encode it as UTF-8, e.g. iconv -f {encoding} -t UTF-8 {path} > fixed{Path(path).suffix}"


def utf16_guess(data: bytes) -> str | None:
    """``"UTF-16LE"``/``"UTF-16BE"`` when ``data`` starts like UTF-16 (a BOM, or NULs in every
    other byte), ``"binary"`` when it is NUL-heavy otherwise, else ``None``.

    Example:
        >>> utf16_guess("Rain".encode("utf-16-le")), utf16_guess(b"Rain"), utf16_guess(bytes(8))
        ('UTF-16LE', None, 'binary')
    """
    for bom, name in _UTF16_BOMS:
        if data.startswith(bom):
            return name
    sample = data[:_NUL_SAMPLE]
    if not sample or sample.count(0) < _NUL_SHARE * len(sample):
        return None
    odd, even = sample[1::2].count(0), sample[0::2].count(0)
    half = len(sample) / 2
    if odd > 0.4 * half and even < 0.05 * half:
        return "UTF-16LE"
    if even > 0.4 * half and odd < 0.05 * half:
        return "UTF-16BE"
    return "binary"


def decode_utf8(data: bytes, path: str) -> str:
    """Decode UTF-8 bytes (dropping a leading BOM) or raise a helpful error.

    UTF-16 (with or without a byte order mark) and NUL-heavy binary data are refused
    rather than decoded into text full of NULs; the hint names the encoding.
    """
    guess = utf16_guess(data)
    if guess is not None and data.startswith(tuple(b for b, _ in _UTF16_BOMS)):
        msg = f"{path} is UTF-16 text (it starts with a {guess} byte order mark), not UTF-8. {_iconv_fix(path, 'UTF-16')}"
        raise UnreadableFile(msg, path=path)
    if guess is not None:
        share = round(100 * data[:_NUL_SAMPLE].count(0) / len(data[:_NUL_SAMPLE]))
        if guess == "binary":
            msg = (
                f"{path} is not text: {share}% of its first bytes are NUL, as in a binary file. "
                "Fix: convert it to plain UTF-8 text, or move it out of the folder"
            )
        else:
            msg = (
                f"{path} looks like {guess} text without a byte order mark ({share}% of its first "
                f"bytes are NUL), not UTF-8. {_iconv_fix(path, guess)}"
            )
        raise UnreadableFile(msg, path=path)
    offset = len(_BOM) if data.startswith(_BOM) else 0
    try:
        return data[offset:].decode("utf-8")
    except UnicodeDecodeError as exc:
        position = offset + exc.start
        line = data.count(b"\n", 0, position) + 1
        msg = (
            f"{path} is not valid UTF-8: byte 0x{data[position]:02x} at byte offset {position} "
            f"(line {line}) cannot be decoded ({exc.reason}). {_iconv_fix(path, 'latin1')}"
        )
        raise UnreadableFile(msg, path=path, line=line) from None


def file_kind(mode: int) -> str:
    """A file type in words."""
    kinds = (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    )
    return next((word for test, word in kinds if test(mode)), "not a regular file")


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``, read without ever blocking.

    The file is opened non-blocking (a FIFO with no writer would block a plain open)
    and checked on the open descriptor, so a file swapped after a check is caught too.
    """
    label = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except PermissionError:
        msg = (
            f"{label} cannot be read (permission denied); fix its permissions or pass another path"
        )
        raise UnreadableFile(msg, path=label) from None
    except OSError as exc:
        msg = f"{label} cannot be read: {exc.strerror or exc}"
        raise UnreadableFile(msg, path=label) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        mode, size = info.st_mode, info.st_size
        if not stat.S_ISREG(mode):
            msg = f"{label} is {file_kind(mode)}, not a regular file; only regular files are read"
            raise UnreadableFile(msg, path=label)
        data = handle.read(max_bytes + 1) if size <= max_bytes else b""
    if size > max_bytes or len(data) > max_bytes:
        msg = (
            f"{label} is larger than the limit of {max_bytes:,} bytes for one file "
            f"({max(size, len(data)) / 2**20:.1f} MiB); split it, or raise the limit "
            "(sarg run --max-file-mb N, or max_file_bytes=)"
        )
        raise UnreadableFile(msg, path=label)
    return data


def read_text(path: Path, max_bytes: int) -> str:
    """The text of the file at ``path`` (see :func:`read_bytes` and :func:`decode_utf8`)."""
    return decode_utf8(read_bytes(path, max_bytes), str(path))
