"""Peak memory (RSS) of the offline extractors against document size (issue 16, item 2).

Each measurement runs in a fresh Python process, so one size's peak cannot hide
another's: the process generates one plain-text document of the given size (seeded,
prose-like sentences with causal cues and paragraph breaks), loads the extractor, runs
``extract`` on it and reports its peak RSS (``getrusage``), the RSS after loading the
models (the floor), the seconds spent extracting and the triples found.

The target is a peak under 1 GB for a 5 MB document.

Usage::

    python benchmarks/bench_memory.py                              # rules, 0.5 1 2 5 MB
    python benchmarks/bench_memory.py --extractors rules tagger --sizes 0.5 1
    python benchmarks/bench_memory.py --repo /tmp/baseline --sizes 0.5   # another checkout
    python benchmarks/bench_memory.py --extractors tagger --threads 1   # busy machine

``--repo`` runs the same measurement against another copy of the package (for example
``git archive <commit> sarg_integrations | tar -x -C /tmp/baseline``), to compare with
the code before a change.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_MB = 1024  # peak RSS target for a 5 MB document

_SUBJECTS = ["heavy rain", "the drought", "rising rates", "the strike", "a software bug",
             "the new policy", "cheap credit", "the heat wave", "a supply shortage", "the outage"]
_CUES = ["caused", "led to", "resulted in", "triggered", "prevented", "allowed", "delayed"]
_OBJECTS = ["widespread flooding", "higher food prices", "a fall in exports", "longer queues",
            "the factory closure", "slower growth", "a rise in complaints", "lower yields"]
_FILLER = ["The report was published on a Tuesday.", "Officials met in the capital.",
           "Several towns are located along the river.", "The committee reviewed the figures."]


def generate_text(n_bytes: int, seed: int = 16) -> str:
    """Prose-like plain text of about ``n_bytes`` characters (ASCII), deterministic."""
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        if rng.random() < 0.6:
            sentence = f"{rng.choice(_SUBJECTS).capitalize()} {rng.choice(_CUES)} {rng.choice(_OBJECTS)}."
        else:
            sentence = rng.choice(_FILLER)
        parts.append(sentence)
        parts.append("\n\n" if rng.random() < 0.12 else " ")
        size += len(sentence) + 1
    return "".join(parts)[:n_bytes]


def _rss_mb() -> float:
    """Peak RSS of this process so far, in MB (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(size_mb: float, extractor_name: str) -> dict[str, float | int | str]:
    """Measure one extraction in this (fresh) process."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sarg_integrations.extraction.choice import resolve_extractor
    from sarg_integrations.schema import SourceDocument

    text = generate_text(int(size_mb * 1_000_000))
    extractor = resolve_extractor(extractor_name)
    extractor.warm_up()
    floor = _rss_mb()
    start = time.perf_counter()
    triples = extractor.extract(SourceDocument("big", text))
    return {
        "extractor": extractor_name,
        "size_mb": size_mb,
        "floor_mb": round(floor),
        "peak_mb": round(_rss_mb()),
        "seconds": round(time.perf_counter() - start, 1),
        "triples": len(triples),
    }


def _peak_of(pid: int) -> float | None:
    """The peak RSS (``VmHWM``) of a running process, in MB (Linux ``/proc``)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def measure(
    repo: Path, size_mb: float, extractor: str, timeout: float, threads: int | None = None
) -> dict[str, object]:
    """Run :func:`child` in a fresh interpreter with ``repo`` first on the path.

    The child's peak RSS is also watched from outside, so a measurement stopped at
    ``timeout`` still reports the peak reached so far (``peak_so_far_mb``).
    """
    env = {**os.environ, "PYTHONPATH": str(repo)}
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    code = (
        f"import sys, json; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
        f"import bench_memory as b; print(json.dumps(b.child({size_mb!r}, {extractor!r})))"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    start = time.monotonic()
    peak = 0.0
    while process.poll() is None:
        peak = max(peak, _peak_of(process.pid) or 0.0)
        if time.monotonic() - start > timeout:
            process.kill()
            process.wait()
            return {
                "extractor": extractor,
                "size_mb": size_mb,
                "error": f"over {timeout:g} s (peak so far {peak:.0f} MB)",
                "peak_so_far_mb": round(peak),
            }
        time.sleep(0.5)
    stdout, stderr = process.communicate()
    if process.returncode != 0:
        tail = (stderr.strip().splitlines() or ["?"])[-1]
        return {
            "extractor": extractor,
            "size_mb": size_mb,
            "error": f"exit {process.returncode}: {tail}",
        }
    return json.loads(stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[0.5, 1, 2, 5], metavar="MB")
    parser.add_argument("--extractors", nargs="+", default=["rules"], metavar="NAME")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to measure")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per measurement")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument(
        "--threads",
        type=int,
        help="OMP/MKL threads of the measured process (on a busy machine 1 is much faster "
        "for the tagger: 20 s instead of 85 s for 0.04 MB on 2 shared cores)",
    )
    args = parser.parse_args(argv)
    rows = []
    print(f"{'extractor':<9} {'MB':>5} {'floor MB':>9} {'peak MB':>8} {'s':>7} {'triples':>8}")
    for extractor in args.extractors:
        for size in args.sizes:
            row = measure(args.repo, size, extractor, args.timeout, args.threads)
            rows.append(row)
            if "error" in row:
                print(f"{extractor:<9} {size:>5g} {row['error']}")
            else:
                flag = "" if size < 5 or row["peak_mb"] < TARGET_MB else f"  over the {TARGET_MB} MB target"
                print(
                    f"{extractor:<9} {size:>5g} {row['floor_mb']:>9} {row['peak_mb']:>8} "
                    f"{row['seconds']:>7} {row['triples']:>8}{flag}",
                    flush=True,
                )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
