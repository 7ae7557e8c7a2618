"""memdir.lifecycle.stats and `memdir stats`: the figures of a small folder whose answers are known."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest
from conftest import TODAY, MakeMemory, invoke_memdir

from memdir.cli.lifecycle import _bar
from memdir.core.store import log_decisions
from memdir.folder import MemoryDir
from memdir.lifecycle.stats import folder_stats


@pytest.fixture
def known(folder: Path, make_memory: MakeMemory) -> Path:
    make_memory("feedback_a.md", created="2026-11-20")  # 2 days old
    make_memory("feedback_b.md", created="2026-10-01", updated="2026-11-01", expires="2026-11-30")  # 21; expiring
    make_memory("project_c.md", created="2026-08-01", expires="2026-11-10")  # 113 days; expired
    make_memory("user_d.md", created="2025-01-01", status="superseded", superseded_by="feedback_a.md")  # > 365
    make_memory("reference_e.md", status="quarantined")  # undated
    make_memory("team/project_f.md", type="project", created="2026-10-15", expires="2027-01-01")  # 38 days; not soon
    (folder / "broken.md").write_text('---\nname: "unclosed\n---\nBody\n')
    (folder / "notes.md").write_text("Plain notes, no frontmatter: not a memory, not a problem.\n")
    make_memory("project_old.md", root=folder / ".archive", created="2026-01-01")
    state = folder / ".memdir"
    state.mkdir(exist_ok=True)
    (state / "recall.jsonl").write_text(
        '{"query": "lint", "chosen": ["feedback_a.md", "feedback_b.md"]}\n'
        '{"query": "tcp", "chosen": []}\n'
        '{"query": "deploy", "chosen": ["feedback_a.md"]}\n'
        '{"torn": \n'
    )
    log_decisions(folder, [
        {"command": "prune", "decision": "archived", "file": "project_x.md", "reason": "expired"},
        {"command": "prune", "decision": "archived", "file": "user_y.md", "reason": "superseded"},
        {"command": "prune", "decision": "archived", "file": "user_z.md", "reason": "superseded"},
        {"command": "add", "decision": "stored", "file": "feedback_a.md"},
    ])  # fmt: skip
    return folder


def test_figures_of_a_known_folder(known: Path) -> None:
    stats = folder_stats(MemoryDir(known, today=TODAY))
    assert stats.memories == 6 and stats.archived == 1
    assert stats.unreadable == [("broken.md", "invalid YAML in frontmatter: found unexpected end of stream")]
    assert stats.by_type == {"user": 1, "feedback": 2, "project": 2, "reference": 1}
    assert stats.by_status == {"active": 3, "superseded": 1, "quarantined": 1, "archived": 0, "expired": 1}
    assert stats.ages == {"0-7d": 1, "8-30d": 1, "31-90d": 1, "91-365d": 1, ">365d": 1, "undated": 1}
    assert [(e.path, e.days_left) for e in stats.expiring] == [("feedback_b.md", 8)]
    assert (stats.index.entries, stats.index.lines, stats.index.left_out) == (3, 3, 0)
    assert stats.index.bytes == len((MemoryDir(known, today=TODAY).plan_index().text).encode())
    recall = stats.recall
    assert (recall.recalls, recall.returned, recall.empty, recall.distinct_recalled) == (3, 3, 1, 2)
    assert recall.hit_rate == pytest.approx(2 / 3) and recall.empty_rate == pytest.approx(1 / 3)
    assert recall.average_returned == pytest.approx(1.0)
    assert stats.cleanup == {"expired": 1, "superseded": 2}


def test_expiring_window_is_configurable(known: Path) -> None:
    assert folder_stats(MemoryDir(known, today=TODAY), expiring_days=7).expiring == []
    wide = folder_stats(MemoryDir(known, today=TODAY), expiring_days=60).expiring
    assert [e.path for e in wide] == ["feedback_b.md", "team/project_f.md"]


def test_json_shape(known: Path) -> None:
    result = invoke_memdir("--dir", str(known), "stats", "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) == {
        "folder", "today", "memories", "unreadable", "unreadable_files", "by_type", "by_status", "archived", "index",
        "age_days", "age_sources", "expiring_soon", "recall", "cleanup", "notes",
    }  # fmt: skip
    # Every file written at once (no git): the dated ones by their frontmatter, the undated one has no age.
    assert payload["age_sources"] == {"frontmatter": 5, "mtime": 0, "git": 0, "none": 1}
    assert payload["unreadable"] == 1 and payload["unreadable_files"][0]["path"] == "broken.md"
    assert set(payload["index"]) == {
        "entries", "lines", "max_lines", "line_headroom", "bytes", "max_bytes", "byte_headroom", "left_out", "refused",
    }  # fmt: skip
    assert payload["index"]["max_lines"] == 200 and payload["index"]["max_bytes"] == 25_000
    assert payload["index"]["line_headroom"] == 197
    assert payload["expiring_soon"] == {
        "within_days": 14,
        "memories": [{"path": "feedback_b.md", "expires": "2026-11-30", "days_left": 8}],
    }
    assert payload["recall"] == {
        "recalls": 3, "hit_rate": 0.6667, "average_returned": 1.0, "empty_rate": 0.3333, "distinct_recalled": 2,
    }  # fmt: skip
    assert payload["cleanup"] == {"expired_archived": 1, "superseded_archived": 2}


def test_an_undated_memory_is_aged_by_its_file(folder: Path, make_memory: MakeMemory) -> None:
    """Claude Code writes no dates: its memories are as old as their files, not "undated"."""
    for name, days in (("user_a.md", 3), ("user_b.md", 45)):
        path = make_memory(name)
        day = TODAY - dt.timedelta(days=days)
        noon = time.mktime((day.year, day.month, day.day, 12, 0, 0, 0, 0, -1))
        os.utime(path, (noon, noon))
    stats = folder_stats(MemoryDir(folder, today=TODAY))
    assert stats.ages == {"0-7d": 1, "8-30d": 0, "31-90d": 1, "91-365d": 0, ">365d": 0, "undated": 0}
    assert stats.age_sources == {"frontmatter": 0, "mtime": 2, "git": 0, "none": 0}
    out = invoke_memdir("--dir", str(folder), "stats").stdout
    assert "age        0-7d 1, 31-90d 1\n  from     mtime 2\n" in out


def test_empty_folder_has_no_rates(folder: Path) -> None:
    payload = json.loads(invoke_memdir("--dir", str(folder), "stats", "--format", "json").stdout)
    assert payload["memories"] == 0 and payload["recall"]["hit_rate"] is None
    assert payload["recall"]["average_returned"] is None and payload["cleanup"]["expired_archived"] == 0


def test_text_output(known: Path) -> None:
    result = invoke_memdir("--dir", str(known), "stats")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "memories   6 (user 1, feedback 2, project 2, reference 1)" in out
    assert "3 / 200 (2%)" in out and "█" not in out  # no bars when not a terminal
    assert "expiring   1 within 14 days: feedback_b.md (2026-11-30)" in out
    assert "hit rate 67%" in out and "prune archived 1 expired and 2 superseded" in out


def test_bars_on_a_terminal() -> None:
    assert _bar(100, 200, tty=True) == "[" + "█" * 15 + "·" * 15 + "] 100 / 200 (50%)"
    assert _bar(300, 200, tty=True).startswith("[" + "█" * 30 + "]")  # over the cap: a full bar, 150%
    assert _bar(100, 200, tty=False) == "100 / 200 (50%)"


def test_missing_folder_is_one_line(tmp_path: Path) -> None:
    result = invoke_memdir("--dir", str(tmp_path / "nowhere"), "stats")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_text_names_each_unreadable_file_and_counts_in_words(known: Path) -> None:
    result = invoke_memdir("--dir", str(known), "stats")
    assert result.exit_code == 0, result.output
    assert "unreadable 1 file (`memdir lint` explains):\n           broken.md: invalid YAML" in result.stdout
    assert "recall     3 recalls;" in result.stdout and "; 2 distinct memories recalled" in result.stdout


def test_the_recall_log_is_streamed_not_read_whole(folder: Path) -> None:
    """A log that escaped rotation (an old version's, or merged) took 13 s and 2 GB at 330 MB: it was
    read into one string, split into lines and parsed into a list before anything was counted."""
    import tracemalloc

    import memdir.core.gauntlet
    import memdir.read.recall  # noqa: F401 - imported before measuring: their code is not the log's cost

    line = json.dumps({"query": "deploy", "chosen": ["user_a.md"], "candidates": ["x" * 2000]}) + "\n"
    state = folder / ".memdir"
    state.mkdir()
    (state / "recall.jsonl").write_text(line * 5_000 + '{"query": "tcp", "chosen": []}\n')  # 10 MB
    pruned = {"command": "prune", "decision": "archived", "reason": "expired", "file": "x" * 2000}
    (state / "log.jsonl").write_text((json.dumps(pruned) + "\n") * 5_000)
    tracemalloc.start()
    try:
        stats = folder_stats(MemoryDir(folder, today=TODAY))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    recall = stats.recall
    assert (recall.recalls, recall.returned, recall.empty, recall.distinct_recalled) == (5_001, 5_000, 1, 1)
    assert stats.cleanup == {"expired": 5_000, "superseded": 0}
    assert peak < 2 * 1024 * 1024, peak


def test_a_logged_query_holding_a_unicode_line_break_is_counted(folder: Path) -> None:
    """The log is written with ensure_ascii=False, so U+2028 in a query is in the file as it is; the
    reader split lines as str.splitlines does, cut such a recall in two and lost it."""
    state = folder / ".memdir"
    state.mkdir()
    entry = {"query": "deploy\u2028staging\x85now", "chosen": ["user_a.md"]}
    (state / "recall.jsonl").write_text(json.dumps(entry, ensure_ascii=False) + "\n", encoding="utf-8")
    assert folder_stats(MemoryDir(folder, today=TODAY)).recall.recalls == 1
