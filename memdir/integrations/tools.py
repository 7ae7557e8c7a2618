"""Structured writes for an agent: memory tools in Anthropic's tool schema, and the handler for them.

The model never writes files. It calls `create_memory` or `modify_memory`; `MemoryTools` checks
the input, lets `on_write` veto, applies the call through MemoryDir (atomic, locked, re-indexed)
and answers with the text of a tool_result. Bad input from the model is answered, never raised, so
a harness's loop cannot be broken by what a model sends. Nothing here imports anthropic: the tool
definitions are plain dicts and tool_use blocks are read by key or by attribute.

Over 500 lines: the two tools' schemas, their input checks and their answers to the model are one
contract with the model, kept together.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.core.errors import InvalidMemory, MemdirError, MemoryChanged, MemoryExists
from memdir.core.gauntlet import Action, Candidate, Verdict, screened_text
from memdir.core.model import DESCRIPTION_MAX, Memory, MemoryType, NewMemory, name_key, parse_document
from memdir.core.store import too_large
from memdir.core.templates import render_memory
from memdir.folder import IndexWrite, MemoryDir

CREATE = "create_memory"
MODIFY = "modify_memory"
TOOL_NAMES = frozenset({CREATE, MODIFY})
MAX_NAME_ENUM = 500  # past this many memories the names go unlisted: a huge enum costs every request
_UNENCODABLE = re.compile("[\x00\ud800-\udfff]")  # NUL, and lone surrogates that JSON can carry

_TYPES_HELP = (
    "user: who the user is (role, expertise, preferences). "
    "feedback: a rule learned from a correction or a confirmation. "
    "project: a decision, deadline or motivation in this project. "
    "reference: where to find something outside (a dashboard, tracker, channel, document)."
)
_CREATE_HELP = (
    "Save one new long-term memory: something worth knowing in future sessions that the code, the git "
    "history and the docs do not already say. One fact per memory. " + _TYPES_HELP + " Feedback and "
    "project memories need `why` (the reason) and `how` (when it applies). Write absolute dates "
    "(YYYY-MM-DD); relative ones are converted, counted from today. Never save secrets or credentials. "
    "If a memory on the topic exists, change it with modify_memory instead."
)
_MODIFY_HELP = (
    "Change or remove one existing memory. action `update`: give any of description, body (replaces "
    "the whole body; keep the **Why:** and **How to apply:** lines of feedback and project memories), "
    "importance, expires. action `delete`: archive a memory that is wrong or no longer useful (it "
    "leaves the index; a person can restore it). Prefer updating a memory to creating a second one on "
    "the same topic."
)


@dataclass(frozen=True)
class WriteRequest:
    """A write the model asked for, checked and about to be applied: what `on_write` is shown."""

    action: str  # "create" | "update" | "delete"
    name: str
    type: MemoryType | None
    path: str  # relative to the folder; for a create, the file it will get
    text: str | None  # the memory's full text after the write (None for a delete)
    previous: str | None  # its full text before (None for a create)
    input: Mapping[str, Any]  # the tool input as the model sent it


@dataclass(frozen=True)
class MemoryChange:
    """A write that was applied: what `on_change` is shown."""

    action: str  # "create" | "update" | "delete"
    name: str
    path: str
    memory: Memory | None  # as written (None for a delete)
    archived_to: Path | None  # where a deleted memory went
    index: IndexWrite


@dataclass(frozen=True)
class ToolResult:
    text: str  # the tool_result content for the model
    is_error: bool = False
    change: MemoryChange | None = None


class ToolInputError(MemdirError):
    """Input from the model that cannot be applied; its message is written for the model."""


OnWrite = Callable[[WriteRequest], bool | str | None]


@dataclass
class MemoryTools:
    """The memory tools for one folder.

    `allowed_names`: when given, `create_memory` takes only these names (an enum of those not yet
    used), for harnesses with fixed memory slots.
    `on_write(request)`: called before every write. Return None or True to let it happen, False or
    a string (the reason, shown to the model) to refuse it.
    `on_change(change)`: called after every write that happened.
    `on_expire(memory)`: called once per MemoryTools for each memory found past its `expires` date
    (such memories are no longer indexed), e.g. to archive it with `folder.remove(memory.path)`.
    Exceptions raised by the callbacks are the harness's own and are not caught.
    `source`: the `source` field given to created memories (provenance: user | agent | tool).
    """

    folder: MemoryDir
    allowed_names: Sequence[str] | None = None
    on_write: OnWrite | None = None
    on_change: Callable[[MemoryChange], None] | None = None
    on_expire: Callable[[Memory], None] | None = None
    source: str | None = "agent"
    _expired: list[Memory] = field(default_factory=list, init=False, repr=False)  # reported, in order

    # --- the definitions ---------------------------------------------------------------------

    def definitions(self) -> list[dict[str, Any]]:
        """The tools to offer in a Messages API request, in Anthropic's tool schema.

        Call it for every request: `modify_memory` is offered only when memories exist and lists
        their names, and `create_memory` is left out when `allowed_names` are all used.
        """
        live = self._live_memories()
        tools: list[dict[str, Any]] = []
        create = self._create_definition(live)
        if create is not None:
            tools.append(create)
        if live:
            tools.append(self._modify_definition(live))
        return tools

    def _create_definition(self, live: Sequence[Memory]) -> dict[str, Any] | None:
        if self.allowed_names is None:
            return create_definition()
        taken = {name_key(m.name) for m in live}
        free = [n for n in dict.fromkeys(self.allowed_names) if name_key(n) not in taken]
        return create_definition(free) if free else None

    def _modify_definition(self, live: Sequence[Memory]) -> dict[str, Any]:
        names = list(dict.fromkeys(m.name for m in live))
        return modify_definition(names if len(names) <= MAX_NAME_ENUM else None)

    # --- handling calls ----------------------------------------------------------------------

    def handles(self, tool_name: str) -> bool:
        return tool_name in TOOL_NAMES

    def handle_tool_call(self, name: str, input: object) -> str:
        """Validate and apply one tool call; the tool_result text (errors start with "Error:")."""
        return self.call(name, input).text

    def tool_result(self, block: object) -> dict[str, Any]:
        """Handle one tool_use block (an SDK object or a dict) and return the tool_result block."""

        def part(key: str) -> Any:
            return block.get(key) if isinstance(block, Mapping) else getattr(block, key, None)

        result = self.call(str(part("name")), part("input"))
        answer: dict[str, Any] = {"type": "tool_result", "tool_use_id": part("id"), "content": result.text}
        if result.is_error:
            answer["is_error"] = True
        return answer

    def call(self, name: str, input: object) -> ToolResult:
        """Validate and apply one tool call. Input errors come back as an error result, not raised."""
        try:
            if not isinstance(input, Mapping):
                raise ToolInputError(f"the input of {name} must be a JSON object")
            if name == CREATE:
                return self._create(input)
            if name == MODIFY:
                return self._modify(input)
            raise ToolInputError(f"there is no memory tool {name!r}; the memory tools are {CREATE} and {MODIFY}")
        except MemdirError as exc:
            return ToolResult(f"Error: {exc}", is_error=True)

    def check_expired(self) -> list[Memory]:
        """Memories past their `expires` date not reported before; each goes to `on_expire` once.
        `definitions` and every call check too, so a harness need not call this itself."""
        before = len(self._expired)
        self._live_memories()
        return self._expired[before:]

    # --- the two tools -----------------------------------------------------------------------

    def _create(self, input: Mapping[str, Any]) -> ToolResult:
        fields = _Input(input, CREATE)
        fields.only("type", "name", "description", "body", "why", "how", "importance", "expires")
        memory_type = MemoryType(fields.choice("type", [t.value for t in MemoryType]))
        name = " ".join(fields.text("name", required=True).split())  # one line, whatever the model sent
        live = self._live_memories(self.folder.scan().memories)  # the screen scans again: on_expire may move some
        if self.allowed_names is not None:
            allowed = {name_key(n): n for n in self.allowed_names}
            if name_key(name) not in allowed:
                raise ToolInputError(f"name {name!r} is not allowed; use one of: {', '.join(self.allowed_names)}")
            name = allowed[name_key(name)]
        for memory in live:
            if name_key(memory.name) == name_key(name):
                raise ToolInputError(
                    f"a memory named {memory.name!r} already exists; change it with {MODIFY} (action update)"
                )
        new = NewMemory(
            type=memory_type,
            name=name,
            description=fields.description(required=True) or "",
            body=fields.text("body", required=True),
            why=fields.text("why"),
            how=fields.text("how"),
            created=self.folder.today,
            importance=fields.importance(),
            expires=fields.date("expires", self.folder.today),
            extra={"source": self.source} if self.source else {},
        )
        new.absolutize_dates()
        new.validate()
        verdict = self._screen(new)
        text = render_memory(new)
        _check_size(text)
        self._require_why_and_how(memory_type, text)
        request = WriteRequest("create", name, memory_type, new.file_name, text, None, input)
        self._ask(request)
        try:
            memory, write = self.folder.store(verdict, text=text, command="tool")
        except MemoryExists as exc:
            raise ToolInputError(f"{exc}; change the existing memory with {MODIFY} instead") from None
        change = MemoryChange("create", memory.name, memory.path, memory, None, write)
        said = f"Saved memory {memory.name!r} ({memory.path})."
        if verdict.redacted:
            said += " Secrets were taken out of it first; never save keys or passwords in memory."
        if verdict.action is Action.QUARANTINE:
            said += f" It is quarantined ({'; '.join(verdict.reasons)}): not loaded until a person accepts it."
        return self._done(change, said)

    def _screen(self, new: NewMemory) -> Verdict:
        """The write path's screen (MemoryDir.screen), as for `memdir add` and `memdir extract`:
        secrets redacted, instruction-like text quarantined, a near-duplicate refused. Sets the
        fields the verdict asks for on `new`; raises ToolInputError when nothing is to be written."""
        try:
            verdict = self.folder.screen(Candidate(new, self.source), command="tool")
        except MemoryExists as exc:
            raise ToolInputError(f"{exc}; change the existing memory with {MODIFY} instead") from None
        if not verdict.writes:
            advice = f"; change that memory with {MODIFY} instead" if verdict.action is Action.SKIP else ""
            raise ToolInputError(f"not saved: {'; '.join(verdict.reasons)}{advice}")
        return verdict

    def _modify(self, input: Mapping[str, Any]) -> ToolResult:
        fields = _Input(input, MODIFY)
        action = fields.choice("action", ["update", "delete"])
        memory = self._resolve(fields.text("name", required=True))
        if action == "delete":
            fields.only("action", "name")
            previous = (self.folder.root / memory.path).read_bytes().decode("utf-8", errors="replace")
            self._ask(WriteRequest("delete", memory.name, memory.type, memory.path, None, previous, input))
            path, archived_to, write = self.folder.remove(memory.path)
            change = MemoryChange("delete", memory.name, path, None, archived_to, write)
            return self._done(change, f"Deleted memory {memory.name!r} (archived; a person can restore it).")
        fields.only("action", "name", "description", "body", "importance", "expires")
        updates: dict[str, object] = {}
        description = fields.description(required=False)
        if description is not None:
            updates["description"] = description
        if "importance" in input:
            updates["importance"] = fields.importance()
        if "expires" in input:
            updates["expires"] = fields.date("expires", self.folder.today)  # "" clears it
        body = fields.text("body") if "body" in input else None
        if body is not None and not body.strip():
            raise ToolInputError("body must not be empty; to remove the memory use action delete")
        if not updates and body is None:
            raise ToolInputError("update needs at least one of description, body, importance, expires")
        try:
            candidate = self.folder.updated(memory.path, body=body, fields=updates, source=self.source)
        except InvalidMemory as exc:
            raise ToolInputError(str(exc)) from None
        verdict = self.folder.screen(candidate, command="tool")
        if not verdict.writes:
            raise ToolInputError(f"not saved: {'; '.join(verdict.reasons)}")
        assert candidate.text is not None and candidate.replaces is not None
        after = screened_text(candidate.text, verdict)
        _check_size(after)
        if body is not None:
            self._require_why_and_how(memory.type, after)
        request = WriteRequest(
            "update", memory.name, memory.type, memory.path, after, candidate.replaces.doc.text, input
        )
        self._ask(request)
        try:
            written, write = self.folder.store(verdict, command="tool")
        except MemoryChanged:
            raise ToolInputError(f"{memory.name!r} changed while it was being updated; nothing was written") from None
        what = ", ".join([*updates, *(["body"] if body is not None else [])])
        change = MemoryChange("update", written.name, written.path, written, None, write)
        said = f"Updated memory {written.name!r}: {what}."
        if verdict.redacted:
            said += " Secrets were taken out of it first; never save keys or passwords in memory."
        if verdict.action is Action.QUARANTINE:
            said += f" It is quarantined ({'; '.join(verdict.reasons)}): not loaded until a person accepts it."
        return self._done(change, said)

    # --- helpers -----------------------------------------------------------------------------

    def _live_memories(self, memories: Sequence[Memory] | None = None) -> list[Memory]:
        """Memories the model may change: valid and named, not superseded, quarantined or archived
        (an expired one is kept, so it can be renewed or deleted). Reports new expiries.
        `memories`: the folder's, when the caller has just scanned it."""
        live, reported = [], False
        for memory in self.folder.scan().memories if memories is None else memories:
            if memory.type is None or not memory.name:
                continue
            excluded = memory.exclusion(self.folder.today)
            if excluded is None:
                live.append(memory)
            elif excluded.startswith("expired"):
                live.append(memory)
                if all(seen.path != memory.path for seen in self._expired):
                    self._expired.append(memory)
                    if self.on_expire is not None:
                        self.on_expire(memory)
                        reported = True
        # on_expire may have archived or renewed what it was given: read the folder as it is now.
        return self._live_memories() if reported else live

    def _resolve(self, name: str) -> Memory:
        live = self._live_memories()
        for matches in (lambda m: m.name == name, lambda m: name_key(m.name) == name_key(name)):
            hits = [m for m in live if matches(m)]
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                paths = ", ".join(m.path for m in hits)
                raise ToolInputError(f"{len(hits)} memories are named {name!r} ({paths}); a person must resolve this")
        known = ", ".join(repr(n) for n in sorted({m.name for m in live})[:20])
        raise ToolInputError(f"no memory is named {name!r}; existing names: {known or 'none'}")

    def _require_why_and_how(self, memory_type: MemoryType | None, text: str) -> None:
        if memory_type is None or not memory_type.needs_why_and_how:
            return
        from memdir.lint.body import has_label  # the label patterns, shared with lint rules B001/B002

        body = parse_document(text).body
        config = self.folder.config
        missing = [
            what
            for what, labels in (("why", config.why_labels), ("how", config.how_labels))
            if not has_label(body, labels)
        ]
        if missing:
            raise ToolInputError(
                f"{memory_type.value} memories need a reason and a trigger: give {' and '.join(missing)} "
                "(in the body: a **Why:** line and a **How to apply:** line)"
            )

    def _ask(self, request: WriteRequest) -> None:
        if self.on_write is None:
            return
        verdict = self.on_write(request)  # the harness's own errors propagate
        if verdict is None or verdict is True:
            return
        reason = verdict if isinstance(verdict, str) and verdict.strip() else "the harness refused this write"
        raise ToolInputError(f"not saved: {reason}")

    def _done(self, change: MemoryChange, text: str) -> ToolResult:
        refused = change.index.result.refused
        if refused is not None:
            text += f" MEMORY.md could not be updated ({refused}); a person has to shorten it."
        if self.on_change is not None:
            self.on_change(change)
        return ToolResult(text, change=change)


def create_definition(names: Sequence[str] | None = None) -> dict[str, Any]:
    """`create_memory` in Anthropic's tool schema; `names`: the only names it may take (an enum)."""
    name: dict[str, Any] = {"type": "string", "description": _NAME_HELP}
    if names is not None:
        name = {"type": "string", "enum": list(names), "description": "The memory's name: one of the allowed names."}
    return {
        "name": CREATE,
        "description": _CREATE_HELP,
        "input_schema": {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": [t.value for t in MemoryType], "description": _TYPES_HELP},
                "name": name,
                "description": _DESCRIPTION_PROPERTY,
                "body": {"type": "string", "description": "The memory itself, in markdown: the fact or the rule."},
                "why": {"type": "string", "description": _WHY_HELP},
                "how": {"type": "string", "description": "When and where it applies (feedback and project)."},
                "importance": _IMPORTANCE_PROPERTY,
                "expires": _EXPIRES_PROPERTY,
            },
            "required": ["type", "name", "description", "body"],
            "additionalProperties": False,
        },
    }


def modify_definition(names: Sequence[str] | None = None) -> dict[str, Any]:
    """`modify_memory` in Anthropic's tool schema; `names`: an enum of the existing names (None: any name)."""
    name: dict[str, Any] = {"type": "string", "description": "The exact name of the memory to change."}
    if names is not None:
        name["enum"] = list(names)
    return {
        "name": MODIFY,
        "description": _MODIFY_HELP,
        "input_schema": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["update", "delete"]},
                "name": name,
                "description": _DESCRIPTION_PROPERTY,
                "body": {"type": "string", "description": "The new body, replacing the whole body (update)."},
                "importance": _IMPORTANCE_PROPERTY,
                "expires": {**_EXPIRES_PROPERTY, "description": _EXPIRES_PROPERTY["description"] + " Empty: none."},
            },
            "required": ["action", "name"],
            "additionalProperties": False,
        },
    }


def _check_size(text: str) -> None:
    """Refused before the write is asked for; the folder would refuse it too (MemoryDir's writes)."""
    if (why := too_large(len(text.encode("utf-8")))) is not None:
        raise ToolInputError(f"the memory would be {why}; a memory is a few hundred bytes: save only the fact")


_NAME_HELP = "A short kebab-case name, unique in the folder, e.g. lint-before-commit."
_WHY_HELP = "The incident, request or constraint behind it (feedback and project)."
_DESCRIPTION_PROPERTY: dict[str, Any] = {
    "type": "string",
    "maxLength": DESCRIPTION_MAX,
    "description": (
        f"One line, at most {DESCRIPTION_MAX} characters, specific enough to judge relevance from it "
        "alone: the memory index shows it in every session."
    ),
}
_IMPORTANCE_PROPERTY: dict[str, Any] = {
    "type": "number",
    "minimum": 0,
    "maximum": 1,
    "description": "0 to 1 (unset: 0.5). A full index leaves out low values first; high ones load in full.",
}
_EXPIRES_PROPERTY: dict[str, Any] = {
    "type": "string",
    "description": "The date (YYYY-MM-DD) on which it stops applying; it then leaves the index.",
}


class _Input:
    """Reads one tool input, raising ToolInputError with a message the model can act on."""

    def __init__(self, data: Mapping[str, Any], tool: str) -> None:
        self.data = data
        self.tool = tool

    def only(self, *allowed: str) -> None:
        unknown = sorted(str(key) for key in self.data if key not in allowed)
        if unknown:
            raise ToolInputError(f"{self.tool} does not take {', '.join(unknown)} here; it takes {', '.join(allowed)}")

    def text(self, key: str, required: bool = False) -> str:
        value = self.data.get(key)
        if value is None:
            if required:
                raise ToolInputError(f"{self.tool} needs `{key}`")
            return ""
        if not isinstance(value, str):
            raise ToolInputError(f"`{key}` must be a string, not {type(value).__name__}")
        if _UNENCODABLE.search(value):
            raise ToolInputError(f"`{key}` contains a NUL byte or an unpaired surrogate; memories are text")
        if required and not value.strip():
            raise ToolInputError(f"`{key}` must not be empty")
        return value

    def choice(self, key: str, options: Iterable[str]) -> str:
        options = list(options)
        value = self.text(key, required=True).strip().lower()
        if value not in options:
            raise ToolInputError(f"`{key}` must be one of {', '.join(options)}, not {self.data.get(key)!r}")
        return value

    def description(self, required: bool) -> str | None:
        if not required and "description" not in self.data:
            return None
        value = " ".join(self.text("description", required=True).split())  # one line
        if len(value) > DESCRIPTION_MAX:
            raise ToolInputError(
                f"`description` is {len(value)} characters; the limit is {DESCRIPTION_MAX}: shorten it"
            )
        return value

    def importance(self) -> float | None:
        value = self.data.get("importance")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ToolInputError(f"`importance` must be a number from 0 to 1, not {value!r}")
        return float(value)

    def date(self, key: str, today: dt.date) -> dt.date | None:
        """A date: YYYY-MM-DD or a phrase such as "next month"; empty gives None."""
        value = self.text(key).strip()
        if not value:
            return None
        from memdir.text.dates import parse_day  # a large grammar; loaded only when a date is given

        day = parse_day(value, today)
        if day is None:
            raise ToolInputError(f"`{key}` must be a date (YYYY-MM-DD), not {value!r}")
        return day
