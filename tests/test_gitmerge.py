"""`memdir git setup` and the MEMORY.md merge driver, with real git repositories in tmp_path.

git runs the driver as a subprocess, with a PATH that holds git but not memdir's virtualenv, as an
IDE or a GUI client would; the merges are real `git merge`, `git rebase` and `git cherry-pick`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TODAY, invoke_memdir

from memdir.core.index import DEFAULT_CAPS, Caps, left_out_note
from memdir.folder import MemoryDir
from memdir.integrations.gitmerge import (
    DRIVER,
    NOTE_PREFIX,
    driver_command,
    merge_index,
    run_merge_driver,
    setup_merge_driver,
)

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")

MEMORY = ".claude/memory"
INDEX = f"{MEMORY}/MEMORY.md"


@pytest.fixture(autouse=True)
def git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
    }.items():
        monkeypatch.setenv(key, value)


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """git in `repo`, on a PATH without memdir: the driver must not need `memdir` on PATH."""
    assert GIT is not None
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(GIT).parent), "/bin", "/usr/bin"])}
    command = ["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args]
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done


def memdir(repo: Path, *args: str):  # type: ignore[no-untyped-def]
    return invoke_memdir("--dir", str(repo / MEMORY), *args, cwd=repo)


def add(repo: Path, type: str, name: str, description: str, *extra: str) -> None:
    result = memdir(repo, "add", type, name, "-d", description, "--why", "w", "--how", "h", *extra)
    assert result.exit_code == 0, result.output


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def folder(repo: Path) -> MemoryDir:
    return MemoryDir(repo / MEMORY, today=TODAY)


def index(repo: Path) -> str:
    return (repo / INDEX).read_text(encoding="utf-8")


def unmerged(repo: Path) -> set[str]:
    return {line.split("\t", 1)[1] for line in git(repo, "ls-files", "-u").stdout.splitlines()}


def assert_healthy(repo: Path) -> None:
    """The merged folder lints clean and its index is what `memdir index` writes."""
    lint = memdir(repo, "lint")
    assert lint.exit_code == 0, lint.output
    check = memdir(repo, "index", "--check")
    assert check.exit_code == 0, check.output


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a memory folder holding one memory, and the merge driver set up: every
    merge runs the driver command `memdir git setup` wrote, as it wrote it (`python -m memdir`),
    started by git on a PATH without the virtualenv."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    assert memdir(root, "init").exit_code == 0
    add(root, "feedback", "lint-first", "Run npm run lint before every commit")
    setup = memdir(root, "git", "setup")
    assert setup.exit_code == 0, setup.output
    configured = git(root, "config", "merge.memdir.driver").stdout.strip()
    assert configured == driver_command()
    commit(root, "base")
    return root


def branch(repo: Path, name: str, start: str = "main") -> None:
    git(repo, "checkout", "-q", "-b", name, start)


# --- merges ---------------------------------------------------------------------------------


def test_branches_adding_different_memories_merge_cleanly(repo: Path) -> None:
    branch(repo, "alice")
    add(repo, "project", "launch", "Launch on 2026-12-01; freeze the API a week before")
    commit(repo, "alice")
    branch(repo, "bob", "main")
    add(repo, "reference", "dashboards", "Grafana board for the API at grafana.example.com/d/api")
    add(repo, "feedback", "small-prs", "Keep pull requests under 400 lines")
    commit(repo, "bob")

    done = git(repo, "merge", "--no-edit", "alice")

    assert unmerged(repo) == set()
    assert "CONFLICT" not in done.stdout
    assert index(repo) == (
        "- [lint-first](feedback_lint-first.md) — Run npm run lint before every commit\n"
        "- [small-prs](feedback_small-prs.md) — Keep pull requests under 400 lines\n"
        "- [launch](project_launch.md) — Launch on 2026-12-01; freeze the API a week before\n"
        "- [dashboards](reference_dashboards.md) — Grafana board for the API at grafana.example.com/d/api\n"
    )
    assert_healthy(repo)


def _blob(repo: Path, commit: str, path: str) -> bytes:
    return subprocess.run(["git", "show", f"{commit}:{path}"], cwd=repo, capture_output=True, check=True).stdout


@pytest.mark.parametrize("changed_on", ["one side", "both sides"])
def test_a_huge_blob_in_the_folder_is_never_read_by_the_merge(
    repo: Path, monkeypatch: pytest.MonkeyPatch, changed_on: str
) -> None:
    """Bug: the driver read every blob of the folder whole before its 1 MiB check; a 150 MB one made
    a peak of 322 MiB. Now its size comes first, and what the driver reads from git does not grow
    with the blob (counted: the bytes git hands it)."""
    from memdir.core.store import MAX_FILE_BYTES
    from memdir.integrations import gitmerge

    huge = repo / MEMORY / "notes.md"
    huge.write_text("---\nname: notes\ndescription: d\ntype: project\n---\n" + ("x" * 99 + "\n") * 45_000)
    base = commit(repo, "a huge file")
    branch(repo, "alice")
    add(repo, "project", "launch", "Launch on 2026-12-01; freeze the API a week before")
    if changed_on == "both sides":
        huge.write_text(huge.read_text() + "alice\n")
    alice = commit(repo, "alice")
    git(repo, "checkout", "-q", "main")
    add(repo, "reference", "dashboards", "Grafana board for the API at grafana.example.com/d/api")
    if changed_on == "both sides":
        huge.write_text("main\n" + huge.read_text())
    ours = commit(repo, "main")
    assert huge.stat().st_size > 4 * MAX_FILE_BYTES

    read = [0]
    run = gitmerge._Git.run

    def counted(self: gitmerge._Git, *args: str, input: bytes | None = None) -> bytes | None:
        out = run(self, *args, input=input)
        read[0] += len(out or b"")
        return out

    monkeypatch.setattr(gitmerge._Git, "run", counted)
    monkeypatch.setenv(f"GITHEAD_{alice}", "alice")  # as `git merge alice` tells its driver
    sides = [_blob(repo, commit, INDEX) for commit in (base, ours, alice)]
    known = gitmerge.repository_memories(repo, INDEX, *sides)
    assert known.merged is not None
    assert sorted(m.path for m in known.merged) == [
        "feedback_lint-first.md", "project_launch.md", "reference_dashboards.md"
    ]  # fmt: skip
    assert read[0] < 64 * 1024, read[0]


def _diverge(repo: Path) -> tuple[str, str]:
    """Two branches that add, change and remove memories, and add hand-written lines."""
    add(repo, "user", "ada", "Ada is the backend lead; prefers terse answers")
    add(repo, "project", "freeze", "API freeze starts 2026-11-24")
    (repo / INDEX).write_text("# Memory\n\n" + index(repo), encoding="utf-8")
    commit(repo, "more")
    branch(repo, "alice")
    add(repo, "project", "launch", "Launch on 2026-12-01")
    add(repo, "feedback", "tests-first", "Write the failing test before the fix")
    folder(repo).update("freeze", description="API freeze starts 2026-11-25 (moved a day)")
    alice = commit(repo, "alice")
    branch(repo, "bob", "main")
    add(repo, "reference", "runbook", "On-call runbook lives in Notion, page Ops/Runbook")
    add(repo, "feedback", "no-mocks", "Integration tests hit a real database, not mocks")
    assert memdir(repo, "rm", "ada").exit_code == 0
    with (repo / INDEX).open("a", encoding="utf-8") as file:
        file.write("\nSee also docs/onboarding.md.\n")
    bob = commit(repo, "bob")
    return alice, bob


def test_the_merged_index_does_not_depend_on_the_order_of_the_branches(repo: Path) -> None:
    alice, bob = _diverge(repo)
    git(repo, "merge", "--no-edit", alice)
    into_bob = index(repo)
    assert_healthy(repo)
    git(repo, "checkout", "-q", "--detach", alice)
    git(repo, "merge", "--no-edit", bob)
    into_alice = index(repo)

    assert into_alice == into_bob
    assert into_bob.startswith("# Memory\n\n")
    assert into_bob.endswith("See also docs/onboarding.md.\n")
    for listed in ("launch", "tests-first", "runbook", "no-mocks", "lint-first"):
        assert f"[{listed}]" in into_bob
    assert "[ada]" not in into_bob
    assert "API freeze starts 2026-11-25 (moved a day)" in into_bob
    assert_healthy(repo)


def test_a_rebase_regenerates_the_index_for_each_replayed_commit(repo: Path) -> None:
    alice, _ = _diverge(repo)
    git(repo, "checkout", "-q", alice)
    git(repo, "rebase", "-q", "bob")
    assert unmerged(repo) == set()
    text = index(repo)
    for listed in ("launch", "tests-first", "runbook", "no-mocks"):
        assert f"[{listed}]" in text
    assert "[ada]" not in text
    assert_healthy(repo)


def test_a_cherry_pick_merges_from_the_index_texts(repo: Path) -> None:
    branch(repo, "alice")
    add(repo, "project", "launch", "Launch on 2026-12-01")
    pick = commit(repo, "alice")
    git(repo, "checkout", "-q", "main")
    add(repo, "reference", "runbook", "On-call runbook lives in Notion")
    commit(repo, "main")

    git(repo, "cherry-pick", pick)

    assert "[launch]" in index(repo) and "[runbook]" in index(repo)
    assert_healthy(repo)


@pytest.mark.parametrize("how", ["merge", "rebase"])
def test_the_index_comes_from_the_merged_memory_files(repo: Path, how: str) -> None:
    """The driver identifies the commits and indexes the merged folder, not only the two indexes:
    a memory committed without re-indexing is listed too, as `memdir index` would list it."""
    branch(repo, "alice")
    add(repo, "project", "launch", "Launch on 2026-12-01")
    unindexed = "---\nname: pager\ndescription: Page the on-call engineer for P1s only\ntype: feedback\n---\nRule.\n"
    (repo / MEMORY / "feedback_pager.md").write_text(unindexed)
    alice = commit(repo, "alice")
    branch(repo, "bob", "main")
    add(repo, "reference", "runbook", "On-call runbook lives in Notion")
    commit(repo, "bob")

    if how == "merge":
        git(repo, "merge", "--no-edit", alice)
    else:
        git(repo, "checkout", "-q", alice)
        git(repo, "rebase", "-q", "bob")

    assert "- [pager](feedback_pager.md) — Page the on-call engineer for P1s only\n" in index(repo)
    assert_healthy(repo)


def test_one_side_changes_the_description_the_other_the_body(repo: Path) -> None:
    branch(repo, "alice")
    folder(repo).update("lint-first", description="Run npm run lint and npm test before every commit")
    commit(repo, "alice")
    branch(repo, "bob", "main")
    folder(repo).update("lint-first", body="Run `npm run lint` first.\n\n**Why:** CI.\n\n**How to apply:** Always.")
    add(repo, "project", "launch", "Launch on 2026-12-01")
    commit(repo, "bob")

    git(repo, "merge", "--no-edit", "alice")

    assert "Run npm run lint and npm test before every commit" in index(repo)
    assert_healthy(repo)


def test_both_sides_change_a_description_the_same_way(repo: Path) -> None:
    for name in ("alice", "bob"):
        branch(repo, name, "main")
        folder(repo).update("lint-first", description="Lint and test before every commit")
        add(repo, "project", name, f"{name} was here")
        commit(repo, name)
    git(repo, "merge", "--no-edit", "alice")
    assert unmerged(repo) == set()
    assert "— Lint and test before every commit" in index(repo)
    assert_healthy(repo)


def test_conflicting_descriptions_leave_the_index_unmerged_until_the_memory_is_resolved(repo: Path) -> None:
    branch(repo, "alice")
    folder(repo).update("lint-first", description="Run the linter before every commit")
    add(repo, "project", "launch", "Launch on 2026-12-01")
    commit(repo, "alice")
    branch(repo, "bob", "main")
    folder(repo).update("lint-first", description="Run lint and tests before every push")
    commit(repo, "bob")

    done = git(repo, "merge", "--no-edit", "alice", check=False)

    assert done.returncode != 0
    # git stops on the memory file, and MEMORY.md is not taken as merged behind the person's back.
    assert unmerged(repo) == {f"{MEMORY}/feedback_lint-first.md", INDEX}
    assert "feedback_lint-first.md" in done.stderr  # the driver's note says which file to resolve
    text = index(repo)
    assert "<<<<<<<" not in text  # nothing to resolve by hand in the generated file
    assert "[launch]" in text
    # The person resolves the memory file, then regenerates the index, as the note says.
    memory = repo / MEMORY / "feedback_lint-first.md"
    git(repo, "checkout", "--theirs", "--", str(memory.relative_to(repo)))
    assert memdir(repo, "index").exit_code == 0
    assert "— Run the linter before every commit" in index(repo)
    assert_healthy(repo)
    commit(repo, "merge")


@pytest.mark.parametrize("how", [[], ["--purge"]], ids=["archived", "purged"])
def test_a_memory_deleted_on_one_side_leaves_the_merged_index(repo: Path, how: list[str]) -> None:
    add(repo, "project", "old-plan", "The plan we dropped")
    commit(repo, "old plan")
    branch(repo, "alice")
    assert memdir(repo, "rm", "old-plan", *how).exit_code == 0
    commit(repo, "alice")
    branch(repo, "bob", "main")
    add(repo, "reference", "runbook", "On-call runbook lives in Notion")
    commit(repo, "bob")

    git(repo, "merge", "--no-edit", "alice")

    assert "[old-plan]" not in index(repo)
    assert "[runbook]" in index(repo)
    assert_healthy(repo)


def test_a_memory_archived_on_one_side_and_changed_on_the_other(repo: Path) -> None:
    add(repo, "project", "old-plan", "The plan we dropped")
    commit(repo, "old plan")
    branch(repo, "alice")
    assert memdir(repo, "rm", "old-plan").exit_code == 0
    commit(repo, "alice")
    branch(repo, "bob", "main")
    folder(repo).update("old-plan", description="The plan we dropped, revised")
    commit(repo, "bob")

    git(repo, "merge", "--no-edit", "alice")  # git carries bob's change into .archive/

    assert "revised" in (repo / MEMORY / ".archive" / "project_old-plan.md").read_text()
    assert "[old-plan]" not in index(repo)
    assert_healthy(repo)


def test_a_memory_deleted_on_one_side_and_changed_on_the_other_is_a_conflict(repo: Path) -> None:
    branch(repo, "alice")
    assert memdir(repo, "rm", "lint-first", "--purge").exit_code == 0
    commit(repo, "alice")
    branch(repo, "bob", "main")
    folder(repo).update("lint-first", description="Run lint before every push")
    commit(repo, "bob")

    done = git(repo, "merge", "--no-edit", "alice", check=False)

    assert done.returncode != 0
    assert INDEX in unmerged(repo)


def test_hand_written_lines_changed_on_both_sides_are_a_conflict_with_markers(repo: Path) -> None:
    for name in ("alice", "bob"):
        branch(repo, name, "main")
        (repo / INDEX).write_text(f"# Memory of {name}\n\n" + index(repo), encoding="utf-8")
        commit(repo, name)

    done = git(repo, "merge", "--no-edit", "alice", check=False)

    assert done.returncode != 0
    assert unmerged(repo) == {INDEX}
    text = index(repo)
    assert text.startswith("<<<<<<< ours\n# Memory of bob\n\n=======\n# Memory of alice\n\n>>>>>>> theirs\n")
    assert "- [lint-first](feedback_lint-first.md)" in text


def test_without_the_driver_the_same_merge_conflicts(repo: Path) -> None:
    """The control for the tests above: git's own line merge cannot merge two added entries."""
    git(repo, "config", "--unset", "merge.memdir.driver")
    git(repo, "config", "--unset", "merge.memdir.name")
    branch(repo, "alice")
    add(repo, "project", "launch", "Launch on 2026-12-01")
    commit(repo, "alice")
    branch(repo, "bob", "main")
    add(repo, "project", "migration", "Move to Postgres 17 by 2027-01-15")
    commit(repo, "bob")
    assert git(repo, "merge", "--no-edit", "alice", check=False).returncode != 0
    assert INDEX in unmerged(repo)


# --- the driver on its own --------------------------------------------------------------------


def _sides(tmp_path: Path, base: str, ours: str, theirs: str) -> list[Path]:
    paths = []
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        path = tmp_path / name
        path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
        paths.append(path)
    return paths


LINT = "- [lint-first](feedback_lint-first.md) — Run lint before every commit\n"
LAUNCH = "- [launch](project_launch.md) — Launch on 2026-12-01\n"
RUNBOOK = "- [runbook](reference_runbook.md) — On-call runbook lives in Notion\n"
SMALL = "- [small-prs](feedback_small-prs.md) — Keep pull requests small\n"


def test_the_driver_outside_a_repository_merges_the_three_texts(tmp_path: Path) -> None:
    base, ours, theirs = _sides(tmp_path, LINT, LINT + RUNBOOK, LINT + SMALL + LAUNCH)
    result = invoke_memdir("git", "merge-driver", "--marker-size", "7", "--", str(base), str(ours), str(theirs),
                           INDEX, cwd=tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert ours.read_text() == LINT + SMALL + LAUNCH + RUNBOOK


def test_the_driver_gives_the_same_text_both_ways_round() -> None:
    base = "# Memory\n\n" + LINT
    ours = "# Memory\n\n" + LINT + SMALL + "\nNotes.\n"
    theirs = "# Memory\n\n" + RUNBOOK + LINT + LAUNCH
    one = merge_index(base, ours, theirs, today=TODAY)
    other = merge_index(base, theirs, ours, today=TODAY)
    assert one.clean and other.clean
    assert one.text == other.text == "# Memory\n\n" + RUNBOOK + LINT + SMALL + LAUNCH + "\nNotes.\n"


def test_without_the_repository_an_entry_changed_on_both_sides_is_not_clean() -> None:
    base = LINT + LAUNCH
    ours = LINT.replace("every commit", "every push") + LAUNCH
    theirs = LINT.replace("every commit", "every merge") + LAUNCH + RUNBOOK
    merged = merge_index(base, ours, theirs, today=TODAY)
    assert not merged.clean
    assert "<<<<<<<" not in merged.text
    assert "[runbook]" in merged.text
    assert any("feedback_lint-first.md" in note for note in merged.notes)


def test_a_merged_index_stays_within_the_caps() -> None:
    merged = merge_index(LINT, LINT + SMALL + RUNBOOK, LINT + LAUNCH, today=TODAY, caps=Caps(max_lines=3))
    assert merged.clean
    lines = merged.text.splitlines()
    assert len(lines) == 3 and lines[-1].startswith(NOTE_PREFIX) and "2 more memories left out" in lines[-1]
    assert any("run `memdir index` once the merge is done" in note for note in merged.notes)


def test_crlf_and_a_bom_survive_the_merge() -> None:
    base, ours, theirs = ("\ufeff" + text.replace("\n", "\r\n") for text in (LINT, LINT + SMALL, LINT + RUNBOOK))
    merged = merge_index(base, ours, theirs, today=TODAY)
    assert merged.text == "\ufeff" + (LINT + SMALL + RUNBOOK).replace("\n", "\r\n")


def test_a_side_that_is_not_utf8_is_left_to_git_line_merge(tmp_path: Path) -> None:
    base, ours, theirs = _sides(tmp_path, LINT, LINT + RUNBOOK, LINT)
    theirs.write_bytes(LINT.encode() + b"- caf\xe9\n")  # Latin-1
    result = invoke_memdir("git", "merge-driver", str(base), str(ours), str(theirs), cwd=tmp_path)
    assert result.exit_code == 1
    assert "not UTF-8" in result.output
    text = ours.read_bytes()
    assert text.startswith(LINT.encode()) and b"<<<<<<< ours" in text and b">>>>>>> theirs" in text


def test_the_driver_reports_a_missing_file_in_one_line(tmp_path: Path) -> None:
    result = invoke_memdir("git", "merge-driver", "nope-1", "nope-2", "nope-3", cwd=tmp_path)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert result.output.startswith("memdir: error:") and "nope-1" in result.output


def test_the_driver_knows_the_note_build_index_writes() -> None:
    assert left_out_note(3, DEFAULT_CAPS).startswith(NOTE_PREFIX)


def test_run_merge_driver_writes_the_result_into_ours(tmp_path: Path) -> None:
    base, ours, theirs = _sides(tmp_path, "", RUNBOOK, LAUNCH)
    merged = run_merge_driver(base, ours, theirs, today=TODAY)
    assert merged.clean
    assert ours.read_text() == merged.text == LAUNCH + RUNBOOK


# --- setup ------------------------------------------------------------------------------------


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    """A repository with an empty memory folder and nothing set up."""
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".gitattributes").write_text("*.png binary\n")
    assert memdir(root, "init").exit_code == 0
    return root


def test_setup_registers_the_driver_once(fresh: Path) -> None:
    first = memdir(fresh, "git", "setup")
    assert first.exit_code == 0, first.output
    attributes = (fresh / ".gitattributes").read_text()
    assert attributes.startswith("*.png binary\n")
    assert f"/{INDEX} merge={DRIVER}\n" in attributes
    assert git(fresh, "check-attr", "merge", "--", INDEX).stdout.strip() == f"{INDEX}: merge: {DRIVER}"
    assert git(fresh, "config", "merge.memdir.driver").stdout.strip() == driver_command()
    assert git(fresh, "config", "merge.memdir.name").stdout.strip()
    assert git(fresh, "check-attr", "merge", "--", "docs/MEMORY.md").stdout.strip().endswith("unspecified")

    second = memdir(fresh, "git", "setup")
    assert second.exit_code == 0
    assert "nothing changed" in second.output
    assert (fresh / ".gitattributes").read_text() == attributes


def test_setup_puts_the_interpreter_in_the_driver_command() -> None:
    command = driver_command()
    assert command.split()[0] in (sys.executable, f"'{sys.executable}'")
    assert command.endswith("git merge-driver --marker-size %L -- %O %A %B %P")
    assert driver_command("/opt/my tools/python").startswith("'/opt/my tools/python' -m memdir ")


def test_setup_dry_run_writes_nothing(fresh: Path) -> None:
    result = memdir(fresh, "git", "setup", "--dry-run")
    assert result.exit_code == 0, result.output
    assert f"would add `/{INDEX} merge=memdir`" in result.output
    assert "would set merge.memdir.driver" in result.output
    assert (fresh / ".gitattributes").read_text() == "*.png binary\n"
    assert git(fresh, "config", "merge.memdir.driver", check=False).returncode == 1


def test_setup_repairs_a_stale_driver_command(fresh: Path) -> None:
    assert memdir(fresh, "git", "setup").exit_code == 0
    git(fresh, "config", "merge.memdir.driver", "/gone/python -m memdir git merge-driver %O %A %B")
    result = memdir(fresh, "git", "setup")
    assert result.exit_code == 0
    assert "(was '/gone/python" in result.output
    assert git(fresh, "config", "merge.memdir.driver").stdout.strip() == driver_command()
    assert (fresh / ".gitattributes").read_text().count("merge=memdir") == 1


def test_setup_outside_a_repository_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    result = invoke_memdir("--dir", str(tmp_path / "memory"), "git", "setup", cwd=tmp_path)
    assert result.exit_code == 2
    assert result.output.startswith("memdir: error:") and "not in a git work tree" in result.output
    assert result.output.count("\n") == 1


def test_setup_without_git_is_a_one_line_error(fresh: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = memdir(fresh, "git", "setup")
    assert result.exit_code == 2
    assert result.output == "memdir: error: git is not installed (or not on PATH)\n"


def test_setup_without_the_folder_says_how_to_create_it(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    result = invoke_memdir("--dir", str(tmp_path / "nowhere"), "git", "setup", cwd=tmp_path)
    assert result.exit_code == 2
    assert "memdir init" in result.output


def test_setup_refuses_when_a_nearer_gitattributes_wins(fresh: Path) -> None:
    (fresh / MEMORY / ".gitattributes").write_text("MEMORY.md -merge\n")
    result = memdir(fresh, "git", "setup")
    assert result.exit_code == 2
    assert "sets merge=unset" in result.output and result.output.count("\n") == 1
    assert (fresh / ".gitattributes").read_text() == "*.png binary\n"
    assert git(fresh, "config", "merge.memdir.driver", check=False).returncode == 1


def test_setup_from_the_library(fresh: Path) -> None:
    done = setup_merge_driver(fresh / MEMORY, command="memdir git merge-driver --marker-size %L -- %O %A %B %P")
    assert done.index_path == INDEX
    assert done.repository == fresh.resolve()
    assert {c.key for c in done.changes} == {f"/{INDEX} merge=memdir", "merge.memdir.name", "merge.memdir.driver"}
