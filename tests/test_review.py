"""`memdir review`: rejections are remembered so extraction does not bring them back, quarantined
memories count for the duplicate screen, `review reject --all` and `review accept --all`. The API is recorded responses
through the SDK's own mock transport (conftest.recorded_client), one session a messages file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import TODAY, MakeMemory, invoke_memdir, recorded_client
from test_extract import FROM_A_PAGE  # what a tool read: extraction quarantines it

from memdir import MemoryDir
from memdir.core.rejections import REJECTED_FILE, remembered
from memdir.core.store import read_decisions
from memdir.write.extract import Extractor
from memdir.write.review import accept_all, quarantined, reject, reject_all

REWORDED = dict(FROM_A_PAGE, body="Production deploys: see the runbook page Deploys/Production on the ops wiki.")
STATUS_PAGE = dict(
    FROM_A_PAGE,
    name="status-page",
    description="The public status page is status.example.com",
    body="The public status page is status.example.com.",
)


def _save(*memories: dict[str, Any]) -> dict[str, Any]:
    call = {"type": "tool_use", "id": "toolu_01", "name": "save_memories", "input": {"memories": list(memories)}}
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [call],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def _session(folder: Path, n: int, *memories: dict[str, Any]) -> list[str]:
    """One extraction run over a new session (its own messages file) whose model answer saves
    `memories`; the files it wrote."""
    messages = folder.parent / f"session-{n}.json"
    messages.write_text(json.dumps([{"role": "user", "content": f"Session {n}: the runbook is on the wiki."}]))
    client = recorded_client([(200, _save(*memories))], [])
    extractor = Extractor(MemoryDir(folder, today=TODAY), client=client, model="claude-test")
    [result] = extractor.run(extractor.request(messages, "messages"))
    assert result.status == "written", result.summary
    return result.written


def _folder(folder: Path) -> MemoryDir:
    return MemoryDir(folder, today=TODAY)


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.md") if p.name != "MEMORY.md")


# --- quarantined memories count for the duplicate screen ---------------------------------------


@pytest.mark.parametrize("again", [FROM_A_PAGE, REWORDED], ids=["same", "reworded"])
def test_the_same_candidate_twice_is_quarantined_once(folder: Path, again: dict[str, Any]) -> None:
    """Before: the second session quarantined `deploy-runbook-2` beside the first."""
    assert _session(folder, 1, FROM_A_PAGE) == ["reference_deploy-runbook.md"]
    assert _session(folder, 2, again) == []
    assert _files(folder) == ["reference_deploy-runbook.md"]
    last = [e for e in read_decisions(folder) if e.get("name") == "deploy-runbook"][-1]
    assert last["decision"] == "skipped-duplicate" and last["duplicate_of"] == "reference_deploy-runbook.md"
    assert "waits in quarantine" in last["reasons"][-1]


def test_a_different_memory_beside_a_quarantined_one_is_still_quarantined(folder: Path) -> None:
    _session(folder, 1, FROM_A_PAGE)
    assert _session(folder, 2, STATUS_PAGE) == ["reference_status-page.md"]


def test_a_person_adding_what_waits_in_quarantine_is_told(folder: Path) -> None:
    _session(folder, 1, FROM_A_PAGE)
    added = invoke_memdir("--dir", str(folder), "add", "reference", "runbook-location",
                          "-d", FROM_A_PAGE["description"], "--body", FROM_A_PAGE["body"])  # fmt: skip
    assert added.exit_code == 1 and "waits in quarantine" in added.stderr, added.output
    assert _files(folder) == ["reference_deploy-runbook.md"]


# --- a rejection is remembered -----------------------------------------------------------------


@pytest.mark.parametrize("again", [FROM_A_PAGE, REWORDED], ids=["same", "reworded"])
def test_a_rejected_memory_is_not_quarantined_again(folder: Path, again: dict[str, Any]) -> None:
    """Before: the next session quarantined the same memory again, once the name was free."""
    _session(folder, 1, FROM_A_PAGE)
    reject(_folder(folder), "deploy-runbook")
    [rejection] = remembered(folder)
    assert rejection.file == "reference_deploy-runbook.md" and rejection.body is not None
    assert _session(folder, 2, again, STATUS_PAGE) == ["reference_status-page.md"]
    assert _files(folder) == ["reference_status-page.md"]
    entry = next(e for e in read_decisions(folder)[::-1] if e.get("name") == "deploy-runbook")
    assert entry["decision"] == "previously-rejected" and entry["rejected"] == "reference_deploy-runbook.md"
    assert "previously rejected" in entry["reasons"][-1]
    summary = read_decisions(folder)[-1]["summary"]
    assert summary == "saved 0, quarantined 1, skipped 1 previously rejected"


def test_a_purged_rejection_keeps_only_a_digest_and_still_matches(folder: Path) -> None:
    _session(folder, 1, FROM_A_PAGE)
    reject(_folder(folder), "deploy-runbook", purge=True)
    line = (folder / ".memdir" / REJECTED_FILE).read_text()
    assert "ops wiki" not in line and "Deploys/Production" not in line  # the text is not kept
    [rejection] = remembered(folder)
    assert rejection.body is None and rejection.digest
    assert _session(folder, 2, FROM_A_PAGE) == []
    assert read_decisions(folder)[-2]["decision"] == "previously-rejected"


def test_a_rejected_memory_is_skipped_for_a_person_unless_forced(folder: Path) -> None:
    """Every writer goes through the same screen: `memdir add` is told, and --force adds it."""
    _session(folder, 1, FROM_A_PAGE)
    reject(_folder(folder), "deploy-runbook")
    args = ("--dir", str(folder), "add", "reference", "deploy-runbook", "-d", FROM_A_PAGE["description"],
            "--body", FROM_A_PAGE["body"])  # fmt: skip
    refused = invoke_memdir(*args)
    assert refused.exit_code == 1 and "previously rejected" in refused.stderr and "--force" in refused.stderr
    assert refused.stderr.count("\n") == 1 and _files(folder) == []
    forced = invoke_memdir(*args, "--force")
    assert forced.exit_code == 0, forced.output
    assert _files(folder) == ["reference_deploy-runbook.md"]


def test_the_agent_tools_do_not_save_a_rejected_memory(folder: Path) -> None:
    from memdir.integrations.tools import MemoryTools

    _session(folder, 1, FROM_A_PAGE)
    reject(_folder(folder), "deploy-runbook")
    create = {k: FROM_A_PAGE[k] for k in ("type", "name", "description", "body")}
    result = MemoryTools(_folder(folder)).call("create_memory", create)
    assert result.is_error and result.text.startswith("Error: not saved: previously rejected"), result.text
    assert _files(folder) == []


def test_a_broken_rejections_file_is_read_around(folder: Path) -> None:
    state = folder / ".memdir"
    state.mkdir()
    good = {"file": "reference_x.md", "name": "x", "type": "reference", "digest": "abc"}
    (state / REJECTED_FILE).write_text('{"torn": \n[1, 2]\n{"file": 3}\n' + json.dumps(good) + "\n")
    assert [r.file for r in remembered(folder)] == ["reference_x.md"]
    assert remembered(folder / "nowhere") == []


# --- review reject --all -------------------------------------------------------------------------


def test_reject_all_rejects_and_remembers_every_quarantined_memory(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_role.md", name="role", description="Backend developer", body="Go.")
    _session(folder, 1, FROM_A_PAGE, STATUS_PAGE)
    result = invoke_memdir("--dir", str(folder), "review", "reject", "--all")
    assert result.exit_code == 0, result.output
    assert "Rejected reference_deploy-runbook.md" in result.stderr
    assert "Rejected reference_status-page.md" in result.stderr
    assert _files(folder) == ["user_role.md"] and quarantined(_folder(folder)) == []
    assert sorted(r.name for r in remembered(folder)) == ["deploy-runbook", "status-page"]
    assert [e["decision"] for e in read_decisions(folder)][-2:] == ["rejected", "rejected"]
    assert _session(folder, 2, FROM_A_PAGE, STATUS_PAGE) == []
    none = invoke_memdir("--dir", str(folder), "review", "reject", "--all")
    assert none.exit_code == 0 and "Nothing in quarantine" in none.stderr
    assert reject_all(_folder(folder)) == []


@pytest.mark.parametrize("decision", ["accept", "reject"])
def test_review_usage_errors_and_an_unknown_name_change_nothing(folder: Path, decision: str) -> None:
    _session(folder, 1, FROM_A_PAGE, STATUS_PAGE)
    both = invoke_memdir("--dir", str(folder), "review", decision, "--all", "deploy-runbook")
    assert both.exit_code == 2 and "not both" in both.stderr and both.stderr.count("\n") == 1
    neither = invoke_memdir("--dir", str(folder), "review", decision)
    assert neither.exit_code == 2 and "--all" in neither.stderr
    unknown = invoke_memdir("--dir", str(folder), "review", decision, "status-page", "nope")
    assert unknown.exit_code == 2 and "nope" in unknown.stderr
    # the first name was neither let in nor rejected
    assert len(quarantined(_folder(folder))) == 2 and remembered(folder) == []


def test_reject_several_names_with_purge_deletes_them(folder: Path) -> None:
    _session(folder, 1, FROM_A_PAGE, STATUS_PAGE)
    two = invoke_memdir("--dir", str(folder), "review", "reject", "status-page", "deploy-runbook", "--purge")
    assert two.exit_code == 0 and "(deleted)" in two.stderr and _files(folder) == []


def test_a_rejection_that_cannot_be_remembered_rejects_nothing(folder: Path, tmp_path: Path) -> None:
    _session(folder, 1, FROM_A_PAGE)
    (tmp_path / "elsewhere.jsonl").write_text("")
    (folder / ".memdir" / REJECTED_FILE).symlink_to(tmp_path / "elsewhere.jsonl")
    result = invoke_memdir("--dir", str(folder), "review", "reject", "deploy-runbook")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert REJECTED_FILE in result.stderr, result.stderr
    assert _files(folder) == ["reference_deploy-runbook.md"] and len(quarantined(_folder(folder))) == 1
    assert (tmp_path / "elsewhere.jsonl").read_text() == ""


def test_reject_all_reports_json(folder: Path) -> None:
    _session(folder, 1, FROM_A_PAGE, STATUS_PAGE)
    result = invoke_memdir("--dir", str(folder), "review", "reject", "--all", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert sorted(r["path"] for r in report["rejected"]) == ["reference_deploy-runbook.md", "reference_status-page.md"]
    assert all(r["archived_to"] for r in report["rejected"]) and "index" in report
    none = invoke_memdir("--dir", str(folder), "review", "reject", "--all", "--format", "json")
    assert none.exit_code == 0 and json.loads(none.stdout) == {"rejected": []}


# --- review accept: several names, --all, all or nothing ---------------------------------------------


def test_accept_all_lets_every_quarantined_memory_in(folder: Path) -> None:
    _session(folder, 1, FROM_A_PAGE, STATUS_PAGE)
    result = invoke_memdir("--dir", str(folder), "review", "accept", "--all")
    assert result.exit_code == 0, result.output
    assert "Accepted reference_deploy-runbook.md" in result.stderr
    assert "Accepted reference_status-page.md" in result.stderr
    assert quarantined(_folder(folder)) == []
    index = (folder / "MEMORY.md").read_text()
    assert "deploy-runbook" in index and "status-page" in index
    assert [e["decision"] for e in read_decisions(folder)][-2:] == ["accepted", "accepted"]
    none = invoke_memdir("--dir", str(folder), "review", "accept", "--all", "--format", "json")
    assert none.exit_code == 0 and json.loads(none.stdout) == {"accepted": []}
    assert accept_all(_folder(folder)) == []


def test_accept_several_names_reports_json(folder: Path) -> None:
    _session(folder, 1, FROM_A_PAGE, STATUS_PAGE)
    result = invoke_memdir(
        "--dir", str(folder), "review", "accept", "status-page", "deploy-runbook", "status-page", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["accepted"] == [
        {"path": "reference_status-page.md", "superseded": None},
        {"path": "reference_deploy-runbook.md", "superseded": None},
    ]  # in the order given, once each
    assert "index" in report and quarantined(_folder(folder)) == []


def test_two_accepted_memories_that_supersede_one_memory_are_refused_before_any_is_written(
    folder: Path, make_memory: MakeMemory
) -> None:
    make_memory(
        "reference_staging-url.md", name="staging-url", description="Staging is at staging.example.com",
        body="Staging is at staging.example.com.\n", created="2026-10-01",
    )  # fmt: skip
    for name, place in (("deploy-target", "Frankfurt"), ("deploy-region", "Dublin")):
        added = invoke_memdir(
            "--dir", str(folder), "add", "reference", name, "-d", f"Deploys go to the new cluster in {place}",
            "--body", f"The {place} cluster takes the deploys now.", "--source", "tool",
            "--supersedes", "reference_staging-url.md",
        )  # fmt: skip
        assert added.exit_code == 0, added.output
    before = {p.name: p.read_bytes() for p in folder.glob("*.md")}
    result = invoke_memdir("--dir", str(folder), "review", "accept", "--all")
    assert result.exit_code != 0 and "would both supersede reference_staging-url.md" in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert {p.name: p.read_bytes() for p in folder.glob("*.md")} == before
    one = invoke_memdir("--dir", str(folder), "review", "accept", "deploy-region")
    assert one.exit_code == 0 and "reference_staging-url.md is superseded" in one.stderr


def test_the_rejections_file_is_rotated_and_both_generations_are_remembered(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.core import store
    from memdir.core.rejections import Rejection, remember

    def rejection(n: int) -> Rejection:
        return Rejection(f"project_{n}.md", f"fact-{n}", "project", f"digest-{n}", description="d", body="b" * 100)

    monkeypatch.setattr(store, "LOG_MAX_BYTES", 1000)  # some five rejections a generation
    for n in range(12):
        remember(folder, [rejection(n)])
    state = folder / ".memdir"
    assert (state / REJECTED_FILE).stat().st_size <= 1000 and (state / f"{REJECTED_FILE}.1").is_file()
    names = [r.name for r in remembered(folder)]
    assert names == [f"fact-{n}" for n in range(12 - len(names), 12)]  # the latest, oldest first
    assert 5 < len(names) < 12  # two generations, not one and not the whole history
