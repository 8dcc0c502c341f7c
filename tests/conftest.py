"""Shared fixtures: offline settings and paths to the team's shared data."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Models load from packages only; never reach for a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).parent))

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("SARG_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


@pytest.fixture
def shared_data() -> Path:
    """The team's evaluation data; tests needing it skip in a user's clone."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared evaluation data not found at {SHARED_DATA} (only in the team's workspace)")
    return SHARED_DATA
