"""Review: what the quarantine holds, let in (`memdir review accept`) or thrown out (`reject`).

A quarantined memory was written by the write path (memdir.core.gauntlet) with `status:
quarantined`: it is never indexed until a person accepts it here. A rejection is remembered in
`.memdir/rejected.jsonl` (memdir.core.rejections), so the write path does not quarantine the same
memory again in the next session.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from memdir.core.errors import MemdirError, MemoryChanged, MemoryNotFound
from memdir.core.model import PENDING_SUPERSEDE, Memory, Status, one_line, said_digest
from memdir.core.rejections import rejection_of, remember
from memdir.core.store import log_decisions
from memdir.folder import FieldChange, IndexWrite, MemoryDir


class MemoryNotQuarantined(MemdirError):
    """`memdir review accept/reject` named a memory that is not in quarantine."""


class StaleSupersede(MemoryChanged):
    """`memdir review accept`: the memory a quarantined one would supersede was changed, retired or
    removed since the quarantined one arrived; nothing was written."""


def quarantined(folder: MemoryDir) -> list[Memory]:
    """The memories waiting for review (`status: quarantined`), in folder order."""
    return [m for m in folder.scan().memories if m.status == Status.QUARANTINED.value]


def _quarantined_one(folder: MemoryDir, query: str) -> Memory:
    memory = folder.get(query)
    if memory.status != Status.QUARANTINED.value:
        raise MemoryNotQuarantined(f"{memory.path} is not quarantined (status: {memory.status}); nothing to review")
    return memory


def accept(folder: MemoryDir, query: str) -> tuple[Memory, IndexWrite]:
    """Let a quarantined memory in: its `status` is removed and it is indexed.

    When it carries `supersedes_on_accept`, the memory named there is superseded by it now, both or
    neither, and the field becomes `supersedes`. Raises StaleSupersede (nothing written) when that
    memory left the folder, is no longer live, or says something else than when this one arrived.
    """
    memory = _quarantined_one(folder, query)
    fields: dict[str, object] = {"status": None, "updated": folder.today}
    retire: list[FieldChange] = []
    if PENDING_SUPERSEDE in memory.fields:
        old = _replaced(folder, memory)
        fields |= {PENDING_SUPERSEDE: None, "supersedes": Path(old.path).name}
        retire.append(folder.supersede(old.path, memory.path))
    # A person lets in what the screen held back: no text is added, so bookkeeping alone, both
    # changes or neither (each checked against the text it was planned from).
    let_in = FieldChange(memory.path, fields, before=memory.doc.text, decision="accepted")
    _, write = folder.commit([], fields=[let_in, *retire], command="review")
    return folder.get(memory.path), write


def accept_many(folder: MemoryDir, queries: Sequence[str]) -> list[tuple[Memory, IndexWrite]]:
    """`accept` each memory `queries` names, once each, in the order given. Everything is checked
    before anything is written: each must be in quarantine, each memory to supersede must still be
    what was replaced, and no two may supersede the same one (the second would find it retired), so
    a refusal (MemoryNotQuarantined, StaleSupersede) leaves the whole quarantine as it was."""
    memories = list({m.path: m for m in (_quarantined_one(folder, query) for query in queries)}.values())
    replaced: dict[str, str] = {}
    for memory in memories:
        if PENDING_SUPERSEDE not in memory.fields:
            continue
        old = _replaced(folder, memory)
        if old.path in replaced:
            raise StaleSupersede(
                f"{replaced[old.path]} and {memory.path} would both supersede {old.path}; nothing was changed. "
                f"Accept one of them, and reject or edit the other"
            )
        replaced[old.path] = memory.path
    return [accept(folder, memory.path) for memory in memories]


def accept_all(folder: MemoryDir) -> list[tuple[Memory, IndexWrite]]:
    """`accept` every quarantined memory, in folder order; an empty list when none waits."""
    return accept_many(folder, [memory.path for memory in quarantined(folder)])


def would_supersede(memory: Memory) -> str | None:
    """The file a quarantined memory supersedes once accepted (its `supersedes_on_accept`), if any."""
    return _pending(memory)[0]


def _pending(memory: Memory) -> tuple[str | None, str | None]:
    """`supersedes_on_accept` read: (file, digest). A person may write the bare file name: no digest."""
    pending = memory.fields.get(PENDING_SUPERSEDE)
    if isinstance(pending, dict):
        return one_line(pending.get("file")) or None, one_line(pending.get("digest")) or None
    return one_line(pending) or None, None


def _replaced(folder: MemoryDir, memory: Memory) -> Memory:
    """The memory a quarantined one supersedes once accepted, if it is still what was replaced."""
    wanted, digest = _pending(memory)  # without a digest, only the memory's presence is checked
    then = (
        f"nothing was changed. Reject it (`memdir review reject {memory.name}`), or `memdir edit "
        f"{memory.name}` to drop `{PENDING_SUPERSEDE}` (or only its digest) and accept it again"
    )
    if not wanted:
        raise StaleSupersede(f"{memory.path}: `{PENDING_SUPERSEDE}` names no memory; {then}")
    try:
        old = folder.get(wanted)
    except MemoryNotFound as exc:
        gone = str(exc).startswith("no memory matches")
        why = "which is no longer in the folder (archived, deleted or renamed)" if gone else f"but {exc}"
        raise StaleSupersede(f"{memory.path} would supersede {wanted}, {why}; {then}") from None
    if PurePosixPath(one_line(old.fields.get("superseded_by"))).name == PurePosixPath(memory.path).name:
        return old  # an accept cut off after its first write (the old memory's): this one finishes it
    if old.path == memory.path or old.superseded or old.status != Status.ACTIVE.value:
        state = f"superseded by {one_line(old.fields.get('superseded_by'))}" if old.superseded else old.status
        raise StaleSupersede(f"{memory.path} would supersede {old.path}, which is {state} now; {then}")
    if digest is not None and digest != said_digest(old):
        raise StaleSupersede(f"{old.path} changed since {memory.path} was quarantined to supersede it; {then}")
    return old


def reject(folder: MemoryDir, query: str, purge: bool = False) -> tuple[str, Path | None, IndexWrite]:
    """Throw a quarantined memory out: into `.archive/` (deleted with `purge`), and remember it
    (`.memdir/rejected.jsonl`; with `purge`, only a digest of what it said) so the write path skips
    it when it comes again. Remembered first: a rejection that cannot be recorded removes nothing,
    and one whose removal then fails leaves the memory quarantined, remembered twice if rejected again."""
    memory = _quarantined_one(folder, query)
    remember(folder.root, [rejection_of(memory, purged=purge)])
    result = folder.remove(memory.path, purge=purge, log=False)
    entry = folder.removal_entry("review", memory.path, result[1]) | {"decision": "rejected", "purged": purge}
    log_decisions(folder.root, [entry])
    return result


def reject_many(
    folder: MemoryDir, queries: Sequence[str], purge: bool = False
) -> list[tuple[str, Path | None, IndexWrite]]:
    """`reject` each memory `queries` names, once each; raises (nothing rejected) when one of them is
    not in quarantine."""
    paths = list(dict.fromkeys(_quarantined_one(folder, query).path for query in queries))
    return [reject(folder, path, purge=purge) for path in paths]


def reject_all(folder: MemoryDir, purge: bool = False) -> list[tuple[str, Path | None, IndexWrite]]:
    """`reject` every quarantined memory, in folder order; an empty list when none waits."""
    return reject_many(folder, [memory.path for memory in quarantined(folder)], purge=purge)
