"""`memdir where` lists every folder memdir considered, with its memories, the one in use and the one
Claude Code loads; `init` says in one line when memories are elsewhere (memdir/core/candidates.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import invoke_memdir

from memdir.core.candidates import count_memories, survey
from memdir.core.claude_code import sanitise_project_path
from memdir.core.config import load_config

MEMORY = "---\nname: {name}\ndescription: A memory called {name}\ntype: user\n---\nBody.\n"


def _memories(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"user_{name}.md").write_text(MEMORY.format(name=name), encoding="utf-8")
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    (root / ".git").mkdir(parents=True)
    return root


def _claude_folder(home: Path, project: Path) -> Path:
    return home / ".claude" / "projects" / sanitise_project_path(project) / "memory"


def _where(repo: Path, *args: str) -> dict[str, Any]:
    result = invoke_memdir(*args, "where", "--format", "json", cwd=repo)
    assert result.exit_code == 0, result.output
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def _rows(found: dict[str, Any]) -> list[tuple[str, str, int | None, bool, bool]]:
    return [(c["path"], c["source"], c["memories"], c["in_use"], c["claude_code_loads"]) for c in found["candidates"]]


def test_where_lists_the_repositorys_folder_and_claude_codes_with_their_memories(
    repo: Path, isolated_env: Path
) -> None:
    _memories(repo / ".claude" / "memory", "a", "b")
    claude = _memories(_claude_folder(isolated_env, repo), "c", "d", "e")
    found = _where(repo)
    assert found["path"] == str(repo / ".claude" / "memory") and found["source"] == "repository"
    assert found["claude_code"] == {
        "path": str(claude),
        "folder": str(claude),
        "reason": f"Claude Code's auto-memory folder for {repo}",
        "off": None,
    }
    assert _rows(found) == [
        (str(repo / ".claude" / "memory"), "repository", 2, True, False),
        (str(claude), "claude", 3, False, True),
    ]


def test_where_in_text_keeps_stdout_to_the_path_and_names_each_folder_on_stderr(repo: Path, isolated_env: Path) -> None:
    _memories(repo / ".claude" / "memory", "a")
    claude = _memories(_claude_folder(isolated_env, repo), "c", "d")
    result = invoke_memdir("where", cwd=repo)
    assert result.exit_code == 0 and result.stdout == f"{repo / '.claude' / 'memory'}\n"
    assert f"Claude Code loads {claude}\n" in result.stderr
    assert "1 memory; in use" in result.stderr and "2 memories; Claude Code loads it" in result.stderr
    assert result.stderr.endswith(
        f"warning: 2 memories in {claude} (the folder Claude Code loads), not in the folder in use; "
        f"bring them over with `memdir import {claude}`\n"
    )


def test_a_custom_auto_memory_directory_is_what_claude_code_loads(repo: Path, isolated_env: Path) -> None:
    (isolated_env / ".claude").mkdir()
    (isolated_env / ".claude" / "settings.json").write_text('{"autoMemoryDirectory": "~/notes/memory"}')
    notes = _memories(isolated_env / "notes" / "memory", "a")
    old = _memories(_claude_folder(isolated_env, repo), "b", "c")  # written before the setting
    found = _where(repo)
    settings = isolated_env / ".claude" / "settings.json"
    assert found["claude_code"]["path"] == str(notes) and str(settings) in found["claude_code"]["reason"]
    assert _rows(found) == [
        (str(repo / ".claude" / "memory"), "repository", 0, False, False),
        (str(notes), "claude", 1, True, True),  # memdir's last resort is the folder Claude Code loads
        (str(old), "claude-default", 2, False, False),
    ]
    # Claude Code wrote those before the setting moved its folder: neither it nor memdir reads them now.
    assert invoke_memdir("where", cwd=repo).stderr.endswith(
        f"warning: 2 memories in {old} (Claude Code's default folder for {repo}), not in the folder in use; "
        f"bring them over with `memdir import {old}`\n"
    )


def test_a_repositorys_setting_out_of_it_is_listed_but_not_used(repo: Path, isolated_env: Path, tmp_path: Path) -> None:
    elsewhere = _memories(tmp_path / "elsewhere", "a")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryDirectory": str(elsewhere)}))
    found = _where(repo)
    default = _claude_folder(isolated_env, repo)
    assert found["path"] == str(default) and found["claude_code"]["path"] == str(elsewhere)
    assert _rows(found)[1:] == [
        (str(elsewhere), "claude", 1, False, True),
        (str(default), "claude-default", 0, True, False),
    ]


def test_a_worktree_lists_the_main_checkouts_folder_and_its_own_old_one(tmp_path: Path, isolated_env: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    commit = ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x"]
    for args in (["init", "-q"], commit, ["worktree", "add", "-q", str(tmp_path / "wt")]):
        subprocess.run(["git", *args], cwd=main, check=True, capture_output=True)
    _memories(main / ".claude" / "memory", "a")
    own = _memories(_claude_folder(isolated_env, tmp_path / "wt"), "b")
    shared = _claude_folder(isolated_env, main)
    found = _where(tmp_path / "wt")
    assert _rows(found) == [
        (str(tmp_path / "wt" / ".claude" / "memory"), "repository", 0, False, False),
        (str(main / ".claude" / "memory"), "main-checkout", 1, False, False),
        (str(shared), "claude", 0, True, True),
        (str(own), "claude-worktree", 1, False, False),
    ]


def test_with_auto_memory_off_claude_code_loads_no_folder(
    repo: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    found = _where(repo)
    assert (
        found["claude_code"]["path"] is None and found["claude_code"]["off"] == "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set"
    )
    assert not any(c["claude_code_loads"] for c in found["candidates"])
    assert "Claude Code loads no memory folder" in invoke_memdir("where", cwd=repo).stderr


def test_one_folder_named_twice_is_listed_once(repo: Path, isolated_env: Path) -> None:
    """`hooks install --auto-memory-dir` points Claude Code at the repository's folder."""
    _memories(repo / ".claude" / "memory", "a")
    local = {"autoMemoryDirectory": str(repo / ".claude" / "memory")}
    (repo / ".claude" / "settings.local.json").write_text(json.dumps(local))
    found = _where(repo, "--dir", ".claude/memory")
    assert _rows(found) == [(str(repo / ".claude" / "memory"), "option", 1, True, True)]
    assert "given with --dir; .claude/memory/ in the repository" in found["candidates"][0]["reason"]


# --- init says when memories are elsewhere -----------------------------------------------------------


def test_init_in_the_repository_names_the_memories_claude_code_keeps(repo: Path, isolated_env: Path) -> None:
    claude = _memories(_claude_folder(isolated_env, repo), "a", "b", "c")
    result = invoke_memdir("--dir", ".claude/memory", "init", cwd=repo)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: 3 memories in {claude} (the folder Claude Code loads), not in the folder in use; "
        f"bring them over with `memdir import {claude}`"
    ]


def test_init_says_nothing_when_no_other_folder_holds_memories(repo: Path, isolated_env: Path) -> None:
    _claude_folder(isolated_env, repo).mkdir(parents=True)  # Claude Code's folder, empty
    result = invoke_memdir("--dir", ".claude/memory", "init", cwd=repo)
    assert result.exit_code == 0 and "warning" not in result.stderr
    elsewhere = isolated_env / "other"
    elsewhere.mkdir()
    _memories(_claude_folder(isolated_env, elsewhere), "a")
    result = invoke_memdir("init", cwd=elsewhere)  # the folder in use is the one Claude Code loads
    assert result.exit_code == 0 and "warning" not in result.stderr


# --- counting, cheap and bounded ------------------------------------------------------------------------


def test_counting_reads_names_only(tmp_path: Path) -> None:
    folder = _memories(tmp_path / "m", "a")
    (folder / "MEMORY.md").write_text("- [a](user_a.md)\n")
    (folder / "notes.md").write_bytes(b"\xff\xfe not even text")  # counted: no file is opened
    (folder / "team").mkdir()
    _memories(folder / "team", "b")
    _memories(folder / ".archive", "old")
    _memories(folder / ".memdir", "state")
    os.mkfifo(folder / "pipe.md")  # a named pipe would block a read; nothing reads it
    (folder / "link.md").symlink_to(folder / "user_a.md")
    (folder / "linked").symlink_to(folder / "team")
    count = count_memories(folder)
    assert (count.exists, count.memories, count.complete, count.problem) == (True, 3, True, None)


def test_counting_stops_after_its_limit(tmp_path: Path) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    for i in range(10_000):
        (folder / f"user_{i}.md").touch()
    assert count_memories(folder).memories == 10_000  # within the default limit: counted whole
    bounded = count_memories(folder, limit=500)
    assert not bounded.complete and bounded.memories <= 500


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder")
def test_a_folder_that_cannot_be_listed_says_so(tmp_path: Path) -> None:
    folder = _memories(tmp_path / "m", "a")
    folder.chmod(0)
    try:
        count = count_memories(folder)
    finally:
        folder.chmod(0o755)
    assert count.exists and count.problem is not None and count.problem.startswith("cannot be listed")


def test_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    assert count_memories(tmp_path / "file").problem == "is not a folder"
    assert not count_memories(tmp_path / "missing").exists


def test_the_survey_is_the_library_call_where_prints(repo: Path, isolated_env: Path) -> None:
    _memories(_claude_folder(isolated_env, repo), "a")
    found = survey(None, repo, dict(os.environ), load_config(repo), managed=None)
    assert found.location.source == "claude" and found.elsewhere() is None
    assert [c.source for c in found.candidates] == ["repository", "claude"]
