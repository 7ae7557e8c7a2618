"""Shared fixtures and helpers, plain pytest. Every test runs with user-level paths (home, Claude's
config) in tmp_path. The CLI runs in-process through typer's CliRunner (`invoke_memdir`), or as a
real `python -m memdir` process (`run_memdir`) where a process is what is tested."""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

TODAY = dt.date(2026, 11, 22)
SHARED = Path(__file__).resolve().parents[2] / "shared"
REPO = Path(__file__).resolve().parents[1]
# What tests build once and keep between runs (a release's files, pre-commit's hook environment),
# each kind in a folder named by a digest of what it was built from. Ignored by git.
BUILD_CACHE = REPO / ".cache"
# What does not depend on the source (a pinned Claude Code client, pip's downloads) is kept where a
# fresh clone on the same machine finds it too: the user's cache, read before isolated_env swaps HOME.
USER_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memdir-tests"
# Not the source: git, virtualenvs, caches, build output (.gitignore's list), state tests leave.
NOT_SOURCE = (
    ".git", ".venv", ".cache", "__pycache__", "*.pyc", ".*_cache", "build", "dist", "*.egg-info",
    ".hypothesis", ".memdir",
)  # fmt: skip


def cpu_growth(work: Callable[[Any], object], small: Any, large: Any, runs: int = 5) -> float:
    """How many times the CPU time of `work(small)` `work(large)` takes, each the least of `runs`.

    For the few checks of linear growth whose work no public API can count, as it happens inside a
    regular expression's backtracking; count the work wherever it can be counted (calls, characters,
    files). The CPU time of this thread, not the clock: the machine's load does not add to it."""
    import time

    def least(sample: Any) -> float:
        spent = []
        for _ in range(runs):
            start = time.thread_time()
            work(sample)
            spent.append(time.thread_time() - start)
        return min(spent)

    return least(large) / least(small)


def invoke_memdir(  # type: ignore[no-untyped-def]
    *args: str, input: str | None = None, cwd: Path | None = None, env: dict[str, str | None] | None = None
):
    """Run the CLI in-process, from `cwd` when given (paths in its output are relative to it), with
    `env` set over the test's environment (None removes a variable) for the call."""
    from typer.testing import CliRunner

    from memdir.cli import app

    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(app, list(args), input=input, env=env)
    finally:
        os.chdir(old)


def memdir_command(*args: str) -> list[str]:
    """The argv of `python -m memdir ARGS` with the running Python."""
    return [sys.executable, "-m", "memdir", *args]


def run_memdir(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, input: str = "", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`python -m memdir ARGS` as a process of its own, with the test's environment unless `env` is
    given; the timeout only ends a run that would otherwise hang."""
    return subprocess.run(
        memdir_command(*args), env=env, cwd=cwd, input=input, capture_output=True, text=True, timeout=timeout
    )


def _source_files() -> list[Path]:
    """The files of the source tree: git's tracked and untracked but not ignored ones (so no state a
    test run leaves, such as .hypothesis/ or a .memdir/); without git, every file but NOT_SOURCE's."""
    import fnmatch

    try:
        listed = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, timeout=60,
        )  # fmt: skip
    except OSError:
        listed = None
    if listed is not None and listed.returncode == 0 and listed.stdout:
        return sorted({REPO / name for name in listed.stdout.decode().split("\0") if name} - {REPO})
    found = []
    for top, dirs, files in os.walk(REPO):
        dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, pattern) for pattern in NOT_SOURCE))
        found += [Path(top, f) for f in sorted(files) if not any(fnmatch.fnmatch(f, p) for p in NOT_SOURCE)]
    return found


def source_digest(*extra: str) -> str:
    """A digest of the source tree as a release or a snapshot takes it (_source_files, by path and
    content), the running Python's version and `extra`: what a build from it depends on."""
    digest = hashlib.sha256("\0".join((sys.version, *extra)).encode())
    for path in _source_files():
        if path.is_file() or path.is_symlink():
            digest.update(f"\0{path.relative_to(REPO).as_posix()}\0".encode())
            digest.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    return digest.hexdigest()[:20]


def cached_build(
    kind: str, key: str, build: Callable[[Path], None], cache: Path = BUILD_CACHE, prune: bool = True
) -> Path:
    """The folder `cache`/kind/key (BUILD_CACHE's, or USER_CACHE's for what a clean checkout may
    reuse), made by `build(folder)` the first time any test of any run asks for it. A file lock
    makes parallel workers wait for the one building; a folder counts only once `build` has
    returned, so a build that failed, skipped or was killed is made again; building removes the
    kind's other keys unless `prune` is false (a user-level cache that checkouts of other branches,
    running at the same time, may be reading). Keyed on content (source_digest, a pinned version),
    a stale build is never found."""
    kind_dir = cache / kind
    kind_dir.mkdir(parents=True, exist_ok=True)
    folder, complete = kind_dir / key, kind_dir / f"{key}.complete"
    with open(kind_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if complete.exists() and folder.is_dir():
            return folder
        for old in kind_dir.iterdir() if prune else [folder]:
            if old.name != ".lock" and (old.exists() or old.is_symlink()):
                shutil.rmtree(old) if old.is_dir() and not old.is_symlink() else old.unlink()
        folder.mkdir()
        build(folder)
        complete.touch()
        return folder


def offline_pip_env() -> dict[str, str]:
    """The environment under which pip installs memdir from its source without a package index: a
    wheelhouse of memdir's build backend and of its dependencies (each requirement list's whole
    closure, as `pip wheel` resolves it) for `PIP_FIND_LINKS`, and `PIP_NO_INDEX`. Made once per
    dependency set and Python, in USER_CACHE where a fresh clone on the same machine finds it; a
    change to pyproject.toml's `requires` or `dependencies` makes a new one. Like .venv, it is not
    refreshed otherwise: removing USER_CACHE/wheelhouse/ picks up new releases of the dependencies.
    {} when the wheelhouse cannot be made (no package index): the caller's pip goes to the index."""
    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    lists = [pyproject["build-system"]["requires"], pyproject["project"]["dependencies"]]
    key = hashlib.sha256(json.dumps([sys.version, lists]).encode()).hexdigest()[:20]

    def build(folder: Path) -> None:
        for requirements in lists:  # one resolution each: the build backend's needs are not memdir's
            command = [sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(folder), *requirements]
            done = subprocess.run(command, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                raise OSError(f"pip wheel: exit {done.returncode}: {done.stderr[-500:]}")

    try:
        wheels = cached_build("wheelhouse", key, build, cache=USER_CACHE, prune=False)
    except OSError:
        return {}
    find_links = " ".join(filter(None, [str(wheels), os.environ.get("PIP_FIND_LINKS", "")]))
    return {"PIP_FIND_LINKS": find_links, "PIP_NO_INDEX": "1"}


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("MEMDIR_TODAY", TODAY.isoformat())
    monkeypatch.setenv("NO_COLOR", "1")
    for name in ("MEMDIR_DIR", "VISUAL", "EDITOR", "MEMDIR_DEBUG", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    # What moves or turns off Claude Code's memory folder (memdir/core/claude_code.py): set in a
    # session the tests may run from, and none of a test's business unless it sets one.
    for name in ("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", "CLAUDE_CODE_REMOTE_MEMORY_DIR", "CLAUDE_CODE_PROJECT_DIR_NAME",
                 "CLAUDE_CODE_DISABLE_AUTO_MEMORY"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A module's folder on a tmpfs when there is one, else pytest's tmp_path: for the crash tests'
    many runs, which fsync at every write step. fsync costs nothing there, and what a killed process
    leaves behind is the same (the page cache outlives the process)."""
    import tempfile

    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        path = Path(tempfile.mkdtemp(prefix="memdir-crash-", dir=shm))
        yield path
        shutil.rmtree(path, ignore_errors=True)
    else:
        yield tmp_path_factory.mktemp("crash")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An initialised, empty memory folder."""
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("")
    return root


MakeMemory = Callable[..., Path]


def _field(value: object) -> object:
    """A field value as written: quoted when plain YAML would misread it (a description with ": " in it
    would otherwise make the whole frontmatter invalid, silently); as it is otherwise, so that tests can
    still write dates, numbers, lists, their own quoting and deliberately odd YAML."""
    if isinstance(value, str) and (": " in value or " #" in value) and value[:1] not in "\"'[{":
        return json.dumps(value)
    return value


@pytest.fixture
def make_memory(folder: Path) -> MakeMemory:
    """Write a memory file: make_memory("feedback_x.md", name=..., type=..., body=...)."""

    def make(file_name: str, body: str = "Body.", root: Path | None = None, **fields: object) -> Path:
        fields.setdefault("name", Path(file_name).stem.split("_", 1)[-1])
        fields.setdefault("description", f"About {fields['name']}")
        fields.setdefault("type", file_name.split("_", 1)[0])
        lines = [f"{key}: {_field(value)}" for key, value in fields.items() if value is not None]
        path = (root or folder) / file_name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\n" + "\n".join(lines) + "\n---\n" + textwrap.dedent(body).lstrip("\n"))
        return path

    return make


# --- the Anthropic API, offline ------------------------------------------------------------------


def http_module() -> Any:
    """The HTTP library the installed anthropic SDK is built on: httpx2 from anthropic 2, httpx before."""
    try:
        import httpx2 as http
    except ImportError:  # anthropic < 2 ships with httpx
        import httpx as http  # type: ignore[no-redef]
    return http


def recorded_client(replies: Iterable[tuple[int, dict[str, Any] | str]], sent: list[dict[str, Any]]) -> Any:
    """An Anthropic client whose Messages API answers with recorded `replies`, (status, body) in order,
    and appends the body of every request it gets to `sent`. A body given as text is sent as it is,
    labelled JSON whatever it holds."""
    import anthropic

    http, answers = http_module(), iter(replies)

    def handler(request: Any) -> Any:
        assert request.url.path == "/v1/messages"
        sent.append(json.loads(request.content))
        status, body = next(answers)
        if isinstance(body, str):
            return http.Response(status, content=body.encode(), headers={"content-type": "application/json"})
        return http.Response(status, json=body)

    return anthropic.Anthropic(
        api_key="test-key",
        max_retries=0,
        http_client=anthropic.DefaultHttpxClient(transport=http.MockTransport(handler)),
    )
