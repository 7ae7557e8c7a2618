"""`memdir watch`: re-index MEMORY.md whenever a memory file changes, and say what lint thinks.

The watching itself is memdir/integrations/watch.py; this module only turns its events into lines of output.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memdir.cli.errors import INTERRUPTED
from memdir.cli.state import OutputFormat, State
from memdir.cli.typer_app import FormatOption, app, state
from memdir.core.model import plural

if TYPE_CHECKING:
    from types import FrameType

    from memdir.folder import MemoryDir
    from memdir.integrations.watch import Indexed, Linted, WatchEvent

PATHS_SHOWN = 3
# Stop as Ctrl-C does: systemd, tmux and editors stop a process with SIGTERM or SIGHUP, and a
# background job of a non-interactive shell starts with SIGINT ignored. Exit 128 + the signal.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


@app.command()
def watch(
    ctx: typer.Context,
    lint: Annotated[
        bool, typer.Option("--lint/--no-lint", help="After each index, lint the folder and print a summary line.")
    ] = True,
    poll: Annotated[
        bool,
        typer.Option(
            "--poll",
            envvar="MEMDIR_WATCH_POLL",
            show_envvar=True,
            help="Poll the folder instead of using the system's file events (network drives, containers).",
        ),
    ] = False,
    debounce: Annotated[
        float,
        typer.Option("--debounce", min=0.0, max=10.0, help="Seconds without changes to wait before re-indexing."),
    ] = 0.1,
    format: FormatOption = OutputFormat.text,
) -> None:
    """Re-index MEMORY.md whenever a memory file changes, until Ctrl-C (exit 130), SIGTERM or SIGHUP.

    Each change prints one line for the index and one line summarising `memdir lint` (the index is
    written first; lint runs beside the next index instead of before it). Edits to MEMORY.md
    itself, `.memdir/`, dot-folders and editors' swap and backup files are ignored. With
    --format json every event is one JSON object per line (docs/watch.md has the schema).

    SIGTERM and SIGHUP stop it as Ctrl-C does, with exit 143 and 129 (128 + the signal, what a shell
    reports for a process they end), also when it was started with Ctrl-C ignored (a background job
    of a script): it runs under systemd, tmux and editors.
    """
    import logging

    # Loaded here, not at start-up: every other command would pay for it (watchdog itself is
    # imported only when the watcher starts).
    from memdir.integrations.watch import FolderWatcher

    st = state(ctx)
    folder = st.folder()
    # watchdog logs what memdir handles itself (a lost-events overflow is re-indexed, a folder that
    # cannot be read is reported); without a handler Python would print those records to stderr.
    logging.getLogger("watchdog").addHandler(logging.NullHandler())
    fixed_today = bool(os.environ.get("MEMDIR_TODAY"))
    printer = _Printer(st, folder, format)
    watcher = FolderWatcher(
        folder, printer, debounce=debounce, lint=lint, polling=poll, today=None if fixed_today else dt.date.today
    )
    try:
        with _stopped_by_signals():
            watcher.run()
    except KeyboardInterrupt:
        st.say(f"Stopped watching {st.show_path(folder.root)}.")
        raise typer.Exit(INTERRUPTED) from None
    except _Stopped as stop:
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            st.say(f"Stopped watching {st.show_path(folder.root)} ({signal.Signals(stop.signum).name}).")
        raise typer.Exit(128 + stop.signum) from None


class _Stopped(BaseException):
    """SIGTERM or SIGHUP: unwinds the watcher as Ctrl-C's KeyboardInterrupt does (a BaseException, so
    that no `except Exception` on the way takes it for an error)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """Within: STOP_SIGNALS raise _Stopped in the main thread, which unwinds the watcher as Ctrl-C's
    KeyboardInterrupt does. (Calling watcher.stop() from the handler instead could deadlock: it sets
    an Event, which takes a lock the interrupted code may be holding.)"""

    def stop(signum: int, frame: FrameType | None) -> None:
        for other in STOP_SIGNALS:  # a second signal must not cut the clean-up short
            signal.signal(other, signal.SIG_IGN)
        raise _Stopped(signum)

    previous = {signum: signal.signal(signum, stop) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class _Printer:
    """Watch events as text lines (index and lint on stdout, the rest on stderr) or JSON lines."""

    def __init__(self, st: State, folder: MemoryDir, format: OutputFormat) -> None:
        self.st = st
        self.folder = folder
        self.json = format is OutputFormat.json

    def __call__(self, event: WatchEvent) -> None:
        from memdir.integrations.watch import (
            FellBackToPolling,
            FolderBack,
            FolderMissing,
            Indexed,
            Linted,
            WatchFailed,
            Watching,
        )

        where = self.st.show_path(self.folder.root)
        if self.json:
            self._json(event)
        elif isinstance(event, Watching):
            self.st.say(f"Watching {where} for changes ({event.backend}); Ctrl-C stops.")
        elif isinstance(event, FellBackToPolling):
            self.st.warn(f"{event.reason}; polling {where} instead")
        elif isinstance(event, Indexed):
            self._line(_index_line(event))
        elif isinstance(event, Linted):
            self._line(_lint_line(event))
        elif isinstance(event, FolderMissing):
            self.st.warn(f"{where} is gone; waiting for it to come back")
        elif isinstance(event, FolderBack):
            self.st.say(f"{where} is back; re-indexing it.")
        elif isinstance(event, WatchFailed):
            self.st.error(f"{event.stage} failed: {event.message}")

    def _line(self, text: str) -> None:
        self.st.write(f"{dt.datetime.now():%H:%M:%S} {text}\n")

    def _json(self, event: WatchEvent) -> None:
        payload = {"event": _EVENT_NAMES[type(event).__name__], "at": dt.datetime.now().astimezone().isoformat()}
        payload.update(_json_fields(event))
        self.st.write_json(payload, indent=None)


_EVENT_NAMES = {
    "Watching": "watching",
    "FellBackToPolling": "polling",
    "Indexed": "indexed",
    "Linted": "linted",
    "FolderMissing": "folder-missing",
    "FolderBack": "folder-back",
    "WatchFailed": "error",
}


def _json_fields(event: WatchEvent) -> dict[str, Any]:
    """The stable JSON fields of each event (docs/watch.md)."""
    from memdir.integrations.watch import (
        FellBackToPolling,
        FolderBack,
        FolderMissing,
        Indexed,
        Linted,
        WatchFailed,
        Watching,
    )

    if isinstance(event, Watching):
        return {"folder": str(event.root), "backend": event.backend}
    if isinstance(event, FellBackToPolling):
        return {"reason": event.reason}
    if isinstance(event, Indexed):
        result = event.write.result
        return {
            "paths": list(event.paths),
            "changed": event.write.changed,
            "entries": len(result.entries),
            "lines": result.lines,
            "bytes": result.bytes,
            "left_out": len(result.left_out),
            "unreadable": len(event.write.unreadable),
            "refused": result.refused,
            "seconds": round(event.seconds, 4),
            "since_change": None if event.since_change is None else round(event.since_change, 4),
        }
    if isinstance(event, Linted):
        return {"summary": event.report.summary(), "seconds": round(event.seconds, 4)}
    if isinstance(event, FolderMissing | FolderBack):
        return {"folder": str(event.root)}
    if isinstance(event, WatchFailed):
        return {"stage": event.stage, "message": event.message}
    raise AssertionError(f"unknown watch event {event!r}")


def _index_line(event: Indexed) -> str:
    result = event.write.result
    if event.paths:
        shown = ", ".join(event.paths[:PATHS_SHOWN])
        more = len(event.paths) - PATHS_SHOWN
        cause = f" after {shown}" + (f" and {more:,} more" if more > 0 else "")
    else:
        cause = ""
    if result.refused is not None:
        return f"MEMORY.md not written{cause}: {result.refused}"
    verb = "updated" if event.write.changed else "unchanged"
    line = f"MEMORY.md {verb}{cause}: {result.size_note()}"
    if result.left_out:
        line += f", {len(result.left_out):,} left out to fit the caps"
    if event.write.unreadable:
        line += f"; {event.write.unreadable_note()}"
    return line + f" ({event.seconds * 1000:.0f} ms)"


def _lint_line(event: Linted) -> str:
    s = event.report.summary()
    if not event.report.findings:
        return f"lint: all checks passed ({plural(s['memories'], 'memory', 'memories')})"
    counts = f"{plural(s['errors'], 'error', 'errors')}, {plural(s['warnings'], 'warning', 'warnings')}"
    return f"lint: {counts}, {s['info']:,} info in {plural(s['files'], 'file', 'files')} (`memdir lint` shows them)"
