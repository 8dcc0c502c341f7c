"""Issue 16, items 4 and 5: special and undecodable files in a ``--docs`` folder.

A folder walk reads regular files only and never blocks; what it cannot read as UTF-8
text is skipped and reported (``read_documents(...).skipped``), or raises when strict.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from cli_support import fake_pipeline  # noqa: F401 - a fixture

from sarg_integrations import cli
from sarg_integrations.errors import DocumentLoadError, InputError
from sarg_integrations.io import load_documents, read_documents

needs_posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and symlinks need POSIX")


def _within(seconds: float, call: Any) -> Any:
    """``call()``, failing the test instead of hanging when it blocks (a FIFO read would)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the test thread
            box["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"blocked for more than {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text("Rain causes floods.", encoding="utf-8")
    return docs


def _reasons(folder: Path, **options: Any) -> dict[str, str]:
    loaded = _within(10, lambda: read_documents([folder], **options))
    assert [d.id for d in loaded.documents] == ["good"]
    return {Path(s.document_id).name: s.reason for s in loaded.skipped}


# ------------------------------------------------------------------ item 4: special files


@needs_posix
def test_a_fifo_in_a_folder_is_skipped_without_blocking(folder: Path) -> None:
    os.mkfifo(folder / "pipe.txt")
    assert "FIFO" in _reasons(folder)["pipe.txt"]


@needs_posix
def test_a_symlink_to_dev_zero_is_not_read(folder: Path) -> None:
    (folder / "zero.txt").symlink_to("/dev/zero")
    assert "outside the folder" in _reasons(folder)["zero.txt"]
    # Following it still reads regular files only.
    assert "character device" in _reasons(folder, follow_symlinks=True)["zero.txt"]


@needs_posix
def test_a_self_looping_symlink_is_skipped_not_a_traceback(folder: Path) -> None:
    (folder / "loop.txt").symlink_to(folder / "loop.txt")
    (folder / "dangling.md").symlink_to(folder / "missing.md")
    reasons = _reasons(folder)
    assert "loops" in reasons["loop.txt"]
    assert "broken" in reasons["dangling.md"]


@needs_posix
def test_a_symlink_out_of_the_folder_needs_follow_symlinks(folder: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("Outside text causes leaks.", encoding="utf-8")
    (folder / "leak.txt").symlink_to(secret)
    assert "--follow-symlinks" in _reasons(folder)["leak.txt"]
    followed = read_documents([folder], follow_symlinks=True)
    assert sorted(d.text for d in followed.documents) == [
        "Outside text causes leaks.",
        "Rain causes floods.",
    ]


@needs_posix
def test_symlinks_within_the_folder_are_followed_once(folder: Path) -> None:
    (folder / "sub").mkdir()
    (folder / "sub" / "again.txt").symlink_to(folder / "good.txt")
    (folder / "sub" / "up").symlink_to(folder)  # a folder loop
    loaded = _within(10, lambda: read_documents([folder]))
    assert [d.id for d in loaded.documents] == ["good"]
    assert loaded.skipped == []


def test_a_file_over_the_size_cap_is_skipped_in_a_folder_and_refused_when_named(
    folder: Path,
) -> None:
    big = folder / "big.txt"
    big.write_text("x" * 2_000, encoding="utf-8")
    assert "limit of 1,000 bytes" in _reasons(folder, max_file_bytes=1_000)["big.txt"]
    with pytest.raises(DocumentLoadError, match="--max-file-mb"):
        load_documents([big], max_file_bytes=1_000)
    with pytest.raises(InputError, match="max_file_bytes=0"):
        read_documents([folder], max_file_bytes=0)


@needs_posix
def test_strict_refuses_a_special_file(folder: Path) -> None:
    os.mkfifo(folder / "pipe.txt")
    with pytest.raises(DocumentLoadError, match="FIFO"):
        _within(10, lambda: read_documents([folder], strict=True))


# ------------------------------------------------------------- item 5: undecodable files


def test_a_latin1_file_in_a_folder_is_skipped_with_the_iconv_hint(folder: Path) -> None:
    bad = folder / "latin.txt"
    bad.write_bytes("Café causes joy.".encode("latin-1"))
    reason = _reasons(folder)["latin.txt"]
    assert "not valid UTF-8" in reason
    assert f"iconv -f latin1 -t UTF-8 {bad}" in reason


def test_a_named_undecodable_file_stays_an_error(folder: Path) -> None:
    bad = folder / "latin.txt"
    bad.write_bytes("Café".encode("latin-1"))
    with pytest.raises(DocumentLoadError, match="iconv"):
        load_documents([bad])


def test_strict_keeps_failing_for_folders(folder: Path) -> None:
    (folder / "latin.txt").write_bytes("Café".encode("latin-1"))
    with pytest.raises(DocumentLoadError, match="not valid UTF-8"):
        read_documents([folder], strict=True)


def test_utf16_with_a_bom_names_utf16(folder: Path) -> None:
    (folder / "wide.txt").write_bytes("Rain causes floods.".encode("utf-16"))
    reason = _reasons(folder)["wide.txt"]
    assert "UTF-16" in reason and "iconv -f UTF-16 -t UTF-8" in reason
    assert "latin1" not in reason


@pytest.mark.parametrize(("codec", "name"), [("utf-16-le", "UTF-16LE"), ("utf-16-be", "UTF-16BE")])
def test_utf16_without_a_bom_is_detected_not_loaded_as_text(
    folder: Path, codec: str, name: str
) -> None:
    (folder / "wide.txt").write_bytes("Rain causes floods. Floods cause damage.".encode(codec))
    reason = _reasons(folder)["wide.txt"]
    assert f"looks like {name}" in reason and f"iconv -f {name}" in reason


def test_a_binary_file_named_txt_is_skipped(folder: Path) -> None:
    (folder / "blob.txt").write_bytes(bytes(range(256)) * 4 + bytes(512))
    assert "not text" in _reasons(folder)["blob.txt"] or "UTF-8" in _reasons(folder)["blob.txt"]


def test_a_folder_of_only_unreadable_files_says_so(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("Café".encode("latin-1"))
    with pytest.raises(DocumentLoadError, match=r"no document could be read; 1 file\(s\) skipped"):
        read_documents([tmp_path])


# ------------------------------------------------------------------------------ CLI


def test_sarg_run_reports_skipped_files_and_strict_fails(
    folder: Path, fake_pipeline: None, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "latin.txt").write_bytes("Café causes joy.".encode("latin-1"))
    assert cli.main(["run", "-q", "What does rain cause?", "-d", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "skipped 1 file(s)" in out
    assert "latin.txt: " in out and "iconv -f latin1" in out
    assert cli.main(["run", "-q", "What does rain cause?", "-d", str(folder), "--strict"]) == 2
    assert "not valid UTF-8" in capsys.readouterr().err
