#!/usr/bin/env python3
"""memdir's benchmark suite: every figure beside the floors it is judged against, in one run.

    python scripts/bench.py [--runs 5] [--sizes 50,450,1000,10000] [--generator realistic|synthetic]
                            [--corpus ../shared/corpus/real] [--output BENCHMARKS.md]
                            [--only PATTERN] [--folders DIR] [--no-stress]

Generates memory folders of each size (scripts/realistic.py: words, lengths, languages, types and
frontmatter shapes drawn from the statistics of the real folders in ../shared/corpus/real, or
scripts/synthetic.py when that is absent or asked for) and times fresh `memdir` processes on them,
as a hook or CI would run them: the median wall time of
--runs runs after one untimed warm-up, their CPU time and the peak memory (max RSS) of the largest run. In the
same run it measures the two floors: `python -c "import typer"` (the start-up of any typer CLI)
and a plain-Python script of a few lines that reads every file and writes an index (the work
floor). Then it writes the tables, the ratios to the floors, the targets of issue 7 and the
machine into --output, and prints them.

Beside the realistic folders it times the same commands on the team's stress folder, the 10,000
memories that `../shared/tools/gen_folder.py DIR 10000` writes (corpus words in sentences), against
that folder's own work floor, and holds them to the same targets. Without ../shared (or with
--no-stress) that folder is skipped, with a note.

`--only PATTERN` times only the commands whose row label matches the regular expression (case
ignored; `--only 'index, warm|hook'`), beside the floors, which always run: the ratios to the floors
of part of the suite, for whoever is working on part of it. `--folders DIR` keeps the generated
folders in DIR and reuses them on the next run (a 10,000-memory folder takes a while to generate).
With --only, nothing is written unless --output is given.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts import realistic, synthetic  # noqa: E402
from scripts.watch_latency import measure as watch_latencies  # noqa: E402

TODAY = "2026-11-22"
GEN_FOLDER = REPO.parent / "shared" / "tools" / "gen_folder.py"
STRESS = "stress"  # the key of the gen_folder.py folder's rows, where the others have their size
STRESS_SIZE = 10_000
PYTHON = sys.executable
RECALL_QUERY = "why did the release checklist change for the billing service"
WATCH_SAVES = 15

# The work floor: what any tool must do to index a folder, in as few lines of Python as it takes.
WORK_FLOOR = """
import os, sys
root = sys.argv[1]
lines = []
for name in sorted(os.listdir(root)):
    if name.endswith(".md") and name != "MEMORY.md":
        head = open(os.path.join(root, name), encoding="utf-8").read().split("\\n---", 1)[0]
        fields = dict(l.split(": ", 1) for l in head.splitlines() if ": " in l)
        lines.append(f"- [{fields.get('name', name)}]({name}) — {fields.get('description', '')}")
open(os.path.join(root, ".floor-index.md"), "w", encoding="utf-8").write("\\n".join(lines[:200]) + "\\n")
"""


@dataclass
class Figure:
    median: float  # seconds
    low: float
    high: float
    peak_mib: float
    cpu: float  # seconds of CPU (user + system), median, the process's children included


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users' installs have bytecode; measure that
    env.update(MEMDIR_TODAY=TODAY, NO_COLOR="1")
    return env


def run_once(argv: list[str], ok: tuple[int, ...] = (0, 1), stdin: bytes = b"") -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds of one child process (with the processes it
    waited for: lint's forked half), fed `stdin`."""
    start = time.perf_counter()
    child = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env()
    )
    assert child.stdin is not None
    with contextlib.suppress(BrokenPipeError):  # a command that does not read its input
        child.stdin.write(stdin)
    child.stdin.close()
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        raise SystemExit(f"bench: {' '.join(argv)} exited {code}")
    return elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def _nothing() -> None:
    pass


def measure(argv: list[str], runs: int, before: Callable[[], None] = _nothing, stdin: bytes = b"") -> Figure:
    """Median over `runs` after one warm-up; `before` runs (untimed) before each."""
    before()
    run_once(argv, stdin=stdin)
    results = []
    for _ in range(runs):
        before()
        results.append(run_once(argv, stdin=stdin))
    walls = sorted(r[0] for r in results)
    cpu = statistics.median(r[2] for r in results)
    return Figure(statistics.median(walls), walls[0], walls[-1], max(r[1] for r in results), cpu)


WATCH = f"`memdir watch`: save to index latency ({WATCH_SAVES} saves)"


def memdir(folder: Path, *args: str) -> list[str]:
    return [PYTHON, "-m", "memdir", "-q", "--dir", str(folder), *args]


class Folder:
    """A generated folder, indexed once, with the edits the scenarios need."""

    def __init__(self, root: Path, size: int, generator: str, corpus: Path) -> None:
        self.root, self.size = root, size
        if (root / "MEMORY.md").is_file() and (root / ".generated").is_file():  # kept by --folders
            self.about = (root / ".generated").read_text(encoding="utf-8").splitlines()
        elif generator == STRESS:
            subprocess.run([PYTHON, str(GEN_FOLDER), str(root), str(size)], check=True, capture_output=True)
            self.about = [f"`../shared/tools/gen_folder.py DIR {size}`, the team's stress folder"]
        elif generator == "realistic":
            # In a process of its own: the corpus models take tens of MiB, and a child forked from
            # this process would count them in its peak memory.
            script = [PYTHON, str(REPO / "scripts" / "realistic.py"), "--size", str(size), "--corpus", str(corpus)]
            made = subprocess.run([*script, str(root)], check=True, capture_output=True, text=True, env=child_env())
            self.about = made.stdout.splitlines()
        else:
            synthetic.write_folder(root, size)
            self.about = ["`scripts/synthetic.py` (asked for with --generator synthetic)"]
        (root / ".generated").write_text("\n".join(self.about) + "\n", encoding="utf-8")
        run_once(memdir(root, "index"))
        # The memory to change: one that is listed in the index, so that MEMORY.md changes too.
        listed = (root / "MEMORY.md").read_text(encoding="utf-8").split("](", 2)[1].split(")", 1)[0]
        self.changed = root / listed
        self.original = self.changed.read_text(encoding="utf-8")
        self.flip = False

    def drop_cache(self) -> None:
        (self.root / ".memdir" / "parse-cache").unlink(missing_ok=True)

    def change_one(self) -> None:
        """Rewrite one listed memory's description, alternating between two versions. The word goes
        inside the quotes of a quoted description, as a person's edit would: before the quote it
        makes the line invalid YAML, and the row would time Claude Code's lenient retry instead."""
        self.flip = not self.flip
        key = "description: "
        at = self.original.index(key) + len(key)
        at += self.original[at] in "'\""
        text = self.original[:at] + "Revised " + self.original[at:] if self.flip else self.original
        self.changed.write_text(text, encoding="utf-8")


def in_process_lint(folder: Path) -> list[tuple[str, float]]:
    """Seconds each rule family adds to a lint of the loaded folder (one run, in-process)."""
    from memdir import MemoryDir
    from memdir.lint import RULES

    memdir_ = MemoryDir(folder, today=dt.date.fromisoformat(TODAY), cache=False)
    start = time.perf_counter()
    scan = memdir_.scan()
    out = [("read and parse every file", time.perf_counter() - start)]
    start = time.perf_counter()
    plan = memdir_._write_index_locked(scan=scan, dry_run=True)
    out.append(("plan the index", time.perf_counter() - start))
    for family in sorted({code[0] for code in RULES}):
        rules = [r for code, r in RULES.items() if code[0] == family]
        start = time.perf_counter()
        memdir_._lint(rules, scan, planned=plan)
        out.append((f"{family} rules ({len(rules)})", time.perf_counter() - start))
    return out


def machine() -> list[str]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "memdir"], capture_output=True, text=True)
    from memdir import __version__

    return [
        f"- CPU: {model}, {os.cpu_count()} logical cores",
        f"- Python {platform.python_version()} ({platform.python_implementation()}), {platform.platform()}",
        f"- memdir {__version__}, commit {commit.stdout.strip() or 'unknown'}"
        + (" with uncommitted changes to memdir/" if dirty.stdout.strip() else ""),
        f"- load average before the run: {os.getloadavg()[0]:.2f}",
    ]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds < 10 else f"{seconds:,.1f} s"


Key = int | str  # a realistic folder's size, or STRESS


def label(key: Key | None) -> str:
    """How the memories column shows a folder."""
    if key is None:
        return ""
    return f"{STRESS_SIZE:,} (gen_folder)" if key == STRESS else f"{key:,}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="50,450,1000,10000")
    parser.add_argument("--output", type=Path, default=None, help="default: BENCHMARKS.md (none with --only)")
    parser.add_argument("--generator", choices=("realistic", "synthetic"), default="realistic")
    parser.add_argument("--corpus", type=Path, default=realistic.CORPUS, help="real folders to take statistics from")
    parser.add_argument("--only", type=re.compile, help="time only the rows matching this regular expression")
    parser.add_argument("--folders", type=Path, help="keep the generated folders here and reuse them")
    parser.add_argument("--no-stress", action="store_true", help="skip the gen_folder.py stress folder")
    args = parser.parse_args()
    output = args.output if args.output or args.only else REPO / "BENCHMARKS.md"
    only: re.Pattern[str] | None = re.compile(args.only.pattern, re.IGNORECASE) if args.only else None

    def wanted(what: str) -> bool:
        return only is None or what.startswith("work floor") or only.search(what) is not None

    sizes = [int(s) for s in args.sizes.split(",")]
    folders: list[tuple[Key, int, str]] = [(size, size, args.generator) for size in sizes]
    notes: list[str] = []
    if args.no_stress:
        notes.append("The stress folder was skipped (--no-stress).")
    elif not GEN_FOLDER.is_file():
        notes.append(f"The stress folder was skipped: no {GEN_FOLDER} (../shared is not beside this checkout).")
        print(f"bench: {notes[-1]}", file=sys.stderr)
    else:
        folders.append((STRESS, STRESS_SIZE, STRESS))
    runs = args.runs
    started = time.monotonic()
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(REPO / "memdir")], check=True, stdout=subprocess.DEVNULL)
    about = machine()

    rows: list[tuple[str, Key | None, Figure]] = []  # (what, folder, figure)
    sizes_mib: dict[Key, float] = {}
    families: list[tuple[str, float]] = []
    generated: dict[str, list[str]] = {}
    largest: Path | None = None  # the largest realistic folder, for the in-process lint after the rest
    with contextlib.ExitStack() as stack:
        tmp = str(args.folders or stack.enter_context(tempfile.TemporaryDirectory()))
        Path(tmp).mkdir(parents=True, exist_ok=True)
        typer_floor = measure([PYTHON, "-c", "import typer"], max(runs, 9))
        rows.append(('`python -c "import typer"` (start-up floor)', None, typer_floor))
        for key, size, generator in folders:
            print(f"bench: {label(key)} memories ...", file=sys.stderr)
            name = f"m{size}" if generator != STRESS else f"{STRESS}{size}"
            folder = Folder(Path(tmp) / name, size, generator, args.corpus)
            generated[generator] = folder.about
            text_bytes = sum(p.stat().st_size for p in folder.root.glob("*.md"))
            print(f"bench: {label(key)} memories, {text_bytes / 2**20:.1f} MiB of text", file=sys.stderr)
            sizes_mib[key] = text_bytes / 2**20
            script = Path(tmp) / "floor.py"
            script.write_text(WORK_FLOOR, encoding="utf-8")
            index = memdir(folder.root, "index")
            lint = memdir(folder.root, "lint", "--extend-select", "ALL", "--exit-zero", "--format", "json")
            scenarios: list[tuple[str, list[str], Callable[[], None]]] = [
                ("work floor: read every file, write an index", [PYTHON, str(script), str(folder.root)], _nothing),
                ("`memdir index`, cold (no parse cache)", index, folder.drop_cache),
                ("`memdir index`, warm (nothing changed)", index, _nothing),
                ("`memdir index`, one listed memory changed", index, folder.change_one),
                ("`memdir lint`, every rule, cold (`--no-cache`)", [*lint[:3], "--no-cache", *lint[3:]], _nothing),
                ("`memdir lint`, every rule, warm parse cache", lint, _nothing),
            ]
            for what, argv, before in scenarios:
                if wanted(what):
                    rows.append((what, key, measure(argv, runs, before)))
            # What Claude Code sends at session start; the hook finds the folder through --dir.
            start = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(folder.root)}
            hook = [PYTHON, "-m", "memdir", "--dir", str(folder.root), "hook", "session-start"]
            if wanted(what := "`memdir hook session-start`"):
                rows.append((what, key, measure(hook, runs, stdin=json.dumps(start).encode())))
            # What Claude Code sends before each prompt: the prompt hook recalls for it (recall index warm).
            if wanted(what := "`memdir hook user-prompt-submit`"):
                prompt = {"hook_event_name": "UserPromptSubmit", "prompt": RECALL_QUERY, "cwd": str(folder.root)}
                asking = [PYTHON, "-m", "memdir", "--dir", str(folder.root), "hook", "user-prompt-submit"]
                rows.append((what, key, measure(asking, runs, stdin=json.dumps(prompt).encode())))
            recall = memdir(folder.root, "recall", RECALL_QUERY, "--format", "json")
            if wanted(what := "`memdir recall` (warm recall index)"):
                rows.append((what, key, measure(recall, runs)))
            if wanted(WATCH):
                latencies = sorted(watch_latencies(folder.root, WATCH_SAVES))
                rows.append((WATCH, key, Figure(statistics.median(latencies), latencies[0], latencies[-1], 0.0, 0.0)))
            if key == max(sizes) and wanted("lint families"):
                largest = folder.root  # timed last: a child forked after it would count its memory as its own
            elif args.folders is None:
                shutil.rmtree(folder.root)
        if largest is not None:
            families = in_process_lint(largest)
            if args.folders is None:
                shutil.rmtree(largest)
    elapsed = time.monotonic() - started

    text = render(rows, typer_floor, sizes, families, about, runs, elapsed, generated, sizes_mib, notes)
    if output is not None:
        output.write_text(text, encoding="utf-8")
    print(text)


def render(
    rows: list[tuple[str, Key | None, Figure]],
    typer_floor: Figure,
    sizes: list[int],
    families: list[tuple[str, float]],
    about: list[str],
    runs: int,
    elapsed: float,
    generated: dict[str, list[str]],
    sizes_mib: dict[Key, float],
    notes: list[str],
) -> str:
    floors = {size: fig for what, size, fig in rows if what.startswith("work floor")}
    table = [
        "| command | memories | median | min – max | CPU | peak memory | × import typer | × work floor "
        "| CPU × work floor |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for what, size, fig in rows:
        floor = floors.get(size) if size is not None else None
        process = what != WATCH  # a latency inside a running watcher, not a process of its own
        ratio = floor and process and not what.startswith("work floor")
        work = f"{fig.median / floor.median:.1f}" if floor and ratio else ""
        work_cpu = f"{fig.cpu / floor.cpu:.1f}" if floor and ratio else ""
        table.append(
            f"| {what} | {label(size)} | {ms(fig.median)} | {ms(fig.low)} – {ms(fig.high)} "
            f"| {ms(fig.cpu) if process else ''} | {f'{fig.peak_mib:.0f} MiB' if process else ''} "
            f"| {f'{fig.median / typer_floor.median:.1f}' if process else ''} | {work} | {work_cpu} |"
        )

    def find(prefix: str, size: Key) -> Figure | None:
        return next((f for w, s, f in rows if w.startswith(prefix) and s == size), None)

    largest, smallest = max(sizes), min(sizes)
    targets = ["| target | measured | met |", "| --- | ---: | :---: |"]

    def target(label: str, fig: Figure | None, limit: float, value: Callable[[Figure], float] = lambda f: f.median,
               show: Callable[[float], str] = ms) -> None:  # fmt: skip
        if fig is None:
            return
        got = value(fig)
        targets.append(f"| {label} | {show(got)} | {'yes' if got <= limit else '**no**'} |")

    target(f"`index` on {smallest} files <= 1.3 x import typer", find("`memdir index`, warm", smallest), 1.3,
           lambda f: f.median / typer_floor.median, lambda x: f"{x:.2f} x")  # fmt: skip

    # The targets of issue 7 were seconds on the synthetic folder; text like real memories is five
    # times as much to read, so they are held as the same multiples of the work floor measured in
    # this run (seconds / 0.129 s, that folder's floor in the run that set them). Lint has its own.
    def over_floor(prefix: str, label: str, limit: float, key: Key = largest) -> None:
        fig, under = find(prefix, key), find("work floor", key)
        if fig is None or under is None:
            return
        got = fig.median / under.median
        targets.append(f"| {label} | {got:.2f} x ({ms(fig.median)}) | {'yes' if got <= limit else '**no**'} |")

    # Each held on the largest realistic folder and on the stress folder (issue 30), against each
    # folder's own work floor.
    for key in (largest, STRESS):
        on = f"on {label(key)}"
        over_floor("`memdir index`, cold", f"`index` cold {on} <= 7.8 x work floor (was 1.0 s)", 7.8, key)
        over_floor("`memdir index`, warm", f"`index` warm {on} <= 1.9 x work floor (was 0.25 s)", 1.9, key)
        over_floor("`memdir index`, one", f"`index`, one file changed, {on} <= 2.3 x work floor (was 0.3 s)", 2.3, key)
        over_floor("`memdir lint`, every rule, cold", f"`lint` (every rule, cold) {on} <= 8 x work floor", 8.0, key)
        peak = max((f.peak_mib for w, s, f in rows if s == key and w.startswith("`memdir")), default=0.0)  # watch: 0
        if peak:
            targets.append(f"| peak memory {on} <= 150 MiB | {peak:.0f} MiB | {'yes' if peak <= 150 else '**no**'} |")
        over_floor("`memdir recall`", f"`recall` {on} <= 2.3 x work floor (was 0.3 s)", 2.3, key)
        over_floor(WATCH, f"watch latency {on} <= 2.3 x work floor (was 300 ms)", 2.3, key)
    target(f"`hook session-start` on {smallest} files <= 1.3 x import typer", find("`memdir hook session", smallest),
           1.3, lambda f: f.median / typer_floor.median, lambda x: f"{x:.2f} x")  # fmt: skip
    target(f"`hook user-prompt-submit` on {smallest} files <= 1.3 x import typer (issue 19)",
           find("`memdir hook user-prompt", smallest), 1.3, lambda f: f.median / typer_floor.median,
           lambda x: f"{x:.2f} x")  # fmt: skip

    scaling = [
        "| command | 1,000 -> 10,000 | µs per extra memory, 50 -> 1,000 | µs per extra memory, 1,000 -> 10,000 |",
        "| --- | ---: | ---: | ---: |",
    ]
    if {50, 1000, 10000} <= set(sizes):
        for what in dict.fromkeys(w for w, s, _ in rows if s == 1000):
            t50, t1k, t10k = find(what, 50), find(what, 1000), find(what, 10000)
            if t50 is None or t1k is None or t10k is None:
                continue
            # The marginal cost of a memory, start-up and fixed costs taken out: flat means linear.
            early = (t1k.median - t50.median) / 950 * 1e6
            late = (t10k.median - t1k.median) / 9000 * 1e6
            scaling.append(f"| {what} | {t10k.median / t1k.median:.1f} x | {early:,.0f} | {late:,.0f} |")

    where = ["| step | seconds |", "| --- | ---: |"] + [f"| {step} | {sec:.3f} |" for step, sec in families]
    return "\n".join(
        [
            "# Benchmarks",
            "",
            "Generated by `make bench` (`scripts/bench.py`); do not edit by hand.",
            "",
            textwrap.fill(
                "Each figure is a fresh `python -m memdir -q --dir FOLDER ...` process, as a hook or a CI job runs it: "
                f"the median wall time of {runs} runs after one untimed warm-up, with the fastest and slowest run, "
                "the median CPU time (user + system) and the peak memory (max RSS). On 1,000 memories or more lint "
                "runs in two processes (docs/lint.md): its CPU time counts both, its peak memory is the larger "
                "one's. The folders are generated and indexed once before timing. Cold means no "
                "parse cache in `.memdir/` (it is deleted before each run; the run writes it again); warm means "
                "nothing changed since the last run; one changed means one memory listed in MEMORY.md got a new "
                "description before each run, so the index is rewritten. Lint runs with every rule on "
                "(`--extend-select ALL`, JSON output). Bytecode is compiled beforehand, as an installed package "
                "has it.",
                width=100,
            ),
            "",
            "The folders' text ("
            + ", ".join(f"{label(n)} memories: {mib:.1f} MiB" for n, mib in sizes_mib.items())
            + ") comes from:",
            "",
            *[
                line
                for about_folder in generated.values()
                for line in [f"- {about_folder[0]}", *(f"  - {more}" for more in about_folder[1:])]
            ],
            *(["", *notes] if notes else []),
            "",
            textwrap.fill(
                'The floors, measured in the same run: `python -c "import typer"`, the start-up of any CLI built on '
                "memdir's framework, and a plain-Python script of a few lines that reads every file and writes an "
                "index (no parsing beyond splitting lines, no caps, no ranking): the least work any indexer does.",
                width=100,
            ),
            "",
            "## Machine",
            "",
            *about,
            f"- the whole run took {elapsed:,.0f} s on {dt.date.today().isoformat()}; load average after it: "
            f"{os.getloadavg()[0]:.2f} (a shared machine: compare the ratios to the floors, not the seconds)",
            "",
            "## Results",
            "",
            *table,
            "",
            "## Targets (issue 7, held as multiples of the floors)",
            "",
            *targets,
            "",
            "## Growth from 1,000 to 10,000 memories",
            "",
            textwrap.fill(
                "Ten times the memories should cost at most ten times the time. The last two columns are the "
                "marginal cost of one more memory, start-up and fixed costs taken out: equal columns mean linear "
                "growth, a larger last column means something grows faster than the folder.",
                width=100,
            ),
            "",
            *scaling,
            "",
            f"## Where a cold lint of {largest:,} memories spends its time (in-process, one run)",
            "",
            *where,
            "",
        ]
    )


if __name__ == "__main__":
    main()
