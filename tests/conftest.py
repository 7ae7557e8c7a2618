"""Shared fixtures. Every test runs with user-level paths (home, Claude's config) in tmp_path."""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

TODAY = dt.date(2026, 11, 22)
SHARED = Path(__file__).resolve().parents[2] / "shared"
REPO = Path(__file__).resolve().parents[1]
# What tests build once and keep between runs (a release's files, pre-commit's hook environment),
# each kind in a folder named by a digest of what it was built from. Ignored by git.
BUILD_CACHE = REPO / ".cache"
# Not the source: git, virtualenvs, caches, build output (.gitignore's list).
NOT_SOURCE = (".git", ".venv", ".cache", "__pycache__", "*.pyc", ".*_cache", "build", "dist", "*.egg-info")


def invoke_memdir(*args: str, input: str | None = None, cwd: Path | None = None, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    """Run the CLI in-process, from `cwd` when given (paths in its output are relative to it)."""
    from typer.testing import CliRunner

    from memdir.cli import app

    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(app, list(args), input=input, env=env)
    finally:
        os.chdir(old)


def source_digest(*extra: str) -> str:
    """A digest of the source tree as a release or a snapshot takes it (every file but NOT_SOURCE's,
    by path and content), the running Python's version and `extra`: what a build from it depends on."""
    import fnmatch

    digest = hashlib.sha256("\0".join((sys.version, *extra)).encode())
    for top, dirs, files in os.walk(REPO):
        dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, pattern) for pattern in NOT_SOURCE))
        for name in sorted(files):
            if not any(fnmatch.fnmatch(name, pattern) for pattern in NOT_SOURCE):
                path = Path(top, name)
                digest.update(f"\0{path.relative_to(REPO).as_posix()}\0".encode())
                digest.update(path.read_bytes() if not path.is_symlink() else os.readlink(path).encode())
    return digest.hexdigest()[:20]


def cached_build(kind: str, key: str, build: Callable[[Path], None]) -> Path:
    """The folder BUILD_CACHE/kind/key, made by `build(folder)` the first time any test of any run
    asks for it. A file lock makes parallel workers wait for the one building; a folder counts only
    once `build` has returned, so a build that failed, skipped or was killed is made again; building
    removes the kind's other keys. Keyed on content (source_digest), a stale build is never found."""
    kind_dir = BUILD_CACHE / kind
    kind_dir.mkdir(parents=True, exist_ok=True)
    folder, complete = kind_dir / key, kind_dir / f"{key}.complete"
    with open(kind_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if complete.exists() and folder.is_dir():
            return folder
        for old in kind_dir.iterdir():
            if old.name != ".lock":
                shutil.rmtree(old) if old.is_dir() and not old.is_symlink() else old.unlink()
        folder.mkdir()
        build(folder)
        complete.touch()
        return folder


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("MEMDIR_TODAY", TODAY.isoformat())
    monkeypatch.setenv("NO_COLOR", "1")
    for name in ("MEMDIR_DIR", "VISUAL", "EDITOR", "MEMDIR_DEBUG", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return home


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
    labelled JSON whatever it holds. Skips the test without the SDK."""
    anthropic = pytest.importorskip("anthropic")
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
