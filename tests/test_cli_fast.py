"""`memdir index` without typer (cli/fast.py): the same results as the typer command, and a
fallback to typer for every command line it does not fully understand."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

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


def test_fast_path_json_is_the_typer_json(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "memory")
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "--dir", str(folder), "index", "--format", "json", "--check"],
        capture_output=True, text=True, env=_env(tmp_path), timeout=60,
    )  # fmt: skip
    assert done.returncode == 1  # the hand-written MEMORY.md lacks the entries
    payload = json.loads(done.stdout)
    assert payload["changed"] is True and payload["entries"] == 5
