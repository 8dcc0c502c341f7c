"""Exit codes of ``sarg run --deadline`` on a large document (issue 16, item 3).

``sarg run --deadline 3`` on a ~1 MB document printed its report and then died with
``libblis: Aborting`` (exit 134) or a segmentation fault (139), and Ctrl-C gave -6
instead of 130. This runs the command ``--runs`` times with ``--deadline 3`` and
records each exit code, then sends SIGINT ``--interrupt-after`` seconds after the start
``--interrupts`` times (``--deadline 30``). Every run should exit 0, every interrupted
one 130, with nothing from libblis on stderr.

Usage::

    python benchmarks/check_deadline_exit.py                       # a generated 1 MB text
    python benchmarks/check_deadline_exit.py --doc big.txt --interrupt-after 2 25

The signal is sent from Python: a command started with ``&`` by a non-interactive shell
ignores SIGINT, which would hide the case.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUERY = "How did the film's release lead to the award?"


def run_once(doc: Path, deadline: float, interrupt_after: float | None) -> dict[str, object]:
    """One ``sarg run``; SIGINT after ``interrupt_after`` seconds when given."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONFAULTHANDLER": "1"}
    env.setdefault("HF_HUB_OFFLINE", "1")
    sarg = shutil.which("sarg")
    command = (
        [sarg]
        if sarg
        else [
            sys.executable,
            "-c",
            "import sys; from sarg_integrations.cli import main; sys.exit(main())",
        ]
    )
    start = time.monotonic()
    process = subprocess.Popen(
        [*command, "run", "--docs", str(doc), "--query", QUERY, "--deadline", f"{deadline:g}"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if interrupt_after is not None:
        time.sleep(interrupt_after)
        process.send_signal(signal.SIGINT)
    out, err = process.communicate()
    return {
        "exit": process.returncode,
        "seconds": round(time.monotonic() - start, 1),
        "libblis": "libblis" in err,
        "deadline_reported": "deadline of" in out,
        "stderr_tail": err.strip().splitlines()[-1][:120] if err.strip() else "",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--doc", type=Path, help="the document (default: 1 MB of generated prose)")
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--interrupts", type=int, default=3)
    parser.add_argument("--interrupt-after", type=float, nargs="+", default=[2.0], metavar="S")
    args = parser.parse_args(argv)
    doc = args.doc
    if doc is None:
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_memory import generate_text

        doc = Path(tempfile.mkdtemp()) / "doc_1mb.txt"
        doc.write_text(generate_text(1_000_000), encoding="utf-8")
    bad = 0
    for i in range(1, args.runs + 1):
        row = run_once(doc, 3, None)
        bad += row["exit"] != 0 or bool(row["libblis"])
        print(f"--deadline 3, run {i}: {row}", flush=True)
    for after in args.interrupt_after:
        for i in range(1, args.interrupts + 1):
            row = run_once(doc, 30, after)
            bad += row["exit"] != 130 or bool(row["libblis"])
            print(f"SIGINT after {after:g} s, run {i}: {row}", flush=True)
    print("all clean" if not bad else f"{bad} run(s) not clean")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
