"""action.yml, the GitHub Action: a valid composite action whose scripts run `memdir lint --format github`.

The structure is checked in-process. The scripts themselves run under bash, with the installed
`memdir` replaced by this checkout (`python -m memdir`); installing from an index is left to
test_packaging.py, which installs the wheel.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "lint_fixtures"
needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


def action() -> dict[str, Any]:
    loaded = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def step(name: str) -> dict[str, Any]:
    return next(s for s in action()["runs"]["steps"] if s.get("name") == name)


def test_a_composite_action_with_documented_inputs() -> None:
    spec = action()
    assert spec["name"] and spec["description"] and len(spec["description"]) <= 125  # Marketplace's limit
    assert spec["runs"]["using"] == "composite"
    assert set(spec["inputs"]) == {"dir", "args", "version", "python-version", "working-directory"}
    for name, given in spec["inputs"].items():
        assert given["description"].strip() and "default" in given, name
    for given in spec["runs"]["steps"]:
        assert "name" in given
        assert ("uses" in given) != ("run" in given), given["name"]
        if "run" in given:
            assert given["shell"] == "bash", given["name"]
            # Inputs reach a script through env only: `${{ inputs.x }}` in the text would run as shell code.
            assert "${{" not in given["run"], given["name"]
    setup = step("Set up Python for memdir")
    assert setup["uses"].startswith("actions/setup-python@")
    docs = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    for name in spec["inputs"]:
        assert f"`{name}`" in docs, f"docs/ci.md does not describe the input {name}"


def _run_step(name: str, tmp_path: Path, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """One `run` step's script under bash, with the step's env filled as GitHub would from `env`."""
    given = step(name)
    script = tmp_path / f"{name.replace(' ', '-')}.sh"
    script.write_text(given["run"], encoding="utf-8")
    outputs = tmp_path / "github-output"
    outputs.touch()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "PYTHONPATH"))}
    full = {**base, "GITHUB_OUTPUT": str(outputs), "RUNNER_TEMP": str(tmp_path), "NO_COLOR": "1", **env}
    return subprocess.run(["bash", str(script)], cwd=cwd, env=full, capture_output=True, text=True, timeout=120)


def _memdir_from_this_checkout(tmp_path: Path) -> Path:
    """An executable that stands where the installed `memdir` would."""
    wrapper = tmp_path / "memdir"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m memdir "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


@pytest.mark.slow
@needs_bash
def test_the_lint_step_annotates_findings_and_fails_on_errors(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    shutil.copytree(FIXTURES / "f004-f005-missing-name-and-description", work / "memory")
    env = {
        "MEMDIR_BIN": str(_memdir_from_this_checkout(tmp_path)),
        "MEMDIR_LINT_DIR": "memory",
        "MEMDIR_LINT_ARGS": "--select F  --ignore F001",
    }
    done = _run_step("memdir lint", tmp_path, env, work)
    assert done.returncode == 1, done.stdout + done.stderr
    annotations = done.stdout.splitlines()
    assert annotations and all(line.startswith("::error file=memory/") for line in annotations), done.stdout
    assert {"F004", "F005"} <= {line.split("title=", 1)[1].split()[0] for line in annotations}
    assert "Traceback" not in done.stderr

    shutil.rmtree(work / "memory")
    shutil.copytree(FIXTURES / "clean-folder", work / ".claude" / "memory")
    (work / ".git").mkdir()  # a repository root, where memdir looks for .claude/memory/
    done = _run_step("memdir lint", tmp_path, {**env, "MEMDIR_LINT_DIR": "", "MEMDIR_LINT_ARGS": ""}, work)
    assert (done.returncode, done.stdout) == (0, ""), done.stdout + done.stderr  # found .claude/memory/ itself


@needs_bash
def test_the_install_step_refuses_a_version_that_is_not_one(tmp_path: Path) -> None:
    done = _run_step(
        "Install memdir", tmp_path, {"MEMDIR_VERSION": "1.0; curl evil", "MEMDIR_ACTION_PATH": "."}, tmp_path
    )
    assert done.returncode == 2
    assert done.stdout.startswith("::error title=memdir action::input version must be empty or a version")
    assert not (tmp_path / "memdir-action-venv").exists()  # refused before anything was installed
