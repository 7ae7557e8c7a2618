"""The memory model: parsing both type forms, byte-exact rewrites, slugs, templates."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from conftest import cpu_growth

from memdir.core.errors import InvalidMemory
from memdir.core.model import (
    FrontmatterError,
    Memory,
    MemoryType,
    NewMemory,
    parse_document,
    set_fields,
    slugify,
    yaml_scalar,
)
from memdir.core.templates import render_memory

REAL_SHAPE = """\
---
name: Deploy target
description: "GitHub → Cloudflare Pages: local first"
metadata:
  node_type: memory
  type: project
  originSessionId: 6e3a0917-3f3b-4e4a-b07e-5a89395fc854
  modified: 2026-05-01T10:20:30.123Z
related: [a.md, b.md]   # a comment that must survive
weird_quoting: 'single'
---
Body line one.

**Why:** because.
trailing spaces\x20\x20
"""


def memory(text: str, path: str = "project_x.md") -> Memory:
    return Memory(path=path, doc=parse_document(text))


def test_type_is_read_from_nested_metadata() -> None:
    m = memory(REAL_SHAPE)
    assert m.type is MemoryType.PROJECT
    assert m.type_is_nested
    assert m.name == "Deploy target"
    assert m.description == "GitHub → Cloudflare Pages: local first"
    assert m.last_changed == dt.date(2026, 5, 1)


def test_top_level_type_wins_and_is_case_insensitive() -> None:
    m = memory("---\nname: a\ntype: Feedback\nmetadata: {type: user}\n---\nx\n")
    assert m.type is MemoryType.FEEDBACK
    assert not m.type_is_nested


def test_unknown_type_is_kept_raw_but_not_typed() -> None:
    m = memory("---\nname: a\ntype: handoff\n---\n")
    assert m.raw_type == "handoff"
    assert m.type is None


def test_set_fields_keeps_every_other_byte() -> None:
    changed = set_fields(REAL_SHAPE, {"updated": dt.date(2026, 11, 22), "name": "New: name"})
    expected = REAL_SHAPE.replace("name: Deploy target\n", "name: 'New: name'\n").replace(
        "weird_quoting: 'single'\n", "weird_quoting: 'single'\nupdated: 2026-11-22\n"
    )
    assert changed == expected
    assert memory(changed).name == "New: name"


def test_set_fields_replaces_multiline_values_and_removes_with_none() -> None:
    text = "---\ntags:\n- a\n- b\n\nname: x\ndescription: >\n  folded\n  text\nkeep: 1\n---\nbody\n"
    changed = set_fields(text, {"tags": ["c"], "description": "one line", "keep": None})
    assert changed == "---\ntags: [c]\n\nname: x\ndescription: one line\n---\nbody\n"


def test_set_fields_preserves_crlf() -> None:
    text = "---\r\nname: x\r\ntype: user\r\n---\r\nbody\r\n"
    assert set_fields(text, {"updated": dt.date(2026, 1, 2)}) == (
        "---\r\nname: x\r\ntype: user\r\nupdated: 2026-01-02\r\n---\r\nbody\r\n"
    )


def test_round_trip_without_changes_is_identity() -> None:
    assert set_fields(REAL_SHAPE, {}) == REAL_SHAPE


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\nname: a\ndescription: Note: use npm: now\n  more: x\n---\n", 3),
        ('---\nname: "unclosed\n---\n', None),
        ("---\n- a list\n- not a mapping\n---\n", 2),
        ("---\nname: a\nno closing delimiter\n", 1),
    ],
)
def test_broken_frontmatter_raises_with_a_line(text: str, line: int | None) -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_document(text)
    if line is not None:
        assert caught.value.line == line


def test_no_frontmatter_and_bom() -> None:
    assert not parse_document("# Just notes\n").has_frontmatter
    doc = parse_document("\ufeff---\nname: a\n---\nbody\n")
    assert doc.data == {"name": "a"}
    assert doc.body == "body\n"
    assert doc.body_line == 4


def test_exclusion_rules() -> None:
    today = dt.date(2026, 11, 22)
    assert memory("---\ntype: user\nstatus: superseded\n---\n").exclusion(today) == "superseded"
    assert memory("---\ntype: user\nsuperseded_by: user_b.md\n---\n").exclusion(today) == "superseded"
    assert memory("---\ntype: user\nexpires: 2026-11-22\n---\n").exclusion(today) == "expired 2026-11-22"
    assert memory("---\ntype: user\nexpires: 2026-11-23\n---\n").exclusion(today) is None
    assert memory("---\ntype: user\nstatus: quarantined\n---\n").exclusion(today) == "quarantined"


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Lint before commit", "lint-before-commit"),
        ("../../etc/passwd", "etc-passwd"),
        ("a/b\\c", "a-b-c"),
        ("사용자 프로필", "사용자-프로필"),
        ("snake_case_name", "snake-case-name"),
        ("  --Trim--  ", "trim"),
    ],
)
def test_slugify_is_safe(name: str, slug: str) -> None:
    assert slugify(name) == slug


def test_slugify_refuses_empty_and_caps_length() -> None:
    with pytest.raises(InvalidMemory):
        slugify("../..")
    assert len(slugify("한" * 200).encode()) <= 100


@pytest.mark.parametrize("value", ["plain", "a: b", "x # y", "'quoted'", "yes", "123", "- dash", "[list]", "中文"])
def test_yaml_scalar_round_trips(value: str) -> None:
    import yaml

    assert yaml.safe_load(f"key: {yaml_scalar(value)}")["key"] == value


def test_render_memory_from_template() -> None:
    new = NewMemory(
        type=MemoryType.FEEDBACK,
        name="lint-before-commit",
        description="Run lint: always",
        body="Run `npm run lint`.",
        why="CI broke",
        how="Before commits",
        created=dt.date(2026, 11, 22),
        importance=0.8,
    )
    assert render_memory(new) == (
        "---\nname: lint-before-commit\ndescription: 'Run lint: always'\ntype: feedback\n"
        "created: 2026-11-22\nupdated: 2026-11-22\nimportance: 0.8\n---\n"
        "Run `npm run lint`.\n\n**Why:** CI broke\n\n**How to apply:** Before commits\n"
    )


def test_render_memory_drops_empty_labels_but_keeps_user_text() -> None:
    new = NewMemory(MemoryType.PROJECT, "p", "d", body="**Steps:**\n- one", created=dt.date(2026, 1, 1))
    text = render_memory(new)
    assert text.endswith("---\n**Steps:**\n- one\n")
    assert "**Why:**" not in text


def test_absolutize_text_touches_only_description_and_body() -> None:
    from memdir.core.model import absolutize_text

    text = (
        "---\nname: tomorrow-plan\ndescription: Ship tomorrow\nextra: tomorrow\ntype: project\n---\nSee you tomorrow.\n"
    )
    converted, done = absolutize_text(text, dt.date(2026, 11, 22))
    assert converted == text.replace("Ship tomorrow", "Ship 2026-11-23").replace("you tomorrow", "you 2026-11-23")
    assert [(key, span.phrase) for key, span in done] == [("description", "tomorrow"), ("body", "tomorrow")]


def test_new_memory_absolutize_dates_counts_from_created() -> None:
    new = NewMemory(MemoryType.FEEDBACK, "n", "from yesterday", why="last week", created=dt.date(2026, 1, 1))
    assert [(k, s.resolved.isoformat()) for k, s in new.absolutize_dates()] == [
        ("description", "2025-12-31"),
        ("why", "2025-12-22"),
    ]
    assert (new.description, new.why) == ("from 2025-12-31", "2025-12-22")


def test_memory_dir_add_converts_relative_dates(tmp_path: Path) -> None:
    from memdir import MemoryDir

    folder = MemoryDir(tmp_path, today=dt.date(2026, 11, 22))
    folder.init()
    new = NewMemory(MemoryType.USER, "x", "due tomorrow", body="ship next Friday", created=dt.date(2026, 11, 22))
    memory, _ = folder.add(new)
    assert (memory.description, memory.body) == ("due 2026-11-23", "ship 2026-11-27\n")


# --- the simple-frontmatter fast path agrees with YAML -------------------------------------

TRICKY_VALUES = [
    "plain words", "2026-11-22", "2026-13-40", "2026-1-5", "0.5", "1", "01", "0o17", "1_000", "1e3", ".5",
    "yes", "No", "on", "OFF", "y", "null", "~", "true", "a: b", "a #b", "a#b", "ends:", "'quoted'", '"dq"',
    "[a, b]", "{a: 1}", "&anchor x", "*alias", "!tag x", "| block", "> folded", "- item", "-5", "+5", "=",
    "%x", "@x", "`x`", "über straße", "用户在上海", "tab\tinside", "colon:inside", "http://x.y/z", "12:30",
    "190:20:30", "0x1F", "1.2.3", "v1.2", ".inf", "NaN", "<<", "a\u0007b", "'it''s'", "'a' b", '"a\\"b"',
    '"a"b"', "''", '""', "'unclosed", '"x: y"', "'# not a comment'", "a 'b' c",
    "[]", "[ ]", "[a]", "[a,b]", "[a, b,]", "[a, [b]]", "[a: 1]", "[yes, no]", "[1, 2.5, 2026-01-01]",
    "['q', \"d\"]", "[a b, c]", "[a #b]", "[a,, b]", "[ a , b ]", "[a, b] trailing", "[-x, y]", "[x]y]",
    "[a, b", "[~, null]", "[.5, 1e3]", "[über, 用户]", "[a\tb]", "[a]]",
    # UUIDs, as Claude Code's originSessionId: read as text without YAML; near misses go to YAML.
    "402cd569-4fc4-4620-a8b9-5620a565c476", "12345678-1234-1234-1234-123456789012",
    "8D4F716A-F471-4B3B-96DC-76B89AB4E8C8",
    "1234-12-12", "1234-1-2", "12345678-1234-1234-1234-12345678901", "12345678-1234-1234-1234-1234567890123",
    "12345678-1234-1234-1234-123456789012-1", "1_2345678-1234-1234-1234-123456789012",
]  # fmt: skip


@pytest.mark.parametrize("value", TRICKY_VALUES)
def test_simple_frontmatter_reads_as_yaml_does(value: str) -> None:
    import yaml

    from memdir.core.plainyaml import plain_frontmatter

    for text in (f"name: x\ndescription: {value}\n", f"{value.split(':')[0] or 'k'}: v\n", f"a: 1\r\nb: {value}\r\n"):
        fast = plain_frontmatter(text)
        if fast is None:
            continue  # declined: YAML decides
        assert fast == yaml.safe_load(text), text


# Pieces of values: two of them side by side make most of the near misses of plain text (`: x`, `a #b`,
# `a :b`, `x:`), quoting and YAML's words.
_VALUE_PIECES = [
    "a", "Z9", " ", ":", ": ", "#", " #", "'", "''", '"', "\\", "-", "- ", "1", "0.5", "2026-01-02", "\t",
    "\u00e9", "\u7528", "\u3000", ".", "~", "<", "=", "[", "]", "{", ",", "?", "&", "yes", "No", "\r", "\x85",
    "\x07", "\u2028", "\ud800", "\ufffe", "402cd569-4fc4-4620-a8b9-5620a565c476",
]  # fmt: skip


def test_the_one_regex_reads_every_frontmatter_as_the_line_by_line_reading_does() -> None:
    """plain_frontmatter reads the usual frontmatter with one regex and hands the rest to plain_lines:
    where both answer they agree (a colon first once made `k: : x` the text ': x', which YAML rejects)."""
    from memdir.core.plainyaml import plain_frontmatter, plain_lines

    shapes = ("name: x\ndescription: {}\ntype: user\n", "metadata:\n  type: {}\n", "a: 1\r\nb: {}  \r\n")
    values = [*TRICKY_VALUES, *(a + b for a in _VALUE_PIECES for b in _VALUE_PIECES)]
    for value in values:
        for shape in shapes:
            text = shape.format(value)
            assert plain_frontmatter(text) == plain_lines(text), text


def test_the_one_regex_reads_a_long_run_of_blanks_in_linear_time() -> None:
    """Bug: blanks before a value that no branch of the one regex takes (a control character, a bare
    CR) were split between its greedy parts in every way, cubic in their number: one frontmatter line
    of 2,000 blanks took 20 s of CPU. The regex engine's steps cannot be counted, so its CPU time is
    compared in the same test, of equal amounts of text: 600 blanks once against 150 four times,
    about 1 when linear and 16 when cubic."""
    from memdir.core.plainyaml import plain_frontmatter, plain_lines

    def read(text: str) -> None:  # as many blanks in all, whichever the size
        for _ in range(4 if len(text) < 600 else 1):
            plain_frontmatter(text)

    for tail in ("\x01", "\rx", "x  \x01"):
        small, large = (f"name: n\ndescription:{' ' * blanks}{tail}\n" for blanks in (150, 600))
        assert plain_frontmatter(large) == plain_lines(large) is None
        ratio = cpu_growth(read, small, large)
        assert ratio < 4, (tail, ratio)  # between 1 and 16, as far from each on a log scale


@pytest.mark.parametrize(
    "text", ["name: x\n\t\n", "a:\n  b: 1\n  \t\n", "name: x\r\n\t\r\n", "\t\n", "name: x\n\t", "x: 1\n \n\t\n"]
)
def test_a_blank_line_holding_a_tab_goes_to_yaml(text: str) -> None:
    """Bug: the fast path read a blank line holding a tab as blank, where memdir's YAML (libyaml)
    refuses it; the file then read as plain YAML and lint never said it needs Claude Code's retry."""
    from memdir.core.model import _load_yaml
    from memdir.core.plainyaml import plain_frontmatter

    with pytest.raises(FrontmatterError):
        _load_yaml(text)
    assert plain_frontmatter(text) is None


def test_simple_frontmatter_agrees_on_every_corpus_file() -> None:
    import yaml

    from memdir.core.model import _OPEN, _load_yaml
    from memdir.core.plainyaml import plain_frontmatter

    corpus = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "real"
    if not corpus.is_dir():
        pytest.skip("../shared/corpus/real is not beside the repository")
    checked = fast_used = 0
    for path in sorted(corpus.rglob("*.md")):
        text = path.read_bytes().decode("utf-8", "replace")
        opened = _OPEN.match(text)
        if not opened or "\n---" not in text[opened.end() - 1 :]:
            continue
        yaml_text = text[opened.end() : text.index("\n---", opened.end() - 1) + 1]
        fast = plain_frontmatter(yaml_text)
        checked += 1
        if fast is None:
            continue
        fast_used += 1
        assert fast == yaml.safe_load(yaml_text) == _load_yaml(yaml_text), path
    assert checked > 400 and fast_used > 450, (checked, fast_used)  # the fast path is really used


@pytest.mark.parametrize(
    "text",
    [
        "name: x\nmetadata:\n  type: user\n  node_type: memory\n",
        "name: x\nmetadata:\n  type: user\nafter: 1\n",
        "name: x\nmetadata:\n",
        "name: x\nmetadata:\nafter: 1\n",
        "metadata:\n  type: user\n    deeper: 1\n",
        "metadata:\n  a:\n    b: 1\n",
        "metadata:\n\ttype: user\n",
        "metadata:\n  - item\n",
        "description: 7 anti-patterns found\nid: 8d4f716a-f471-4b3b-96dc-76b89ab4e8c8\nv: 2026-05-14 decided\n",
        "a: 1e3\nb: 0x1F\nc: 1_000\nd: 12:30\ne: 2001-12-14 21:59:43.10 -5\n",
    ],
)
def test_simple_frontmatter_nested_and_numbers_read_as_yaml_does(text: str) -> None:
    import yaml

    from memdir.core.plainyaml import plain_frontmatter

    fast = plain_frontmatter(text)
    if fast is not None:
        assert fast == yaml.safe_load(text)


def test_the_fast_path_copies_yamls_implicit_types_verbatim() -> None:
    """The fast path reads a plain value as text when none of PyYAML's implicit resolvers matches it:
    its copy of them must be PyYAML's own, for every first character it does not decline outright."""
    import yaml

    from memdir.core.plainyaml import RISKY_START, YAML_RESOLVERS

    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items():
        if first and first in RISKY_START:
            continue
        for tag, regexp in resolvers:
            assert regexp.pattern in YAML_RESOLVERS, (first, tag)


def test_simple_frontmatter_reads_ids_and_versions_without_yaml() -> None:
    """Claude Code's `originSessionId` (a UUID, often opening with a digit) sent a third of the files
    of a realistic folder to the YAML parser."""
    from memdir.core.plainyaml import plain_frontmatter

    text = "name: x\noriginSessionId: 568edca0-76b3-46af-bdbd-79f6729b768c\nv: 1.2.3\nflag: -x\n"
    expected = {"name": "x", "originSessionId": "568edca0-76b3-46af-bdbd-79f6729b768c", "v": "1.2.3", "flag": "-x"}
    assert plain_frontmatter(text) == expected
    assert plain_frontmatter("id: 12:30\n") is None  # sexagesimal: YAML 1.1 reads 750
    assert plain_frontmatter("a: - item\n") is None
    assert plain_frontmatter('description: "say \\"no\\" to C:\\\\dev"\n') == {"description": 'say "no" to C:\\dev'}
    assert plain_frontmatter('description: "tab\\there"\n') is None  # other escapes: YAML decides


def test_simple_frontmatter_takes_the_usual_shapes() -> None:
    from memdir.core.plainyaml import plain_frontmatter

    # A session id starting with a digit: once declined as numberish, which loaded YAML for nearly
    # every file Claude Code writes (a fifth of a cold `memdir index` on a small folder).
    session = "originSessionId: 402cd569-4fc4-4620-a8b9-5620a565c476\n"
    assert plain_frontmatter(session) == {"originSessionId": "402cd569-4fc4-4620-a8b9-5620a565c476"}

    assert plain_frontmatter("tags: [review, team]\n") == {"tags": ["review", "team"]}

    assert plain_frontmatter("name: x\ndescription: 'it''s: fine'\nmetadata:\n  type: user\n") == {
        "name": "x",
        "description": "it's: fine",
        "metadata": {"type": "user"},
    }
    expected = {"created": dt.date(2026, 11, 22), "importance": 0.8}
    assert plain_frontmatter("created: 2026-11-22\nimportance: 0.8\n") == expected


def test_the_make_memory_helper_quotes_what_plain_yaml_would_misread(make_memory) -> None:  # type: ignore[no-untyped-def]
    # A description such as "Steuerberatung: Kanzlei Weiss" used to make the whole frontmatter invalid
    # in a test's folder, so the memory silently had no description and no type.
    path = make_memory("reference_kanzlei.md", description="Steuerberatung: Kanzlei Weiss # not a comment",
                       created="2026-01-02")  # fmt: skip
    fields = parse_document(path.read_text()).data
    assert fields["description"] == "Steuerberatung: Kanzlei Weiss # not a comment"
    assert fields["created"] == dt.date(2026, 1, 2)  # other values are written as they are


# --- Claude Code's second reading: values quoted when the YAML does not parse -----------------------
# Claude Code parses frontmatter as YAML and, when that fails, once more after double-quoting each plain
# top-level `key: value` line whose value holds one of {}[]*&#!|>%@` or ": " (quoteProblematicValues in
# its bundle). memdir reads a file exactly when Claude Code does, and records what the retry quoted.


def lenient(text: str) -> tuple[dict[str, object], tuple[int, ...]]:
    doc = parse_document(text)
    assert doc.lenient is not None, "read as strict YAML"
    return doc.data, doc.lenient.quoted_lines


def test_a_value_with_colon_space_is_read_as_claude_code_reads_it() -> None:
    text = "---\nname: rosetta\ndescription: Rosetta Stone: 4 principles\ntype: feedback\n---\nBody.\n"
    data, quoted = lenient(text)
    assert data == {"name": "rosetta", "description": "Rosetta Stone: 4 principles", "type": "feedback"}
    assert quoted == (1,)  # the line of the YAML block, 0-based
    doc = parse_document(text)
    assert doc.body == "Body.\n" and doc.lenient is not None and doc.lenient.strict_line == 3
    assert "mapping values" in doc.lenient.strict_error


def test_strict_yaml_is_never_retried() -> None:
    doc = parse_document("---\nname: foo #a comment\ndescription: ok\n---\n")
    assert doc.lenient is None and doc.data == {"name": "foo", "description": "ok"}


def test_the_retry_quotes_every_matching_line_not_only_the_broken_one() -> None:
    # Once the block fails, `name: foo #x` is quoted too: Claude Code reads the '#x', YAML alone would not.
    data, quoted = lenient("---\nname: foo #x\ndescription: a: b\n---\n")
    assert data == {"name": "foo #x", "description": "a: b"} and quoted == (0, 1)


def test_quoted_values_and_real_flow_lists_are_left_alone() -> None:
    text = "---\nname: 'x: y'\nalias: \"p: q\"\ntags: [a, b]\ndescription: a: b\n---\n"
    data, quoted = lenient(text)
    assert data == {"name": "x: y", "alias": "p: q", "tags": ["a", "b"], "description": "a: b"}
    assert quoted == (3,)


def test_a_bracket_that_is_not_a_list_is_quoted() -> None:
    data, quoted = lenient("---\ntags: [not a list\ndescription: ok\n---\n")
    assert data == {"tags": "[not a list", "description": "ok"} and quoted == (0,)


def test_backslashes_and_double_quotes_are_escaped() -> None:
    data, _ = lenient('---\ndescription: Paths: C:\\dev\\awoo and "Z:\\#0" \\n done\n---\n')
    assert data == {"description": 'Paths: C:\\dev\\awoo and "Z:\\#0" \\n done'}


def test_a_tab_may_separate_key_and_value() -> None:
    data, quoted = lenient("---\ndescription:\tRosetta: 4\n---\n")
    assert data == {"description": "Rosetta: 4"} and quoted == (0,)


def test_leading_tabs_become_two_spaces_each() -> None:
    doc = parse_document("---\nname: x\nmetadata:\n\ttype: feedback\n---\n")
    assert doc.data == {"name": "x", "metadata": {"type": "feedback"}}
    assert doc.lenient is not None and doc.lenient.quoted_lines == () and doc.lenient.tabs


def test_nested_lines_are_never_quoted() -> None:
    data, quoted = lenient("---\nmetadata:\n  note: fine\ndescription: a: b\n---\n")
    assert data == {"metadata": {"note": "fine"}, "description": "a: b"} and quoted == (2,)
    with pytest.raises(FrontmatterError):  # the broken value is nested: the retry does not touch it
        parse_document("---\nmetadata:\n  note: a: b\n---\n")


@pytest.mark.parametrize(
    "text",
    [
        "---\r\nname: x\r\ndescription: a: b\r\n---\r\n",  # '.' stops at '\r': a CRLF line never matches
        "---\nkey2: a: b\n---\n",  # a key with a digit is not one the retry knows
        '---\ndescription: "say "hi": now"\n---\n',  # starts and ends with '"': taken as quoted, still broken
        "---\ndescription: a: b\n  more: c\n---\n",  # quoted, then an indented line under a scalar
        "---\ndescription: |\n  block: text\nname: a: b\n---\n",  # '|' quoted too: the block is orphaned
    ],
)
def test_frontmatter_neither_reading_parses_stays_an_error(text: str) -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_document(text)
    assert "invalid YAML" in str(caught.value)


def test_the_strict_error_and_line_are_kept_when_the_retry_fails_too() -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_document("---\nname: a\ndescription: a: b\n  more: c\n---\n")
    assert caught.value.line == 3 and "mapping values" in str(caught.value)


def test_a_retry_that_reads_no_mapping_is_an_error() -> None:
    with pytest.raises(FrontmatterError):
        parse_document("---\n\t- a\n\t- b\n---\n")  # strict YAML refuses the tabs; the retry reads a list


def test_set_fields_on_a_leniently_read_file_keeps_the_other_lines() -> None:
    text = "---\nname: rosetta\ndescription: Rosetta Stone: 4 principles\ntype: feedback\n---\nBody.\n"
    edited = set_fields(text, {"updated": dt.date(2026, 11, 22)})
    assert edited == text.replace("type: feedback\n", "type: feedback\nupdated: 2026-11-22\n")
    assert parse_document(edited).data["description"] == "Rosetta Stone: 4 principles"
    rewritten = set_fields(text, {"description": "Rosetta Stone: 5 principles"})
    assert "description: 'Rosetta Stone: 5 principles'\n" in rewritten
    assert parse_document(rewritten).lenient is None


def test_set_fields_refuses_an_edit_that_would_change_how_other_lines_read() -> None:
    # Quoting the broken description makes the block strict YAML, and strict YAML reads `name` as 'foo'.
    text = "---\nname: foo #x\ndescription: a: b\n---\n"
    with pytest.raises(FrontmatterError, match="not strict YAML"):
        set_fields(text, {"description": "fine"})


def test_the_retry_costs_one_more_yaml_parse_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted, not timed: `[a, b]` lists are recognised without the parser, a retry that would change
    nothing is not made, and quoted brackets do not send the retry to the slow pure-Python parser."""
    import memdir.core.model as model

    used: list[str] = []
    safe, fast = model._loaders()

    def counted(kind: str, loader: object):  # type: ignore[no-untyped-def]
        def make(text: str):  # type: ignore[no-untyped-def]
            used.append(kind)
            return loader(text)  # type: ignore[operator]

        return make

    monkeypatch.setattr(model, "_loaders", lambda: (counted("safe", safe), counted("fast", fast)))
    lists = "".join(f"tags{'_' * i}: [a, b]\n" for i in range(50))
    parse_document(f"---\n{lists}description: a: b\n---\n")
    assert used == ["fast", "fast"]
    used.clear()
    with pytest.raises(FrontmatterError):
        parse_document(f'---\n{lists}description: "a" b\n---\n')
    assert used == ["fast"]
    used.clear()
    parse_document("---\n" + "".join(f"k{'_' * i}: [open\n" for i in range(100)) + "---\n")
    assert used == ["safe", "fast"]  # the strict text looks 100 levels deep; the retry's quoted lines do not


# --- python-frontmatter: a Post in, a Post out ----------------------------------------------------


def test_a_memory_reads_as_a_python_frontmatter_post() -> None:
    import frontmatter

    text = "---\nname: lint\ndescription: Lint first\ntype: feedback\ncontent: a field named content\n---\nRun it.\n"
    post = Memory(path="feedback_lint.md", doc=parse_document(text)).to_post()
    assert isinstance(post, frontmatter.Post)
    assert (
        post.content == "Run it." and post["name"] == "lint"
    )  # stripped, as frontmatter.loads reads it and post["content"] == "a field named content"


def test_a_post_becomes_a_new_memory_through_the_write_path(tmp_path: Path) -> None:
    import frontmatter

    from memdir import MemoryDir

    post = frontmatter.Post("Run `npm run lint` first.", type="Feedback", name="lint first", description="Lint first")
    post["importance"], post["originSessionId"] = 0.8, "abc"
    new = NewMemory.from_post(post)
    assert (new.type, new.importance, new.extra) == (MemoryType.FEEDBACK, 0.8, {"originSessionId": "abc"})
    memory, _ = MemoryDir(tmp_path).add(new)
    assert memory.fields["originSessionId"] == "abc" and memory.body.strip() == "Run `npm run lint` first."
    with pytest.raises(InvalidMemory, match="handoff"):
        NewMemory.from_post(frontmatter.Post("x", type="handoff", name="n", description="d"))
