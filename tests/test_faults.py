"""Faults: a disk that fills up mid-write, a prune killed mid-move, Ctrl-C during start-up, and
`memdir watch` stopped by SIGTERM or SIGHUP. docs/reliability.md has the table of what was tried.

No test here measures time: a full disk is os.write / os.fsync raising ENOSPC, a kill is os._exit
at a chosen write step (tests/test_crash.py's mechanism), and a signal is sent once the process
says it has reached the moment under test. Timeouts only stop a test that would otherwise hang.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import MakeMemory, invoke_memdir
from test_crash import WRITTEN_AT, run_dying

from memdir import MemoryDir
from memdir.core.store import STATE_DIR, append_lines, log_decisions, read_jsonl
from memdir.core.store import read_decisions as read_log
from memdir.read.recall import recall
from memdir.read.recall_log import LOG_FILE
from memdir.read.recall_log import read_log as read_recall_log

WORKTREE = Path(__file__).resolve().parents[1]
TIMEOUT = 60.0  # only ends a test that would otherwise hang; a passing run takes a fraction of it
NO_SPACE = "No space left on device"

needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd to tell files apart")


def _fd_name(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def disk_fills_after(monkeypatch: pytest.MonkeyPatch, file_name: str, room: int) -> None:
    """os.write as on a disk with `room` bytes left, for files named `file_name`: a write that does
    not fit writes what fits and returns that count, as write(2) does; the next one raises ENOSPC."""
    real_write = os.write
    left = [room]

    def write(fd: int, data: bytes) -> int:
        if not _fd_name(fd).endswith("/" + file_name):
            return real_write(fd, data)
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, NO_SPACE)
        written = real_write(fd, bytes(data)[: left[0]])
        left[0] -= written
        return written

    monkeypatch.setattr(os, "write", write)


def fsync_fails_for(monkeypatch: pytest.MonkeyPatch, wanted: Callable[[str], bool]) -> None:
    """os.fsync raising ENOSPC for the files `wanted` picks by path (where buffered data meets a full disk)."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if wanted(_fd_name(fd)):
            raise OSError(errno.ENOSPC, NO_SPACE)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def _files(root: Path) -> dict[str, bytes]:
    """Every file under `root` but memdir's own state and temporary dot-files, by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and STATE_DIR not in p.relative_to(root).parts and not p.name.endswith(".tmp")
    }


# --- logs: appended whole or not at all ----------------------------------------------------------


@pytest.fixture
def deploys(make_memory: MakeMemory) -> None:
    make_memory("feedback_no-friday-deploys.md", description="No production deploys on Fridays",
                body="Don't deploy to production on a Friday.\n")  # fmt: skip
    make_memory("reference_grafana.md", description="Cluster dashboards are at grafana.example.com")


@needs_proc
def test_recall_on_a_nearly_full_disk_leaves_no_torn_line(
    folder: Path, deploys: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: write(2) wrote the 40 bytes that fit and memdir took it as done; the torn line then
    swallowed the next recall's line (one unparsable line for two recalls)."""
    invoke_memdir("--dir", str(folder), "recall", "friday deploy")
    log = folder / STATE_DIR / LOG_FILE
    before = log.read_bytes()
    with monkeypatch.context() as patch:
        disk_fills_after(patch, LOG_FILE, room=40)
        result = invoke_memdir("--dir", str(folder), "recall", "grafana dashboards")
    assert result.exit_code == 0, result.output
    assert "grafana" in result.stdout  # the recall itself is unharmed
    assert f"recall not logged: {NO_SPACE}" in result.stderr
    assert log.read_bytes() == before  # not a byte of the line that did not fit
    invoke_memdir("--dir", str(folder), "recall", "production deploys")
    assert [e["query"] for e in read_recall_log(folder)] == ["friday deploy", "production deploys"]


def test_a_torn_tail_left_by_a_crash_does_not_swallow_the_next_line(folder: Path, deploys: None) -> None:
    """A torn last line (a power cut, an older memdir) is ended before the next line is appended, so
    the next line is whole and readers skip only the torn piece."""
    recall(MemoryDir(folder), "friday deploy")
    with open(folder / STATE_DIR / LOG_FILE, "ab") as handle:
        handle.write(b'{"time": "2026-11-22T10:00:00+00:00", "query": "tor')
    recall(MemoryDir(folder), "grafana dashboards")
    assert [e["query"] for e in read_recall_log(folder)] == ["friday deploy", "grafana dashboards"]


def test_append_lines_is_whole_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "some.jsonl"
    append_lines(log, b'{"n": 1}\n')
    if Path("/proc/self/fd").is_dir():
        with monkeypatch.context() as patch:
            disk_fills_after(patch, "some.jsonl", room=3)
            with pytest.raises(OSError) as raised:
                append_lines(log, b'{"n": 2, "long": "enough not to fit"}\n')
        assert raised.value.errno == errno.ENOSPC
        assert log.read_bytes() == b'{"n": 1}\n'
    with monkeypatch.context() as patch:  # the data reached the file but the disk refused it at fsync
        fsync_fails_for(patch, lambda name: name.endswith("/some.jsonl"))
        with pytest.raises(OSError):
            append_lines(log, b'{"n": 3}\n', durable=True)
    assert log.read_bytes() == b'{"n": 1}\n'
    log.write_bytes(b'{"n": 1}\n{"n": 4, "to')  # torn by something else
    append_lines(log, b'{"n": 5}\n{"n": 6}\n')
    assert read_jsonl(log) == [{"n": 1}, {"n": 5}, {"n": 6}]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real file system of 64 KiB (a tmpfs): needs root and Linux, else the test is skipped."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root on Linux")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_an_append_to_a_really_full_disk_is_whole_or_nothing(small_disk: Path) -> None:
    """The real thing: write(2) on a full tmpfs writes what fits in the log's last page and returns
    that count; memdir cuts it off again and raises ENOSPC."""
    log = small_disk / "recall.jsonl"
    first = b'{"query": "' + b"a" * (4096 - 40 - 14) + b'"}\n'  # 40 bytes short of a page
    append_lines(log, first)
    filler = small_disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        with pytest.raises(OSError):
            while True:
                os.write(fd, b"\0" * 4096)
    finally:
        os.close(fd)
    line = b'{"query": "' + b"b" * 1500 + b'"}\n'
    with pytest.raises(OSError) as raised:
        append_lines(log, line)
    assert raised.value.errno == errno.ENOSPC
    assert log.read_bytes() == first
    filler.unlink()
    append_lines(log, line)
    assert [len(entry["query"]) for entry in read_jsonl(log)] == [4096 - 40 - 14, 1500]


@needs_proc
def test_a_decision_log_line_the_disk_refuses_is_not_left_behind(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log_decisions(folder, [{"command": "rm", "decision": "archived", "file": "user_a.md"}])
    before = (folder / STATE_DIR / "log.jsonl").read_bytes()
    with monkeypatch.context() as patch:
        fsync_fails_for(patch, lambda name: name.endswith("/log.jsonl"))
        with pytest.raises(OSError):
            log_decisions(folder, [{"command": "rm", "decision": "archived", "file": "user_b.md"}])
    assert (folder / STATE_DIR / "log.jsonl").read_bytes() == before
    assert [e["file"] for e in read_log(folder)] == ["user_a.md"]


# --- rm: finishes, or changes nothing ------------------------------------------------------------


@needs_proc
@pytest.mark.parametrize("purge", [False, True], ids=["archive", "purge"])
@pytest.mark.parametrize("failing", ["index", "log"])
def test_rm_on_a_full_disk_changes_nothing(
    folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch, failing: str, purge: bool
) -> None:
    """Before: the file was moved (and the move logged), then MEMORY.md could not be rewritten, which
    left an index entry linking to a file that was gone."""
    make_memory("user_a.md")
    make_memory("user_b.md")
    assert invoke_memdir("--dir", str(folder), "index").exit_code == 0
    before = _files(folder)
    log = folder / STATE_DIR / "log.jsonl"
    logged = log.read_bytes() if log.exists() else b""
    # ENOSPC at the fsync of MEMORY.md's temporary file, or of the decision log.
    fails = (lambda name: name.endswith(".tmp")) if failing == "index" else (lambda name: name.endswith("/log.jsonl"))
    fsync_fails_for(monkeypatch, fails)
    result = invoke_memdir("--dir", str(folder), "rm", "user_a.md", *(["--purge"] if purge else []))
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"memdir: error: {NO_SPACE}", result.stderr
    assert _files(folder) == before
    assert (log.read_bytes() if log.exists() else b"") == logged
    assert not list(folder.rglob("*.tmp"))


def test_rm_that_succeeds_moves_logs_and_reindexes(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    make_memory("user_b.md")
    invoke_memdir("--dir", str(folder), "index")
    assert invoke_memdir("--dir", str(folder), "rm", "user_a.md").exit_code == 0
    assert (folder / ".archive" / "user_a.md").is_file() and not (folder / "user_a.md").exists()
    assert "user_a.md" not in (folder / "MEMORY.md").read_text()
    assert [(e["file"], e["to"]) for e in read_log(folder)] == [("user_a.md", ".archive/user_a.md")]
    assert invoke_memdir("--dir", str(folder), "rm", "--purge", "user_b.md").exit_code == 0
    assert not (folder / "user_b.md").exists() and not list((folder / STATE_DIR).glob("*user_b*"))
    assert read_log(folder)[-1]["decision"] == "deleted"


# --- prune killed mid-move ----------------------------------------------------------------------


def _prunable(root: Path) -> None:
    """Three memories for prune to archive (one a reused file name) and two to keep."""
    root.mkdir(parents=True)

    def write(name: str, fields: str, body: str = "Body.\n") -> None:
        head = f"name: {name[:-3]}\ndescription: About {name}\ntype: {name.split('_', 1)[0]}\n"
        (root / name).write_text(f"---\n{head}{fields}---\n{body}")

    write("project_freeze.md", "created: 2026-11-01\nexpires: 2026-11-20\n")
    write("project_offsite.md", "created: 2026-11-01\nexpires: 2026-12-01\n")
    write("feedback_old-rule.md", "status: superseded\nsuperseded_by: feedback_new-rule.md\n")
    write("feedback_new-rule.md", "created: 2026-11-10\n")
    write("project_launch.md", "expires: 2026-11-21\n")
    (root / ".archive").mkdir()  # an earlier memory of the same file name, archived long ago
    (root / ".archive" / "project_launch.md").write_text("---\nname: launch\ndescription: Old\ntype: project\n---\n")
    (root / "MEMORY.md").write_text("# Memory\n")
    MemoryDir(root, today=dt.date(2026, 11, 15)).write_index()  # a week ago: freeze and launch are listed
    # Weeks old, so the parse cache always takes them: a file younger than RACY_SECONDS is left out of
    # it, and then the number of write steps would hang on how fast this machine ran the set-up.
    for path in root.rglob("*.md"):
        os.utime(path, (WRITTEN_AT, WRITTEN_AT))


def _prune(root: Path, step: int = 0, when: str = "never") -> subprocess.CompletedProcess[str]:
    """`memdir prune` as a process dying at write step `step` (test_crash.run_dying)."""
    env = {**os.environ, "MEMDIR_TODAY": "2026-11-22", "NO_COLOR": "1", "MEMDIR_DEBUG": "", "PYTHONPATH": str(WORKTREE)}
    return run_dying(["--dir", str(root), "-q", "prune"], step, when, env=env, cwd=WORKTREE, timeout=TIMEOUT)


def _log_lines(root: Path) -> list[dict[str, object]]:
    return [{k: v for k, v in entry.items() if k != "at"} for entry in read_log(root)]


PRUNE_STEPS = 21  # write steps of the reference prune; test_the_prune_steps_are_all_covered says when it changes
# Its steps: 1 the parse cache; then for each of the three memories archived, four (the copy's fsync,
# its link into .archive/, the archive's fsync, the decision log's; the original is removed after the
# last); 14-21 the index and its history. The deaths: each step of the first move and of the last
# (whose file name is taken in the archive: launch-2), before and after, and around the index's
# rename. The second move is the first one again, with a move done before it.
CHOSEN = [(step, when) for step in (2, 3, 4, 5, 10, 11, 12, 13) for when in ("before", "after")]
CHOSEN += [(19, "after"), (20, "after")]


@pytest.fixture(scope="module")
def pruned_reference(scratch: Path) -> tuple[int, dict[str, bytes], list[dict[str, object]]]:
    """An uninterrupted prune of the folder every killed one starts from: its write steps, files and log."""
    reference = scratch / "reference"
    _prunable(reference)
    done = _prune(reference)
    assert done.returncode == 0, done.stderr
    return int(done.stderr.rsplit("steps=", 1)[1]), _files(reference), _log_lines(reference)


def test_the_prune_steps_are_all_covered(
    pruned_reference: tuple[int, dict[str, bytes], list[dict[str, object]]],
) -> None:
    steps, expected, expected_log = pruned_reference
    assert steps == PRUNE_STEPS, (
        f"prune now makes {steps} write steps: set PRUNE_STEPS to {steps}, and choose CHOSEN again"
    )
    assert len(expected_log) == 3 and ".archive/project_launch-2.md" in expected
    assert "freeze" not in expected["MEMORY.md"].decode() and "offsite" in expected["MEMORY.md"].decode()


@pytest.mark.slow
@pytest.mark.parametrize(("step", "when"), CHOSEN)
def test_prune_killed_at_a_write_step_is_finished_by_the_next_prune(
    scratch: Path,
    pruned_reference: tuple[int, dict[str, bytes], list[dict[str, object]]],
    step: int,
    when: str,
) -> None:
    """Before: killed between writing `.archive/X.md` and removing `X.md`, the rerun archived X again
    as `.archive/X-2.md`, and `memdir history X` failed with "matches 2 memories". One case per write
    step chosen, so that a failure names its step and the cases spread over the test workers."""
    steps, expected, expected_log = pruned_reference
    root = scratch / f"{step}-{when}"  # a tmpfs: runs that fsync at every step
    _prunable(root)
    died = _prune(root, step, when)
    assert died.returncode == 137, died.stderr
    # In-process: only the run that dies needs a process of its own; the next one is any prune.
    again = invoke_memdir("--dir", str(root), "-q", "prune", env={"MEMDIR_TODAY": "2026-11-22"})
    what = f"prune died {when} write step {step} of {steps}"
    assert again.exit_code == 0, (what, again.stderr)
    assert _files(root) == expected, what
    assert _log_lines(root) == expected_log, what
    for name in ("freeze", "old-rule", "project_launch.md"):
        shown = invoke_memdir("--dir", str(root), "history", name)
        assert shown.exit_code == 0, (what, shown.output)


# --- Ctrl-C during start-up ---------------------------------------------------------------------

# The console script pip writes for `memdir = "memdir.cli:main"`, preceded by an import hook that
# stops at the import of one module, says so, and waits there for the signal.
_CONSOLE_SCRIPT = textwrap.dedent(
    """
    import importlib.abc, sys, time
    wanted = sys.argv.pop(1)

    class StopAt(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == wanted:
                sys.meta_path.remove(self)
                print("importing", name, flush=True)
                time.sleep(60)
            return None

    sys.meta_path.insert(0, StopAt())
    import re
    import sys
    from memdir.cli import main
    if __name__ == "__main__":
        sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
        sys.exit(main())
    """
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "args"),
    [
        ("memdir.core.config", ["--help"]),  # imported by memdir/__init__.py
        ("memdir.cli.memories", ["list"]),
        ("typer", ["--help"]),
        ("memdir.cli.typer_app", ["list"]),
        ("memdir.cli.index", ["index"]),  # the fast path, without typer
        ("memdir.integrations.claude_runtime", ["hook", "session-start"]),
    ],
)
def test_ctrl_c_during_start_up_exits_130_without_a_traceback(folder: Path, module: str, args: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(WORKTREE)}
    child = subprocess.Popen(
        [sys.executable, "-c", _CONSOLE_SCRIPT, module, "--dir", str(folder), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=WORKTREE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as at a terminal
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == f"importing {module}\n"
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    assert err == "", err  # no traceback, no KeyboardInterrupt: nothing


def test_the_console_script_reaches_main_before_any_heavy_import() -> None:
    """What makes the test above hold for the real `memdir` command: pip's script imports
    `memdir.cli` (and so `memdir`) before it calls main(), so those imports must be light."""
    import tomllib

    scripts = tomllib.loads((WORKTREE / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"memdir": "memdir.cli:main"}
    probe = "import sys, memdir.cli; print([m for m in sorted(sys.modules) if m.split('.')[0] in HEAVY])"
    probe = probe.replace("HEAVY", "('memdir', 'yaml', 'typer', 'rich')")
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=WORKTREE, timeout=TIMEOUT)
    # memdir.version is one assignment: the package's __version__, imported by the package root.
    assert json.loads(shown.stdout.replace("'", '"')) == ["memdir", "memdir.cli", "memdir.version"], shown.stderr


def test_the_library_api_is_still_importable_from_the_package() -> None:
    import memdir

    assert memdir.MemoryDir is MemoryDir
    from memdir import Caps, Config, IndexResult, MemdirError, Memory, MemoryType, NewMemory  # noqa: F401


# --- watch: SIGTERM and SIGHUP stop it cleanly --------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["SIGTERM", "SIGHUP"])
def test_watch_with_sigint_ignored_stops_cleanly_on_sigterm_and_sighup(folder: Path, signum: int, code: int) -> None:
    """A non-interactive shell starts background jobs with SIGINT ignored, and systemd, tmux and
    editors stop a process with SIGTERM or SIGHUP: both stop `memdir watch` as Ctrl-C does."""
    env = {**os.environ, "PYTHONPATH": str(WORKTREE), "MEMDIR_WATCH_POLL": "1"}
    child = subprocess.Popen(
        [sys.executable, "-m", "memdir", "--dir", str(folder), "watch", "--no-lint"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=WORKTREE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert child.stdout is not None
        assert "MEMORY.md" in child.stdout.readline()  # the first index is written: it is watching
        child.send_signal(signum)
        _, err = child.communicate(timeout=TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == code, err
    assert "Traceback" not in err, err
    assert "Stopped watching" in err
