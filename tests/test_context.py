"""`memdir context` and render_context: the index plus memories that always load, within a byte budget."""

from __future__ import annotations

import json
import os
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import TODAY, MakeMemory, invoke_memdir

from memdir import Caps, Config, MemoryDir
from memdir.core.config import ContextSettings, load_config
from memdir.core.errors import ConfigError
from memdir.core.index import value_key
from memdir.read.context import ContextBudgetTooSmall, ContextFormat, estimate_tokens, is_pinned, render_context

FORMATS = list(ContextFormat)


def _folder(root: Path, **kwargs: object) -> MemoryDir:
    return MemoryDir(root, today=TODAY, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def mixed(folder: Path, make_memory: MakeMemory) -> Path:
    """Memories that do and do not load in full."""
    (folder / "MEMORY.md").write_text("# Memory\n\nHand-written: ask before pushing.\n")
    make_memory("feedback_pinned.md", body="Pinned body.\n\n**Why:** x\n\n**How to apply:** y\n", pin="true")
    make_memory("project_important.md", body="Important body.", importance=0.9, updated="2026-11-01")
    make_memory("user_plain.md", body="Plain body.")
    make_memory("reference_unpinned.md", body="Unpinned body.", importance=1, pin="false")
    make_memory("project_below.md", body="Below body.", importance=0.89)
    make_memory("feedback_expired.md", body="Expired body.", pin="true", expires="2026-11-01")
    make_memory("project_superseded.md", body="Old body.", pin="true", superseded_by="project_important.md")
    make_memory("user_quarantined.md", body="Injected body.", importance=1, status="quarantined")
    return folder


def test_markdown_is_the_index_then_the_pinned_bodies(mixed: Path) -> None:
    folder = _folder(mixed)
    context = render_context(folder)
    index = folder.plan_index().text
    assert context.text.startswith(index)
    assert "Hand-written: ask before pushing." in context.text
    assert "# Memories loaded in full" in context.text
    # most important first: importance 0.9, then `pin: true` at the default 0.5
    assert [b.memory.path for b in context.loaded] == ["project_important.md", "feedback_pinned.md"]
    assert all(b.reason == "pinned" for b in context.loaded)
    for gone in ("Plain body.", "Unpinned body.", "Below body.", "Expired body.", "Old body.", "Injected body."):
        assert gone not in context.text
    assert context.left_out == []
    assert context.bytes == len(context.text.encode("utf-8"))
    assert context.estimated_tokens == estimate_tokens(context.text)


def test_render_context_reads_only_and_never_prints(mixed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = {p: p.read_bytes() for p in mixed.rglob("*") if p.is_file() and ".memdir" not in p.parts}
    (mixed / "MEMORY.md").write_text("# Memory\n\n- [stale](gone.md) — a stale line\n")
    before[mixed / "MEMORY.md"] = (mixed / "MEMORY.md").read_bytes()
    for fmt in FORMATS:
        render_context(_folder(mixed), fmt, budget=400)
    after = {p: p.read_bytes() for p in mixed.rglob("*") if p.is_file() and ".memdir" not in p.parts}
    assert after == before
    assert capsys.readouterr() == ("", "")


def test_is_pinned_rules(make_memory: MakeMemory, folder: Path) -> None:
    make_memory("user_a.md", importance=0.5)
    make_memory("user_b.md")
    make_memory("user_c.md", pin="true", importance=0.1)
    make_memory("user_d.md", importance=".nan")  # read as the default 0.5
    memories = {m.path: m for m in _folder(folder).list()}
    assert is_pinned(memories["user_a.md"], 0.5)
    assert not is_pinned(memories["user_b.md"], 0.5)  # the default importance never pins
    assert not is_pinned(memories["user_d.md"], 0.5)  # nor one that only counts as the default
    assert not is_pinned(memories["user_a.md"], None)
    assert is_pinned(memories["user_c.md"], None)


def test_pin_threshold_comes_from_the_config(mixed: Path, tmp_path: Path) -> None:
    (tmp_path / ".memdir.toml").write_text("[context]\npin-importance = 0.85\nbudget = 100000\n")
    config = load_config(tmp_path)
    assert config.context == ContextSettings(pin_importance=0.85, budget=100_000)
    loaded = [b.memory.path for b in render_context(_folder(mixed, config=config)).loaded]
    assert "project_below.md" in loaded
    (tmp_path / ".memdir.toml").write_text("[context]\npin_importance = false\n")
    config = load_config(tmp_path)
    assert config.context.pin_importance is None
    loaded = [b.memory.path for b in render_context(_folder(mixed, config=config)).loaded]
    assert loaded == ["feedback_pinned.md"]


@pytest.mark.parametrize(
    "table",
    ["pin-importance = 2", "pin-importance = true", 'pin-importance = "high"', "budget = 0", "budget = 1.5"],
)
def test_bad_context_settings_are_config_errors(tmp_path: Path, table: str) -> None:
    (tmp_path / ".memdir.toml").write_text(f"[context]\n{table}\n")
    with pytest.raises(ConfigError, match="context"):
        load_config(tmp_path)


def test_unknown_context_setting_warns(tmp_path: Path) -> None:
    (tmp_path / ".memdir.toml").write_text("[context]\npinned = 1\n")
    assert any("context.pinned" in w for w in load_config(tmp_path).warnings)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_budget_is_kept_and_nothing_is_cut(mixed: Path, make_memory: MakeMemory, fmt: ContextFormat) -> None:
    for i in range(12):
        make_memory(f"user_extra-{i:02}.md", body=f"Extra {i}.", importance=round(0.1 + i * 0.05, 2))
    folder = _folder(mixed)
    full = render_context(folder, fmt)
    bodies = {b.memory.path: b.memory.body.strip() for b in full.loaded}
    smallest = None
    for budget in range(50, full.bytes + 200, 37):
        try:
            context = render_context(folder, fmt, budget=budget)
        except ContextBudgetTooSmall:
            assert smallest is None, "a larger budget failed after a smaller one worked"
            continue
        smallest = smallest or budget
        assert context.bytes <= budget
        shown = {m.path for m in context.entries}
        for memory in full.entries:  # an entry is whole or absent
            assert (memory.description in context.text) == (memory.path in shown) or memory.path in bodies
        text = context.text
        if fmt is ContextFormat.JSON:  # compare the bodies as the JSON holds them
            text = "\n".join(e.get("body", "") for e in json.loads(text)["entries"])
        for loaded in context.loaded:  # a body is whole
            assert bodies[loaded.memory.path] in text
        for path, body in bodies.items():
            if path not in {b.memory.path for b in context.loaded}:
                assert body not in text
        reported = {(x.memory.path, x.part) for x in context.left_out if x.cause == "budget"}
        assert reported == {(m.path, "entry") for m in full.entries if m.path not in shown} | {
            (b.memory.path, "body") for b in full.loaded if b not in context.loaded
        }
        if context.loaded:  # bodies come only once the whole index is in
            assert shown == {m.path for m in full.entries}
    assert smallest is not None
    exact = render_context(folder, fmt, budget=full.bytes + 10)  # room for the budget's own digits in JSON
    assert exact.entries == full.entries and exact.loaded == full.loaded and exact.left_out == []


def test_entries_are_left_out_least_valuable_first(mixed: Path) -> None:
    folder = _folder(mixed)
    full = render_context(folder, ContextFormat.XML)
    context = render_context(folder, ContextFormat.XML, budget=full.bytes - 1)
    gone = [x.memory.path for x in context.left_out if x.part == "entry"]
    assert gone  # the pinned bodies went first, then the least valuable entries
    kept = {m.path for m in context.entries}
    assert "project_important.md" in kept or not kept  # importance 0.9 is the most valuable
    ranked = sorted(full.entries, key=value_key)
    assert [m.path for m in ranked if m.path in kept] == [m.path for m in ranked[: len(kept)]]


def test_a_long_body_does_not_stop_a_shorter_one(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_long.md", body="L" * 2000, importance=1.0)
    make_memory("user_short.md", body="Short one.", importance=0.95)
    base = render_context(_folder(folder), budget=None)
    budget = base.bytes - 1500
    context = render_context(_folder(folder), budget=budget)
    assert [b.memory.path for b in context.loaded] == ["user_short.md"]
    assert [(x.memory.path, x.part) for x in context.left_out] == [("user_long.md", "body")]
    assert "left out to fit the" in context.text and "the full text of 1 memory" in context.text


def test_budget_too_small_for_the_hand_written_text(mixed: Path) -> None:
    with pytest.raises(ContextBudgetTooSmall, match="hand-written text"):
        render_context(_folder(mixed), budget=20)
    result = invoke_memdir("--dir", str(mixed), "context", "--budget", "20")
    assert result.exit_code == 2
    assert "raise the budget" in result.stderr and "Traceback" not in result.output


def test_budget_comes_from_the_config_when_not_given(mixed: Path) -> None:
    config = Config(context=ContextSettings(budget=300))
    context = render_context(_folder(mixed, config=config))
    assert context.budget == 300 and context.bytes <= 300
    assert render_context(_folder(mixed, config=config), budget=100_000).budget == 100_000


def test_index_caps_are_reported_and_counted(folder: Path, make_memory: MakeMemory) -> None:
    for i in range(5):
        make_memory(f"user_m{i}.md", importance=0.1 * (i + 1))
    context = render_context(_folder(folder, caps=Caps(max_lines=3)), ContextFormat.XML)
    capped = [x for x in context.left_out if x.cause == "index"]
    assert len(capped) == 3 and all(x.part == "entry" for x in capped)
    assert '<left-out entries="3" bodies="0">' in context.text


def test_no_index_gives_only_the_bodies(mixed: Path) -> None:
    for fmt in FORMATS:
        context = render_context(_folder(mixed), fmt, include_index=False)
        assert context.entries == []
        assert "Hand-written" not in context.text and "Plain" not in context.text
        assert "Pinned body." in context.text and "Important body." in context.text
    assert render_context(_folder(mixed), include_index=False).text.startswith("# Memories loaded in full\n")


def test_recalled_memories_follow_the_pinned_ones(mixed: Path) -> None:
    folder = _folder(mixed)
    memories = {m.path: m for m in folder.list()}
    recalled = [memories[p] for p in ("user_plain.md", "feedback_pinned.md", "project_superseded.md")]
    context = render_context(folder, ContextFormat.JSON, recalled=recalled)
    assert [(b.memory.path, b.reason) for b in context.loaded] == [
        ("project_important.md", "pinned"),
        ("feedback_pinned.md", "pinned"),
        ("user_plain.md", "recalled"),
    ]
    assert [(x.memory.path, x.cause, x.reason) for x in context.left_out] == [
        ("project_superseded.md", "excluded", "superseded")
    ]
    data = json.loads(context.text)
    assert data["left_out"] == {"entries": 0, "bodies": 0, "budget": None}  # refusing is not leaving out
    plain = next(e for e in data["entries"] if e["path"] == "user_plain.md")
    assert plain["loaded"] == "recalled" and plain["body"] == "Plain body."


def test_json_schema(mixed: Path) -> None:
    data = json.loads(render_context(_folder(mixed), ContextFormat.JSON, budget=900).text)
    assert set(data) == {"folder", "notes", "entries", "left_out", "missing"} and data["missing"] == []
    assert data["notes"] == "# Memory\n\nHand-written: ask before pushing."
    assert set(data["left_out"]) == {"entries", "bodies", "budget"} and data["left_out"]["budget"] == 900
    for entry in data["entries"]:
        assert {"name", "type", "path", "description", "loaded"} <= set(entry)
        assert ("body" in entry) == (entry["loaded"] is not None)


DEAD = "- [release-freeze](project_release-freeze.md) — Release freeze starts next Thursday"


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_entry_whose_file_is_gone_is_left_out_and_named(folder: Path, make_memory: MakeMemory,
                                                           fmt: ContextFormat) -> None:  # fmt: skip
    """The index keeps a dead entry (lint I002 names it); the context must not send the agent to a
    file that does not exist, with its stale "next Thursday": it leaves it out and says which."""
    make_memory("user_role.md", description="Backend developer")
    (folder / "MEMORY.md").write_text("# Memory\n\n" + DEAD + "\n")
    context = render_context(_folder(folder), fmt)
    assert context.missing == ["project_release-freeze.md"]
    assert "next Thursday" not in context.text and "Backend developer" in context.text
    said = "1 entry of MEMORY.md left out here because its file no longer exists (project_release-freeze.md)"
    if fmt is ContextFormat.JSON:
        data = json.loads(context.text)
        assert data["missing"] == ["project_release-freeze.md"] and "release-freeze" not in data["notes"]
    elif fmt is ContextFormat.XML:
        root = ET.fromstring(context.text)
        missing = root.find("missing")
        assert missing is not None and missing.get("entries") == "1" and said in (missing.text or "")
        assert "release-freeze" not in (root.findtext("notes") or "")
    else:
        assert f"<!-- memdir: {said}; `memdir index --drop-missing` removes them -->\n" in context.text
    assert DEAD in (folder / "MEMORY.md").read_text()  # the context writes nothing


def test_cli_context_names_the_entries_whose_file_is_gone(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_role.md", description="Backend developer")
    (folder / "MEMORY.md").write_text("# Memory\n\n" + DEAD + "\n")
    result = invoke_memdir("--dir", str(folder), "context")
    assert result.exit_code == 0 and "next Thursday" not in result.stdout
    assert "left out, their files gone: project_release-freeze.md (`memdir index --drop-missing`" in result.stderr


HOSTILE = "a\"b'c<d>&e]]>f\x01g\x1bh\ttab"


def test_xml_escapes_hostile_names_and_bodies(folder: Path) -> None:
    name = HOSTILE
    description = 'desc "quoted" <tag> & ]]> \x02 done'
    body = 'Body with ]]> and <script>alert("x")</script> &amp; \x07 \x0b \ufffe\r\nnext line\rlone CR\n'
    front = {"name": name, "description": description, "type": "user", "pin": True}
    text = "---\n" + "".join(f"{k}: {json.dumps(v)}\n" for k, v in front.items()) + "---\n" + body
    (folder / "user_hostile&<x>.md").write_text(text, encoding="utf-8", newline="")
    (folder / "MEMORY.md").write_text("# Notes & <things> ]]> \x03\n")
    context = render_context(_folder(folder), ContextFormat.XML)
    assert "]]>" not in context.text
    root = ET.fromstring(context.text)  # well-formed, whatever the memory holds
    assert root.tag == "memory"
    entry = root.find("entry")
    assert entry is not None
    forbidden = str.maketrans({c: "\ufffd" for c in "\x01\x02\x03\x07\x0b\x1b\ufffe"})
    assert entry.get("key") == " ".join(name.split()).translate(forbidden)  # a name is one line
    assert entry.get("type") == "user"
    assert entry.get("path") == "user_hostile&<x>.md"
    assert entry.get("loaded") == "pinned"
    assert entry.findtext("description") == " ".join(description.split()).translate(forbidden)
    assert entry.findtext("value") == body.replace("\r\n", "\n").strip("\n").translate(forbidden)
    notes = root.findtext("notes")
    assert notes is not None and notes.startswith("# Notes & <things> ]]> \\x03")  # escaped as MEMORY.md is read


def test_markdown_and_json_carry_hostile_text(folder: Path) -> None:
    front = {"name": HOSTILE, "description": "d", "type": "user", "pin": True}
    text = "---\n" + "".join(f"{k}: {json.dumps(v)}\n" for k, v in front.items()) + "---\nB ]]> <x> \x01\n"
    (folder / "user_h.md").write_text(text)
    data = json.loads(render_context(_folder(folder), ContextFormat.JSON).text)
    # Carried as text, control characters escaped (memdir.text.outward): the context reaches the agent.
    name = " ".join(HOSTILE.split()).replace("\x01", "\\x01").replace("\x1b", "\\x1b")
    assert data["entries"][0]["name"] == name and data["entries"][0]["body"] == "B ]]> <x> \\x01"
    # In markdown, a `<` that starts a tag is written `&lt;`: the text cannot end its block (outward.inert_tags).
    assert "B ]]> &lt;x> \\x01" in render_context(_folder(folder)).text


def test_empty_folder(folder: Path) -> None:
    assert render_context(_folder(folder)).text == ""
    assert ET.fromstring(render_context(_folder(folder), ContextFormat.XML).text).tag == "memory"
    assert json.loads(render_context(_folder(folder), ContextFormat.JSON).text)["entries"] == []


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("記憶") == 2


# --- the command ------------------------------------------------------------------------------


def test_cli_prints_the_context_and_reports_size_on_stderr(mixed: Path) -> None:
    result = invoke_memdir("--dir", str(mixed), "context")
    assert result.exit_code == 0, result.output
    assert result.stdout == render_context(_folder(mixed)).text
    size = len(result.stdout.encode("utf-8"))
    assert f"{size:,} bytes, about {estimate_tokens(result.stdout):,} tokens" in result.stderr


def test_cli_counts_one_memory_in_the_singular(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_role.md", pin="true")
    assert invoke_memdir("--dir", str(folder), "index").exit_code == 0
    result = invoke_memdir("--dir", str(folder), "context")
    assert result.exit_code == 0, result.output
    assert "(1 index entry, 1 memory in full)" in result.stderr


def test_cli_formats_budget_and_no_index(mixed: Path) -> None:
    result = invoke_memdir("--dir", str(mixed), "context", "--format", "xml", "--budget", "700")
    assert result.exit_code == 0, result.output
    assert len(result.stdout.encode("utf-8")) <= 700
    ET.fromstring(result.stdout)
    assert "left out to fit the 700-byte budget" in result.stderr
    result = invoke_memdir("--dir", str(mixed), "context", "-f", "json", "--no-index")
    assert result.exit_code == 0 and json.loads(result.stdout)["notes"] == ""
    quiet = invoke_memdir("--dir", str(mixed), "-q", "context", "--budget", "700")
    assert quiet.exit_code == 0 and quiet.stderr == ""


@pytest.mark.parametrize("args", [["--budget", "0"], ["--format", "yaml"]])
def test_cli_usage_errors(mixed: Path, args: list[str]) -> None:
    result = invoke_memdir("--dir", str(mixed), "context", *args)
    assert result.exit_code == 2


def test_cli_missing_folder(tmp_path: Path) -> None:
    result = invoke_memdir("--dir", str(tmp_path / "nope"), "context")
    assert result.exit_code == 2 and "does not exist" in result.stderr


# --- recalled memories: `render_context(recalled=...)` and `memdir context --for TASK` ------------


@pytest.mark.parametrize(
    ("updated", "note"),
    [
        ("2026-11-22", "This memory is from today."),
        ("2026-11-21", "This memory is from yesterday."),
        ("2026-11-20", "This memory is 2 days old; verify before asserting it as fact."),
        ("2025-11-22", "This memory is 365 days old; verify before asserting it as fact."),
    ],
)
def test_age_note_says_how_old_a_memory_is(folder: Path, make_memory: MakeMemory, updated: str, note: str) -> None:
    from memdir.read.context import age_note

    make_memory("project_x.md", updated=updated)
    scan = _folder(folder).scan()
    (memory,) = scan.memories
    assert age_note(scan.ages.of(memory), TODAY) == note


def test_age_note_of_a_memory_with_no_age() -> None:
    from memdir.core.age import NO_AGE
    from memdir.read.context import age_note

    assert age_note(NO_AGE, TODAY) == "This memory is undated; verify before asserting it as fact."


def test_an_undated_recalled_memory_is_as_old_as_its_file(folder: Path, make_memory: MakeMemory) -> None:
    """Claude Code writes no dates: its memory's age is its file's, not "undated"."""
    path = make_memory("project_x.md", body="Claude Code wrote this.\n")
    noon = time.mktime((2026, 10, 23, 12, 0, 0, 0, 0, -1))
    os.utime(path, (noon, noon))
    root = _folder(folder)
    context = render_context(root, recalled=root.scan().memories)
    assert context.loaded[0].age_note == "This memory is 30 days old; verify before asserting it as fact."


@pytest.fixture
def tasks(folder: Path, make_memory: MakeMemory) -> Path:
    make_memory("feedback_pinned.md", body="Pinned body.", pin="true")
    make_memory("feedback_friday.md", description="No production deploys on Fridays", updated="2026-10-23",
                body="Don't deploy to production on a Friday.\n")  # fmt: skip
    make_memory("reference_grafana.md", description="Cluster monitoring is at grafana.example.com",
                updated="2026-11-21", body="Grafana dashboards.\n")  # fmt: skip
    return folder


@pytest.mark.parametrize("fmt", FORMATS)
def test_recalled_bodies_follow_the_pinned_ones_with_their_age(tasks: Path, fmt: ContextFormat) -> None:
    root = _folder(tasks)
    recalled = [m for m in root.scan().memories if m.path == "feedback_friday.md"]
    context = render_context(root, fmt, recalled=recalled)
    assert [(b.memory.path, b.reason) for b in context.loaded] == [
        ("feedback_pinned.md", "pinned"),
        ("feedback_friday.md", "recalled"),
    ]
    note = "This memory is 30 days old; verify before asserting it as fact."
    assert context.loaded[1].age_note == note and context.loaded[0].age_note is None
    if fmt is ContextFormat.JSON:
        entries = {e["path"]: e for e in json.loads(context.text)["entries"]}
        assert entries["feedback_friday.md"]["age"] == note and "age" not in entries["feedback_pinned.md"]
    elif fmt is ContextFormat.XML:
        entry = ET.fromstring(context.text).find("entry[@path='feedback_friday.md']")
        assert entry is not None and entry.findtext("age") == note
        assert entry.findtext("value") == "Don't deploy to production on a Friday."
    else:
        assert context.text.index("Pinned body.") < context.text.index(note) < context.text.index("Don't deploy")
        assert context.text.count("verify before asserting") == 1


def test_a_recalled_body_that_does_not_fit_is_left_out_whole(tasks: Path) -> None:
    root = _folder(tasks)
    recalled = [m for m in root.scan().memories if m.path == "feedback_friday.md"]
    full = render_context(root, recalled=recalled)
    tight = render_context(root, budget=full.bytes - 1, recalled=recalled)
    assert [b.memory.path for b in tight.loaded] == ["feedback_pinned.md"]
    assert "Don't deploy" not in tight.text and "30 days old" not in tight.text
    assert tight.bytes <= full.bytes - 1
    assert [(x.memory.path, x.part, x.cause) for x in tight.left_out] == [("feedback_friday.md", "body", "budget")]


def test_cli_context_for_a_task_adds_the_recalled_memories(tasks: Path) -> None:
    result = invoke_memdir("--dir", str(tasks), "context", "--for", "ship the fix to production on Friday")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "## friday\n\nfeedback · recalled · feedback_friday.md\n\n_This memory is 30 days old; verify" in text
    assert "Grafana dashboards." not in text  # not relevant: not loaded
    assert "1 of them recalled for the task" in result.stderr
    from memdir.read.recall_log import read_log

    assert read_log(tasks)[-1]["chosen"] == ["feedback_friday.md"]


def test_a_pinned_memory_never_takes_a_recall_slot(tasks: Path, make_memory: MakeMemory) -> None:
    # The pinned memory is in the context already; recalled first, it used the one slot of -k 1.
    make_memory("feedback_pinned.md", description="No production deploys before the Friday review",
                body="Pinned body.", pin="true")  # fmt: skip
    result = invoke_memdir("--dir", str(tasks), "context", "--for", "ship the fix to production on Friday", "-k", "1")
    assert result.exit_code == 0, result.output
    assert "Pinned body." in result.stdout and "Don't deploy to production on a Friday." in result.stdout
    assert "1 of them recalled for the task" in result.stderr
    from memdir.read.recall_log import read_log

    logged = read_log(tasks)[-1]
    assert logged["chosen"] == ["feedback_friday.md"]
    pinned = next(c for c in logged["candidates"] if c["path"] == "feedback_pinned.md")
    assert pinned["why_not"] == "already in the context: pinned"


def test_cli_context_for_an_unrelated_task_adds_nothing(tasks: Path) -> None:
    plain = invoke_memdir("--dir", str(tasks), "context")
    result = invoke_memdir("--dir", str(tasks), "context", "--for", "Explain the difference between TCP and UDP")
    assert result.exit_code == 0 and result.stdout == plain.stdout
    assert "recall: nothing relevant to the task" in result.stderr


def test_cli_context_for_keeps_to_k_and_the_budget(tasks: Path) -> None:
    task = "grafana cluster monitoring, then deploy to production on friday"
    both = invoke_memdir("--dir", str(tasks), "context", "--for", task, "--format", "json")
    loaded = [e["path"] for e in json.loads(both.stdout)["entries"] if e["loaded"] == "recalled"]
    assert sorted(loaded) == ["feedback_friday.md", "reference_grafana.md"]
    one = invoke_memdir("--dir", str(tasks), "context", "--for", task, "-k", "1", "--format", "json")
    assert len([e for e in json.loads(one.stdout)["entries"] if e["loaded"] == "recalled"]) == 1
    budget = len(both.stdout.encode()) - 20
    tight = invoke_memdir("--dir", str(tasks), "context", "--for", task, "--budget", str(budget), "--format", "json")
    assert tight.exit_code == 0 and len(tight.stdout.encode()) <= budget


def test_cli_k_without_a_task_is_a_usage_error(tasks: Path) -> None:
    result = invoke_memdir("--dir", str(tasks), "context", "-k", "2")
    assert result.exit_code == 2 and "-k only applies with --for" in result.output


def test_context_for_a_task_when_no_memory_has_a_body(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_deploy.md", body="", description="Deploys go out on Tuesdays")
    make_memory("project_other.md", body="", description="The other deploy runs nightly")
    result = invoke_memdir("--dir", str(folder), "context", "--for", "when do deploys go out")
    assert result.exit_code == 0 and "project_deploy.md" in result.stdout, result.output
