"""One memory file: its types, frontmatter parsing, and edits that keep every other byte as it was.

Parsing keeps the exact text and the offsets of the frontmatter block, so that a rewrite only
touches the lines of the fields it changes; unknown fields, comments, quoting and the body survive
byte for byte.

Over 500 lines: YAML with Claude Code's retry and the bounds on what the parser is given (the fast
path for plain frontmatter is core/plainyaml.py), and byte-keeping edits.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from memdir.core.errors import InvalidMemory
from memdir.core.plainyaml import INT_BOUND, plain_flow_list, plain_frontmatter
from memdir.text.lazyre import LazyPattern

if TYPE_CHECKING:
    from memdir.text.dates import DateSpan

_T = TypeVar("_T")

DESCRIPTION_MAX = 150
INDEX_NAME = "MEMORY.md"


class MemoryType(StrEnum):
    USER = "user"
    FEEDBACK = "feedback"
    PROJECT = "project"
    REFERENCE = "reference"

    @property
    def needs_why_and_how(self) -> bool:
        return self in (MemoryType.FEEDBACK, MemoryType.PROJECT)


TYPE_ORDER = {t: i for i, t in enumerate(MemoryType)}
_TYPE_NAMED = {t.value: t for t in MemoryType}  # a lookup, not MemoryType(name) and its ValueError


PENDING_SUPERSEDE = "supersedes_on_accept"
"""On a quarantined memory: `{file, digest}` of the memory it replaces once `memdir review accept`
lets it in (see `MemoryDir.commit`). Not `supersedes`, which says the replacement happened."""


class Status(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    QUARANTINED = "quarantined"
    ARCHIVED = "archived"


class FrontmatterError(Exception):
    """The text has a frontmatter block that is not a YAML mapping."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class InvalidYaml(FrontmatterError):
    """The frontmatter is not YAML at all (a syntax error), as opposed to YAML memdir will not load
    (too many values, too deep). Only this kind gets Claude Code's second reading."""


@dataclass(frozen=True)
class LenientRead:
    """How frontmatter that is not strict YAML was read: the way Claude Code reads it, after its retry
    quoted the values on `quoted_lines` (0-based lines of the YAML block) and read each leading tab as
    two spaces (`tabs`). `strict_error` and `strict_line` are what strict YAML said."""

    quoted_lines: tuple[int, ...]
    tabs: bool
    strict_error: str
    strict_line: int | None = None


@dataclass(frozen=True)
class Document:
    """A markdown file split into frontmatter and body, with offsets into the original text."""

    text: str
    data: dict[str, Any]
    has_frontmatter: bool
    fm_start: int = 0  # offset of the first YAML line
    fm_end: int = 0  # offset of the closing delimiter line
    body_start: int = 0
    body_line: int = 1  # 1-based line number where the body starts
    lenient: LenientRead | None = None  # set when only Claude Code's retry read the frontmatter

    @property
    def body(self) -> str:
        return self.text[self.body_start :]

    @property
    def yaml_text(self) -> str:
        return self.text[self.fm_start : self.fm_end]


_OPEN = re.compile(r"\A(\ufeff)?---[ \t]*\r?\n")
# The closing line, found from the newline before the first YAML line: a pattern that starts with
# `\n` lets `re` skip from line to line in C, where `^` with MULTILINE tried every character.
_CLOSE = re.compile(r"\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)")


def parse_document(text: str) -> Document:
    """Split `text` into YAML frontmatter and body. Raises FrontmatterError for broken YAML."""
    opened = _OPEN.match(text)
    if not opened:
        return Document(text=text, data={}, has_frontmatter=False)
    closed = _CLOSE.search(text, opened.end() - 1)
    if not closed:
        raise FrontmatterError("frontmatter opened with '---' but never closed", line=1)
    fm_end = closed.start() + 1  # after the newline the pattern starts with
    yaml_text = text[opened.end() : fm_end]
    data = plain_frontmatter(yaml_text)
    lenient = None
    if data is None and yaml_text.strip():
        try:
            data = _load_yaml(yaml_text)
        except InvalidYaml as exc:
            data, lenient = _claude_code_retry(yaml_text, exc)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontmatterError("frontmatter is not a mapping of fields", line=2)
    body_start = closed.end()
    return Document(
        text=text,
        data=data,
        has_frontmatter=True,
        fm_start=opened.end(),
        fm_end=fm_end,
        body_start=body_start,
        body_line=text.count("\n", 0, body_start) + 1,
        lenient=lenient,
    )


# Claude Code's second reading of frontmatter YAML rejects (`quoteProblematicValues` in its bundle,
# read from version 2.1.197): each line `key: value` whose key is letters, `_` and `-` only, whose value
# is not already quoted nor a flow list, and holds one of {}[]*&#!|>%@` or ": ", has its value put in
# double quotes with `\` and `"` escaped; then leading tabs become two spaces each, and the YAML is
# parsed again. The patterns below are its JavaScript ones: `\s` is JavaScript's whitespace (it takes
# tabs and CR), `.` stops at CR, LF, U+2028 and U+2029, so a CRLF line never matches; in the tab
# pattern `^` with the m flag follows any of those four. Claude Code parses with Bun's YAML 1.2
# parser, memdir with PyYAML (1.1): the two differ on a few values (`yes`, `0o17`) and memdir keeps
# its own reading of those; the retry is matched line for line. They compile on first use
# (text/lazyre.py): few files need the retry, and compiling them cost every start-up a millisecond.
_JS_SPACE = "\t\n\v\f\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_CC_KEY_VALUE = LazyPattern(f"([a-zA-Z_-]+):[{_JS_SPACE}]+([^\n\r\u2028\u2029]+)")
_CC_SPECIAL = LazyPattern(r"[{}\[\]*&#!|>%@`]|: ")
_CC_LEADING_TABS = LazyPattern("(?:^|(?<=[\r\u2028\u2029]))\t+", re.MULTILINE)


def _tabs_as_spaces(text: str) -> str:
    """Each tab that opens a line made two spaces, as Claude Code's retry does."""
    return _CC_LEADING_TABS.sub(lambda tabs: "  " * len(tabs.group()), text)


def claude_code_quoted(line: str) -> str | None:
    """`line` as Claude Code's retry rewrites it (`key: "value"`), or None when it leaves it as is."""
    found = _CC_KEY_VALUE.fullmatch(line)
    if found is None:
        return None
    key, value = found.group(1), found.group(2)
    if value[0] == value[-1] and value[0] in "\"'":  # a lone quote counts too, as in JavaScript
        return None
    if value.startswith("[") and value.endswith("]") and _is_flow_list(value):
        return None
    if not _CC_SPECIAL.search(value):
        return None
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'{key}: "{escaped}"'


def _is_flow_list(value: str) -> bool:
    if plain_flow_list(value)[0]:  # `[a, b]`, the usual tags line, without a YAML parser
        return True
    try:
        return isinstance(_load_yaml(value), list)
    except FrontmatterError:
        return False


def _claude_code_retry(yaml_text: str, strict: InvalidYaml) -> tuple[dict[str, Any], LenientRead]:
    """The frontmatter as Claude Code reads it when strict YAML fails, and how; raises `strict` when
    the retry does not read a mapping either."""
    lines = yaml_text.split("\n")
    quoted: list[int] = []
    for i, line in enumerate(lines):
        replacement = claude_code_quoted(line)
        if replacement is not None:
            lines[i] = replacement
            quoted.append(i)
    retried = "\n".join(lines)
    retabbed = _tabs_as_spaces(retried)
    if retabbed == yaml_text:
        raise strict  # nothing to quote, no tab: the same text fails the same way
    # A quoted line is one scalar, whatever brackets it holds; counted, `tags: "[a"` a hundred
    # thousand times would send the text to the slow parser as if it nested that deep. The other
    # lines are measured with their tabs made spaces, as the parser will see them.
    skipped = set(quoted)
    unquoted = "\n".join(line for i, line in enumerate(lines) if i not in skipped)
    shallow = _looks_shallow(_tabs_as_spaces(unquoted))
    try:
        data = _load_yaml(retabbed, shallow)
    except InvalidYaml:
        raise strict from None  # what strict YAML said is the better guide to the fix
    # Too many values or too deep: refused like any YAML that big, whichever reading got there.
    if not isinstance(data, dict):
        raise strict
    return data, LenientRead(tuple(quoted), retabbed != retried, str(strict), strict.line)


# Bounds on what the YAML parser is given. libyaml's composer recurses once per level of nesting
# and crashes the process (a segfault, not an exception) some ten thousand levels down, so only
# shallow frontmatter goes to it and anything deeper to the pure-Python parser, whose recursion
# ends in a RecursionError. Aliases can repeat a collection inside itself ("billion laughs"): a
# few hundred bytes that expand to more values than memory holds; the node graph is measured with
# each alias counted in full before anything is built from it.
YAML_MAX_VALUES = 10_000  # a memory's frontmatter has a dozen
_SHALLOW_DEPTH = 32


def _load_yaml(yaml_text: str, shallow: bool | None = None) -> Any:
    """What the YAML parser makes of frontmatter plainyaml declined. Imported on first use: most
    folders never need it, and it is a fifth of the start-up of `memdir index`. `shallow`: whether
    _looks_shallow holds, when the caller knows better."""
    import yaml

    safe, fast = _loaders()
    # libyaml's loader is several times faster; the pure-Python one gives the same results.
    shallow = _looks_shallow(yaml_text) if shallow is None else shallow
    loader = (fast if shallow else safe)(yaml_text)
    try:
        node = loader.get_single_node()
        if node is not None and _expanded_size(node) > YAML_MAX_VALUES:
            raise FrontmatterError(
                f"frontmatter YAML expands to more than {YAML_MAX_VALUES:,} values (aliases repeated inside "
                "aliases, or an alias inside itself); not loaded"
            )
        return None if node is None else loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else None  # +1 for 1-based, +1 for '---'
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InvalidYaml(f"invalid YAML in frontmatter: {problem}", line=line) from None
    except RecursionError:
        raise FrontmatterError("frontmatter YAML nests too deep to read; not loaded") from None
    finally:
        loader.dispose()


_LOADERS: tuple[Any, Any] | None = None


def _loaders() -> tuple[Any, Any]:
    """YAML's safe loaders, pure-Python and libyaml's, reading an impossible date, and an integer too
    long to be one (see INT_DIGITS_MAX), as the text it is.

    YAML reads `2026-02-30` or `2026-11-24 25:00:00` as a timestamp and then fails to build it with a
    ValueError, which would make one typo in one file's `expires` an error of every command. As text
    the memory still loads, the date counts as absent, and lint F011 names it."""
    global _LOADERS
    if _LOADERS is None:
        import yaml

        def timestamp_or_text(loader: Any, node: Any) -> Any:
            try:
                return loader.construct_yaml_timestamp(node)
            except ValueError:
                return loader.construct_scalar(node)

        def int_or_text(loader: Any, node: Any) -> Any:
            try:
                number = loader.construct_yaml_int(node)
            except ValueError:  # over Python's digit limit for int(text)
                return loader.construct_scalar(node)
            return number if -INT_BOUND < number < INT_BOUND else loader.construct_scalar(node)

        built = []
        for base in (yaml.SafeLoader, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            loader_class: Any = type(f"Memdir{base.__name__}", (base,), {})
            loader_class.add_constructor("tag:yaml.org,2002:timestamp", timestamp_or_text)
            loader_class.add_constructor("tag:yaml.org,2002:int", int_or_text)
            built.append(loader_class)
        _LOADERS = (built[0], built[1])
    return _LOADERS


def _looks_shallow(yaml_text: str) -> bool:
    """True when the YAML cannot nest more than a few dozen levels: few brackets open at once,
    short indentation, short chains of '- ' (quotes are not parsed, which only errs on the safe side)."""
    depth = deepest = 0
    for char in yaml_text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    if deepest > _SHALLOW_DEPTH:
        return False
    for line in yaml_text.splitlines():
        stripped = line.lstrip(" -")
        if len(line) - len(stripped) > 2 * _SHALLOW_DEPTH:
            return False
    return True


def _expanded_size(root: Any) -> int:
    """How many values the YAML node graph `root` makes once every alias is copied out, counted
    without copying: each node's size once, shared nodes reused. A cycle counts as too many."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        value = node.value
        children = (
            []
            if isinstance(value, str)
            else [c for pair in value for c in pair]
            if value and isinstance(value[0], tuple)
            else value
        )
        if children_done:
            open_nodes.discard(key)
            sizes[key] = min(1 + sum(sizes[id(c)] for c in children), YAML_MAX_VALUES + 1)
            continue
        if key in open_nodes:  # reached again while inside itself
            return YAML_MAX_VALUES + 1
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


@dataclass(frozen=True)
class Requote:
    """A value of a leniently read file quoted as Claude Code's retry quotes it: text[start:end], the
    line, becomes `line`. `yaml_reads_otherwise` when strict YAML reads the old line alone as another
    value (`name: C #2` is 'C'; `metadata: {a: 1}` a mapping): quoting then settles Claude Code's
    reading, which may not be what the author meant."""

    key: str
    start: int
    end: int
    line: str
    yaml_reads_otherwise: bool


def strict_requoting(doc: Document) -> list[Requote] | None:
    """The values Claude Code's retry quoted in `doc`, quoted the same way in its text, when that alone
    makes the frontmatter strict YAML that reads as the same fields; None when it does not (leading
    tabs) or the document was read strictly."""
    if doc.lenient is None:
        return None
    quoted = set(doc.lenient.quoted_lines)
    requotes: list[Requote] = []
    at = doc.fm_start
    for i, line in enumerate(doc.yaml_text.split("\n")):
        replacement = claude_code_quoted(line) if i in quoted else None
        if replacement is not None:
            key = replacement.partition(":")[0]
            requotes.append(Requote(key, at, at + len(line), replacement, _reads_otherwise(line, replacement)))
        at += len(line) + 1
    pieces, at = [], 0
    for requote in requotes:  # joined once: thousands of quoted lines, each a copy of the text, took seconds
        pieces += [doc.text[at : requote.start], requote.line]
        at = requote.end
    edited = "".join([*pieces, doc.text[at:]])
    try:
        after = parse_document(edited)
    except FrontmatterError:
        return None
    if after.lenient is not None or repr(after.data) != repr(doc.data):
        return None
    return requotes


def _reads_otherwise(line: str, quoted: str) -> bool:
    try:
        alone = _load_yaml(line)
    except FrontmatterError:
        return False  # not YAML by itself: quoting is the only reading there is
    try:
        return repr(alone) != repr(_load_yaml(quoted))
    except FrontmatterError:  # cannot happen (the retry read it), but if it did: have a person look
        return True


# Plain strings: recall asks once per matching memory, and comparing with enum members is slow.
_EXCLUDED_STATUSES = frozenset(s.value for s in (Status.SUPERSEDED, Status.QUARANTINED, Status.ARCHIVED))
_ACTIVE = Status.ACTIVE.value


def exclusion(status: str, superseded: bool, expires: dt.date | None, today: dt.date) -> str | None:
    """Why a memory with these fields must not be indexed, or None when it may be."""
    if status in _EXCLUDED_STATUSES:
        return str(status)
    if superseded:
        return "superseded"
    if expires is not None and expires <= today:
        return f"expired {expires.isoformat()}"
    return None


def _as_date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    return None


class _computed_once(Generic[_T]):
    """A property computed on first use and then kept in the instance's __dict__.

    functools.cached_property does the same, but takes a lock on every first access in Python
    3.11, which costs a 10,000-memory folder a tenth of a second."""

    def __init__(self, compute: Callable[[Any], _T]) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    @overload
    def __get__(self, instance: None, owner: type) -> _computed_once[_T]: ...
    @overload
    def __get__(self, instance: object, owner: type) -> _T: ...
    def __get__(self, instance: object | None, owner: type) -> _T | _computed_once[_T]:
        if instance is None:
            return self
        value = self.compute(instance)
        instance.__dict__[self.name] = value  # found before this non-data descriptor from now on
        return value


def one_line(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


@dataclass(frozen=True)
class Memory:
    """A memory file whose frontmatter parsed. It may still be invalid (no type, unknown type).

    The fields read from the frontmatter are computed once (cached_property): ranking and
    filtering a large folder asks each memory for its type and dates many times."""

    path: str  # POSIX path relative to the memory folder
    doc: Document
    mtime: float = 0.0

    @property
    def fields(self) -> dict[str, Any]:
        return self.doc.data

    @property
    def body(self) -> str:
        return self.doc.body

    @property
    def stem(self) -> str:
        return PurePosixPath(self.path).stem

    @_computed_once
    def name(self) -> str:
        return one_line(self.fields.get("name"))

    @property
    def title(self) -> str:
        """What the index shows as the link text: the name, else the file's stem."""
        return self.name or self.stem

    @_computed_once
    def description(self) -> str:
        return one_line(self.fields.get("description"))

    @_computed_once
    def raw_type(self) -> str | None:
        """The type as written, top-level first, else nested under `metadata:`."""
        value = self.fields.get("type")
        if value is None and isinstance(self.fields.get("metadata"), dict):
            value = self.fields["metadata"].get("type")
        return None if value is None else one_line(value)

    @property
    def type_is_nested(self) -> bool:
        return self.fields.get("type") is None and self.raw_type is not None

    @_computed_once
    def type(self) -> MemoryType | None:
        raw = self.raw_type
        return _TYPE_NAMED.get(raw.lower()) if raw else None

    @_computed_once
    def importance_given(self) -> float | None:
        """`importance` as written when it is a number; None when unset or not one (a word, a bool,
        YAML's .nan), which memdir reads as the default."""
        value = self.fields.get("importance")
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            return None  # (int, float), not int | float: a union would be built on every call; NaN != NaN
        return float(value)

    @_computed_once
    def importance(self) -> float:
        given = self.importance_given
        return 0.5 if given is None else min(max(given, 0.0), 1.0)

    def date(self, key: str) -> dt.date | None:
        return _as_date(self.fields.get(key))

    @_computed_once
    def last_changed(self) -> dt.date | None:
        """The newest date the file claims for itself, used to rank and to anchor dates."""
        fields = self.fields
        for key in ("updated", "modified", "updated_at", "created"):
            value = fields.get(key)  # most files have one of them or none: no call for each absent one
            if value is not None and (found := _as_date(value)) is not None:
                return found
        metadata = fields.get("metadata")
        if isinstance(metadata, dict):
            return _as_date(metadata.get("modified"))
        return None

    @_computed_once
    def status(self) -> str:
        value = self.fields.get("status")
        return _ACTIVE if value is None else one_line(value).lower() or _ACTIVE

    @_computed_once
    def superseded(self) -> bool:
        return bool(self.fields.get("superseded_by"))

    @_computed_once
    def expires(self) -> dt.date | None:
        return self.date("expires")

    def exclusion(self, today: dt.date) -> str | None:
        """Why this memory must not be indexed, or None when it may be."""
        return exclusion(self.status, self.superseded, self.expires, today)

    def to_post(self) -> Any:
        """The memory as a python-frontmatter `Post` (its fields and body), for a harness built on
        that library. A copy: editing it changes no file (write through `MemoryDir.update`)."""
        import frontmatter  # only for harnesses that ask

        post = frontmatter.Post(self.body.strip())  # as frontmatter.loads reads the same file
        post.metadata.update(self.fields)  # not as keywords: a field may be called `content`
        return post

    def line_of(self, key: str) -> int:
        """1-based line of a top-level frontmatter key, else the first line of the file."""
        found = _key_line(self.doc.yaml_text, key)
        if found is None:
            return 1
        return self.doc.text.count("\n", 0, self.doc.fm_start) + found + 1


def _key_line(yaml_text: str, key: str) -> int | None:
    pattern = re.compile(rf"^{re.escape(key)}[ \t]*:", re.MULTILINE)
    found = pattern.search(yaml_text)
    return None if found is None else yaml_text.count("\n", 0, found.start())


# --- writing -------------------------------------------------------------------------------


_LINE_BREAKS = "[\n\r\x85\u2028\u2029]"  # compiled by `re` on first use: only a write needs it


def yaml_scalar(value: Any, *, _in_flow: bool = False) -> str:
    """One YAML value on one line, quoted only when YAML needs it."""
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return "[" + ", ".join(yaml_scalar(v, _in_flow=True) for v in value) + "]"
    import yaml

    # A line break of any kind goes out escaped in double quotes: on one line, and read back as it
    # was (PyYAML's single-quoted style folds NEL into a space on the way back).
    style = '"' if isinstance(value, str) and re.search(_LINE_BREAKS, value) else None
    if _in_flow and style is None:
        # Inside `[...]` fewer plain values are allowed (`[a, b]` for the one tag "a, b"; `[?0]`, a
        # mapping): PyYAML knows which, so it writes a list of one and the brackets come off.
        listed = yaml.safe_dump([value], allow_unicode=True, width=2**31, default_flow_style=True)
        return listed.strip()[1:-1]
    dumped = yaml.safe_dump(value, allow_unicode=True, width=2**31, default_flow_style=True, default_style=style)
    return dumped.removesuffix("\n").removesuffix("\n...").strip()


def set_fields(text: str, updates: dict[str, Any]) -> str:
    """Return `text` with top-level frontmatter fields set (or removed, for None values).

    Only the lines of the changed fields are touched; a field that is not there yet is appended
    at the end of the frontmatter. Raises FrontmatterError if the text has no frontmatter.
    """
    doc = parse_document(text)
    if not doc.has_frontmatter:
        raise FrontmatterError("file has no frontmatter to update")
    newline = "\r\n" if "\r\n" in doc.yaml_text else "\n"
    # Lines end at \n only: str.splitlines() also breaks at U+2028, NEL and form feeds, which can
    # sit inside a quoted value.
    lines = re.findall(r"[^\n]*\n|[^\n]+", doc.yaml_text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += newline
    for key, value in updates.items():
        start = next((i for i, ln in enumerate(lines) if _is_key_line(ln, key)), None)
        new = [] if value is None else [f"{key}: {yaml_scalar(value)}{newline}"]
        if start is None:
            lines.extend(new)
            continue
        end = start + 1
        while end < len(lines) and _continues_value(lines, end):
            end += 1
        lines[start:end] = new
    edited = text[: doc.fm_start] + "".join(lines) + text[doc.fm_end :]
    try:
        _check_only_updated(doc.data, edited, updates)
    except FrontmatterError:
        if doc.lenient is None:
            raise
        # Quoting one value can make the block strict YAML, which reads the values the retry quoted
        # but did not need to (`name: C #x`) differently: refused, rather than change them unasked.
        raise FrontmatterError(
            f"cannot set {', '.join(updates)}: the frontmatter is not strict YAML, and the edit would change "
            "how its other fields read; quote its values first (`memdir lint --fix --select F013`)"
        ) from None
    return edited


def _check_only_updated(before: dict[str, Any], edited: str, updates: dict[str, Any]) -> None:
    """Raise FrontmatterError unless `edited` reads as `before` but for the keys in `updates`.

    set_fields edits lines, YAML reads tokens: a line break YAML sees where a line does not (a bare
    CR, U+2028 in a plain value) could make a rewrite drop or corrupt a field nobody asked to touch.
    """
    after = parse_document(edited).data
    kept = [key for key in before if key not in updates]
    if any(key not in after or repr(after[key]) != repr(before[key]) for key in kept) or any(
        (key in after) == (value is None) for key, value in updates.items()
    ):
        keys = ", ".join(updates)
        raise FrontmatterError(f"cannot set {keys} without changing other fields (a line break inside a value?)")


def _is_key_line(line: str, key: str) -> bool:
    return re.match(rf"{re.escape(key)}[ \t]*:(\s|$)", line) is not None


def _continues_value(lines: list[str], i: int) -> bool:
    """Whether line i still belongs to the value of the key above it (indented or a '- ' item)."""
    line = lines[i]
    if line[:1] in (" ", "\t") or line.startswith("- ") or line.rstrip("\r\n") == "-":
        return True
    if not line.strip():  # a blank line belongs to the value only if the value goes on after it
        return i + 1 < len(lines) and _continues_value(lines, i + 1)
    return False


_SLUG_DROP = re.compile(r"[^\w]+", re.UNICODE)
SLUG_MAX_BYTES = 100


def plural(count: int, one: str, many: str) -> str:
    """'1 entry', '2 entries', '1,234 entries': a count with its noun, for messages."""
    return f"{count:,} {one if count == 1 else many}"


def slugify(name: str) -> str:
    """A file-name-safe slug: letters and digits of any script, joined by '-'.

    Path separators, dots and anything else collapse to '-', so a name can never reach outside
    the folder. Raises InvalidMemory when nothing usable is left.
    """
    text = unicodedata.normalize("NFKC", name).lower().replace("_", "-")
    slug = _SLUG_DROP.sub("-", text).strip("-")
    while len(slug.encode("utf-8")) > SLUG_MAX_BYTES:
        slug = slug[:-1].rstrip("-")
    if not slug:
        raise InvalidMemory(f"name {name!r} has no letters or digits to make a file name from")
    return slug


def absolutize_text(text: str, anchor: dt.date) -> tuple[str, list[tuple[str, DateSpan]]]:
    """A whole memory file's text with relative dates in its description and body made absolute.

    Raises FrontmatterError when the frontmatter does not parse.
    """
    from memdir.text.dates import absolutize

    doc = parse_document(text)
    body, spans = absolutize(doc.body, anchor)
    done = [("body", span) for span in spans]
    text = text[: doc.body_start] + body
    description = doc.data.get("description")
    if isinstance(description, str):
        converted, spans = absolutize(description, anchor)
        if spans:
            text = set_fields(text, {"description": converted})
            done = [("description", span) for span in spans] + done
    return text, done


def name_key(name: str) -> str:
    """What makes two names the same name: case, spacing and punctuation aside."""
    try:
        return slugify(name)
    except InvalidMemory:
        return " ".join(name.split()).casefold()


def file_name_for(memory_type: MemoryType, name: str) -> str:
    return f"{memory_type.value}_{slugify(name)}.md"


@dataclass
class NewMemory:
    """What `add` and the write path turn into a file."""

    type: MemoryType
    name: str
    description: str
    body: str = ""
    why: str = ""
    how: str = ""
    created: dt.date = field(default_factory=dt.date.today)
    importance: float | None = None
    expires: dt.date | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    path: str | None = None  # the file it keeps (a memory brought over by `import`), relative to the folder

    @property
    def file_name(self) -> str:
        """Where it is written: its own `path` when it has one, else `<type>_<slug>.md`."""
        return self.path or file_name_for(self.type, self.name)

    @classmethod
    def from_post(cls, post: Any, created: dt.date | None = None) -> NewMemory:
        """A new memory from a python-frontmatter `Post` that a harness composed: `type`, `name`
        and `description` from its metadata, the body from its content, every other field kept.
        Raises InvalidMemory when the type is missing or not one of memdir's four."""
        fields = dict(post.metadata)
        raw_type = one_line(fields.pop("type", None)).lower()
        try:
            memory_type = MemoryType(raw_type)
        except ValueError:
            kinds = ", ".join(t.value for t in MemoryType)
            raise InvalidMemory(f"a memory's type is one of {kinds}, not {raw_type or 'missing'!r}") from None
        importance = fields.pop("importance", None)
        expires = _as_date(fields.pop("expires", None))
        return cls(
            type=memory_type,
            name=one_line(fields.pop("name", None)),
            description=one_line(fields.pop("description", None)),
            body=str(post.content),
            created=_as_date(fields.pop("created", None)) or created or dt.date.today(),
            importance=float(importance) if isinstance(importance, int | float) else None,
            expires=expires,
            extra=fields,
        )

    def absolutize_dates(self) -> list[tuple[str, DateSpan]]:
        """Rewrite relative dates in every text field as ISO dates counted from `created`.

        Returns (field, span) for each conversion, so a caller can show what changed.
        """
        from memdir.text.dates import absolutize  # a large grammar; loaded only when writing

        done: list[tuple[str, DateSpan]] = []
        for key in ("description", "body", "why", "how"):
            converted, spans = absolutize(getattr(self, key), self.created)
            setattr(self, key, converted)
            done += [(key, span) for span in spans]
        return done

    def validate(self) -> None:
        if not self.name.strip():
            raise InvalidMemory("a memory needs a name")
        if not self.description.strip():
            raise InvalidMemory("a memory needs a description: the one line the index shows")
        if "\n" in self.description.strip():
            raise InvalidMemory("the description must be one line")
        for key in ("name", "description", "body", "why", "how"):
            problem = control_problem(key, getattr(self, key), one_line=key in ("name", "description"))
            if problem:
                raise InvalidMemory(problem)
        if self.importance is not None and not 0.0 <= self.importance <= 1.0:
            raise InvalidMemory(f"importance must be between 0 and 1, not {self.importance}")


# What a memory may not hold: NUL and ESC would reach MEMORY.md, terminals and the agent's context
# (memdir.text.outward escapes them on the way out of a hand-written file; here they are refused at
# write). Tab is text everywhere; newline and carriage return only in a body.
_CONTROL_IN_LINE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_CONTROL_IN_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def control_problem(key: str, value: str, *, one_line: bool) -> str | None:
    """Why `value` (the field `key`) cannot be written, when it holds a control character; else None."""
    found = (_CONTROL_IN_LINE if one_line else _CONTROL_IN_TEXT).search(value)
    if found is None:
        return None
    c = found.group()
    what = "a NUL byte" if c == "\x00" else f"a control character (\\x{ord(c):02x})"
    return f"the {key} contains {what}; memories are text"


def said_digest(memory: Memory) -> str:
    """A short digest of what a memory says (type, name, description, body), not of its dates or
    importance: `review accept` compares it to tell whether the memory to supersede was changed."""
    import hashlib  # loading OpenSSL costs every command a few milliseconds; only `review` needs it

    said = "\n".join([memory.raw_type or "", memory.name, memory.description, memory.body])
    return hashlib.sha256(said.encode("utf-8")).hexdigest()[:16]
