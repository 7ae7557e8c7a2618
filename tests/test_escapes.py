"""Nothing memdir keeps of its own leaves the memory folder through a symlink, and no state file can
make a command wait. docs/reliability.md has the table ("Escapes").

Every place memdir keeps state, each made a symlink to a file or folder outside the memory folder
(in tmp_path), then the command that writes or reads it run; the outside target must be untouched:

- `.memdir/` itself (index, list, recall, stats: refused, exit 2; lint: finding S007)
- `.archive/` itself, and a folder inside it (rm, prune, history, stats: refused, exit 2)
- `.memdir/.gitignore` (written when missing, by every command that creates `.memdir/`)
- `.memdir/lock` (the folder lock: index refuses, exit 2)
- `.memdir/parse-cache` (never read through the link; rebuilt and the link replaced by a file)
- `.memdir/recall-index` (the same) and `.memdir/recall.jsonl` (recall answers, says it was not logged)
- `.memdir/MEMORY.md.prev` (the link replaced by a file) and `.memdir/MEMORY.md.history` (not appended;
  index warns)
- `.memdir/log.jsonl`, the decision log that prune, rm, add and extract append to (refused, exit 2)
- `.memdir/drafts/` (the draft of an edit that did not parse: refused, exit 2)
- `.memdir/extract-cursor.json` (extract refuses, exit 2), `.memdir/extract.lock` (taken over: the
  link is removed, never followed), `.memdir/extract-staged/` and `.memdir/staging/` (refused)
- `.memdir/pending-extractions.jsonl` and `.memdir/extract-hook.log` (the Stop hook notes it, exit 0)
- `.memdir/consolidate.lock` (consolidate refuses, exit 2)
- MEMORY.md itself, linked to a memory in the folder (refused wherever it points, exit 1; lint S007)

And a named pipe in place of each state file that the older tests (test_hostile.py) do not cover,
and of `.memdir/` and `.archive/` themselves: nothing blocks (each command runs in a subprocess with a
generous timeout, used only to fail the test).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MakeMemory, invoke_memdir, run_memdir

from memdir import MemoryDir
from memdir.core.errors import StateRefused

TIMEOUT = 60  # seconds: only there to fail a test that would hang; each command takes well under one


def _snapshot(path: Path) -> dict[str, bytes | None]:
    """What is at `path` (a file, or a folder and everything in it), byte for byte; {} when nothing."""
    if path.is_file():
        return {"": path.read_bytes()}
    if path.is_dir():
        return {p.relative_to(path).as_posix(): p.read_bytes() if p.is_file() else None for p in path.rglob("*")}
    return {}


@pytest.fixture
def setup(folder: Path, make_memory: MakeMemory) -> Path:
    """A folder with a memory, an expired one (for prune) and a MEMORY.md that `index` rewrites."""
    make_memory("user_fine.md", "Deploys go to kubernetes.", description="Prefers kubernetes")
    make_memory("project_old.md", description="Release freeze", expires="2026-01-01")
    (folder / "MEMORY.md").write_text("# Memory\n\n- [fine](user_fine.md) — an old line the rewrite replaces\n")
    (folder / ".memdir").mkdir()
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the memory folder, with a file in it."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_bytes(b"outside data\n")
    (path / "x.json").write_bytes(b'{"path": "/nowhere"}\n')
    return path


def _link(link: Path, target: Path) -> None:
    if link.is_dir() and not link.is_symlink():
        link.rmdir()
    else:
        link.unlink(missing_ok=True)
    link.symlink_to(target)


def _one_line(stderr: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("memdir: error: "), stderr
    assert "Traceback" not in stderr


# --- the state and archive folders themselves ---------------------------------------------------------


@pytest.mark.parametrize(
    "command", [["index"], ["index", "--check"], ["list"], ["recall", "kubernetes"], ["stats"], ["show", "fine"]]
)
def test_a_symlinked_state_folder_is_refused(setup: Path, outside: Path, command: list[str]) -> None:
    _link(setup / ".memdir", outside)
    before = _snapshot(outside)
    result = invoke_memdir("--dir", str(setup), *command)
    assert result.exit_code == 2, result.output
    _one_line(result.stderr)
    assert ".memdir" in result.stderr and "symlink" in result.stderr
    assert _snapshot(outside) == before


@pytest.mark.parametrize("command", [["index"], ["list"], ["init"]])
def test_a_state_folder_that_is_not_a_folder_is_refused(setup: Path, command: list[str]) -> None:
    (setup / ".memdir").rmdir()
    (setup / ".memdir").write_bytes(b"a file\n")
    result = invoke_memdir("--dir", str(setup), *command)
    assert result.exit_code == 2, result.output
    _one_line(result.stderr)
    assert ".memdir is not a folder" in result.stderr
    assert (setup / ".memdir").read_bytes() == b"a file\n"


def test_a_dangling_state_folder_link_creates_nothing_outside(setup: Path, tmp_path: Path) -> None:
    (setup / ".memdir").rmdir()
    (setup / ".memdir").symlink_to(tmp_path / "elsewhere")
    result = invoke_memdir("--dir", str(setup), "index")
    assert result.exit_code == 2
    _one_line(result.stderr)
    assert not (tmp_path / "elsewhere").exists()


def test_lint_names_a_symlinked_state_folder_and_touches_nothing(setup: Path, outside: Path) -> None:
    _link(setup / ".memdir", outside)
    before = _snapshot(outside)
    result = invoke_memdir("--dir", str(setup), "lint", "--format", "concise")
    assert result.exit_code == 1, result.output
    assert "S007" in result.stdout and ".memdir" in result.stdout
    assert _snapshot(outside) == before
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", [["rm", "fine"], ["prune"], ["history", "fine"], ["stats"]])
def test_a_symlinked_archive_is_refused(setup: Path, outside: Path, command: list[str]) -> None:
    (setup / ".archive").symlink_to(outside)
    before, fine = _snapshot(outside), (setup / "user_fine.md").read_bytes()
    result = invoke_memdir("--dir", str(setup), *command)
    assert result.exit_code == 2, result.output
    _one_line(result.stderr)
    assert ".archive" in result.stderr and "symlink" in result.stderr
    assert _snapshot(outside) == before
    assert (setup / "user_fine.md").read_bytes() == fine and (setup / "project_old.md").exists()


def test_an_archive_that_is_not_a_folder_is_refused(setup: Path) -> None:
    (setup / ".archive").write_bytes(b"a file\n")
    result = invoke_memdir("--dir", str(setup), "prune")
    assert result.exit_code == 2
    _one_line(result.stderr)
    assert ".archive is not a folder" in result.stderr
    assert (setup / "project_old.md").exists()


def test_a_symlinked_folder_inside_the_archive_is_refused(setup: Path, outside: Path, make_memory: MakeMemory) -> None:
    make_memory("team/user_shared.md", description="Shared")
    (setup / ".archive").mkdir()
    (setup / ".archive" / "team").symlink_to(outside)
    before = _snapshot(outside)
    result = invoke_memdir("--dir", str(setup), "rm", "team/user_shared.md")
    assert result.exit_code == 2, result.output
    _one_line(result.stderr)
    assert "team" in result.stderr and "symlink" in result.stderr
    assert _snapshot(outside) == before and (setup / "team" / "user_shared.md").exists()


def test_lint_names_a_symlinked_or_misplaced_archive(setup: Path, outside: Path) -> None:
    (setup / ".archive").symlink_to(outside)
    result = invoke_memdir("--dir", str(setup), "lint", "--select", "S007", "--format", "concise")
    assert result.exit_code == 1 and ".archive" in result.stdout and "S007" in result.stdout
    (setup / ".archive").unlink()
    (setup / ".archive").write_bytes(b"")
    result = invoke_memdir("--dir", str(setup), "lint", "--select", "S007", "--format", "concise")
    assert result.exit_code == 1 and ".archive" in result.stdout and "not a folder" in result.stdout


# --- files of .memdir/ --------------------------------------------------------------------------------


@pytest.mark.parametrize("exists", [True, False], ids=["target", "dangling"])
def test_a_symlinked_gitignore_is_not_written_through(folder: Path, tmp_path: Path, exists: bool) -> None:
    target = tmp_path / "outside-ignore"
    if exists:
        target.write_bytes(b"mine\n")
    (folder / ".memdir").mkdir()
    (folder / ".memdir" / ".gitignore").symlink_to(target)
    result = invoke_memdir("--dir", str(folder), "index")
    assert result.exit_code == 0, result.output
    assert _snapshot(target) == ({"": b"mine\n"} if exists else {})


def test_a_symlinked_lock_is_refused(setup: Path, outside: Path) -> None:
    _link(setup / ".memdir" / "lock", outside / "secret.txt")
    result = invoke_memdir("--dir", str(setup), "index")
    assert result.exit_code == 2, result.output
    _one_line(result.stderr)
    assert "lock" in result.stderr and "symlink" in result.stderr
    assert (outside / "secret.txt").read_bytes() == b"outside data\n"


def test_a_dangling_lock_link_creates_nothing(setup: Path, tmp_path: Path) -> None:
    (setup / ".memdir" / "lock").symlink_to(tmp_path / "created-lock")
    result = invoke_memdir("--dir", str(setup), "add", "user", "new", "--description", "New one", "--body", "Text.")
    assert result.exit_code == 2, result.output
    _one_line(result.stderr)
    assert not (tmp_path / "created-lock").exists() and not (setup / "user_new.md").exists()


def test_a_symlinked_parse_cache_is_neither_read_nor_written(setup: Path, outside: Path) -> None:
    from memdir.core.cache import ParseCache
    from memdir.core.store import STATE_DIR

    for memory in setup.glob("*.md"):  # old enough for the cache to trust (a file just written is not)
        os.utime(memory, (1_700_000_000, 1_700_000_000))
    assert invoke_memdir("--dir", str(setup), "index").exit_code == 0
    cache = setup / STATE_DIR / "parse-cache"
    forged = outside / "parse-cache"
    os.replace(cache, forged)  # a real cache, which would be believed if it were read
    cache.symlink_to(forged)
    before = _snapshot(outside)
    key = os.stat(setup / "user_fine.md")
    assert ParseCache.load(setup / STATE_DIR).row("user_fine.md", (key.st_size, key.st_mtime_ns,
                                                                   key.st_ctime_ns, key.st_ino)) is None  # fmt: skip
    (setup / "user_fine.md").write_text((setup / "user_fine.md").read_text() + "More.\n")
    result = invoke_memdir("--dir", str(setup), "list")
    assert result.exit_code == 0, result.output
    assert _snapshot(outside) == before
    assert not cache.is_symlink()  # replaced by a cache of its own


def test_a_symlinked_recall_index_and_log_are_not_used(setup: Path, outside: Path) -> None:
    _link(setup / ".memdir" / "recall-index", outside / "secret.txt")
    _link(setup / ".memdir" / "recall.jsonl", outside / "x.json")
    before = _snapshot(outside)
    result = invoke_memdir("--dir", str(setup), "recall", "kubernetes deploys")  # one word alone never passes the gate
    assert result.exit_code == 0, result.output
    assert "user_fine.md" in result.stdout
    assert "recall not logged" in result.stderr and "symlink" in result.stderr
    assert _snapshot(outside) == before
    result = invoke_memdir("--dir", str(setup), "stats")  # reads the recall log: as no log
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert _snapshot(outside) == before


def test_a_dangling_recall_log_link_creates_nothing(setup: Path, tmp_path: Path) -> None:
    (setup / ".memdir" / "recall.jsonl").symlink_to(tmp_path / "created.jsonl")
    result = invoke_memdir("--dir", str(setup), "recall", "kubernetes")
    assert result.exit_code == 0 and "recall not logged" in result.stderr
    assert not (tmp_path / "created.jsonl").exists()


def test_symlinked_index_history_files_are_not_written_through(setup: Path, outside: Path) -> None:
    _link(setup / ".memdir" / "MEMORY.md.prev", outside / "secret.txt")
    _link(setup / ".memdir" / "MEMORY.md.history", outside / "x.json")
    before = _snapshot(outside)
    previous = (setup / "MEMORY.md").read_text()
    result = invoke_memdir("--dir", str(setup), "index")
    assert result.exit_code == 0, result.output
    assert "MEMORY.md.history" in result.stderr and "symlink" in result.stderr  # the warning names it
    assert "an old line" not in (setup / "MEMORY.md").read_text()  # the index was still rewritten
    assert _snapshot(outside) == before
    prev = setup / ".memdir" / "MEMORY.md.prev"
    assert not prev.is_symlink() and prev.read_text() == previous  # the link replaced, not followed


def test_a_symlinked_decision_log_is_refused(setup: Path, outside: Path) -> None:
    _link(setup / ".memdir" / "log.jsonl", outside / "x.json")
    before = _snapshot(outside)
    result = invoke_memdir("--dir", str(setup), "prune")  # the move is made (as for a pipe there), not logged
    assert result.exit_code == 2, result.output
    assert "log.jsonl" in result.stderr and "symlink" in result.stderr and "Traceback" not in result.output
    assert _snapshot(outside) == before
    result = invoke_memdir("--dir", str(setup), "history", "fine")  # reads it: as no log
    assert result.exit_code == 0, result.output
    assert _snapshot(outside) == before


def test_a_symlinked_drafts_folder_is_refused(setup: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (setup / ".memdir" / "drafts").symlink_to(outside)
    before, fine = _snapshot(outside), (setup / "user_fine.md").read_bytes()
    monkeypatch.setenv("EDITOR", "sh -c 'printf broken > \"$0\"'")
    result = invoke_memdir("--dir", str(setup), "edit", "fine")
    assert result.exit_code == 2, result.output
    _one_line(result.stderr)
    assert "drafts" in result.stderr and "symlink" in result.stderr
    assert _snapshot(outside) == before and (setup / "user_fine.md").read_bytes() == fine
    with pytest.raises(StateRefused):
        MemoryDir(setup).save_draft("user_fine.md", "text")
    assert _snapshot(outside) == before


def _empty_transcript(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"  # nothing new in it: extract never reaches the API
    path.write_text("")
    return path


def test_a_symlinked_extract_cursor_is_refused(
    setup: Path, outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-never-sent")
    (outside / "x.json").write_text(json.dumps({"s": {"count": 0}}))
    _link(setup / ".memdir" / "extract-cursor.json", outside / "x.json")
    before = _snapshot(outside)
    result = invoke_memdir("--dir", str(setup), "extract", str(_empty_transcript(tmp_path)), "--yes")
    assert result.exit_code == 2, result.output
    _one_line(result.stderr)
    assert "extract-cursor.json" in result.stderr and "symlink" in result.stderr
    assert _snapshot(outside) == before


def test_a_symlinked_extract_lock_is_taken_over_not_followed(
    setup: Path, outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-never-sent")
    (outside / "x.json").write_text(json.dumps({"pid": os.getpid()}))  # a live pid: it would hold the lock
    _link(setup / ".memdir" / "extract.lock", outside / "x.json")
    before = _snapshot(outside)
    result = invoke_memdir("--dir", str(setup), "extract", str(_empty_transcript(tmp_path)), "--yes")
    assert result.exit_code == 0, result.output
    assert "staged" not in result.stdout
    assert _snapshot(outside) == before


def test_symlinked_extract_folders_are_refused(setup: Path, outside: Path) -> None:
    from memdir import MemoryDir, MemoryType, NewMemory
    from memdir.write import extract

    (setup / ".memdir" / "extract-staged").symlink_to(outside)
    (setup / ".memdir" / "staging").symlink_to(outside)
    before = _snapshot(outside)
    with pytest.raises(StateRefused, match="extract-staged"):
        extract.take_staged(setup)  # which would remove what it read there
    with pytest.raises(StateRefused, match="extract-staged"):
        extract.stage(setup, extract.Request(Path("t.jsonl")))
    with pytest.raises(StateRefused, match="staging"):  # where every commit stages its files
        MemoryDir(setup).add(NewMemory(MemoryType.USER, "new", "A new memory"))
    assert _snapshot(outside) == before and not (setup / "user_new.md").exists()


def test_symlinked_stop_hook_files_are_not_written_through(
    setup: Path, outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _link(setup / ".memdir" / "pending-extractions.jsonl", outside / "x.json")
    _link(setup / ".memdir" / "extract-hook.log", outside / "secret.txt")
    before = _snapshot(outside)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-never-sent")
    payload = {"session_id": "s1", "transcript_path": str(_empty_transcript(tmp_path)), "cwd": str(tmp_path)}
    result = invoke_memdir("--dir", str(setup), "hook", "stop", input=json.dumps(payload))
    assert result.exit_code == 0  # a hook never fails the session; it says what went wrong
    assert "pending-extractions.jsonl" in result.stderr and "Traceback" not in result.output
    assert _snapshot(outside) == before
    (setup / ".memdir" / "pending-extractions.jsonl").unlink()  # now only the hook's own log is a link
    result = invoke_memdir("--dir", str(setup), "hook", "stop", input=json.dumps(payload))
    assert result.exit_code == 0 and "extract-hook.log" in result.stderr
    assert _snapshot(outside) == before


def test_a_symlinked_consolidate_lock_is_refused(setup: Path, outside: Path) -> None:
    _link(setup / ".memdir" / "consolidate.lock", outside / "secret.txt")
    result = invoke_memdir("--dir", str(setup), "consolidate", "--yes")
    assert result.exit_code == 2, result.output
    _one_line(result.stderr)
    assert "consolidate.lock" in result.stderr and "symlink" in result.stderr
    assert (outside / "secret.txt").read_bytes() == b"outside data\n"


# --- MEMORY.md --------------------------------------------------------------------------------------


def test_an_index_linked_to_a_memory_in_the_folder_is_refused(setup: Path) -> None:
    memory = (setup / "user_fine.md").read_bytes()
    (setup / "MEMORY.md").unlink()
    (setup / "MEMORY.md").symlink_to("user_fine.md")
    for command in (["index"], ["add", "user", "new", "--description", "New one", "--body", "Text."]):
        result = invoke_memdir("--dir", str(setup), *command)
        assert result.exit_code == 1, result.output
        _one_line(result.stderr)
        assert "MEMORY.md is a symlink" in result.stderr and "regular file" in result.stderr
        assert (setup / "user_fine.md").read_bytes() == memory
    with pytest.raises(Exception, match="symlink"):
        MemoryDir(setup).read_index()
    result = invoke_memdir("--dir", str(setup), "lint", "--format", "concise")
    assert result.exit_code == 1 and "S007" in result.stdout and "MEMORY.md" in result.stdout
    assert "F003" not in result.stdout  # named once, by S007


# --- named pipes ------------------------------------------------------------------------------------

Completed = subprocess.CompletedProcess[str]
fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")


def _run(folder: Path, *args: str, input: str = "", env: dict[str, str] | None = None) -> Completed:
    """`python -m memdir --dir FOLDER ARGS` in a process of its own: a hang times out and fails."""
    environment = {**os.environ, **(env or {})}
    child = run_memdir("--dir", str(folder), *args, input=input, timeout=TIMEOUT, env=environment)
    assert "Traceback" not in child.stderr and "internal error" not in child.stderr, child.stderr
    return child


@fifo
@pytest.mark.parametrize(("name", "command"), [(".memdir", ["index"]), (".archive", ["prune"])])
def test_a_pipe_in_place_of_a_state_folder_is_refused(setup: Path, name: str, command: list[str]) -> None:
    path = setup / name
    if path.is_dir():
        path.rmdir()
    os.mkfifo(path)
    child = _run(setup, *command)
    assert child.returncode == 2 and f"{name} is not a folder" in child.stderr, child.stderr


@fifo
def test_a_pipe_in_place_of_the_previous_index_is_replaced(setup: Path) -> None:
    os.mkfifo(setup / ".memdir" / "MEMORY.md.prev")
    child = _run(setup, "index")
    assert child.returncode == 0, child.stderr
    assert (setup / ".memdir" / "MEMORY.md.prev").is_file()


@fifo
@pytest.mark.parametrize("name", ["extract-cursor.json", "extract.lock"])
def test_a_pipe_in_place_of_an_extract_file_never_blocks(setup: Path, tmp_path: Path, name: str) -> None:
    os.mkfifo(setup / ".memdir" / name)
    child = _run(setup, "extract", str(_empty_transcript(tmp_path)), "--yes", env={"ANTHROPIC_API_KEY": "never-sent"})
    if name == "extract.lock":  # not a lock anyone holds: taken over
        assert child.returncode == 0, child.stderr
    else:
        assert child.returncode == 2 and "not a regular file" in child.stderr and name in child.stderr


@fifo
def test_a_pipe_in_place_of_a_staged_request_never_blocks(setup: Path) -> None:
    staged = setup / ".memdir" / "extract-staged"
    staged.mkdir()
    os.mkfifo(staged / "0001.json")
    code = (
        "import sys, pathlib; from memdir.write import extract; print(extract.take_staged(pathlib.Path(sys.argv[1])))"
    )
    child = subprocess.run([sys.executable, "-c", code, str(setup)], capture_output=True, text=True, timeout=TIMEOUT)
    assert child.returncode == 0 and child.stdout.strip() == "[]", child.stderr


@fifo
@pytest.mark.parametrize("name", ["pending-extractions.jsonl", "extract-hook.log"])
def test_a_pipe_in_place_of_a_stop_hook_file_never_blocks(setup: Path, tmp_path: Path, name: str) -> None:
    os.mkfifo(setup / ".memdir" / name)
    payload = {"session_id": "s1", "transcript_path": str(_empty_transcript(tmp_path)), "cwd": str(tmp_path)}
    child = _run(setup, "hook", "stop", input=json.dumps(payload), env={"ANTHROPIC_API_KEY": "never-sent"})
    assert child.returncode == 0 and name in child.stderr, child.stderr


@fifo
def test_a_pipe_in_place_of_the_consolidate_lock_is_refused(setup: Path) -> None:
    os.mkfifo(setup / ".memdir" / "consolidate.lock")
    child = _run(setup, "consolidate", "--yes")
    assert child.returncode == 2 and "not a regular file" in child.stderr and "consolidate.lock" in child.stderr
