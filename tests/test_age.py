"""memdir.core.age: a memory's age from its frontmatter, its file's mtime, or its last commit, and
the one `git log` that dates a fresh clone."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import TODAY, MakeMemory

from memdir.core.age import NO_AGE, Age, AgeSource, FolderAges, git_dates, mtimes_reset
from memdir.folder import MemoryDir

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _noon(day: dt.date, second: int = 0) -> float:
    return time.mktime((day.year, day.month, day.day, 12, 0, second, 0, 0, -1))  # local noon: that date anywhere


def _touch(path: Path, day: dt.date, second: int = 0) -> None:
    os.utime(path, (_noon(day, second), _noon(day, second)))


def _git(repo: Path, *args: str, when: str | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{when}T12:00:00"
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def test_mtimes_reset_means_several_files_written_at_one_moment() -> None:
    at = _noon(TODAY)
    assert mtimes_reset([at, at + 0.3, at + 1.1])  # a checkout takes a moment
    assert not mtimes_reset([at, at])  # two files saved together are a person's edit as likely as a copy
    assert not mtimes_reset([at, at, at + 60])  # one file edited since: the mtimes mean something
    assert not mtimes_reset([])


def test_the_frontmatter_date_comes_first_then_the_mtime(folder: Path, make_memory: MakeMemory) -> None:
    dated = make_memory("user_a.md", updated="2026-03-01")
    undated = make_memory("user_b.md")
    _touch(dated, dt.date(2026, 11, 1))
    _touch(undated, dt.date(2026, 10, 5))
    scan = MemoryDir(folder, today=TODAY).scan()
    ages = {m.path: scan.ages.of(m) for m in scan.memories}
    assert ages == {
        "user_a.md": Age(dt.date(2026, 3, 1), AgeSource.FRONTMATTER),
        "user_b.md": Age(dt.date(2026, 10, 5), AgeSource.MTIME),
    }
    assert [ages[p].describe() for p in sorted(ages)] == ["its date", "its modification time"]


def test_a_memory_the_folder_did_not_list_has_no_age(tmp_path: Path) -> None:
    ages = FolderAges(tmp_path, {"user_a.md": _noon(TODAY)})
    assert ages.age("user_zz.md", None) == NO_AGE  # and a Memory made by hand (mtime 0) the same
    assert FolderAges(tmp_path, {"user_a.md": 0.0}).age("user_a.md", None) == NO_AGE


def test_a_reset_folder_outside_git_has_no_age_for_its_undated_files(folder: Path, make_memory: MakeMemory) -> None:
    for name in ("user_a.md", "user_b.md", "user_c.md"):
        _touch(make_memory(name), dt.date(2026, 11, 20))
    dated = make_memory("user_d.md", created="2026-01-02")
    _touch(dated, dt.date(2026, 11, 20), second=1)
    scan = MemoryDir(folder, today=TODAY).scan()
    assert scan.ages.reset
    assert {m.path: scan.ages.of(m).source for m in scan.memories} == {
        "user_a.md": "none", "user_b.md": "none", "user_c.md": "none", "user_d.md": "frontmatter",
    }  # fmt: skip


@pytest.fixture
def clone(tmp_path: Path, make_memory: MakeMemory) -> Path:
    """A repository whose memory folder had commits on three days, then every mtime set at once."""
    repo = tmp_path / "repo"
    root = repo / "docs" / "memory"
    root.mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "README.md").write_text("outside the memory folder\n")
    make_memory("user_a.md", root=root)
    make_memory("team/user_b c.md", root=root)  # a sub-folder and a space: paths come back as memdir writes them
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one", when="2026-02-03")
    make_memory("user_a.md", root=root, body="Edited.")
    make_memory("user_d.md", root=root, created="2025-12-24")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "two", when="2026-06-07")
    (repo / "README.md").write_text("changed later, outside the folder\n")
    _git(repo, "commit", "-qam", "three", when="2026-09-09")
    make_memory("user_new.md", root=root)  # never committed
    for path in root.rglob("*.md"):
        _touch(path, dt.date(2026, 11, 21))
    return root


@needs_git
def test_in_a_fresh_clone_each_undated_file_is_as_old_as_its_last_commit(clone: Path) -> None:
    scan = MemoryDir(clone, today=TODAY).scan()
    assert scan.ages.reset
    ages = {m.path: scan.ages.of(m) for m in scan.memories}
    assert ages == {
        "user_a.md": Age(dt.date(2026, 6, 7), AgeSource.GIT),  # the last commit that changed it
        "team/user_b c.md": Age(dt.date(2026, 2, 3), AgeSource.GIT),
        "user_d.md": Age(dt.date(2025, 12, 24), AgeSource.FRONTMATTER),  # its own date still comes first
        "user_new.md": NO_AGE,  # git never saw it
    }
    assert ages["user_a.md"].describe() == "its last commit"


@needs_git
def test_one_git_process_dates_the_whole_folder(clone: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real folders hold hundreds of memories: one `git log` for all of them, never one per file."""
    for n in range(40):
        (clone / f"user_more{n}.md").write_text("---\nname: more\ndescription: d\ntype: user\n---\nBody.\n")
    _git(clone, "add", ".")
    _git(clone, "commit", "-qm", "more", when="2026-10-10")
    for path in clone.rglob("*.md"):
        _touch(path, dt.date(2026, 11, 21))
    calls = tmp_path / "calls"
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {shutil.which("git")} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    scan = MemoryDir(clone, today=TODAY).scan()
    sources = [scan.ages.of(m).source for m in scan.memories]
    assert sources.count(AgeSource.GIT) == 43  # all but the dated one (user_new.md is committed now too)
    commands = [next(w for w in line.split() if not w.startswith("-") and "=" not in w and "/" not in w)
                for line in calls.read_text().splitlines()]  # fmt: skip
    assert commands == ["rev-parse", "log"]


@needs_git  # to build the clone; then git is taken off PATH
def test_without_git_a_reset_folder_has_no_ages(clone: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(clone / "no-bin-here"))
    scan = MemoryDir(clone, today=TODAY).scan()
    assert {scan.ages.of(m).source for m in scan.memories} == {AgeSource.NONE, AgeSource.FRONTMATTER}


@needs_git
def test_a_shallow_clone_gives_no_git_dates(clone: Path, tmp_path: Path) -> None:
    """A shallow clone's oldest commit holds every file it did not fetch the history of: its date
    would date them all, wrongly."""
    repo = clone.parent.parent
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True)
    assert git_dates(shallow / "docs" / "memory", {"user_a.md"}) == {}
    assert git_dates(clone, {"user_a.md"}) == {"user_a.md": dt.date(2026, 6, 7)}


def test_a_git_that_hangs_is_stopped_and_dates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\ncase "$*" in *rev-parse*) echo false;; *) exec sleep 60;; esac\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    assert git_dates(tmp_path, {"user_a.md"}, timeout=0.5) == {}
