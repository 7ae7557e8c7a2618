"""The pre-commit hooks of .pre-commit-hooks.yaml, driven by the real `pre-commit` in temporary git repositories.

The hook repository is a snapshot of this source tree committed into a git repository of its own
(untracked files such as a new .pre-commit-hooks.yaml included; this repository's own git is never
touched). Every test points a `.pre-commit-config.yaml` at that snapshot and runs `pre-commit run`
with one PRE_COMMIT_HOME, where the hooks' virtualenv (memdir and its dependencies from PyPI) is
built once. The snapshot and the home are kept in .cache/pre-commit/ under a digest of the source
tree (conftest.cached_build): the test workers share them, and a later run of an unchanged tree
finds the hooks' environment built; any change to the tree makes a new snapshot and a new build.
`pre-commit try-repo` is not used: it builds a fresh environment in a new temporary store on every
call and takes no `args`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import NOT_SOURCE, USER_CACHE, cached_build, invoke_memdir, offline_pip_env, source_digest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
TODAY = "2026-11-22"

# Signs that pip could not reach a package index at all (not a problem of this project).
_NETWORK = re.compile(
    r"NewConnectionError|ConnectTimeout|ReadTimeout|ProxyError|SSLError|Temporary failure in name"
    r"|Name or service not known|Network is unreachable|Connection refused|No route to host",
    re.IGNORECASE,
)

if shutil.which("git") is None:
    pytest.skip("git is not installed; pre-commit needs it", allow_module_level=True)


def _env(pre_commit_home: Path) -> dict[str, str]:
    """The environment of every git and pre-commit call: no user or system git config, no leaks."""
    # Without PYTHONDONTWRITEBYTECODE, the hooks' Python keeps the bytecode of what it imports in the
    # hooks' environment (built for this source tree alone), rather than every hook run compiling
    # memdir, typer and rich again.
    unset = ("SKIP", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT", "MEMDIR_")) and k not in unset
    }
    env.update(
        PRE_COMMIT_HOME=str(pre_commit_home),
        PRE_COMMIT_COLOR="never",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,  # no signing, hooksPath or templates from the user's config
        GIT_AUTHOR_NAME="memdir tests",
        GIT_AUTHOR_EMAIL="tests@memdir.invalid",
        GIT_COMMITTER_NAME="memdir tests",
        GIT_COMMITTER_EMAIL="tests@memdir.invalid",
        MEMDIR_TODAY=TODAY,
        NO_COLOR="1",
        PYTHONIOENCODING="utf-8",
    )
    return env


def _git(cwd: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"git {' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@dataclass(frozen=True)
class HookRepo:
    path: Path
    rev: str
    home: Path  # PRE_COMMIT_HOME shared by the session


@dataclass(frozen=True)
class Run:
    code: int
    output: str

    def status(self, hook_name: str) -> str:
        """Passed, Failed or Skipped, from pre-commit's `name.....status` line for the hook."""
        found = re.search(rf"^{re.escape(hook_name)}\.+(?:\(no files to check\))?(\w+)$", self.output, re.M)
        assert found, f"no status line for {hook_name!r} in:\n{self.output}"
        return found.group(1)


def _pre_commit(cwd: Path, env: dict[str, str], *args: str) -> Run:
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    return Run(done.returncode, done.stdout + done.stderr)


def _config(hook_repo: HookRepo, hooks: Sequence[Mapping[str, object]]) -> str:
    """A .pre-commit-config.yaml using the snapshot; each hook is {"id": ...} plus its overrides."""
    repo = {"repo": hook_repo.path.as_posix(), "rev": hook_repo.rev, "hooks": list(hooks)}
    return yaml.safe_dump({"repos": [repo]}, sort_keys=False)


# Index first: when it rewrites MEMORY.md, lint (next) already checks the new one.
DEFAULT_HOOKS = [{"id": "memdir-index"}, {"id": "memdir-lint"}]


@pytest.fixture(scope="session")
def hook_env() -> HookRepo:
    """This source tree, uncommitted changes included, as a one-commit git repository, and a
    PRE_COMMIT_HOME where `pre-commit install-hooks` built the hooks' environment from it; made once
    per source tree (cached_build). Skips when PyPI is out of reach."""
    import pre_commit.constants

    def build(folder: Path) -> None:
        path, home, scratch = folder / "repo", folder / "home", folder / "install-hooks"
        shutil.copytree(REPO, path, ignore=shutil.ignore_patterns(*NOT_SOURCE))
        env = _env(home)
        _git(path, env, "init", "-q")
        _git(path, env, "add", "-A")
        _git(path, env, "commit", "-q", "-m", "snapshot")
        scratch.mkdir()
        _git(scratch, env, "init", "-q")
        (scratch / ".pre-commit-config.yaml").write_text(_config(_snapshot(folder), DEFAULT_HOOKS))
        # No byte-compiling of the hooks' dependencies (anthropic alone is 3,200 modules the hooks
        # never import): a hook's run compiles what it imports, once (see _env). PIP_COMPILE=0, as
        # PIP_NO_COMPILE=1 means the opposite to pip: it sets --no-compile's destination to true.
        # virtualenv's seed wheels and pip's downloads are kept in the user's cache, not the test's
        # empty home (pip's cache is keyed on what it fetched: never a stale package).
        caches = {
            "VIRTUALENV_OVERRIDE_APP_DATA": str(USER_CACHE / "virtualenv"),
            "PIP_CACHE_DIR": str(USER_CACHE / "pip"),
        }
        install_env = {**env, "PIP_COMPILE": "0", **caches}
        # The build backend and the dependencies from the wheelhouse, offline: what pre-commit does
        # is the same (a virtualenv, then `pip install .` with an isolated build), minus the index's
        # round trips. Anything missing there: again, from the index.
        offline = offline_pip_env()
        done = _pre_commit(scratch, {**install_env, **offline}, "install-hooks")
        if done.code != 0 and offline:
            done = _pre_commit(scratch, install_env, "install-hooks")
        if done.code != 0:
            log = home / "pre-commit.log"
            details = done.output + (log.read_text(errors="replace") if log.exists() else "")
            if _NETWORK.search(details):
                pytest.skip(f"pre-commit cannot install the hook environment (no package index): {details[-300:]}")
            pytest.fail(f"pre-commit install-hooks failed:\n{details[-4000:]}")

    return _snapshot(cached_build("pre-commit", source_digest(pre_commit.constants.VERSION), build))


def _snapshot(folder: Path) -> HookRepo:
    path = folder / "repo"
    return HookRepo(path, _git(path, _env(folder / "home"), "rev-parse", "HEAD").strip(), folder / "home")


ROLE = """\
---
name: role
description: Backend developer, new to React
type: user
---
Backend developer; explain frontend ideas in backend terms.
"""

LINT_FIRST = """\
---
name: lint-before-commit
description: Run the linter before every commit
type: feedback
---
Run `make lint` before every commit.

**Why:** CI was red for a day over unlinted code.

**How to apply:** Before any git commit in this repository.
"""

FREEZE = """\
---
name: release-freeze
description: No merges to main until the 2026-12-01 launch
type: project
---
Merges to main are frozen until the launch.

**Why:** The launch is on 2026-12-01 and release engineering asked for a freeze.

**How to apply:** Hold every merge to main; ask before merging anything.
"""

BROKEN = """\
---
name: broken
description: "an unclosed" quote, then more
type: feedback
---
Body.
"""


@dataclass
class Project:
    path: Path
    env: dict[str, str]
    hook_repo: HookRepo

    def git(self, *args: str) -> str:
        return _git(self.path, self.env, *args)

    def pre_commit(self, *args: str) -> Run:
        return _pre_commit(self.path, self.env, *args)

    def configure(self, hooks: Sequence[Mapping[str, object]]) -> None:
        (self.path / ".pre-commit-config.yaml").write_text(_config(self.hook_repo, hooks))
        self.git("add", ".pre-commit-config.yaml")

    def write(self, relative: str, text: str, stage: bool = True) -> Path:
        path = self.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if stage:
            self.git("add", relative)
        return path


MakeProject = Callable[..., Project]


@pytest.fixture
def make_project(hook_env: HookRepo, tmp_path: Path) -> MakeProject:
    """A committed git repository with two valid memories in `folder`, indexed by memdir itself."""

    def make(folder: str = ".claude/memory", hooks: Sequence[Mapping[str, object]] = DEFAULT_HOOKS) -> Project:
        project = Project(tmp_path / "project", _env(hook_env.home), hook_env)
        project.path.mkdir()
        project.git("init", "-q")
        project.write("README.md", "A project whose agent keeps its memory in git.\n")
        project.write(f"{folder}/user_role.md", ROLE)
        project.write(f"{folder}/feedback_lint-before-commit.md", LINT_FIRST)
        project.write(f"{folder}/MEMORY.md", "# Memory\n\n")
        index = invoke_memdir("--dir", folder, "index", cwd=project.path)  # set-up: in-process will do
        assert index.exit_code == 0, index.stderr
        project.git("add", "-A")
        project.configure(hooks)
        project.git("commit", "-q", "-m", "memory")
        return project

    return make


def test_clean_folder_passes_both_hooks(make_project: MakeProject) -> None:
    project = make_project()
    run = project.pre_commit("run", "--all-files")
    assert run.code == 0, run.output
    assert run.status("memdir index") == "Passed"
    assert run.status("memdir lint") == "Passed"


def test_hooks_skip_commits_without_memory_files(make_project: MakeProject) -> None:
    project = make_project()
    project.write("README.md", "Changed, and nothing else.\n")
    run = project.pre_commit("run")  # the staged files, as on `git commit`
    assert run.code == 0, run.output
    assert run.status("memdir index") == "Skipped"
    assert run.status("memdir lint") == "Skipped"


def test_broken_frontmatter_fails_lint_and_names_the_file(make_project: MakeProject) -> None:
    project = make_project()
    project.write(".claude/memory/feedback_broken.md", BROKEN)
    run = project.pre_commit("run")
    assert run.code == 1, run.output
    assert run.status("memdir lint") == "Failed"
    assert "feedback_broken.md" in run.output


def test_index_hook_adds_a_new_memory_then_passes(make_project: MakeProject) -> None:
    project = make_project()
    index = project.path / ".claude/memory/MEMORY.md"
    project.write(".claude/memory/project_release-freeze.md", FREEZE)

    first = project.pre_commit("run")
    assert first.code == 1, first.output
    assert first.status("memdir index") == "Failed"
    assert "files were modified by this hook" in first.output
    assert first.status("memdir lint") == "Passed"  # it ran after the index was rewritten
    text = index.read_text(encoding="utf-8")
    assert "[release-freeze](project_release-freeze.md)" in text
    assert text.startswith("# Memory\n")  # the hand-written heading stays

    project.git("add", "-A")
    second = project.pre_commit("run")
    assert second.code == 0, second.output
    assert second.status("memdir index") == "Passed"
    project.git("commit", "-q", "-m", "release freeze")
    assert project.git("status", "--porcelain") == ""


def test_index_hook_with_check_writes_nothing(make_project: MakeProject) -> None:
    project = make_project(hooks=[{"id": "memdir-index", "args": ["--check"]}])
    index = project.path / ".claude/memory/MEMORY.md"
    before = index.read_bytes()
    project.write(".claude/memory/project_release-freeze.md", FREEZE)

    run = project.pre_commit("run")
    assert run.code == 1, run.output
    assert run.status("memdir index") == "Failed"
    assert "files were modified by this hook" not in run.output
    assert index.read_bytes() == before


def test_lint_without_index_hook_reports_the_stale_index(make_project: MakeProject) -> None:
    project = make_project(hooks=[{"id": "memdir-lint"}])
    project.write(".claude/memory/project_release-freeze.md", FREEZE)
    run = project.pre_commit("run")
    assert run.code == 1, run.output
    assert run.status("memdir lint") == "Failed"
    assert "project_release-freeze.md" in run.output


# Another folder: `files` says when to run, and memdir finds the folder through `args` (global
# options moved before the subcommand by the hook's launcher) or through a committed .memdir.toml.
OTHER = "notes/agent memory"
OTHER_FILES = r"^notes/agent memory/"
OTHER_SETUPS = {
    "args": [
        {"id": "memdir-index", "files": OTHER_FILES, "args": [f"--dir={OTHER}"]},
        {"id": "memdir-lint", "files": OTHER_FILES, "args": ["-C", OTHER, "--select", "F,B,I", "-q"]},
    ],
    "config": [{"id": "memdir-index", "files": OTHER_FILES}, {"id": "memdir-lint", "files": OTHER_FILES}],
}


@pytest.mark.parametrize("setup", sorted(OTHER_SETUPS))
def test_another_folder(make_project: MakeProject, setup: str) -> None:
    project = make_project(folder=OTHER, hooks=OTHER_SETUPS[setup])
    if setup == "config":
        project.write(".memdir.toml", f'dir = "{OTHER}"\n')
        project.git("commit", "-q", "-m", "config")
    # There is no .claude/memory/: the hooks pass only if they found the folder.
    run = project.pre_commit("run", "--all-files")
    assert run.code == 0, run.output
    assert run.status("memdir index") == "Passed"
    assert run.status("memdir lint") == "Passed"

    project.write(f"{OTHER}/feedback_broken.md", BROKEN)
    project.write(f"{OTHER}/project_release-freeze.md", FREEZE)
    run = project.pre_commit("run")
    assert run.code == 1, run.output
    assert run.status("memdir index") == "Failed"
    assert "[release-freeze](project_release-freeze.md)" in (project.path / OTHER / "MEMORY.md").read_text()
    assert run.status("memdir lint") == "Failed"
    assert "feedback_broken.md" in run.output

    # The default pattern does not match this folder: without `files`, the hooks never run.
    project.configure([{"id": "memdir-lint"}])
    run = project.pre_commit("run")
    assert run.status("memdir lint") == "Skipped"
