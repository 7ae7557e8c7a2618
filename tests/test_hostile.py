"""Hostile files in a memory folder: each is reported as the culprit, and the rest of the folder is
still indexed and linted. docs/reliability.md has the table of what was tried and the bounds."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MakeMemory, invoke_memdir, run_memdir

from memdir import MemoryDir
from memdir.core.model import YAML_MAX_VALUES, FrontmatterError, parse_document
from scripts.hostile_bounds import billion_laughs, frontmatter


def _parse_error(text: str) -> str:
    """The error `text` is refused with, checked to be refused before YAML built a single value
    from it (what it costs in time and memory: scripts/hostile_bounds.py)."""
    import yaml.constructor

    built = [0]
    real = yaml.constructor.BaseConstructor.construct_object

    def counting(self: object, node: object, deep: bool = False) -> object:
        built[0] += 1
        return real(self, node, deep)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yaml.constructor.BaseConstructor, "construct_object", counting)
        with pytest.raises(FrontmatterError) as raised:
            parse_document(text)
    assert built[0] == 0, f"{built[0]} values built before the refusal"
    return str(raised.value)


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    assert "expands to more than" in _parse_error(frontmatter(billion_laughs()))


def test_an_alias_inside_itself_is_refused() -> None:
    assert "expands to more than" in _parse_error(frontmatter("loop: &x [*x]"))


def test_aliases_that_stay_small_still_load() -> None:
    doc = parse_document(frontmatter("base: &b {x: 1}\nmore: [*b, *b]"))
    assert doc.data["more"] == [{"x": 1}, {"x": 1}]


def test_the_value_bound_counts_every_copy_of_an_alias() -> None:
    items = ", ".join(["*a"] * 10)
    small = frontmatter(f"a: &a [{', '.join(['x'] * 99)}]\nb: [{items}]")  # 10 x 100 values: fine
    assert len(parse_document(small).data["b"]) == 10
    big = frontmatter(f"a: &a [{', '.join(['x'] * (YAML_MAX_VALUES // 10))}]\nb: [{items}, *a]")
    assert "expands" in _parse_error(big)


@pytest.mark.parametrize(
    "nesting",
    [
        pytest.param("[" * 200_000 + "]" * 200_000, id="brackets"),
        pytest.param("\n" + "- " * 200_000 + "x", id="dashes"),
        # YAML rejects the tab; Claude Code's retry reads it as two spaces, and then the dashes nest.
        pytest.param("\n\t" + "- " * 200_000 + "x", id="dashes-after-a-tab"),
        pytest.param("\n" + "".join(" " * i + f"k{i}:\n" for i in range(2_000)) + " " * 2_000 + "end", id="indents"),
    ],
)
def test_deep_nesting_is_an_error_not_a_crash(tmp_path: Path, nesting: str) -> None:
    # libyaml's composer segfaults on nesting this deep, which no except clause catches: run it in
    # a child process, so that a crash fails this test instead of killing the test run.
    path = tmp_path / "user_deep.md"
    path.write_text(frontmatter(f"nest: {nesting}"), encoding="utf-8")
    code = (
        "import sys; from memdir.core.model import parse_document, FrontmatterError\n"
        "try: parse_document(open(sys.argv[1], encoding='utf-8').read())\n"
        "except FrontmatterError as exc: print('refused:', exc)\n"
        "else: print('loaded')\n"
    )
    child = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert child.returncode == 0, child.stderr[-500:]
    assert child.stdout.startswith(("refused: frontmatter YAML nests too deep", "loaded"))


def test_shallow_nesting_still_loads() -> None:
    doc = parse_document(frontmatter("nest: " + "[" * 20 + "x" + "]" * 20))
    value = doc.data["nest"]
    for _ in range(19):
        value = value[0]
    assert value == ["x"]


def _hostile_folder(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_fine.md", description="the one good memory")
    (folder / "user_bomb.md").write_text(frontmatter(billion_laughs()))
    (folder / "user_deep.md").write_text(frontmatter("nest: " + "[" * 5_000 + "]" * 5_000))
    (folder / "random.md").write_bytes(bytes(range(256)) * 8)
    (folder / "folder.md").mkdir()
    (folder / "user_bom.md").write_text("\ufeff" + frontmatter("").replace("\n", "\r\n").replace("hostile", "bom"))
    (folder / "loop1.md").symlink_to("loop2.md")
    (folder / "loop2.md").symlink_to("loop1.md")
    (folder / "user_outside.md").symlink_to("/etc/hostname")
    (folder / "loopdir").symlink_to("loopdir")


def test_index_reports_each_hostile_file_and_indexes_the_rest(folder: Path, make_memory: MakeMemory) -> None:
    _hostile_folder(folder, make_memory)
    result = invoke_memdir("--dir", str(folder), "index")
    assert result.exit_code == 0, result.output
    index = (folder / "MEMORY.md").read_text()
    assert "user_fine.md" in index and "user_bom.md" in index
    for culprit in ("user_bomb.md", "user_deep.md", "random.md", "folder.md", "loop1.md", "loop2.md"):
        assert culprit in result.stderr and culprit not in index
    assert "leads in a loop" in result.stderr


def test_lint_reports_each_hostile_file_without_a_traceback(folder: Path, make_memory: MakeMemory) -> None:
    _hostile_folder(folder, make_memory)
    (folder / "user_fine.md").write_text(frontmatter("") + "See ./loopdir/x.md and ./loop1.md for more.\n")
    result = invoke_memdir("--dir", str(folder), "lint", "--extend-select", "ALL", "--format", "concise")
    assert result.exit_code == 1
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    for culprit in ("user_bomb.md", "user_deep.md", "random.md", "folder.md", "loop1.md", "user_outside.md"):
        assert culprit in result.stdout


def test_a_memory_index_that_is_a_symlink_loop_is_refused_clearly(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_fine.md")
    (folder / "MEMORY.md").unlink()
    (folder / "MEMORY.md").symlink_to("MEMORY.md")
    result = invoke_memdir("--dir", str(folder), "index")
    assert result.exit_code == 1  # refused, as for an index leading out of the folder
    assert "MEMORY.md is a symlink that leads in a loop" in result.stderr
    assert "Traceback" not in result.output


def test_a_memory_too_large_to_be_one_is_reported_without_reading_it(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_fine.md")
    big = folder / "user_big.md"
    with big.open("wb") as handle:  # 60 MB, sparse: written in no time, never read
        handle.write(frontmatter("").encode())
        handle.truncate(60 * 1024 * 1024)
    write = MemoryDir(folder).write_index()
    assert [p.path for p in write.unreadable] == ["user_big.md"]
    assert "limit 1,048,576" in write.unreadable[0].message
    assert [m.path for m in write.result.entries] == ["user_fine.md"]


def test_add_refuses_a_memory_too_large_to_be_read_before_writing_it(folder: Path) -> None:
    """Bug: `add` and `MemoryDir.add` wrote a 2.1 MB body ("Added", an index entry), which every
    reader then refused (`list` showed 0 memories, lint F003). Writers refuse by the readers' limit."""
    from memdir.core.errors import InvalidMemory
    from memdir.core.model import MemoryType, NewMemory
    from memdir.core.store import MAX_FILE_BYTES

    big = "word " * 420_000  # 2.1 MB
    result = invoke_memdir("--dir", str(folder), "add", "project", "big-one", "-d", "A big one", "--body", "-",
                           input=big)  # fmt: skip
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "project_big-one.md would be 2,100,0" in result.stderr and f"limit {MAX_FILE_BYTES:,}" in result.stderr
    memdir = MemoryDir(folder, today=dt.date(2026, 11, 22))
    with pytest.raises(InvalidMemory, match="memory files are small"):
        memdir.add(NewMemory(MemoryType.PROJECT, "lib-big", "A big one from the library", big))
    assert sorted(p.name for p in folder.glob("*.md")) == ["MEMORY.md"] and (folder / "MEMORY.md").read_text() == ""
    # Just under the limit: written, and read back by every command.
    fits = "w" * (MAX_FILE_BYTES - 200)
    assert invoke_memdir("--dir", str(folder), "add", "project", "fits", "-d", "Just fits", "--body", "-",
                         input=fits).exit_code == 0  # fmt: skip
    assert [m.name for m in memdir.scan().memories] == ["fits"]
    with pytest.raises(InvalidMemory, match="memory files are small"):
        memdir.update("fits", body=fits + "w" * 400)
    assert (folder / "project_fits.md").read_text().count("w") < MAX_FILE_BYTES


@pytest.mark.skipif(os.name != "posix", reason="NUL and / cannot be in a POSIX file name; this checks the rest")
def test_names_with_dots_and_foreign_text_load(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_..hidden-not.md", name="dots")
    make_memory("user_用户在上海.md", name="用户在上海", description="Ünïcödé " * 40)
    make_memory("user_" + "x" * 240 + ".md", name="long")
    write = MemoryDir(folder).write_index()
    assert not write.unreadable
    assert {m.path for m in write.result.entries} >= {"user_用户在上海.md", "user_..hidden-not.md"}


# --- values YAML reads as dates but that name no day -------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [("expires", "2026-02-30"), ("created", "2026-13-01"), ("updated", "2026-11-24 25:00:00")],
)
def test_an_impossible_date_is_read_as_text_and_named_by_lint(
    folder: Path, make_memory: MakeMemory, field: str, value: str
) -> None:
    make_memory("project_typo.md", description="Staging runs on kubernetes", **{field: value})
    make_memory("user_fine.md")
    [memory] = [m for m in MemoryDir(folder).list() if m.path == "project_typo.md"]
    assert memory.fields[field] == value
    assert memory.date(field) == (dt.date(2026, 11, 24) if field == "updated" else None)  # the day is right
    for command in (["recall", "kubernetes"], ["index"], ["stats"], ["list"], ["prune", "--dry-run"]):
        result = invoke_memdir("--dir", str(folder), *command)
        assert result.exit_code == 0, (command, result.output)
        assert "internal error" not in result.output
    assert "project_typo.md" in (folder / "MEMORY.md").read_text()
    result = invoke_memdir("--dir", str(folder), "lint", "--select", "F011", "--format", "concise")
    assert result.exit_code == 1 and "project_typo.md" in result.stdout and f"`{field}`" in result.stdout


# --- files that are not regular files ---------------------------------------------------------------


@pytest.mark.slow  # five memdir processes each
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("pipe", ["feedback_pipe.md", "MEMORY.md"])
def test_a_named_pipe_is_reported_not_opened(folder: Path, make_memory: MakeMemory, pipe: str) -> None:
    """Opening a FIFO for reading waits for a writer that never comes: every command hung."""
    make_memory("user_fine.md", description="Prefers kubernetes")
    (folder / pipe).unlink(missing_ok=True)
    os.mkfifo(folder / pipe)
    for command in (["recall", "kubernetes"], ["lint"], ["stats"], ["list"], ["index", "--stdout"]):
        child = run_memdir("--dir", str(folder), *command, timeout=60)  # a process: a hang times out
        assert "Traceback" not in child.stderr and "internal error" not in child.stderr, (command, child.stderr)
        if command[0] == "lint":
            assert pipe in child.stdout and "not a regular file" in child.stdout
        elif pipe != "MEMORY.md":
            assert child.returncode == 0, (command, child.stderr)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_file_swapped_for_a_pipe_after_its_stat_is_not_opened_blocking(folder: Path, make_memory: MakeMemory) -> None:
    from memdir.core.cache import ParseCache
    from memdir.core.store import load_file

    path = make_memory("user_fine.md")
    status = os.stat(path)  # what the listing saw
    path.unlink()
    os.mkfifo(path)
    problem = load_file(str(path), "user_fine.md", ParseCache.disabled(), status)
    assert "not a regular file" in problem.message  # type: ignore[union-attr]


# --- tool state in .memdir/ that is not a regular file -------------------------------------------------

STATE_FILES = ["recall.jsonl", "log.jsonl", "recall-index", "parse-cache"]


def _pipe(path: Path) -> None:
    """Make `path` a named pipe (again: a command may have replaced it with a regular file)."""
    if path.is_fifo():
        return
    path.unlink(missing_ok=True)
    os.mkfifo(path)


@pytest.mark.slow  # five memdir processes each
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("name", STATE_FILES)
def test_a_named_pipe_in_the_state_folder_never_blocks_a_command(
    tmp_path: Path, make_memory: MakeMemory, name: str
) -> None:
    """Every reader of .memdir/ opened its files blocking, and appends opened a pipe waiting for a
    reader: the session-start hook, stats, recall, history and prune hung for good."""
    import json

    project = tmp_path / "project"
    folder = project / ".claude" / "memory"
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "feature/kubernetes", str(project)], check=True)  # a recall topic
    (project / ".memdir.toml").write_text("[context]\nrecall-on-start = true\n")
    make_memory("user_fine.md", "Deploys go to kubernetes.", folder, description="Prefers kubernetes")
    make_memory("project_old.md", root=folder, description="Release freeze", expires="2026-01-01")
    (folder / ".memdir").mkdir()
    commands = (["hook", "session-start"], ["recall", "kubernetes"], ["stats"], ["history", "user_fine"], ["prune"])
    for command in commands:
        _pipe(folder / ".memdir" / name)
        child = run_memdir(*command, input=json.dumps({"cwd": str(project)}), cwd=project, timeout=30)
        output = child.stdout + child.stderr
        assert "Traceback" not in output and "internal error" not in output, (command, output)
        if command[0] == "prune" and name == "log.jsonl":  # the move is done and listed; the log refuses it
            assert child.returncode == 2 and "archived project_old.md -> .archive/project_old.md" in child.stdout
            assert "not a regular file" in child.stderr and "log.jsonl" in child.stderr
            continue
        assert child.returncode == 0, (command, output)
        if command[0] == "hook":
            assert "Prefers kubernetes" in json.loads(child.stdout)["hookSpecificOutput"]["additionalContext"]
        elif command[0] == "recall":
            assert "user_fine.md" in child.stdout
        if name in ("recall.jsonl", "log.jsonl") and command[0] == "stats":
            assert "not a regular file" in child.stderr, output
        if name == "recall.jsonl" and command[0] == "recall":
            assert "recall not logged: not a regular file" in child.stderr, output
    assert (folder / ".archive" / "project_old.md").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_state_readers_and_appends_refuse_a_pipe(tmp_path: Path) -> None:
    from memdir.core.cache import ParseCache
    from memdir.core.store import append_lines, folder_lock, open_state_file, read_jsonl

    pipe = tmp_path / "log.jsonl"
    os.mkfifo(pipe)
    assert read_jsonl(pipe) == []  # read as a log that is not there
    os.mkfifo(tmp_path / "parse-cache")
    assert ParseCache.load(tmp_path).get("x.md", (0, 0, 0, 0)) is None  # no cache: everything parsed afresh
    with pytest.raises(OSError, match="not a regular file"):
        open_state_file(pipe)
    with pytest.raises(OSError, match="not a regular file"):  # no reader: the open would have waited for one
        append_lines(pipe, b"{}\n")
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    try:  # a reader: the open succeeds, and the file is refused all the same, nothing written
        with pytest.raises(OSError, match="not a regular file"):
            append_lines(pipe, b"{}\n")
        assert os.read(reader, 10) == b""
    finally:
        os.close(reader)
    assert pipe.is_fifo()
    (tmp_path / ".memdir").mkdir()
    os.mkfifo(tmp_path / ".memdir" / "lock")
    with pytest.raises(OSError, match="not a regular file"), folder_lock(tmp_path):
        pass


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_in_place_of_the_index_history_is_named_not_waited_on(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_fine.md")
    (folder / "MEMORY.md").write_text("# Memory\n\n- [fine](user_fine.md) — an old description the rewrite replaces\n")
    (folder / ".memdir").mkdir(exist_ok=True)
    os.mkfifo(folder / ".memdir" / "MEMORY.md.history")
    child = subprocess.run([sys.executable, "-m", "memdir", "--dir", str(folder), "index"],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert "Traceback" not in child.stderr and "MEMORY.md.history" in child.stderr, child.stderr
    assert child.returncode == 0 and "an old description" not in (folder / "MEMORY.md").read_text()  # rewritten


# --- user text is never markup -------------------------------------------------------------------

_MARKUP_LIKE = ("[/tmp/app.log]", "[x]", "[bold]", "[link=https://example.com]docs[/link]", ":warning:")


def _markup_folder(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("feedback_logs.md", name="logs", description="Logs go to [/tmp/app.log]")
    make_memory("feedback_done.md", name='"[bold]done"', description='"Mark done with [x] :warning:"')
    make_memory("user_[link=https:x]c.md", name="linked", description="see [link=https://example.com]docs[/link]")
    make_memory("user_old.md", expires="2020-01-01")


def test_list_prints_brackets_in_user_text_as_written(folder: Path, make_memory: MakeMemory) -> None:
    _markup_folder(folder, make_memory)
    result = invoke_memdir("--dir", str(folder), "list")
    assert result.exit_code == 0, result.output
    for text in (*_MARKUP_LIKE, "[bold]done"):
        assert text in result.stdout
    assert result.stdout.count("[not indexed]") == 1  # memdir's own flag (user_old.md) was lost as a style too


def test_every_report_prints_brackets_in_user_text_as_written(folder: Path, make_memory: MakeMemory) -> None:
    _markup_folder(folder, make_memory)
    (folder / "user_[x].md").write_text("no frontmatter [/tmp/app.log]\n")  # a lint finding names it
    assert invoke_memdir("--dir", str(folder), "index").exit_code == 0
    recalled = invoke_memdir("--dir", str(folder), "recall", "where do logs go")
    assert recalled.exit_code == 0 and "[/tmp/app.log]" in recalled.stdout, recalled.output
    linted = invoke_memdir("--dir", str(folder), "lint", "--extend-select", "ALL")
    assert linted.exit_code == 0 and "user_[x].md" in linted.stdout, linted.output
    for command in (("history", "feedback_done.md"), ("stats",), ("rules",), ("where",)):
        result = invoke_memdir("--dir", str(folder), *command)
        assert result.exit_code == 0 and "Error" not in result.output, (command, result.output)


# --- numbers too long to be numbers ---------------------------------------------------------------


@pytest.mark.parametrize("yaml_path", [False, True], ids=["simple", "yaml"])
def test_an_integer_of_thousands_of_digits_is_read_as_text(
    folder: Path, make_memory: MakeMemory, yaml_path: bool
) -> None:
    # Python converts no int of over 4,300 digits to text and none over 1e308 to a float: as an int,
    # one such value made every command that read the file an internal error.
    huge = "9" * 5_000
    extra = {"meta": "{kind: x}", "hexed": "0x" + "f" * 5_000, "sexagesimal": "1" + ":59" * 400} if yaml_path else {}
    make_memory("project_huge.md", description="Staging runs on kubernetes", importance=huge, count=huge,
                tags=f"[a, {huge}]", **extra)  # fmt: skip
    make_memory("user_fine.md")
    [memory] = [m for m in MemoryDir(folder).list() if m.path == "project_huge.md"]
    assert memory.fields["count"] == huge and memory.fields["tags"] == ["a", huge]
    assert memory.importance == 0.5
    if yaml_path:
        assert memory.fields["hexed"] == extra["hexed"] and memory.fields["sexagesimal"] == extra["sexagesimal"]
    for command in (["index"], ["list"], ["list", "--format", "json"], ["recall", "kubernetes"], ["stats"],
                    ["show", "project_huge.md", "--format", "json"], ["context"]):  # fmt: skip
        result = invoke_memdir("--dir", str(folder), *command)
        assert result.exit_code == 0, (command, result.output)
        assert "internal error" not in result.output
    assert "project_huge.md" in (folder / "MEMORY.md").read_text()
    result = invoke_memdir("--dir", str(folder), "lint", "--select", "F011", "--format", "concise")
    assert result.exit_code == 1 and "project_huge.md" in result.stdout and "`importance`" in result.stdout


def test_an_integer_of_ordinary_length_is_still_a_number() -> None:
    long, longer = "9" * 300, "1" + "0" * 300  # the largest kept, the smallest read as text
    kept = parse_document(f"---\na: {long}\nb: [{long}]\nc: {{x: {long}}}\n---\n").data
    assert kept == {"a": int(long), "b": [int(long)], "c": {"x": int(long)}}
    text = parse_document(f"---\na: {longer}\nc: {{x: {longer}}}\n---\n").data
    assert text == {"a": longer, "c": {"x": longer}}


# --- deep folders ---------------------------------------------------------------------------------


def test_a_thousand_nested_folders_are_listed_without_recursion(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_fine.md", description="the memory at the top")
    levels = [folder / "d"]
    for _ in range(1_199):
        levels.append(levels[-1] / "d")
    try:
        for level in levels:  # one at a time: Path.mkdir(parents=True) itself recurses once per level
            level.mkdir()
        make_memory("user_deep.md", root=levels[-1], description="the memory at the bottom")
        make_memory("user_beside.md", root=folder / "team", description="a sub-folder after the deep one")
        paths = [m.path for m in MemoryDir(folder).list()]
        assert paths == ["user_fine.md", "d/" * 1_200 + "user_deep.md", "team/user_beside.md"]
        for command in (["index"], ["list"], ["lint"], ["recall", "memory at the bottom"], ["stats"]):
            result = invoke_memdir("--dir", str(folder), *command)
            assert result.exit_code in (0, 1) and "internal error" not in result.output, (command, result.output)
        assert "user_fine.md" in (folder / "MEMORY.md").read_text()
    finally:  # bottom up: shutil.rmtree, and so pytest's own clean-up, recurses once per level
        for level in reversed(levels):
            for path in level.glob("*.md"):
                path.unlink()
            if level.exists():
                level.rmdir()


@pytest.mark.skipif(os.mkdir not in os.supports_dir_fd, reason="makes each level relative to the last (POSIX)")
def test_a_folder_too_deep_to_open_is_named_and_the_rest_served(folder: Path, make_memory: MakeMemory) -> None:
    make_memory("user_fine.md", description="the memory at the top")
    name = "n" * 250
    fd = os.open(folder, os.O_RDONLY)
    try:  # each level made relative to the last: the whole path is longer than the system takes
        for _ in range(20):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    scan = MemoryDir(folder).scan()
    assert [m.path for m in scan.memories] == ["user_fine.md"]
    [problem] = scan.problems
    assert problem.path.startswith(name + "/") and "cannot be listed" in problem.message
    result = invoke_memdir("--dir", str(folder), "index")
    assert result.exit_code == 0 and "cannot be listed" in result.stderr, result.output[:2000]
    assert "user_fine.md" in (folder / "MEMORY.md").read_text()
