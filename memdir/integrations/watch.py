"""Keep MEMORY.md current while people edit memory files: the loop behind `memdir watch`.

A watchdog observer only records which paths changed; the loop waits until changes stop for a
moment (the debounce), re-indexes, and hands the lint run to a worker thread so that a slow lint
never delays the next index. Nothing here prints: every outcome reaches a callback as a
`WatchEvent`. watchdog is imported only when a watcher starts (start-up of other commands stays fast).

Over 500 lines: one event loop with its debounce, lint worker and signal handling, which read best
together.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from memdir.core.errors import FolderNotFound, MemdirError, os_error_text
from memdir.core.model import INDEX_NAME

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent
    from watchdog.observers.api import BaseObserver

    from memdir.folder import IndexWrite, MemoryDir
    from memdir.lint import LintReport

DEBOUNCE_SECONDS = 0.1  # editors finish a save (write, rename, delete the backup) well within this
MAX_DELAY_SECONDS = 1.0  # a stream of changes that never pauses still gets indexed this often
POLL_INTERVAL_SECONDS = 0.5
TICK_SECONDS = 0.25  # how often an idle loop checks that the folder is still the one it watches
_STOP_TIMEOUT_SECONDS = 2.0

# Errors that mean the kernel has no inotify watch or instance left for this user.
_LIMIT_ERRNOS = (errno.ENOSPC, errno.EMFILE)


# --- what the watcher reports ------------------------------------------------------------------


@dataclass(frozen=True)
class Watching:
    """The observer is running; `backend` is "inotify", "polling" or watchdog's name for another."""

    root: Path
    backend: str


@dataclass(frozen=True)
class FellBackToPolling:
    """Native file events are not available (e.g. inotify watches ran out); polling instead."""

    reason: str


@dataclass(frozen=True)
class Indexed:
    """MEMORY.md was regenerated (or found current) after `paths` changed.

    `paths` are folder-relative; empty for a run that does not follow a particular change (the
    first run, the folder coming back, events lost). `seconds` is the time the index took;
    `since_change` the time from the first change seen to the index being written.
    """

    write: IndexWrite
    paths: tuple[str, ...]
    seconds: float
    since_change: float | None


@dataclass(frozen=True)
class Linted:
    """The lint run that follows the latest index."""

    report: LintReport
    seconds: float


@dataclass(frozen=True)
class FolderMissing:
    """The folder was removed (or replaced by a file); the watcher waits for it to come back."""

    root: Path


@dataclass(frozen=True)
class FolderBack:
    """The folder exists again (recreated, or replaced by another folder); it is re-indexed."""

    root: Path


@dataclass(frozen=True)
class WatchFailed:
    """One index or lint run failed; watching goes on, and the next change tries again."""

    stage: str  # "index" | "lint"
    message: str


WatchEvent = Watching | FellBackToPolling | Indexed | Linted | FolderMissing | FolderBack | WatchFailed


# --- which changes matter ----------------------------------------------------------------------


def relevant_path(rel: str, is_directory: bool) -> bool:
    """Whether a change at folder-relative `rel` can change the index.

    Memory files are `*.md` outside dot-folders; `MEMORY.md` (memdir's own output), `.memdir/`,
    `.archive/`, and editors' swap, backup and temporary files (`.x.md.swp`, `x.md~`, `#x.md#`,
    `.#x.md`, `x.md.tmp`, vim's `4913`) are not. A folder that appears, vanishes or moves can
    carry memories with it, so every folder change outside dot-folders counts.
    """
    parts = PurePath(rel).parts
    if not parts or parts[0] in (".", "..") or any(part.startswith(".") for part in parts):
        return False
    if is_directory:
        return True
    name = parts[-1]
    return name.endswith(".md") and name != INDEX_NAME


# --- the watcher -------------------------------------------------------------------------------

Report = Callable[[WatchEvent], None]


class FolderWatcher:
    """Re-index a memory folder whenever its memory files change, until `stop()` or Ctrl-C.

    >>> watcher = FolderWatcher(MemoryDir(".claude/memory"), print)
    >>> watcher.run()  # blocks; call watcher.stop() from another thread to end it

    `report` is called from the thread that runs `run()`, in order: `Watching`, then an
    `Indexed` for each run, each followed by the `Linted` for it (unless a newer index came first
    or `lint=False`). `polling=True` skips native events; the watcher also falls back to polling
    by itself when the kernel runs out of inotify watches. `today`, when given, dates each run
    (expiry), so a watcher left running past midnight stops indexing what expired.
    """

    def __init__(
        self,
        folder: MemoryDir,
        report: Report,
        *,
        debounce: float = DEBOUNCE_SECONDS,
        lint: bool = True,
        polling: bool = False,
        poll_interval: float = POLL_INTERVAL_SECONDS,
        max_delay: float = MAX_DELAY_SECONDS,
        today: Callable[[], dt.date] | None = None,
    ) -> None:
        self.folder = folder
        self.root = Path(folder.root)
        self._report = report
        self._debounce = debounce
        self._max_delay = max(max_delay, debounce)
        self._polling = polling
        self._poll_interval = poll_interval
        self._today = today
        self._lint = _LintWorker(self._run_lint, self._wake_up) if lint else None

        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # guards what the observer's thread records below
        self._paths: set[str] = set()
        self._unknown = False  # a change whose files are unknown (a lost event queue, a switch to polling)
        self._first_change: float | None = None
        self._last_change = 0.0
        self._root_event = False  # the watched folder itself was deleted
        self._limit_hit: str | None = None  # a sub-folder could not be watched: why

        self._observer: BaseObserver | None = None
        self._backend = ""
        self._watched_root = ""  # the resolved path the observer watches; events are relative to it
        self._identity: tuple[int, int] | None = None
        self._generation = 0  # counts index runs; a lint result for an older one is stale
        self._last_write: IndexWrite | None = None  # the last index run, for the next incremental one

    # --- public --------------------------------------------------------------------------

    def run(self) -> None:
        """Watch until `stop()` (returns) or Ctrl-C (KeyboardInterrupt propagates).

        Raises FolderNotFound when the folder does not exist at the start.
        """
        if not self.root.is_dir():
            raise FolderNotFound.at(self.root, "run `memdir init` to create it")
        if self._lint is not None:
            self._lint.start()
        try:
            self._start_observer()
            self._report(Watching(self.root, self._backend))
            self._index(paths=(), since=None)
            self._loop()
        finally:
            self._stop_observer()
            if self._lint is not None:
                self._lint.close()

    def stop(self) -> None:
        """Make `run()` return soon; safe from any thread."""
        self._stopping.set()
        self._wake.set()

    @property
    def backend(self) -> str:
        return self._backend

    # --- the loop ------------------------------------------------------------------------

    def _wake_up(self) -> None:
        self._wake.set()

    def _loop(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(self._next_timeout())
            self._wake.clear()
            if self._stopping.is_set():
                return
            self._deliver_lint()
            if self._limit_hit is not None:
                reason, self._limit_hit = self._limit_hit, None
                self._switch_to_polling(reason)
            if not self._folder_still_watched():
                continue
            due = self._due_changes()
            if due is not None:
                paths, since, known = due
                self._index(paths, since, incremental=known)

    def _next_timeout(self) -> float:
        with self._lock:
            if self._first_change is None:
                return TICK_SECONDS
            now = time.monotonic()
            quiet = self._last_change + self._debounce - now
            forced = self._first_change + self._max_delay - now
            return max(0.0, min(quiet, forced, TICK_SECONDS))

    def _due_changes(self) -> tuple[tuple[str, ...], float, bool] | None:
        """The changes to index now: once they have stopped for `debounce`, or waited `max_delay`."""
        with self._lock:
            if self._first_change is None:
                return None
            now = time.monotonic()
            if now < self._last_change + self._debounce and now < self._first_change + self._max_delay:
                return None
            paths, since, known = tuple(sorted(self._paths)), self._first_change, not self._unknown
            self._paths.clear()
            self._first_change = None
            self._unknown = False
            return paths, since, known

    def _index(self, paths: tuple[str, ...], since: float | None, incremental: bool = False) -> None:
        """Re-index and report it. `incremental`: `paths` are every file changed since the last
        run, so only they are read; else (a change whose files are unknown) the folder is."""
        if not self.root.is_dir():
            # Gone: the next tick reports it. Indexing now would recreate it (the lock lives in it).
            self._wake.set()
            return
        if self._today is not None:
            self.folder.today = self._today()
        start = time.monotonic()
        try:
            last = self._last_write if incremental and paths else None
            write = self.folder.write_index(since=last, changed_files=paths)
            self._last_write = write
        except (MemdirError, OSError) as exc:
            self._last_write = None
            if not self.root.is_dir():  # removed while being read: the next tick notices
                self._wake.set()
                return
            self._report(WatchFailed("index", _message(exc)))
            return
        done = time.monotonic()
        self._generation += 1
        self._report(Indexed(write, paths, done - start, None if since is None else done - since))
        if self._lint is not None:
            self._lint.request(self._generation)

    def _run_lint(self) -> LintReport:
        return self.folder.lint()

    def _deliver_lint(self) -> None:
        if self._lint is None:
            return
        for generation, outcome, seconds in self._lint.take():
            if generation != self._generation:
                continue  # the folder changed since; the newer run's lint follows
            if isinstance(outcome, BaseException):
                self._report(WatchFailed("lint", _message(outcome)))
            else:
                self._report(Linted(outcome, seconds))

    # --- the folder itself ---------------------------------------------------------------

    def _current_identity(self) -> tuple[int, int] | None:
        try:
            status = os.stat(self.root)  # through a symlink: the folder it leads to
        except OSError:
            return None
        return (status.st_dev, status.st_ino) if stat.S_ISDIR(status.st_mode) else None

    def _folder_still_watched(self) -> bool:
        """Check the folder is there and is the one the observer watches; restart it if not.

        Returns False while the folder is missing (after waiting for it to come back, or when
        stopping). A deleted folder stops inotify's watch, a folder replaced by `mv` or
        `git checkout` leaves the watch on the old one, and an emitter can die with its
        folder: each is caught here, on an event or on the next tick.
        """
        with self._lock:
            root_event, self._root_event = self._root_event, False
        identity = self._current_identity()
        emitters_alive = self._observer is not None and all(e.is_alive() for e in self._observer.emitters)
        if identity is not None and identity == self._identity and emitters_alive and not root_event:
            return True
        if identity is None:
            self._report(FolderMissing(self.root))
            self._stop_observer()
            self._discard_changes()
            if not self._wait_for_folder():
                return False
        self._stop_observer()
        self._discard_changes()
        self._start_observer()
        self._report(FolderBack(self.root))
        self._index(paths=(), since=None)
        return False

    def _wait_for_folder(self) -> bool:
        while not self._stopping.is_set():
            if self._current_identity() is not None:
                return True
            self._stopping.wait(TICK_SECONDS)
        return False

    def _discard_changes(self) -> None:
        with self._lock:
            self._paths.clear()
            self._first_change = None
            self._root_event = False
            self._unknown = False
        self._last_write = None  # what changed meanwhile is unknown: the next run reads everything

    # --- the observer --------------------------------------------------------------------

    def _record(self, event: FileSystemEvent) -> None:
        """The observer thread's callback: note what changed, and nothing else."""
        src = os.fsdecode(event.src_path)
        dest = os.fsdecode(event.dest_path) if event.dest_path else ""
        if src == self._watched_root:
            if event.event_type == "deleted":
                with self._lock:
                    self._root_event = True
                self._wake.set()
            return
        hits = [
            rel
            for rel in (self._relative(src), self._relative(dest) if dest else None)
            if rel is not None and relevant_path(rel, event.is_directory)
        ]
        if hits:
            self._changed(hits)

    def _changed(self, paths: list[str]) -> None:
        """Note a change; with no `paths`, one whose files are unknown (the next run still happens)."""
        with self._lock:
            now = time.monotonic()
            if self._first_change is None:
                self._first_change = now
            self._last_change = now
            self._paths.update(paths)
            self._unknown = self._unknown or not paths
        self._wake.set()

    def _events_lost(self) -> None:
        """The kernel's event queue overflowed: something changed, nobody knows what."""
        self._changed([])

    def _limit_reached(self, reason: str) -> None:
        self._limit_hit = reason
        self._wake.set()

    def _relative(self, path: str) -> str | None:
        rel = os.path.relpath(path, self._watched_root)
        return None if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir else rel

    def _start_observer(self) -> None:
        """Start watching the folder as it is now: natively when possible, else by polling."""
        self._watched_root = str(self.root.resolve())
        self._identity = self._current_identity()
        if not self._polling:
            native: BaseObserver | None = None
            try:
                native, backend = _native_observer(self._events_lost, self._limit_reached)
                self._schedule(native)
                native.start()
            except OSError as exc:
                _stop_quietly(native)
                if exc.errno not in _LIMIT_ERRNOS:
                    raise
                self._limit_hit = None  # this very failure, reported here
                self._polling = True
                self._report(FellBackToPolling(_limit_message(exc)))
            else:
                self._observer, self._backend = native, backend
                if self._limit_hit is not None:  # a sub-folder could not be watched while starting
                    reason, self._limit_hit = self._limit_hit, None
                    self._switch_to_polling(reason)
                return
        from watchdog.observers.polling import PollingObserver

        polling = PollingObserver(timeout=self._poll_interval)
        self._schedule(polling)
        polling.start()
        self._observer, self._backend = polling, "polling"

    def _schedule(self, observer: BaseObserver) -> None:
        from watchdog.events import (
            DirCreatedEvent,
            DirDeletedEvent,
            DirMovedEvent,
            FileAttribEvent,
            FileClosedEvent,
            FileCreatedEvent,
            FileDeletedEvent,
            FileModifiedEvent,
            FileMovedEvent,
            FileSystemEventHandler,
        )

        record = self._record

        class Recorder(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                record(event)

        # Only changes that can alter a memory. Leaving out opened / closed-without-writing events
        # matters: every index run reads each file, and would otherwise wake the watcher again.
        wanted: list[type[FileSystemEvent]] = [
            FileCreatedEvent,
            FileDeletedEvent,
            FileModifiedEvent,
            FileMovedEvent,
            FileClosedEvent,
            FileAttribEvent,
            DirCreatedEvent,
            DirDeletedEvent,
            DirMovedEvent,
        ]
        observer.schedule(Recorder(), self._watched_root, recursive=True, event_filter=wanted)

    def _switch_to_polling(self, reason: str) -> None:
        if self._backend == "polling":
            return
        self._stop_observer()
        self._polling = True
        self._report(FellBackToPolling(reason))
        self._start_observer()
        self._changed([])  # what changed in unwatched sub-folders was never seen

    def _stop_observer(self) -> None:
        observer, self._observer = self._observer, None
        _stop_quietly(observer)


# --- helpers -----------------------------------------------------------------------------------


class _LintWorker:
    """Lints on its own thread, always the latest index run, so the loop can index meanwhile.

    A daemon thread: Ctrl-C in the middle of a lint of ten thousand memories must not wait for it.
    """

    def __init__(self, lint: Callable[[], LintReport], done: Callable[[], None]) -> None:
        self._lint = lint
        self._done = done
        self._lock = threading.Lock()
        self._wanted = 0
        self._linted = 0
        self._closed = False
        self._request = threading.Event()
        self._results: list[tuple[int, LintReport | BaseException, float]] = []
        self._thread = threading.Thread(target=self._run, name="memdir-watch-lint", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def request(self, generation: int) -> None:
        with self._lock:
            self._wanted = generation
        self._request.set()

    def take(self) -> list[tuple[int, LintReport | BaseException, float]]:
        with self._lock:
            results, self._results = self._results, []
        return results

    def close(self) -> None:
        self._closed = True
        self._request.set()

    def _run(self) -> None:
        while True:
            self._request.wait()
            self._request.clear()
            if self._closed:
                return
            with self._lock:
                generation = self._wanted
            if generation == self._linted:
                continue  # a request that arrived after this generation was taken
            start = time.monotonic()
            outcome: LintReport | BaseException
            try:
                outcome = self._lint()
            except Exception as exc:  # one bad run (a rule's bug, a file vanishing) must not end watching
                outcome = exc
            with self._lock:
                if generation != self._wanted:
                    continue  # stale: the newer request is already set
                self._results.append((generation, outcome, time.monotonic() - start))
                self._linted = generation
            self._done()


def _native_observer(on_overflow: Callable[[], None], on_limit: Callable[[str], None]) -> tuple[BaseObserver, str]:
    """The platform's observer. On Linux, an inotify observer that says when a sub-folder could
    not be watched (watchdog skips such folders silently, and their changes would be lost) and when
    the kernel's queue overflowed. Built on watchdog internals, hence the version range in
    pyproject.toml (docs/architecture.md says why)."""
    try:
        from watchdog.observers.inotify import InotifyEmitter, InotifyObserver
        from watchdog.observers.inotify_c import InotifyFD
    except Exception:  # not Linux: watchdog's own choice
        from watchdog.observers import Observer

        observer = Observer()
        return observer, type(observer).__name__.removesuffix("Observer").lower() or "native"

    from watchdog.observers.api import DEFAULT_OBSERVER_TIMEOUT, BaseObserver

    class LimitAwareFD(InotifyFD):
        def add_callback(self, path: bytes, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().add_callback(path, *args, **kwargs)
            except OSError as exc:
                if exc.errno in _LIMIT_ERRNOS:
                    on_limit(f"{_limit_message(exc)} (at {os.fsdecode(path)})")
                raise

        def handle_event(self, event: Any) -> None:
            if event.is_queue_overflow:
                on_overflow()
            super().handle_event(event)

    class LimitAwareObserver(InotifyObserver):
        # InotifyObserver's own __init__, with the file descriptor above.
        def __init__(self) -> None:
            self._inotify_fd = LimitAwareFD()
            self._inotify_fd.start()
            BaseObserver.__init__(self, InotifyEmitter, timeout=DEFAULT_OBSERVER_TIMEOUT, inotify_fd=self._inotify_fd)

    return LimitAwareObserver(), "inotify"


def _stop_quietly(observer: BaseObserver | None) -> None:
    if observer is None:
        return
    with contextlib.suppress(Exception):
        observer.stop()
    with contextlib.suppress(RuntimeError):  # never started
        observer.join(_STOP_TIMEOUT_SECONDS)


def _limit_message(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "inotify watch limit reached (raise fs.inotify.max_user_watches)"
    if exc.errno == errno.EMFILE:
        return "inotify instance limit reached (raise fs.inotify.max_user_instances)"
    return str(exc)


def _message(exc: BaseException) -> str:
    if isinstance(exc, MemdirError):
        return str(exc)
    if isinstance(exc, OSError):
        return os_error_text(exc)
    return f"internal error: {type(exc).__name__}: {exc}"
