"""Crash safety: `memdir index`, `add`, `lint --fix` and `consolidate` killed at any moment leave
every memory file and MEMORY.md as its old or its new complete version, nothing visible but memory
files, and a folder the next run recovers (its lock included: an flock dies with its holder).

Two ways to die: SIGKILL after a random delay (seeded), on a folder large enough to take a while,
each kill landing while the run is still going (a run that finished first is run again and killed
sooner: the kill's exit status says which); and os._exit() at each write step in turn (before a
temporary file's fsync, before its rename, right after it), which reaches the moments a random
delay rarely hits. Each kill and each write step is its own test case, so a failure names its
command and step and the cases run in parallel. Each run that dies is a Python process of its own
running memdir's CLI; the runs after it, which only need to be any run, are in-process.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import invoke_memdir, memdir_command

from memdir import MemoryDir

pytestmark = pytest.mark.slow

SEED = 20261122
# The defaults keep `make test` within its budget; MEMDIR_CRASH_RUNS=20 MEMDIR_CRASH_STEPS=200 go deeper.
RUNS = int(os.environ.get("MEMDIR_CRASH_RUNS", "3"))  # random kills per command
# Memories: random kills need a run that takes a while (0.2-1 s here for 600), write steps do not.
BIG, SMALL = 600, 120
STEPS = int(os.environ.get("MEMDIR_CRASH_STEPS", "4"))  # write steps to die at, per command (before and after)
TODAY = dt.date(2026, 11, 22)
WRITTEN_AT = dt.datetime(2026, 11, 1, tzinfo=dt.UTC).timestamp()  # the base folder's mtimes; see _write_base

ADD = ["add", "feedback", "crash survivor", "-d", "Survive a crash", "--why", "kill -9", "--how", "always"]
CONSOLIDATE = ["consolidate", "--yes"]  # offline: marks near-duplicates superseded
COMMANDS = {"index": ["index"], "add": ADD, "lint-fix": ["lint", "--fix"], "consolidate": CONSOLIDATE}
# What brings a killed run's folder to where a complete run would have left it.
RECOVERY = {
    "index": [["index"]],
    "add": [ADD, ["index"]],
    "lint-fix": [["lint", "--fix"]],
    "consolidate": [CONSOLIDATE, ["index"]],
}
# How many write steps each command takes on the small folder: the test cases are made from these
# (a seeded sample of them), so each case's id names its step. test_the_write_steps_are_all_counted
# fails when a command's count changes, and says what to write here.
WRITE_STEPS = {"index": 10, "add": 15, "lint-fix": 174, "consolidate": 23}

# Words of three syllables, some 3,000 of them: memories that share few words, as real ones do. Eight
# words each from a dozen made every pair a near-duplicate candidate for lint's similarity checks,
# which then took most of every `lint --fix` run (13,700 pair verdicts on the small folder) and none
# of its writes; the "-again" copies below are the near-duplicates `consolidate` needs.
_SYLLABLES = ["de", "ploy", "lint", "ca", "che", "to", "ken", "bran", "re", "view", "sche", "ma", "bud", "get", "que"]
_WORDS = sorted({a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES})


def _write_base(root: Path, memories: int) -> None:
    """A folder with a lot to index and, in every third memory, something for `lint --fix` to fix
    (a relative date, a label in the wrong form), so --fix rewrites hundreds of files."""
    rng = random.Random(SEED)
    root.mkdir(parents=True)
    types = ["user", "feedback", "project", "reference"]
    for i in range(memories):
        kind = types[i % 4]
        words = " ".join(rng.choice(_WORDS) for _ in range(8))
        body = f"{words.capitalize()}.\n"
        if kind in ("feedback", "project"):
            body += "\nWhy: it broke once\n\n**How to apply:** always\n" if i % 3 == 0 else ""
            body += "\n**Why:** it broke\n\n**How to apply:** always\n" if i % 3 else ""
        if i % 3 == 0:
            body += "We ship it tomorrow.\n"
        for copy in ("", "-again") if i % 40 == 0 else ("",):  # near-duplicates for `consolidate`
            path = root / f"{kind}_m{i}{copy}.md"
            path.write_text(
                f"---\nname: m{i}{copy}\ndescription: {words} {i}\ntype: {kind}\n"
                f"created: 2026-01-{1 + i % 28:02d}\n---\n{body}"
            )
            # Written weeks ago, as memories are: the parse cache then takes them all, whatever the
            # clock says, and every run takes the same write steps (a file changed in the last two
            # seconds is not cached, which on a slow machine would change the count as a test went).
            os.utime(path, (WRITTEN_AT, WRITTEN_AT))
    (root / "MEMORY.md").write_text("# Memory\n\nNotes a person wrote.\n")


# `python -m memdir ARGS`, saying "ready" once the CLI is imported: a random kill's delay counts from
# there, so that it lands in the command's work rather than in Python's start-up.
_READY = "import sys\nfrom memdir.cli import _typer_app, main\n_typer_app()\nprint('ready', flush=True)\nmain()\n"


def _start(root: Path, args: list[str]) -> subprocess.Popen[str]:
    """memdir on `root` in a process of its own (its own session: a kill reaches it alone), once it is ready."""
    child = subprocess.Popen(
        [sys.executable, "-c", _READY, "--dir", str(root), "-q", *args], env=_env(), start_new_session=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None and child.stdout.readline() == "ready\n", child.communicate(timeout=60)
    return child


def _reference(base: Path, scratch: Path) -> dict[str, tuple[dict[str, bytes], float]]:
    """For each command: the files a complete run leaves in a copy of `base`, and how long its
    command took (from "ready" to its exit)."""
    results = {}
    for name, args in COMMANDS.items():
        root = scratch / f"ref-{base.name}-{name}"
        shutil.copytree(base, root)
        child = _start(root, args)
        start = time.monotonic()
        _, err = child.communicate(timeout=120)
        elapsed = time.monotonic() - start
        assert child.returncode in (0, 1), err
        results[name] = (_files(root), elapsed)
        shutil.rmtree(root)
    assert results["lint-fix"][0] != _files(base)  # --fix really rewrites files
    assert results["consolidate"][0] != _files(base)  # and consolidate marks duplicates
    return results


Reference = tuple[Path, dict[str, tuple[dict[str, bytes], float]]]


@pytest.fixture(scope="module")
def big(scratch: Path) -> Reference:
    _write_base(scratch / "big", BIG)
    return scratch / "big", _reference(scratch / "big", scratch)


def _env() -> dict[str, str]:
    return {**os.environ, "MEMDIR_TODAY": "2026-11-22", "NO_COLOR": "1", "MEMDIR_DEBUG": "", "MEMDIR_NO_CACHE": ""}


def _memdir(root: Path, args: list[str]) -> list[str]:
    return memdir_command("--dir", str(root), "-q", *args)


def _files(root: Path) -> dict[str, bytes]:
    """What a user sees: every file outside `.memdir/`, by relative path (dot-files included, so a
    leftover temporary file shows up here and is then judged by its name)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".memdir" not in p.relative_to(root).parts
    }


def _visible(files: dict[str, bytes]) -> dict[str, bytes]:
    return {path: raw for path, raw in files.items() if not any(part.startswith(".") for part in path.split("/"))}


def _check_old_or_new(after: dict[str, bytes], old: dict[str, bytes], new: dict[str, bytes], what: str) -> None:
    visible = _visible(after)
    assert set(visible) <= set(old) | set(new), f"{what}: unexpected files {set(visible) - set(old) - set(new)}"
    for path in set(old) | set(new):
        state = visible.get(path)
        assert state in (old.get(path), new.get(path)), f"{what}: {path} is neither its old nor its new version"
    hidden = set(after) - set(visible)
    assert all(Path(p).name.startswith(".") and p.endswith(".tmp") for p in hidden), hidden


def _lock_is_free(root: Path) -> bool:
    """True when no process holds the folder's lock (an flock: it goes with the process that held it)."""
    import fcntl

    lock = root / ".memdir" / "lock"
    if not lock.exists():
        return True
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing releases it
    return True


def _recover(root: Path, name: str, new: dict[str, bytes], what: str) -> None:
    assert _lock_is_free(root), f"{what}: the dead run's lock is still held: recovery would wait on it"
    for args in RECOVERY[name]:
        # In-process: only the run that dies needs a process of its own; the one after it is any run.
        done = invoke_memdir("--dir", str(root), "-q", *args, env={"MEMDIR_TODAY": TODAY.isoformat()})
        assert done.exit_code in (0, 1), f"{what}: {args}: {done.stderr}"
        assert "Traceback" not in done.stderr
        assert ".tmp" not in done.stdout + done.stderr  # a leftover temporary file is never listed
    files = _files(root)
    assert _visible(files) == _visible(new), f"{what}: recovery did not reach the complete run's result"
    folder = MemoryDir(root, today=TODAY)  # `index --check` and lint I001/I003, in-process: faster
    assert not folder.write_index(dry_run=True).changed, what
    assert not folder.lint(select=["I001", "I003"]).findings, what
    if set(files) != set(_visible(files)):  # a temporary file was left: what a user sees of it
        for args in (["lint", "--select", "ALL", "--format", "concise"], ["list"], ["index", "--check"]):
            seen = invoke_memdir("--dir", str(root), *args, env={"MEMDIR_TODAY": TODAY.isoformat()})
            assert ".tmp" not in seen.output, f"{what}: {args} lists a temporary file"


@pytest.mark.parametrize(("name", "run"), [(name, run) for name in COMMANDS for run in range(RUNS)])
def test_sigkill_at_a_random_moment_leaves_old_or_new_and_recovers(
    name: str, run: int, big: Reference, scratch: Path
) -> None:
    base, reference = big
    old = _files(base)
    new, elapsed = reference[name]
    rng = random.Random(f"{SEED}-{name}")
    delays = [rng.uniform(0.05, elapsed * 1.1) for _ in range(run + 1)]  # the seeded sequence, as one loop drew it
    delay = delays[run]
    root = scratch / f"kill-{name}-{run}"
    finished_first = 0
    for _ in range(12):
        shutil.copytree(base, root)
        child = _start(root, COMMANDS[name])
        try:
            time.sleep(delay)
            child.kill()  # SIGKILL; a child that has finished is not reaped until communicate: safe
        finally:
            _, err = child.communicate(timeout=60)
        if child.returncode == -signal.SIGKILL:
            break
        # It finished before the kill (the machine ran faster than for the reference run): a run
        # never interrupted proves nothing here, so again, killed sooner.
        assert child.returncode in (0, 1), err
        shutil.rmtree(root)
        delay /= 2
        finished_first += 1
    else:
        pytest.fail(f"{name}: every run finished before its kill, the last after {delay:.4f}s")
    what = f"{name} killed after {delay:.2f}s (run {run})"
    if os.environ.get("MEMDIR_CRASH_VERBOSE"):
        print(what, f"of about {elapsed:.2f}s; runs that finished before their kill: {finished_first}")
    _check_old_or_new(_files(root), old, new, what)
    _recover(root, name, new, what)
    shutil.rmtree(root)


# Dies at the k-th step of writing: the k-th call of os.fsync, os.replace or os.link (the three
# steps of atomic_write, and of the append to the decision log), before or after the call.
DYING = """
import os, sys
step, when = int(sys.argv[1]), sys.argv[2]
count = [0]

def dying(real):
    def call(*args, **kwargs):
        count[0] += 1
        if count[0] == step and when == "before":
            os._exit(137)
        result = real(*args, **kwargs)
        if count[0] == step and when == "after":
            os._exit(137)
        return result
    return call

def run_memdir(first_arg):
    for name in ("fsync", "replace", "link"):
        setattr(os, name, dying(getattr(os, name)))
    try:
        from memdir.cli import main
        sys.argv = ["memdir", *sys.argv[first_arg:]]
        main()
    finally:
        sys.stderr.write(f"steps={count[0]}\\n")
"""
_DIE_AT_STEP = DYING + "run_memdir(3)\n"


def run_dying(
    args: list[str], step: int, when: str, *, env: dict[str, str], code: str = _DIE_AT_STEP,
    cwd: Path | None = None, timeout: float = 120,
) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """`python -m memdir ARGS` as a process that dies at write step `step` (`when`: "before" or
    "after" it; "never" runs to the end), and says on stderr how many it took ("steps=N")."""
    return subprocess.run(
        [sys.executable, "-c", code, str(step), when, *args], env=env, cwd=cwd, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


def _die_at(root: Path, args: list[str], step: int, when: str) -> subprocess.CompletedProcess[str]:
    return run_dying(["--dir", str(root), "-q", *args], step, when, env=_env())


Counted = tuple[Path, dict[str, tuple[dict[str, bytes], int]]]


@pytest.fixture(scope="module")
def small(scratch: Path) -> Counted:
    """The small folder, and for each command the files a complete run leaves in a copy of it and
    the write steps it took."""
    base = scratch / "small"
    _write_base(base, SMALL)
    results = {}
    for name, args in COMMANDS.items():
        root = scratch / f"ref-small-{name}"
        shutil.copytree(base, root)
        done = _die_at(root, args, 0, "never")
        assert done.returncode in (0, 1), done.stderr
        results[name] = (_files(root), int(done.stderr.rsplit("steps=", 1)[1]))
        shutil.rmtree(root)
    return base, results


def _chosen_steps(name: str) -> list[int]:
    """Every write step of a short command; a seeded sample of a long one's (lint --fix writes hundreds)."""
    steps = WRITE_STEPS[name]
    return (
        list(range(1, steps + 1)) if steps <= STEPS else sorted(random.Random(SEED).sample(range(1, steps + 1), STEPS))
    )


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_write_steps_are_all_counted(name: str, small: Counted) -> None:
    steps = small[1][name][1]
    assert steps == WRITE_STEPS[name], (
        f"`memdir {' '.join(COMMANDS[name])}` now takes {steps} write steps on the small folder, not "
        f"{WRITE_STEPS[name]}: set WRITE_STEPS[{name!r}] = {steps} in {Path(__file__).name}, so the cases cover them"
    )


@pytest.mark.parametrize(
    ("name", "step", "when"),
    [
        pytest.param(name, step, when, id=f"{name}-step{step}of{WRITE_STEPS[name]}-{when}")
        for name in COMMANDS
        for step in _chosen_steps(name)
        for when in ("before", "after")
    ],
)
def test_death_at_a_write_step_leaves_old_or_new_and_recovers(
    name: str, step: int, when: str, small: Counted, scratch: Path
) -> None:
    base, reference = small
    old = _files(base)
    new, _ = reference[name]
    root = scratch / f"step-{name}-{step}-{when}"
    shutil.copytree(base, root)
    what = f"{name} died {when} write step {step} of {WRITE_STEPS[name]}"
    died = _die_at(root, COMMANDS[name], step, when)
    assert died.returncode == 137, (
        f"{what}: it did not die there (see test_the_write_steps_are_all_counted)\n{died.stderr}"
    )
    if os.environ.get("MEMDIR_CRASH_VERBOSE"):
        hidden = len(_files(root)) - len(_visible(_files(root)))
        print(what, "; hidden temporary files left:", hidden)
    _check_old_or_new(_files(root), old, new, what)
    _recover(root, name, new, what)
    shutil.rmtree(root)


def _has_open(pid: int, path: Path) -> bool:
    """True when process `pid` has `path` open (Linux's /proc; elsewhere True, after a second)."""
    fds = Path(f"/proc/{pid}/fd")
    if not fds.is_dir():
        time.sleep(1.0)
        return True
    try:
        return any(os.path.realpath(fd) == str(path.resolve()) for fd in fds.iterdir())
    except OSError:  # the process is gone, or a descriptor closed meanwhile
        return False


def test_a_lock_left_by_a_killed_holder_is_free_at_once(small: Counted, tmp_path: Path) -> None:
    """folder_lock is an flock on .memdir/lock: the kernel releases it when its holder dies, so the
    lock file left behind is never stale. A live holder makes the next writer wait (up to 30 s,
    then it fails): a writer that was waiting finishes, and its exit code says it got the lock."""
    root = tmp_path / "memory"
    shutil.copytree(small[0], root)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom pathlib import Path\nfrom memdir.core.store import folder_lock\n"
            "with folder_lock(Path(sys.argv[1])):\n    print('held', flush=True)\n    time.sleep(600)\n",
            str(root),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
        start_new_session=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert not _lock_is_free(root)
        blocked = subprocess.Popen(_memdir(root, ["index"]), env=_env(), stderr=subprocess.PIPE, text=True)
        for _ in range(6000):  # a bound on a hang (polls, not seconds), not a timing assertion
            if _has_open(blocked.pid, root / ".memdir" / "lock") or blocked.poll() is not None:
                break
            time.sleep(0.01)
        else:
            pytest.fail("the second writer never opened the lock file")
        assert blocked.poll() is None  # it is at the lock, waiting for the live holder
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
        assert blocked.wait(timeout=120) == 0, blocked.stderr.read() if blocked.stderr else ""
    finally:
        for process in (holder, locals().get("blocked")):
            if isinstance(process, subprocess.Popen) and process.poll() is None:
                process.kill()
                process.wait()
    assert (root / ".memdir" / "lock").exists()  # left behind, and harmless
    assert _lock_is_free(root)
    assert invoke_memdir("--dir", str(root), "index", "--check").exit_code == 0
