"""MEMORY.md regeneration: in place, idempotent, within caps, nothing hand-written lost."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest

from memdir.core.index import Caps, build_index, find_links, left_out_note, render_entry
from memdir.core.model import Memory, parse_document

TODAY = dt.date(2026, 11, 22)


def mem(path: str, name: str | None = None, description: str = "desc", **fields: object) -> Memory:
    fields.setdefault("type", path.split("/")[-1].split("_", 1)[0])
    stem = path.split("/")[-1][:-3]
    # Quoted as JSON (a YAML string): a name like "a [b] c" or a description with ": " reads as given.
    lines = [f"name: {json.dumps(name or stem.split('_', 1)[-1])}", f"description: {json.dumps(description)}"]
    lines += [f"{key}: {value}" for key, value in fields.items()]
    return Memory(path=path, doc=parse_document("---\n" + "\n".join(lines) + "\n---\nbody\n"))


def build(existing: str, memories: list[Memory], **kwargs: object):  # type: ignore[no-untyped-def]
    return build_index(existing, memories, TODAY, **kwargs)  # type: ignore[arg-type]


def test_fresh_index_is_grouped_by_type_then_title() -> None:
    result = build("", [mem("reference_b.md"), mem("feedback_z.md"), mem("user_me.md"), mem("feedback_a.md")])
    assert result.text == (
        "- [me](user_me.md) — desc\n"
        "- [a](feedback_a.md) — desc\n"
        "- [z](feedback_z.md) — desc\n"
        "- [b](reference_b.md) — desc\n"
    )


def test_hand_written_lines_are_kept_and_new_entries_join_their_type() -> None:
    existing = (
        "# Memory\n"
        "\n"
        "Read the team notes first.\n"
        "\n"
        "## Feedback\n"
        "* [old title](./feedback_a.md): stale description\n"
        "  continuation written by hand\n"
        "\n"
        "## Projects\n"
        "- [p](project_p.md) — desc\n"
        "- [Design doc](design.md) — not a memory, and missing\n"
        "\n"
        "Closing prose.\n"
    )
    memories = [
        mem("feedback_a.md", "A"),
        mem("feedback_b.md", "B"),
        mem("project_p.md", "p"),
        mem("project_q.md", "q"),
    ]
    result = build(existing, memories)
    assert result.text == (
        "# Memory\n"
        "\n"
        "Read the team notes first.\n"
        "\n"
        "## Feedback\n"
        "- [A](feedback_a.md) — desc\n"
        "  continuation written by hand\n"
        "- [B](feedback_b.md) — desc\n"
        "\n"
        "## Projects\n"
        "- [p](project_p.md) — desc\n"
        "- [q](project_q.md) — desc\n"
        "- [Design doc](design.md) — not a memory, and missing\n"
        "\n"
        "Closing prose.\n"
    )
    assert result.hand_lines == 11


def test_index_is_idempotent() -> None:
    memories = [mem("feedback_a.md"), mem("user_u.md"), mem("team/project_x.md")]
    first = build("# Title\n\nprose\n", memories)
    second = build(first.text, memories)
    assert second.text == first.text
    assert first.text.endswith(
        "prose\n\n- [u](user_u.md) — desc\n- [a](feedback_a.md) — desc\n- [x](team/project_x.md) — desc\n"
    )


def test_entries_after_a_paragraph_get_a_blank_line() -> None:
    assert build("Notes", [mem("user_u.md")]).text == "Notes\n\n- [u](user_u.md) — desc\n"


def test_excluded_memories_lose_their_lines() -> None:
    existing = "- [a](user_a.md) — desc\n- [b](user_b.md) — desc\n- [c](user_c.md) — desc\n- [d](user_d.md) — d\n"
    memories = [
        mem("user_a.md", status="superseded"),
        mem("user_b.md", expires="2026-11-01"),
        mem("user_c.md", status="quarantined"),
        mem("user_d.md", superseded_by="user_a.md"),
        mem("user_e.md", status="archived"),
    ]
    result = build(existing, memories)
    assert result.text == ""
    assert sorted(e.reason for e in result.excluded) == [
        "archived",
        "expired 2026-11-01",
        "quarantined",
        "superseded",
        "superseded",
    ]


def test_lines_for_invalid_memories_and_missing_files_are_kept() -> None:
    existing = "- [h](feedback_h.md) — handoff, type unknown\n- [gone](feedback_gone.md) — deleted by hand\n"
    result = build(existing, [mem("feedback_h.md", type="handoff")])
    assert result.text == existing


def test_drop_removes_entries_memdir_retired() -> None:
    existing = "# T\n- [gone](feedback_gone.md) — x\n- [k](user_k.md) — desc\n"
    assert build(existing, [mem("user_k.md")], drop=["feedback_gone.md"]).text == "# T\n- [k](user_k.md) — desc\n"


def test_a_memory_is_listed_once_and_extra_entries_are_reported() -> None:
    existing = "- [a](user_a.md) — desc\n- [a again](user_a.md) — a person's extra note\n"
    result = build(existing, [mem("user_a.md")])
    assert result.text == "- [a](user_a.md) — desc\n"
    assert result.rewritten == ["- [a again](user_a.md) — a person's extra note"]


@pytest.mark.parametrize("status", ["status: superseded", "importance: 0.0"])
def test_duplicate_entries_of_an_excluded_or_left_out_memory_all_go(status: str) -> None:
    key, value = status.split(": ")
    memories = [mem("user_a.md", **{key: value}), mem("user_b.md", importance=0.9), mem("user_c.md", importance=0.8)]
    existing = "- [a](user_a.md) — one\n- [a](user_a.md) — two\n- [b](user_b.md) — desc\n"
    caps = Caps(max_lines=2)  # superseded: b and c fit; least valuable: only b and the note
    first = build(existing, memories, caps=caps)
    assert "user_a.md" not in first.text.replace("<!--", "")
    assert build(first.text, memories, caps=caps).text == first.text


def test_line_cap_leaves_out_least_valuable_first() -> None:
    memories = [mem(f"user_{i:03}.md", importance=0.5, updated=f"2026-01-{1 + i % 28:02}") for i in range(250)]
    memories.append(mem("user_low.md", importance=0.1, updated="2026-11-20"))
    memories.append(mem("user_high.md", importance=0.9, updated="2020-01-01"))
    result = build("# Memory\n", memories)
    assert result.lines == 200
    assert result.text.count("\n- [") == 197  # heading + blank + 197 entries + note
    assert result.text.splitlines()[-1].startswith("<!-- memdir: 55 more memories left out")
    left = {left.memory.path for left in result.left_out}
    assert "user_low.md" in left and "user_high.md" not in left
    # Among equal importance, the oldest go first.
    kept_dates = [m.last_changed for m in result.entries if m.importance == 0.5]
    left_dates = [left.memory.last_changed for left in result.left_out if left.memory.importance == 0.5]
    assert max(d for d in left_dates if d) <= min(d for d in kept_dates if d)
    assert {left.reason for left in result.left_out} == {"200-line cap"}
    assert build(result.text, memories).text == result.text


def test_byte_cap_is_respected_with_long_descriptions() -> None:
    # Three bytes a character: each entry is shortened to 150 characters, some 400 bytes.
    memories = [mem(f"user_{i:03}.md", description="记忆" * 200, importance=i / 100) for i in range(100)]
    result = build("", memories)
    assert result.bytes <= 25_000 and result.lines <= 200
    line = len(render_entry(memories[0]).encode()) + 1
    assert len(result.entries) == (25_000 - len(left_out_note(42, Caps()).encode()) - 1) // line
    assert all(left.memory.importance < min(m.importance for m in result.entries) for left in result.left_out)
    assert {left.reason for left in result.left_out} == {"25,000-byte cap"}


def test_small_caps_leave_everything_out_but_keep_hand_text() -> None:
    result = build("# Memory\nprose\n", [mem("user_a.md")], caps=Caps(max_lines=2))
    assert result.refused is None
    assert result.text == "# Memory\nprose\n"
    assert [left.memory.path for left in result.left_out] == ["user_a.md"]


def test_hand_written_text_over_a_cap_is_refused_not_cut() -> None:
    existing = "".join(f"line {i}\n" for i in range(250))
    result = build(existing, [mem("user_a.md")])
    assert result.refused is not None and "250 lines" in result.refused
    assert result.text == existing


def test_crlf_files_stay_crlf() -> None:
    result = build("# Memory\r\n\r\n- [a](user_a.md) — old\r\n", [mem("user_a.md"), mem("user_b.md")])
    assert result.text == "# Memory\r\n\r\n- [a](user_a.md) — desc\r\n- [b](user_b.md) — desc\r\n"


def test_render_entry_escapes_and_brackets_paths() -> None:
    m = mem("team/user_my file (1).md", name="a [b] c")
    assert render_entry(m) == "- [a \\[b\\] c](<team/user_my file (1).md>) — desc"
    assert build(build("", [m]).text, [m]).entries == [m]


def test_entry_without_description_is_a_bare_link() -> None:
    m = Memory(path="user_x.md", doc=parse_document("---\ntype: user\n---\n"))
    assert render_entry(m) == "- [user_x](user_x.md)"


@pytest.mark.parametrize(
    ("line", "target"),
    [
        ("- [a](a.md) — x", "a.md"),
        ("- [a](<my file.md>)", "my file.md"),
        ("- [a](./sub/../a.md#anchor)", "a.md"),
        ("- [a](my%20file.md)", "my file.md"),
        ("- [a](https://example.com/a.md)", None),
        ("- [a](D:\\notes\\a.md)", None),
        ("- [a](../../CLAUDE.md)", "../../CLAUDE.md"),
    ],
)
def test_find_links_normalises_targets(line: str, target: str | None) -> None:
    assert [link.target for link in find_links(line)] == [target]


def test_find_links_skips_fenced_code() -> None:
    assert find_links("```\n[a](a.md)\n```\n[b](b.md)\n")[0].target == "b.md"


def test_rewritten_entries_are_reported_with_their_old_text() -> None:
    existing = "- [a](user_a.md) — descripción escrita a mano\n- [b](user_b.md) — desc\n"
    result = build(existing, [mem("user_a.md"), mem("user_b.md")])
    assert result.rewritten == ["- [a](user_a.md) — descripción escrita a mano"]
    assert build(result.text, [mem("user_a.md"), mem("user_b.md")]).rewritten == []


@pytest.mark.parametrize("path", ["project_issue-#829.md", "project_100%-done.md", "team/user_a #1 (x).md"])
def test_file_names_with_hash_or_percent_link_to_themselves(path: str) -> None:
    m = mem(path)
    first = build("", [m])
    assert [link.target for link in find_links(first.text)] == [path]
    assert build(first.text, [m]).text == first.text


def test_unicode_line_separators_do_not_split_hand_written_lines() -> None:
    existing = "note\u2028still the same line\x0cand this\n- [a](user_a.md) — desc\n"
    result = build(existing, [mem("user_a.md")])
    assert result.text == existing
    assert result.lines == 2


def test_entries_inside_fenced_code_are_hand_written() -> None:
    existing = "```md\n- [a](user_a.md) — my example\n```\n"
    result = build(existing, [mem("user_a.md")])
    assert result.text == existing + "\n- [a](user_a.md) — desc\n"
    assert build(result.text, [mem("user_a.md")]).text == result.text


def test_a_bom_is_kept_and_does_not_hide_the_first_entry() -> None:
    existing = "\ufeff- [a](user_a.md) — old\n"
    result = build(existing, [mem("user_a.md")])
    assert result.text == "\ufeff- [a](user_a.md) — desc\n"


def test_nested_entries_keep_their_indentation() -> None:
    existing = "- Group\n  - [a](user_a.md) — old\n"
    assert build(existing, [mem("user_a.md")]).text == "- Group\n  - [a](user_a.md) — desc\n"


@pytest.mark.parametrize("path", ["user_back\\slash.md", "user_new\nline.md", "user_tab\tx.md"])
def test_odd_file_names_still_link_to_themselves(path: str) -> None:
    m = mem(path, name="odd")
    first = build("", [m])
    assert [link.target for link in find_links(first.text)] == [path]
    assert first.lines == 1 and build(first.text, [m]).text == first.text


def test_left_out_is_listed_least_valuable_first() -> None:
    memories = [mem(f"user_{i}.md", importance=i / 10) for i in range(5)]
    result = build("", memories, caps=Caps(max_lines=3))
    assert [left.memory.path for left in result.left_out] == ["user_0.md", "user_1.md", "user_2.md"]


def test_a_memory_only_claude_codes_retry_reads_is_indexed(tmp_path: Path) -> None:
    """Claude Code loads `description: Rosetta Stone: 4 principles` (it quotes the value when YAML fails),
    so the index lists it, cold and from the parse cache, and says nothing of a file that could not be read."""
    from memdir import MemoryDir

    folder = tmp_path / "memory"
    folder.mkdir()
    text = "---\nname: rosetta\ndescription: Rosetta Stone: 4 principles\ntype: feedback\n---\nBody.\n"
    (folder / "feedback_rosetta.md").write_text(text)
    old = time.time() - 3600  # old enough for the parse cache to keep it
    os.utime(folder / "feedback_rosetta.md", (old, old))
    written = MemoryDir(folder, today=TODAY).write_index()
    assert written.changed and not written.problems
    assert (folder / "MEMORY.md").read_text() == "- [rosetta](feedback_rosetta.md) — Rosetta Stone: 4 principles\n"
    assert not MemoryDir(folder, today=TODAY).write_index().changed  # warm: from the cache
    assert (folder / "feedback_rosetta.md").read_text() == text  # indexing never rewrites a memory


def test_an_index_row_draws_its_line_once_and_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold `memdir --no-cache index` made a row of every memory and drew every row's line: masking
    and escaping ten thousand names and descriptions for the hundred lines the index shows."""
    from memdir.core import index
    from memdir.core.index import IndexRow, entry_line

    memory = mem("user_a.md", "a [b]", "key sk-ant-api03-" + "x" * 95 + " here")
    drawn: list[str] = []
    real = index.render_entry
    monkeypatch.setattr(index, "render_entry", lambda m: drawn.append(m.path) or real(m))
    row = IndexRow.of(memory)
    assert drawn == []
    assert entry_line(row) == entry_line(row) == real(memory)
    assert row.to_json()[-1] == real(memory)
    assert drawn == ["user_a.md"]


def test_an_index_row_is_the_same_row_before_and_after_it_draws_its_line() -> None:
    """Bug: the line drawn late was compared and hashed like the fields it is drawn from, so a row
    changed its hash (and stopped equalling its twin) when it was first priced or shown."""
    from memdir.core.index import IndexRow

    memory = mem("user_a.md", "a", "the description")
    row, twin = IndexRow.of(memory), IndexRow.of(memory)
    before = hash(row)
    row.line()
    assert hash(row) == before
    assert row == twin
