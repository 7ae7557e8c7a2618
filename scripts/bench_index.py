#!/usr/bin/env python3
"""Benchmark `memdir index`: wall time of the command a session-start hook runs, beside Python's
own start-up cost, plus in-process timings of the index planner to show how it scales.

    python scripts/bench_index.py [--runs 15] [--corpus ../shared/corpus/real]

What it measures (medians over --runs, every command run as a fresh subprocess of this
interpreter, the commands interleaved round-robin so drift hits them all alike):

- `python -c "import typer"`: the baseline, an interpreter that imports memdir's CLI framework;
- `python -m memdir --dir X index` on the bundled example and on the largest real folder (most
  `.md` files) of the shared corpus, warm: MEMORY.md is already current, which is the normal
  session-start case; the `memdir` console script too, as a hook would call it;
- `python -m memdir --dir X lint` and `python -m memdir --version`, for context.

Then, in-process (no interpreter start-up): `MemoryDir(X).plan_index()` on the same folders and
on synthetic folders of 1,000 and 10,000 generated memories.

Everything runs on copies in a temporary directory; nothing in the repository is written.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "real"
TODAY = "2026-11-22"
TYPES = ("user", "feedback", "project", "reference")


def md_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.md") if p.is_file()]


def largest_folder(corpus: Path) -> Path | None:
    """The corpus folder with the most .md files (ties: the most bytes of .md, then the name)."""
    if not corpus.is_dir():
        return None
    folders = [p for p in corpus.iterdir() if p.is_dir()]
    if not folders:
        return None

    def size(folder: Path) -> tuple[int, int, str]:
        files = md_files(folder)
        return (len(files), sum(p.stat().st_size for p in files), folder.name)

    return max(folders, key=size)


def generate(folder: Path, count: int, seed: int = 1) -> None:
    """`count` plausible memories: every type, ~95-character descriptions, Why/How bodies, dates."""
    rng = random.Random(seed)
    words = [
        *("deploy", "lint", "commit", "release", "freeze", "dashboard", "latency", "review"),
        *("schema", "migration", "cache", "token", "budget", "incident", "rollback", "feature"),
        *("flag", "tracker", "channel", "owner", "deadline", "test"),
    ]
    folder.mkdir(parents=True)
    start = dt.date(2024, 1, 1)
    for i in range(count):
        kind = TYPES[i % len(TYPES)]
        name = f"{'-'.join(rng.sample(words, 3))}-{i}"
        description = " ".join(rng.choice(words) for _ in range(14)).capitalize()[:95]
        day = start + dt.timedelta(days=rng.randrange(1000))
        importance = f"importance: {rng.choice((0.2, 0.5, 0.8))}\n" if i % 3 == 0 else ""
        why, how = " ".join(rng.sample(words, 8)), " ".join(rng.sample(words, 6))
        body = f"{description}.\n\n**Why:** {why}.\n\n**How to apply:** {how}.\n"
        (folder / f"{kind}_{name}.md").write_text(
            f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n"
            f"created: {day}\nupdated: {day}\n{importance}---\n{body}",
            encoding="utf-8",
        )
    (folder / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")


def ms(seconds: float) -> float:
    return seconds * 1000.0


def time_subprocesses(
    commands: dict[str, list[str]], runs: int, env: dict[str, str], cwd: Path
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {label: [] for label in commands}
    for argv in commands.values():  # one untimed warm-up each (disk cache, .pyc files)
        subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    for _ in range(runs):
        for label, argv in commands.items():
            begin = time.perf_counter()
            done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
            times[label].append(time.perf_counter() - begin)
            if done.returncode not in (0, 1):
                raise SystemExit(f"{label} exited {done.returncode}: {done.stderr.decode(errors='replace')}")
    return times


def time_in_process(folder: Path, runs: int) -> tuple[list[float], int, int]:
    from memdir import MemoryDir

    today = dt.date.fromisoformat(TODAY)
    MemoryDir(folder, today=today).write_index()  # warm: the index is current
    times, result = [], None
    for _ in range(runs):
        begin = time.perf_counter()
        result = MemoryDir(folder, today=today).plan_index()
        times.append(time.perf_counter() - begin)
    assert result is not None
    return times, len(result.entries), len(result.left_out)


def row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def machine() -> list[str]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    import memdir

    return [
        f"- CPUs: nproc {usable} (os.cpu_count() {os.cpu_count()})",
        f"- Python {platform.python_version()} ({platform.python_implementation()}) at {sys.executable}",
        f"- {platform.platform()}",
        f"- memdir {memdir.__version__}" + (f", commit {commit.stdout.strip()}" if commit.returncode == 0 else ""),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs per command (default 15)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of real memory folders")
    parser.add_argument("--synthetic", type=int, nargs="*", default=[1000, 10000], help="sizes of generated folders")
    args = parser.parse_args()

    print("## Machine\n")
    print("\n".join(machine()))
    print(f"- runs per command: {args.runs}\n")

    with tempfile.TemporaryDirectory(prefix="memdir-bench-") as tmp_name:
        tmp = Path(tmp_name)
        folders: dict[str, Path] = {}
        shutil.copytree(REPO / "examples" / "memory", tmp / "example")
        folders["example"] = tmp / "example"
        largest = largest_folder(args.corpus)
        notes = []
        if largest is None:
            notes.append(f"Note: no corpus at {args.corpus}; the largest-real-folder rows are skipped.")
        else:
            shutil.copytree(largest, tmp / "largest")
            folders["largest"] = tmp / "largest"
            notes.append(
                f"`largest` is `{largest.name}` from the corpus: {len(md_files(largest))} .md files "
                f"(incl. MEMORY.md), {sum(p.stat().st_size for p in md_files(largest)):,} bytes."
            )
        notes.append(f"`example` is examples/memory: {len(md_files(folders['example']))} .md files (incl. MEMORY.md).")

        env = {k: v for k, v in os.environ.items() if k not in ("MEMDIR_DIR", "MEMDIR_DEBUG", "CLAUDE_CONFIG_DIR")}
        env.update(MEMDIR_TODAY=TODAY, NO_COLOR="1", HOME=str(tmp))
        py = sys.executable
        script = Path(py).with_name("memdir")
        commands: dict[str, list[str]] = {'python -c "import typer"  (baseline)': [py, "-c", "import typer"]}
        for label, folder in folders.items():
            subprocess.run(
                [py, "-m", "memdir", "--dir", str(folder), "index"], env=env, cwd=tmp, capture_output=True, check=True
            )
            commands[f"python -m memdir --dir {label} index  (warm)"] = [
                py,
                "-m",
                "memdir",
                "--dir",
                str(folder),
                "index",
            ]
            if script.exists():
                commands[f"memdir --dir {label} index  (console script, warm)"] = [
                    str(script),
                    "--dir",
                    str(folder),
                    "index",
                ]
            commands[f"python -m memdir --dir {label} lint"] = [py, "-m", "memdir", "--dir", str(folder), "lint"]
        commands["python -m memdir --version"] = [py, "-m", "memdir", "--version"]

        times = time_subprocesses(commands, args.runs, env, tmp)
        baseline = statistics.median(times[next(iter(commands))])
        print("## Wall time, one subprocess per run\n")
        for note in notes:
            print(note)
        print()
        print(row(["command", "median ms", "min ms", "max ms", "median − baseline ms"]))
        print(row(["---", "---:", "---:", "---:", "---:"]))
        for label, samples in times.items():
            median = statistics.median(samples)
            print(
                row(
                    [
                        f"`{label}`",
                        f"{ms(median):.0f}",
                        f"{ms(min(samples)):.0f}",
                        f"{ms(max(samples)):.0f}",
                        f"{ms(median - baseline):+.0f}",
                    ]
                )
            )

        for size in args.synthetic:
            generate(tmp / f"synthetic-{size}", size)
            folders[f"synthetic {size:,}"] = tmp / f"synthetic-{size}"
        print("\n## In-process `MemoryDir(X).plan_index()` (warm index, no interpreter start-up)\n")
        print(row(["folder", ".md files", "indexed", "left out", "median ms", "min ms", "max ms"]))
        print(row(["---", "---:", "---:", "---:", "---:", "---:", "---:"]))
        for label, folder in folders.items():
            samples, indexed, left_out = time_in_process(folder, args.runs)
            count = len([p for p in md_files(folder) if p.name != "MEMORY.md"])
            print(
                row(
                    [
                        label,
                        f"{count:,}",
                        f"{indexed:,}",
                        f"{left_out:,}",
                        f"{ms(statistics.median(samples)):.1f}",
                        f"{ms(min(samples)):.1f}",
                        f"{ms(max(samples)):.1f}",
                    ]
                )
            )


if __name__ == "__main__":
    main()
