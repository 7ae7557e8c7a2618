"""F: files and frontmatter. Whether each file can be read as a memory, and has what one needs."""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections.abc import Iterable, Iterator

from memdir.core.model import (
    DESCRIPTION_MAX,
    INDEX_NAME,
    PENDING_SUPERSEDE,
    LenientRead,
    Memory,
    MemoryType,
    Status,
    one_line,
    strict_requoting,
)
from memdir.lint.registry import Applicability, Edit, Fix, Hit, LintContext, Severity, rule

_TYPES = ", ".join(t.value for t in MemoryType)
_VALID_FRONTMATTER = """\
    ---
    name: deploy-target
    description: We deploy to Fly.io from main; staging is a separate app
    type: project
    ---"""


def _problems(ctx: LintContext, kind: str) -> Iterator[Hit]:
    for problem in ctx.scan.problems:
        if problem.kind == kind:
            yield Hit(problem.path, problem.line, problem.message)


@rule(
    "F001", "missing-frontmatter", Severity.WARNING,
    "Finds markdown files in the memory folder that have no frontmatter.",
    why="""A memory file starts with a YAML block between `---` lines holding at least `name`,
    `description` and `type`. A file without one is not a memory: it is never indexed, and the
    agent only finds it by chance.""",
    example="# Deploy notes\n\nWe deploy to Fly.io from main.",
    instead=_VALID_FRONTMATTER + "\n    We deploy to Fly.io from main.",
)  # fmt: skip
def missing_frontmatter(ctx: LintContext) -> Iterator[Hit]:
    yield from _problems(ctx, "no-frontmatter")


@rule(
    "F002", "invalid-frontmatter", Severity.ERROR,
    "Finds frontmatter that neither YAML nor Claude Code's second reading (F013) parses, or that is not a "
    "mapping of fields.",
    why="""Broken YAML hides the whole memory: Claude Code loads no name, type or description from
    it, and memdir, which reads a file exactly when Claude Code does, cannot either, so it is not
    indexed (an existing index line for it is kept as written). Usual causes: a value that opens with
    a quote and goes on after the closing one, text indented under a plain value, and a value with
    `: ` in a file with Windows (CRLF) line ends, which Claude Code's retry does not quote.""",
    example='description: "npm", not yarn, for every install',
    instead="""description: '"npm", not yarn, for every install'""",
)  # fmt: skip
def invalid_frontmatter(ctx: LintContext) -> Iterator[Hit]:
    yield from _problems(ctx, "invalid-frontmatter")


@rule(
    "F003", "unreadable-file", Severity.ERROR,
    "Finds files that cannot be read as text: not UTF-8, binary, over 1 MiB, a directory or a named pipe named `*.md`.",
    why="""Memory files are small UTF-8 markdown files. memdir skips anything else (and MEMORY.md
    itself if it is not UTF-8, which `memdir index` then refuses to rewrite) and names it here,
    so that nothing is silently missing from the agent's memory.""",
    example="notes.md saved as Latin-1 by an old editor",
    instead="Re-save the file as UTF-8, or move what is not a memory out of the folder.",
)  # fmt: skip
def unreadable_file(ctx: LintContext) -> Iterator[Hit]:
    yield from _problems(ctx, "unreadable")
    # Reported by S001 (a link out of the folder) or S007 (any other link) instead.
    index_reported = any(p.path == INDEX_NAME for p in ctx.scan.problems) or (ctx.root / INDEX_NAME).is_symlink()
    if ctx.index_problem is not None and not index_reported:
        yield Hit(INDEX_NAME, None, ctx.index_problem)


@rule(
    "F004", "missing-name", Severity.ERROR,
    "Finds memories whose frontmatter has no `name`, or an empty one.",
    why="""`name` identifies a memory to people and to `memdir show/edit/rm`, and is the link text in
    the index; without it the index falls back to the file name.""",
    example="---\nname:\ndescription: Run npm run lint before every commit\ntype: feedback\n---",
    instead="---\nname: lint-before-commit\ndescription: Run npm run lint before every commit\ntype: feedback\n---",
)  # fmt: skip
def missing_name(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        if not memory.name:
            empty = "name" in memory.fields
            what = "`name` is empty" if empty else "no `name`"
            yield Hit(memory.path, memory.line_of("name"), f"{what} (the index shows the file name instead)")


@rule(
    "F005", "missing-description", Severity.ERROR,
    "Finds memories whose frontmatter has no `description`, or an empty one.",
    why="""The description is the index hook: the one line an agent reads at the start of every
    session to decide whether the memory matters. Without it the index line is a bare link.""",
    example="---\nname: lint-before-commit\ntype: feedback\n---",
    instead="---\nname: lint-before-commit\ndescription: Run npm run lint before every commit\ntype: feedback\n---",
)  # fmt: skip
def missing_description(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        if not memory.description:
            yield Hit(
                memory.path, memory.line_of("description"), "no `description`: the index line will be a bare link"
            )


@rule(
    "F006", "missing-type", Severity.ERROR,
    "Finds memories with no `type`, neither top-level nor under `metadata:`.",
    why="""Every memory is one of user, feedback, project or reference; the type decides what the
    body must hold and where the entry sits in the index. A memory without a type is not indexed.""",
    example="---\nname: lint-before-commit\ndescription: Run npm run lint before every commit\n---",
    instead="---\nname: lint-before-commit\ndescription: Run npm run lint before every commit\ntype: feedback\n---",
)  # fmt: skip
def missing_type(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        if memory.raw_type is None:
            prefix = memory.stem.split("_", 1)[0].lower()
            hint = f"; the file name suggests `type: {prefix}`" if prefix in {t.value for t in MemoryType} else ""
            yield Hit(memory.path, 1, f"no `type`, so it is not indexed{hint}")


@rule(
    "F007", "unknown-type", Severity.ERROR,
    "Finds a `type` that is not one of user, feedback, project, reference, and suggests the nearest.",
    why="""The type is a closed set; a custom type (`handoff`, `note`) means nothing to the agent and
    the memory is not indexed.""",
    example="type: decision",
    instead="type: project   # a decision or deadline is project; a rule learnt from a correction is feedback",
)  # fmt: skip
def unknown_type(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        raw = memory.raw_type
        if raw is not None and memory.type is None:
            near = difflib.get_close_matches(raw.lower(), [t.value for t in MemoryType], n=1, cutoff=0.6)
            hint = f"did you mean `{near[0]}`?" if near else f"use one of {_TYPES}"
            line = memory.line_of("metadata" if memory.type_is_nested else "type")
            yield Hit(memory.path, line, f"unknown type {raw!r}, so it is not indexed; {hint}")


@rule(
    "F008", "long-description", Severity.WARNING,
    f"Finds descriptions over {DESCRIPTION_MAX} characters.",
    why=f"""The description is one line of the index, which every session loads within a tight
    budget. Past {DESCRIPTION_MAX} characters it crowds out other memories and stops being a hook.""",
    example="description: We deploy to Fly.io from main, staging is a separate app called web-staging, "
    "and the database is on Neon with branches per preview environment, see the runbook",
    instead="description: We deploy to Fly.io from main; staging and previews are separate apps",
)  # fmt: skip
def long_description(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        length = len(memory.description)
        if length > DESCRIPTION_MAX:
            yield Hit(
                memory.path,
                memory.line_of("description"),
                f"description is {length} characters (limit {DESCRIPTION_MAX})",
            )


@rule(
    "F009", "nested-type", Severity.INFO,
    "Finds memories whose type sits under `metadata:` rather than at the top level.",
    why="""Some tools write `metadata: {type: ...}`. memdir reads it, but the canonical form, which
    Claude Code and other readers look for first, is a top-level `type:` field; a reader that only
    knows the canonical form treats the memory as untyped.""",
    example="---\nname: lint-before-commit\nmetadata:\n  type: feedback\n---",
    instead="---\nname: lint-before-commit\ntype: feedback\n---",
)  # fmt: skip
def nested_type(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        if memory.type_is_nested and memory.type is not None:
            yield Hit(
                memory.path,
                memory.line_of("metadata"),
                f"type {memory.type.value!r} is under `metadata:`; the canonical form is a top-level `type:`",
            )


# A top-level key: at column 0, plain or quoted, followed by a colon and a space or the line end.
_TOP_KEY = re.compile(r"""^(?!-\s|#)("[^"\n]*"|'[^'\n]*'|[^\s:#'"][^:\n]*?)[ \t]*:(?:[ \t]|$)""", re.MULTILINE)


@rule(
    "F010", "repeated-key", Severity.WARNING,
    "Finds frontmatter keys that appear more than once.",
    why="""YAML keeps only the last of two equal keys and drops the first without a word, so an
    edit that added `updated:` again, or a merge that kept both sides, silently loses a value.""",
    example="---\nname: deploy-target\ndescription: We deploy to Fly.io\ndescription: We deploy to Render\n---",
    instead="---\nname: deploy-target\ndescription: We deploy to Render\n---",
)  # fmt: skip
def repeated_key(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        yaml_text, seen = memory.doc.yaml_text, dict[str, int]()
        line = memory.doc.text.count("\n", 0, memory.doc.fm_start) + 1
        counted = 0  # lines are counted on from the last key: from the start, 50,000 keys took seconds
        for found in _TOP_KEY.finditer(yaml_text):
            key = found.group(1).strip("\"'")
            line += yaml_text.count("\n", counted, found.start())
            counted = found.start()
            if key in seen:
                yield Hit(memory.path, line, f"`{key}` repeats line {seen[key]}; YAML keeps only the last value")
            else:
                seen[key] = line


# The fields memdir reads as dates (model.Memory.last_changed and .expires) and what it does without one.
_DATE_FIELDS = {
    "expires": "so the memory never expires",
    "created": "so the memory counts as undated",
    "updated": "so the memory counts as undated",
    "modified": "so the memory counts as undated",
    "updated_at": "so the memory counts as undated",
}


def _date_problem(memory: Memory, key: str) -> str | None:
    value = memory.fields.get(key)
    if isinstance(value, dt.date) or value is None:  # YAML built it: a real date or date-time
        return None
    if isinstance(value, str):
        try:
            dt.datetime.fromisoformat(value.strip())
            return None
        except ValueError:
            pass
    read = memory.date(key)
    fallback = f"so memdir reads only its day, {read.isoformat()}" if read else _DATE_FIELDS[key]
    return f"`{key}` is {one_line(value)!r}, not a date, {fallback} (write it as YYYY-MM-DD)"


def _importance_problem(memory: Memory) -> str | None:
    value, given = memory.fields.get("importance"), memory.importance_given
    if value is None:
        return None
    if given is None:
        return f"`importance` is {one_line(value)!r}, not a number from 0 to 1; memdir uses {memory.importance:g}"
    if not 0 <= given <= 1:
        return f"`importance` is {given:g}, outside 0 to 1; memdir uses {memory.importance:g}"
    return None


@rule(
    "F011", "invalid-field-value", Severity.ERROR,
    "Finds `expires`, `created`, `updated` that are not dates, and an `importance` that is not a number from 0 to 1.",
    why="""memdir acts on these fields: `expires` takes a memory out of the index and recall on that
    day, the dates rank it and age it, `importance` weighs it in recall and decides what the index
    keeps when it is full. A value it cannot use is not an error anywhere else, so without this rule
    a typo passes unseen: `expires: 2026-02-30` (no such day) or `expires: next week` means the memory
    never expires, and `importance: high` counts as the default 0.5.""",
    example="---\nname: release-freeze\ndescription: Mobile release freeze until the 30th\ntype: project\n"
    "expires: 2026-02-30\nimportance: high\n---",
    instead="---\nname: release-freeze\ndescription: Mobile release freeze until the 28th\ntype: project\n"
    "expires: 2026-02-28\nimportance: 0.8\n---",
)  # fmt: skip
def invalid_field_value(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        for key in _DATE_FIELDS:
            if (problem := _date_problem(memory, key)) is not None:
                yield Hit(memory.path, memory.line_of(key), problem)
        if (problem := _importance_problem(memory)) is not None:
            yield Hit(memory.path, memory.line_of("importance"), problem)


@rule(
    "F012", "stale-pending-supersede", Severity.WARNING,
    "Finds `supersedes_on_accept` on a memory that is not quarantined.",
    why="""A quarantined memory that replaces another records it as `supersedes_on_accept`, and
    `memdir review accept` applies it: the old memory is superseded then, not before. On a memory
    that is no longer quarantined (its `status` edited by hand) nothing will ever apply it, so the
    memory it names stays live beside its replacement, and the field only misleads.""",
    example="---\nname: deploy-target\ndescription: Deploys go to Frankfurt\ntype: reference\n"
    "supersedes_on_accept: {digest: 3f2a9c1d0b7e6a54, file: reference_staging-url.md}\n---",
    instead="Let `memdir review accept` apply it (set `status: quarantined` again first), or remove the\n"
    "field and supersede by hand (`memdir add ... --supersedes`, or `memdir consolidate`).",
)  # fmt: skip
def stale_pending_supersede(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        if PENDING_SUPERSEDE in memory.fields and memory.status != Status.QUARANTINED.value:
            yield Hit(
                memory.path,
                memory.line_of(PENDING_SUPERSEDE),
                f"`{PENDING_SUPERSEDE}` on a memory that is {memory.status}: nothing will apply it",
            )


@rule(
    "F013", "non-strict-frontmatter", Severity.WARNING,
    "Finds frontmatter that is not strict YAML, which Claude Code (and memdir) read only after quoting values.",
    why="""Claude Code parses frontmatter as YAML and, when that fails, once more after putting in
    double quotes every top-level value that holds `: ` or one of `{ } [ ] * & # ! | > % @` and
    backtick. So `description: Rosetta Stone: 4 principles` loads, and memdir, which reads a file
    exactly when Claude Code does, indexes it. Every other YAML reader (editors, site generators,
    scripts) rejects the whole file. And once the retry runs it quotes every such line, so a value
    like `name: C #2` or `metadata: {type: user}` means one thing to Claude Code and another to YAML.""",
    example="description: Rosetta Stone: 4 principles",
    instead='description: "Rosetta Stone: 4 principles"',
    fix="""Quotes the values Claude Code's retry quotes, exactly as it does (`\\` and `"` escaped), and
    changes nothing else: the file then reads as strict YAML to the same fields. Unsafe when YAML
    alone would read one of those values otherwise (a comment, a mapping), since quoting settles
    Claude Code's reading of it. None when quoting is not enough (leading tabs, which the retry reads
    as two spaces each).""",
    fixable=Applicability.SAFE,
)  # fmt: skip
def non_strict_frontmatter(ctx: LintContext) -> Iterator[Hit]:
    for memory in ctx.scan.memories:
        if memory.doc.lenient is not None:
            yield _non_strict_hit(memory, memory.doc.lenient)


def _non_strict_hit(memory: Memory, lenient: LenientRead) -> Hit:
    doc = memory.doc
    lines = doc.yaml_text.split("\n")
    how = [f"quoting {_some(lines[i].partition(':')[0] for i in lenient.quoted_lines)}"] if lenient.quoted_lines else []
    how += ["reading leading tabs as spaces"] if lenient.tabs else []
    strict = lenient.strict_error.removeprefix("invalid YAML in frontmatter: ")
    where = f", line {lenient.strict_line}" if lenient.strict_line else ""
    message = f"frontmatter is not strict YAML ({strict}{where}); Claude Code reads it after {' and '.join(how)}"
    first_line = doc.text.count("\n", 0, doc.fm_start) + 1
    line = first_line + lenient.quoted_lines[0] if lenient.quoted_lines else lenient.strict_line
    requotes = strict_requoting(doc)
    if requotes is None:
        return Hit(memory.path, line, message + ("; replace the leading tabs with spaces" if lenient.tabs else ""))
    otherwise = [r.key for r in requotes if r.yaml_reads_otherwise]
    note = f" (YAML alone reads {_some(otherwise)} otherwise)" if otherwise else ""
    safety = Applicability.UNSAFE if otherwise else Applicability.SAFE
    fix = Fix(
        safety, f"quote the values as Claude Code does{note}", tuple(Edit(r.start, r.end, r.line) for r in requotes)
    )
    return Hit(memory.path, line, message + note, fix)


def _some(keys: Iterable[str], shown: int = 3) -> str:
    """'`a`, `b`' or '`a`, `b`, `c` and 40 more': a frontmatter can quote thousands."""
    keys = list(keys)
    named = ", ".join(f"`{key}`" for key in keys[:shown])
    return named if len(keys) <= shown else f"{named} and {len(keys) - shown:,} more"
