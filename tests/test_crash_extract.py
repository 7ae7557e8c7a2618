"""Crash safety of `memdir extract`: the process dies before or after each of its write steps
(every os.fsync, os.replace and os.link: the steps of atomic_write, of moving the staged memories
into place and of the logs), with the API answered offline. Afterwards each memory file and
MEMORY.md is its old or its new version, and running extract again reaches the complete run's
result: the cursor did not move past what was not saved, and what was saved is not saved twice.

Each run that dies is a process of its own, which imports the anthropic SDK (a second and a half):
it dies at the steps that leave a folder in a state of its own (CHOSEN), not at every one of its
28 steps before and after; the run after it is in-process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import invoke_memdir, recorded_client
from test_crash import DYING, WRITTEN_AT, _check_old_or_new, _env, _files, _visible, run_dying

import memdir.write.extract

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

# How many write steps extract takes on the base folder. test_the_write_steps_of_extract_are_all_counted
# fails when it changes, and says what to write here; then choose CHOSEN's steps again.
EXTRACT_STEPS = 28
# The deaths, each leaving the folder in a state no other one does (after step k is before step k+1):
# the step, the side of it, and what is then on disk. Steps 1-5 write the state folder's .gitignore,
# the lock and the parse cache; 6-14 stage the three memories in .memdir/staging/ (a temporary file's
# fsync, its rename, the folder's fsync); 15-17 link them into the folder; 18-20 keep the previous
# index; 21-23 write MEMORY.md; 24-26 the cursor; 27 and 28 append to the decision log (the write's
# lines, then extract's).
CHOSEN = [
    (7, "after"),  # one memory staged
    (14, "after"),  # all three staged, none in the folder
    (15, "after"),  # one in the folder, two staged
    (17, "after"),  # all three in the folder, MEMORY.md not yet written
    (22, "before"),  # MEMORY.md's temporary file written, not renamed
    (22, "after"),  # MEMORY.md written, the cursor not moved
    (25, "before"),  # the cursor's temporary file written, not renamed
    (25, "after"),  # the cursor moved, the decision not logged
    (27, "after"),  # the write logged, not extract's summary
    (28, "after"),  # every write done, what the run does after them not
]

# The API answered offline by the SDK's own mock transport, in the process that dies: extract's client
# factory is pointed at `mocked_client` before memdir runs (DYING's run_memdir).
_MOCKED = """
import json
import anthropic
try:
    import httpx2 as http
except ImportError:
    import httpx as http
import memdir.write.extract

def mocked_client(reply=json.loads(%r)):
    transport = http.MockTransport(lambda request: http.Response(200, json=reply))
    http_client = anthropic.DefaultHttpxClient(transport=transport)
    return anthropic.Anthropic(api_key="k", max_retries=0, http_client=http_client)

memdir.write.extract.make_client = mocked_client
"""


def _reply() -> str:
    call = {"type": "tool_use", "id": "toolu_01", "name": "save_memories", "input": {"memories": MEMORIES}}
    return json.dumps(
        {
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test", "content": [call],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )  # fmt: skip


def _extract(root: Path, transcript: Path, step: int, when: str) -> subprocess.CompletedProcess[str]:
    """`memdir extract TRANSCRIPT --yes` on `root`, dying before or after its `step`-th write step."""
    args = ["--dir", str(root), "-q", "extract", str(transcript), "--yes"]
    env = {**_env(), "ANTHROPIC_API_KEY": "k"}
    code = DYING + _MOCKED % _reply() + "run_memdir(3)\n"
    return run_dying(args, step, when, env=env, code=code, timeout=300)  # 300 s: a bound on a hang, not on speed


@pytest.fixture(scope="module")
def base(scratch: Path) -> tuple[Path, Path]:
    tmp_path = scratch
    root = tmp_path / "base"
    root.mkdir()
    (root / "user_role.md").write_text("---\nname: role\ndescription: Backend developer\ntype: user\n---\nGo.\n")
    os.utime(root / "user_role.md", (WRITTEN_AT, WRITTEN_AT))  # weeks old: the parse cache takes it, every run
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


@pytest.fixture(scope="module")
def complete(base: tuple[Path, Path], scratch: Path) -> tuple[int, dict[str, bytes]]:
    """What a complete run leaves (its files), and how many write steps it took."""
    root, transcript = base
    run = scratch / "complete"
    shutil.copytree(root, run)
    counted = _extract(run, transcript, 0, "never")
    assert counted.returncode == 0, counted.stderr
    new = _files(run)
    assert len(_visible(new)) == len(_visible(_files(root))) + len(MEMORIES)  # the three memories were saved
    return int(counted.stderr.rsplit("steps=", 1)[1]), new


def test_the_write_steps_of_extract_are_all_counted(complete: tuple[int, dict[str, bytes]]) -> None:
    steps, _ = complete
    assert steps >= len(MEMORIES)
    assert steps == EXTRACT_STEPS, (
        f"`memdir extract` now takes {steps} write steps, not {EXTRACT_STEPS}: set EXTRACT_STEPS = {steps} "
        f"in {Path(__file__).name} and choose CHOSEN's steps again"
    )


@pytest.mark.parametrize(
    ("step", "when"), [pytest.param(step, when, id=f"step{step}of{EXTRACT_STEPS}-{when}") for step, when in CHOSEN]
)
def test_death_at_a_write_step_of_extract_leaves_old_or_new_and_recovers(
    step: int, when: str, base: tuple[Path, Path], complete: tuple[int, dict[str, bytes]], scratch: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    root, transcript = base
    old, (_, new) = _files(root), complete
    run = scratch / f"step{step}-{when}"
    shutil.copytree(root, run)
    what = f"extract died {when} write step {step} of {EXTRACT_STEPS}"
    died = _extract(run, transcript, step, when)
    assert died.returncode == 137, f"{what}: it did not die there (see the test above)\n{died.stderr}"
    _check_old_or_new(_files(run), old, new, what)
    # The next run, as the next Stop hook would start it: in-process, the API answered the same way.
    monkeypatch.setattr(memdir.write.extract, "make_client", lambda: recorded_client([(200, json.loads(_reply()))], []))
    again = invoke_memdir("--dir", str(run), "-q", "extract", str(transcript), "--yes", env={"ANTHROPIC_API_KEY": "k"})
    assert again.exit_code == 0, f"{what}: {again.output}"
    assert again.exception is None or isinstance(again.exception, SystemExit), (what, again.exc_info)
    assert _visible(_files(run)) == _visible(new), f"{what}: the next run did not reach the complete result"
    shutil.rmtree(run)
