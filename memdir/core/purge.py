"""What `rm --purge` takes out of `.memdir/` besides the file: its text in the index history, the logs and caches.

A purged memory is one its owner wants gone, often because it held a key or personal data. The file
is deleted by `MemoryDir.remove`; this removes the copies memdir itself made of it:

- `.memdir/MEMORY.md.prev` and `.memdir/MEMORY.md.history` (and its old generation `.1`): the
  lines that link to the file, and any line holding one of the secrets found in it;
- `.memdir/recall.jsonl` (and its old generation `.1`): the recalls that name the file or hold one
  of its secrets (a query can quote a key);
- `.memdir/log.jsonl` (and `.1`): each of its secrets masked where it appears; the lines stay,
  since `memdir history` reads them;
- the parse cache and the recall index, which hold the file's text: deleted (they are rebuilt);
- drafts of the file kept in `.memdir/drafts/`.

Called with the folder lock held. A log is rewritten under its own lock too (`store.log_lock`),
which a recall's append takes though recall never takes the folder's: a line appended meanwhile
waits for the rewrite and lands in the new file, and no rotation comes between the two generations.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from memdir.core.cache import CACHE_FILE
from memdir.core.index import entry_target
from memdir.core.model import INDEX_NAME
from memdir.core.store import DECISION_LOG, MAX_FILE_BYTES, STATE_DIR, atomic_write, log_lock, older_generation
from memdir.text.sensitive import find_secrets

_RECALL_LOG = "recall.jsonl"  # read.recall_log.LOG_FILE, without importing recall for every `rm`
_RECALL_INDEX = "recall-index"  # read.termindex.INDEX_FILE


def purge_traces(root: Path, path: str, text: str) -> list[str]:
    """Remove what `.memdir/` keeps of the memory at folder path `path`, whose file held `text`.
    Returns the state files it changed or deleted, folder-relative."""
    state = root / STATE_DIR
    if not state.is_dir():
        return []
    hits = find_secrets(text)
    secrets = {text[h.start : h.end]: h.masked for h in hits}
    quoted = json.dumps(path)  # how a JSON log line names the file

    def holds_secret(line: str) -> bool:
        return any(secret in line for secret in secrets)

    def index_line(line: str) -> bool:
        return entry_target(line) == path or holds_secret(line)

    def recall_line(line: str) -> bool:
        return quoted in line or json.dumps(path, ensure_ascii=False) in line or holds_secret(line)

    def masked_line(line: str) -> str:
        for secret, shown in secrets.items():
            line = line.replace(secret, shown)
        return line

    changed: list[str] = []
    if _rewrite(state / f"{INDEX_NAME}.prev", lambda line: None if index_line(line) else line):
        changed.append(f"{INDEX_NAME}.prev")
    for name, drop in ((f"{INDEX_NAME}.history", index_line), (_RECALL_LOG, recall_line)):
        changed += _rewrite_log(state / name, lambda line, drop=drop: None if drop(line) else line)  # type: ignore[misc]
    if secrets:
        changed += _rewrite_log(state / DECISION_LOG, masked_line)
    base = PurePosixPath(path).name
    gone = [state / CACHE_FILE, state / _RECALL_INDEX]
    drafts = state / "drafts"
    if drafts.is_dir():
        gone += [draft for draft in drafts.iterdir() if draft.name.endswith(f"-{base}")]
    for file in gone:
        with contextlib.suppress(FileNotFoundError):
            file.unlink()
            changed.append(file.relative_to(state).as_posix())
    return [f"{STATE_DIR}/{name}" for name in changed]


def purged_text(source: Path) -> str:
    """What a memory file about to be purged holds, to find its secrets by: a regular file is read (up
    to the size memdir reads a memory at all); a link, a pipe or a device is not opened ("")."""
    try:
        if not stat.S_ISREG(os.lstat(source).st_mode):
            return ""
        with source.open("rb") as file:
            return file.read(MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def _rewrite_log(log: Path, keep: Callable[[str], str | None]) -> list[str]:
    """`_rewrite` of a log memdir appends to and of its older generation, under the log's lock: an
    append made between the reading and the replacing would be lost, and a rotation would put the
    unpurged generation back. The names of the files it changed."""
    generations = (log, older_generation(log))
    with log_lock(log) if log.exists() else contextlib.nullcontext():  # no lock file made for nothing
        return [file.name for file in generations if _rewrite(file, keep)]


def _rewrite(file: Path, keep: Callable[[str], str | None]) -> bool:
    """Rewrite `file` line by line through `keep` (None drops a line); False when it is missing or unchanged."""
    try:
        old = file.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return False
    lines = old.splitlines(keepends=True)
    new = "".join(kept for line in lines if (kept := keep(line)) is not None)
    if new == old:
        return False
    atomic_write(file, new.encode("utf-8", "surrogateescape"))
    return True
