"""The write path's offline screen: what stands between a candidate fact and a stored memory.

Shared by `memdir add` and `memdir extract`. For each candidate, in order: secrets are redacted (or
the candidate refused when a secret is in its name or is all it says); provenance decides whether it
is quarantined (`source: tool`, or instruction-like text whatever the source); it is compared with
the live memories and the earlier candidates of the same batch, so a near-duplicate is skipped and
a memory on the same topic is named (for a warning, or for a model to judge). Nothing here writes;
the screen returns verdicts, and the caller stores them. Review (accept, reject) is here too.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from memdir.errors import MemdirError, MemoryChanged, MemoryNotFound
from memdir.model import PENDING_SUPERSEDE, Memory, NewMemory, Status, name_key, one_line, parse_document, said_digest
from memdir.outward import dumps
from memdir.store import STATE_DIR, append_lines, ensure_state_dir, folder_lock, read_jsonl

if TYPE_CHECKING:
    from memdir.memory_dir import IndexWrite, MemoryDir

SOURCES = ("user", "agent", "tool")
SAME_TOPIC_FLOOR = 0.3
"""Similarity from which two memories are in the same-topic zone, besides the pairs that
`memdir.similarity.compare` already flags as possible contradictions. Chosen on the dev pairs
(scripts/eval_pairs.py; docs/extract.md has the figures): 32 of 50 contradictions reach it, and
18 of the 100 compatible or unrelated pairs."""
LOG_NAME = "log.jsonl"
_REDACTION = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


class MemoryNotQuarantined(MemdirError):
    """`memdir review accept/reject` named a memory that is not in quarantine."""


class StaleSupersede(MemoryChanged):
    """`memdir review accept`: the memory a quarantined one would supersede was changed, retired or
    removed since the quarantined one arrived; nothing was written."""


class Action(StrEnum):
    STORE = "store"
    QUARANTINE = "quarantine"  # stored with `status: quarantined`: never indexed until reviewed
    SKIP = "skip"  # a near-duplicate of a memory (or of an earlier candidate)
    REFUSE = "refuse"  # a secret that cannot be redacted away


@dataclass
class Candidate:
    """A fact on its way in: the memory to write and where the fact came from."""

    memory: NewMemory
    source: str | None = None  # user | agent | tool; None: not said (a person at `memdir add`)


@dataclass(frozen=True)
class Neighbour:
    """A memory on the same topic as a candidate."""

    path: str  # the memory's file, or `(batch) <file>` for an earlier candidate of the same run
    name: str
    score: float
    reason: str
    existing: bool  # a memory in the folder (not an earlier candidate)


@dataclass
class Verdict:
    """What the screen decided for one candidate, and why."""

    candidate: Candidate
    action: Action
    reasons: list[str] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)  # kinds of secret taken out
    duplicate_of: str | None = None
    same_topic: list[Neighbour] = field(default_factory=list)
    supersedes: str | None = None  # path of the memory this one replaces (set by a judge or by hand)
    untrusted: bool = False  # provenance says a person must look first, whatever the action became

    @property
    def writes(self) -> bool:
        return self.action in (Action.STORE, Action.QUARANTINE)

    def keep(self) -> None:
        """Write a skipped near-duplicate after all (`add --force`, or it repeats the very memory
        it replaces): stored, or quarantined when its provenance said so."""
        self.action = Action.QUARANTINE if self.untrusted else Action.STORE
        self.duplicate_of = None


def _texts(new: NewMemory) -> dict[str, str]:
    return {key: getattr(new, key) for key in ("name", "description", "body", "why", "how")}


def _screen_secrets(verdict: Verdict) -> None:
    from memdir.sensitive import find_secrets, redact

    new = verdict.candidate.memory
    name_hits = find_secrets(new.name)
    if name_hits:
        verdict.action = Action.REFUSE
        verdict.reasons.append(f"its name holds a secret ({name_hits[0].masked})")
        verdict.redacted += [hit.kind for hit in name_hits]
        new.name = redact(new.name)  # the refusal is logged and shown: never with the secret in it
        return
    for key, text in _texts(new).items():
        hits = find_secrets(text)
        if hits:
            setattr(new, key, redact(text))
            verdict.redacted += [hit.kind for hit in hits]
    if verdict.redacted:
        left = _REDACTION.sub("", f"{new.description} {new.body}")
        if not any(c.isalnum() for c in left):
            verdict.action = Action.REFUSE
            verdict.reasons.append("it is nothing but a secret")
        else:
            verdict.reasons.append(
                f"redacted {len(verdict.redacted)} secret(s): {', '.join(sorted(set(verdict.redacted)))}"
            )


def _screen_provenance(verdict: Verdict) -> None:
    from memdir.sensitive import find_instructions

    source = verdict.candidate.source
    if source == "tool":
        verdict.action, verdict.untrusted = Action.QUARANTINE, True
        verdict.reasons.append("source: tool (read in a file, page or tool output)")
    for key, text in _texts(verdict.candidate.memory).items():
        found = find_instructions(text)
        if found:
            verdict.action, verdict.untrusted = Action.QUARANTINE, True
            verdict.reasons.append(f"instruction-like text in its {key}: {found[0].masked!r}")
            break


def memory_text(key: str, new: NewMemory) -> Any:
    from memdir.similarity import MemoryText

    body = "\n".join(part for part in (new.body, new.why, new.how) if part.strip())
    return MemoryText(key=key, name=new.name, description=new.description, body=body, type=new.type.value)


def live_memories(memories: Iterable[Memory], today: dt.date) -> list[Memory]:
    """The memories a candidate is compared with: typed, and indexable (not superseded, expired...)."""
    return [m for m in memories if m.type is not None and m.exclusion(today) is None]


def screen(
    candidates: Sequence[Candidate],
    existing: Sequence[Memory],
    today: dt.date,
) -> list[Verdict]:
    """Run every candidate through the gauntlet, in order. `existing` is the folder's memories."""
    from memdir.similarity import MemoryText, compare, similarity

    live = live_memories(existing, today)
    texts = [MemoryText(m.path, m.name, m.description, m.body, m.raw_type) for m in live]
    accepted: list[tuple[str, Any]] = []  # earlier candidates of the batch that will be written
    verdicts: list[Verdict] = []
    for candidate in candidates:
        verdict = Verdict(candidate, Action.STORE)
        verdicts.append(verdict)
        _screen_secrets(verdict)
        if verdict.action is Action.REFUSE:
            continue
        _screen_provenance(verdict)
        mine = memory_text(candidate.memory.file_name, candidate.memory)
        others = [(t, True) for t in texts] + [(t, False) for _, t in accepted]
        for other, is_existing in others:
            shown = other.key if is_existing else f"(batch) {other.key}"
            pair = compare(other, mine)
            if pair is not None and pair.label == "duplicate":
                verdict.action = Action.SKIP
                verdict.duplicate_of = shown
                verdict.reasons.append(f"says the same as {shown} (similarity {pair.score:.2f})")
                break
            score = pair.score if pair is not None else similarity(other, mine)
            same_name = name_key(other.name) == name_key(candidate.memory.name)
            if pair is not None or score >= SAME_TOPIC_FLOOR or same_name:
                reason = pair.reason if pair is not None else ("same name" if same_name else "same topic")
                verdict.same_topic.append(Neighbour(shown, other.name, score, reason, is_existing))
        verdict.same_topic.sort(key=lambda n: -n.score)
        if verdict.writes:
            accepted.append((candidate.memory.file_name, mine))
    return verdicts


def prepare(verdict: Verdict) -> NewMemory:
    """The memory to write for a verdict that writes: source and status set. The writer records
    `verdict.supersedes` (`MemoryDir.plan_successor`: a quarantined memory only when accepted)."""
    new = verdict.candidate.memory
    extra: dict[str, Any] = dict(new.extra)
    if verdict.candidate.source:
        extra["source"] = verdict.candidate.source
    if verdict.action is Action.QUARANTINE:
        extra["status"] = Status.QUARANTINED.value
    new.extra = extra
    return new


def describe(verdict: Verdict) -> str:
    """One line for people: what happens to the candidate and why."""
    name = verdict.candidate.memory.name
    why = f" ({'; '.join(verdict.reasons)})" if verdict.reasons else ""
    if verdict.action is Action.SKIP:
        return f"skip {name!r}: duplicate of {verdict.duplicate_of}"
    if verdict.action is Action.REFUSE:
        return f"refuse {name!r}{why}"
    what = "quarantine" if verdict.action is Action.QUARANTINE else "save"
    line = f"{what} {name!r} as {verdict.candidate.memory.file_name}{why}"
    if verdict.supersedes:
        when = " once accepted" if verdict.action is Action.QUARANTINE else ""
        line += f"; supersedes {verdict.supersedes}{when}"
    return line


# --- the decision log ------------------------------------------------------------------------


def log_decisions(root: Path, entries: Iterable[Mapping[str, Any]], now: dt.datetime | None = None) -> None:
    """Append decisions to `.memdir/log.jsonl`, one JSON object a line, in one O_APPEND write.
    Names, reasons and errors are free text: their secrets are masked (memdir.outward)."""
    stamp = (now or dt.datetime.now().astimezone()).isoformat(timespec="seconds")
    lines = "".join(dumps({"at": stamp, **entry}, indent=None) + "\n" for entry in entries)
    if not lines:
        return
    append_lines(ensure_state_dir(root) / LOG_NAME, lines.encode("utf-8"), durable=True)


def log_path(root: Path) -> Path:
    return root / STATE_DIR / LOG_NAME


def read_log(root: Path) -> list[dict[str, Any]]:
    """The logged decisions, oldest first; torn lines are skipped."""
    return read_jsonl(log_path(root))


def verdict_entry(verdict: Verdict, **extra: Any) -> dict[str, Any]:
    """The log line for one verdict."""
    new = verdict.candidate.memory
    decision = {
        Action.STORE: "stored",
        Action.QUARANTINE: "quarantined",
        Action.SKIP: "skipped-duplicate",
        Action.REFUSE: "refused",
    }[verdict.action]
    entry: dict[str, Any] = {
        **extra,
        "decision": decision,
        "name": new.name,
        "type": new.type.value,
        "file": new.file_name if verdict.writes else None,
        "source": verdict.candidate.source,
        "reasons": verdict.reasons,
    }
    if verdict.redacted:
        entry["redacted"] = sorted(set(verdict.redacted))
    if verdict.duplicate_of:
        entry["duplicate_of"] = verdict.duplicate_of
    if verdict.supersedes:  # a quarantined memory's waits for `review accept`, which logs it then
        entry["supersedes_on_accept" if verdict.action is Action.QUARANTINE else "supersedes"] = verdict.supersedes
    if verdict.same_topic:
        entry["same_topic"] = [n.path for n in verdict.same_topic]
    return entry


def failed_entry(verdict: Verdict, error: str, **extra: Any) -> dict[str, Any]:
    """The log line for a verdict that writes whose write then failed: `failed`, with what the screen
    had decided (`screened`) and the error. The log never says `stored` for a file that is not there;
    the error may quote what a person wrote, so its secrets are masked, as on the terminal."""
    from memdir.sensitive import mask_secrets

    entry = verdict_entry(verdict, **extra)
    return entry | {"decision": "failed", "screened": entry["decision"], "error": mask_secrets(error)}


# --- review: what the quarantine holds, let in or thrown out ------------------------------------


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
    if PENDING_SUPERSEDE not in memory.fields:
        result = folder.update(memory.path, status=None)
        log_decisions(folder.root, [{"command": "review", "decision": "accepted", "file": memory.path}])
        return result
    with folder_lock(folder.root):
        folder.read_index()  # refuse before anything is written if MEMORY.md cannot be rewritten
        memory = _quarantined_one(folder, memory.path)  # as it is under the lock
        old = _replaced(folder, memory)
        retire = folder.plan_supersede(old.path, memory.path)
        fields = {"status": None, PENDING_SUPERSEDE: None, "supersedes": Path(old.path).name}
        let_in = folder.plan_update(memory.path, **fields)
        folder.write_together_locked(retire, let_in)  # both or neither
        write = folder._write_index_locked()
    log_decisions(
        folder.root,
        [
            {"command": "review", "decision": "accepted", "file": memory.path, "supersedes": old.path},
            {"command": "review", "decision": "superseded", "file": old.path, "superseded_by": memory.path},
        ],
    )
    return Memory(path=let_in.path, doc=parse_document(let_in.after)), write


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
    """Throw a quarantined memory out: into `.archive/` (deleted with `purge`)."""
    memory = _quarantined_one(folder, query)
    result = folder.remove(memory.path, purge=purge, log=False)
    entry = folder.removal_entry("review", memory.path, result[1]) | {"decision": "rejected", "purged": purge}
    log_decisions(folder.root, [entry])
    return result
