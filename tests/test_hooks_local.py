"""`memdir hooks install` in a real git repository: the local settings file stays out of git, and
`hooks uninstall` takes away a file it created rather than leave `{}` behind; `install` says where
memories are when the folder in use is not the one Claude Code loads."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import invoke_memdir

from memdir.core.claude_code import sanitise_project_path
from memdir.integrations.gitignore import PATTERN

LOCAL = Path(".claude") / "settings.local.json"


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    root.mkdir()
    _git("init", "-q", cwd=root)
    _git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x", cwd=root)
    (root / ".claude" / "memory").mkdir(parents=True)
    return root


def _untracked(repo: Path) -> list[str]:
    return _git("status", "--porcelain", "--untracked-files=all", cwd=repo).splitlines()


def test_install_keeps_the_local_settings_it_creates_out_of_git(repo: Path) -> None:
    result = invoke_memdir("hooks", "install", cwd=repo)
    assert result.exit_code == 0, result.output
    assert (repo / LOCAL).is_file() and _untracked(repo) == []  # git offers nothing to commit
    exclude = repo / ".git" / "info" / "exclude"
    assert exclude.read_text().endswith(f"\n{PATTERN}\n")
    assert f"is now ignored by git (`{PATTERN}` added to {exclude}" in result.stderr
    again = invoke_memdir("hooks", "install", cwd=repo)  # nothing changes: nothing more to say or add
    assert "ignored by git" not in again.stderr and exclude.read_text().count(PATTERN) == 1


def test_a_file_git_already_ignores_is_left_to_the_gitignore(repo: Path) -> None:
    (repo / ".gitignore").write_text(".claude/settings.local.json\n")
    result = invoke_memdir("hooks", "install", cwd=repo)
    assert result.exit_code == 0 and "ignored by git" not in result.stderr
    assert PATTERN not in (repo / ".git" / "info" / "exclude").read_text()


def test_a_tracked_local_settings_file_gets_the_way_to_untrack_it(repo: Path) -> None:
    (repo / LOCAL).write_text("{}\n")
    _git("add", "-f", str(LOCAL), cwd=repo)
    result = invoke_memdir("hooks", "install", cwd=repo)
    assert result.exit_code == 0
    assert "is tracked by git, so ignore rules do not apply" in result.stderr
    assert "`git rm --cached " in result.stderr


def test_a_dry_run_adds_nothing(repo: Path) -> None:
    before = (repo / ".git" / "info" / "exclude").read_text()
    result = invoke_memdir("hooks", "install", "--dry-run", "--format", "json", cwd=repo)
    assert result.exit_code == 0 and not (repo / LOCAL).exists()
    assert (repo / ".git" / "info" / "exclude").read_text() == before
    ignored = json.loads(result.stdout)["git_ignore"]
    assert ignored == [
        {"path": str(repo / LOCAL), "status": "would-add", "exclude": str(repo / ".git" / "info" / "exclude")}
    ]


def test_in_a_worktree_the_pattern_goes_where_git_reads_it(repo: Path, tmp_path: Path) -> None:
    _git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=repo)
    (tmp_path / "wt" / ".claude" / "memory").mkdir(parents=True)
    assert invoke_memdir("hooks", "install", cwd=tmp_path / "wt").exit_code == 0
    assert _untracked(tmp_path / "wt") == []
    assert PATTERN in (repo / ".git" / "info" / "exclude").read_text()


def test_outside_a_repository_there_is_nothing_to_ignore(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    result = invoke_memdir("hooks", "install", "--format", "json", cwd=tmp_path / "plain")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["git_ignore"][0]["status"] == "no-repository"


def test_the_project_scope_is_for_git_and_is_left_alone(repo: Path) -> None:
    result = invoke_memdir("hooks", "install", "--scope", "project", cwd=repo)
    assert result.exit_code == 0 and "ignored by git" not in result.stderr
    assert _untracked(repo) == ["?? .claude/settings.json"]


# --- uninstall takes away what install created ----------------------------------------------------


def test_uninstall_removes_the_file_install_created(repo: Path) -> None:
    invoke_memdir("hooks", "install", cwd=repo)
    dry = invoke_memdir("hooks", "uninstall", "--dry-run", cwd=repo)
    assert dry.exit_code == 0 and "would be removed" in dry.stderr and (repo / LOCAL).exists()
    result = invoke_memdir("hooks", "uninstall", cwd=repo)
    assert result.exit_code == 0 and "removed (memdir's entries were all it held)" in result.stderr
    assert not (repo / LOCAL).exists()
    assert (repo / ".claude").is_dir()  # its folder holds the memory folder too


def test_uninstall_keeps_a_file_with_anything_else_in_it(repo: Path) -> None:
    (repo / LOCAL).write_text('{"permissions": {"allow": ["Bash(make test)"]}}\n')
    invoke_memdir("hooks", "install", cwd=repo)
    invoke_memdir("hooks", "uninstall", cwd=repo)
    assert json.loads((repo / LOCAL).read_text()) == {"permissions": {"allow": ["Bash(make test)"]}}


# --- install says where the memories are --------------------------------------------------------


def test_install_names_the_memories_claude_code_keeps_elsewhere(repo: Path, isolated_env: Path) -> None:
    claude = isolated_env / ".claude" / "projects" / sanitise_project_path(repo) / "memory"
    claude.mkdir(parents=True)
    (claude / "user_role.md").write_text("---\nname: role\ndescription: Backend developer\ntype: user\n---\nX.\n")
    result = invoke_memdir("hooks", "install", "--auto-memory-dir", cwd=repo)
    assert result.exit_code == 0, result.output
    assert result.stderr.endswith(
        f"warning: 1 memory in {claude} (the folder Claude Code loads), not in the folder in use; "
        f"bring them over with `memdir import {claude}`\n"
    )
    as_json = invoke_memdir("hooks", "install", "--format", "json", cwd=repo)
    assert json.loads(as_json.stdout)["changes"] and "memdir import" in as_json.stderr
    other = repo.parent / "other"
    other.mkdir()
    elsewhere = invoke_memdir("hooks", "install", "--project", str(other), cwd=repo)
    assert "memdir import" not in elsewhere.stderr  # this directory's folders say nothing about another project
    claude.joinpath("user_role.md").unlink()
    assert "memdir import" not in invoke_memdir("hooks", "install", cwd=repo).stderr
