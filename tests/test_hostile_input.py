"""Hostile input from outside the memory folder: a transcript path that is a named pipe or a device,
JSON nested thousands deep on a hook's stdin or in a settings file, a settings file that is a pipe.
Each is refused in one line, at once; a hook still exits 0 and still does its work; a stuck
extraction does not hold up the next one (memdir/core/inputs.py, memdir/write/extract.py's lock)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import MakeMemory, invoke_memdir
from test_extract import LINT_RULE, SESSION, Api, _entry, _save, _write

from memdir.core.inputs import MAX_JSON_DEPTH, JsonTooDeep, NotRegularInput, open_regular, parse_json
from memdir.write import extract as extract_mod
from memdir.write.pending import read_pending

POSIX_PIPES = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")


def _deep(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def _memdir(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """memdir in a process of its own: a hang is a timeout (the process is killed), not a stuck test run."""
    env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    return subprocess.run(
        [sys.executable, "-m", "memdir", *args], capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL, env=env,
    )  # fmt: skip


# --- JSON nested too deep ---------------------------------------------------------------------------


def test_json_within_the_depth_bound_parses_and_deeper_is_a_value_error() -> None:
    assert parse_json(_deep(MAX_JSON_DEPTH - 1))["a"]
    for levels in (MAX_JSON_DEPTH + 1, 5_000, 200_000):  # json.loads alone: RecursionError past ~1,000
        with pytest.raises(JsonTooDeep, match=f"deeper than {MAX_JSON_DEPTH} levels"):
            parse_json(_deep(levels))
    with pytest.raises(ValueError):
        parse_json(b"[" * 100_000 + b"]" * 100_000)
    # Brackets inside strings are not nesting.
    assert parse_json(json.dumps({"text": "[" * 10_000})) == {"text": "[" * 10_000}


@pytest.mark.parametrize("event", ["session-start", "user-prompt-submit", "stop"])
def test_a_hook_given_deeply_nested_json_goes_on_without_it(folder: Path, make_memory: MakeMemory, event: str) -> None:
    """It was `internal error: RecursionError`, and session-start then gave the session no context."""
    make_memory("feedback_lint.md", description="Run npm run lint before every commit")
    for payload in (_deep(5_000), "[" * 100_000 + "]" * 100_000):
        result = invoke_memdir("--dir", str(folder), "hook", event, input=payload)
        assert result.exit_code == 0 and "internal error" not in result.stderr, result.stderr
        assert f"hook input is JSON nested deeper than {MAX_JSON_DEPTH} levels; going on without it" in result.stderr
        if event == "session-start":
            context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
            assert "Run npm run lint before every commit" in context


def test_a_hook_reads_no_more_of_its_stdin_than_its_bound(
    folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memdir hook session-start < /dev/zero` read until memory ran out."""
    from memdir.integrations import claude_runtime

    make_memory("feedback_lint.md", description="Run npm run lint before every commit")
    monkeypatch.setattr(claude_runtime, "HOOK_INPUT_LIMIT", 1_000)
    result = invoke_memdir("--dir", str(folder), "hook", "session-start", input=json.dumps({"x": "y" * 2_000}))
    assert result.exit_code == 0 and "hook input is over 1,000 bytes; going on without it" in result.stderr
    assert "Run npm run lint" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("levels", [500, 5_000])  # 500: json.loads parses it, copying it back out did not
def test_hooks_install_refuses_a_settings_file_nested_too_deep(tmp_path: Path, levels: int) -> None:
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(_deep(levels))
    result = invoke_memdir("hooks", "install", "--scope", "local", "--project", str(tmp_path))
    assert result.exit_code == 2 and "internal error" not in result.stderr
    assert f"is not valid JSON (nested deeper than {MAX_JSON_DEPTH} levels); memdir did not change it" in result.stderr
    assert settings.read_text() == _deep(levels)


def test_a_memdir_toml_nested_too_deep_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / ".memdir.toml").write_text("a = " + "[" * 5_000 + "]" * 5_000 + "\n")
    result = invoke_memdir("where", cwd=tmp_path)
    assert result.exit_code == 2 and "internal error" not in result.stderr
    assert "invalid TOML: arrays or tables nested too deep" in result.stderr


def test_a_transcript_line_nested_too_deep_is_a_broken_line(tmp_path: Path) -> None:
    from memdir.write.transcripts import read_transcript

    path = _write(tmp_path / "t.jsonl", [_entry("user", "We deploy from main.", 1), "[" * 5_000 + "]" * 5_000])
    session = read_transcript(path)
    assert [m.text for m in session.messages] == ["We deploy from main."] and session.broken_lines == 1


def test_a_messages_file_nested_too_deep_is_not_json(folder: Path, tmp_path: Path) -> None:
    from memdir.write.transcripts import ExtractError, read_messages

    (tmp_path / "m.json").write_text("[" * 5_000 + "]" * 5_000)
    with pytest.raises(ExtractError, match=f"is not JSON: nested deeper than {MAX_JSON_DEPTH} levels"):
        read_messages(tmp_path / "m.json")


def test_a_log_line_nested_too_deep_is_skipped(folder: Path) -> None:
    """The Stop hook reads the staged sessions' list on every reply; a deep line in it crashed it."""
    state = folder / ".memdir"
    state.mkdir()
    good = {"session_id": "s-1", "transcript_path": "/t.jsonl"}
    (state / "pending-extractions.jsonl").write_text(_deep(5_000) + "\n" + json.dumps(good) + "\n")
    assert read_pending(state / "pending-extractions.jsonl") == [good]


# --- files that are not regular files ----------------------------------------------------------------


@POSIX_PIPES
def test_open_regular_names_what_stands_there_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link").symlink_to(tmp_path / "pipe")
    for path, kind in ((tmp_path / "pipe", "a named pipe"), (tmp_path / "link", "a named pipe"),
                       (Path("/dev/zero"), "a character device"), (tmp_path, "a folder")):  # fmt: skip
        with pytest.raises(NotRegularInput, match=f"^{kind}, not a regular file: "):
            open_regular(path)
    (tmp_path / "file").write_text("text")
    handle, size = open_regular(tmp_path / "file")
    with handle:
        assert (handle.read(), size) == (b"text", 4)


@POSIX_PIPES
@pytest.mark.parametrize("scope", ["local", "user"])
def test_hooks_install_refuses_a_settings_file_that_is_a_named_pipe(tmp_path: Path, scope: str) -> None:
    """`hooks install` waited on the pipe forever."""
    settings = (tmp_path / ".claude" / "settings.local.json") if scope == "local" else (
        Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    )  # fmt: skip
    settings.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(settings)
    for command in ("install", "uninstall"):
        done = _memdir("hooks", command, "--scope", scope, "--project", str(tmp_path))
        assert done.returncode == 2, done.stderr
        assert f"{settings} is a named pipe, not a regular file; memdir did not change it" in done.stderr


@POSIX_PIPES
def test_hooks_install_ignores_claude_codes_plugin_list_when_it_is_a_named_pipe(tmp_path: Path) -> None:
    plugins = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "plugins"
    plugins.mkdir(parents=True)
    os.mkfifo(plugins / "installed_plugins.json")
    done = _memdir("hooks", "install", "--scope", "local", "--project", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".claude" / "settings.local.json").is_file()


# --- the Stop hook's transcript_path -------------------------------------------------------------------


@pytest.fixture
def no_spawn(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Detached extractions the Stop hook would start, recorded instead of started."""
    started: list[list[str]] = []

    class Popen:
        def __init__(self, command: list[str], **kwargs: Any) -> None:
            started.append(command)

    monkeypatch.setattr(subprocess, "Popen", Popen)
    return started


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Api]:
    def install(*replies: Any) -> Api:
        recorded = Api(*replies)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setattr(extract_mod, "make_client", lambda: recorded.client())
        return recorded

    return install


def _stop(folder: Path, transcript: Path | str, session: str = SESSION) -> Any:
    payload = json.dumps({"session_id": session, "transcript_path": str(transcript), "cwd": str(folder)})
    result = invoke_memdir("--dir", str(folder), "hook", "stop", input=payload)
    assert result.exit_code == 0 and "internal error" not in result.stderr, result.output
    return result


def _transcript(path: Path) -> Path:
    entries = [_entry("user", "Always run npm run lint before you commit.", 1),
               _entry("assistant", [{"type": "text", "text": "Will do."}], 2)]  # fmt: skip
    return _write(path, entries)


def _staged(folder: Path) -> list[str]:
    return [e["session_id"] for e in read_pending(folder / ".memdir" / "pending-extractions.jsonl")]


@POSIX_PIPES
@pytest.mark.parametrize("kind", ["named pipe", "device", "folder"])
def test_the_stop_hook_stages_and_starts_nothing_for_a_transcript_that_is_not_a_file(
    folder: Path, tmp_path: Path, no_spawn: list[list[str]], api: Callable[..., Api], kind: str
) -> None:
    """A named pipe hung the extraction it started, forever; /dev/zero grew it until the OOM killer."""
    api()
    if kind == "named pipe":
        os.mkfifo(tmp_path / "t.jsonl")
        transcript, said = tmp_path / "t.jsonl", "a named pipe"
    elif kind == "device":
        transcript, said = Path("/dev/zero"), "a character device"
    else:
        transcript, said = tmp_path, "a folder"
    result = _stop(folder, transcript)
    assert f"transcript_path {transcript} is {said}, not a regular file; nothing recorded" in result.stderr
    assert no_spawn == [] and _staged(folder) == []


@POSIX_PIPES
def test_an_extraction_of_a_named_pipe_ends_at_once_and_the_next_stop_extracts(
    folder: Path, tmp_path: Path, api: Callable[..., Api], request: pytest.FixtureRequest
) -> None:
    """The extraction the Stop hook started on a pipe took the lock and waited forever; every later
    Stop was staged behind it, so extraction stopped for good. Here the command the hook would have
    started runs as a process (a hang is a timeout), then a later Stop's extraction writes."""
    os.mkfifo(tmp_path / "pipe.jsonl")
    done = _memdir("--dir", str(folder), "extract", str(tmp_path / "pipe.jsonl"), "--yes", "--format", "text")
    assert done.returncode == 1
    assert "is a named pipe, not a regular file; memdir reads only regular files" in done.stderr
    assert not (folder / ".memdir" / extract_mod.LOCK_FILE).exists()
    no_spawn = request.getfixturevalue("no_spawn")  # from here on: processes above were real
    api(_save(LINT_RULE))
    _stop(folder, _transcript(tmp_path / "real.jsonl"))
    command = no_spawn[0]
    result = invoke_memdir(*command[command.index("--dir") :])
    assert result.exit_code == 0 and "staged" not in result.output, result.output
    assert (folder / "feedback_lint-before-commit.md").is_file()


@POSIX_PIPES
def test_import_llm_of_notes_that_are_a_named_pipe_ends_at_once(folder: Path, tmp_path: Path) -> None:
    """`memdir import --llm PIPE` (notes kept by hand, read by the extractor) waited forever."""
    os.mkfifo(tmp_path / "notes.md")
    done = _memdir("--dir", str(folder), "import", "--llm", str(tmp_path / "notes.md"), "--yes")
    assert done.returncode == 2 and "internal error" not in done.stderr
    assert "notes.md is a named pipe, not a regular file; memdir reads notes only from regular files" in done.stderr


def test_an_extraction_of_a_device_reads_nothing_of_it(folder: Path) -> None:
    """`memdir extract /dev/zero` read until memory ran out. The child's address space is capped so
    that a reader without a bound fails here with MemoryError rather than take the machine's memory."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    done = subprocess.run(
        [sys.executable, "-m", "memdir", "--dir", str(folder), "extract", "/dev/zero", "--yes"],
        capture_output=True, text=True, timeout=60, preexec_fn=cap, env={**os.environ, "ANTHROPIC_API_KEY": "k"},
    )  # fmt: skip
    assert done.returncode == 1 and "internal error" not in done.stderr, done.stderr
    assert "transcript /dev/zero is a character device, not a regular file" in done.stderr


def test_a_transcript_is_read_only_from_its_tail_and_a_line_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole transcript was read into memory (300 MB: 600 MB of memory), then split again."""
    from memdir.write import transcripts

    monkeypatch.setattr(transcripts, "MAX_TRANSCRIPT_BYTES", 50_000)
    monkeypatch.setattr(transcripts, "MAX_LINE_BYTES", 10_000)
    entries = [_entry("user", f"message {n} " + "x" * 900, n) for n in range(200)]  # ~1 KB a line
    path = _write(tmp_path / "t.jsonl", [*entries, _entry("user", "y" * 20_000, 200), _entry("user", "last", 201)])
    session = transcripts.read_transcript(path)
    texts = [m.text for m in session.messages]
    assert texts[-1] == "last" and session.broken_lines == 1  # the line over MAX_LINE_BYTES
    assert 0 < len(texts) < 60 and texts[0].startswith("message ")  # the newest whole lines only
    assert session.skipped_bytes == path.stat().st_size - sum(len(m) for m in _lines_from(path, texts[0]))


def _lines_from(path: Path, first: str) -> list[bytes]:
    """The file's lines from the one holding message text `first` on."""
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if json.loads(line)["message"]["content"] == first)
    return lines[at:]


# --- a stuck extraction ----------------------------------------------------------------------------------


def _hold_lock(folder: Path, pid: int, silent_for: float) -> Path:
    """An extraction lock held by `pid`, last touched `silent_for` seconds ago."""
    lock = folder / ".memdir" / extract_mod.LOCK_FILE
    lock.parent.mkdir(exist_ok=True)
    lock.write_text(json.dumps({"pid": pid, "started": "2026-11-21T10:00:00+00:00"}) + "\n")
    then = time.time() - silent_for
    os.utime(lock, (then, then))
    return lock


def test_a_later_stop_extracts_once_a_stuck_extraction_goes_silent(
    folder: Path, tmp_path: Path, api: Callable[..., Api], request: pytest.FixtureRequest
) -> None:
    """A holder that never ends (a reader stuck on a dead mount) is alive, so only its silence can
    tell: a lock not touched for LOCK_STALE_SECONDS is taken over, and the requests staged behind
    it are run. That is soon: a holder silent for 20 minutes holds up no one (it was an hour). The
    stuck holder here is a real process that never ends."""
    stuck = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    no_spawn = request.getfixturevalue("no_spawn")  # the Stop hook's extraction: recorded, run below
    try:
        lock = _hold_lock(folder, stuck.pid, silent_for=1)  # busy: a later Stop is staged behind it
        api(_save(LINT_RULE))
        _stop(folder, _transcript(tmp_path / "a.jsonl"))
        command = no_spawn[0][no_spawn[0].index("--dir") :]
        staged = invoke_memdir(*command)
        assert staged.exit_code == 0 and "staged this one for it to run next" in staged.output
        _hold_lock(folder, stuck.pid, silent_for=20 * 60)  # silent since
        api(_save(LINT_RULE))
        result = invoke_memdir(*command)
        assert result.exit_code == 0 and "staged" not in result.output, result.output
        assert (folder / "feedback_lint-before-commit.md").is_file() and not lock.exists()
    finally:
        stuck.kill()
        stuck.wait()


def test_a_running_extraction_keeps_its_lock_fresh(folder: Path, tmp_path: Path, api: Callable[..., Api]) -> None:
    """A long run touches its lock before each step, so a slow API call does not make it stale."""
    from memdir import MemoryDir

    assert extract_mod.try_lock(folder)
    try:
        _hold_lock(folder, os.getpid(), silent_for=extract_mod.LOCK_STALE_SECONDS + 60)
        assert extract_mod.lock_holder(folder) is None  # silent that long: stale
        api(_save(LINT_RULE))
        extractor = extract_mod.Extractor(MemoryDir(folder))
        assert extractor.run_one(extractor.request(_transcript(tmp_path / "a.jsonl"))).status == "written"
        assert extract_mod.lock_holder(folder) == os.getpid()
    finally:
        extract_mod.release_lock(folder)
