"""Property-based tests (hypothesis) for the parser, the store's loader, the index and the linter.

Whatever a file holds, parsing and loading end in a Memory, a FileProblem or a FrontmatterError;
indexing and linting a folder never raise; the generated MEMORY.md always fits its caps; and a
memory memdir writes reads back as what was written. Runs are derandomized (the same examples on
every run) and bounded: MEMDIR_HYPOTHESIS_PROFILE=thorough asks for ten times more examples.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from memdir import MemoryDir
from memdir.core.cache import ParseCache
from memdir.core.errors import IndexRefused, InvalidMemory, MemoryExists
from memdir.core.index import Caps, count_lines
from memdir.core.model import (
    FrontmatterError,
    Memory,
    MemoryType,
    NewMemory,
    _load_yaml,
    control_problem,
    parse_document,
    set_fields,
    slugify,
    strict_requoting,
    yaml_scalar,
)
from memdir.core.plainyaml import plain_frontmatter
from memdir.core.store import FileProblem, load_file
from memdir.core.templates import render_memory

TODAY = dt.date(2026, 11, 22)


def _without_local_constants() -> None:
    """Hypothesis mixes in constants it finds in whatever local modules are imported, which
    differ with the set and order of test files run: the same test then sees other examples.
    Keep to its own generation so a run here is the same run in the whole suite. (A private hook:
    when a Hypothesis version no longer has it, nothing changes but the determinism.)"""
    from hypothesis.internal.conjecture import providers

    if hasattr(providers, "_get_local_constants") and hasattr(providers, "_local_constants"):
        empty = providers._local_constants
        providers._get_local_constants = lambda: empty


_without_local_constants()
settings.register_profile(
    "memdir",
    max_examples=60,
    deadline=None,  # a first call imports yaml and the lint rules: never a flaky deadline
    derandomize=True,  # the same examples every run: a failure reproduces, CI never flakes
    database=None,  # nothing written into the checkout
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile("thorough", parent=settings.get_profile("memdir"), max_examples=600)
# Applied per test, not with settings.load_profile: the profile must not leak into other test files.
PROFILE = settings.get_profile(os.environ.get("MEMDIR_HYPOTHESIS_PROFILE", "memdir"))
FEWER = settings(PROFILE, max_examples=max(10, PROFILE.max_examples // 3))  # tests that write whole folders


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="memdir-props-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _fresh(scratch: Path) -> Path:
    """An empty folder under `scratch` for one example."""
    root = Path(tempfile.mkdtemp(dir=scratch))
    return root


# --- strategies ----------------------------------------------------------------------------------

# Text that YAML and markdown find interesting: delimiters, indicators, line breaks of every kind
# (\x85, U+2028 and form feeds split lines for str.splitlines but not for YAML or markdown).
_TRICKY = [
    "---", "...", ": ", ":", "- ", "#", " #", "&a ", "*a", "!!python/object", "!!str ", "'", '"', "[", "]", "{", "}",
    ",", "|", ">", "\n", "\r\n", "\r", "\t", "  ", "\x85", "\u2028", "\x0c", "\ufeff", "\x00", "\\", "%", "@",
    "`", "yes", "no", "null", "~", "2026-11-22", "1e3", "0x1f", ".inf", "<<", "?", "=", "$name", "${x}", "[x](y.md)",
]  # fmt: skip
tricky_text = st.lists(st.one_of(st.sampled_from(_TRICKY), st.text(max_size=8)), max_size=24).map("".join)
any_text = st.one_of(st.text(max_size=200), tricky_text)

_KEYS = ["name", "description", "type", "created", "updated", "importance", "expires", "status", "tags",
         "superseded_by", "supersedes", "source", "metadata", "related", "originSessionId"]  # fmt: skip
yaml_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=40), tricky_text,
    st.dates(), st.sampled_from([t.value for t in MemoryType] + ["User", "FEEDBACK", "other", ""]),
)  # fmt: skip
yaml_value = st.recursive(
    yaml_leaf,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(_KEYS), st.text(max_size=6)), children, max_size=4),
    ),
    max_leaves=12,
)
frontmatter_data = st.dictionaries(st.one_of(st.sampled_from(_KEYS), st.text(max_size=10)), yaml_value, max_size=8)


@st.composite
def yaml_text(draw: st.DrawFn) -> str:
    """YAML as a person or a tool might write it: dumped in some style, or stitched from tokens."""
    data = draw(frontmatter_data)
    style = draw(st.sampled_from(["block", "flow", "tokens", "lines"]))
    if style == "tokens":
        return draw(tricky_text)
    if style == "lines":  # `key: value` lines with raw values: the fast path's territory
        keys = draw(st.lists(st.sampled_from(_KEYS), max_size=8))
        return "\n".join(f"{k}: {draw(tricky_text)}" for k in keys)
    dumped = yaml.safe_dump(
        data, allow_unicode=draw(st.booleans()), default_flow_style=style == "flow", sort_keys=False
    )
    return dumped


@st.composite
def markdown_file(draw: st.DrawFn) -> str:
    """The text of a would-be memory file: frontmatter of any shape, any body, any line ends."""
    opening = draw(st.sampled_from(["---\n", "---\r\n", "\ufeff---\n", "--- \n", "", "---"]))
    closing = draw(st.sampled_from(["\n---\n", "\r\n---\r\n", "\n...\n", "\n---", "", "\n--- \n"]))
    return opening + draw(yaml_text()) + closing + draw(any_text)


# A memory as `memdir add` takes it: anything a person could type on a command line. Control
# characters (Cc: C0, DEL, C1) are refused at write (model.control_problem), but for tab, and line
# breaks in a body.
line_characters = st.characters(blacklist_categories=["Cs", "Cc"], whitelist_characters="\t")
names = st.text(line_characters, min_size=1, max_size=60)
one_line = st.text(line_characters, min_size=1, max_size=160)
bodies = st.one_of(
    st.text(st.characters(blacklist_categories=["Cs", "Cc"], whitelist_characters="\t\n\r"), max_size=300),
    tricky_text.filter(lambda s: control_problem("body", s, one_line=False) is None),
)


@st.composite
def new_memories(draw: st.DrawFn) -> NewMemory:
    new = NewMemory(
        type=draw(st.sampled_from(list(MemoryType))),
        name=draw(names),
        description=draw(one_line),
        body=draw(bodies),
        why=draw(st.one_of(st.just(""), one_line)),
        how=draw(st.one_of(st.just(""), one_line)),
        created=draw(st.dates(dt.date(1990, 1, 1), dt.date(2100, 1, 1))),
        importance=draw(st.one_of(st.none(), st.floats(0, 1))),
        expires=draw(st.one_of(st.none(), st.dates(dt.date(2000, 1, 1), dt.date(2100, 1, 1)))),
    )
    assume(new.name.strip() and new.description.strip())
    try:
        slugify(new.name)
    except InvalidMemory:
        assume(False)
    return new


# --- the parser and the loader -------------------------------------------------------------------


@PROFILE
@given(any_text)
def test_parse_document_on_any_text_returns_or_raises_frontmatter_error(text: str) -> None:
    _parse_or_frontmatter_error(text)


@PROFILE
@given(markdown_file())
def test_parse_document_on_any_frontmatter_returns_or_raises_frontmatter_error(text: str) -> None:
    _parse_or_frontmatter_error(text)


def _parse_or_frontmatter_error(text: str) -> None:
    try:
        doc = parse_document(text)
    except FrontmatterError:
        return
    assert isinstance(doc.data, dict)
    assert doc.text == text
    if doc.has_frontmatter:
        assert doc.fm_start <= doc.fm_end <= doc.body_start <= len(text)
        memory = Memory("x.md", doc)
        # Every field the index and the linter read must be computable whatever the YAML held.
        _ = (memory.name, memory.description, memory.type, memory.importance, memory.last_changed)
        _ = (memory.status, memory.superseded, memory.expires, memory.title, memory.line_of("name"))
        assert "\n" not in memory.name and "\n" not in memory.description


@PROFILE
@given(st.lists(st.tuples(st.sampled_from(_KEYS), st.one_of(tricky_text, st.text(max_size=20))), max_size=6))
@example([("description", "'a\x85  b'")])
@example([("description", "a\rb")])  # YAML reads a bare CR as a line break: here, an error
def test_the_fast_frontmatter_path_reads_as_yaml_does(pairs: list[tuple[str, str]]) -> None:
    """plain_frontmatter answers only when it is sure; when it answers, YAML agrees (bug: it read
    `'a\x85  b'`, which YAML folds to 'a b', as 'a\x85  b')."""
    text = "".join(f"{key}: {value}\n" for key, value in pairs)
    both = _fast_and_yaml(text, yaml.safe_load)
    if both is not None:
        fast, slow = both
        assert fast == (slow or {}), text


def _fast_and_yaml(text: str, load: Callable[[str], Any]) -> tuple[dict[str, Any], Any] | None:
    """What plain_frontmatter and `load` read in `text`, or None when the fast path declines; fails when
    YAML rejects what the fast path read."""
    fast = plain_frontmatter(text)
    if fast is None:
        return None
    try:
        return fast, load(text)
    except (yaml.YAMLError, FrontmatterError):
        raise AssertionError(f"the fast path read YAML that YAML rejects: {text!r}") from None


# Plain values made of what YAML's number, date, boolean and null shapes are made of, so most are one
# character away from one of them: `1.2.3`, `-0x1F`, `2026-1-5 1:00`, `+.inf`, a UUID.
_number_like = st.text(alphabet="0123456789-+._:eExXoObBaAfFtTZn~=< ", min_size=1, max_size=14).map(str.strip)


@settings(PROFILE, max_examples=PROFILE.max_examples * 5)
@given(st.lists(_number_like.filter(bool), min_size=1, max_size=4), st.booleans())
@example(["568edca0-76b3-46af-bdbd-79f6729b768c"], False)
@example(["2001-12-14 21:59:43.10 -5", "1_000", "-.inf", "0o17", "=", "<<", "~"], False)
def test_the_fast_path_reads_number_like_values_as_memdirs_yaml_does(values: list[str], as_list: bool) -> None:
    """Values starting with a digit, `-`, `+`, `.`, `~`, `=` or `<` are read by the fast path when none of
    YAML's implicit types takes them; whatever it reads, YAML (with memdir's loaders) reads the same."""
    text = f"tags: [{', '.join(values)}]\n" if as_list else "".join(f"k{i}: {v}\n" for i, v in enumerate(values))
    both = _fast_and_yaml(text, _load_yaml)
    if both is not None:
        fast, slow = both
        assert fast == slow, text
        assert [type(v) for v in fast.values()] == [type(v) for v in slow.values()], text


_plain_value = st.one_of(
    st.sampled_from(["x", "a b", "it's", "'q'", '"d"', "2026-01-02", "0.5", "7", "yes", "-", "a: b", "a #b", "[a, b]"]),
    _number_like, tricky_text, st.text(max_size=12),
)  # fmt: skip


@st.composite
def plain_blocks(draw: st.DrawFn) -> str:
    """Whole frontmatter blocks of the shapes the one-regex reading takes: `key: value` lines, a
    `key:` with indented lines under it, comments, blank lines, trailing blanks, LF or CRLF."""
    end = draw(st.sampled_from(["\n", "\r\n"]))
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        key = draw(st.one_of(st.sampled_from(_KEYS), st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,5}", fullmatch=True)))
        shape = draw(st.sampled_from(["pair", "pair", "block", "comment", "blank"]))
        if shape == "pair":
            lines.append(f"{key}:{draw(st.sampled_from([' ', '  ', chr(9)]))}{draw(_plain_value)}")
        elif shape == "block":
            indent = draw(st.sampled_from(["  ", "    ", " ", chr(9)]))
            lines.append(f"{key}:")
            lines += [
                f"{indent}{draw(st.sampled_from(_KEYS))}: {draw(_plain_value)}" for _ in range(draw(st.integers(0, 3)))
            ]
        elif shape == "comment":
            lines.append("# " + draw(st.text(max_size=10)))
        else:
            lines.append(draw(st.sampled_from(["", " ", "\t"])))
    return end.join(line + draw(st.sampled_from(["", " ", "\t"])) for line in lines) + end


@settings(PROFILE, max_examples=PROFILE.max_examples * 5)
@given(plain_blocks())
@example("metadata:\n  type: user\n  originSessionId: 402cd569-4fc4-4620-a8b9-5620a565c476\nname: x\n")
def test_the_fast_path_reads_whole_frontmatter_blocks_as_memdirs_yaml_does(text: str) -> None:
    """Whole blocks, nested ones among them: whatever the fast path reads, YAML (with memdir's
    loaders) reads the same, and the one-regex reading agrees with the line-by-line one."""
    from memdir.core.plainyaml import plain_lines

    both = _fast_and_yaml(text, _load_yaml)
    if both is not None:
        fast, slow = both
        assert fast == (slow or {}), text
        assert [type(v) for v in fast.values()] == [type(v) for v in (slow or {}).values()], text
    lines = plain_lines(text)
    if lines is not None and both is not None:
        assert lines == both[0], text


@settings(PROFILE, max_examples=PROFILE.max_examples * 5)
@given(st.text(alphabet="\\\"'ntxu0aN_ #:\t/é", max_size=12))
@example('say \\"no\\"')
@example("C:\\\\dev")
def test_the_fast_path_reads_double_quoted_values_as_memdirs_yaml_does(inner: str) -> None:
    """A double-quoted value with `\\"` and `\\\\` escapes is read by the fast path; any other escape
    goes to YAML. Whatever the fast path reads, YAML (with memdir's loaders) reads the same."""
    text = f'description: "{inner}"\n'
    both = _fast_and_yaml(text, _load_yaml)
    if both is not None:
        fast, slow = both
        assert fast == slow, text


@PROFILE
@given(st.lists(st.tuples(st.sampled_from(_KEYS), st.one_of(tricky_text, st.text(max_size=20))), max_size=6))
@example([("name", "foo #x"), ("description", "a: b")])
@example([("description", 'C:\\dev "x": y'), ("tags", "[a, b]")])
def test_the_f013_fix_reads_strictly_as_claude_code_read(pairs: list[tuple[str, str]]) -> None:
    """Whatever Claude Code's retry read, the fix (when offered) changes only the lines it quoted and
    leaves YAML reading the same fields without the retry."""
    text = "---\n" + "".join(f"{key}: {value}\n" for key, value in pairs) + "---\nBody.\n"
    try:
        doc = parse_document(text)
    except FrontmatterError:
        return
    requotes = strict_requoting(doc)
    if doc.lenient is None or requotes is None:
        assert doc.lenient is not None or requotes is None
        return
    fixed = text
    for requote in reversed(requotes):
        fixed = fixed[: requote.start] + requote.line + fixed[requote.end :]
    changed = {i for i, (a, b) in enumerate(zip(text.split("\n"), fixed.split("\n"), strict=True)) if a != b}
    assert changed == {i + 1 for i in doc.lenient.quoted_lines}  # + 1: the '---' line
    after = parse_document(fixed)
    assert after.lenient is None and repr(after.data) == repr(doc.data)


@PROFILE
@given(yaml_value)
@example("0\x850")
@example("a\u2028b")
@example(["frontend, react", "0{", "?0", "0?"])  # bug: [frontend, react, 0{, ?0, 0?]: two tags, then invalid
def test_yaml_scalar_reads_back_as_the_value_on_one_line(value: object) -> None:
    """Bug: a string holding NEL was written single-quoted, and read back with a space for it."""
    assume(not isinstance(value, dict))
    assume(not isinstance(value, list) or all(not isinstance(v, dict | list) for v in value))
    written = yaml_scalar(value)
    assert "\n" not in written and "\r" not in written
    assert repr(yaml.safe_load(f"key: {written}\n")["key"]) == repr(value)  # repr: NaN is not equal to itself


@PROFILE
@example('---\nname: x\ndescription: "a\u2028importance: 0.2"\ntype: user\n---\nBody.\n', {"importance": 0.5})
@given(
    markdown_file(), st.dictionaries(st.sampled_from(_KEYS), st.one_of(st.none(), yaml_leaf), min_size=1, max_size=3)
)
def test_set_fields_changes_only_the_fields_it_sets(text: str, updates: dict[str, object]) -> None:
    """Bug: set_fields split lines at U+2028 too, so a quoted value holding `\u2028importance: 0.2`
    was cut in half by setting importance, and the file no longer parsed."""
    try:
        before = parse_document(text)
    except FrontmatterError:
        return
    assume(before.has_frontmatter)
    try:
        edited = set_fields(text, updates)
    except FrontmatterError:
        return  # refused: nothing would be written
    after = parse_document(edited).data
    for key, value in before.data.items():
        if key not in updates:
            assert repr(after.get(key)) == repr(value), key
    for key, value in updates.items():
        assert (key in after) == (value is not None), key
    assert edited[parse_document(edited).body_start :] == before.body


@PROFILE
@given(st.one_of(st.binary(max_size=400), markdown_file().map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_load_file_on_any_bytes_gives_a_memory_or_a_problem(scratch: Path, raw: bytes) -> None:
    path = scratch / "loaded.md"
    path.write_bytes(raw)
    loaded = load_file(str(path), "loaded.md", ParseCache.disabled())
    assert isinstance(loaded, Memory | FileProblem)
    if isinstance(loaded, FileProblem):
        assert loaded.message and "\n" not in loaded.message


# --- the index and the linter on whole folders ---------------------------------------------------


@st.composite
def folder_files(draw: st.DrawFn) -> dict[str, bytes]:
    """A folder's files: memories written with arbitrary fields, hostile files, any MEMORY.md."""
    files: dict[str, bytes] = {}
    for i in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["memory", "memory", "memory", "markdown", "bytes"]))
        name = (
            draw(st.sampled_from(["", "team/", "a/b/"]))
            + f"{draw(st.sampled_from([t.value for t in MemoryType]))}_m{i}.md"
        )
        if kind == "memory":
            fields = {
                "name": draw(st.one_of(names, st.just(f"m{i}"))),
                "description": draw(st.one_of(one_line, st.text(max_size=400), st.none())),
                "type": draw(st.sampled_from([t.value for t in MemoryType] + ["Feedback", "bogus", None])),
                "importance": draw(st.one_of(st.none(), st.floats(-1, 2), st.text(max_size=3))),
                "updated": draw(st.one_of(st.none(), st.dates(), st.text(max_size=12))),
                "status": draw(st.sampled_from([None, "active", "superseded", "archived", "quarantined", "odd"])),
                "expires": draw(st.one_of(st.none(), st.dates(dt.date(2020, 1, 1), dt.date(2030, 1, 1)))),
            }
            fields = {k: v for k, v in fields.items() if v is not None}
            text = "---\n" + yaml.safe_dump(fields, allow_unicode=True, sort_keys=False) + "---\n" + draw(bodies)
            files[name] = text.encode("utf-8", "surrogatepass")
        elif kind == "markdown":
            files[name] = draw(markdown_file()).encode("utf-8", "surrogatepass")
        else:
            files[name] = draw(st.binary(max_size=200))
    if draw(st.booleans()):
        index = draw(st.one_of(any_text, st.lists(st.sampled_from([
            "# Memory", "", "Hand-written note.", "- [x](user_m0.md) — old", "- [gone](gone.md) — missing",
            "- [dup](user_m0.md) — again", "```", "<!-- memdir: 3 more memories left out -->", "\ufeff# BOM",
        ]), max_size=12).map("\n".join)))  # fmt: skip
        bom = draw(st.sampled_from(["", "", "\ufeff"]))  # a BOM is kept, and counts against the byte cap
        files["MEMORY.md"] = (bom + index).encode("utf-8", "surrogatepass")
    return files


def _materialise(root: Path, files: dict[str, bytes]) -> None:
    for rel, raw in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)


caps_strategy = st.one_of(
    st.just(Caps()), st.builds(Caps, max_lines=st.integers(0, 12), max_bytes=st.integers(0, 1200))
)


def _within(text: str, caps: Caps) -> bool:
    return count_lines(text) <= caps.max_lines and len(text.encode("utf-8")) <= caps.max_bytes


@FEWER
@given(folder_files(), caps_strategy)
def test_the_index_never_raises_and_always_fits_its_caps(scratch: Path, files: dict[str, bytes], caps: Caps) -> None:
    root = _fresh(scratch)
    _materialise(root, files)
    folder = MemoryDir(root, today=TODAY, caps=caps)
    try:
        planned = folder.plan_index()
    except IndexRefused:  # MEMORY.md is not UTF-8: the CLI says so in one line, and writes nothing
        assume(False)
    written = folder.write_index()
    assert written.result.text == planned.text
    on_disk = (root / "MEMORY.md").read_bytes().decode("utf-8") if (root / "MEMORY.md").exists() else ""
    if written.result.refused is None:
        assert _within(on_disk, caps), (count_lines(on_disk), len(on_disk.encode()))
        assert not folder.write_index().changed  # idempotent
    else:  # refused: MEMORY.md is left exactly as it was
        assert on_disk.encode("utf-8") == files.get("MEMORY.md", b"")


@FEWER
@given(folder_files())
def test_lint_never_raises_on_any_folder(scratch: Path, files: dict[str, bytes]) -> None:
    root = _fresh(scratch)
    _materialise(root, files)
    folder = MemoryDir(root, today=TODAY)
    report = folder.lint(select=["ALL"])
    for finding in report.findings:
        assert finding.message and finding.code
    # A dry-run fix computes every edit without writing: it must not raise either.
    folder.fix(select=["ALL"], unsafe=True, dry_run=True)


@FEWER
@given(folder_files())
def test_lint_fix_never_raises_and_leaves_the_index_in_caps(scratch: Path, files: dict[str, bytes]) -> None:
    root = _fresh(scratch)
    _materialise(root, files)
    folder = MemoryDir(root, today=TODAY)
    try:
        result = folder.fix()
    except IndexRefused:
        assume(False)
    index = root / "MEMORY.md"
    if index.exists() and all(c.path != "MEMORY.md" or c.after for c in result.changes):
        text = index.read_bytes().decode("utf-8", "replace")
        if any(c.path == "MEMORY.md" for c in result.changes):
            assert _within(text, Caps())


# --- round trips ---------------------------------------------------------------------------------


@PROFILE
@given(new_memories())
def test_render_memory_round_trips_name_description_and_type(new: NewMemory) -> None:
    text = render_memory(new)
    doc = parse_document(text)
    assert doc.data["name"] == new.name.strip()
    assert doc.data["description"] == new.description.strip()
    assert doc.data["type"] == new.type.value
    assert doc.data["created"] == new.created
    if new.importance is not None:
        assert doc.data["importance"] == new.importance
    if new.expires is not None:
        assert doc.data["expires"] == new.expires
    memory = Memory(new.file_name, doc)
    assert memory.type is new.type
    assert memory.name == " ".join(new.name.split())
    assert memory.description == " ".join(new.description.split())
    assert new.body.strip() in doc.body
    for label, said in (("**Why:**", new.why.strip()), ("**How to apply:**", new.how.strip())):
        assert not said or f"{label} {said}" in doc.body  # whatever the type
    if not (new.why.strip() or new.how.strip()):
        assert doc.body.strip() == new.body.strip()


@FEWER
@given(st.lists(new_memories(), min_size=1, max_size=4))
def test_add_then_get_round_trips(scratch: Path, news: list[NewMemory]) -> None:
    root = _fresh(scratch)
    folder = MemoryDir(root, today=TODAY)
    folder.init()
    added: list[NewMemory] = []
    for new in news:
        try:
            memory, write = folder.add(new)
        except MemoryExists:
            continue  # two generated names with the same slug
        added.append(new)
        got = folder.get(memory.path)
        assert got.fields["name"] == new.name.strip()
        assert got.fields["description"] == new.description.strip()
        assert got.type is new.type
        assert got.doc.text == (root / memory.path).read_bytes().decode("utf-8")
        assert _within(write.result.text, Caps())
    planned = folder.plan_index()
    assert not folder.write_index(dry_run=True).changed
    assert {m.path for m in planned.entries} <= {f"{n.type.value}_{slugify(n.name)}.md" for n in added}
