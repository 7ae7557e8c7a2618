"""A big folder's lint runs the near-duplicate family and the other rules in two processes at once
(memdir/lint/parallel.py): the report is the same as one process's, and a child that fails costs
nothing but the time."""

from __future__ import annotations

import os
import select
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from conftest import TODAY

import memdir.lint.parallel as linter
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
    monkeypatch.setattr(linter, "_cpu_quota", lambda root, group="/": None)  # and no container's CPU quota


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


def test_a_parent_that_fails_does_not_wait_for_its_child(busy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (or a rule that raised) in this half: the child's findings are of no use any more, so
    it is killed rather than waited for to the end of its rules."""
    _always_two(monkeypatch)
    parent = os.getpid()
    pair_rule, other_rule = RULES["D001"], RULES["S002"]
    pair_check: Callable[..., Iterator[object]] = pair_rule.check
    other_check: Callable[..., Iterator[object]] = other_rule.check

    def interrupted(ctx: object) -> Iterator[object]:
        if os.getpid() == parent:
            raise KeyboardInterrupt
        yield from pair_check(ctx)

    def slow(ctx: object) -> Iterator[object]:
        if os.getpid() != parent:
            select.select([], [], [], 5)  # long enough that its end would be the waitpid's answer
        yield from other_check(ctx)

    monkeypatch.setitem(RULES, "D001", type(pair_rule)(**{**pair_rule.__dict__, "check": interrupted}))
    monkeypatch.setitem(RULES, "S002", type(other_rule)(**{**other_rule.__dict__, "check": slow}))
    ended: list[int] = []
    waitpid = os.waitpid

    def recorded(pid: int, options: int) -> tuple[int, int]:
        answer = waitpid(pid, options)
        ended.append(answer[1])
        return answer

    monkeypatch.setattr(os, "waitpid", recorded)
    with pytest.raises(KeyboardInterrupt):
        _lint(busy)
    assert len(ended) == 1 and os.WIFSIGNALED(ended[0]) and os.WTERMSIG(ended[0]) == signal.SIGKILL


def test_the_child_holds_none_of_the_parents_files(busy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `lint --fix` holds the folder's lock while it lints. A child sharing that descriptor kept the
    # lock (and a pipe reading lint's output) past a kill of its parent, until it ended its rules.
    import fcntl

    from memdir.lint.registry import Hit

    lock = open(busy / "held.lock", "w")  # noqa: SIM115 - held across the lint
    fcntl.flock(lock, fcntl.LOCK_EX)
    parent, rule = os.getpid(), RULES["S002"]

    def probe(ctx: object) -> Iterator[Hit]:
        if os.getpid() != parent:
            try:
                os.fstat(lock.fileno())
                held = "open"
            except OSError:
                held = "closed"
            yield Hit("probe.md", None, f"lock {held}, stdout {os.path.realpath('/proc/self/fd/1')}")

    monkeypatch.setitem(RULES, "S002", type(rule)(**{**rule.__dict__, "check": probe}))
    _always_two(monkeypatch)
    try:
        report = MemoryDir(busy, today=TODAY, cache=False).lint(select=["S002", "D002"])
    finally:
        lock.close()
    said = [f.message for f in report.findings if f.path == "probe.md"]
    assert said and said[0].startswith("lock closed"), said
    if os.path.isdir("/proc/self/fd"):
        assert said[0].endswith(f"stdout {os.devnull}"), said


def test_the_index_is_planned_beside_the_pair_search(busy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the index rules ask for the plan, and they run in the child: so the plan is not made
    before the fork, where it lengthened every big lint by its whole cost."""
    from memdir import folder as folder_module
    from memdir.lint.registry import Hit

    planned_in: list[str] = []
    build = folder_module.build_index

    def recorded(*args: object, **kwargs: object) -> object:
        planned_in.append("parent" if os.getpid() == parent else "child")
        return build(*args, **kwargs)  # type: ignore[arg-type]

    parent, rule = os.getpid(), RULES["I001"]
    check: Callable[..., Iterator[Hit]] = rule.check

    def reporting(ctx: object) -> Iterator[Hit]:  # the child's record, sent back as a finding
        yield from check(ctx)
        yield Hit("probe.md", None, f"planned in {planned_in}")

    monkeypatch.setattr(folder_module, "build_index", recorded)
    monkeypatch.setitem(RULES, "I001", type(rule)(**{**rule.__dict__, "check": reporting}))
    _always_two(monkeypatch)
    report = _lint(busy)
    assert planned_in == []  # not in this process
    assert [f.message for f in report.findings if f.path == "probe.md"] == ["planned in ['child']"]


@pytest.mark.parametrize(
    ("files", "cpus"),
    [
        ({"cpu.max": "50000 100000\n"}, 0.5),  # cgroup v2: half a CPU
        ({"cpu.max": "max 100000\n"}, None),  # v2, no limit
        ({"cpu.max": "200000 100000\n"}, 2.0),
        ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1.0),  # cgroup v1
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),  # v1, no limit
        ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "0\n"}, None),  # nonsense: no limit read
        ({"cpu.max": "garbage\n"}, None),
        ({}, None),  # no cgroup file system (macOS, a bare chroot)
    ],
)
def test_a_containers_cpu_quota_is_read_from_either_cgroup_version(
    tmp_path: Path, files: dict[str, str], cpus: float | None
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert linter._cpu_quota(tmp_path) == cpus


def test_a_cpu_quota_on_the_processs_own_group_or_a_parent_counts(tmp_path: Path) -> None:
    """Bug (issue 18 review): only the root of the cgroup file system was read, which is the
    container's own group only where its cgroup namespace makes it so. A systemd unit's CPUQuota=,
    or a container sharing the host's namespace, has its limit on the process's group (named in
    /proc/self/cgroup) or a parent of it: one CPU there, and lint still forked."""
    for group, text in (("a", "200000 100000\n"), ("a/b", "50000 100000\n"), ("a/b/c", "max 100000\n")):
        (tmp_path / group).mkdir(parents=True, exist_ok=True)
        (tmp_path / group / "cpu.max").write_text(text)
    assert linter._cpu_quota(tmp_path, "/a/b/c") == 0.5  # the parent's half a CPU holds below it
    assert linter._cpu_quota(tmp_path, "/a") == 2.0
    assert linter._cpu_quota(tmp_path, "/gone/away") is None  # a group not to be found: no quota read
    listing = tmp_path / "cgroup"
    for text, group in (
        ("12:cpu,cpuacct:/docker/x\n0::/a/b/c\n", "/a/b/c"),
        ("0::/\n", "/"),
        ("12:cpu,cpuacct:/docker/x\n", "/"),  # cgroup v1 alone: its groups are per controller
        ("\xff garbage", "/"),
    ):
        listing.write_text(text)
        assert linter._own_cgroup(listing) == group
    assert linter._own_cgroup(tmp_path / "missing") == "/"


def test_no_fork_in_a_container_held_to_one_cpu(busy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Affinity shows every core of the host; a container's CPU quota does not show there. With one
    CPU to share, a second process only adds its cost (and a second copy of the folder in memory)."""
    made = _forks(monkeypatch)
    _always_two(monkeypatch)
    monkeypatch.setattr(linter, "_cpu_quota", lambda root, group="/": 1.0)
    alone = _lint(busy)
    assert made == []
    monkeypatch.setattr(linter, "_cpu_quota", lambda root, group="/": 1.5)
    assert [f.to_dict() for f in _lint(busy).findings] == [f.to_dict() for f in alone.findings]
    assert len(made) == 1


def test_the_childs_answer_is_never_held_whole(busy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug (issue 18): the first process read the child's whole answer into one bytes object, then
    unpickled it: 3.3 MB of the realistic 10k folder's findings, which took fresh pages in about
    half the runs and put 3 MiB on lint's peak memory. Unpickled as it is read, no read asks for
    the rest of the pipe."""
    _always_two(monkeypatch)
    asked: list[int] = []
    fdopen = os.fdopen

    class Counted:
        def __init__(self, file: BinaryIO) -> None:
            self.file = file

        def read(self, size: int = -1) -> bytes:
            asked.append(size)
            return self.file.read(size)

        def readinto(self, buffer: bytearray) -> int | None:
            asked.append(len(buffer))
            return self.file.readinto(buffer)

        def readline(self, size: int = -1) -> bytes:
            asked.append(size)
            return self.file.readline(size)

        def close(self) -> None:
            self.file.close()

    def counted(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        file = fdopen(fd, mode, *args, **kwargs)
        return Counted(file) if mode == "rb" else file

    monkeypatch.setattr(os, "fdopen", counted)
    found = _lint(busy).findings
    assert {f.code[0] for f in found} >= {"B", "S"}  # the child's, come through Counted
    assert asked and min(asked) >= 0, asked


def test_a_fork_that_fails_leaves_one_process_to_do_it_all(busy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug (issue 18 review): fork(2) failing (EAGAIN at a process limit, ENOMEM where the copy
    would not fit) raised out of lint, which then failed where one process would have linted the
    folder, and left both ends of the pipe open in a library caller."""
    alone = _lint(busy)
    _always_two(monkeypatch)

    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    open_before = len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").is_dir() else None
    report = _lint(busy)
    assert [f.to_dict() for f in report.findings] == [f.to_dict() for f in alone.findings]
    if open_before is not None:
        assert len(os.listdir("/proc/self/fd")) == open_before  # the pipe's two ends closed again
