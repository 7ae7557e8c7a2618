"""Atomic writes and the folder lock: concurrent writers all land, nothing is half-written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MakeMemory, memdir_command

from memdir.core.cache import ParseCache
from memdir.core.errors import FolderNotFound, LockTimeout
from memdir.core.store import (
    atomic_write,
    ensure_state_dir,
    folder_lock,
    index_inputs,
    load_file,
    refresh_inputs,
    scan_folder,
)


def test_atomic_write_replaces_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write(target, "new ✓")
    assert target.read_text() == "new ✓"
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]


def test_atomic_write_exclusive_refuses_existing(tmp_path: Path) -> None:
    target = tmp_path / "user_a.md"
    atomic_write(target, "first", exclusive=True)
    with pytest.raises(FileExistsError):
        atomic_write(target, "second", exclusive=True)
    assert target.read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["user_a.md"]


def test_atomic_write_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("x")
    link = tmp_path / "MEMORY.md"
    link.symlink_to(real)
    atomic_write(link, "y")
    assert link.is_symlink() and real.read_text() == "y"


def test_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_text("old")

    def crash(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]


def test_scan_skips_state_archive_hidden_and_nested_indexes(tmp_path: Path) -> None:
    memory = "---\nname: n\ndescription: d\ntype: user\n---\n"
    for rel in (
        "user_a.md",
        "team/user_b.md",
        ".memdir/x.md",
        ".archive/user_c.md",
        ".hidden/user_d.md",
        "team/MEMORY.md",
        "notes.txt",
    ):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memory)
    scan = scan_folder(tmp_path)
    assert [m.path for m in scan.memories] == ["user_a.md", "team/user_b.md"]
    assert scan.problems == []


def test_a_scan_without_a_cache_entry_reads_a_file_in_four_system_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """open, fstat, one read, close: no stat before the open when there is no cache entry to look up
    by it, and no second read to find the end of a file as long as its stat said (a 10,000-file scan
    made 60,000 calls where 40,000 do)."""
    memory = "---\nname: n\ndescription: d\ntype: user\n---\nbody\n"
    for name in ("user_a.md", "user_b.md", "user_c.md"):
        (tmp_path / name).write_text(memory)
    calls: list[str] = []
    for name in ("stat", "lstat", "fstat", "read", "open", "close"):
        real = getattr(os, name)

        def counted(*args: object, _real: object = real, _name: str = name, **kwargs: object) -> object:
            if not isinstance(args[0], str | Path) or str(args[0]).endswith(".md"):  # the files, not the folder
                calls.append(_name)
            return _real(*args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(os, name, counted)
    for cache in (ParseCache.disabled(), ParseCache.load(tmp_path / ".memdir")):
        calls.clear()
        scan = scan_folder(tmp_path, cache)
        assert len(scan.memories) == 3
        per_file = {name: calls.count(name) for name in ("stat", "open", "fstat", "read", "close")}
        assert per_file == {"stat": 0, "open": 3, "fstat": 3, "read": 3, "close": 3}, per_file


def test_concurrent_adds_all_land_and_are_all_indexed(folder: Path) -> None:
    count = 8
    procs = [  # eight processes at once
        subprocess.Popen(
            memdir_command("--dir", str(folder), "-q", "add", "user", f"m{i}", "-d", f"parallel m{i}"),
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(count)
    ]
    errors = [p.communicate()[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * count, errors
    index = (folder / "MEMORY.md").read_text()
    for i in range(count):
        assert (folder / f"user_m{i}.md").exists()
        assert f"(user_m{i}.md) — parallel m{i}" in index
    assert index.count("\n") == count


def test_the_lock_excludes_a_second_holder(folder: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys, time\nfrom pathlib import Path\nfrom memdir.core.store import folder_lock\n"
            "with folder_lock(Path(sys.argv[1])):\n    print('held', flush=True)\n    time.sleep(600)\n"
        ), str(folder)],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(LockTimeout), folder_lock(folder, timeout=0.2):
            pass
    finally:
        holder.kill()
        holder.wait()
    with folder_lock(folder, timeout=1):  # released when the holder dies
        pass


def test_state_never_brings_back_a_removed_folder(tmp_path: Path) -> None:
    gone = tmp_path / "memory"
    with pytest.raises(FolderNotFound, match="does not exist"):
        ensure_state_dir(gone)
    with pytest.raises(FolderNotFound), folder_lock(gone):
        pass
    assert not gone.exists()


def test_a_parse_cache_saved_after_its_folder_went_away_is_dropped_quietly(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    memory = root / "user_a.md"
    memory.write_text("---\nname: a\ndescription: b\ntype: user\n---\nBody.\n")
    os.utime(memory, (1_700_000_000, 1_700_000_000))  # old enough for the cache to keep it
    cache = ParseCache.load(root / ".memdir")
    load_file(str(memory), "user_a.md", cache)  # a parsed file the cache has yet to save
    memory.unlink()
    root.rmdir()
    cache.save()
    assert not root.exists()


def _inputs(root: Path) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """index_inputs, as comparable values."""
    memories, problems = index_inputs(root, ParseCache.disabled())
    return [(m.path, m.title, m.description) for m in memories], [(p.path, p.kind) for p in problems]


def _memory(path: Path, name: str, description: str = "about it") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: user\n---\nBody.\n")


def test_refreshing_the_changed_files_gives_what_a_full_listing_gives(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    for rel in ("user_b.md", "user_d.md", "sub/user_c.md", "sub/deeper/user_e.md", "zz/user_f.md"):
        _memory(root / rel, Path(rel).stem)
    (root / "broken.md").write_text('---\nname: "unclosed\n---\n')
    memories, problems = index_inputs(root, ParseCache.disabled())
    _memory(root / "user_a.md", "a")  # added
    _memory(root / "sub/user_c.md", "c", "changed")  # changed
    (root / "user_d.md").unlink()  # removed
    (root / "broken.md").write_text("---\nname: fixed\ndescription: now fine\ntype: user\n---\n")  # repaired
    (root / "zz/user_f.md").write_text("\x00binary")  # broken
    changed = ["user_a.md", "sub/user_c.md", "user_d.md", "broken.md", "zz/user_f.md", "gone/never.md"]
    refreshed = refresh_inputs(root, memories, problems, changed)
    assert refreshed is not None
    assert (
        [(m.path, m.title, m.description) for m in refreshed[0]],
        [(p.path, p.kind) for p in refreshed[1]],
    ) == _inputs(root)
    assert refreshed[0][0].path == "broken.md" and refreshed[1][0].path == "zz/user_f.md"


@pytest.mark.parametrize("change", ["folder", "folder.md", "link.md", "sub", "nested.md"])
def test_a_change_that_is_more_than_a_file_asks_for_a_full_listing(tmp_path: Path, change: str) -> None:
    root = tmp_path / "memory"
    _memory(root / "user_a.md", "a")
    _memory(root / "nested.md/user_b.md", "b")
    _memory(root / "sub/user_c.md", "c")
    memories, problems = index_inputs(root, ParseCache.disabled())
    (root / "folder.md").mkdir()
    (root / "link.md").symlink_to(root / "user_a.md")
    assert refresh_inputs(root, memories, problems, [change]) is None


def test_a_cold_index_keeps_no_memory_text(folder: Path, make_memory: MakeMemory) -> None:
    """The index needs rows, not texts: a cold run over a large folder held every file's text twice
    (its Memory and the parse cache's copy), 199 MB on a realistic 10,000-memory folder, now 139."""
    from memdir.core.index import IndexRow
    from memdir.folder import MemoryDir

    for i in range(5):
        make_memory(f"user_{i}.md", body="A body worth keeping out of memory. " * 20)
    write = MemoryDir(folder).write_index()
    assert len(write.inputs) == 5 and all(isinstance(row, IndexRow) for row in write.inputs)
