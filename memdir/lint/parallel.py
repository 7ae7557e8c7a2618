"""A big folder's lint in two processes at once: the near-duplicate family's pair search over the
whole folder (D) here, every other rule, file by file, in a forked copy of this process that sends its
findings back. The two halves cost about the same, so on two free cores the wall time is close to the
slower one's (docs/lint.md). Everything about the second process is in this module.

Why it stays (issue 30): `lint --extend-select ALL` of 10,000 memories on a 2-core machine shared with
other work (load average 2) took 23% less wall time with it on the team's stress folder (2.48 s
against 3.20 s) and 12% less on a realistic one (4.87 s against 5.54 s), for 2-6% more CPU and a
lower peak; even at load 5-6 it saved 3-10%.
"""

from __future__ import annotations

import os
from pathlib import Path

from memdir.lint.registry import Finding, LintContext, Rule

PAIR_FAMILY = "D"
TWO_PROCESSES_FROM = 1_000  # memories; below it a fork costs more than it saves


def findings_of(ctx: LintContext, rules: list[Rule]) -> dict[str, list[Finding]]:
    """Each rule's findings, by code: in two processes where that is worth it, else in this one."""
    pairs = [r for r in rules if r.code[0] == PAIR_FAMILY]
    others = [r for r in rules if r.code[0] != PAIR_FAMILY]
    return _run_in_two(ctx, pairs, others) if _worth_two(ctx, pairs, others) else _findings(ctx, rules)


def _findings(ctx: LintContext, rules: list[Rule]) -> dict[str, list[Finding]]:
    return {r.code: list(r.run(ctx)) for r in rules}


def _worth_two(ctx: LintContext, pairs: list[Rule], others: list[Rule]) -> bool:
    import threading

    if not (pairs and others) or len(ctx.scan.memories) < TWO_PROCESSES_FROM:
        return False
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return False  # a fork copies one thread only: never from a server's or a watcher's threads
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = _cpu_quota(_CGROUP, _own_cgroup(_OWN_CGROUP))
    return (cores if quota is None else min(cores, quota)) > 1


# Where Linux mounts the cgroup file system, and where it says which group this process is in. Inside
# a container its cgroup namespace usually makes the container's own group the root; where it does
# not (a systemd unit's CPUQuota=, a container sharing the host's namespace), the limit is on the
# process's group or a parent of it.
_CGROUP = Path("/sys/fs/cgroup")
_OWN_CGROUP = Path("/proc/self/cgroup")


def _own_cgroup(listing: Path) -> str:
    """This process's group in the cgroup v2 hierarchy, from /proc/self/cgroup's "0::/a/b" line; "/"
    (the root) when there is none (cgroup v1 alone, no /proc) or it cannot be read."""
    try:
        for line in listing.read_text().splitlines():
            if line.startswith("0::/"):
                return line[3:]
    except (OSError, ValueError):
        pass
    return "/"


def _cpu_quota(root: Path, group: str = "/") -> float | None:
    """The CPUs a container may use: the smallest CPU quota (`_quota_of`) of `group` (this process's,
    `_own_cgroup`) and of each group above it up to the root of the hierarchy at `root`, since a
    parent's limit holds every group below it. None when there is none or it cannot be read.

    A container held to one CPU on a 64-core host still has all 64 cores in its affinity: there a
    second process only adds its own cost, and a second copy of the folder in memory."""
    folder = root.joinpath(*group.strip("/").split("/")) if group.strip("/") else root
    quotas = []
    while True:
        if folder.is_dir() and (quota := _quota_of(folder)) is not None:
            quotas.append(quota)
        if folder == root or root not in folder.parents:
            return min(quotas, default=None)
        folder = folder.parent


def _quota_of(group: Path) -> float | None:
    """The CPU quota of one cgroup folder: v2's `cpu.max` ("50000 100000": half a CPU; "max ...":
    none), else v1's `cpu.cfs_quota_us` over `cpu.cfs_period_us` (-1: none). None when there is no
    quota or it cannot be read."""
    for quota_file, period_file in (("cpu.max", None), ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us")):
        try:
            text = (group / quota_file).read_text()
            quota, period = text.split() if period_file is None else (text, (group / period_file).read_text())
            if quota.strip() == "max" or int(quota) <= 0 or int(period) <= 0:
                return None
            return int(quota) / int(period)
        except FileNotFoundError:
            continue
        except (OSError, ValueError):  # unreadable or not a quota: as if there were none
            return None
    return None


def _run_in_two(ctx: LintContext, pairs: list[Rule], others: list[Rule]) -> dict[str, list[Finding]]:
    """Each rule's findings, the pair family's found here and the others' in a forked child.

    Anything wrong with the child (killed, out of memory, a rule that raised, or no child to be had:
    fork failed) and its rules run here after all, so a failure shows as it would without the
    child, and nothing is lost."""
    import pickle
    import signal

    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no second process to be had (a process limit, no memory to copy this one into)
        os.close(read_end)
        os.close(write_end)
        return _findings(ctx, [*pairs, *others])  # so one process does it all, as on one core
    if pid == 0:  # pragma: no cover - the child; its findings are checked in the parent
        status = 1
        try:
            _let_go_of_the_parents_files(keep=write_end)
            data = pickle.dumps(_findings(ctx, others), pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            status = 0
        finally:
            os._exit(status)  # no atexit handlers, no flush of the parent's buffered output
    os.close(write_end)
    answer = os.fdopen(read_end, "rb")
    answered = False
    try:
        found = _findings(ctx, pairs)
        # Unpickled as it is read, a frame at a time: read whole first, the answer (3.3 MB of the
        # realistic 10k folder's) took fresh pages in about half the runs, 3 MiB on lint's peak.
        sent: object
        try:
            sent = pickle.load(answer)
        except Exception:  # a torn answer: as if there were none
            sent = None
        answered = True
    finally:
        answer.close()  # first: a child still writing to it gets EPIPE instead of waiting for ever
        if not answered:  # this half failed (Ctrl-C, a rule that raised): the child's work is no use
            os.kill(pid, signal.SIGKILL)  # so it is not waited for; a zombie can still be signalled
        _, status = os.waitpid(pid, 0)
    if status != 0:
        sent = None
    if not isinstance(sent, dict):
        sent = _findings(ctx, others)
    return found | sent


def _let_go_of_the_parents_files(keep: int) -> None:
    """In lint's child: close every descriptor inherited from the parent but `keep`, and read and
    write /dev/null on 0, 1 and 2. A killed parent leaves its child running its rules to the end;
    sharing the parent's descriptors, it would hold `lint --fix`'s folder lock for that long, and
    the write end of a pipe reading lint's output, which would then not see its end. A rule that
    needed one of them fails here and runs again in the parent."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, keep)
    os.closerange(keep + 1, max(os.sysconf("SC_OPEN_MAX"), keep + 1))  # close_range(2): one call
