"""Time and peak memory of `memdir index` and `memdir lint` on each hostile file (docs/reliability.md).

Each case is a folder holding one good memory and one hostile file; each command runs in its own
process, measured with os.wait4 (wall-clock seconds and that process's own peak RSS). The first
row is the same folder without the hostile file, for comparison. Prints a markdown table.

    .venv/bin/python scripts/hostile_bounds.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MiB = 1024 * 1024


def frontmatter(extra: str) -> str:
    return f"---\nname: hostile\ndescription: a hostile file\ntype: user\n{extra}\n---\nBody.\n"


def billion_laughs(levels: int = 9) -> str:
    """A few hundred bytes of YAML whose aliases expand to 9 ** (levels + 1) values."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        name, previous = chr(ord("a") + i), chr(ord("a") + i - 1)
        lines.append(f"{name}: &{name} [{', '.join(f'*{previous}' for _ in range(9))}]")
    return "\n".join(lines) + f"\nbomb: *{chr(ord('a') + levels)}"


def _write(name: str, text: str | bytes) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        path = root / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")

    return make


def _sparse(root: Path) -> None:
    with (root / "user_big.md").open("wb") as handle:
        handle.write(frontmatter("").encode())
        handle.truncate(60 * MiB)


def _just_under_the_limit(value: Callable[[int], str]) -> Callable[[Path], None]:
    """A memory of just under 1 MiB whose frontmatter is `k<i>: <value(i)>` lines."""

    def make(root: Path) -> None:
        lines, size, i = [], 200, 0
        while size < MiB - 100:
            line = f"k{i}: {value(i)}\n"
            lines.append(line)
            size += len(line.encode())
            i += 1
        (root / "user_huge_yaml.md").write_text(frontmatter("".join(lines[:-1])), encoding="utf-8")

    return make


def _retried(value: Callable[[int], str]) -> Callable[[Path], None]:
    """Just under 1 MiB of `<key>: <value(i)>` lines that YAML rejects and Claude Code's retry quotes
    (it only quotes keys of letters, `_` and `-`, so the keys are spelt in letters)."""

    def key(i: int) -> str:
        letters = ""
        while True:
            i, digit = divmod(i, 26)
            letters += chr(ord("a") + digit)
            if not i:
                return letters

    def make(root: Path) -> None:
        lines, size, i = [], 200, 0
        while size < MiB - 100:
            line = f"{key(i)}: {value(i)}\n"
            lines.append(line)
            size += len(line.encode())
            i += 1
        (root / "user_retried.md").write_text(frontmatter("".join(lines[:-1])), encoding="utf-8")

    return make


def _big_body(root: Path) -> None:
    words = ["deploy", "lint", "cache", "token", "branch", "review", "release", "schema", "backup", "queue"]
    rng = random.Random(7)
    body = " ".join(rng.choice(words) for _ in range(150_000))[: MiB - 200]
    (root / "user_big_body.md").write_text(frontmatter("") + body, encoding="utf-8")


def _full_of(unit: str) -> Callable[[Path], None]:
    """A memory of just under 1 MiB that repeats `unit`: one lint finding (or fence) per repeat."""
    body = unit * ((MiB - 300) // len(unit.encode()))
    return _write("feedback_full.md", frontmatter("").replace("type: user", "type: feedback") + body)


def _symlinks(root: Path) -> None:
    (root / "loop1.md").symlink_to("loop2.md")
    (root / "loop2.md").symlink_to("loop1.md")
    (root / "loopdir").symlink_to("loopdir")
    (root / "user_outside.md").symlink_to("/etc/hostname")


CASES: list[tuple[str, Callable[[Path], None]]] = [
    ("baseline: one good memory", lambda root: None),
    ("alias bomb (9 levels, 10^9 values)", _write("user_bomb.md", frontmatter(billion_laughs()))),
    ("alias inside itself", _write("user_loop.md", frontmatter("loop: &x [*x]"))),
    ("200,000 nested brackets", _write("user_deep.md", frontmatter("nest: " + "[" * 200_000 + "]" * 200_000))),
    ("200,000 nested `- `", _write("user_dashes.md", frontmatter("nest:\n" + "- " * 200_000 + "x"))),
    (
        "2,000 indented levels",
        _write("user_indent.md", frontmatter("nest:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 2_000)))),
    ),
    ("60 MB sparse file", _sparse),
    ("1 MiB frontmatter: 60,000 `k: 'v'` lines (fast path)", _just_under_the_limit(lambda i: f"'v {i}'")),
    ("1 MiB frontmatter: 40,000 flow maps (YAML parser)", _just_under_the_limit(lambda i: f"{{a: {i}}}")),
    ("1 MiB frontmatter: 100,000 `k: a: b` lines (Claude Code's retry)", _retried(lambda i: f"a: {i}")),
    ("1 MiB frontmatter: 100,000 `k: [a` lines (Claude Code's retry)", _retried(lambda i: f"[{i}")),
    ("1 MiB body", _big_body),
    ("1 MiB random bytes", _write("random.md", random.Random(1).randbytes(MiB - 1))),
    ("directory named x.md", lambda root: (root / "folder.md").mkdir()),
    ("symlink loops and a link outside", _symlinks),
    ("BOM and CRLF", _write("user_bom.md", "\ufeff" + frontmatter("").replace("\n", "\r\n"))),
    ("1 MiB: 150,000 `Why:` labels (B004)", _full_of("Why: x\n")),
    ("1 MiB: 58,000 relative dates (B003)", _full_of("We ship tomorrow.\n")),
    ("1 MiB: 39,000 secrets (S002)", _full_of("API_KEY=Zq8vT2mXr4Lp9WnB6y\n")),
    ("1 MiB: 50,000 phone numbers (S003)", _full_of("call +1 415 555 2671\n")),
    ("1 MiB: 262,000 code fences", _full_of("```\n")),
    ("1 MiB: 30,000 links to missing files", _full_of("See [x](missing.md) and ./other.md\n")),
]


# Runs memdir's CLI and, at exit, writes the process's peak RSS (VmHWM, in KiB) to argv[1]. Not
# ru_maxrss from wait4: Linux keeps that across exec, so it would count this script's own memory.
_PEAK = """
import atexit, runpy, sys
out = sys.argv[1]

def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            open(out, "w").write(line.split()[1])

atexit.register(peak)
sys.argv = ["memdir", *sys.argv[2:]]
runpy.run_module("memdir", run_name="__main__")
"""


def _measure(args: list[str]) -> tuple[float, float, int]:
    """(seconds, peak RSS in MiB, exit code) of `memdir ARGS` in its own process."""
    with tempfile.NamedTemporaryFile(suffix=".peak") as peak:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _PEAK, peak.name, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        elapsed = time.perf_counter() - start
        kib = Path(peak.name).read_text() or "0"
    return elapsed, int(kib) / 1024, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the worst is shown")
    args = parser.parse_args()
    env_note = f"Python {platform.python_version()}, {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs"
    print(f"Worst of {args.repeat} runs each; {env_note}. Seconds include interpreter start-up.\n")
    print("| case | `index` s | `index` MiB | `lint` s | `lint` MiB | exit (index, lint) |")
    print("|---|---:|---:|---:|---:|---|")
    for label, make in CASES:
        root = Path(tempfile.mkdtemp(prefix="memdir-bounds-")) / "memory"
        root.mkdir()
        (root / "user_fine.md").write_text(frontmatter("").replace("hostile", "fine"), encoding="utf-8")
        (root / "MEMORY.md").write_text("")
        make(root)
        row = []
        codes = []
        for command in (["index"], ["lint", "--select", "ALL"]):
            worst = (0.0, 0.0, 0)
            for _ in range(args.repeat):
                seconds, peak, code = _measure(["--dir", str(root), "--no-cache", "-q", *command])
                worst = (max(worst[0], seconds), max(worst[1], peak), code)
            row += [f"{worst[0]:.2f}", f"{worst[1]:.0f}"]
            codes.append(str(worst[2]))
        print(f"| {label} | {' | '.join(row)} | {', '.join(codes)} |")
        shutil.rmtree(root.parent)


if __name__ == "__main__":
    main()
