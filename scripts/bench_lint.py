#!/usr/bin/env python3
"""Benchmark `memdir lint` with every rule on, on generated folders of 50, 1,000 and 10,000 memories.

    python scripts/bench_lint.py [--runs 3] [--sizes 50,1000,10000]

Each figure is the median wall time of fresh `python -m memdir --dir X lint --extend-select ALL`
processes (the index is made current first, as in a repository that runs `memdir index` in a hook),
with its peak memory (max RSS of the process). In the same run: the floor of any typer CLI,
`python -c "import typer"`. Then, in-process on the largest folder, the time each rule family takes
on top of loading the folder, to show where the time goes. Everything runs in a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.synthetic import write_folder  # noqa: E402

TODAY = "2026-11-22"


def run_once(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one child process."""
    env = {**os.environ, "MEMDIR_TODAY": TODAY, "NO_COLOR": "1"}
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(f"bench_lint: {' '.join(argv)} exited {child.returncode}")
    return elapsed, usage.ru_maxrss / 1024


def median_run(argv: list[str], runs: int) -> tuple[float, float]:
    results = [run_once(argv) for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def per_family(folder: Path) -> list[tuple[str, float]]:
    """In-process seconds per rule family, each on the already loaded folder."""
    import datetime as dt

    from memdir import MemoryDir
    from memdir.lint import RULES

    memdir = MemoryDir(folder, today=dt.date.fromisoformat(TODAY))
    scan = memdir.scan()
    start = time.perf_counter()
    memdir._lint([], scan)
    base = time.perf_counter() - start
    out = [("load the folder (scan)", _timed(memdir.scan)), ("plan the index", base)]
    for family in sorted({code[0] for code in RULES}):
        rules = [r for code, r in RULES.items() if code[0] == family]
        start = time.perf_counter()
        memdir._lint(rules, scan)
        out.append((f"{family} rules ({len(rules)})", time.perf_counter() - start - base))
    return out


def _timed(call: object) -> float:
    start = time.perf_counter()
    call()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="50,1000,10000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        print(f"memdir lint --extend-select ALL, median of {args.runs} fresh processes\n")
        print("| folder | wall | peak memory | x import typer |")
        print("|---|---|---|---|")
        floor, floor_mem = median_run([python, "-c", "import typer"], max(args.runs, 5))
        print(f'| `python -c "import typer"` (floor) | {floor * 1000:.0f} ms | {floor_mem:.0f} MiB | 1.0 |')
        largest = None
        for size in sizes:
            folder = Path(tmp) / f"m{size}"
            write_folder(folder, size)
            run_once([python, "-m", "memdir", "--dir", str(folder), "index"])
            wall, mem = median_run([python, "-m", "memdir", "--dir", str(folder), "lint", "--extend-select", "ALL",
                                    "--exit-zero", "--format", "json"], args.runs)  # fmt: skip
            print(f"| {size:,} memories | {wall * 1000:.0f} ms | {mem:.0f} MiB | {wall / floor:.1f} |")
            largest = folder
        if largest is not None:
            print(f"\nWhere the time goes on {largest.name[1:]} memories (in-process, one run):\n")
            print("| step | seconds |")
            print("|---|---|")
            for step, seconds in per_family(largest):
                print(f"| {step} | {seconds:.3f} |")


if __name__ == "__main__":
    main()
