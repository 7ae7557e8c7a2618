"""The write path's screen: what stands between a candidate fact and a stored memory.

The policy of every writer (`memdir add`, `edit`, `import`, the agent tools, MCP, `memdir
extract`, `consolidate`, the Python API: all through `MemoryDir.screen` and `MemoryDir.commit`),
decided here and nowhere else. For each candidate, a new memory or new text of an existing one, in
order: secrets are redacted (or the candidate refused when a secret is in its name or is all it
says); provenance decides whether it is quarantined (`source: tool`, or instruction-like text
whatever the source; of an edit, the text it adds); a new memory is compared with the live memories and the earlier
candidates of the same batch, so a near-duplicate is skipped and a memory on the same topic is
named (for a warning, or for a model to judge). A candidate that says what a person rejected in
review (memdir.core.rejections), or what a quarantined memory already says, is skipped too: the
quarantine holds each thing once, and a rejection is not asked again. Nothing here writes; the
screen returns verdicts, and the caller stores them (review of the quarantine: write/review.py).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from memdir.core.errors import MemdirError
from memdir.core.model import Memory, NewMemory, Status, name_key

if TYPE_CHECKING:
    from memdir.core.rejections import Rejection
    from memdir.text.similarity import Comparer, MemoryText, PairVerdict

SOURCES = ("user", "agent", "tool")
SAME_TOPIC_FLOOR = 0.3
"""Similarity from which two memories are in the same-topic zone, besides the pairs that
`memdir.text.similarity.compare` already flags as possible contradictions. Chosen on the dev pairs
(scripts/eval_pairs.py; docs/extract.md has the figures): 32 of 50 contradictions reach it, and
18 of the 100 compatible or unrelated pairs."""
_REDACTION = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


class WriteRefused(MemdirError):
    """The write path wrote nothing: the memory says what one in the folder says, or nothing but a
    secret. The verdict says why."""

    exit_code = 1

    def __init__(self, verdict: Verdict) -> None:
        new = verdict.candidate.memory
        if verdict.action is Action.SKIP:
            message = f"skipped {new.name!r}: {verdict.reasons[-1]}; --force adds it anyway"
        else:
            message = f"not added: {'; '.join(verdict.reasons)}"
        super().__init__(message)
        self.verdict = verdict


class Action(StrEnum):
    STORE = "store"
    QUARANTINE = "quarantine"  # stored with `status: quarantined`: never indexed until reviewed
    SKIP = "skip"  # a near-duplicate of a memory (or of an earlier candidate), or rejected before
    REFUSE = "refuse"  # a secret that cannot be redacted away


@dataclass
class Candidate:
    """A fact on its way in: the memory to write and where the fact came from. A new memory, or,
    with `replaces`, new text for a memory in the folder (an edit, an update)."""

    memory: NewMemory
    source: str | None = None  # user | agent | tool; None: not said (a person at `memdir add`)
    text: str | None = None  # the whole file as given (an editor, an import); None: the type's template
    replaces: Memory | None = None  # the memory as it was read, for new text of an existing memory


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
    placeholders: list[str] = field(default_factory=list)  # key-shaped values kept as written, masked
    duplicate_of: str | None = None
    rejected: str | None = None  # SKIP: the file a person rejected in review that this one repeats
    same_topic: list[Neighbour] = field(default_factory=list)
    supersedes: str | None = None  # path of the memory this one replaces (set by a judge or by hand)
    untrusted: bool = False  # provenance says a person must look first, whatever the action became
    screened: bool = True  # False: the caller opted out of the screen (`unscreened`), and the log says so

    @property
    def writes(self) -> bool:
        return self.action in (Action.STORE, Action.QUARANTINE)

    def keep(self) -> None:
        """Write a skipped near-duplicate after all (`add --force`, or it repeats the very memory
        it replaces): stored, or quarantined when its provenance said so."""
        self.action = Action.QUARANTINE if self.untrusted else Action.STORE
        self.duplicate_of = self.rejected = None


def new_memory_of(memory: Memory) -> NewMemory:
    """What the screen compares of a memory that exists as a file (brought over, or edited): its
    texts, its other fields (for secrets), its own path."""
    assert memory.type is not None, "a memory without a type is refused before the screen"
    extra = {key: value for key, value in memory.fields.items() if key not in ("name", "description", "type")}
    return NewMemory(
        type=memory.type,
        name=memory.name,
        description=memory.description,
        body=memory.body,
        created=memory.last_changed or dt.date.fromtimestamp(memory.mtime),
        extra=extra,
        path=memory.path,
    )


def _texts(new: NewMemory) -> dict[str, str]:
    return {key: getattr(new, key) for key in ("name", "description", "body", "why", "how")}


def _screen_secrets(verdict: Verdict) -> None:
    from memdir.text.sensitive import find_placeholder_keys, find_secrets, redact

    new = verdict.candidate.memory
    # A name's `-` and `_` part words (`prod-key-sk-ant-…`): it becomes the file name and the index
    # entry, where no key may go, and it is asked for in kebab case.
    name_hits = find_secrets(new.name, name=True)
    if name_hits:
        verdict.action = Action.REFUSE
        verdict.reasons.append(f"its name holds a secret ({name_hits[0].masked})")
        verdict.redacted += [hit.kind for hit in name_hits]
        new.name = redact(new.name, name=True)  # the refusal is logged and shown: never with the secret in it
        return
    for key, text in _texts(new).items():
        hits = find_secrets(text)
        if hits:
            setattr(new, key, redact(text))
            verdict.redacted += [hit.kind for hit in hits]
        verdict.placeholders += find_placeholder_keys(getattr(new, key), name=key == "name")
    new.extra = _redacted(new.extra, verdict.redacted)
    if verdict.redacted:
        left = _REDACTION.sub("", f"{new.description} {new.body}")
        if not any(c.isalnum() for c in left):
            verdict.action = Action.REFUSE
            verdict.reasons.append("it is nothing but a secret")
        else:
            verdict.reasons.append(
                f"redacted {len(verdict.redacted)} secret(s): {', '.join(sorted(set(verdict.redacted)))}"
            )


def _redacted(value: Any, kinds: list[str]) -> Any:
    """`value`, a field's value (text, or lists and mappings of it), with its secrets redacted; the
    kind of each added to `kinds`. The other fields of a memory composed elsewhere (a harness's
    `Post`, a file brought over by `import`) are screened like its text."""
    from memdir.text.sensitive import find_secrets, redact

    if isinstance(value, str):
        hits = find_secrets(value)
        kinds += [hit.kind for hit in hits]
        return redact(value) if hits else value
    if isinstance(value, dict):
        return {key: _redacted(item, kinds) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, kinds) for item in value]
    return value


def _screen_provenance(verdict: Verdict) -> None:
    from memdir.text.sensitive import find_instructions

    source = verdict.candidate.source
    if source == "tool":
        verdict.action, verdict.untrusted = Action.QUARANTINE, True
        verdict.reasons.append("source: tool (read in a file, page or tool output)")
    for key, text in _added_texts(verdict.candidate).items():
        found = find_instructions(text)
        if found:
            verdict.action, verdict.untrusted = Action.QUARANTINE, True
            verdict.reasons.append(f"instruction-like text in its {key}: {found[0].masked!r}")
            break


def _added_texts(candidate: Candidate) -> dict[str, str]:
    """The texts a candidate adds: all of a new memory's; of an edit, the lines it did not have
    before (what was there was judged when it came, and lint's S004 reports it wherever it is)."""
    texts = _texts(candidate.memory)
    old = candidate.replaces
    if old is None:
        return texts
    had = set(f"{old.name}\n{old.description}\n{old.body}".splitlines())
    return {key: "\n".join(line for line in text.splitlines() if line not in had) for key, text in texts.items()}


def memory_text(key: str, new: NewMemory) -> MemoryText:
    from memdir.text.similarity import MemoryText

    body = "\n".join(part for part in (new.body, new.why, new.how) if part.strip())
    return MemoryText(key=key, name=new.name, description=new.description, body=body, type=new.type.value)


def live_memories(memories: Iterable[Memory], today: dt.date) -> list[Memory]:
    """The memories a candidate is compared with: typed, and indexable (not superseded, expired...)."""
    return [m for m in memories if m.type is not None and m.exclusion(today) is None]


def _same_as(shown: str, pair: PairVerdict) -> str:
    """Why a candidate is skipped as a duplicate: the comparison's reason too, since a rewording
    found by its facts scores far under the duplicate bar and the score alone would read as a mistake."""
    return f"says the same as {shown} ({pair.reason}; similarity {pair.score:.2f})"


def _says_the_same(other: MemoryText, mine: MemoryText, pairs: Comparer) -> str | None:
    """How `mine` repeats `other`, or None: a near-duplicate, or the
    same name on the same topic (a rewording that moved a date or a number, say). For the memories
    that are not live: a quarantined one, or one a person rejected."""
    pair = pairs.compare(other, mine)
    if pair is not None and pair.label == "duplicate":
        return _same_as(other.key, pair)
    score = pair.score if pair is not None else pairs.similarity(other, mine)
    if name_key(other.name) == name_key(mine.name) and score >= SAME_TOPIC_FLOOR:
        return f"has the name and topic of {other.key} (similarity {score:.2f})"
    return None


def _rejection(
    new: NewMemory, mine: MemoryText, rejected: Sequence[Rejection], pairs: Comparer
) -> tuple[Rejection, str] | None:
    """The rejection `new` repeats, and how: the same text (its digest: all a purged rejection
    keeps), or by `_says_the_same` with the rejected memory's text."""
    from memdir.core.model import parse_document
    from memdir.core.rejections import said_fingerprint
    from memdir.core.templates import render_memory
    from memdir.text.similarity import MemoryText

    body = parse_document(render_memory(new)).body  # as the file would say it, as the rejected one did
    digest = said_fingerprint(new.type.value, new.name, new.description, body)
    for rejection in reversed(rejected):  # the latest first
        if rejection.digest == digest:
            return rejection, f"says what {rejection.file} said"
    for rejection in reversed(rejected):
        if rejection.description is None or rejection.body is None:
            continue
        text = MemoryText(rejection.file, rejection.name, rejection.description, rejection.body, rejection.type)
        how = _says_the_same(text, mine, pairs)
        if how is not None:
            return rejection, how
    return None


def screen(
    candidates: Sequence[Candidate],
    existing: Sequence[Memory],
    today: dt.date,
    *,
    rejected: Sequence[Rejection] = (),
) -> list[Verdict]:
    """Run every candidate through the gauntlet, in order. `existing` is the folder's memories
    (quarantined ones included), `rejected` what people rejected in review there
    (`memdir.core.rejections.remembered`)."""
    from memdir.text.similarity import Comparer, MemoryText

    pairs = Comparer()
    live = live_memories(existing, today)
    texts = [MemoryText(m.path, m.name, m.description, m.body, m.raw_type) for m in live]
    waiting = [
        MemoryText(m.path, m.name, m.description, m.body, m.raw_type)
        for m in existing
        if m.type is not None and m.status == Status.QUARANTINED.value
    ]
    accepted: list[tuple[str, MemoryText]] = []  # earlier candidates of the batch that will be written
    verdicts: list[Verdict] = []
    for candidate in candidates:
        verdict = Verdict(candidate, Action.STORE)
        verdicts.append(verdict)
        _screen_secrets(verdict)
        if verdict.action is Action.REFUSE:
            continue
        _screen_provenance(verdict)
        mine = memory_text(candidate.memory.file_name, candidate.memory)
        if candidate.replaces is not None:  # an edit: not a new fact, so no duplicate of another
            _note_same_topic(verdict, mine, [t for t in texts if t.key != candidate.replaces.path], pairs)
            continue
        repeated = _rejection(candidate.memory, mine, rejected, pairs) if rejected else None
        if repeated is not None:
            rejection, how = repeated
            verdict.action, verdict.rejected = Action.SKIP, rejection.file
            when = f" on {rejection.at[:10]}" if rejection.at else ""
            verdict.reasons.append(f"previously rejected: it {how}, rejected in review{when}")
            continue
        others = [(t, True) for t in texts] + [(t, False) for _, t in accepted]
        for other, is_existing in others:
            shown = other.key if is_existing else f"(batch) {other.key}"
            pair = pairs.compare(other, mine)
            if pair is not None and pair.label == "duplicate":
                verdict.action = Action.SKIP
                verdict.duplicate_of = shown
                verdict.reasons.append(_same_as(shown, pair))
                break
            score = pair.score if pair is not None else pairs.similarity(other, mine)
            same_name = name_key(other.name) == name_key(candidate.memory.name)
            if pair is not None or score >= SAME_TOPIC_FLOOR or same_name:
                reason = pair.reason if pair is not None else ("same name" if same_name else "same topic")
                verdict.same_topic.append(Neighbour(shown, other.name, score, reason, is_existing))
        for other in waiting if verdict.action is not Action.SKIP else []:
            repeats = _says_the_same(other, mine, pairs)
            if repeats is not None:
                verdict.action, verdict.duplicate_of = Action.SKIP, other.key
                verdict.reasons.append(f"{repeats}, which waits in quarantine (`memdir review`)")
                break
        verdict.same_topic.sort(key=lambda n: -n.score)
        if verdict.writes:
            accepted.append((candidate.memory.file_name, mine))
    return verdicts


def _note_same_topic(verdict: Verdict, mine: MemoryText, others: Sequence[MemoryText], pairs: Comparer) -> None:
    """The memories on the same topic as an edit's new text, for the writer to tell people."""
    for other in others:
        pair = pairs.compare(other, mine)
        score = pair.score if pair is not None else pairs.similarity(other, mine)
        if pair is not None or score >= SAME_TOPIC_FLOOR:
            reason = pair.reason if pair is not None else "same topic"
            verdict.same_topic.append(Neighbour(other.key, other.name, score, reason, True))
    verdict.same_topic.sort(key=lambda n: -n.score)


def unscreened(candidates: Sequence[Candidate], why: str) -> list[Verdict]:
    """Verdicts that write `candidates` as given, past the screen: the explicit opt-out of a caller
    that screened them some other way (`why`), logged as such (`stored-unscreened`)."""
    return [Verdict(c, Action.STORE, [f"not screened: {why}"], screened=False) for c in candidates]


def prepare(verdict: Verdict) -> NewMemory:
    """The memory to write for a verdict that writes: source and status set. The writer records
    `verdict.supersedes` (`MemoryDir.commit`: a quarantined memory only when accepted)."""
    new = verdict.candidate.memory
    extra: dict[str, Any] = dict(new.extra)
    if verdict.candidate.source and verdict.candidate.replaces is None:  # an edit's is in the log
        extra["source"] = verdict.candidate.source
    if verdict.action is Action.QUARANTINE:
        extra["status"] = Status.QUARANTINED.value
    new.extra = extra
    return new


def screened_text(text: str, verdict: Verdict) -> str:
    """A memory's whole file, as a person wrote it, with what the screen decided applied: secrets
    out, `source` and `status` set."""
    from memdir.core.model import parse_document, set_fields

    fields = {key: value for key, value in verdict.candidate.memory.extra.items() if key in ("source", "status")}
    if verdict.redacted:  # field by field: `key: [REDACTED:kind]` written as it is would read as a list
        from memdir.text.sensitive import redact

        doc = parse_document(text)
        fields |= {key: value for key, value in doc.data.items() if _redacted(value, []) != value}
        fields = {key: _redacted(value, []) if key in doc.data else value for key, value in fields.items()}
        text = text[: doc.body_start] + redact(text[doc.body_start :])
    return set_fields(text, fields) if fields else text


def describe(verdict: Verdict) -> str:
    """One line for people: what happens to the candidate and why."""
    name = verdict.candidate.memory.name
    why = f" ({'; '.join(verdict.reasons)})" if verdict.reasons else ""
    if verdict.action is Action.SKIP and verdict.rejected:
        return f"skip {name!r}: previously rejected ({verdict.rejected})"
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


# --- what the decision log says of a verdict ----------------------------------------------------


def verdict_entry(verdict: Verdict, **extra: Any) -> dict[str, Any]:
    """The log line for one verdict."""
    new = verdict.candidate.memory
    decision = {
        Action.STORE: "stored",
        Action.QUARANTINE: "quarantined",
        Action.SKIP: "skipped-duplicate",
        Action.REFUSE: "refused",
    }[verdict.action]
    if verdict.rejected:
        decision = "previously-rejected"
    elif not verdict.screened:
        decision = "stored-unscreened" if verdict.candidate.replaces is None else "updated-unscreened"
    elif verdict.candidate.replaces is not None:
        decision = {Action.STORE: "updated", Action.QUARANTINE: "quarantined-update"}.get(verdict.action, decision)
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
    if verdict.rejected:
        entry["rejected"] = verdict.rejected
    if verdict.supersedes:  # a quarantined memory's waits for `review accept`, which logs it then
        entry["supersedes_on_accept" if verdict.action is Action.QUARANTINE else "supersedes"] = verdict.supersedes
    if verdict.same_topic:
        entry["same_topic"] = [n.path for n in verdict.same_topic]
    return entry


def failed_entry(verdict: Verdict, error: str, **extra: Any) -> dict[str, Any]:
    """The log line for a verdict that writes whose write then failed: `failed`, with what the screen
    had decided (`screened`) and the error. The log never says `stored` for a file that is not there;
    the error may quote what a person wrote, so its secrets are masked, as on the terminal."""
    from memdir.text.sensitive import mask_secrets

    entry = verdict_entry(verdict, **extra)
    return entry | {"decision": "failed", "screened": entry["decision"], "error": mask_secrets(error)}
