"""Crash safety of `memdir extract`: the process dies before or after each of its write steps
(every os.fsync, os.replace and os.link: the steps of atomic_write, of moving the staged memories
into place and of the logs), with the API answered offline. Afterwards each memory file and
MEMORY.md is its old or its new version, and running extract again reaches the complete run's
result: the cursor did not move past what was not saved, and what was saved is not saved twice."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_crash import DYING, _check_old_or_new, _env, _files, _visible

pytestmark = pytest.mark.slow

SESSION = "5e55a0e0-1111-2222-3333-000000000001"
MEMORIES = [
    {
        "type": "feedback", "name": "lint-before-commit", "source": "user", "importance": 0.8,
        "description": "Run npm run lint before every commit; CI failed for a day over unlinted code",
        "body": "Run `npm run lint` before every commit.", "why": "CI was red for a whole day.",
        "how_to_apply": "Before any git commit in this repository.",
    },
    {
        "type": "reference", "name": "billing-dashboard", "source": "user",
        "description": "Billing errors are on the Grafana board billing-overview",
        "body": "Billing errors and latency are on the Grafana board billing-overview.",
    },
    {
        "type": "project", "name": "mobile-freeze", "source": "user",
        "description": "Mobile release freeze from 2026-12-04; only crash fixes merge after that",
        "body": "Mobile release freeze from 2026-12-04.", "why": "The store review takes a week.",
        "how_to_apply": "Hold feature merges to the mobile app from 2026-12-04.",
    },
]  # fmt: skip

# The child: the anthropic client answers from a mock transport, and the process dies at the
# `step`-th write step, `when` is before or after it ("never": count the steps).
_CHILD = (
    DYING
    + """
import json
import anthropic
try:
    import httpx2 as http
except ImportError:
    import httpx as http
import memdir.write.extract

reply = json.loads(sys.argv[3])

def client():
    transport = http.MockTransport(lambda request: http.Response(200, json=reply))
    http_client = anthropic.DefaultHttpxClient(transport=transport)
    return anthropic.Anthropic(api_key="k", max_retries=0, http_client=http_client)

memdir.write.extract.make_client = client
run_memdir(4)
"""
)


def _reply() -> str:
    call = {"type": "tool_use", "id": "toolu_01", "name": "save_memories", "input": {"memories": MEMORIES}}
    return json.dumps(
        {
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test", "content": [call],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )  # fmt: skip


def _extract(root: Path, transcript: Path, step: int, when: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", _CHILD, str(step), when, _reply(), "--dir", str(root), "-q", "extract",
               str(transcript), "--yes"]  # fmt: skip
    env = {**_env(), "ANTHROPIC_API_KEY": "k"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def base(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "base"
    root.mkdir()
    (root / "user_role.md").write_text("---\nname: role\ndescription: Backend developer\ntype: user\n---\nGo.\n")
    (root / "MEMORY.md").write_text("# Memory\n\n- [role](user_role.md) — Backend developer\n")
    lines = [
        {"type": "user", "uuid": "u-1", "sessionId": SESSION, "timestamp": "2026-11-21T10:01:00.000Z",
         "message": {"role": "user", "content": "Always lint before you commit; billing is on billing-overview."}},
        {"type": "assistant", "uuid": "u-2", "sessionId": SESSION, "timestamp": "2026-11-21T10:02:00.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}},
    ]  # fmt: skip
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return root, transcript


def test_death_at_each_write_step_of_extract_leaves_old_or_new_and_recovers(
    base: tuple[Path, Path], tmp_path: Path
) -> None:
    root, transcript = base
    old = _files(root)
    complete = tmp_path / "complete"
    shutil.copytree(root, complete)
    counted = _extract(complete, transcript, 0, "never")
    assert counted.returncode == 0, counted.stderr
    new = _files(complete)
    assert len(_visible(new)) == len(_visible(old)) + len(MEMORIES)  # the three memories were saved
    steps = int(counted.stderr.rsplit("steps=", 1)[1])
    assert steps >= len(MEMORIES)
    for step in range(1, steps + 1):
        for when in ("before", "after"):
            run = tmp_path / f"step-{step}-{when}"
            shutil.copytree(root, run)
            died = _extract(run, transcript, step, when)
            assert died.returncode == 137, died.stderr
            what = f"extract died {when} write step {step} of {steps}"
            _check_old_or_new(_files(run), old, new, what)
            again = _extract(run, transcript, 0, "never")  # the next run, as the next Stop hook would start it
            assert again.returncode == 0, f"{what}: {again.stderr}"
            assert "Traceback" not in again.stderr
            assert _visible(_files(run)) == _visible(new), f"{what}: the next run did not reach the complete result"
            shutil.rmtree(run)
