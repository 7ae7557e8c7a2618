"""memdir's own logs stay bounded and whole: every log it appends to (the decision log, the recall log,
rejected.jsonl, MEMORY.md.history) is rotated past store.LOG_MAX_BYTES under the log's own lock, its
readers read both generations, and `rm --purge` cleans the old generation as well as the new."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

import pytest
from conftest import invoke_memdir

from memdir.core import store
from memdir.core.store import DECISION_LOG, STATE_DIR, append_lines, log_decisions, read_decisions

KEY = "sk-ant-api03-" + "Zq4Wn8Kd2Hs6Pf1T" * 6  # the shape of an Anthropic key; not a real one


def test_the_decision_log_rotates_and_both_generations_are_read(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "LOG_MAX_BYTES", 1000)  # some ten decisions a generation
    for n in range(30):
        log_decisions(folder, [{"command": "add", "decision": "written", "file": f"user_{n}.md", "pad": "x" * 40}])
    state = folder / STATE_DIR
    assert (state / DECISION_LOG).stat().st_size <= 1000
    assert (state / f"{DECISION_LOG}.1").stat().st_size <= 1000
    files = [entry["file"] for entry in read_decisions(folder)]
    assert files == [f"user_{n}.md" for n in range(30 - len(files), 30)]  # the latest, oldest first
    assert 10 < len(files) < 30  # two generations, not one and not the whole history


def test_one_entry_bigger_than_a_generation_is_written_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "LOG_MAX_BYTES", 10)
    log = tmp_path / "log.jsonl"
    append_lines(log, b"a line longer than ten bytes\n", rotate=True)
    append_lines(log, b"another long line\n", rotate=True)
    assert log.read_bytes() == b"another long line\n"
    assert log.with_name("log.jsonl.1").read_bytes() == b"a line longer than ten bytes\n"


def _rotated_by_someone_else_while_waiting(monkeypatch: pytest.MonkeyPatch, log: Path, then: bytes) -> None:
    """The next lock taken on a log first lets another writer rotate it and append `then` (as another
    process would between this writer's open and its flock)."""
    lock = store._lock_log
    done = False

    def racing(fd: int) -> bool:
        nonlocal done
        if not done:
            done = True
            log.replace(log.with_name(log.name + ".1"))
            log.write_bytes(then)
        return lock(fd)

    monkeypatch.setattr(store, "_lock_log", racing)


def test_an_append_that_waited_out_a_rotation_goes_to_the_new_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"old\n")
    _rotated_by_someone_else_while_waiting(monkeypatch, log, b"theirs\n")
    append_lines(log, b"mine\n")
    assert log.read_bytes() == b"theirs\nmine\n"  # not into the old generation, renamed under it
    assert log.with_name("log.jsonl.1").read_bytes() == b"old\n"


def test_two_writers_that_both_saw_a_full_log_rotate_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "LOG_MAX_BYTES", 100)
    log = tmp_path / "log.jsonl"
    full = b"".join(b"line %d of the full generation\n" % n for n in range(4))
    log.write_bytes(full)
    _rotated_by_someone_else_while_waiting(monkeypatch, log, b"theirs\n")
    append_lines(log, b"mine\n", rotate=True)
    # A second rotation would have put the one-line new log over the full old generation.
    assert log.with_name("log.jsonl.1").read_bytes() == full
    assert log.read_bytes() == b"theirs\nmine\n"


def test_the_index_history_rotates(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memdir.folder import MemoryDir

    monkeypatch.setattr(store, "LOG_MAX_BYTES", 600)
    memdir = MemoryDir(folder)
    for n in range(12):
        (folder / "MEMORY.md").write_text(f"- [hand-tuned {n}](user_{n}.md) — a line memdir will drop\n")
        memdir.write_index(drop_missing=True)  # the line links to no file: it goes to the history
    history = folder / STATE_DIR / "MEMORY.md.history"
    assert history.stat().st_size <= 600 and history.with_name("MEMORY.md.history.1").is_file()
    assert "hand-tuned 11" in history.read_text()


def test_rm_purge_cleans_the_old_generations_too(folder: Path) -> None:
    memory = folder / "reference_vault.md"
    memory.write_text(f"---\nname: vault\ndescription: Deploy token\ntype: reference\n---\nToken {KEY}.\n")
    state = folder / STATE_DIR
    state.mkdir()
    (state / f"{DECISION_LOG}.1").write_text(json.dumps({"command": "add", "reason": f"saw {KEY}"}) + "\n")
    (state / "MEMORY.md.history.1").write_text(f"- [vault](reference_vault.md) — Deploy token {KEY}\n")
    result = invoke_memdir("--dir", str(folder), "rm", "reference_vault.md", "--purge")
    assert result.exit_code == 0, result.output
    for path in state.rglob("*"):
        if path.is_file():
            assert KEY[20:44] not in path.read_text(errors="replace"), path
    assert "command" in (state / f"{DECISION_LOG}.1").read_text()  # masked, not dropped: history reads it


def test_an_append_during_a_purge_is_not_lost(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`rm --purge` rewrites the decision log: a writer appending between its reading and its
    replacing of the file must wait for the rewrite (the log's lock), not lose its line to it."""
    import fcntl

    from memdir.core import purge

    log = folder / STATE_DIR / DECISION_LOG
    log.parent.mkdir()
    log.write_text(json.dumps({"command": "add", "reason": f"saw {KEY}"}) + "\n")  # as an older memdir wrote it
    waited: list[bool] = []
    write = purge.atomic_write

    def another_writer_first(path: Path, data: bytes) -> None:
        if path == log:  # as another process would: append if the log is not locked
            fd = os.open(log, os.O_WRONLY | os.O_APPEND)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.write(fd, b'{"command": "theirs"}\n')
            except BlockingIOError:
                waited.append(True)
            finally:
                os.close(fd)
        write(path, data)

    monkeypatch.setattr(purge, "atomic_write", another_writer_first)
    purge.purge_traces(folder, "reference_vault.md", f"Token {KEY}.")
    if waited:  # it waited for the lock: its append comes now
        append_lines(log, b'{"command": "theirs"}\n')
    assert [entry["command"] for entry in read_decisions(folder)] == ["add", "theirs"]
    assert KEY not in log.read_text()


@pytest.mark.parametrize("reader", ["read_generations", "iter_generations"])
@pytest.mark.parametrize("opened_first", [1, 2])
def test_a_rotation_between_the_two_reads_loses_no_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str, opened_first: int
) -> None:
    log = tmp_path / "log.jsonl"
    log.with_name("log.jsonl.1").write_text('{"n": 1}\n')
    log.write_text('{"n": 2}\n')
    open_state_file = store.open_state_file
    opened = 0

    def rotating_meanwhile(path: Path, **kwargs: bool) -> BinaryIO:
        nonlocal opened
        handle = open_state_file(path, **kwargs)
        opened += 1
        if opened == opened_first:  # another writer rotates the log between the two generations' reads
            log.replace(log.with_name("log.jsonl.1"))
            log.write_text('{"n": 3}\n')
        return handle

    monkeypatch.setattr(store, "open_state_file", rotating_meanwhile)
    read: Callable[[Path], Iterable[dict[str, object]]] = getattr(store, reader)
    assert [entry["n"] for entry in read(log)] == [2, 3]  # not [1, 3] (2 left out) nor [2, 2, 3]


def _recording_opens(monkeypatch: pytest.MonkeyPatch) -> list[BinaryIO]:
    """Every state file store opens from now on, kept (so none is closed by being collected)."""
    opened: list[BinaryIO] = []
    open_state_file = store.open_state_file

    def recording(path: Path, **kwargs: bool) -> BinaryIO:
        handle = open_state_file(path, **kwargs)
        opened.append(handle)
        return handle

    monkeypatch.setattr(store, "open_state_file", recording)
    return opened


def test_a_generation_that_cannot_be_opened_leaves_the_other_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug: the newer generation, opened first, stayed open when opening the older one raised."""
    log = tmp_path / "log.jsonl"
    log.write_text('{"n": 2}\n')
    log.with_name("log.jsonl.1").mkdir()  # not a file: NotRegularFile, which iter_generations raises
    opened = _recording_opens(monkeypatch)
    with pytest.raises(store.NotRegularFile):
        list(store.iter_generations(log))
    assert len(opened) == 1 and opened[0].closed


def test_a_reader_that_stops_early_leaves_both_generations_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug: a reader that stopped in the older generation left the newer one open."""
    log = tmp_path / "log.jsonl"
    log.with_name("log.jsonl.1").write_text('{"n": 1}\n')
    log.write_text('{"n": 2}\n')
    opened = _recording_opens(monkeypatch)
    entries = store.iter_generations(log)
    assert next(entries) == {"n": 1}
    entries.close()
    assert len(opened) == 2 and all(handle.closed for handle in opened)


def _as_on_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """No flock, and no renaming or replacing a file that is open (PermissionError), as on Windows."""
    monkeypatch.setattr(store, "_lock_log", lambda fd: False)
    replace = os.replace

    def refusing_an_open_file(source: str | Path, target: str | Path) -> None:
        held = {os.path.realpath(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")}
        for path in (source, target):
            if os.path.realpath(path) in held:
                raise PermissionError(f"{path} is open")
        replace(source, target)

    monkeypatch.setattr(os, "replace", refusing_an_open_file)


needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to tell an open file")


@needs_proc
def test_a_log_rotates_where_there_is_no_flock_and_no_renaming_an_open_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "LOG_MAX_BYTES", 10)
    _as_on_windows(monkeypatch)
    log = tmp_path / "log.jsonl"
    append_lines(log, b"a line longer than ten bytes\n", rotate=True)
    append_lines(log, b"another long line\n", rotate=True)
    assert log.read_bytes() == b"another long line\n"
    assert log.with_name("log.jsonl.1").read_bytes() == b"a line longer than ten bytes\n"


@needs_proc
def test_a_reader_holding_the_log_open_where_renaming_it_fails_costs_no_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Windows a log that a reader has open (`memdir stats` streaming both generations) cannot be
    renamed: the line goes into the log as it is, which rotates at a later append."""
    monkeypatch.setattr(store, "LOG_MAX_BYTES", 10)
    _as_on_windows(monkeypatch)
    log = tmp_path / "log.jsonl"
    append_lines(log, b'{"n": 1, "pad": "past ten bytes"}\n', rotate=True)
    reading = store.iter_generations(log)
    assert next(reading) == {"n": 1, "pad": "past ten bytes"}  # the reader holds the log open
    append_lines(log, b'{"n": 2}\n', rotate=True)
    reading.close()
    assert [entry["n"] for entry in store.read_generations(log)] == [1, 2]
    append_lines(log, b'{"n": 3}\n', rotate=True)  # no reader now: it rotates
    assert log.read_bytes() == b'{"n": 3}\n'
    assert [entry["n"] for entry in store.read_generations(log)] == [1, 2, 3]


@needs_proc
def test_a_hook_log_held_open_elsewhere_is_rotated_later(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """rotate_log (the extract hook's output, which another process writes) leaves a log it cannot
    rename, open elsewhere on Windows, as it is: the hook goes on, the log rotates next time."""
    monkeypatch.setattr(store, "LOG_MAX_BYTES", 10)
    _as_on_windows(monkeypatch)
    log = tmp_path / "extract.log"
    log.write_bytes(b"a line longer than ten bytes\n")
    with log.open("rb"):
        store.rotate_log(log)
    assert log.read_bytes() == b"a line longer than ten bytes\n"
    store.rotate_log(log)
    assert not log.exists() and log.with_name("extract.log.1").exists()


@needs_proc
def test_a_purge_where_there_is_no_flock_replaces_no_open_log(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no lock to hold, the purge's rewrite does not keep the log open, which would make its
    replacing fail."""
    from memdir.core import purge

    log = folder / STATE_DIR / DECISION_LOG
    log.parent.mkdir()
    log.write_text(json.dumps({"command": "add", "reason": f"saw {KEY}"}) + "\n")
    _as_on_windows(monkeypatch)
    assert purge.purge_traces(folder, "reference_vault.md", f"Token {KEY}.") == [f"{STATE_DIR}/{DECISION_LOG}"]
    assert KEY not in log.read_text()
