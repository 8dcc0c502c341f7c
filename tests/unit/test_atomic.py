"""Atomic output writes (issue 16, item 8): a failed write never costs the old file."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from sarg_integrations._atomic import atomic_path, atomic_write_text


def _full_disk(*_args: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "result.json"
    target.write_text('{"old": true}\n', encoding="utf-8")
    monkeypatch.setattr(os, "fsync", _full_disk)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_text(target, '{"new": ' + "1" * 100_000 + "}\n")
    assert target.read_text(encoding="utf-8") == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_replaces_the_file_keeping_its_mode_and_follows_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old", encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new"
    assert real.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def test_atomic_path_keeps_the_old_file_when_the_writer_fails(tmp_path: Path) -> None:
    target = tmp_path / "graph.png"
    target.write_bytes(b"old picture")
    with pytest.raises(RuntimeError), atomic_path(target) as temp:
        temp.write_bytes(b"half")
        raise RuntimeError("renderer crashed")
    assert target.read_bytes() == b"old picture"
    assert [p.name for p in tmp_path.iterdir()] == ["graph.png"]
