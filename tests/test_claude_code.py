"""Claude Code's own rules for its auto-memory folder (memdir/core/claude_code.py), each as the real
client 2.1.332 showed it (docs/configuration.md has the runs); tests/test_claude_plugin.py checks the
folder against the client itself."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memdir.core.claude_code import (
    canonical_repo_root,
    claude_memory,
    main_checkout,
    memory_dir_value,
    sanitise_project_path,
    settings_files,
)


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git("init", "-q", cwd=root)
    _git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x", cwd=root)
    return root


def _settings(path: Path, **values: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values), encoding="utf-8")
    return path


def test_a_name_counts_characters_as_javascript_does() -> None:
    """An astral character is two UTF-16 code units, so two dashes (the client named this folder)."""
    assert sanitise_project_path(Path("/tmp/wh-exp/em/x\U0001f600\u00e9")) == "-tmp-wh-exp-em-x---"


def test_a_long_name_is_cut_at_200_with_the_clients_hash() -> None:
    path = Path("/tmp/wh-exp/lp/" + "a" * 120 + "/" + "b" * 100 + "\U0001f600\u00e9")
    name = sanitise_project_path(path)
    # The folder the real client used for this path.
    assert name == "-tmp-wh-exp-lp-" + "a" * 120 + "-" + "b" * 64 + "-c66upn"


def test_a_worktree_is_keyed_on_its_main_checkout(repo: Path, tmp_path: Path) -> None:
    _git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=repo)
    (tmp_path / "wt" / "sub").mkdir()
    assert main_checkout(tmp_path / "wt") == repo
    assert canonical_repo_root(tmp_path / "wt" / "sub") == repo
    assert main_checkout(repo) is None
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cc")}
    found = claude_memory(tmp_path / "wt" / "sub", env, managed=None)
    assert found.folder == tmp_path / "cc" / "projects" / sanitise_project_path(repo) / "memory"


def test_a_git_file_that_does_not_link_back_is_no_worktree(tmp_path: Path, repo: Path) -> None:
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    assert main_checkout(fake) is None
    assert canonical_repo_root(fake) == fake


def test_the_first_settings_file_with_the_key_wins(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    _settings(home / ".claude" / "settings.json", autoMemoryDirectory="~/notes")
    assert claude_memory(repo, env, managed=None).folder == home / "notes"
    _settings(repo / ".claude" / "settings.json", autoMemoryDirectory=str(tmp_path / "project"))
    assert claude_memory(repo, env, managed=None).folder == tmp_path / "project"
    _settings(repo / ".claude" / "settings.local.json", autoMemoryDirectory=str(tmp_path / "local"))
    found = claude_memory(repo, env, managed=None)
    assert found.folder == tmp_path / "local" and found.setting is not None and found.setting.scope == "local"
    managed = _settings(tmp_path / "managed.json", autoMemoryDirectory=str(tmp_path / "policy"))
    assert claude_memory(repo, env, managed=managed).folder == tmp_path / "policy"
    env["CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"] = str(tmp_path / "cowork")
    assert claude_memory(repo, env, managed=managed).folder == tmp_path / "cowork"


def test_a_value_the_client_refuses_gives_the_default_not_the_next_file(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    _settings(home / ".claude" / "settings.json", autoMemoryDirectory=str(tmp_path / "user"))
    _settings(repo / ".claude" / "settings.json", autoMemoryDirectory="relative/x")
    found = claude_memory(repo, env, managed=None)
    assert found.folder == found.default == home / ".claude" / "projects" / sanitise_project_path(repo) / "memory"
    assert "it does not take autoMemoryDirectory" in found.reason


def test_local_settings_are_the_main_checkouts_first_then_the_working_directorys(repo: Path, tmp_path: Path) -> None:
    (repo / "sub").mkdir()
    files = settings_files(repo / "sub", {"CLAUDE_CONFIG_DIR": str(tmp_path / "cc")}, managed=None)
    assert [(f.scope, f.path) for f in files] == [
        ("local", repo / ".claude" / "settings.local.json"),
        ("local", repo / "sub" / ".claude" / "settings.local.json"),
        ("project", repo / "sub" / ".claude" / "settings.json"),  # the session's folder only
        ("user", tmp_path / "cc" / "settings.json"),
    ]


@pytest.mark.parametrize(
    ("value", "folder"),
    [
        ("~/mem", "/home/me/mem"),
        ("/srv/mem/", "/srv/mem"),
        ("//srv//mem", "/srv/mem"),
        ("/a/../bc", "/bc"),
        ("~", None),
        ("~/", None),
        ("~/../etc", None),
        ("rel/mem", None),
        ("/a", None),
        ("", None),
        (5, None),
    ],
)
def test_which_values_the_client_takes(value: object, folder: str | None) -> None:
    found = memory_dir_value(value, {"HOME": "/home/me"}, tilde=True)
    assert found == (Path(folder) if folder else None)


def test_the_override_takes_no_tilde() -> None:
    assert memory_dir_value("~/mem", {"HOME": "/home/me"}, tilde=False) is None


@pytest.mark.parametrize(
    ("env", "user", "off"),
    [
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, {}, "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set"),
        ({}, {"autoMemoryEnabled": False}, "autoMemoryEnabled is false in"),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"}, {"autoMemoryEnabled": False}, None),
        ({}, {"autoMemoryEnabled": True}, None),
    ],
)
def test_auto_memory_can_be_off(
    repo: Path, tmp_path: Path, env: dict[str, str], user: dict[str, object], off: str | None
) -> None:
    _settings(tmp_path / "cc" / "settings.json", **user)
    found = claude_memory(repo, {"CLAUDE_CONFIG_DIR": str(tmp_path / "cc"), **env}, managed=None)
    assert (found.off is None) if off is None else (found.off or "").startswith(off)


def test_a_settings_file_that_is_a_named_pipe_is_not_waited_on(repo: Path, tmp_path: Path) -> None:
    import os

    (tmp_path / "cc").mkdir()
    os.mkfifo(tmp_path / "cc" / "settings.json")
    found = claude_memory(repo, {"CLAUDE_CONFIG_DIR": str(tmp_path / "cc")}, managed=None)
    assert found.folder == found.default


def test_project_dir_name_replaces_the_sanitised_path_with_a_config_dir(repo: Path, tmp_path: Path) -> None:
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cc"), "CLAUDE_CODE_PROJECT_DIR_NAME": "my-app"}
    assert claude_memory(repo, env, managed=None).default == tmp_path / "cc" / "projects" / "my-app" / "memory"
    env["CLAUDE_CODE_PROJECT_DIR_NAME"] = "not/a/name"
    assert claude_memory(repo, env, managed=None).default.parent.name == sanitise_project_path(repo)
