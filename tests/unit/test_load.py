"""Load (issue 8, part 4): 64 concurrent queries, and one cache file shared by processes.

Both run the functions of ``benchmarks/bench_load.py`` (so the benchmark cannot rot):
fake async model with 5–25 ms latency and a 5 % error rate, and spawned processes
writing one ``SQLiteCache`` file, healthy and then overwritten with garbage.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    # Spawned cache workers re-import the module by name, from the parent's sys.path.
    folder = str(REPO / "benchmarks")
    if folder not in sys.path:
        sys.path.append(folder)
    return importlib.import_module("bench_load")


bench = _bench()


def test_64_concurrent_queries_complete_bounded_and_deterministic() -> None:
    report = bench.run_load(64, rounds=2, max_concurrency=8, error_rate=0.05)
    assert report.exceptions == []
    assert report.completed == 128 and report.lost == 0
    assert report.lost_documents == 0  # every document used or skipped with a reason
    assert report.chains_found == 128
    assert 2 <= report.peak_in_flight <= 8  # the extractor's bound holds across queries
    assert report.transient_injected > 0
    assert report.retries_reported == report.transient_injected  # each one retried
    assert report.fatal_injected == report.fatal_reported == 2 * 3  # queries 7, 27, 47
    assert report.sequential_mismatches == 0
    growth = report.rss_mb[-1] - report.rss_mb[1]
    assert growth < 25, f"resident memory grew {growth:.1f} MB in the second round"


def test_cache_shared_by_processes_loses_nothing_and_recovers_from_garbage(
    tmp_path: Path,
) -> None:
    healthy, damaged = bench.run_cache_processes(4, 60, 20, folder=tmp_path)
    for report in (healthy, damaged):
        assert report.worker_errors == []
        assert report.entries_written == 4 * 60 + 20
        assert (report.entries_missing, report.entries_wrong) == (0, 0)
        assert report.readback_mismatches == 0
        assert report.integrity == "ok"
    assert healthy.rebuilds == 0 and healthy.moved_aside_files == 0
    # Four processes opened the damaged file at once: one moved it aside and rebuilt.
    assert damaged.rebuilds == 1 and damaged.moved_aside_files == 1


def test_a_high_error_rate_changes_nothing_but_the_retries() -> None:
    report = bench.run_load(16, max_concurrency=4, error_rate=0.3)
    assert report.lost == 0 and report.lost_documents == 0
    assert report.sequential_mismatches == 0  # the reference run fails other calls
    assert report.retries_reported == report.transient_injected > 20
