"""memdir.lifecycle.consolidate: a cluster whose members disagree on numbers or dates is split into groups that
agree, and each group of two or more is merged on its own (offline and with --llm)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import TODAY, MakeMemory, invoke_memdir, recorded_client

from memdir.core.model import parse_document
from memdir.folder import MemoryDir
from memdir.lifecycle.consolidate import consolidate, plan_consolidate

UNDATED = ("feedback_format-on-save.md", "feedback_format-when-saving.md")
DATED = ("feedback_ruff-format.md", "feedback_ruff-format-since.md")


def _dir(root: Path) -> MemoryDir:
    return MemoryDir(root, today=TODAY)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memdir" not in p.relative_to(root).parts
    }


def _format_rule(make_memory: MakeMemory, *files: str) -> None:
    """Near-duplicates of one rule: two give no date, two say "since 2026-11-02"."""
    written = {
        UNDATED[0]: ("Run the formatter with ruff format on save", "2026-11-01", "Run ruff format on save."),
        UNDATED[1]: ("Run the formatter ruff format on every save", "2026-11-03", "Run ruff format on every save."),
        DATED[0]: (
            "Always run the formatter ruff format on save",
            "2026-11-02",
            "Run ruff format on save, since 2026-11-02.",
        ),
        DATED[1]: (
            "Run the formatter ruff format on each save",
            "2026-11-04",
            "Run ruff format on each save since 2026-11-02.",
        ),
    }
    for file in files:
        description, created, body = written[file]
        make_memory(file, description=description, created=created, body=f"{body}\n\n**Why:** review noise.\n")


@pytest.fixture
def one_dated(folder: Path, make_memory: MakeMemory) -> Path:
    _format_rule(make_memory, *UNDATED, DATED[0])
    _dir(folder).write_index()
    return folder


@pytest.fixture
def two_and_two(folder: Path, make_memory: MakeMemory) -> Path:
    _format_rule(make_memory, *UNDATED, *DATED)
    _dir(folder).write_index()
    return folder


def test_one_dated_member_does_not_block_the_undated_pair(one_dated: Path) -> None:
    plan = plan_consolidate(_dir(one_dated))
    assert [(c.members, c.keeper) for c in plan.proposed] == [(list(UNDATED), "feedback_format-when-saving.md")]
    refused = [c for c in plan.clusters if c.refused]
    assert [c.members for c in refused] == [[DATED[0]]] and refused[0].changes == []
    reason = str(refused[0].refused)
    assert reason.startswith("not merged:") and "numbers or dates differ" in reason
    assert f"{DATED[0]}: 2026-11-02" in reason  # names the member left out and what it states


def test_two_groups_of_two_are_two_merges(two_and_two: Path) -> None:
    plan = plan_consolidate(_dir(two_and_two))
    assert not [c for c in plan.clusters if c.refused]
    assert [(c.members, c.keeper) for c in plan.proposed] == [
        (list(UNDATED), "feedback_format-when-saving.md"),
        (["feedback_ruff-format-since.md", "feedback_ruff-format.md"], "feedback_ruff-format-since.md"),
    ]


def test_applying_the_split_supersedes_within_each_group(two_and_two: Path) -> None:
    before = _snapshot(two_and_two)
    result = consolidate(_dir(two_and_two), apply=True)
    assert result.applied
    after = _snapshot(two_and_two)
    assert set(after) == set(before)
    for kept in ("feedback_format-when-saving.md", "feedback_ruff-format-since.md"):
        assert after[kept] == before[kept]
    superseded_by = {
        path: parse_document(after[path].decode()).data.get("superseded_by")
        for path in ("feedback_format-on-save.md", "feedback_ruff-format.md")
    }
    # the undated copy is never superseded by a dated one, nor the other way round
    assert superseded_by == {
        "feedback_format-on-save.md": "feedback_format-when-saving.md",
        "feedback_ruff-format.md": "feedback_ruff-format-since.md",
    }


@pytest.mark.parametrize("fixture", ["one_dated", "two_and_two"])
def test_dry_run_still_changes_nothing(fixture: str, request: pytest.FixtureRequest) -> None:
    root: Path = request.getfixturevalue(fixture)
    before = _snapshot(root)
    result = consolidate(_dir(root))
    assert not result.applied and result.plan.changes and _snapshot(root) == before
    dry = invoke_memdir("--dir", str(root), "consolidate", "--dry-run", "--yes", "--format", "json")
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout)["applied"] is False and _snapshot(root) == before


def test_cli_reports_the_merge_and_the_member_left_out(one_dated: Path) -> None:
    result = invoke_memdir("--dir", str(one_dated), "consolidate", "--dry-run")
    assert result.exit_code == 0, result.output
    assert f"{', '.join(UNDATED)}: keep feedback_format-when-saving.md;" in result.stderr
    assert f"{DATED[0]}: not merged:" in result.stderr
    assert "+superseded_by: feedback_format-when-saving.md" in result.stdout


def _merge_reply(name: str, description: str, body: str) -> dict[str, Any]:
    tool_use = {"type": "tool_use", "id": "toolu_01", "name": "write_merged_memory"}
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [tool_use | {"input": {"name": name, "description": description, "body": body}}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 512, "output_tokens": 80},
    }


def test_llm_merges_each_agreeing_group_only(one_dated: Path) -> None:
    sent: list[dict[str, Any]] = []
    reply = _merge_reply("format-on-save", "Run ruff format on every save", "Run ruff format on every save.")
    plan = plan_consolidate(_dir(one_dated), llm=True, client=recorded_client([(200, reply)], sent), model="m")
    assert len(sent) == 1  # one request, for the undated pair; the dated memory is not sent
    content = sent[0]["messages"][0]["content"]
    assert all(path in content for path in UNDATED) and DATED[0] not in content and "2026-11-02" not in content
    assert [(c.members, c.merged) for c in plan.proposed] == [(list(UNDATED), "feedback_format-on-save-2.md")]
    assert [c.members for c in plan.clusters if c.refused] == [[DATED[0]]]


def test_llm_with_two_groups_asks_once_per_group(two_and_two: Path) -> None:
    sent: list[dict[str, Any]] = []
    replies = [
        (200, _merge_reply("format-rule", "Run ruff format on every save", "Run ruff format on every save.")),
        (200, _merge_reply("format-rule", "Ruff format on save", "Run ruff format on save, since 2026-11-02.")),
    ]
    plan = plan_consolidate(_dir(two_and_two), llm=True, client=recorded_client(replies, sent), model="m")
    assert len(sent) == 2 and "2026-11-02" not in sent[0]["messages"][0]["content"]
    assert [c.merged for c in plan.proposed] == ["feedback_format-rule.md", "feedback_format-rule-2.md"]


def test_llm_needs_no_key_when_no_group_can_be_merged(folder: Path, make_memory: MakeMemory) -> None:
    _format_rule(make_memory, UNDATED[0], DATED[0])  # one cluster, nothing in it to merge: no model call
    result = invoke_memdir("--dir", str(folder), "consolidate", "--llm", "--dry-run")
    assert result.exit_code == 0, result.output
    assert f"{UNDATED[0]}, {DATED[0]}: not merged: their numbers or dates differ" in result.stderr


def test_members_joined_only_through_a_dated_one_are_not_merged(
    one_dated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Clusters grow through pairs: A ~ B and B ~ C make one cluster though A and C were never judged
    # duplicates. Set B apart for its date, and A and C have nothing joining them.
    import memdir.text.similarity

    real = memdir.text.similarity.compare

    def compare(a: Any, b: Any) -> Any:
        return None if {a.key, b.key} == set(UNDATED) else real(a, b)

    monkeypatch.setattr(memdir.text.similarity, "compare", compare)
    plan = plan_consolidate(_dir(one_dated))
    assert [c.refused is not None for c in plan.clusters] == [True]
    assert sorted(plan.clusters[0].members) == sorted([*UNDATED, DATED[0]])
