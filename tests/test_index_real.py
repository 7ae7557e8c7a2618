"""MEMORY.md as real folders have it: dead links, prose links, long descriptions, kept wording,
entries that can never fit, and file names a markdown link has trouble with."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import MakeMemory, invoke_memdir
from test_index import build, mem

from memdir.core.index import Caps, entry_target, find_links, left_out_note, render_entry, split_lines
from memdir.folder import MemoryDir

# --- 2. dead links never cost a live memory its place ---------------------------------------------


def test_dead_entries_go_first_when_the_caps_bind() -> None:
    dead = "".join(f"- [gone {i}](project_gone-{i}.md) — deleted long ago\n" for i in range(5))
    live = [mem(f"user_{i}.md") for i in range(5)]
    existing = "# Memory\n" + dead + "".join(render_entry(m) + "\n" for m in live)
    missing = [f"project_gone-{i}.md" for i in range(5)]
    result = build(existing, live, caps=Caps(max_lines=8), missing=missing)
    assert [m.path for m in result.entries] == [m.path for m in live]
    assert result.left_out == []
    assert "gone" not in result.text
    assert result.dead_dropped == [line for line in split_lines(dead)]
    assert build(result.text, live, caps=Caps(max_lines=8), missing=()).text == result.text


def test_dead_entries_stay_while_everything_fits() -> None:
    existing = "- [gone](project_gone.md) — deleted\n- [a](user_a.md) — desc\n"
    result = build(existing, [mem("user_a.md")], missing=["project_gone.md"])
    assert result.text == existing
    assert result.dead == ["- [gone](project_gone.md) — deleted"]
    assert result.dead_dropped == []


def test_dead_links_in_prose_are_not_entries_and_stay() -> None:
    existing = "See [the old plan](project_plan.md) for background.\n"
    result = build(existing, [mem("user_a.md")], caps=Caps(max_lines=2), missing=["project_plan.md"])
    assert result.text.startswith(existing)
    assert result.dead == []


def test_a_renamed_memory_takes_over_its_old_line(folder: Path, make_memory: MakeMemory) -> None:
    (folder / "MEMORY.md").write_text(
        "# Memory\n\n- [deploy](project_deploy.md) — old words\n- [b](user_b.md) — desc\n"
    )
    make_memory("user_b.md", description="desc")
    make_memory("project_deploy-flow.md", name="deploy", description="We deploy from main")
    MemoryDir(folder).write_index()
    assert (folder / "MEMORY.md").read_text() == (
        "# Memory\n\n- [deploy](project_deploy-flow.md) — We deploy from main\n- [b](user_b.md) — desc\n"
    )


def test_a_memory_moved_into_a_subfolder_takes_over_its_old_line() -> None:
    existing = "- [Deploy flow](project_deploy.md) — x\n- [b](user_b.md) — desc\n"
    moved = mem("team/project_deploy.md", name="Deploy process")
    result = build(existing, [moved, mem("user_b.md")], missing=["project_deploy.md"])
    assert result.text == "- [Deploy process](team/project_deploy.md) — desc\n- [b](user_b.md) — desc\n"


def test_dead_entries_dropped_for_the_caps_are_kept_in_history(folder: Path, make_memory: MakeMemory) -> None:
    dead = "".join(f"- [gone {i}](project_gone-{i}.md) — deleted\n" for i in range(3))
    (folder / "MEMORY.md").write_text(dead)
    for i in range(3):
        make_memory(f"user_{i}.md")
    write = MemoryDir(folder, caps=Caps(max_lines=3)).write_index()
    assert len(write.result.entries) == 3
    history = (folder / ".memdir" / "MEMORY.md.history").read_text()
    assert all(line in history for line in split_lines(dead))


def test_index_says_how_many_more_dead_entries_it_dropped_or_kept(folder: Path, make_memory: MakeMemory) -> None:
    dead = "".join(f"- [gone {i}](project_gone-{i:02}.md) — deleted\n" for i in range(23))
    (folder / "MEMORY.md").write_text(dead)
    make_memory("user_a.md")
    kept = invoke_memdir("--dir", str(folder), "index")
    assert "project_gone-19.md, and 3 more)" in kept.output, kept.output
    assert "project_gone-20.md" not in kept.output
    for i in range(180):  # with the 23 dead lines, over the 200-line cap: the dead ones go
        make_memory(f"user_{i:03}.md")
    dropped = invoke_memdir("--dir", str(folder), "index")
    assert dropped.exit_code == 0, dropped.output
    assert "  - [gone 19](project_gone-19.md) — deleted\n  ... and 3 more (kept in .memdir/MEMORY.md.history)" in (
        dropped.output
    )


def test_index_names_dead_entries_and_the_fix(folder: Path, make_memory: MakeMemory) -> None:
    (folder / "MEMORY.md").write_text("- [gone](project_gone.md) — deleted\n")
    make_memory("user_a.md")
    result = invoke_memdir("--dir", str(folder), "index")
    assert result.exit_code == 0, result.output
    assert "project_gone.md" in result.output and "--drop-missing" in result.output
    data = json.loads(invoke_memdir("--dir", str(folder), "index", "--format", "json").stdout)
    assert data["dead_entries"] == ["- [gone](project_gone.md) — deleted"]


# --- 3. one definition of "listed" ----------------------------------------------------------------


def test_a_memory_linked_in_prose_is_listed_and_not_appended() -> None:
    existing = (
        "# Notes\n\nSummed data: details: [ref-sum-data.md](./reference_sum-data.md), and see\n"
        "the [deploy notes](project_deploy.md) too.\n"
    )
    memories = [mem("reference_sum-data.md"), mem("project_deploy.md")]
    result = build(existing, memories)
    assert result.text == existing
    assert sorted(m.path for m in result.linked) == ["project_deploy.md", "reference_sum-data.md"]


def test_dot_slash_encoded_and_case_variant_links_are_the_same_memory() -> None:
    existing = (
        "- [a](./user_a.md) — desc\n- [b](user_my%20b.md) — desc\n"
        "- [c](User_C.md) — desc\n- [d](<./user d.md>) — desc\n"
    )
    memories = [mem("user_a.md"), mem("user_my b.md", name="b"), mem("user_c.md", name="c"), mem("user d.md", "d")]
    result = build(existing, memories)
    assert result.text.count("\n") == 4
    assert sorted(entry_target(line) for line in split_lines(result.text)) == sorted(m.path for m in memories)


def test_lint_and_index_agree_on_prose_links(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("reference_sum-data.md")
    make_memory("user_me.md")
    (folder / "MEMORY.md").write_text("Data: [sum](./reference_sum-data.md) and [me](User_Me.md).\n")
    before = (folder / "MEMORY.md").read_text()
    lint = json.loads(invoke_memdir("--dir", str(folder), "lint", "--format", "json").stdout)
    assert [f["code"] for f in lint["findings"] if f["code"].startswith("I")] == []
    assert invoke_memdir("--dir", str(folder), "index").exit_code == 0
    assert (folder / "MEMORY.md").read_text() == before


def test_a_link_in_an_entrys_text_lists_nothing_and_one_run_settles(folder: Path, make_memory: MakeMemory) -> None:
    # A real folder: the only link to feedback_b.md was inside feedback_a.md's entry. The first run
    # rewrote that entry from the frontmatter, so b was listed by nothing until a second run.
    make_memory("feedback_a.md", description="Rule a")
    make_memory("feedback_b.md", description="Rule b")
    (folder / "MEMORY.md").write_text("- [a](feedback_a.md) — Rule a, with nuance ([nuance](feedback_b.md))\n")
    lint = json.loads(invoke_memdir("--dir", str(folder), "lint", "--select", "I003", "--format", "json").stdout)
    assert [f["path"] for f in lint["findings"]] == ["feedback_b.md"]
    first = MemoryDir(folder).write_index()
    assert first.result.text == "- [a](feedback_a.md) — Rule a\n- [b](feedback_b.md) — Rule b\n"
    assert not MemoryDir(folder).write_index().changed


def test_a_link_in_a_description_does_not_list_the_memory_it_names(folder: Path) -> None:
    assert invoke_memdir("--dir", str(folder), "add", "user", "a", "-d", "see [b](user_b.md)").exit_code == 0
    # user_b.md appears later, written by hand or by another tool.
    (folder / "user_b.md").write_text("---\nname: b\ndescription: Rule b\ntype: user\n---\nB.\n")
    check = invoke_memdir("--dir", str(folder), "index", "--check")
    assert check.exit_code == 1, check.output
    lint = json.loads(invoke_memdir("--dir", str(folder), "lint", "--select", "I003", "--format", "json").stdout)
    assert [f["path"] for f in lint["findings"]] == ["user_b.md"]
    assert invoke_memdir("--dir", str(folder), "index").exit_code == 0
    assert (folder / "MEMORY.md").read_text() == "- [a](user_a.md) — see [b](user_b.md)\n- [b](user_b.md) — Rule b\n"
    assert invoke_memdir("--dir", str(folder), "index", "--check").exit_code == 0


def test_links_on_hand_written_lines_list_and_links_on_entries_do_not() -> None:
    existing = (
        "# Notes\n"
        "- [Design doc](design.md) — also read [c](user_c.md)\n"  # a list item of a person's own
        "- [gone](user_gone.md) — see [d](user_d.md)\n"  # a dead entry: memdir's to drop
        "- [old](user_old.md) — superseded by [e](user_e.md)\n"  # an entry for an excluded memory
        "- [a](user_a.md) — desc\n"
        "- [a again](user_a.md) — and [f](user_f.md)\n"  # a second entry for a: it goes
    )
    memories = [mem("user_a.md"), mem("user_old.md", status="superseded"), *(mem(f"user_{x}.md") for x in "cdef")]
    result = build(existing, memories, missing=["user_gone.md"])
    added = [entry_target(line) for line in split_lines(result.text)[4:]]
    assert added == ["user_d.md", "user_e.md", "user_f.md"], result.text
    assert [m.path for m in result.linked] == ["user_c.md"]
    assert build(result.text, memories, missing=["user_gone.md"]).text == result.text


def test_a_memory_with_its_own_entry_and_a_prose_link_gives_up_the_entry_when_the_caps_bind() -> None:
    existing = "See [b](user_b.md) first.\n\n- [b](user_b.md) — desc\n"
    memories = [mem("user_b.md", importance=0.9), *(mem(f"user_{i}.md") for i in range(4))]
    assert build(existing, memories).text == existing + "".join(render_entry(m) + "\n" for m in memories[1:])
    caps = Caps(max_lines=5)  # b's entry goes before any memory is left out, and b is not one of them
    result = build(existing, memories, caps=caps)
    kept = "".join(render_entry(m) + "\n" for m in memories[1:3])
    assert result.text == "See [b](user_b.md) first.\n\n" + kept + left_out_note(2, caps) + "\n"
    assert [m.path for m in result.linked] == ["user_b.md"]
    assert [left.memory.path for left in result.left_out] == ["user_3.md", "user_2.md"]
    assert build(result.text, memories, caps=caps).text == result.text


# --- 4. a generated line never breaks a rule memdir enforces --------------------------------------


def test_a_long_description_is_shortened_on_a_word_boundary() -> None:
    words = "Deploys go through the release train every Tuesday and the checklist lives in the ops wiki " * 4
    m = mem("project_train.md", name="release train", description=words.strip())
    line = render_entry(m)
    assert len(line) <= 150
    assert line.endswith("…")
    kept = line.removeprefix("- [release train](project_train.md) — ").removesuffix("…")
    assert words.startswith(kept) and words[len(kept)] == " "
    assert entry_target(line) == "project_train.md"


def test_a_long_title_is_shortened_too_and_the_link_survives() -> None:
    m = mem("user_x.md", name="n" * 300, description="short")
    line = render_entry(m)
    assert len(line) <= 150 and entry_target(line) == "user_x.md"


def test_generated_entries_pass_lint_i006(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_long.md", description="word " * 60)
    assert invoke_memdir("--dir", str(folder), "index").exit_code == 0
    assert [len(line) for line in split_lines((folder / "MEMORY.md").read_text()) if len(line) > 150] == []
    result = invoke_memdir("--dir", str(folder), "lint", "--extend-select", "I006", "--format", "json")
    assert [f["code"] for f in json.loads(result.stdout)["findings"] if f["code"] == "I006"] == []


# --- 5. curated lines are a choice -----------------------------------------------------------------


def test_entry_text_keep_keeps_an_existing_entrys_wording() -> None:
    existing = "- **[Deploy](project_deploy.md)** — the one to read first\n"
    memories = [mem("project_deploy.md"), mem("user_new.md")]
    result = build(existing, memories, keep_wording=True)
    assert result.text == existing + "- [new](user_new.md) — desc\n"
    assert result.rewritten == []


def test_entry_text_setting_is_read_and_checked(tmp_path: Path) -> None:
    from memdir.core.config import load_config
    from memdir.core.errors import ConfigError

    (tmp_path / ".memdir.toml").write_text('[index]\nentry-text = "keep"\n')
    assert load_config(tmp_path).index.entry_text == "keep"
    (tmp_path / ".memdir.toml").write_text('[index]\nentry-text = "mine"\n')
    try:
        load_config(tmp_path)
    except ConfigError as exc:
        assert "entry-text" in str(exc) and "keep" in str(exc)
    else:
        raise AssertionError("an unknown entry-text was accepted")


def test_keep_setting_reaches_the_index(tmp_path: Path, make_memory: MakeMemory, folder: Path) -> None:
    (folder / ".memdir.toml").write_text('dir = "."\n[index]\nentry-text = "keep"\n')
    make_memory("user_a.md", description="from the file")
    (folder / "MEMORY.md").write_text("- [A, as I put it](user_a.md) — my words\n")
    assert invoke_memdir("index", cwd=folder).exit_code == 0
    assert (folder / "MEMORY.md").read_text() == "- [A, as I put it](user_a.md) — my words\n"


def test_first_run_says_what_it_replaced_and_how_to_get_it_back(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md", description="from the file")
    (folder / "MEMORY.md").write_text("- [A](user_a.md) — my hand-tuned words\n")
    assert not (folder / ".memdir").exists()
    result = invoke_memdir("--dir", str(folder), "index")
    assert result.exit_code == 0
    assert "- [A](user_a.md) — my hand-tuned words" in result.output
    assert 'entry-text = "keep"' in result.output and "MEMORY.md.prev" in result.output
    # The recipe works: the old file back, the setting on, and the words stay.
    (folder / "MEMORY.md").write_text((folder / ".memdir" / "MEMORY.md.prev").read_text())
    (folder / ".memdir.toml").write_text('dir = "."\n[index]\nentry-text = "keep"\n')
    assert invoke_memdir("index", cwd=folder).exit_code == 0
    assert (folder / "MEMORY.md").read_text() == "- [A](user_a.md) — my hand-tuned words\n"
    # Later runs (the state folder exists) say it in one line.
    (folder / ".memdir.toml").unlink()
    again = invoke_memdir("--dir", str(folder), "index")
    assert "my hand-tuned words" not in again.output and "Replaced 1" in again.output


def test_keep_a_renamed_file_named_after_its_name_takes_over_its_line_and_label(
    tmp_path: Path, make_memory: MakeMemory, folder: Path
) -> None:
    (folder / ".memdir.toml").write_text('dir = "."\n[index]\nentry-text = "keep"\n')
    make_memory("feedback_lint-before-commit.md", name="lint-before-commit", description="Run the linter")
    make_memory("user_role.md", description="Backend dev")
    (folder / "MEMORY.md").write_text(
        "- [Lint first!](feedback_lint-before-commit.md) — my words\n- [role](user_role.md) — Backend dev\n"
    )
    (folder / "feedback_lint-before-commit.md").rename(folder / "feedback_lint.md")
    assert invoke_memdir("index", cwd=folder).exit_code == 0
    assert (folder / "MEMORY.md").read_text() == (
        "- [Lint first!](feedback_lint.md) — my words\n- [role](user_role.md) — Backend dev\n"
    )
    assert invoke_memdir("index", "--check", cwd=folder).exit_code == 0


def test_keep_a_renamed_file_keeps_its_label_wherever_it_moved() -> None:
    existing = '- **[Deploy](project_deploy.md "title")** — mine\n'
    moved = mem("team/project_deploy flow.md", name="deploy")
    result = build(existing, [moved], missing=["project_deploy.md"], keep_wording=True)
    assert result.text == '- **[Deploy](<team/project_deploy flow.md> "title")** — mine\n'
    assert result.rewritten == []  # not replaced by the frontmatter's text: only its link moved


# --- 6. greedy packing -------------------------------------------------------------------------------


def test_an_entry_that_can_never_fit_does_not_empty_the_index() -> None:
    huge = mem("user_" + "x" * 240 + ".md", importance=1.0)  # the most valuable, and its path alone is long
    small = [mem(f"user_{i:02}.md", importance=0.5) for i in range(5)]
    room = sum(len(render_entry(m).encode()) + 1 for m in small) + len(left_out_note(1, Caps(200, 999))) + 1
    caps = Caps(max_lines=200, max_bytes=room + 5)  # the note reserved for the worst case is a little longer
    assert len(render_entry(huge).encode()) + 1 > room - len(left_out_note(1, caps)) - 1
    result = build("", [huge, *small], caps=caps)
    assert len(result.entries) == 5
    assert [left.memory.path for left in result.left_out] == [huge.path]
    assert "too long" in result.left_out[0].reason
    assert result.bytes <= caps.max_bytes


def test_a_kept_line_that_cannot_fit_gives_way_to_its_generated_line() -> None:
    # Left out, the memory would come back with its generated line on the next run: one run does it.
    long_line = "- [big](user_big.md) — " + "word " * 6000
    memories = [mem("user_big.md", importance=1.0), *(mem(f"user_{i}.md") for i in range(21))]
    result = build(long_line + "\n", memories, keep_wording=True)
    assert len(result.entries) == 22 and result.bytes <= 25_000 and result.left_out == []
    assert split_lines(result.text)[0] == render_entry(memories[0])
    assert result.rewritten == [long_line]
    assert build(result.text, memories, keep_wording=True).text == result.text


def test_a_nested_entry_that_cannot_fit_indented_takes_its_place_unindented() -> None:
    existing = "- [a](user_a.md) — desc\n      - [b](user_b.md) — desc\n"
    memories = [mem("user_a.md", importance=0.9), mem("user_b.md", importance=0.8), mem("user_c.md", "c " * 60)]
    flat = existing.replace("      -", "-").encode()
    caps = Caps(max_lines=200, max_bytes=len(flat) + len(left_out_note(1, Caps(200, 999)).encode()) + 1)
    assert 100 <= caps.max_bytes <= 999  # the note says as many digits as it was measured with
    result = build(existing, memories, caps=caps)
    assert split_lines(result.text)[:2] == ["- [a](user_a.md) — desc", "- [b](user_b.md) — desc"]
    assert build(result.text, memories, caps=caps).text == result.text


def test_lint_names_the_entry_too_long_to_ever_be_listed(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_a.md")
    (folder / "MEMORY.md").write_text("x" * 24_990 + "\n")
    result = json.loads(invoke_memdir("--dir", str(folder), "lint", "--format", "json").stdout)
    i005 = [f for f in result["findings"] if f["code"] == "I005"]
    assert len(i005) == 1 and i005[0]["path"] == "user_a.md" and "too long" in i005[0]["message"]


# --- 7. every link memdir writes parses back ------------------------------------------------------


def test_a_file_name_with_space_and_gt_is_written_once(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_staging -> prod.md", name="staging to prod")
    for _ in range(3):
        MemoryDir(folder).write_index()
    text = (folder / "MEMORY.md").read_text()
    assert text.count("\n") == 1
    assert [link.target for link in find_links(text)] == ["project_staging -> prod.md"]


def test_render_entry_round_trips_awkward_paths() -> None:
    for path in [
        "user_a>b.md",
        "user_<x>.md",
        "user_a b>c.md",
        "user_[x].md",
        "user_a)b.md",
        "user_a(b.md",
        "user_é ü.md",
    ]:
        m = mem(path, name="x")
        assert entry_target(render_entry(m)) == path, path


# --- a secret in a memory never reaches MEMORY.md ----------------------------------------------------


def test_index_masks_a_key_and_lint_still_names_the_file(folder: Path, make_memory: MakeMemory) -> None:
    key = "ghp_" + "a1B2c3D4" * 4 + "e5F6"
    make_memory("reference_ci.md", name=f"ci token {key}", description=f"The CI token is {key}, rotate yearly")
    assert invoke_memdir("--dir", str(folder), "index").exit_code == 0
    text = (folder / "MEMORY.md").read_text()
    assert key not in text and "ghp_…" in text
    assert entry_target(split_lines(text)[0]) == "reference_ci.md"
    lint = json.loads(invoke_memdir("--dir", str(folder), "lint", "--format", "json").stdout)
    assert {f["path"] for f in lint["findings"] if f["code"] == "S002"} == {"reference_ci.md"}
    assert [f for f in lint["findings"] if f["code"].startswith("I")] == []


def test_room_reserved_for_a_longer_note_is_given_back() -> None:
    # Packing reserves room for the longest note it might need ("10 more memories"); the note it
    # writes is shorter ("1 more memory"), and that difference must not cost an entry its place.
    words = "a description long enough that one entry costs more than the note does " * 2
    memories = [mem(f"user_{i}.md", description=words.strip(), importance=0.5 + i / 100) for i in range(10)]
    kept = memories[1:]  # the nine most valuable
    caps = Caps(max_lines=200, max_bytes=25_000)
    needed = sum(len(render_entry(m).encode()) + 1 for m in kept) + len(left_out_note(1, caps).encode()) + 1
    tight = Caps(max_lines=200, max_bytes=needed)
    assert len(left_out_note(10, tight)) > len(left_out_note(1, tight))
    result = build("", memories, caps=tight)
    assert [left.memory.path for left in result.left_out] == ["user_0.md"]
    assert result.bytes <= needed


def test_packing_a_large_folder_grows_linearly() -> None:
    """The caps bind hard in a folder of thousands: packing, and filling the room it reserved, must
    cost each left-out memory a constant, not a pass over the others (it once did: 10,000 memories
    took 11 s). Counted, not timed: the calls packing makes (sys.setprofile's, Python's and C's) for
    n and 4n memories. Linear is 4x (3.1 measured, its fixed part shared); the bug put back made it
    18.7x."""
    import sys

    def calls(n: int) -> int:
        memories = [mem(f"user_{i:05}.md", importance=(i % 97) / 97) for i in range(n)]
        made = 0

        def count(frame: object, event: str, arg: object) -> None:
            nonlocal made
            made += event in ("call", "c_call")

        sys.setprofile(count)
        try:
            result = build("# Memory\n", memories)
        finally:
            sys.setprofile(None)
        assert len(result.entries) < 200 and len(result.left_out) > n - 200
        return made

    small, large = calls(1_500), calls(6_000)
    assert large / small < 8, f"4x the memories made {large / small:.1f}x the calls"  # between 4 and 16
