"""`memdir index` without typer (cli/fast.py): the same results as the typer command, and a
fallback to typer for every command line it does not fully understand."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import invoke_memdir

from memdir.cli.fast import _parse, run_fast

REPO = Path(__file__).resolve().parents[1]
TODAY = "2026-11-22"


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    env.update(HOME=str(home), MEMDIR_TODAY=TODAY, NO_COLOR="1", PYTHONIOENCODING="utf-8", **extra)
    return env


def _folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(REPO / "examples" / "memory", folder)
    (folder / "MEMORY.md").write_text("# Memory\n\nHand-written note.\n", encoding="utf-8")
    (folder / "broken.md").write_text('---\nname: "unclosed\n---\nbody\n', encoding="utf-8")
    return folder


VARIANTS = [
    ["--dir", "{f}", "index"],
    ["-C", "{f}", "-q", "index"],
    ["--dir={f}", "--no-cache", "index", "--check"],
    ["index", "--dir", "{f}", "--stdout"],  # global options after the command, as pre-commit passes them
    ["--dir", "{f}", "index", "--format", "json"],
    ["--dir", "{f}", "index", "-f", "json", "--check"],
    ["--dir", "{f}", "index", "--format=json", "--stdout", "--drop-missing"],
    ["--dir", "{f}/missing", "index"],  # an error: exit 2 and one line
]


@pytest.mark.parametrize("argv", VARIANTS, ids=[" ".join(v) for v in VARIANTS])
def test_fast_path_matches_the_typer_command(tmp_path: Path, argv: list[str]) -> None:
    fast_folder, typer_folder = _folder(tmp_path, "one"), _folder(tmp_path, "two")

    def args(folder: Path) -> list[str]:
        return [a.replace("{f}", str(folder)) for a in argv]

    assert _parse(args(fast_folder)) is not None, "this form should take the fast path"
    fast = subprocess.run(
        [sys.executable, "-m", "memdir", *args(fast_folder)],
        capture_output=True, text=True, env=_env(tmp_path), cwd=tmp_path, timeout=60,
    )  # fmt: skip
    typer = invoke_memdir(*args(typer_folder), cwd=tmp_path)
    assert "Traceback" not in fast.stderr
    assert fast.returncode == typer.exit_code

    def same(text: str) -> str:
        return text.replace(str(fast_folder), str(typer_folder))

    assert same(fast.stdout) == typer.stdout
    assert same(fast.stderr) == typer.stderr
    for name in ("MEMORY.md", "broken.md"):
        if (typer_folder / name).exists():
            assert (fast_folder / name).read_bytes() == (typer_folder / name).read_bytes()


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--help"],
        ["index", "--help"],
        ["index", "-h"],
        ["--version"],
        ["lint"],
        ["index", "--bogus"],
        ["index", "--format", "xml"],
        ["index", "--format"],
        ["index", "extra"],
        ["--dir"],
        ["--dir", "", "index"],
        ["-q", "--", "index"],
        ["index", "--", "--check"],
    ],
)
def test_anything_else_goes_to_typer(argv: list[str]) -> None:
    assert _parse(argv) is None
    assert run_fast(argv) is None


@pytest.mark.parametrize(("value", "fast"), [("1", True), ("yes", True), ("0", False), ("", False), ("maybe", None)])
def test_no_cache_environment_is_read_as_click_reads_it(
    monkeypatch: pytest.MonkeyPatch, value: str, fast: bool | None
) -> None:
    monkeypatch.setenv("MEMDIR_NO_CACHE", value)
    parsed = _parse(["index"])
    assert (None if parsed is None else parsed[0]["no_cache"]) == fast


def _folder_values() -> list[str]:
    return ["memory", "-q", "a=b"]


# The pieces the fast path reads, and near misses of them: every command line made of these is read
# by both parsers below. Global options go before the command, after it, or after its options.
_GLOBALS = [
    [], ["-q"], ["--quiet"], ["--no-cache"], ["--dir", "{d}"], ["-C", "{d}"], ["--dir={d}"], ["-C", "{d}", "-q"],
    ["--no-cache", "--dir={d}", "--quiet"], ["--dir", "{d}", "-C", "other"], ["-qC", "{d}"], ["-C{d}"], ["--di", "{d}"],
    ["--dir="], ["--no-cache=1"], ["--", "-q"], ["--version"],
]  # fmt: skip
_COMMANDS = [
    ["index"], ["index", "--check"], ["index", "--stdout", "--drop-missing", "--check"], ["index", "--format", "json"],
    ["index", "-f", "text", "--check"], ["index", "--format=json"], ["index", "--format", "xml"], ["index", "--format"],
    ["index", "-f=json"], ["index", "-fjson"], ["index", "--check", "--check"],
    ["index", "--format=json", "-f", "text"], ["index", "--"], ["index", "-h"], ["index", "--chec"], ["index", "extra"],
    ["hook", "session-start"], ["hook", "user-prompt-submit"], ["hook", "stop"], ["hook", "stop", "extra"], ["hook"],
    ["hook", "--", "stop"], ["hook", "start"], ["hook", "stop", "-h"], ["hooks", "install"], ["lint"],
]  # fmt: skip


def _command_lines() -> list[list[str]]:
    lines = []
    for before in _GLOBALS:
        for command in _COMMANDS:
            for value in _folder_values():
                given = [word.replace("{d}", value) for word in before]
                lines += [given + command, command[:1] + given + command[1:], command + given]
    return [list(line) for line in dict.fromkeys(tuple(line) for line in lines)]


def _readings(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> tuple[object, object]:
    """What the fast path and the typer command each hand to the runner of `index` or of a hook for
    `argv` (None from the fast path: it declined, and typer decides)."""
    import memdir.cli.fast as fast
    import memdir.cli.folder as folder_commands
    import memdir.cli.hooks as hook_commands
    import memdir.cli.index as index_module

    seen: list[object] = []

    def index(st: Any, *, format: Any, check: bool, stdout: bool, drop_missing: bool) -> int:
        seen.append(("index", st.dir_option, st.quiet, st.no_cache, str(format), st.output_format, check, stdout,
                     drop_missing))  # fmt: skip
        return 0

    def hook(event: str, st: Any) -> int:
        seen.append(("hook", event, st.dir_option, st.quiet, st.no_cache))
        return 0

    for module, name, fake in ((index_module, "run_index", index), (folder_commands, "run_index", index),
                               (fast, "run_hook", hook), (hook_commands, "run_hook", hook)):  # fmt: skip
        monkeypatch.setattr(module, name, fake)
    if run_fast(list(argv)) is None:
        return None, None
    fast_reading = seen.pop()
    invoke_memdir(*argv)
    return fast_reading, seen.pop() if seen else "typer did not run the command"


def test_the_fast_path_reads_every_command_line_it_takes_as_typer_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path cannot disagree with the real command: over every command line made of the
    pieces it reads and near misses of them, each it takes is one typer reads the same."""
    taken = 0
    for argv in _command_lines():
        fast, typer = _readings(monkeypatch, argv)
        if fast is not None:
            taken += 1
            assert fast == typer, argv
    assert taken > 500  # the plain forms really are taken: the comparison is not empty


@pytest.mark.parametrize("no_cache", ["", "1", " TRUE ", "yes", "on", "t", "0", "off", "No", "f", "maybe", "2"])
@pytest.mark.parametrize("output_format", ["", "json", " JSON ", "sarif", "bogus"])
def test_the_fast_path_reads_the_environment_as_typer_does(
    monkeypatch: pytest.MonkeyPatch, no_cache: str, output_format: str
) -> None:
    """MEMDIR_NO_CACHE (a boolean to click) and MEMDIR_OUTPUT_FORMAT, read as typer reads them."""
    monkeypatch.setenv("MEMDIR_NO_CACHE", no_cache)
    monkeypatch.setenv("MEMDIR_OUTPUT_FORMAT", output_format)
    for argv in (["index"], ["-q", "index", "--check"], ["index", "-f", "text"], ["--no-cache", "index"]):
        fast, typer = _readings(monkeypatch, argv)
        if fast is not None:
            assert fast == typer, argv
    assert (run_fast(["index", "--help"]) is None) and _parse_hook_taken(["hook", "stop"])


def _parse_hook_taken(argv: list[str]) -> bool:
    """A hook is never sent to typer over the environment: typer's exit 2 would stop a session's hook."""
    from memdir.cli.fast import _parse_hook

    return _parse_hook(argv) is not None


def test_fast_path_imports_neither_typer_nor_rich_nor_yaml(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "memory")
    (folder / "broken.md").unlink()
    probe = (
        "import sys\nfrom memdir.cli import main\nsys.argv = ['memdir', '--dir', sys.argv[1], 'index']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'pydantic', 'yaml', 'click'))\n"
        "print(code, heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(folder)], capture_output=True, text=True, env=_env(tmp_path), timeout=60
    )
    assert done.stdout.strip() == "0 []", done.stdout + done.stderr


# What a warm `memdir index` may import of memdir: the command line, the folder, the cache and the
# index. A module added here costs every session start its import; so does one of _NOT_AT_START.
_WARM_INDEX_MODULES = {
    "memdir", "memdir.version", "memdir.cli", "memdir.cli.fast", "memdir.cli.errors", "memdir.cli.state",
    "memdir.cli.index", "memdir.core", "memdir.core.errors", "memdir.core.config", "memdir.core.model",
    "memdir.core.index", "memdir.core.cache", "memdir.core.store", "memdir.text", "memdir.text.bulk", "memdir.folder",
    "memdir.core.reports",  # the run's summary, as text or JSON; no imports of its own beyond the above
    "memdir.text.lazyre",  # model's patterns, compiled on first use: what keeps a warm index from compiling them
    "memdir.core.plainyaml",  # the plain frontmatter reader model.py uses; its patterns compile on first use too
    "memdir.core.claude_code",  # where Claude Code keeps its folder: config.py's last resort; the standard library only
    "memdir.core.inputs",  # files read only when regular, JSON only so deep (claude_code, logs); standard library only
}  # fmt: skip
# The secret scanner and the masking (each cached row carries its masked line), YAML (nothing is
# parsed), the temporary files of a write with the compressors shutil brings (nothing is written),
# OpenSSL, the memory templates.
_NOT_AT_START = (
    "memdir.text.sensitive", "memdir.text.outward", "yaml", "tempfile", "shutil", "bz2", "lzma", "hashlib",
    "memdir.core.templates", "importlib.resources", "typer", "rich", "click", "pydantic",
)  # fmt: skip
_PROBE = (
    "import sys\nfrom memdir.cli import main\nsys.argv = ['memdir', *sys.argv[1:]]\n"
    "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
    "print(code, sorted(m for m in sys.modules if m.startswith('memdir')), file=sys.stderr)\n"
    "heavy = {_NOT_AT_START!r}\n"
    "print(sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy), file=sys.stderr)\n"
)


def _imported(tmp_path: Path, *argv: str, stdin: str = "") -> tuple[str, set[str], set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(_NOT_AT_START=set(_NOT_AT_START)), *argv],
        input=stdin, capture_output=True, text=True, env=_env(tmp_path), timeout=60,
    )  # fmt: skip
    code, _, ours = done.stderr.strip().splitlines()[-2].partition(" ")
    heavy = done.stderr.strip().splitlines()[-1]
    return code, set(json.loads(ours.replace("'", '"'))), set(json.loads(heavy.replace("'", '"')))


def _warm_folder(tmp_path: Path) -> Path:
    """A folder indexed once, whose files are old enough for the parse cache to keep them."""
    from memdir import MemoryDir

    folder = _folder(tmp_path, "memory")
    (folder / "broken.md").unlink()
    for path in folder.glob("*.md"):
        os.utime(path, (path.stat().st_mtime - 3600, path.stat().st_mtime - 3600))
    MemoryDir(folder).write_index()
    return folder


def test_a_warm_index_imports_only_what_it_needs(tmp_path: Path) -> None:
    """Start-up is most of a session-start index: a warm, quiet run imports the modules it needs
    and none of the ones it used to (figures in BENCHMARKS.md; here, what is imported)."""
    folder = _warm_folder(tmp_path)
    code, ours, heavy = _imported(tmp_path, "-q", "--dir", str(folder), "index")
    assert code == "0"
    assert ours <= _WARM_INDEX_MODULES, ours - _WARM_INDEX_MODULES
    assert heavy == set()


def test_every_dataclass_on_the_start_up_path_says_what_it_is() -> None:
    """A dataclass without a docstring has one written for it from `inspect.signature`, at every
    import: a cost each session start would pay for the missing line (in-process, no clock)."""
    import dataclasses
    import importlib

    undocumented = []
    for name in sorted(_WARM_INDEX_MODULES | {"memdir.integrations.claude_runtime", "memdir.text.outward"}):
        module = importlib.import_module(name)
        for value in vars(module).values():
            ours = isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name
            if ours and (value.__doc__ or "").startswith(f"{value.__name__}("):  # the one dataclasses wrote
                undocumented.append(f"{name}.{value.__name__}")
    assert undocumented == []


def test_an_index_that_rewrites_one_file_loads_no_yaml_and_no_tempfile(tmp_path: Path) -> None:
    """One memory changed, as Claude Code writes it (a session id starting with a digit): the fast
    frontmatter path reads it, and the atomic writes make their temporary files without tempfile
    (which brings shutil, random and the compressors)."""
    folder = _warm_folder(tmp_path)
    changed = folder / "user_role.md"
    text = changed.read_text(encoding="utf-8")
    changed.write_text(
        text.replace("description: ", "originSessionId: 402cd569-4fc4-4620-a8b9-5620a565c476\ndescription: Now ", 1),
        encoding="utf-8",
    )
    code, _, heavy = _imported(tmp_path, "-q", "--dir", str(folder), "index")
    assert code == "0" and "Now " in (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert heavy - {"memdir.text.sensitive", "memdir.text.outward"} == set()


def test_an_index_in_a_project_whose_pyproject_configures_other_tools_loads_no_toml_parser(tmp_path: Path) -> None:
    """`memdir index` in a session-start hook runs in the project's root; a pyproject.toml there that
    never says memdir cannot configure it, and importing tomllib to read it cost every session start."""
    folder = _warm_folder(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "app"\n\n[tool.ruff]\nline-length = 120\n')
    probe = (
        "import os, sys\nfrom memdir.cli import main\n"  # memdir from where the other probes take it
        "os.chdir(sys.argv[1])\nsys.argv = ['memdir', *sys.argv[2:]]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "print(code, 'tomllib' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(project), "-q", "--dir", str(folder), "index"],
        capture_output=True, text=True, env=_env(tmp_path), timeout=60,
    )  # fmt: skip
    assert done.stdout.split() == ["0", "False"], done.stdout + done.stderr


def test_the_session_start_hook_imports_no_writer_and_no_parser(tmp_path: Path) -> None:
    """The hook masks what it sends (so it needs the secret scanner), but on a warm folder it
    parses nothing and writes nothing."""
    folder = _warm_folder(tmp_path)
    start = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": str(folder)})
    code, _, heavy = _imported(tmp_path, "--dir", str(folder), "hook", "session-start", stdin=start)
    assert code == "0"
    assert "memdir.text.sensitive" in heavy
    assert heavy - {"memdir.text.sensitive", "memdir.text.outward"} == set()


def test_fast_path_json_is_the_typer_json(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "memory")
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "--dir", str(folder), "index", "--format", "json", "--check"],
        capture_output=True, text=True, env=_env(tmp_path), timeout=60,
    )  # fmt: skip
    assert done.returncode == 1  # the hand-written MEMORY.md lacks the entries
    payload = json.loads(done.stdout)
    assert payload["changed"] is True and payload["entries"] == 5
