"""The memory folder on disk: finding and loading memory files, atomic writes, and the lock.

Loading never raises for a bad file: each one becomes a FileProblem that names it, so one broken
memory cannot stop the others from being indexed or linted.

Over 500 lines: every way memdir touches the disk (listing, loading, atomic writes, state files
opened without following links, logs, the lock) is here, so that the rules are in one place.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import stat
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, BinaryIO

from memdir.core.cache import ParseCache, file_key
from memdir.core.errors import FolderNotFound, InvalidMemory, LockTimeout, StateRefused
from memdir.core.index import Indexable, IndexRow, split_lines
from memdir.core.inputs import parse_json
from memdir.core.model import INDEX_NAME, Document, FrontmatterError, Memory, parse_document

if TYPE_CHECKING:
    from memdir.core.age import FolderAges

STATE_DIR = ".memdir"
ARCHIVE_DIR = ".archive"
MAX_FILE_BYTES = 1024 * 1024  # a memory is a few hundred bytes; a megabyte is something else
LOCK_TIMEOUT_SECONDS = 30.0


def too_large(size: int) -> str | None:
    """Why a memory file of `size` bytes is refused, by the readers and so by the writers: a file
    no reader loads must never be written. None when it fits."""
    if size <= MAX_FILE_BYTES:
        return None
    return f"{size:,} bytes; memory files are small (limit {MAX_FILE_BYTES:,})"


@dataclass(frozen=True)
class FileProblem:
    """A file in the folder that could not be loaded as a memory, and why."""

    path: str  # POSIX, relative to the folder
    kind: str  # no-frontmatter | invalid-frontmatter | unreadable | symlink-outside
    message: str
    line: int | None = None

    @property
    def unreadable(self) -> bool:
        """Worth telling people about: a memory that could not be read. A file with no frontmatter is
        not one; it is simply not a memory (lint F001 says so)."""
        return self.kind != "no-frontmatter"


def unreadable_note(count: int) -> str:
    """'1 file could not be read as a memory', '2 files ... as memories', or '' for none."""
    if not count:
        return ""
    return "1 file could not be read as a memory" if count == 1 else f"{count:,} files could not be read as memories"


@dataclass
class Scan:
    """Everything found in the folder in one pass."""

    root: Path
    memories: list[Memory] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    # st_mtime of every file read, memory or not: what FolderAges judges a checkout by, as the recall
    # index's listing does.
    mtimes: dict[str, float] = field(default_factory=dict)
    _ages: FolderAges | None = field(default=None, repr=False, compare=False)

    @property
    def files_seen(self) -> int:
        return len(self.memories) + len(self.problems)

    @property
    def ages(self) -> FolderAges:
        """Each memory's age (memdir.core.age), made once for this scan."""
        if self._ages is None:
            from memdir.core.age import FolderAges  # not for `index` in a session-start hook, which needs none

            self._ages = FolderAges(self.root, self.mtimes)
        return self._ages


def resolved(path: Path) -> Path:
    """`path` with every symlink followed. Raises OSError (ELOOP) for a symlink loop, which
    Path.resolve reports as RuntimeError before Python 3.13."""
    try:
        return path.resolve()
    except RuntimeError:
        raise OSError(errno.ELOOP, "symlink loop", str(path)) from None


def _is_inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def scan_folder(root: Path, cache: ParseCache | None = None) -> Scan:
    """Load every `*.md` file under `root` except indexes, tool state, the archive and dot-folders.

    Files are visited in sorted order, a folder's own files before its sub-folders'. With a
    `cache`, unchanged files come from it instead of being read and parsed again.
    """
    scan = Scan(root=Path(root))
    cache = cache or ParseCache.disabled()
    for item in list_files(Path(root)):
        if isinstance(item, FileProblem):
            scan.problems.append(item)
            continue
        rel, path = item
        loaded = load_file(path, rel, cache)
        if isinstance(loaded, Memory):
            scan.memories.append(loaded)
            scan.mtimes[rel] = loaded.mtime
        else:
            scan.problems.append(loaded)
            with contextlib.suppress(OSError):  # a file that is there but is no memory (no frontmatter, say)
                scan.mtimes[rel] = os.stat(path, follow_symlinks=False).st_mtime
    cache.save()
    return scan


def index_inputs(root: Path, cache: ParseCache) -> tuple[list[Indexable], list[FileProblem]]:
    """What the index needs of every memory under `root`, and the files that are not memories.

    Like scan_folder, but an unchanged file costs a stat and a row of the cache: its text is
    neither read nor decoded. A memory that had to be loaded is returned as its row too: the index
    needs no text, and a cold run over a large folder must not hold every file's text twice."""
    rows: list[Indexable] = []
    problems: list[FileProblem] = []
    for item in list_files(Path(root)):
        if isinstance(item, FileProblem):
            problems.append(item)
            continue
        rel, path = item
        status: os.stat_result | None = None
        if cache.has(rel):  # else there is no row to look up, and load_file takes the stat of the open file
            with contextlib.suppress(OSError):  # load_file says why
                status = os.stat(path, follow_symlinks=False)
        row = cache.row(rel, file_key(status)) if status is not None else None
        loaded = row or load_file(path, rel, cache, status)
        if isinstance(loaded, FileProblem):
            problems.append(loaded)
        elif isinstance(loaded, Memory):  # the row the cache made of it, else one made here: rendered once
            rows.append(cache.made_row(rel) or IndexRow.of(loaded))
        else:
            rows.append(loaded)
    cache.save()
    return rows, problems


def refresh_inputs(
    root: Path, memories: Sequence[Indexable], problems: Sequence[FileProblem], changed: Iterable[str]
) -> tuple[list[Indexable], list[FileProblem]] | None:
    """What index_inputs would return now, from what it returned before and the files changed
    since, which are the only ones read (a watcher knows them). None when a change is more than
    a file's, such as a folder or a symlink appearing or going: then the folder must be listed.
    `changed` must be the whole truth; a change it misses stays missed."""
    items: dict[str, Indexable | FileProblem] = {m.path: m for m in memories}
    items.update((p.path, p) for p in problems)
    folders = {rel.rpartition("/")[0] for rel in items}
    for rel in changed:
        parts = rel.split("/")
        if not rel.endswith(".md") or rel in folders or any(p.startswith(".") or p in ("", "..") for p in parts):
            return None
        path = os.path.join(root, rel)
        try:
            status = os.stat(path, follow_symlinks=False)
            if any(os.path.islink(os.path.join(root, *parts[:i])) for i in range(1, len(parts))):
                return None  # a file inside a symlinked folder, which the listing does not enter
        except FileNotFoundError:
            items.pop(rel, None)
            continue
        except OSError:
            return None
        if not stat.S_ISREG(status.st_mode) or parts[-1] == INDEX_NAME:
            return None
        loaded = load_file(path, rel, ParseCache.disabled(), status)
        items[rel] = IndexRow.of(loaded) if isinstance(loaded, Memory) else loaded
    ordered = sorted(items.items(), key=lambda item: _listing_order(item[0]))
    return (
        [item for _, item in ordered if not isinstance(item, FileProblem)],
        [item for _, item in ordered if isinstance(item, FileProblem)],
    )


def _listing_order(rel: str) -> tuple[tuple[int, str], ...]:
    """Where `list_files` puts `rel`: by name, a folder's own files before its sub-folders'."""
    *folders, name = rel.split("/")
    return (*((1, folder) for folder in folders), (0, name))


def list_files(root: Path) -> list[tuple[str, str] | FileProblem]:
    """The candidate memory files under `root` as (relative path, path), in scan order, with the
    entries that are problems in themselves (symlinks out of the folder, folders named *.md)."""
    if not root.is_dir():
        raise FolderNotFound.at(root, "run `memdir init` to create it")
    found: list[tuple[str, str] | FileProblem] = []
    real_root = root.resolve()
    # Depth first with a stack of its own, not recursion: a thousand nested folders would exhaust
    # Python's recursion limit. Sub-folders are pushed in reverse so they are visited in name order.
    pending = [(str(root), "")]
    while pending:
        folder, prefix = pending.pop()
        subfolders = _list_dir(found, real_root, folder, prefix)
        pending.extend((os.path.join(folder, name), f"{prefix}{name}/") for name in reversed(subfolders))
    return found


def _list_dir(found: list[tuple[str, str] | FileProblem], real_root: Path, folder: str, prefix: str) -> list[str]:
    """One folder of the listing, added to `found`; returns its sub-folders to list, in order. `prefix`
    is its path relative to the root, ending in '/'. A sub-folder that cannot be listed is a problem
    of its own (the root's failure is the caller's)."""
    try:
        with os.scandir(folder) as listed:
            entries = sorted(listed, key=lambda e: e.name)
    except OSError as exc:
        if not prefix:
            raise
        found.append(
            FileProblem(prefix.rstrip("/"), "unreadable", f"is a folder that cannot be listed ({exc.strerror})")
        )
        return []
    subfolders: list[str] = []
    for entry in entries:
        if entry.name.startswith(".") or not _is_dir(entry):
            continue
        rel = prefix + entry.name
        if entry.is_symlink():
            problem = _link_problem(entry, rel, real_root, "folder")
            if problem is not None:
                found.append(problem)
            continue  # a link to a folder inside would scan it twice
        if entry.name.endswith(".md"):
            found.append(FileProblem(rel, "unreadable", "is a directory, not a memory file"))
        subfolders.append(entry.name)
    for entry in entries:
        name = entry.name
        if not name.endswith(".md") or name.startswith(".") or _is_dir(entry):
            continue
        if entry.is_symlink():
            problem = _link_problem(entry, prefix + name, real_root, "index" if name == INDEX_NAME else "file")
            if problem is not None:
                found.append(problem)
            continue  # a link to another file in the folder would load the same memory twice
        if not _is_file(entry):  # a named pipe would block the read that opens it, waiting for a writer
            found.append(FileProblem(prefix + name, "unreadable", _NOT_REGULAR))
        elif name != INDEX_NAME:
            found.append((prefix + name, entry.path))
    return subfolders


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # POSIX; Windows has no named pipes in the file system
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation under a byte-exact reader
_NOT_REGULAR = "is not a regular file (a named pipe, socket or device); memdir does not open it"


class NotRegularFile(OSError):
    """A file of `.memdir/` that is a named pipe, socket or device: reading or appending to it would
    wait for another process, maybe forever, so memdir does neither."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(errno.EINVAL, _NOT_REGULAR.removeprefix("is "), str(path))

    def __str__(self) -> str:
        return f"{self.strerror}: {self.filename}"


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return True  # gone or unreadable: load_file says which


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows symlinks, as os.walk does to tell folders from files
    except OSError:
        return False


def _link_problem(entry: os.DirEntry[str], rel: str, real_root: Path, what: str) -> FileProblem | None:
    """What is wrong with a symlink in the folder, if anything: it leads outside, or nowhere."""
    try:
        target = os.readlink(entry.path)
        inside = _is_inside(resolved(Path(entry.path)), real_root)
    except OSError:
        return FileProblem(rel, "unreadable", f"is a symlinked {what} that leads in a loop; not followed")
    if inside:
        return None
    return FileProblem(
        rel, "symlink-outside", f"is a symlinked {what} pointing outside the memory folder ({target}); not followed"
    )


def load_file(path: str, rel: str, cache: ParseCache, status: os.stat_result | None = None) -> Memory | FileProblem:
    """Load one regular file as a memory, or say why it cannot be one. `status` is its stat when
    the caller already has it."""
    fd = -1
    try:
        if status is None and not cache.has(rel):  # nothing to look up: the open file's own stat will do
            fd, status = _open_regular_status(path, os.O_RDONLY)
        else:
            status = status or os.stat(path, follow_symlinks=False)
            if not stat.S_ISREG(status.st_mode):  # it was replaced since it was listed
                return FileProblem(rel, "unreadable", _NOT_REGULAR)
        size = status.st_size
        if (why := too_large(size)) is not None:
            return FileProblem(rel, "unreadable", f"is {why}")
        key = file_key(status)
        if fd < 0:
            cached = cache.get(rel, key)
            if cached is not None:
                return Memory(path=rel, doc=cached, mtime=status.st_mtime)
            # Checked again once open: a file swapped for a named pipe since the stat must not block.
            fd = _open_regular(path, os.O_RDONLY)
        # Read from the descriptor: a buffered file object costs more than a small file's read. One
        # read of one byte more than the stat said is the whole file, unless it grew or came short.
        raw = os.read(fd, size + 1)  # not MAX_FILE_BYTES: that allocates a megabyte a file
        if len(raw) < size:
            raw += _read_upto(fd, size + 1 - len(raw))
        if len(raw) > size:  # it grew since the stat
            raw += _read_upto(fd, MAX_FILE_BYTES + 1 - len(raw))
    except NotRegularFile:
        return FileProblem(rel, "unreadable", _NOT_REGULAR)
    except OSError as exc:
        return FileProblem(rel, "unreadable", f"cannot be read: {exc.strerror or exc}")
    finally:
        if fd >= 0:
            os.close(fd)
    if len(raw) > MAX_FILE_BYTES:  # it grew after the stat
        return FileProblem(rel, "unreadable", f"is over {MAX_FILE_BYTES:,} bytes; memory files are small")
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
    memory = Memory(path=rel, doc=doc, mtime=status.st_mtime)
    if len(raw) == size:  # else the file changed while it was read: do not tie this text to its key
        cache.put(rel, key, memory)
    return memory


def _read_upto(fd: int, count: int) -> bytes:
    """Up to `count` bytes from `fd`, fewer only at its end (a read may return less than asked)."""
    parts: list[bytes] = []
    while count > 0:
        part = os.read(fd, count)
        if not part:
            break
        parts.append(part)
        count -= len(part)
    return b"".join(parts)


def read_text_if_exists(path: Path) -> str | None:
    """The file's text, None if it does not exist. Raises UnicodeDecodeError for non-UTF-8."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None


# --- writing -------------------------------------------------------------------------------


def atomic_write(
    path: Path, text: str | bytes, *, exclusive: bool = False, durable: bool = True, follow_symlinks: bool = True
) -> None:
    """Replace `path` with `text` so that readers see the old file or the new one, never half.

    Writes a temporary file in the same folder, fsyncs it and renames it over the target. With
    `exclusive`, refuses (FileExistsError) when the target already exists. A symlinked target is
    written through, so the link survives; with `follow_symlinks=False` the link itself is replaced
    (memdir's own files: see write_state_file). `durable=False` skips the fsyncs, for files such as
    caches that may be lost in a crash but must never be seen half-written.
    """
    path = Path(path)
    if follow_symlinks and path.is_symlink():
        path = resolved(path)
    try:
        status: os.stat_result | None = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        status = None
    if exclusive and status is not None:
        raise FileExistsError(errno.EEXIST, "file exists", str(path))
    mode = status.st_mode & 0o7777 if status is not None and stat.S_ISREG(status.st_mode) else None
    fd, tmp = _new_temporary(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
            handle.flush()
            if durable:
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
    if durable:
        _fsync_dir(path.parent)


def _new_temporary(path: Path) -> tuple[int, str]:
    """A new file `.<name>.<random>.tmp` beside `path`, open for writing and private to this process,
    as tempfile.mkstemp makes it. Not tempfile itself: it imports shutil, random and the compressors,
    a tenth of the start-up of a `memdir index` that rewrites one file."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):  # as mkstemp: a name taken meanwhile is tried again with another
        tmp = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", str(path.parent))


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


LOG_MAX_BYTES = 10 * 1024 * 1024  # a log in .memdir/ past this starts afresh, keeping one old generation


def rotate_log(path: Path, incoming: int = 0) -> None:
    """When `incoming` more bytes would take the log at `path` past LOG_MAX_BYTES, rename it to
    `<name>.1` (replacing an older one). For a log another program writes into (the extract hook's
    output); the logs memdir appends to itself rotate under their lock (`append_lines(rotate=True)`)."""
    try:
        status = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return
    # Not a log's size but a link's or a pipe's: left in place, for the append to refuse and name it.
    if stat.S_ISREG(status.st_mode) and status.st_size + incoming > LOG_MAX_BYTES:
        # FileNotFoundError: rotated by another hook in the meantime. PermissionError: open in a
        # reader on Windows, which renames no open file; it rotates next time.
        with contextlib.suppress(FileNotFoundError, PermissionError):
            os.replace(path, older_generation(path))


def older_generation(path: Path) -> Path:
    """Where a rotated log's previous generation is kept: `<name>.1`."""
    return path.with_name(path.name + ".1")


def append_lines(path: Path, data: bytes, *, durable: bool = False, rotate: bool = False) -> None:
    """Append whole lines to a log, whole or not at all; `durable` waits for the disk; `rotate` first
    renames a log that `data` would take past LOG_MAX_BYTES to `<name>.1`. Raises OSError (ENOSPC on
    a full disk) with the log as it was, and NotRegularFile for a named pipe, socket, device or
    symlink in the log's place.

    The lines go in one O_APPEND write, under an flock of the log that every append takes, so
    writers at once never interleave within a line. write(2) on a nearly full disk writes what fits
    and says so: what was written is cut off again before the error is raised. A torn last line
    left by something else (a power cut, an older memdir) is ended with a newline first, so it stays
    a line of its own that readers skip, instead of swallowing the first line appended after it.
    """
    fd, _ = _locked_log(path, len(data) if rotate else None)
    try:
        start = os.fstat(fd).st_size
        if start and os.pread(fd, 1, start - 1) != b"\n":
            data = b"\n" + data
        written = 0
        try:
            while written < len(data):
                written += os.write(fd, data[written:])
            if durable:
                os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)  # the flock keeps other appenders out: these bytes are ours
            raise
    finally:
        os.close(fd)  # and with it the flock


def _locked_log(path: Path, incoming: int | None) -> tuple[int, bool]:
    """The log at `path`, opened for appending and flocked, and whether it is (False: no flock on this
    platform); rotated first when `incoming` (None: never rotate) more bytes would take a non-empty
    log past LOG_MAX_BYTES.

    The size is judged and the rename made under the lock, and a writer that waited for the lock
    checks that the file it holds is still the one at `path`: another writer may have rotated it in
    the meantime, and then its lines belong in the new log, not in the old generation it was renamed
    to, and a second rotation would put the new log's few lines over the whole old generation."""
    while True:
        fd = _open_regular(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            locked = _lock_log(fd)
            held = os.fstat(fd)
            if _identity(path) != (held.st_dev, held.st_ino):  # rotated (or removed) while we waited
                os.close(fd)
                continue
            if incoming is not None and held.st_size and held.st_size + incoming > LOG_MAX_BYTES:
                if locked:
                    os.replace(path, older_generation(path))
                    os.close(fd)
                else:  # Windows: no lock to keep, and no renaming a file that is open
                    os.close(fd)
                    fd = -1  # not closed again below should the rename fail
                    try:
                        os.replace(path, older_generation(path))
                    except PermissionError:  # a reader has it open (stats): this line goes in as it is,
                        incoming = None  # and a later append rotates it
                continue
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise
        return fd, locked


@contextlib.contextmanager
def log_lock(path: Path) -> Iterator[None]:
    """Hold the lock of the log at `path` that every append takes and every rotation is made under:
    a rewrite of the log and of its older generation (`rm --purge`) that no append, and no rotation
    replacing either file, can come between. Creates the log when it is missing."""
    fd, locked = _locked_log(path, None)
    if not locked:  # Windows: nothing to hold, and an open file could not be replaced
        os.close(fd)
        yield
        return
    try:
        yield
    finally:
        os.close(fd)


def _lock_log(fd: int) -> bool:
    """An exclusive flock of an open log, held until it is closed; False on Windows (no flock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return False
    fcntl.flock(fd, fcntl.LOCK_EX)
    return True


# --- memdir's own files: .memdir/ and .archive/ ----------------------------------------------------
#
# Everything memdir keeps of its own (locks, logs, caches, the previous index, drafts, archived
# memories) stays inside the memory folder. A folder someone cloned can hold a `.memdir` or
# `.archive` symlink, or a symlink in place of a log: each folder is checked (checked_folder) and
# each file opened without following a final symlink (_open_regular) or replaced rather than
# written through (write_state_file).

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # POSIX; Windows symlinks need privileges to make
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class SymlinkRefused(NotRegularFile):
    """A symlink where memdir keeps a file of its own: following it could read or write any file on
    the machine, so memdir does neither."""

    def __init__(self, path: Path | str) -> None:
        message = "a symlink, not followed (memdir's own files must be regular files; remove the link)"
        OSError.__init__(self, errno.ELOOP, message, str(path))


def checked_folder(path: Path, *, create: bool = False) -> Path:
    """`path`, a folder memdir keeps its own files in (`.memdir/`, `.archive/`, a folder inside them),
    created when missing with `create`. Raises StateRefused when a symlink or anything but a folder
    stands there: whatever memdir put in it could be outside the memory folder."""
    if create:
        with contextlib.suppress(FileExistsError):  # mkdir never follows a symlink standing there
            os.mkdir(path)
    try:
        status = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        if create:
            raise
        return path  # nothing there yet: whoever needs it creates it, through here
    if stat.S_ISLNK(status.st_mode):
        target = os.readlink(path)
        raise StateRefused(
            f"{path} is a symlink (to {target}); memdir keeps its own files only in a real folder inside the "
            f"memory folder. Replace the link by a folder (move in what it should keep)"
        )
    if not stat.S_ISDIR(status.st_mode):
        raise StateRefused(f"{path} is not a folder; memdir keeps its own files there. Move it away or rename it")
    return path


def ensure_state_dir(root: Path) -> Path:
    """Create `<root>/.memdir/`, which ignores itself for git, and return it, checked (StateRefused
    for a symlink or a file there). Raises FolderNotFound when `root` itself is gone: a lock or a
    log must never bring back a folder someone removed."""
    try:
        state = checked_folder(root / STATE_DIR, create=True)
    except FileNotFoundError:
        raise FolderNotFound(f"memory folder {root} does not exist (was it removed?)") from None
    ignore = state / ".gitignore"
    if not os.path.lexists(ignore):
        write_state_file(ignore, "# memdir's own state: locks, caches, logs. Not for git.\n*\n", durable=True)
    return state


def state_dir(root: Path) -> Path:
    """`<root>/.memdir/` to read from: checked as ensure_state_dir does, never created."""
    return checked_folder(root / STATE_DIR)


def state_subfolder(root: Path, name: str) -> Path:
    """`<root>/.memdir/<name>/` (drafts, staged requests), created and checked."""
    return checked_folder(ensure_state_dir(root) / name, create=True)


def archive_dir(root: Path) -> Path:
    """`<root>/.archive/`, checked (StateRefused for a symlink or a file there), not created."""
    return checked_folder(root / ARCHIVE_DIR)


def archive_folder_for(root: Path, rel: str) -> Path:
    """The folder of the archive that the memory at `rel` (relative to `root`) goes into, created
    and checked at every level: `.archive/team/` is as much memdir's as `.archive/` itself."""
    folder = checked_folder(root / ARCHIVE_DIR, create=True)
    for part in Path(rel).parent.parts:
        folder = checked_folder(folder / part, create=True)
    return folder


def make_folders(root: Path, paths: Iterable[str]) -> list[Path]:
    """Make the missing sub-folders that new files (POSIX paths relative to `root`) go into; the
    ones made, outermost first. Raises InvalidMemory for a path outside `root` or in a dot-folder,
    or through a sub-folder that leads outside it."""
    made: list[Path] = []
    for path in paths:
        parts = PurePosixPath(path).parts
        if PurePosixPath(path).is_absolute() or ".." in parts or any(p.startswith(".") for p in parts[:-1]):
            raise InvalidMemory(f"{path}: a memory's file must be inside the folder, outside its dot-folders")
        for parent in reversed(PurePosixPath(path).parents[:-1]):
            folder = root / parent
            if not folder.is_dir():
                folder.mkdir()
                made.append(folder)
            elif not _is_inside(resolved(folder), resolved(root)):
                raise InvalidMemory(f"{parent} leads outside the memory folder; memdir will not write there")
    return made


def escapes(root: Path) -> list[tuple[str, str]]:
    """The paths of `root` that memdir refuses to use, each with why: a `.memdir` or `.archive` that
    is a symlink or not a folder, and a MEMORY.md that is a symlink (lint S007 reports them)."""
    found = []
    for name in (STATE_DIR, ARCHIVE_DIR):
        try:
            checked_folder(root / name)
        except StateRefused as exc:
            found.append((name, str(exc).removeprefix(str(root / name)).lstrip()))
    if os.path.islink(root / INDEX_NAME):
        found.append((INDEX_NAME, index_link_refusal(root / INDEX_NAME).removeprefix(str(root / INDEX_NAME)).lstrip()))
    return found


def index_link_refusal(path: Path) -> str:
    """Why MEMORY.md at `path`, a symlink, is neither read nor written: wherever it points, the index
    would be written into another file (a memory's body, a file outside the folder)."""
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return (
        f"{path} is a symlink (to {target}); memdir does not read or write the index through a link. "
        "Replace it by a regular file"
    )


def write_state_file(path: Path, data: str | bytes, *, durable: bool = False, exclusive: bool = False) -> None:
    """Write one of memdir's own files atomically, in a folder the caller has checked: a symlink in
    its place is replaced, never written through (atomic_write)."""
    atomic_write(path, data, durable=durable, exclusive=exclusive, follow_symlinks=False)


def read_state_text(path: Path) -> str | None:
    """The text of one of memdir's own small files (a cursor, a lock's holder), None when missing.
    Raises NotRegularFile (SymlinkRefused among them) for anything but a regular file, at once, and
    UnicodeDecodeError for bytes that are not UTF-8."""
    try:
        handle = open_state_file(path)
    except FileNotFoundError:
        return None
    with handle:
        return handle.read().decode("utf-8")


def open_state_file(path: Path, *, append: bool = False) -> BinaryIO:
    """Open a file of `.memdir/` (a log, a cache, an index) to read, or with `append` to add to (created
    when missing). Raises NotRegularFile, at once, when a named pipe, socket, device or symlink is in
    its place, and OSError as open() does."""
    if append:
        return open(_open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab")
    return open(_open_regular(path, os.O_RDONLY), "rb")


def _open_regular(path: Path | str, flags: int) -> int:
    """A descriptor of the regular file at `path`, opened with `flags` (O_CREAT creates it). Never
    follows a symlink at `path` (SymlinkRefused: O_CREAT would create its target, anywhere) and
    never waits: opening a named pipe blocks until the other end is opened too, so it is opened
    non-blocking (to write with no reader, that fails with ENXIO) and then refused."""
    return _open_regular_status(path, flags)[0]


def _open_regular_status(path: Path | str, flags: int) -> tuple[int, os.stat_result]:
    """_open_regular, and the stat of the file it opened."""
    try:
        fd = os.open(path, flags | _NONBLOCK | _BINARY | _NOFOLLOW | _CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a named pipe without a reader, a socket, a device with no unit
            raise NotRegularFile(path) from None
        if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):  # EMLINK: FreeBSD's word
            raise SymlinkRefused(path) from None
        raise
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegularFile(path)
    except BaseException:
        os.close(fd)
        raise
    return fd, status


def iter_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a log, one a line, oldest first, read a line at a time (a log that escaped
    rotation can be hundreds of megabytes); a torn or foreign line is skipped. Nothing for a missing
    log; raises OSError (NotRegularFile among them) for one that cannot be read."""
    handle = _open_log(path)
    if handle is not None:
        with handle:
            yield from _entries(handle)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a log, as iter_jsonl; a named pipe, symlink or other non-file there reads
    as no log."""
    try:
        return list(iter_jsonl(path))
    except NotRegularFile:
        return []


def iter_generations(path: Path, *, lenient: bool = False) -> Iterator[dict[str, Any]]:
    """The JSON objects of a rotated log, its older generation's first, as iter_jsonl (as read_jsonl,
    a non-file reading as no log, with `lenient`).

    Both generations are opened before either is read, the newer first, and opened again when the
    file at `path` changed meanwhile: a rotation in between would otherwise leave out a whole
    generation (the older one opened, then the log renamed over it) or read one twice."""
    generations = _open_generations(path, lenient)
    try:
        for handle in generations:
            yield from _entries(handle)
    finally:  # a reader that stops early, or fails in the older generation, closes the newer one too
        for handle in generations:
            handle.close()


def _open_generations(path: Path, lenient: bool) -> list[BinaryIO]:
    """The rotated log's generations open to read, the older first; on an error none is left open."""
    while True:
        before = _identity(path)
        with contextlib.ExitStack() as opened:
            newer = _open_log(path, lenient)
            if newer is not None:
                opened.enter_context(newer)
            older = _open_log(older_generation(path), lenient)
            if older is not None:
                opened.enter_context(older)
            if _identity(path) == before:
                opened.pop_all()  # kept open: the caller closes them
                return [handle for handle in (older, newer) if handle is not None]


def read_generations(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a rotated log, its older generation's first, as read_jsonl."""
    return list(iter_generations(path, lenient=True))


def _open_log(path: Path, lenient: bool = False) -> BinaryIO | None:
    """The log at `path` open to read; None when there is none (or, with `lenient`, a non-file)."""
    try:
        return open_state_file(path)
    except FileNotFoundError:
        return None
    except NotRegularFile:
        if lenient:
            return None
        raise


def _entries(handle: BinaryIO) -> Iterator[dict[str, Any]]:
    # At "\n" only, not as str.splitlines: json.dumps(ensure_ascii=False) leaves U+2028 and NEL in a
    # value as they are.
    for line in handle:
        try:
            entry = parse_json(line.decode("utf-8", errors="replace"))
        except ValueError:  # torn, foreign, or nested too deep to be memdir's
            continue
        if isinstance(entry, dict):
            yield entry


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file is at `path` now (device and inode, the link itself), None for none: a log that
    was rotated is another file at the same path."""
    try:
        status = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino


# --- the decision log: what every writer decided, and why -------------------------------------

DECISION_LOG = "log.jsonl"


def log_decisions(root: Path, entries: Iterable[Mapping[str, Any]], now: dt.datetime | None = None) -> None:
    """Append decisions to `.memdir/log.jsonl`, one JSON object a line, in one O_APPEND write; past
    LOG_MAX_BYTES the log becomes `log.jsonl.1` (read too, by read_decisions) and starts afresh.
    Names, reasons and errors are free text: their secrets are masked (memdir.text.outward)."""
    from memdir.text.outward import dumps

    stamp = (now or dt.datetime.now().astimezone()).isoformat(timespec="seconds")
    lines = "".join(dumps({"at": stamp, **entry}, indent=None) + "\n" for entry in entries)
    if lines:
        append_lines(ensure_state_dir(root) / DECISION_LOG, lines.encode("utf-8"), durable=True, rotate=True)


def decision_log_path(root: Path) -> Path:
    """The decision log, to read; raises StateRefused when `.memdir/` is a symlink or not a folder."""
    return state_dir(root) / DECISION_LOG


def read_decisions(root: Path) -> list[dict[str, Any]]:
    """The logged decisions of both generations (see rotation), oldest first; torn lines are skipped."""
    return read_generations(decision_log_path(root))


@contextlib.contextmanager
def folder_lock(root: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Serialise writers of one memory folder with an flock on `.memdir/lock`."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no flock; writes stay atomic, not serialised
        yield
        return
    lock_path = ensure_state_dir(root) / "lock"
    fd = _open_regular(lock_path, os.O_RDWR | os.O_CREAT)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockTimeout(f"another memdir process has held {lock_path} for over {timeout:.0f}s") from None
                time.sleep(0.02)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def keep_index_history(root: Path, previous: str, new: str) -> None:
    """Keep what a rewrite of MEMORY.md removes: the whole last version, and every removed line for
    good. `.memdir/MEMORY.md.prev` is the previous file; `.memdir/MEMORY.md.history` collects, run
    after run, each line that left MEMORY.md (a hand-tuned entry, a duplicate)."""
    state = ensure_state_dir(root)
    write_state_file(state / f"{INDEX_NAME}.prev", previous, durable=True)
    removed = Counter(split_lines(previous)) - Counter(split_lines(new))
    gone = []
    for line in split_lines(previous):  # in file order, each removed copy once
        if removed[line] > 0:
            removed[line] -= 1
            gone.append(line)
    if not [line for line in gone if line.strip()]:
        return
    stamp = dt.datetime.now().astimezone().isoformat(timespec="seconds")
    entry = f"## {stamp}: lines `memdir index` removed or replaced\n\n" + "\n".join(gone) + "\n\n"
    append_lines(state / f"{INDEX_NAME}.history", entry.encode("utf-8"), durable=True, rotate=True)


def refuse_too_large(file_name: str, text: str) -> None:
    """Refuse a memory no reader would load (`store.too_large`): it would be written, indexed and
    then missing from every command (a 2 MB `add` said "Added", and `list` showed nothing)."""
    if (why := too_large(len(text.encode("utf-8")))) is not None:
        raise InvalidMemory(f"{file_name} would be {why}: keep the fact, not the whole text")
