"""A big folder's lint runs the near-duplicate family and the other rules in two processes at once
(memdir.lint._run_in_two): the report is the same as one process's, and a child that fails costs
nothing but the time."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import TODAY

import memdir.lint as linter
from memdir import MemoryDir
from memdir.lint import RULES, LintReport

KEY = "sk-ant-api03-" + "Hv3Nc7Qe1Ws5Yj9A" * 6  # the shape of an Anthropic key; not a real one


@pytest.fixture
def busy(folder: Path) -> Path:
    """A folder with findings in every family: near-duplicates (D), labels and dates (B), a key (S)."""
    for n in range(4):
        (folder / f"project_deploy-freeze-{n}.md").write_text(
            f"---\nname: deploy-freeze-{n}\ndescription: Deploys are frozen during the release week\n"
            "type: project\n---\nDeploys are frozen during the release week, starting next Monday.\n"
        )
    (folder / "reference_vault.md").write_text(
        f"---\nname: vault\ndescription: Where the staging token lives\ntype: reference\n---\nToken {KEY}.\n"
    )
    return folder


def _lint(folder: Path) -> LintReport:
    return MemoryDir(folder, today=TODAY, cache=False).lint(extend_select=["ALL"])


def _forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    made: list[int] = []
    fork = os.fork

    def counted() -> int:
        pid = fork()
        if pid:
            made.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    return made


def _always_two(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linter, "TWO_PROCESSES_FROM", 0)
    if hasattr(os, "sched_getaffinity"):  # as on a machine with two cores, whatever this one has
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})


pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


def test_two_processes_report_what_one_does(busy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alone = _lint(busy)
    assert {f.code[0] for f in alone.findings} >= {"B", "D", "S"}
    _always_two(monkeypatch)
    made = _forks(monkeypatch)
    together = _lint(busy)
    assert len(made) == 1
    assert [f.to_dict() for f in together.findings] == [f.to_dict() for f in alone.findings]
    assert [f.fix for f in together.findings] == [f.fix for f in alone.findings]  # fixes survive the trip


def _failing_in_the_child(monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    parent, rule = os.getpid(), RULES[code]
    check: Callable[..., Iterator[object]] = rule.check

    def flaky(ctx: object) -> Iterator[object]:
        if os.getpid() != parent:
            raise RuntimeError("a rule that fails in the child")
        yield from check(ctx)

    monkeypatch.setitem(RULES, code, type(rule)(**{**rule.__dict__, "check": flaky}))


def test_a_child_that_fails_costs_only_time(busy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alone = _lint(busy)
    _always_two(monkeypatch)
    _failing_in_the_child(monkeypatch, "S002")
    made = _forks(monkeypatch)
    again = _lint(busy)
    assert len(made) == 1
    assert [f.to_dict() for f in again.findings] == [f.to_dict() for f in alone.findings]


def test_no_fork_beside_other_threads_or_below_the_size(busy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = _forks(monkeypatch)
    _lint(busy)  # five memories: under TWO_PROCESSES_FROM
    _always_two(monkeypatch)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        _lint(busy)  # a server's or a watcher's thread alive: a fork would copy this one only
    finally:
        stop.set()
        other.join()
    assert made == []
