"""Packaging: the CLI starts without its heavy dependencies, and the release files are ready to publish.

The tests run real interpreters in subprocesses. The sdist and the wheel are built once (the wheel
from the sdist) and kept in .cache/dist/ under a digest of the source tree, so parallel workers and
later runs of an unchanged tree share them; twine checks both; pip installs the wheel into a fresh
virtual environment, its dependencies taken from this one (no package index), and the installed
`memdir` command is driven from a temporary folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest
from conftest import cached_build, offline_pip_env, source_digest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("anthropic", "watchdog", "mcp", "mcp_types")  # mcp: only `memdir mcp` loads it
TODAY = "2026-11-22"


def _env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MEMDIR_DIR", "MEMDIR_DEBUG", "CLAUDE_CONFIG_DIR", "PYTHONPATH")
    }
    env.update(HOME=str(home), MEMDIR_TODAY=TODAY, NO_COLOR="1", PYTHONIOENCODING="utf-8")
    return env


# Runs the CLI the way `python -m memdir ARGS` does, then reports which heavy modules got imported.
_PROBE = """
import json, runpy, sys
heavy = {heavy!r}
argv = {argv!r}
if argv is None:
    import memdir.cli
    memdir.cli.app  # noqa: B018
    code = 0
else:
    sys.argv = ["memdir", *argv]
    try:
        runpy.run_module("memdir", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
print("\\nPROBE " + json.dumps({{"code": code, "loaded": loaded}}))
"""


@pytest.mark.parametrize(
    "argv",
    [
        None,
        ["--help"],
        ["index", "--help"],
        ["--version"],
        ["--dir", "{folder}", "index"],
        ["--dir", "{folder}", "lint"],
    ],
    ids=["import-cli", "help", "index-help", "version", "index", "lint"],
)
def test_cli_start_up_imports_no_heavy_module(tmp_path: Path, argv: list[str] | None) -> None:
    """DESIGN.md: `anthropic` and `watchdog` are imported only by the commands that use them."""
    folder = tmp_path / "memory"
    shutil.copytree(REPO / "examples" / "memory", folder)
    if argv is not None:
        argv = [a.replace("{folder}", str(folder)) for a in argv]
    probe = _PROBE.format(heavy=HEAVY, argv=argv)
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=_env(tmp_path),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("PROBE ")]
    assert lines, f"probe printed nothing (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    report = json.loads(lines[-1].removeprefix("PROBE "))
    assert report["code"] in (0, 1), (report, done.stderr)
    if argv and "--help" in argv:
        assert "Usage" in done.stdout, done.stdout
    assert report["loaded"] == [], f"memdir {argv} imported {report['loaded']}"


# --- the wheel ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dist() -> tuple[Path, Path]:
    """The sdist, and the wheel built from that sdist: what a release uploads, and proof that the
    sdist alone builds. Built once per source tree (cached_build). A build failure is the project's
    fault: it fails, never skips."""
    out = _built_dist()
    sdists, wheels = sorted(out.glob("memdir-*.tar.gz")), sorted(out.glob("memdir-*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, (sdists, wheels)
    return sdists[0], wheels[0]


def _built_dist() -> Path:
    """The folder of the sdist and wheel of this source tree, built if no run has built them yet."""

    def build(out: Path) -> None:
        offline = offline_pip_env()
        # Each of the two builds installs the build backend into an isolated environment of its
        # own: from conftest's wheelhouse, offline, when it has it (without byte-compiling the
        # backend, which runs once); from the index otherwise, or when that build failed.
        command = [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)]
        env = {**os.environ, "PIP_COMPILE": "0"}
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=out, env={**env, **offline})
        if done.returncode != 0 and offline:
            done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=out, env=env)
        assert done.returncode == 0, f"building failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"

    return cached_build("dist", source_digest(), build)


@pytest.fixture(scope="module")
def wheel(dist: tuple[Path, Path]) -> Path:
    return dist[1]


def test_twine_check_strict_passes(dist: tuple[Path, Path]) -> None:
    """The metadata and the README render as PyPI would take them (twine is in the `test` extra)."""
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, dist)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_metadata_is_ready_to_publish(wheel: Path) -> None:
    from memdir.version import __version__

    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"memdir-{__version__}.dist-info/METADATA").decode("utf-8")
    headers = metadata.split("\n\n", 1)[0].splitlines()
    urls = {line.split(": ", 1)[1].split(",", 1)[0] for line in headers if line.startswith("Project-URL: ")}
    assert {"Homepage", "Documentation", "Repository", "Issues", "Changelog"} <= urls
    classifiers = {line.removeprefix("Classifier: ") for line in headers if line.startswith("Classifier: ")}
    assert {"Typing :: Typed", "Environment :: Console", "Programming Language :: Python :: 3.11"} <= classifiers
    # PEP 639: the SPDX expression supersedes license classifiers; PyPI rejects an upload with both.
    assert "License-Expression: MIT AND CC-BY-SA-4.0" in headers and not any(
        c.startswith("License ::") for c in classifiers
    )
    assert "memdir/py.typed" in names  # PEP 561: type checkers read memdir's annotations
    assert {f"memdir-{__version__}.dist-info/licenses/{name}" for name in ("LICENSE", "NOTICE")} <= set(names)


def _tracked(folder: str) -> set[str]:
    """The files of a source folder as git tracks them (the source tree without git: its files)."""
    done = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", folder], capture_output=True, timeout=60)
    if done.returncode == 0 and done.stdout:
        return {name for name in done.stdout.decode().split("\0") if name and (REPO / name).is_file()}
    return {
        p.relative_to(REPO).as_posix()
        for p in (REPO / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_sdist_holds_what_building_and_testing_need(dist: tuple[Path, Path]) -> None:
    """`make test` and `make check` from an unpacked sdist: the tests, their fixtures, the scripts
    they import, the docs they check, and the files at the root they read."""
    with tarfile.open(dist[0]) as archive:
        prefix = archive.getnames()[0].split("/", 1)[0]
        names = {n.removeprefix(prefix + "/") for n in archive.getnames()}
    root_files = {
        "pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", "NOTICE", "Makefile", "action.yml", "BENCHMARKS.md",
        ".pre-commit-hooks.yaml", ".pre-commit-config.yaml", ".ci/run",
    }  # fmt: skip
    assert root_files <= names, sorted(root_files - names)
    for folder in ("memdir", "tests", "scripts", "docs", "examples"):
        missing = _tracked(folder) - names
        assert not missing, f"the sdist leaves out {sorted(missing)[:10]}"
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_wheel_ships_the_templates(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        scripts = archive.read(entry_points).decode("utf-8")
    shipped = {
        n.removeprefix("memdir/core/templates/") for n in names if re.fullmatch(r"memdir/core/templates/[^/]+\.md", n)
    }
    in_source = {p.name for p in (REPO / "memdir" / "core" / "templates").glob("*.md")}
    assert {"user.md", "feedback.md", "project.md", "reference.md"} <= shipped
    assert shipped == in_source
    assert re.search(r"^memdir\s*=\s*memdir\.cli:main\s*$", scripts, re.MULTILINE), scripts
    assert not any(n.startswith(("tests/", "examples/")) for n in names)


def _template_pattern(template: str) -> list[re.Pattern[str]]:
    """One regex per template line: literal text, each $placeholder standing for some text."""
    patterns = []
    for line in template.rstrip("\n").split("\n"):
        parts = re.split(r"\$\{?(\w+)\}?", line)
        regex = "".join(re.escape(p) if i % 2 == 0 else ".+" for i, p in enumerate(parts))
        patterns.append(re.compile(regex))
    return patterns


def _dependencies_of_this_venv(wheel: Path, tmp_path: Path) -> Path:
    """A folder of links to the distributions installed here that the wheel's declared dependencies
    need (their Requires-Dist, followed to the end, extras included), and pip's: for a fresh venv to
    install the wheel without a package index. Only those: a dependency the wheel fails to declare is
    missing there, as it would be from PyPI."""
    import email
    import importlib.metadata as metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        declared = email.message_from_string(archive.read(name).decode("utf-8")).get_all("Requires-Dist") or []
    needed: dict[str, metadata.Distribution] = {}
    seen: set[tuple[str, str]] = set()
    queue = [(Requirement(r), "") for r in declared] + [(Requirement("pip"), "")]
    while queue:
        requirement, extra = queue.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        key = canonicalize_name(requirement.name)
        for wanted in ("", *sorted(requirement.extras)):
            if (key, wanted) in seen:
                continue
            seen.add((key, wanted))
            try:
                needed[key] = metadata.distribution(requirement.name)
            except metadata.PackageNotFoundError:
                break  # pip says it is missing
            queue += [(Requirement(r), wanted) for r in needed[key].requires or []]
    view = tmp_path / "dependencies"
    view.mkdir()
    for dist in needed.values():
        site = Path(str(dist.locate_file("")))
        for top in sorted({Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}):
            if top != "__pycache__" and (site / top).exists() and not (view / top).exists():
                (view / top).symlink_to(site / top)
    return view


def test_installed_wheel_runs_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    """pip installs the wheel into a new virtual environment, resolving its declared dependencies
    (no --no-deps) against those packages of this one that they need, which a .pth file puts on the
    new one's path; no package index, so no network and no download. The pip that runs is this
    environment's too."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, clear=True).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    Path(purelib, "dependencies.pth").write_text(f"{_dependencies_of_this_venv(wheel, tmp_path)}\n")
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-index", "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, timeout=900, env={**_env(tmp_path), "PIP_NO_INPUT": "1"},
    )  # fmt: skip
    assert install.returncode == 0, f"installing the wheel failed:\n{install.stdout[-3000:]}\n{install.stderr[-3000:]}"

    work = tmp_path / "work"
    work.mkdir()
    env = _env(tmp_path)
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env.pop("VIRTUAL_ENV", None)

    def memdir(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(bindir / "memdir"), *args], cwd=work, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, f"memdir {' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
        return done

    # The installed package is the one that runs, not the source tree.
    where = subprocess.run(
        [str(python), "-c", "import memdir, memdir.core.templates; print(memdir.__file__)"],
        cwd=work, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).resolve().is_relative_to(env_dir.resolve()), where.stdout

    folder = work / "X"
    memdir("--dir", str(folder), "init")
    description = "Run the linter before every commit"
    memdir(
        "--dir", str(folder), "add", "feedback", "some-rule", "-d", description,
        "--why", "CI was red for a day over unlinted code", "--how", "Before any git commit",
    )  # fmt: skip
    memdir("--dir", str(folder), "index")

    written = (folder / "feedback_some-rule.md").read_text(encoding="utf-8")
    with zipfile.ZipFile(wheel) as archive:
        template = archive.read("memdir/core/templates/feedback.md").decode("utf-8")
    lines = written.rstrip("\n").split("\n")
    patterns = _template_pattern(template)
    assert len(lines) == len(patterns), written
    for line, pattern in zip(lines, patterns, strict=True):
        assert pattern.fullmatch(line), f"{line!r} does not come from template line {pattern.pattern!r}"
    assert "name: some-rule" in lines and f"description: {description}" in lines and "type: feedback" in lines
    assert "**Why:** CI was red for a day over unlinted code" in lines
    assert "**How to apply:** Before any git commit" in lines
    assert f"created: {TODAY}" in lines

    index = (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert f"- [some-rule](feedback_some-rule.md) — {description}" in index.splitlines()
    check = subprocess.run(
        [str(bindir / "memdir"), "--dir", str(folder), "index", "--check"],
        cwd=work, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr

    version = subprocess.run(
        [str(python), "-m", "memdir", "--version"], cwd=work, env=env, capture_output=True, text=True, timeout=60
    )
    assert version.returncode == 0, version.stderr
    assert re.fullmatch(r"memdir \d+\.\d+\.\d+\S*\n", version.stdout), version.stdout


def test_a_dist_built_already_asks_for_no_wheelhouse(dist: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug (issue 18 review): every run asked for conftest's wheelhouse before it looked for the
    dist it had built already. Where there is none and no network, pip's retries of the wheelhouse
    build took 46 s (a refused connection; far longer where packets are dropped), in every run,
    for a dist it then did not build."""

    def no_wheelhouse() -> dict[str, str]:
        raise AssertionError("the wheelhouse was asked for, with the dist built already")

    monkeypatch.setattr(sys.modules[__name__], "offline_pip_env", no_wheelhouse)
    assert _built_dist() == dist[0].parent
