"""Where the memory folder is: the resolution order of DESIGN.md, and the config file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app
from memdir.core.claude_code import sanitise_project_path
from memdir.core.config import ConfigError, find_config_file, load_config, locate

runner = CliRunner()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "my repo"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(root / "src" / "deep")
    return root


def where(*args: str) -> dict[str, object]:
    result = runner.invoke(app, [*args, "where", "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_falls_back_to_claude_codes_folder_for_the_repository(repo: Path, isolated_env: Path) -> None:
    found = where()
    assert found["source"] == "claude"
    assert found["path"] == str(isolated_env / ".claude" / "projects" / sanitise_project_path(repo) / "memory")
    assert sanitise_project_path(Path("/home/me/my repo.v2")) == "-home-me-my-repo-v2"


def test_repository_memory_folder_beats_claudes(repo: Path) -> None:
    (repo / ".claude" / "memory").mkdir(parents=True)
    found = where()
    assert {key: found[key] for key in ("path", "source", "reason", "exists")} == {
        "path": str(repo / ".claude" / "memory"), "source": "repository",
        "reason": f".claude/memory/ in the repository at {repo}", "exists": True,
    }  # fmt: skip


def test_config_beats_repository_and_is_relative_to_its_file(repo: Path) -> None:
    (repo / ".claude" / "memory").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.memdir]\ndir = "docs/memory"\n')
    assert where()["path"] == str((repo / "docs" / "memory").resolve())
    (repo / "src" / ".memdir.toml").write_text('dir = "../notes"\n')  # nearer, so it wins
    found = where()
    assert found["path"] == str((repo / "notes").resolve()) and found["source"] == "config"


def test_env_beats_config_and_option_beats_env(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / ".memdir.toml").write_text('dir = "x"\n')
    monkeypatch.setenv("MEMDIR_DIR", "from-env")
    assert where()["path"] == str(Path.cwd() / "from-env")
    assert where("--dir", "/abs/opt")["path"] == "/abs/opt"


def test_claude_config_dir_replaces_home(repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    assert str(where()["path"]).startswith(str(tmp_path / "cc" / "projects"))


def test_where_text_prints_path_then_reason(repo: Path) -> None:
    result = runner.invoke(app, ["where"])
    assert result.stdout.strip().endswith("/memory")
    assert "does not exist yet" in result.stderr


def test_bad_config_is_a_usage_error(repo: Path) -> None:
    (repo / ".memdir.toml").write_text("dir = [unclosed\n")
    result = runner.invoke(app, ["where"])
    assert result.exit_code == 2 and ".memdir.toml: invalid TOML" in result.stderr
    (repo / ".memdir.toml").write_text("why_labels = 3\n")
    with pytest.raises(ConfigError, match="why_labels"):
        load_config(Path.cwd())


def test_config_extends_labels_and_warns_on_unknown_keys(repo: Path) -> None:
    (repo / ".memdir.toml").write_text('why_labels = ["Begründung"]\ncolour = "red"\n')
    config = load_config(Path.cwd())
    assert "Begründung" in config.why_labels and "Why" in config.why_labels
    assert config.warnings == (f"{repo / '.memdir.toml'}: unknown setting `colour` ignored",)


def test_locate_outside_a_repository_uses_the_working_directory(tmp_path: Path) -> None:
    found = locate(None, tmp_path, {"CLAUDE_CONFIG_DIR": "/c"}, load_config(tmp_path))
    assert found.path == Path("/c/projects") / sanitise_project_path(tmp_path) / "memory"


@pytest.mark.parametrize(
    ("file", "content", "said"),
    [
        ("pyproject.toml", b'tool = "memdir"\n', "pyproject.toml: `tool` must be a table"),
        ("pyproject.toml", b"[tool]\nmemdir = 5\n", "pyproject.toml: `tool.memdir` must be a table"),
        (".memdir.toml", b'dir = "caf\xe9"\n', ".memdir.toml: is not valid UTF-8 (byte 0xe9 at offset 10)"),
        ("pyproject.toml", b"[tool.memdir]\n# \xff\n", "pyproject.toml: is not valid UTF-8 (byte 0xff at offset 16)"),
        (".memdir.toml", b'dir = "mem\\u0000ory"\n', ".memdir.toml: `dir` must be a path without a NUL character"),
    ],
    ids=["tool-not-a-table", "tool-memdir-not-a-table", "not-utf8", "pyproject-not-utf8", "nul-in-dir"],
)
def test_a_config_memdir_cannot_use_is_one_line_and_exit_2(repo: Path, file: str, content: bytes, said: str) -> None:
    (repo / file).write_bytes(content)
    result = runner.invoke(app, ["where"])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"memdir: error: {repo / file}{said.removeprefix(file)}\n"


@pytest.mark.parametrize(
    "content",
    [
        b"[tool.ruff]\nline-length = 120\n",
        b"[tool.ruff\nbroken = \n",
        b"tool = 5\n",
        b'[project]\nname = "caf\xe9"\n',
    ],
    ids=["other-tools", "broken", "tool-not-a-table", "not-utf8"],
)
def test_a_pyproject_that_never_says_memdir_is_neither_parsed_nor_judged(repo: Path, content: bytes) -> None:
    """Most projects' pyproject.toml configures other tools: reading it cost every session start an
    import of tomllib. Without the word `memdir` it cannot hold [tool.memdir]; the search goes on."""
    (repo / "pyproject.toml").write_bytes(content)
    (repo.parent / ".memdir.toml").write_text('dir = "above"\n')
    assert find_config_file(repo) == (repo.parent / ".memdir.toml", {"dir": "above"})


def test_a_pyproject_that_spells_memdir_with_an_escape_is_read(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool."\\u006Demdir"]\ndir = "escaped"\n')
    assert load_config(repo).dir == (repo / "escaped").resolve()


def test_a_nul_in_the_folder_given_is_a_usage_error(repo: Path) -> None:
    with pytest.raises(ConfigError, match="MEMDIR_DIR must be a path without a NUL character"):
        locate(None, Path.cwd(), {"MEMDIR_DIR": "mem\0ory"}, load_config(Path.cwd()))
    with pytest.raises(ConfigError, match="--dir must be a path without a NUL character"):
        locate(Path("mem\0ory"), Path.cwd(), {}, load_config(Path.cwd()))
    result = runner.invoke(app, ["--dir", "mem\0ory", "where"])
    assert result.exit_code == 2 and "internal error" not in result.output


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("[context]\nbudget = " + "9" * 5_000 + "\n", ".memdir.toml: invalid TOML: Exceeds the limit (4300 digits)"),
        ("[recall]\ngate = " + "9" * 400 + "\n", ".memdir.toml: `recall.gate` must be a number from 0 to 1"),
    ],
    ids=["past-pythons-digit-limit", "past-a-float"],
)
def test_a_number_too_long_to_read_is_a_config_error(repo: Path, content: str, said: str) -> None:
    (repo / ".memdir.toml").write_text(content)
    result = runner.invoke(app, ["where"])
    assert result.exit_code == 2 and result.stderr.startswith(f"memdir: error: {repo}/{said}"), result.output
    assert result.stderr.count("\n") == 1


# --- a repository's config names a folder inside it only (issue 29) -------------------------------


@pytest.mark.parametrize("named", ["../victim", "~/victim", "/tmp/victim-abs"])
def test_a_repositorys_config_cannot_name_a_folder_outside_it(repo: Path, named: str) -> None:
    (repo / ".memdir.toml").write_text(f'dir = "{named}"\n')
    result = runner.invoke(app, ["where"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"memdir: error: {repo / '.memdir.toml'}: `dir` names ")
    assert f"outside the repository at {repo}" in result.stderr and "set MEMDIR_DIR or pass --dir" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_link_inside_the_repository_to_a_folder_outside_it_is_outside(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "victim").mkdir()
    (repo / "mem").symlink_to(tmp_path / "victim")
    (repo / ".memdir.toml").write_text('dir = "mem"\n')
    with pytest.raises(ConfigError, match="outside the repository"):
        load_config(Path.cwd())


def test_a_config_outside_any_repository_names_a_folder_under_its_own(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / ".memdir.toml").write_text('dir = "notes/memory"\n')
    assert load_config(tmp_path / "proj").dir == (tmp_path / "proj" / "notes" / "memory").resolve()
    (tmp_path / "proj" / ".memdir.toml").write_text('dir = "../elsewhere"\n')
    with pytest.raises(ConfigError, match="outside the folder of this config"):
        load_config(tmp_path / "proj")


def test_the_session_start_hook_leaves_a_folder_outside_the_repository_alone(repo: Path, tmp_path: Path) -> None:
    """The attack: a cloned repository's config points the hook at someone else's memory folder."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "user_secret.md").write_text("---\nname: secret\ndescription: Private note\ntype: user\n---\nX.\n")
    (repo / ".memdir.toml").write_text('dir = "../victim"\n')
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "SessionStart"})
    result = runner.invoke(app, ["hook", "session-start"], input=payload)
    assert result.exit_code == 0 and result.stdout == ""
    assert "outside the repository" in result.stderr
    assert not (victim / ".memdir").exists() and not (victim / "MEMORY.md").exists()


def test_a_folder_outside_the_repository_still_comes_from_the_environment_or_dir(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMDIR_DIR", str(tmp_path / "mine"))
    assert where()["path"] == str(tmp_path / "mine")
    monkeypatch.delenv("MEMDIR_DIR")
    assert where("--dir", str(tmp_path / "given"))["path"] == str(tmp_path / "given")


# --- the last resort is the folder Claude Code loads ------------------------------------------------


def test_the_last_resort_follows_auto_memory_directory_in_the_users_settings(repo: Path, isolated_env: Path) -> None:
    (isolated_env / ".claude").mkdir()
    (isolated_env / ".claude" / "settings.json").write_text('{"autoMemoryDirectory": "~/notes/memory"}')
    found = where()
    assert found["path"] == str(isolated_env / "notes" / "memory") and found["source"] == "claude"
    assert "autoMemoryDirectory in" in str(found["reason"])


def test_the_last_resort_does_not_follow_a_repositorys_settings_out_of_it(
    repo: Path, isolated_env: Path, tmp_path: Path
) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": str(tmp_path / "out")}))
    found = where()
    assert found["path"] == str(isolated_env / ".claude" / "projects" / sanitise_project_path(repo) / "memory")
    assert "outside the repository, which memdir does not follow" in str(found["reason"])
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": str(repo / "mem")}))
    assert where()["path"] == str(repo / "mem")  # inside it: followed


def test_a_worktree_falls_back_to_the_folder_of_its_main_checkout(tmp_path: Path, isolated_env: Path) -> None:
    import subprocess

    main = tmp_path / "main"
    main.mkdir()
    commit = ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x"]
    for args in (["init", "-q"], commit, ["worktree", "add", "-q", str(tmp_path / "wt")]):
        subprocess.run(["git", *args], cwd=main, check=True, capture_output=True)
    found = locate(None, tmp_path / "wt", {"CLAUDE_CONFIG_DIR": "/c"}, load_config(tmp_path / "wt"), managed=None)
    assert found.path == Path("/c/projects") / sanitise_project_path(main) / "memory"
