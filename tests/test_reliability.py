"""Reliability and security: secrets never printed, tracebacks without locals, a read-only folder,
a full disk and files that vanish mid-run, and the regressions the property tests found.
docs/reliability.md has the table of what was tried."""

from __future__ import annotations

import errno
import itertools
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import MakeMemory, invoke_memdir, memdir_command, run_memdir

from memdir import MemoryDir
from memdir.core import store

# Values the detector in memdir/text/sensitive.py recognises; never real keys.
ANTHROPIC_KEY = "sk-ant-api03-Zq8vT2mXr4Lp9WnB6yKd3HfJ7sGc1VtE5uQa0OiRbNx-AAAA"
GITHUB_TOKEN = "ghp_8fKq2ZpX7mWc4TnY1vLr9BdH3sJg6QeA5uNo"
DB_PASSWORD = "Tr0ub4dor3xQ9zLm"
URL_PASSWORD = "Xy7kP2qLm9vZ"
SECRETS = (ANTHROPIC_KEY, GITHUB_TOKEN, DB_PASSWORD, URL_PASSWORD)
# Enough of each to catch a partial leak (a masked value shows at most its public prefix + 4 chars).
FRAGMENTS = ("Zq8vT2mX", "8fKq2ZpX", "Tr0ub4do", "Xy7kP2qL", "y7kP2qLm")


def _leaks(text: str) -> list[str]:
    return [fragment for fragment in FRAGMENTS if fragment in text]


def _one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memdir: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` but memdir's own state, by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memdir" not in p.relative_to(root).parts
    }


# --- regressions found by tests/test_properties.py -----------------------------------------------


def test_an_unclosed_code_fence_in_memory_md_does_not_swallow_new_entries(
    folder: Path, make_memory: MakeMemory
) -> None:
    """Bug: entries appended after a hand-written, unclosed ``` landed inside the code block, were
    not recognised as entries the next run, and were appended again: MEMORY.md grew every run."""
    make_memory("user_a.md")
    make_memory("user_b.md")
    (folder / "MEMORY.md").write_text("# Memory\n\n```\nsome code a person pasted\n")
    memdir = MemoryDir(folder)
    assert memdir.write_index().changed
    text = (folder / "MEMORY.md").read_text()
    assert text.startswith("# Memory\n\n```\nsome code a person pasted\n```\n")  # kept, and closed
    assert text.count("(user_a.md)") == 1
    assert not memdir.write_index().changed
    assert not memdir.lint(select=["I"]).findings


def test_a_byte_order_mark_counts_against_the_byte_cap(folder: Path, make_memory: MakeMemory) -> None:
    """Bug: the BOM of a MEMORY.md that has one was kept but not counted: the index came out 3
    bytes over its byte cap."""
    from memdir.core.index import Caps

    for i in range(6):
        make_memory(f"user_m{i}.md", description=f"Memory {i}")
    for cap in range(60, 300):
        (folder / "MEMORY.md").write_text("\ufeff# Memory\n", encoding="utf-8")
        write = MemoryDir(folder, caps=Caps(max_lines=200, max_bytes=cap), cache=False).write_index()
        written = (folder / "MEMORY.md").read_bytes()
        assert written.startswith("\ufeff".encode())
        assert write.result.refused is not None or len(written) <= cap, cap


_MiB = 1024 * 1024
GROWTH = 16  # the big memory holds 16 times the findings of the small one


def _filled(unit: str, budget: int) -> str:
    """`unit` repeated (its `{i}` numbered) to at most `budget` bytes."""
    parts, size = [], 0
    for i in itertools.count():
        part = unit.format(i=i)
        if size + len(part.encode()) > budget:
            return "".join(parts)
        parts.append(part)
        size += len(part.encode())
    raise AssertionError("unreachable")


def _lint_cpu_seconds(folder: Path, code: str, text: str, runs: int) -> float:
    """The least CPU time of `runs` runs of `lint --select CODE` on one memory holding `text`, after
    checking that its findings carry line numbers in order and within the file."""
    (folder / "feedback_big.md").write_text(text)
    memdir = MemoryDir(folder, cache=False)
    scan = memdir.scan()
    assert scan.memories, scan.problems
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        report = memdir.lint(select=[code])
        best = min(best, time.process_time() - start)
    lines = [f.line for f in report.findings if f.path == "feedback_big.md" and f.line]
    last = text.count("\n") + 1
    assert lines == sorted(lines) and all(1 <= n <= last for n in lines)
    return best


# The big memory's size, per rule: the least at which the quadratic bug, put back, still fails the test
# (checked by putting it back: counting newlines from the start in line_at and in F010's loop). A
# quarter of a MiB is enough where the findings are dense; dates and secrets need the whole MiB.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "where", "unit", "size"),
    [
        pytest.param("F010", "frontmatter", "k{i}: 'v'\n", _MiB // 4, id="22,000-keys"),
        pytest.param("B004", "body", "Why: x\n", _MiB // 4, id="37,000-labels"),
        pytest.param("B003", "body", "We ship tomorrow.\n", _MiB, id="58,000-relative-dates"),
        pytest.param("C", "body", "```\n", _MiB // 4, id="65,000-fences"),
        pytest.param("S002", "body", "API_KEY=Zq8vT2mXr4Lp9WnB6y\n", _MiB, id="39,000-secrets"),
    ],
)
def test_lint_work_on_a_memory_full_of_findings_grows_linearly(
    folder: Path, code: str, where: str, unit: str, size: int
) -> None:
    """Bug: rules counted the newlines from the start of the file for every finding (or fence,
    or key): quadratic, 7 to 34 seconds for one such 1 MiB memory on a 2-core machine.

    Checked by growth, not by the clock: the CPU time of the same lint on a big memory (`size`) and
    on one with a sixteenth of its findings, both in this test. Linear work makes that about 16 times
    (10 to 19 measured); the quadratic bug made it 80 to 250. The seconds themselves are
    scripts/hostile_bounds.py's (docs/reliability.md)."""

    def memory(budget: int) -> str:
        head = "---\nname: big\ndescription: big\ntype: feedback\n"
        if where == "frontmatter":
            return f"{head}{_filled(unit, budget)}---\nx"
        return f"{head}---\n{_filled(unit, budget)}"

    big = memory(size - 300)
    assert len(big.encode()) <= size
    small_seconds = _lint_cpu_seconds(folder, code, memory((size - 300) // GROWTH), runs=3)
    big_seconds = _lint_cpu_seconds(folder, code, big, runs=1)
    assert big_seconds < 3 * GROWTH * small_seconds, (small_seconds, big_seconds)


def test_line_numbers_of_findings_are_unchanged(folder: Path, make_memory: MakeMemory) -> None:
    """line_at gives what counting newlines gave, in the frontmatter, the body and MEMORY.md."""
    (folder / "feedback_x.md").write_text(
        "---\nname: x\ndescription: x\ntype: feedback\nname: again\n---\nIntro.\n\nWhy: it broke\n"
        f"**How to apply:** tomorrow\n\nKey {ANTHROPIC_KEY}\n"
    )
    report = MemoryDir(folder).lint(select=["F010", "B003", "B004", "S002"])
    assert [(f.code, f.line) for f in report.findings] == [("F010", 5), ("B004", 9), ("B003", 10), ("S002", 12)]


@pytest.mark.parametrize(
    ("name", "file_name"),
    [
        ("../../etc/passwd", "user_etc-passwd.md"),
        ("a/b\\c", "user_a-b-c.md"),
        ("..", None),
        ("用户在上海", "user_用户在上海.md"),
        ("x" * 300, "user_" + "x" * 100 + ".md"),
        ("nul\x00byte", None),
    ],
    ids=["dots-and-slashes", "separators", "only-dots", "non-latin", "very-long", "nul"],
)
def test_add_keeps_hostile_names_inside_the_folder(folder: Path, name: str, file_name: str | None) -> None:
    result = invoke_memdir("--dir", str(folder), "add", "user", name, "-d", "A hostile name")
    if file_name is None:
        assert result.exit_code == 2
        _one_error_line(result.stderr)
        assert {p.name for p in folder.iterdir()} <= {"MEMORY.md", ".memdir"}
    else:
        assert result.exit_code == 0, result.stderr
        assert (folder / file_name).is_file()
        assert not [p for p in folder.parent.rglob("*.md") if folder not in p.parents]


# --- secrets -------------------------------------------------------------------------------------


@pytest.fixture
def secret_folder(folder: Path) -> Path:
    """Secrets everywhere a person or an agent might paste one."""
    (folder / "feedback_deploy.md").write_text(
        f"---\nname: deploy key {GITHUB_TOKEN}\n"
        f"description: The staging key is {ANTHROPIC_KEY} and this description is long enough to be over the "
        "limit that the long-description rule checks for, which quotes nothing\n"
        f"type: feedback\napikey: {ANTHROPIC_KEY}\n---\n"
        f"Use DB_PASSWORD={DB_PASSWORD} to log in; token {GITHUB_TOKEN}.\n"
        f"Connect to postgres://admin:{URL_PASSWORD}@db.internal/app\n"
    )
    for i in (1, 2):  # D001 quotes the name, F007 the type
        (folder / f"user_dup{i}.md").write_text(
            f"---\nname: key {ANTHROPIC_KEY}\ndescription: dup {i}\ntype: {ANTHROPIC_KEY}\n---\nx\n"
        )
    (folder / "notes.md").write_text(f"No frontmatter but {ANTHROPIC_KEY}\n")
    (folder / "user_broken.md").write_text(f'---\nname: "broken {ANTHROPIC_KEY}\n---\nx\n')  # F002
    (folder / "user_lenient.md").write_text(f"---\nname: [lenient {ANTHROPIC_KEY}\n---\nx\n")  # F013, its fix
    (folder / "user_pw.md").write_text(f"---\nname: pw\ndescription: pw\ntype: user\npassword: {DB_PASSWORD}\n---\nx\n")
    (folder / "MEMORY.md").write_text(f"# Memory\nKey: {ANTHROPIC_KEY}\n")
    return folder


@pytest.mark.parametrize("format", ["text", "concise", "json", "github", "sarif"])
def test_lint_never_prints_a_secret_it_found(secret_folder: Path, format: str) -> None:
    """Bug: D001 (same name) and F007 (unknown type) quoted the value whole, key and all; S003 took
    the password of `postgres://admin:<password>@host` for an e-mail address and showed 4 characters."""
    result = invoke_memdir("--dir", str(secret_folder), "lint", "--select", "ALL", "--format", format)
    assert result.exit_code == 1
    assert "S002" in result.stdout
    assert not _leaks(result.stdout + result.stderr)


def test_lint_diff_redacts_the_secrets_in_what_it_would_change(secret_folder: Path) -> None:
    """Bug: `lint --diff` printed the new MEMORY.md lines, secrets and all."""
    result = invoke_memdir("--dir", str(secret_folder), "lint", "--diff", "--unsafe-fixes")
    assert result.exit_code == 1 and "+++ b/MEMORY.md" in result.stdout
    assert "[REDACTED:anthropic-api-key]" in result.stdout
    assert not _leaks(result.stdout + result.stderr)


def test_lint_fix_and_index_report_without_secrets(secret_folder: Path) -> None:
    for args in (["lint", "--fix", "--format", "json"], ["index"], ["index", "--format", "json"], ["index", "--check"]):
        result = invoke_memdir("--dir", str(secret_folder), *args)
        assert not _leaks(result.stdout + result.stderr), args


@pytest.mark.parametrize("format", ["text", "json"])
def test_show_redact_masks_every_secret_found_in_the_file(secret_folder: Path, format: str) -> None:
    for name in ("feedback_deploy.md", "user_pw.md"):
        plain = invoke_memdir("--dir", str(secret_folder), "show", name, "--format", format)
        assert _leaks(plain.stdout)  # without --redact, the file as it is
        redacted = invoke_memdir("--dir", str(secret_folder), "show", name, "--format", format, "--redact")
        assert redacted.exit_code == 0
        assert "[REDACTED:" in redacted.stdout
        assert not _leaks(redacted.stdout + redacted.stderr), redacted.stdout


def test_an_error_line_masks_a_secret_it_quotes(folder: Path, make_memory: MakeMemory) -> None:
    """Bug: `memory named 'key sk-ant-…' already exists` quoted the hand-written name whole."""
    make_memory("user_k.md", name=f"key {ANTHROPIC_KEY}")
    result = invoke_memdir("--dir", str(folder), "add", "user", f"key {ANTHROPIC_KEY}", "-d", "again")
    assert result.exit_code == 1
    assert "already exists" in _one_error_line(result.stderr)
    assert not _leaks(result.stdout + result.stderr)


def test_add_keeps_secrets_out_of_the_file_the_output_and_the_logs(folder: Path) -> None:
    body = f"Deploy with {ANTHROPIC_KEY}; DB_PASSWORD={DB_PASSWORD}"
    result = invoke_memdir("--dir", str(folder), "add", "project", "deploy", "-d", "How we deploy", "--body", body)
    assert result.exit_code == 0, result.stderr
    assert not _leaks(result.stdout + result.stderr)
    for path in folder.rglob("*"):  # the memory, MEMORY.md and everything in .memdir/ (the decisions log)
        if path.is_file():
            assert not _leaks(path.read_bytes().decode("utf-8", "replace")), path


_CRASHING = """
import sys
import memdir.folder as md

def lint(self, *args, **kwargs):
    api_key = {key!r}  # a local a traceback with locals would print
    raise RuntimeError("the linter fell over")

md.MemoryDir.lint = lint
sys.argv = ["memdir", "--dir", {folder!r}, "lint"]
from memdir.cli import main
main()
"""


@pytest.mark.slow
@pytest.mark.parametrize("debug", ["", "1"])
def test_an_unexpected_error_never_shows_locals(folder: Path, debug: str) -> None:
    env = {**os.environ, "MEMDIR_DEBUG": debug, "COLUMNS": "200"}
    script = _CRASHING.format(key=ANTHROPIC_KEY, folder=str(folder))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode != 0
    assert not _leaks(done.stdout + done.stderr)
    if debug:  # the traceback, as Python prints it: lines of code, never their variables
        assert "Traceback" in done.stderr and "the linter fell over" in done.stderr
    else:
        assert "internal error: RuntimeError: the linter fell over" in _one_error_line(done.stderr)


def test_the_typer_app_never_renders_locals() -> None:
    from memdir.cli import app

    assert app.pretty_exceptions_show_locals is False
    assert app.pretty_exceptions_enable is False


# --- permissions and disk ------------------------------------------------------------------------


_REAL_FSYNC = os.fsync


def _no_space(fd: int) -> None:
    """os.fsync as on a full disk, for memdir's temporary files (where buffered data meets the disk);
    the append-only decision log still goes through, so the failure is the write's own."""
    if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp"):
        raise OSError(errno.ENOSPC, "No space left on device")
    _REAL_FSYNC(fd)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd to tell files apart")
@pytest.mark.parametrize(
    "args",
    [
        ["add", "feedback", "lint first", "-d", "Run the linter first", "--why", "CI", "--how", "always"],
        ["index"],
        ["lint", "--fix"],
    ],
    ids=["add", "index", "lint-fix"],
)
def test_a_full_disk_is_one_line_and_nothing_half_written(
    folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """ENOSPC at the fsync of every write (the point where a full disk surfaces for buffered data)."""
    make_memory("user_a.md")
    make_memory("user_b.md", description="  spaced   out  ")  # something for lint --fix to fix
    (folder / "MEMORY.md").write_text("# Memory\n")
    MemoryDir(folder).init()  # .memdir/ exists beforehand, as in any used folder
    before = _snapshot(folder)
    monkeypatch.setattr(os, "fsync", _no_space)
    result = invoke_memdir("--dir", str(folder), *args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "No space left on device" in _one_error_line(result.stderr)
    assert _snapshot(folder) == before
    assert not list(folder.rglob("*.tmp"))  # not even hidden ones: a failed write removes its own


def test_a_write_the_system_refuses_is_one_line_and_nothing_half_written(
    folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EACCES where a read-only folder raises it (creating the temporary file), for root too."""
    make_memory("user_a.md")
    MemoryDir(folder).init()
    before = _snapshot(folder)

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(folder))

    monkeypatch.setattr(store, "_new_temporary", refuse)
    result = invoke_memdir("--dir", str(folder), "add", "user", "someone", "-d", "Someone")
    assert result.exit_code == 2
    assert f"Permission denied: {folder}" in _one_error_line(result.stderr)
    assert _snapshot(folder) == before


@pytest.fixture
def world_readable_folder() -> Iterator[Path]:
    """A memory folder another user can reach (pytest's tmp_path is private to this user)."""
    base = Path(tempfile.mkdtemp(prefix="memdir-ro-"))
    base.chmod(0o755)
    root = base / "memory"
    root.mkdir()
    (root / "user_a.md").write_text("---\nname: a\ndescription: About a\ntype: user\n---\nA.\n")
    (root / "MEMORY.md").write_text("# Memory\n")
    yield root
    for path in (base, *base.rglob("*")):
        if path.is_dir():
            path.chmod(0o755)
    shutil.rmtree(base, ignore_errors=True)


# Ways to run a command without the power to write through read-only permissions, tried in order:
# as this user when it is not root; as root without the capabilities that override file permissions
# (root still owns the checkout, wherever it sits, even in a folder only root may enter); as the
# user nobody, who must be able to reach the checkout and its interpreter.
_DROP_OVERRIDES = ["--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search", "--"]
_AS_NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups", "--"]
# Exits 0 when memdir imports and a read-only file refuses to be written: the test's precondition.
_PROBE = """
import sys
import memdir
try:
    open(sys.argv[1], "a")
except PermissionError:
    sys.exit(0)
sys.exit("a read-only file was opened for writing")
"""


def _without_override(probe_dir: Path) -> list[str]:
    """The prefix of a command line that runs memdir's interpreter unable to write through read-only
    permissions, found by trying each way on a read-only file in `probe_dir` before the test relies
    on it. Skips the test, with each way's reason, when none holds here."""
    probe = probe_dir / "read-only-probe"
    probe.write_text("")
    probe.chmod(0o444)
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0:
        ways = [[]]
    elif setpriv is None:
        pytest.skip("running as root without setpriv: root writes through read-only permissions")
    else:
        ways = [[setpriv, *_DROP_OVERRIDES], [setpriv, *_AS_NOBODY]]
    reasons = []
    try:
        for way in ways:
            command = [*way, sys.executable, "-c", _PROBE, str(probe)]
            done = subprocess.run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
            if done.returncode == 0:
                return way
            last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            reasons.append(f"{shlex.join(way) or 'as this user'}: {last}")
    finally:
        probe.unlink()
    pytest.skip("no way to run memdir here without writing through read-only permissions: " + "; ".join(reasons))


@pytest.mark.slow
@pytest.mark.parametrize(
    "args", [["index"], ["add", "user", "b", "-d", "About b"], ["lint", "--fix"]], ids=["index", "add", "lint-fix"]
)
def test_a_read_only_folder_is_one_line_and_nothing_written(world_readable_folder: Path, args: list[str]) -> None:
    root = world_readable_folder
    way = _without_override(root.parent)
    (root / "user_a.md").write_text("---\nname: a\ndescription:   About   a\ntype: user\n---\nA.\n")  # to fix
    before = _snapshot(root)
    for path in (root, *root.rglob("*")):
        path.chmod(0o555 if path.is_dir() else 0o444)
    env = {**os.environ, "HOME": str(root.parent), "MEMDIR_NO_CACHE": "1"}
    command = [*way, sys.executable, "-m", "memdir", "--dir", str(root), *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, cwd=root.parent)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Permission denied" in _one_error_line(done.stderr)
    assert _snapshot(root) == before


def _before_reading(rel: str, act: Callable[[str], object], monkeypatch: pytest.MonkeyPatch) -> None:
    """Run `act(path)` just before the scan reads the memory file `rel`: another process at work."""
    from memdir.core import store

    original = store.load_file

    def load_file(path: str, file_rel: str, *args: object, **kwargs: object) -> object:
        if file_rel == rel:
            act(path)
        return original(path, file_rel, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "load_file", load_file)


def test_a_memory_that_vanishes_mid_run_is_reported_and_the_rest_indexed(
    folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_memory("user_a.md")
    make_memory("user_b.md")
    _before_reading("user_a.md", os.unlink, monkeypatch)  # listed, then gone before it is read
    result = invoke_memdir("--dir", str(folder), "--no-cache", "index")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    text = (folder / "MEMORY.md").read_text()
    assert "(user_b.md)" in text and "(user_a.md)" not in text
    lint = invoke_memdir("--dir", str(folder), "lint")
    assert "Traceback" not in lint.stderr


def test_a_folder_that_vanishes_mid_run_is_one_line(
    folder: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_memory("user_a.md")
    make_memory("user_b.md")
    # user_a was read, so the run has an index to write; then `rm -rf` by another process, mid-scan
    _before_reading("user_b.md", lambda path: shutil.rmtree(folder, ignore_errors=True), monkeypatch)
    result = invoke_memdir("--dir", str(folder), "--no-cache", "index")
    assert result.exit_code == 2, result.stdout
    _one_error_line(result.stderr)
    assert not folder.exists()  # not brought back by a lock or a log


# --- concurrency ---------------------------------------------------------------------------------

# Each worker is a bare Python running its adds one after the other, each `memdir add` a process of its
# own; the four workers' adds run at the same time and contend for the folder's lock.
_WORKER = """
import json, subprocess, sys
memdir, root, worker, count = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for i in range(count):
    name = f"w{worker} item {i}"
    done = subprocess.run(
        [*memdir, "--dir", root, "-q", "add", "project", name,
         "-d", f"Decision {i} of worker {worker}: codename {worker * 1000 + i}", "--why", "tested",
         "--how", "always", "--force"],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        sys.exit(f"{name}: exit {done.returncode}: {done.stderr}")
"""
# Four writers already contend for the lock at every step; more only cost CPU (each add is a process).
WORKERS, ADDS_EACH, INDEX_RUNS = 4, 4, 6


@pytest.mark.slow
def test_concurrent_writers_a_watcher_and_index_runs_lose_nothing(folder: Path, make_memory: MakeMemory) -> None:
    import json
    import signal
    import time

    for i in range(30):
        make_memory(f"user_seed{i}.md", description=f"Seed memory number {i}")
    env = {**os.environ, "MEMDIR_DEBUG": ""}
    watch = subprocess.Popen(
        [sys.executable, "-m", "memdir", "--dir", str(folder), "watch", "--format", "json", "--debounce", "0.05"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    workers: list[subprocess.Popen[str]] = []
    try:
        assert watch.stdout is not None
        json.loads(watch.stdout.readline())  # the first index: the watcher is running
        memdir = json.dumps(memdir_command())
        workers = [
            subprocess.Popen(
                [sys.executable, "-S", "-c", _WORKER, memdir, str(folder), str(w), str(ADDS_EACH)],
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for w in range(WORKERS)
        ]
        runs = 0
        while runs < INDEX_RUNS and any(w.poll() is None for w in workers):  # bounded: a slow machine, no more work
            runs += 1
            index = run_memdir("--dir", str(folder), "-q", "index", env=env, timeout=60)
            assert index.returncode == 0, index.stderr
        for w in workers:
            assert w.wait(timeout=120) == 0, w.stderr.read() if w.stderr else ""
        time.sleep(1.0)  # let the watcher's last re-index land
    finally:
        for process in (*workers, watch):
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        try:
            watch.communicate(timeout=30)
        finally:
            for process in (*workers, watch):
                if process.poll() is None:
                    process.kill()
                    process.wait()
    assert watch.returncode == 130  # Ctrl-C, not a crash
    memdir = MemoryDir(folder)
    names = {m.name for m in memdir.list()}
    wanted = {f"w{w} item {i}" for w in range(WORKERS) for i in range(ADDS_EACH)}
    assert wanted <= names, wanted - names
    assert len(names) == 30 + WORKERS * ADDS_EACH
    assert not memdir.write_index(dry_run=True).changed  # `memdir index --check`
    assert not memdir.lint(select=["I001", "I003"]).findings
    text = (folder / "MEMORY.md").read_text()
    assert all(text.count(f"({m.path})") == 1 for m in memdir.list())
    assert not list(folder.rglob("*.tmp")) or all(p.name.startswith(".") for p in folder.rglob("*.tmp"))
