"""`memdir watch`: real file events on a real folder, with real timing.

The watcher runs on a thread (library tests) or as a `python -m memdir` process (CLI tests).
Tests wait for conditions with generous timeouts instead of sleeping, so a slow machine makes
them slower, not flaky. The inotify limit is simulated where the kernel is asked: a stand-in
for `inotify_add_watch` / `inotify_init` that fails the way the kernel does (errno ENOSPC/EMFILE).
"""

from __future__ import annotations

import ctypes
import datetime as dt
import errno
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import invoke_memdir

from memdir.core.errors import FolderNotFound
from memdir.folder import MemoryDir
from memdir.integrations.watch import (
    FellBackToPolling,
    FolderBack,
    FolderMissing,
    FolderWatcher,
    Indexed,
    Linted,
    WatchEvent,
    WatchFailed,
    Watching,
    relevant_path,
)
from memdir.lint import LintReport

TIMEOUT = 15.0  # generous: a loaded CI machine; a passing run takes a fraction of it
LINUX = sys.platform.startswith("linux")
REPO = Path(__file__).resolve().parents[1]


def memory(name: str, description: str, type: str = "user") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type}\n---\nBody of {name}.\n"


def index_text(root: Path) -> str:
    try:
        return (root / "MEMORY.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def wait_until(condition: Callable[[], Any], timeout: float = TIMEOUT, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.01)


class Events:
    """What a watcher reported, in order; `wait` finds the first match after a mark."""

    def __init__(self) -> None:
        self.all: list[WatchEvent] = []
        self._cond = threading.Condition()

    def __call__(self, event: WatchEvent) -> None:
        with self._cond:
            self.all.append(event)
            self._cond.notify_all()

    def mark(self) -> int:
        with self._cond:
            return len(self.all)

    def wait(self, kind: type[Any], after: int = 0, where: Callable[[Any], bool] = lambda e: True) -> Any:
        deadline = time.monotonic() + TIMEOUT
        with self._cond:
            while True:
                for event in self.all[after:]:
                    if isinstance(event, kind) and where(event):
                        return event
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {kind.__name__} event after #{after}; got {self.all[after:]}")
                self._cond.wait(left)

    def since(self, after: int, kind: type[Any]) -> list[Any]:
        with self._cond:
            return [e for e in self.all[after:] if isinstance(e, kind)]


@contextmanager
def watching(folder: MemoryDir | Path, **options: Any) -> Iterator[tuple[FolderWatcher, Events]]:
    """A watcher running on a thread, past its first index (and lint); stopped on exit."""
    events = Events()
    watcher = FolderWatcher(folder if isinstance(folder, MemoryDir) else MemoryDir(folder), events, **options)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            watcher.run()
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        events.wait(Linted if options.get("lint", True) else Indexed)
        yield watcher, events
    finally:
        watcher.stop()
        thread.join(TIMEOUT)
        assert not thread.is_alive(), "the watcher did not stop"
    assert not failure, failure


def saved(events: Events, after: int, path: str) -> Indexed:
    found: Indexed = events.wait(Indexed, after, lambda e: path in e.paths)
    return found


# --- which paths count ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "is_directory", "expected"),
    [
        ("user_role.md", False, True),
        ("team/feedback_x.md", False, True),
        ("team", True, True),
        ("MEMORY.md", False, False),
        ("team/MEMORY.md", False, False),
        (".memdir/parse-cache", False, False),
        (".memdir", True, False),
        (".archive/user_old.md", False, False),
        (".MEMORY.md.x1y2.tmp", False, False),
        (".user_role.md.swp", False, False),
        (".user_role.md.swx", False, False),
        ("user_role.md~", False, False),
        ("#user_role.md#", False, False),
        (".#user_role.md", False, False),
        ("4913", False, False),
        ("user_role.md.tmp", False, False),
        ("user_role.md___jb_tmp___", False, False),
        (".goutputstream-ABC123", False, False),
        ("notes.txt", False, False),
        (".", True, False),
        ("../elsewhere/user_x.md", False, False),
    ],
)
def test_which_changes_count(rel: str, is_directory: bool, expected: bool) -> None:
    assert relevant_path(rel, is_directory) is expected


# --- the loop --------------------------------------------------------------------------------------


def test_first_run_indexes_then_lints(folder: Path) -> None:
    (folder / "user_role.md").write_text(memory("role", "Backend developer"))
    with watching(folder) as (watcher, events):
        kinds = [type(e) for e in events.all[:3]]
        assert kinds == [Watching, Indexed, Linted]
        assert events.all[1].paths == ()
        if LINUX:
            assert watcher.backend == "inotify"
        assert "- [role](user_role.md) — Backend developer" in index_text(folder)


def test_a_new_memory_is_indexed_soon_after_it_is_saved(folder: Path) -> None:
    with watching(folder) as (_, events):
        mark = events.mark()
        (folder / "feedback_lint.md").write_text(memory("lint", "Run the linter first", "feedback"))
        run = saved(events, mark, "feedback_lint.md")
        assert run.write.changed
        assert run.since_change is not None and run.since_change < 5
        assert "- [lint](feedback_lint.md) — Run the linter first" in index_text(folder)
        # The lint that follows is the one for this index run.
        linted = events.wait(Linted, events.all.index(run))
        assert linted.report.memories == 1


def test_own_writes_and_editor_litter_do_not_trigger_a_run(folder: Path) -> None:
    (folder / "user_a.md").write_text(memory("a", "First"))
    with watching(folder) as (_, events):
        mark = events.mark()
        with open(folder / "MEMORY.md", "a", encoding="utf-8") as handle:
            handle.write("\nA note a person added by hand.\n")
        (folder / ".memdir" / "scratch").write_text("x")
        (folder / ".archive").mkdir()
        (folder / ".archive" / "user_old.md").write_text(memory("old", "Archived"))
        for litter in (".user_a.md.swp", "user_a.md~", "#user_a.md#", "4913", "user_a.md.tmp", "notes.txt"):
            (folder / litter).write_text("editor litter")
        os.symlink("nowhere", folder / ".#user_a.md")  # emacs' lock file
        (folder / "user_b.md").write_text(memory("b", "Second"))
        first = events.wait(Indexed, mark)
        assert first.paths == ("user_b.md",)
        # memdir's own writes (MEMORY.md, .memdir/) must not start another run: the next one is
        # for the next save, and only for it.
        mark = events.mark()
        (folder / "user_c.md").write_text(memory("c", "Third"))
        assert events.wait(Indexed, mark).paths == ("user_c.md",)
        text = index_text(folder)
        assert "A note a person added by hand." in text
        assert "archived" not in text.lower() and "litter" not in text


def _write_then_rename(path: Path, text: str) -> None:  # gedit, Sublime, atomic-write libraries
    temporary = path.with_name(f".goutputstream-{path.stem}")
    temporary.write_text(text)
    os.replace(temporary, path)


def _vim_backup(path: Path, text: str) -> None:  # vim with backupcopy=no, emacs: rename to x~, write anew
    os.rename(path, path.with_name(path.name + "~"))
    (path.parent / "4913").write_text("")
    (path.parent / "4913").unlink()
    swap = path.with_name(f".{path.name}.swp")
    swap.write_text("swap")
    path.write_text(text)
    path.with_name(path.name + "~").unlink()
    swap.unlink()


def _jetbrains_safe_write(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + "___jb_tmp___")
    old = path.with_name(path.name + "___jb_old___")
    temporary.write_text(text)
    os.rename(path, old)
    os.rename(temporary, path)
    old.unlink()


def _in_place(path: Path, text: str) -> None:  # VS Code, nano: truncate and write, in two writes
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text[:10])
        handle.flush()
        time.sleep(0.02)
        handle.write(text[10:])


def _delete_then_create(path: Path, text: str) -> None:
    path.unlink()
    time.sleep(0.3)  # longer than the debounce: the watcher indexes the folder without the file
    path.write_text(text)


@pytest.mark.parametrize(
    "save",
    [_write_then_rename, _vim_backup, _jetbrains_safe_write, _in_place, _delete_then_create],
    ids=["write-then-rename", "vim-backup", "jetbrains", "in-place", "delete-then-create"],
)
def test_editor_save_patterns_end_in_the_right_index(folder: Path, save: Callable[[Path, str], None]) -> None:
    path = folder / "user_role.md"
    path.write_text(memory("role", "Old description"))
    with watching(folder):
        assert "— Old description" in index_text(folder)
        save(path, memory("role", "New description"))
        wait_until(lambda: "— New description" in index_text(folder), what="the new description in MEMORY.md")
        text = index_text(folder)
        assert "Old description" not in text
        assert text.count("](") == 1, text  # no swap, backup or temporary file got an entry


def test_a_burst_of_saves_is_indexed_once(folder: Path) -> None:
    with watching(folder, debounce=0.4) as (_, events):
        mark = events.mark()
        names = [f"project_p{i}.md" for i in range(10)]
        for i, name in enumerate(names):
            (folder / name).write_text(memory(f"p{i}", f"Project {i}", "project"))
        run = events.wait(Indexed, mark)
        assert run.paths == tuple(sorted(names))
        assert len(run.write.result.entries) == 10


def test_a_run_reads_only_the_changed_files_unless_some_change_is_unknown(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.core import store

    (folder / "user_a.md").write_text(memory("a", "First"))
    (folder / "user_b.md").write_text(memory("b", "Second"))
    listed = []
    full_listing = store.index_inputs
    monkeypatch.setattr(store, "index_inputs", lambda *args: listed.append(1) or full_listing(*args))
    monkeypatch.setattr("memdir.folder.index_inputs", store.index_inputs)
    with watching(folder, debounce=0.3, lint=False) as (watcher, events):
        assert listed == [1]  # the first run lists the folder
        mark = events.mark()
        (folder / "user_a.md").write_text(memory("a", "First, changed"))
        run = events.wait(Indexed, mark)
        assert run.paths == ("user_a.md",) and listed == [1]  # read that file alone
        assert "First, changed" in (folder / "MEMORY.md").read_text()
        mark = events.mark()
        (folder / "user_b.md").write_text(memory("b", "Second, changed"))
        watcher._events_lost()  # the kernel's queue overflowed meanwhile: what else changed is unknown
        events.wait(Indexed, mark)
        assert listed == [1, 1]  # the folder was listed again
        assert "Second, changed" in (folder / "MEMORY.md").read_text()


def test_sub_folders_created_and_moved_in_are_watched(folder: Path, tmp_path: Path) -> None:
    with watching(folder):
        (folder / "team").mkdir()
        (folder / "team" / "feedback_review.md").write_text(memory("review", "Two reviewers", "feedback"))
        wait_until(lambda: "(team/feedback_review.md)" in index_text(folder), what="team/ indexed")
        outside = tmp_path / "elsewhere" / "proj"
        outside.mkdir(parents=True)
        (outside / "project_launch.md").write_text(memory("launch", "Launch in March", "project"))
        os.rename(outside, folder / "proj")
        wait_until(lambda: "(proj/project_launch.md)" in index_text(folder), what="a moved-in folder indexed")
        # A change deep in the new folder is seen too: the folder got its own watch. (Waiting for
        # the text, not for a run naming the file: the move's own events can still start one.)
        (folder / "proj" / "project_launch.md").write_text(memory("launch", "Launch in April", "project"))
        wait_until(lambda: "Launch in April" in index_text(folder), what="a change in the moved-in folder")


def test_the_folder_removed_and_recreated(folder: Path) -> None:
    (folder / "user_a.md").write_text(memory("a", "Before"))
    with watching(folder) as (_, events):
        mark = events.mark()
        shutil.rmtree(folder)
        events.wait(FolderMissing, mark)
        assert not folder.exists()  # waiting for it never recreates it
        folder.mkdir()
        (folder / "user_b.md").write_text(memory("b", "After"))
        events.wait(FolderBack, mark)
        wait_until(lambda: "— After" in index_text(folder), what="the recreated folder indexed")
        # ... and it is watched again.
        mark = events.mark()
        (folder / "user_c.md").write_text(memory("c", "Later"))
        saved(events, mark, "user_c.md")


def test_the_folder_replaced_by_another(folder: Path, tmp_path: Path) -> None:
    """`mv new memory` (or a checkout) swaps the folder; inotify would keep watching the old one."""
    (folder / "user_a.md").write_text(memory("a", "Old folder"))
    replacement = tmp_path / "replacement"
    replacement.mkdir()
    (replacement / "user_b.md").write_text(memory("b", "New folder"))
    with watching(folder) as (_, events):
        mark = events.mark()
        os.rename(folder, tmp_path / "old")
        os.rename(replacement, folder)
        events.wait(FolderBack, mark)
        wait_until(lambda: "— New folder" in index_text(folder), what="the replacement indexed")
        mark = events.mark()
        (folder / "user_c.md").write_text(memory("c", "In the new one"))
        saved(events, mark, "user_c.md")


def test_polling_on_request(folder: Path) -> None:
    with watching(folder, polling=True, poll_interval=0.1) as (watcher, events):
        assert watcher.backend == "polling"
        assert events.all[0] == Watching(folder, "polling")
        mark = events.mark()
        (folder / "user_role.md").write_text(memory("role", "Polled"))
        saved(events, mark, "user_role.md")
        assert "— Polled" in index_text(folder)


def test_slow_lint_does_not_delay_the_index(folder: Path) -> None:
    gate = threading.Event()

    class SlowLint(MemoryDir):
        def lint(self, *args: Any, **kwargs: Any) -> LintReport:
            gate.wait(TIMEOUT)
            return super().lint(*args, **kwargs)

    events = Events()
    watcher = FolderWatcher(SlowLint(folder), events)
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        events.wait(Indexed)  # the first run's lint is now stuck behind the gate
        (folder / "user_role.md").write_text(memory("role", "Indexed while linting"))
        second = saved(events, 0, "user_role.md")
        assert not events.since(0, Linted), "lint ran before the index"
        assert "— Indexed while linting" in index_text(folder)
        gate.set()
        linted = events.wait(Linted)
        assert events.all.index(linted) > events.all.index(second)
        assert linted.report.memories == 1  # the folder as of the latest index, not the first
    finally:
        gate.set()
        watcher.stop()
        thread.join(TIMEOUT)


def test_a_failed_run_is_reported_and_watching_goes_on(folder: Path) -> None:
    (folder / "MEMORY.md").write_bytes(b"# Memory\n\xff\xfe not UTF-8\n")
    events = Events()
    watcher = FolderWatcher(MemoryDir(folder), events, lint=False)
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        failed = events.wait(WatchFailed)
        assert failed.stage == "index" and "UTF-8" in failed.message
        (folder / "MEMORY.md").write_text("# Memory\n")  # ignored by itself: it is the index
        mark = events.mark()
        (folder / "user_role.md").write_text(memory("role", "Back on track"))
        saved(events, mark, "user_role.md")
        assert "— Back on track" in index_text(folder)
    finally:
        watcher.stop()
        thread.join(TIMEOUT)


def test_each_run_is_dated_by_the_clock_it_is_given(folder: Path) -> None:
    (folder / "project_freeze.md").write_text(
        "---\nname: freeze\ndescription: Code freeze\ntype: project\nexpires: 2026-11-23\n---\nFreeze.\n"
    )
    today = [dt.date(2026, 11, 22)]
    with watching(folder, today=lambda: today[0]) as (_, events):
        assert "(project_freeze.md)" in index_text(folder)
        today[0] = dt.date(2026, 11, 23)
        mark = events.mark()
        (folder / "user_role.md").write_text(memory("role", "Anything"))
        saved(events, mark, "user_role.md")
        assert "(project_freeze.md)" not in index_text(folder)


def test_stop_wakes_the_loop_and_a_missing_folder_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FolderNotFound):
        FolderWatcher(MemoryDir(tmp_path / "nowhere"), Events()).run()
    root = tmp_path / "memory"
    root.mkdir()
    # Idle, the loop would sleep an hour between looks: `watching` joins the thread for TIMEOUT and
    # fails if it is still alive, so it only passes when stop() wakes the loop, not a timer.
    monkeypatch.setattr(FolderWatcher, "_next_timeout", lambda self: 3600.0)
    with watching(root):
        pass


# --- running out of inotify watches ----------------------------------------------------------------

linux_only = pytest.mark.skipif(not LINUX, reason="inotify is Linux's")


@pytest.fixture
def inotify_limit(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[bytes], bool]], None]:
    """Make `inotify_add_watch` fail with ENOSPC for the paths `fails(path)` picks, as the kernel
    does when fs.inotify.max_user_watches is used up."""
    from watchdog.observers import inotify_c

    real = inotify_c.inotify_add_watch

    def limit(fails: Callable[[bytes], bool]) -> None:
        def add_watch(fd: int, path: bytes, mask: int) -> int:
            if fails(path):
                ctypes.set_errno(errno.ENOSPC)
                return -1
            return real(fd, path, mask)

        monkeypatch.setattr(inotify_c, "inotify_add_watch", add_watch)

    return limit


@linux_only
def test_no_inotify_watch_left_falls_back_to_polling(folder: Path, inotify_limit: Any) -> None:
    inotify_limit(lambda path: True)
    with watching(folder, poll_interval=0.1) as (watcher, events):
        fallback = events.wait(FellBackToPolling)
        assert "inotify watch limit" in fallback.reason
        assert watcher.backend == "polling"
        mark = events.mark()
        (folder / "user_role.md").write_text(memory("role", "Seen by polling"))
        saved(events, mark, "user_role.md")


@linux_only
def test_no_inotify_instance_left_falls_back_to_polling(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from watchdog.observers import inotify_c

    def init() -> int:
        ctypes.set_errno(errno.EMFILE)
        return -1

    monkeypatch.setattr(inotify_c, "inotify_init", init)
    with watching(folder, poll_interval=0.1) as (watcher, events):
        assert "instance limit" in events.wait(FellBackToPolling).reason
        assert watcher.backend == "polling"


@linux_only
def test_a_sub_folder_that_cannot_be_watched_means_polling(folder: Path, inotify_limit: Any) -> None:
    """watchdog skips a sub-folder it cannot watch without a word; its changes would be lost."""
    (folder / "team").mkdir()
    inotify_limit(lambda path: path.endswith(b"/team"))
    with watching(folder, poll_interval=0.1) as (watcher, events):
        assert "watch limit" in events.wait(FellBackToPolling).reason
        assert watcher.backend == "polling"
        mark = events.mark()
        (folder / "team" / "user_x.md").write_text(memory("x", "In the sub-folder"))
        saved(events, mark, "team/user_x.md")


@linux_only
def test_running_out_of_watches_while_watching(folder: Path, inotify_limit: Any) -> None:
    inotify_limit(lambda path: b"/later" in path)
    with watching(folder, poll_interval=0.1) as (watcher, events):
        assert watcher.backend == "inotify"
        mark = events.mark()
        (folder / "later").mkdir()
        events.wait(FellBackToPolling, mark)
        (folder / "later" / "user_y.md").write_text(memory("y", "Created after the fallback"))
        wait_until(lambda: "(later/user_y.md)" in index_text(folder), what="later/ indexed by polling")
        assert watcher.backend == "polling"


# --- the command -------------------------------------------------------------------------------------


class WatchProcess:
    """`python -m memdir --dir F watch ...` with its stdout read line by line on a thread."""

    def __init__(self, root: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memdir", "--dir", str(root), "watch", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env={**os.environ, **(env or {})},
            cwd=root.parent,
            # A shell's background job ignores SIGINT and its children inherit that; Ctrl-C is the test.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def line(self, wanted: Callable[[str], bool]) -> str:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError("no such line from memdir watch") from None
            if line is None:
                raise AssertionError(f"memdir watch exited: {self.proc.wait()}, {self.stop()[1]}")
            if wanted(line):
                return line

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # Ctrl-C
        try:
            _, err = self.proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        return self.proc.returncode, err


def test_command_prints_index_and_lint_lines_and_exits_130_on_ctrl_c(folder: Path) -> None:
    watch = WatchProcess(folder)
    try:
        watch.line(lambda line: " lint: " in line)  # the first run is done
        (folder / "user_role.md").write_text(memory("role", "Backend developer"))
        indexed = watch.line(lambda line: "user_role.md" in line)
        assert "MEMORY.md updated after user_role.md: 1 entry, 1 line, " in indexed
        assert " lint: " in watch.line(lambda line: True)  # straight after the index line
    finally:
        code, err = watch.stop()
    assert code == 130, err
    assert "Traceback" not in err
    assert "Watching" in err and "Stopped watching" in err


def test_command_json_lines_and_polling_from_the_environment(folder: Path) -> None:
    watch = WatchProcess(folder, "--format", "json", "--no-lint", env={"MEMDIR_WATCH_POLL": "1"})
    try:
        started = json.loads(watch.line(lambda line: True))
        assert started["event"] == "watching" and started["backend"] == "polling"
        first = json.loads(watch.line(lambda line: True))
        assert first["event"] == "indexed" and first["paths"] == []
        (folder / "user_role.md").write_text(memory("role", "Backend developer"))
        event = json.loads(watch.line(lambda line: "user_role.md" in line))
        assert event["event"] == "indexed" and event["changed"] is True and event["entries"] == 1
        assert {"at", "lines", "bytes", "left_out", "unreadable", "refused", "seconds", "since_change"} <= set(event)
    finally:
        code, err = watch.stop()
    assert code == 130, err


def test_command_on_a_missing_folder(tmp_path: Path) -> None:
    result = invoke_memdir("--dir", str(tmp_path / "nowhere"), "watch")
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_watch_help_does_not_import_watchdog(tmp_path: Path) -> None:
    probe = (
        "import runpy, sys\n"
        "sys.argv = ['memdir', 'watch', '--help']\n"
        "try:\n    runpy.run_module('memdir', run_name='__main__', alter_sys=True)\n"
        "except SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] == 'watchdog'))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert "LOADED []" in done.stdout, done.stdout + done.stderr


@pytest.mark.slow
def test_latency_script_measures_a_small_folder(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO))
    from scripts.synthetic import write_folder
    from scripts.watch_latency import measure

    root = tmp_path / "memory"
    write_folder(root, 50)
    latencies = measure(root, 5)
    assert len(latencies) == 5
    assert all(0 < s < 5 for s in latencies), latencies
