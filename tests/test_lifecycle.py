"""memdir.lifecycle.prune and memdir.lifecycle.consolidate: TTLs, prune, history and consolidation, through the
library and the CLI. `--llm` runs against recorded responses through the SDK's mock transport."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import TODAY, MakeMemory, invoke_memdir, recorded_client

from memdir.core.errors import MemoryNotFound
from memdir.core.model import parse_document
from memdir.core.store import log_decisions, read_decisions
from memdir.folder import MemoryDir
from memdir.lifecycle.consolidate import (
    ConsolidateBusy,
    ConsolidateError,
    consolidate,
    consolidate_lock,
    plan_consolidate,
)
from memdir.lifecycle.prune import InvalidTtl, expires_after, history, parse_ttl, plan_prune, prune


def _dir(root: Path, today: dt.date = TODAY) -> MemoryDir:
    return MemoryDir(root, today=today)


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the folder except tool state, byte for byte."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memdir" not in p.relative_to(root).parts
    }


def _without(text: str, *keys: str) -> str:
    """`text` with the frontmatter lines of `keys` removed."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(tuple(f"{k}:" for k in keys)))


# --- TTL -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ttl", "start", "expected"),
    [
        ("14d", TODAY, dt.date(2026, 12, 6)),
        ("1d", TODAY, dt.date(2026, 11, 23)),
        ("2w", TODAY, dt.date(2026, 12, 6)),
        ("3 weeks", TODAY, dt.date(2026, 12, 13)),
        ("1m", dt.date(2026, 1, 31), dt.date(2026, 2, 28)),  # the day of the month is kept where it can be
        ("6M", TODAY, dt.date(2027, 5, 22)),
        ("2 months", dt.date(2026, 12, 15), dt.date(2027, 2, 15)),
        ("1y", dt.date(2024, 2, 29), dt.date(2025, 2, 28)),
        (" 10 years ", TODAY, dt.date(2036, 11, 22)),
    ],
)
def test_ttl_becomes_an_absolute_date(ttl: str, start: dt.date, expected: dt.date) -> None:
    assert expires_after(ttl, start) == expected


@pytest.mark.parametrize("ttl", ["", "14", "d", "14x", "14 fortnights", "0d", "-1d", "1.5d", "500y", "14d2w"])
def test_bad_ttls_are_refused_with_the_value_named(ttl: str) -> None:
    with pytest.raises(InvalidTtl) as caught:
        parse_ttl(ttl)
    assert "--ttl" in str(caught.value)


def _add_freeze(folder: Path, *extra: str) -> Any:
    return invoke_memdir("--dir", str(folder), "add", "project", "freeze", "-d", "Code freeze", "--body", "F.", *extra)


def _expires(folder: Path) -> Any:
    return parse_document((folder / "project_freeze.md").read_text()).data["expires"]


def test_add_with_ttl_writes_expires(folder: Path) -> None:
    result = _add_freeze(folder, "--ttl", "14d")
    assert result.exit_code == 0, result.output
    assert _expires(folder) == dt.date(2026, 12, 6)


def test_add_ttl_counts_from_today_option(folder: Path) -> None:
    result = _add_freeze(folder, "--ttl", "1w", "--today", "2026-11-01")
    assert result.exit_code == 0, result.output
    assert _expires(folder) == dt.date(2026, 11, 8)


@pytest.mark.parametrize(
    "extra",
    [
        ["--ttl", "14q"],
        ["--ttl", "14d", "--expires", "2026-12-01"],
        ["--ttl", "1d", "--today", "9999-12-31"],  # past the last day a date can name
        ["--ttl", "1m", "--today", "9999-12-01"],
    ],
)
def test_add_with_a_bad_ttl_is_a_usage_error(folder: Path, extra: list[str]) -> None:
    result = _add_freeze(folder, *extra)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert not (folder / "project_freeze.md").exists()


# --- prune -----------------------------------------------------------------------------------------


@pytest.fixture
def lifecycle_folder(folder: Path, make_memory: MakeMemory) -> Path:
    make_memory(
        "project_freeze.md",
        description="Code freeze for the 2.3 release",
        created="2026-11-01",
        expires="2026-11-20",
        body="No merges to main during the freeze.\n",
    )
    make_memory(
        "project_offsite.md",
        description="Team offsite in Lisbon",
        created="2026-11-01",
        expires="2026-12-01",
        body="Book travel.\n",
    )
    make_memory(
        "feedback_old-rule.md",
        description="Deploys need a ticket",
        created="2026-10-01",
        status="superseded",
        superseded_by="feedback_new-rule.md",
        body="Open a ticket first.\n",
    )
    make_memory(
        "feedback_new-rule.md",
        description="Deploys need a ticket and a review",
        created="2026-11-10",
        supersedes="feedback_old-rule.md",
        body="Open a ticket and get a review.\n",
    )
    make_memory(
        "feedback_orphan.md",
        description="Old style guide",
        created="2026-09-01",
        superseded_by="feedback_gone.md",
        body="Tabs.\n",
    )
    make_memory(
        "team/feedback_quarantined.md",
        description="Run the script from the web page",
        status="quarantined",
        expires="2026-11-01",
        body="curl | sh\n",
    )
    # The index as it was when the freeze was still on: it lists the freeze.
    _dir(folder, dt.date(2026, 11, 5)).write_index()
    return folder


def test_prune_dry_run_changes_nothing(lifecycle_folder: Path) -> None:
    before = _snapshot(lifecycle_folder)
    result = prune(_dir(lifecycle_folder), dry_run=True)
    assert _snapshot(lifecycle_folder) == before
    assert not (lifecycle_folder / ".archive").exists()
    assert [(i.path, i.kind) for i in result.moved] == [
        ("feedback_old-rule.md", "superseded"),
        ("project_freeze.md", "expired"),
    ]
    assert [(k.path, k.why) for k in result.kept] == [
        ("feedback_orphan.md", "its successor feedback_gone.md is not in the folder")
    ]


def test_prune_moves_records_the_reason_and_loses_no_text(lifecycle_folder: Path) -> None:
    root = lifecycle_folder
    before = _snapshot(root)
    assert "project_freeze.md" in before["MEMORY.md"].decode()
    result = prune(_dir(root))

    assert sorted(i.destination for i in result.moved) == [
        ".archive/feedback_old-rule.md",
        ".archive/project_freeze.md",
    ]
    after = _snapshot(root)
    for path in ("feedback_old-rule.md", "project_freeze.md"):
        assert path not in after
        archived = after[f".archive/{path}"].decode()
        # The archived file is the original plus two fields, every other byte as it was.
        assert _without(archived, "archived", "archived_reason") == before[path].decode()
        assert parse_document(archived).data["archived"] == TODAY
    freeze = parse_document(after[".archive/project_freeze.md"].decode()).data
    assert freeze["archived_reason"] == "expired 2026-11-20"
    old = parse_document(after[".archive/feedback_old-rule.md"].decode()).data
    assert old["archived_reason"] == "superseded by feedback_new-rule.md"
    # Nothing else moved; the index no longer lists the freeze and is what `memdir index` would write.
    assert {p for p in before if p != "MEMORY.md"} - {"feedback_old-rule.md", "project_freeze.md"} == {
        p for p in after if p != "MEMORY.md" and not p.startswith(".archive/")
    }
    assert "project_freeze.md" not in after["MEMORY.md"].decode()
    assert result.index is not None and not _dir(root).write_index(dry_run=True).changed
    logged = [e for e in read_decisions(root) if e.get("command") == "prune"]
    assert [(e["file"], e["reason"], e["to"]) for e in logged] == [
        ("feedback_old-rule.md", "superseded", ".archive/feedback_old-rule.md"),
        ("project_freeze.md", "expired", ".archive/project_freeze.md"),
    ]
    assert plan_prune(_dir(root)) == ([], result.kept)  # a second run has nothing to do


def test_prune_never_overwrites_an_archived_file(lifecycle_folder: Path) -> None:
    (lifecycle_folder / ".archive").mkdir()
    (lifecycle_folder / ".archive" / "project_freeze.md").write_text("an older freeze\n")
    result = prune(_dir(lifecycle_folder))
    assert ".archive/project_freeze-2.md" in [i.destination for i in result.moved]
    assert (lifecycle_folder / ".archive" / "project_freeze.md").read_text() == "an older freeze\n"


def test_cli_prune_json_and_text(lifecycle_folder: Path) -> None:
    dry = invoke_memdir("--dir", str(lifecycle_folder), "prune", "--dry-run", "--format", "json")
    assert dry.exit_code == 0, dry.output
    payload = json.loads(dry.stdout)
    assert payload["dry_run"] is True and payload["index"] is None
    assert [a["path"] for a in payload["archived"]] == ["feedback_old-rule.md", "project_freeze.md"]
    assert set(payload["archived"][0]) == {"path", "reason", "detail", "to", "superseded_by"}
    assert not (lifecycle_folder / ".archive").exists()
    done = invoke_memdir("--dir", str(lifecycle_folder), "prune")
    assert done.exit_code == 0, done.output
    assert "archived project_freeze.md -> .archive/project_freeze.md (expired 2026-11-20)" in done.stdout
    assert "kept feedback_orphan.md" in done.stderr


def test_cli_prune_with_nothing_to_move_does_not_deny_the_kept_memory(lifecycle_folder: Path) -> None:
    assert invoke_memdir("--dir", str(lifecycle_folder), "prune").exit_code == 0
    again = invoke_memdir("--dir", str(lifecycle_folder), "prune")
    assert again.exit_code == 0, again.output
    # feedback_orphan.md is superseded and still here: the message must not say no memory is.
    assert again.stderr.splitlines() == [
        "kept feedback_orphan.md: its successor feedback_gone.md is not in the folder",
        "Nothing to move into .archive/: the superseded memory above is kept.",
    ]


def test_cli_prune_missing_folder_is_one_line(tmp_path: Path) -> None:
    result = invoke_memdir("--dir", str(tmp_path / "nowhere"), "prune")
    assert result.exit_code == 2
    assert "does not exist" in result.stderr and result.stderr.count("\n") == 1


# --- history ---------------------------------------------------------------------------------------


def test_history_follows_the_chain_the_log_and_the_archive(lifecycle_folder: Path) -> None:
    root = lifecycle_folder
    log_decisions(
        root,
        [{"command": "add", "decision": "stored", "name": "old-rule", "file": "feedback_old-rule.md"}],
        now=dt.datetime(2026, 10, 1, 9, 0, tzinfo=dt.UTC),
    )
    prune(_dir(root))
    old = history(_dir(root), "old-rule")
    assert old.path == ".archive/feedback_old-rule.md" and old.state == "archived"
    assert old.superseded_by == ["feedback_new-rule.md"]
    whats = [e.what for e in old.events]
    assert whats[0] == "created" and old.events[0].when == "2026-10-01"
    assert {"stored", "superseded", "archived"} <= set(whats)
    archived = [e for e in old.events if e.what == "archived" and e.source == "archive"]
    assert archived[0].detail.startswith("superseded by feedback_new-rule.md")

    new = history(_dir(root), "feedback_new-rule.md")
    assert new.state == "active" and new.supersedes == ["feedback_old-rule.md"]
    assert any(e.what == "supersedes" and "feedback_old-rule.md" in e.detail for e in new.events)


def test_history_by_archive_path_is_the_archived_memory(lifecycle_folder: Path) -> None:
    prune(_dir(lifecycle_folder))
    by_name = history(_dir(lifecycle_folder), "old-rule")
    for query in (by_name.path, f"./{by_name.path}"):
        assert query is not None
        by_path = history(_dir(lifecycle_folder), query)
        assert dataclasses.replace(by_path, query="old-rule") == by_name
    shown = invoke_memdir("--dir", str(lifecycle_folder), "history", ".archive/feedback_old-rule.md")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[0] == "old-rule (.archive/feedback_old-rule.md): archived"


def test_history_keeps_apart_memories_that_reused_a_file_name(folder: Path) -> None:
    def add_freeze(release: str, today: str) -> None:
        text = ["-d", f"Code freeze for {release}", "--body", f"No merges before {release}.", "--why", "Stability."]
        added = invoke_memdir("--dir", str(folder), "add", "project", "release-freeze", *text,
                              "--how", "Until it ships.", "--ttl", "1w", "--today", today)  # fmt: skip
        assert added.exit_code == 0, added.output

    add_freeze("2.3", "2026-11-01")
    prune(_dir(folder))
    add_freeze("2.4", "2026-11-10")  # the same file name, free again
    prune(_dir(folder))
    add_freeze("2.5", "2026-11-20")  # and a third, still live

    def logged(query: str) -> list[tuple[str, str]]:
        return [(e.what, e.detail) for e in history(_dir(folder), query).events if e.source == "log"]

    second = ".archive/project_release-freeze-2.md"
    assert logged("project_release-freeze-2.md") == [
        ("stored", "by `memdir add`"),
        ("archived", f"by `memdir prune`; to {second}; expired 2026-11-17"),
    ]
    live = history(_dir(folder), "project_release-freeze.md")
    assert live.path == "project_release-freeze.md" and live.state == "active"
    assert logged("project_release-freeze.md") == [("stored", "by `memdir add`")]
    first = ".archive/project_release-freeze.md"  # the live file now has the name: the archive path finds it
    assert logged(first) == [
        ("stored", "by `memdir add`"),
        ("archived", f"by `memdir prune`; to {first}; expired 2026-11-08"),
    ]


def test_history_of_a_memory_restored_from_the_archive_by_hand(folder: Path) -> None:
    # docs/lifecycle.md: to bring a memory back, move it out of .archive/. Its move is in the log, but
    # the file it went to is gone, so the move ended nothing: the memory keeps its whole history.
    added = invoke_memdir("--dir", str(folder), "add", "project", "release-freeze", "-d", "Code freeze for 2.3",
                          "--body", "No merges.", "--why", "Stability.", "--how", "Until it ships.", "--ttl", "1w",
                          "--today", "2026-11-01")  # fmt: skip
    assert added.exit_code == 0, added.output
    prune(_dir(folder))
    (folder / ".archive" / "project_release-freeze.md").rename(folder / "project_release-freeze.md")
    events = [(e.what, e.source) for e in history(_dir(folder), "release-freeze").events]
    assert ("stored", "log") in events and ("archived", "log") in events


def test_rm_logs_its_move_so_history_keeps_reused_names_apart(folder: Path, make_memory: MakeMemory) -> None:
    for version in ("2.3", "2.4"):
        make_memory("project_freeze.md", description=f"Freeze for {version}")
        log_decisions(folder, [{"command": "add", "decision": "stored", "file": "project_freeze.md", "v": version}])
        removed = invoke_memdir("--dir", str(folder), "rm", "project_freeze.md")
        assert removed.exit_code == 0, removed.output
    moves = [(e["command"], e["file"], e["to"]) for e in read_decisions(folder) if "to" in e]
    assert moves == [("rm", "project_freeze.md", ".archive/project_freeze.md"),
                     ("rm", "project_freeze.md", ".archive/project_freeze-2.md")]  # fmt: skip
    first = [e for e in history(_dir(folder), ".archive/project_freeze.md").events if e.source == "log"]
    assert [e.what for e in first] == ["stored", "archived"] and "to .archive/project_freeze.md" in first[1].detail


def test_history_of_a_file_written_after_the_last_logged_move(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_freeze.md", created="2026-11-01", expires="2026-11-08")
    log_decisions(folder, [{"command": "add", "decision": "stored", "name": "freeze", "file": "project_freeze.md"}])
    prune(_dir(folder))  # the move is the log's last line
    make_memory("project_freeze.md", created="2026-11-21", body="Another freeze.")  # written by hand: not logged
    assert [e.source for e in history(_dir(folder), "project_freeze.md").events] == ["frontmatter"]


def test_history_of_an_undated_memory_says_when_its_file_last_changed(folder: Path, make_memory: MakeMemory) -> None:
    """Claude Code writes no dates: the history gives the file's own age, and says what it rests on."""
    path = make_memory("project_freeze.md")
    noon = time.mktime((2026, 9, 14, 12, 0, 0, 0, 0, -1))
    os.utime(path, (noon, noon))
    events = history(_dir(folder), "project_freeze.md").events
    assert [(e.when, e.what, e.detail, e.source) for e in events] == [
        ("2026-09-14", "changed", "last changed: its modification time", "mtime")
    ]


def test_history_of_a_name_only_the_log_knows(folder: Path) -> None:
    log_decisions(
        folder,
        [
            {
                "command": "extract",
                "decision": "skipped-duplicate",
                "name": "tabs-not-spaces",
                "file": None,
                "duplicate_of": "feedback_tabs.md",
                "reasons": ["says the same"],
            }
        ],
    )
    found = history(_dir(folder), "tabs-not-spaces")
    assert found.state == "not stored" and found.path is None
    assert [e.what for e in found.events] == ["skipped-duplicate"]
    assert "duplicate of feedback_tabs.md" in found.events[0].detail


def test_history_reads_a_damaged_log(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_tabs.md", description="Tabs, not spaces", created="2026-11-01")
    log = folder / ".memdir" / "log.jsonl"
    log.parent.mkdir(exist_ok=True)
    log.write_bytes(
        b'{"at": "2026-11-02T10:00:00+00:00", "decision": "stored", "file": "feedback_tabs.md"}\n'
        b'{"torn": \n[1, 2]\n"a string"\n\xff\xfe not utf-8\n'
        b'{"decision": 7, "file": ["feedback_tabs.md", 3], "reasons": "not a list", "at": null}\n'
    )
    found = history(_dir(folder), "tabs")
    assert [e.what for e in found.events] == ["created", "stored", "logged"]


def test_history_unknown_and_ambiguous_names(folder: Path, make_memory: MakeMemory) -> None:
    with pytest.raises(MemoryNotFound, match="no memory matches 'nope'"):
        history(_dir(folder), "nope")
    make_memory("feedback_tabs.md", name="tabs")
    make_memory("team/feedback_tabs.md", name="tabs")
    with pytest.raises(MemoryNotFound, match="matches 2 memories"):
        history(_dir(folder), "tabs")
    result = invoke_memdir("--dir", str(folder), "history", "nope")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_cli_history_json(lifecycle_folder: Path) -> None:
    result = invoke_memdir("--dir", str(lifecycle_folder), "history", "old-rule", "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) == {"name", "path", "state", "superseded_by", "supersedes", "events"}
    assert payload["state"] == "superseded" and payload["superseded_by"] == ["feedback_new-rule.md"]
    assert set(payload["events"][0]) == {"when", "what", "detail", "source"}


# --- consolidate -----------------------------------------------------------------------------------


@pytest.fixture
def duplicates(folder: Path, make_memory: MakeMemory) -> Path:
    make_memory(
        "feedback_lint-before-commit.md",
        description="Run npm run lint before every commit",
        created="2026-11-01",
        body="Run npm run lint before every commit.\n\n**Why:** CI was red for a day.\n"
        "\n**How to apply:** Before any git commit in this repository.\n",
    )
    make_memory(
        "feedback_lint-first.md",
        description="Always run npm run lint before committing",
        created="2026-11-05",
        body="Always lint with npm run lint before you commit.\n\n**Why:** CI broke.\n",
    )
    # The same claim twice, but one gives a date the other does not: never merged.
    make_memory(
        "feedback_format-on-save.md",
        description="Run the formatter with ruff format on save",
        created="2026-11-01",
        body="Run ruff format on save.\n\n**Why:** review noise.\n",
    )
    make_memory(
        "feedback_ruff-format.md",
        description="Always run the formatter ruff format on save",
        created="2026-11-02",
        body="Run ruff format on save, since 2026-11-02.\n\n**Why:** review noise.\n",
    )
    # Same topic, different numbers: a contradiction, not a duplicate.
    make_memory(
        "project_acme-terms.md",
        description="Invoices to Acme are paid Net 30",
        created="2026-11-01",
        body="Acme pays invoices Net 30.\n",
    )
    make_memory(
        "project_acme-invoices.md",
        description="Acme invoices are paid Net 45",
        created="2026-11-03",
        body="Invoices for Acme are paid Net 45.\n",
    )
    _dir(folder).write_index()
    return folder


def test_consolidate_dry_run_changes_nothing(duplicates: Path) -> None:
    before = _snapshot(duplicates)
    result = consolidate(_dir(duplicates))
    assert _snapshot(duplicates) == before and not result.applied
    proposed = result.plan.proposed
    assert [(c.members, c.keeper) for c in proposed] == [
        (["feedback_lint-before-commit.md", "feedback_lint-first.md"], "feedback_lint-before-commit.md")
    ]
    diff = result.plan.diff()
    assert "+++ b/feedback_lint-first.md" in diff and "+superseded_by: feedback_lint-before-commit.md" in diff


def test_consolidate_never_merges_differing_numbers_or_dates(duplicates: Path) -> None:
    plan = plan_consolidate(_dir(duplicates))
    refused = [c for c in plan.clusters if c.refused]
    assert [c.members for c in refused] == [["feedback_format-on-save.md", "feedback_ruff-format.md"]]
    assert "numbers or dates differ" in str(refused[0].refused) and "2026-11-02" in str(refused[0].refused)
    assert refused[0].changes == []
    merged = {path for c in plan.proposed for path in c.members}
    assert not merged & {"project_acme-terms.md", "project_acme-invoices.md", "feedback_ruff-format.md"}


def test_consolidate_apply_loses_no_text(duplicates: Path) -> None:
    before = _snapshot(duplicates)
    result = consolidate(_dir(duplicates), apply=True)
    assert result.applied
    after = _snapshot(duplicates)
    assert set(after) == set(before)  # no file removed, none added
    assert after["feedback_lint-before-commit.md"] == before["feedback_lint-before-commit.md"]
    old = after["feedback_lint-first.md"].decode()
    assert _without(old, "status", "superseded_by", "updated") == before["feedback_lint-first.md"].decode()
    fields = parse_document(old).data
    assert fields["status"] == "superseded" and fields["superseded_by"] == "feedback_lint-before-commit.md"
    index = after["MEMORY.md"].decode()
    assert "feedback_lint-first.md" not in index and "feedback_lint-before-commit.md" in index
    for path in ("project_acme-terms.md", "project_acme-invoices.md", "feedback_ruff-format.md"):
        assert after[path] == before[path]
    logged = [e for e in read_decisions(duplicates) if e.get("command") == "consolidate"]
    assert logged == [
        {
            "at": logged[0]["at"],
            "command": "consolidate",
            "decision": "superseded",
            "file": "feedback_lint-first.md",
            "superseded_by": "feedback_lint-before-commit.md",
        }
    ]
    # Then prune archives the superseded copy: still no text lost.
    prune(_dir(duplicates))
    assert (duplicates / ".archive" / "feedback_lint-first.md").is_file()


def test_consolidate_confirm_no_writes_nothing(duplicates: Path) -> None:
    before = _snapshot(duplicates)
    seen: list[int] = []
    result = consolidate(_dir(duplicates), apply=True, confirm=lambda plan: seen.append(len(plan.changes)) or False)
    assert seen == [1] and not result.applied and _snapshot(duplicates) == before


def test_two_consolidate_runs_never_overlap(duplicates: Path) -> None:
    before = _snapshot(duplicates)
    with consolidate_lock(duplicates):
        with pytest.raises(ConsolidateBusy, match="another `memdir consolidate` is running"):
            consolidate(_dir(duplicates), apply=True)
        result = invoke_memdir("--dir", str(duplicates), "consolidate", "--yes")
        assert result.exit_code == 1 and "another `memdir consolidate`" in result.stderr
    assert _snapshot(duplicates) == before
    assert consolidate(_dir(duplicates), apply=True).applied  # released: the next run goes ahead


def test_consolidate_confirm_runs_under_the_lock(duplicates: Path) -> None:
    def confirm(plan: Any) -> bool:
        with pytest.raises(ConsolidateBusy):
            consolidate(_dir(duplicates), apply=True)
        return False

    consolidate(_dir(duplicates), apply=True, confirm=confirm)


def test_cli_consolidate_applies_only_with_yes(duplicates: Path) -> None:
    before = _snapshot(duplicates)
    shown = invoke_memdir("--dir", str(duplicates), "consolidate")  # not a terminal, no --yes: nothing written
    assert shown.exit_code == 0, shown.output
    assert "+superseded_by: feedback_lint-before-commit.md" in shown.stdout and "pass --yes" in shown.stderr
    assert _snapshot(duplicates) == before
    dry = invoke_memdir("--dir", str(duplicates), "consolidate", "--dry-run", "--yes", "--format", "json")
    assert dry.exit_code == 0 and _snapshot(duplicates) == before
    payload = json.loads(dry.stdout)
    assert set(payload) == {"dry_run", "applied", "llm", "model", "clusters", "diff", "index"}
    assert payload["applied"] is False and len(payload["clusters"]) == 2
    applied = invoke_memdir("--dir", str(duplicates), "consolidate", "--yes", "--format", "json")
    assert applied.exit_code == 0, applied.output
    assert json.loads(applied.stdout)["applied"] is True
    assert parse_document((duplicates / "feedback_lint-first.md").read_text()).data["status"] == "superseded"


# --- consolidate --llm, against recorded responses --------------------------------------------------


def _merge_reply(name: str, description: str, body: str) -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "write_merged_memory",
                "input": {"name": name, "description": description, "body": body},
            }
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 512, "output_tokens": 80},
    }


@pytest.fixture
def lint_pair(folder: Path, make_memory: MakeMemory) -> Path:
    make_memory(
        "feedback_lint-before-commit.md",
        description="Run npm run lint before every commit",
        created="2026-11-01",
        importance=0.8,
        body="Run npm run lint before every commit.\n\n**Why:** CI was red for 2 days.\n",
    )
    make_memory(
        "feedback_lint-first.md",
        description="Always run npm run lint before committing",
        created="2026-11-05",
        body="Always lint with npm run lint before you commit; CI was red for 2 days.\n",
    )
    return folder


def test_llm_merge_writes_a_new_memory_that_supersedes_the_cluster(lint_pair: Path) -> None:
    sent: list[dict[str, Any]] = []
    body = (
        "Run `npm run lint` before every commit.\n\n**Why:** CI was red for 2 days.\n\n"
        "**How to apply:** Before git commit."
    )
    client = recorded_client(
        [(200, _merge_reply("lint-before-commit", "Run npm run lint before every commit", body))], sent
    )
    before = _snapshot(lint_pair)
    result = consolidate(_dir(lint_pair), apply=True, llm=True, client=client, model="claude-test")

    request = sent[0]
    assert request["model"] == "claude-test"
    assert request["tool_choice"] == {"type": "tool", "name": "write_merged_memory"}
    assert "Always lint with npm run lint" in request["messages"][0]["content"]
    cluster = result.plan.proposed[0]
    assert cluster.merged == "feedback_lint-before-commit-2.md"  # the name is taken by a member
    new = parse_document((lint_pair / cluster.merged).read_text())
    assert new.data["supersedes"] == ["feedback_lint-before-commit.md", "feedback_lint-first.md"]
    assert new.data["importance"] == 0.8 and "**How to apply:** Before git commit." in new.body
    for path in before:
        if path != "MEMORY.md":  # every member stays, now superseded by the merged memory
            text = (lint_pair / path).read_text()
            assert _without(text, "status", "superseded_by", "updated") == before[path].decode()
            assert parse_document(text).data["superseded_by"] == cluster.merged
    index = (lint_pair / "MEMORY.md").read_text()
    assert cluster.merged in index and "feedback_lint-first.md" not in index


def test_llm_merge_that_changes_a_number_is_refused(lint_pair: Path) -> None:
    reply = _merge_reply("lint", "Run npm run lint before every commit", "Lint first. **Why:** CI was red for 3 days.")
    before = _snapshot(lint_pair)
    result = consolidate(_dir(lint_pair), apply=True, llm=True, client=recorded_client([(200, reply)], []))
    assert not result.applied and _snapshot(lint_pair) == before
    assert "drops 2" in str(result.plan.clusters[0].refused) and "adds 3" in str(result.plan.clusters[0].refused)


def test_llm_errors_are_one_line(lint_pair: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(ConsolidateError, match=r"answered 529 \(Overloaded\) after the SDK.s retries"):
        plan_consolidate(_dir(lint_pair), llm=True, client=recorded_client([(529, error)], []))
    result = invoke_memdir("--dir", str(lint_pair), "consolidate", "--llm", "--dry-run")
    assert result.exit_code == 2 and "ANTHROPIC_API_KEY" in result.stderr and result.stderr.count("\n") == 1


def test_cli_llm_goes_through_the_sdk(lint_pair: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import anthropic

    sent: list[dict[str, Any]] = []
    body = "Run npm run lint before every commit; CI was red for 2 days."
    recorded = recorded_client([(200, _merge_reply("lint-rule", "Lint before every commit", body))], sent)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setattr(anthropic, "Anthropic", lambda **_: recorded)
    result = invoke_memdir("--dir", str(lint_pair), "consolidate", "--llm", "--yes", "--model", "claude-x")
    assert result.exit_code == 0, result.output
    assert sent[0]["model"] == "claude-x"
    assert (lint_pair / "feedback_lint-rule.md").is_file()


# --- every write under the folder lock ---------------------------------------------------------------


@pytest.mark.parametrize("module_name", ["memdir.lifecycle.prune", "memdir.lifecycle.consolidate"])
def test_writes_happen_under_the_folder_lock(
    module_name: str, lifecycle_folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib
    import importlib

    import memdir.folder

    module = importlib.import_module(module_name)
    real_lock, real_replace, real_link = memdir.folder.folder_lock, os.replace, os.link
    held: list[bool] = [False]
    writes: list[tuple[str, bool]] = []

    @contextlib.contextmanager
    def recording_lock(root: Path, *args: Any, **kwargs: Any) -> Any:
        with real_lock(root, *args, **kwargs):
            held[0] = True
            try:
                yield
            finally:
                held[0] = False

    def recording(real: Any) -> Any:
        def call(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            target = Path(dst)
            if target.is_relative_to(lifecycle_folder) and ".memdir" not in target.parts:  # not the log, say
                writes.append((target.name, held[0]))
            real(src, dst, *args, **kwargs)

        return call

    # Every file memdir writes lands with os.replace (atomic_write, a commit's staged text) or
    # os.link (a commit's new file): each must happen while the folder lock is held.
    for owner in {module, memdir.folder}:
        if hasattr(owner, "folder_lock"):
            monkeypatch.setattr(owner, "folder_lock", recording_lock)
    monkeypatch.setattr(os, "replace", recording(real_replace))
    monkeypatch.setattr(os, "link", recording(real_link))
    if module_name == "memdir.lifecycle.prune":
        prune(_dir(lifecycle_folder))
    else:
        make_memory("feedback_lint-a.md", description="Run npm run lint before every commit",
                    body="Run npm run lint before every commit.\n")  # fmt: skip
        make_memory("feedback_lint-b.md", description="Always run npm run lint before committing",
                    body="Always lint with npm run lint before you commit.\n")  # fmt: skip
        assert consolidate(_dir(lifecycle_folder), apply=True).applied
    assert writes and all(under for _, under in writes), writes


def test_prune_that_fails_halfway_keeps_what_it_did_consistent(
    lifecycle_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    import memdir.lifecycle.prune as lifecycle

    real_write, calls = lifecycle.atomic_write, []

    def disk_fills_up(path: Path, *args: Any, **kwargs: Any) -> None:
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real_write(path, *args, **kwargs)

    monkeypatch.setattr(lifecycle, "atomic_write", disk_fills_up)
    before = _snapshot(lifecycle_folder)
    result = prune(_dir(lifecycle_folder))
    assert result.error is not None and "No space left on device" in result.error
    after = _snapshot(lifecycle_folder)
    # The first move is complete and logged; the second memory is still where it was, whole.
    assert "feedback_old-rule.md" not in after and ".archive/feedback_old-rule.md" in after
    assert after["project_freeze.md"] == before["project_freeze.md"]
    assert not (lifecycle_folder / ".archive" / "project_freeze.md").exists()
    assert [e["file"] for e in read_decisions(lifecycle_folder) if e.get("command") == "prune"] == [
        "feedback_old-rule.md"
    ]
    assert not _dir(lifecycle_folder).write_index(dry_run=True).changed  # the index was rewritten for the first


def test_prune_counts_one_memory_in_the_singular(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_freeze.md", created="2026-11-01", expires="2026-11-08")
    result = invoke_memdir("--dir", str(folder), "prune", "--dry-run", env={"MEMDIR_TODAY": "2026-11-22"})
    assert "1 memory would be archived;" in result.stderr, result.output


def test_prune_keeps_a_supersede_chain_that_loops(folder: Path, make_memory: MakeMemory) -> None:
    # a -> b -> a, and c superseded by itself: no memory in either chain is current, so archiving
    # them would retire every copy of the fact.
    make_memory("feedback_a.md", status="superseded", superseded_by="feedback_b.md")
    make_memory("feedback_b.md", status="superseded", superseded_by="feedback_a.md")
    make_memory("feedback_c.md", status="superseded", superseded_by="feedback_c.md")
    make_memory("feedback_d.md", status="superseded", superseded_by="feedback_e.md")  # a chain that ends well
    make_memory("feedback_e.md")
    moved, kept = plan_prune(_dir(folder))
    assert [m.path for m in moved] == ["feedback_d.md"]
    assert {k.path: k.why for k in kept} == {
        "feedback_a.md": "its supersede chain loops (feedback_a.md -> feedback_b.md -> feedback_a.md): no memory "
        "in it is current; fix `superseded_by` by hand",
        "feedback_b.md": "its supersede chain loops (feedback_b.md -> feedback_a.md -> feedback_b.md): no memory "
        "in it is current; fix `superseded_by` by hand",
        "feedback_c.md": "its supersede chain loops (feedback_c.md -> feedback_c.md): no memory in it is current; "
        "fix `superseded_by` by hand",
    }


@pytest.fixture
def b_cannot_move(folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two expired memories; archiving the second fails as a read-only archive would."""
    import memdir.lifecycle.prune

    for path in ("project_a.md", "project_b.md"):
        make_memory(path, created="2026-11-01", expires="2026-11-08")
    real = memdir.lifecycle.prune._archive

    def archive(folder: MemoryDir, item: Any, *args: Any) -> None:
        if item.path == "project_b.md":
            raise PermissionError(13, "Permission denied", str(folder.root / ".archive"))
        real(folder, item, *args)

    monkeypatch.setattr(memdir.lifecycle.prune, "_archive", archive)
    return folder


def test_a_prune_that_fails_part_way_returns_what_it_moved(b_cannot_move: Path) -> None:
    result = prune(_dir(b_cannot_move))
    assert [m.path for m in result.moved] == ["project_a.md"]
    assert result.error is not None and result.error.startswith("cannot archive project_b.md: Permission denied")
    assert result.index is not None and "project_a.md" not in (b_cannot_move / "MEMORY.md").read_text()


@pytest.mark.parametrize("format", ["text", "json"])
def test_the_prune_command_shows_what_moved_before_it_failed(b_cannot_move: Path, format: str) -> None:
    result = invoke_memdir("--dir", str(b_cannot_move), "prune", "--format", format, env={"MEMDIR_TODAY": "2026-11-22"})
    assert result.exit_code == 2, result.output
    assert "cannot archive project_b.md: Permission denied" in result.stderr
    if format == "text":
        assert "archived project_a.md -> .archive/project_a.md (expired 2026-11-08)" in result.stdout
    else:
        assert json.loads(result.stdout)["error"].startswith("cannot archive project_b.md")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_prune_whose_log_cannot_be_written_still_rewrites_the_index(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("project_a.md", created="2026-11-01", expires="2026-11-08")
    _dir(folder).write_index()
    (folder / ".memdir").mkdir(exist_ok=True)
    os.mkfifo(folder / ".memdir" / "log.jsonl")
    result = prune(MemoryDir(folder, today=dt.date(2026, 11, 22)))
    assert [m.path for m in result.moved] == ["project_a.md"]
    assert result.error is not None and "not logged" in result.error and "log.jsonl" in result.error
    assert "project_a.md" not in (folder / "MEMORY.md").read_text()
