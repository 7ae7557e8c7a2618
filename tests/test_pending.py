"""The sessions the Stop hook stages for a later extraction: the hook says so once when nothing
extracts them, `memdir extract --pending` extracts every staged transcript and clears what it did,
and the list stays bounded (memdir/write/pending.py)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import invoke_memdir
from test_extract import LINT_RULE, SESSION, Api, _entry, _save, _write

from memdir.write import extract as extract_mod
from memdir.write.pending import PENDING_MAX, add_pending, read_pending


def _staged(folder: Path) -> list[str]:
    return [e["session_id"] for e in read_pending(folder / ".memdir" / "pending-extractions.jsonl")]


def _transcript(path: Path, session: str = SESSION, text: str = "Always run npm run lint before you commit.") -> Path:
    entries = [_entry("user", text, 1), _entry("assistant", [{"type": "text", "text": "Will do."}], 2)]
    return _write(path, [dict(e, sessionId=session) for e in entries])


def _stop(folder: Path, transcript: Path, session: str = SESSION) -> Any:
    payload = json.dumps({"session_id": session, "transcript_path": str(transcript), "cwd": str(folder)})
    result = invoke_memdir("--dir", str(folder), "hook", "stop", input=payload)
    assert result.exit_code == 0, result.output
    return result


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


# --- the Stop hook says it once -------------------------------------------------------------------


def test_without_a_key_the_stop_hook_tells_the_user_once(
    folder: Path, tmp_path: Path, no_spawn: list[list[str]]
) -> None:
    first = _stop(folder, _transcript(tmp_path / "a.jsonl"))
    message = json.loads(first.stdout)
    assert list(message) == ["systemMessage"]  # shown to the user; no `decision`, so the agent is not held
    assert "there is no ANTHROPIC_API_KEY" in message["systemMessage"]
    assert "`memdir extract --pending`" in message["systemMessage"]
    assert _stop(folder, tmp_path / "a.jsonl").stdout == ""  # the next reply of the same session
    assert _stop(folder, _transcript(tmp_path / "b.jsonl", "s-2"), "s-2").stdout == ""  # another, while one waits
    assert _staged(folder) == [SESSION, "s-2"] and no_spawn == []


def test_once_the_list_is_cleared_the_next_staged_session_tells_again(
    folder: Path, tmp_path: Path, no_spawn: list[list[str]], api: Callable[..., Api], monkeypatch: pytest.MonkeyPatch
) -> None:
    _stop(folder, _transcript(tmp_path / "a.jsonl"))
    api(_save(LINT_RULE))
    assert invoke_memdir("--dir", str(folder), "extract", "--pending", "--yes").exit_code == 0
    assert _staged(folder) == []
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    again = _stop(folder, _transcript(tmp_path / "b.jsonl", "s-2"), "s-2")
    assert "systemMessage" in json.loads(again.stdout)


def test_with_extraction_off_it_says_why(
    folder: Path, tmp_path: Path, no_spawn: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / ".memdir.toml").write_text("[extract]\non-stop = false\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    payload = json.dumps({"session_id": "s", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(folder)})
    result = invoke_memdir("--dir", str(folder), "hook", "stop", input=payload, cwd=folder)
    assert "`extract.on-stop` is off" in json.loads(result.stdout)["systemMessage"] and no_spawn == []


def test_with_a_key_the_extraction_starts_and_nothing_is_said(
    folder: Path, tmp_path: Path, no_spawn: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    result = _stop(folder, _transcript(tmp_path / "a.jsonl"))
    assert result.stdout == "" and len(no_spawn) == 1


# --- extract --pending -------------------------------------------------------------------------------


def test_extract_pending_extracts_every_staged_transcript_and_clears_what_it_did(
    folder: Path, tmp_path: Path, no_spawn: list[list[str]], api: Callable[..., Api], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    _stop(folder, _transcript(tmp_path / "a.jsonl"))
    _stop(folder, _transcript(tmp_path / "b.jsonl", "s-2", "The billing service deploys on Tuesdays."), "s-2")
    _stop(folder, tmp_path / "gone.jsonl", "s-3")  # its transcript was deleted since
    recorded = api(_save(LINT_RULE), _save())
    result = invoke_memdir("--dir", str(folder), "extract", "--pending", "--yes")
    assert result.exit_code == 0, result.output
    assert len(recorded.sent) == 2  # one call a readable transcript, none for the gone one
    assert (folder / "feedback_lint-before-commit.md").exists()
    assert f"{tmp_path / 'gone.jsonl'}: the transcript is gone; taken off the list" in result.stderr
    assert "0 sessions still staged" in result.stderr and _staged(folder) == []
    again = invoke_memdir("--dir", str(folder), "extract", "--pending", "--yes")
    assert again.exit_code == 0 and "No staged sessions to extract." in again.stderr and len(recorded.sent) == 2


def test_a_transcript_already_extracted_is_not_sent_again(
    folder: Path, tmp_path: Path, no_spawn: list[list[str]], api: Callable[..., Api]
) -> None:
    transcript = _transcript(tmp_path / "a.jsonl")
    recorded = api(_save(LINT_RULE))
    assert invoke_memdir("--dir", str(folder), "extract", str(transcript), "--yes").exit_code == 0
    add_pending(folder, {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(folder)})
    result = invoke_memdir("--dir", str(folder), "extract", "--pending", "--yes", "--format", "json")
    assert result.exit_code == 0, result.output
    [run] = json.loads(result.stdout)["runs"]
    assert run["status"] == "nothing-new" and len(recorded.sent) == 1 and _staged(folder) == []


def test_the_extraction_the_stop_hook_starts_clears_its_session(
    folder: Path, tmp_path: Path, no_spawn: list[list[str]], api: Callable[..., Api]
) -> None:
    transcript = _transcript(tmp_path / "a.jsonl")
    api(_save(LINT_RULE))
    _stop(folder, transcript)
    assert _staged(folder) == [SESSION]
    command = no_spawn[0]
    assert command[command.index("extract") + 1] == str(transcript)
    # What the hook started, run here: `memdir --dir F extract TRANSCRIPT --yes --format text`.
    assert invoke_memdir(*command[command.index("--dir") :]).exit_code == 0
    assert _staged(folder) == []


def test_a_throttled_or_failed_session_stays_staged(
    folder: Path, tmp_path: Path, no_spawn: list[list[str]], api: Callable[..., Api]
) -> None:
    transcript = _transcript(tmp_path / "a.jsonl")
    add_pending(folder, {"session_id": SESSION, "transcript_path": str(transcript)})
    api(_save(LINT_RULE))
    throttled = invoke_memdir("--dir", str(folder), "extract", "--pending", "--yes", "--every", "5")
    assert throttled.exit_code == 0 and "throttled" in throttled.stderr and _staged(folder) == [SESSION]
    api((500, {"type": "error", "error": {"type": "api_error", "message": "boom"}}))
    failed = invoke_memdir("--dir", str(folder), "extract", "--pending", "--yes")
    assert failed.exit_code == 1 and "boom" in failed.stderr and _staged(folder) == [SESSION]


def test_extract_pending_without_a_key(folder: Path, tmp_path: Path) -> None:
    assert "No staged sessions" in invoke_memdir("--dir", str(folder), "extract", "--pending").stderr
    add_pending(folder, {"session_id": SESSION, "transcript_path": str(_transcript(tmp_path / "a.jsonl"))})
    result = invoke_memdir("--dir", str(folder), "extract", "--pending")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "`memdir extract` needs an Anthropic API key in ANTHROPIC_API_KEY" in result.stderr  # no {command}
    assert _staged(folder) == [SESSION]


def test_pending_is_one_of_the_inputs(folder: Path, tmp_path: Path) -> None:
    both = invoke_memdir("--dir", str(folder), "extract", "--pending", str(tmp_path / "t.jsonl"))
    assert both.exit_code == 2 and "give one of TRANSCRIPT, --messages FILE, --hook or --pending" in both.stderr


# --- the list stays bounded ------------------------------------------------------------------------------


def test_the_list_never_grows_past_its_bound(folder: Path, tmp_path: Path) -> None:
    def stage(i: int, alive: bool = True) -> None:
        transcript = tmp_path / f"t-{i}.jsonl"
        if alive:
            transcript.touch()
        assert add_pending(folder, {"session_id": f"s-{i}", "transcript_path": str(transcript)}).added

    stage(0)
    stage(1, alive=False)  # deleted since: the first to go
    for i in range(2, PENDING_MAX + 1):
        stage(i)
    assert len(_staged(folder)) == PENDING_MAX and "s-1" not in _staged(folder) and _staged(folder)[0] == "s-0"
    for i in range(PENDING_MAX + 1, PENDING_MAX + 11):
        stage(i)
    sessions = _staged(folder)
    assert len(sessions) == PENDING_MAX  # then the oldest
    assert sessions[0] == "s-11" and sessions[-1] == f"s-{PENDING_MAX + 10}"
