"""The memory folder on disk: finding and loading memory files, atomic writes, and the lock.

Loading never raises for a bad file: each one becomes a FileProblem that names it, so one broken
memory cannot stop the others from being indexed or linted.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memdir.errors import FolderNotFound, LockTimeout
from memdir.model import INDEX_NAME, Document, FrontmatterError, Memory, parse_document

STATE_DIR = ".memdir"
ARCHIVE_DIR = ".archive"
MAX_FILE_BYTES = 1024 * 1024  # a memory is a few hundred bytes; a megabyte is something else
LOCK_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class FileProblem:
    """A file in the folder that could not be loaded as a memory, and why."""

    path: str  # POSIX, relative to the folder
    kind: str  # no-frontmatter | invalid-frontmatter | unreadable | symlink-outside
    message: str
    line: int | None = None


@dataclass
class Scan:
    """Everything found in the folder in one pass."""

    root: Path
    memories: list[Memory] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)

    @property
    def files_seen(self) -> int:
        return len(self.memories) + len(self.problems)


def _is_inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def scan_folder(root: Path) -> Scan:
    """Load every `*.md` file under `root` except indexes, tool state, the archive and dot-folders."""
    root = Path(root)
    if not root.is_dir():
        raise FolderNotFound(f"memory folder {root} does not exist; run `memdir init` to create it")
    real_root = root.resolve()
    scan = Scan(root=root)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in list(dirnames):
            sub = here / name
            rel = sub.relative_to(root).as_posix()
            if sub.is_symlink():
                if not _is_inside(sub.resolve(), real_root):
                    scan.problems.append(FileProblem(rel, "symlink-outside", _symlink_message(sub, "folder")))
            elif name.endswith(".md"):
                scan.problems.append(FileProblem(rel, "unreadable", "is a directory, not a memory file"))
        for name in sorted(filenames):
            if name == INDEX_NAME and (here / name).is_symlink() and not _is_inside((here / name).resolve(), real_root):
                rel = (here / name).relative_to(root).as_posix()
                scan.problems.append(FileProblem(rel, "symlink-outside", _symlink_message(here / name, "index")))
            if not name.endswith(".md") or name == INDEX_NAME or name.startswith("."):
                continue
            loaded = load_file(root, real_root, here / name)
            if isinstance(loaded, Memory):
                scan.memories.append(loaded)
            elif loaded is not None:
                scan.problems.append(loaded)
    return scan


def _symlink_message(path: Path, what: str) -> str:
    return f"is a symlinked {what} pointing outside the memory folder ({os.readlink(path)}); not followed"


def load_file(root: Path, real_root: Path, path: Path) -> Memory | FileProblem | None:
    """Load one file as a memory, or say why it cannot be one. None for a symlink inside."""
    rel = path.relative_to(root).as_posix()
    if path.is_symlink():
        target = path.resolve()
        if not _is_inside(target, real_root):
            return FileProblem(rel, "symlink-outside", _symlink_message(path, "file"))
        # A link to another file in the folder would index the same memory twice.
        return None
    try:
        status = path.stat()
        size, mtime = status.st_size, status.st_mtime
        if size > MAX_FILE_BYTES:
            return FileProblem(
                rel, "unreadable", f"is {size:,} bytes; memory files are small (limit {MAX_FILE_BYTES:,})"
            )
        raw = path.read_bytes()
    except OSError as exc:
        return FileProblem(rel, "unreadable", f"cannot be read: {exc.strerror or exc}")
    if b"\x00" in raw:
        return FileProblem(rel, "unreadable", "is a binary file, not markdown")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return FileProblem(rel, "unreadable", f"is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at line {line})", line)
    try:
        doc: Document = parse_document(text)
    except FrontmatterError as exc:
        return FileProblem(rel, "invalid-frontmatter", str(exc), exc.line)
    if not doc.has_frontmatter:
        return FileProblem(rel, "no-frontmatter", "has no frontmatter, so it is not a memory")
    return Memory(path=rel, doc=doc, mtime=mtime)


def read_text_if_exists(path: Path) -> str | None:
    """The file's text, None if it does not exist. Raises UnicodeDecodeError for non-UTF-8."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None


# --- writing -------------------------------------------------------------------------------


def atomic_write(path: Path, text: str, *, exclusive: bool = False) -> None:
    """Replace `path` with `text` so that readers see the old file or the new one, never half.

    Writes a temporary file in the same folder, fsyncs it and renames it over the target. With
    `exclusive`, refuses (FileExistsError) when the target already exists. A symlinked target is
    written through, so the link survives.
    """
    path = Path(path)
    if path.is_symlink():
        path = path.resolve()
    if exclusive and path.exists():
        raise FileExistsError(errno.EEXIST, "file exists", str(path))
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())
        if exclusive:
            # link() fails if the target appeared meanwhile, where replace() would overwrite it.
            os.link(tmp, path)
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform or file system allows it
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def ensure_state_dir(root: Path) -> Path:
    """Create `<root>/.memdir/`, which ignores itself for git."""
    state = root / STATE_DIR
    state.mkdir(parents=True, exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, "# memdir's own state: locks, caches, logs. Not for git.\n*\n")
    return state


@contextlib.contextmanager
def folder_lock(root: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Serialise writers of one memory folder with an flock on `.memdir/lock`."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no flock; writes stay atomic, not serialised
        yield
        return
    lock_path = ensure_state_dir(root) / "lock"
    with open(lock_path, "a+") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockTimeout(f"another memdir process has held {lock_path} for over {timeout:.0f}s") from None
                time.sleep(0.02)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
