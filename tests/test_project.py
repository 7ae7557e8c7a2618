"""The project's own checks: `make check` and the pre-commit config run the same pinned tools."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _check_recipe() -> list[str]:
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^check:.*\n((?:\t.*\n)+)", makefile, flags=re.MULTILINE)
    assert recipe, "the Makefile has no check target"
    return [line.strip().removeprefix("$(BIN)/") for line in recipe.group(1).splitlines()]


def test_the_pre_commit_config_is_valid() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", ".pre-commit-config.yaml"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_pre_commit_runs_what_make_check_runs() -> None:
    def command(line: str) -> list[str]:  # pre-commit passes file names where make passes "."
        return [word for word in line.split() if word not in (".", "--force-exclude")]

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    entries = [hook["entry"].removeprefix(".venv/bin/") for repo in config["repos"] for hook in repo["hooks"]]
    assert [command(entry) for entry in entries] == [command(line) for line in _check_recipe()]
    assert [command(line)[0] for line in _check_recipe()] == ["ruff", "ruff", "mypy"]


def test_the_checkers_are_pinned() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pinned = {requirement.split("==")[0] for requirement in extras["check"] if "==" in requirement}
    assert {"ruff", "mypy"} <= pinned, extras["check"]
    assert all("==" in requirement for requirement in extras["check"]), extras["check"]


def test_the_changelog_has_a_section_for_the_current_version() -> None:
    """Keep a Changelog: `## [VERSION] - DATE` (or `- Unreleased` before the tag), newest first."""
    from memdir.version import __version__

    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}|Unreleased))?$", changelog, re.MULTILINE)
    versions = [version for version, _ in headings if version != "Unreleased"]
    assert versions and versions[0] == __version__, f"CHANGELOG.md's newest release is not {__version__}: {headings}"
    assert f"[{__version__}]: https://" in changelog  # its link reference
    assert "keepachangelog.com" in changelog


def test_the_project_urls_name_one_repository() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    urls = project["urls"]
    assert set(urls) == {"Homepage", "Documentation", "Repository", "Issues", "Changelog"}
    assert all(url.startswith(urls["Repository"]) for url in urls.values()), urls
    assert "Typing :: Typed" in project["classifiers"] and (ROOT / "memdir" / "py.typed").is_file()
    # PEP 639: `license` is an SPDX expression, which supersedes license classifiers (PyPI rejects both).
    assert not any(c.startswith("License ::") for c in project["classifiers"])


def test_third_party_data_is_named_in_notice_and_in_the_license_expression() -> None:
    """Every module built from wordfreq's data (CC BY-SA 4.0) is named in NOTICE, which ships with the
    package, and the licence expression says CC-BY-SA-4.0 beside MIT."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT AND CC-BY-SA-4.0" and "NOTICE" in project["license-files"]
    notice = (ROOT / "NOTICE").read_text()
    derived = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "memdir").rglob("*.py")
        if "wordfreq" in path.read_text(encoding="utf-8") or path.name == "tables.py"
    )
    assert "memdir/read/terms.py" in derived and "memdir/read/common_cjk.py" in derived
    assert all(f"- {path}:" in notice for path in derived), (derived, notice)


def test_no_test_skips_over_a_required_dependency() -> None:
    """Bug (issue 30): anthropic is required, yet test modules `importorskip`ped it: a broken import of
    it would have skipped them quietly, rather than fail."""
    from importlib.metadata import packages_distributions

    requirements = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    required = {re.split(r"[<>=!~ \[;]", requirement, maxsplit=1)[0].lower() for requirement in requirements}
    distributions = packages_distributions()  # an importable name -> the distributions that provide it
    skipped = {
        f"{path.name}: {module}"
        for path in sorted((ROOT / "tests").glob("*.py"))
        for module in re.findall(r"importorskip\(\s*[\"']([\w.]+)", path.read_text(encoding="utf-8"))
        if required & {name.lower() for name in distributions.get(module.split(".")[0], [])}
    }
    assert not skipped, f"skip over a required dependency: {sorted(skipped)}"
