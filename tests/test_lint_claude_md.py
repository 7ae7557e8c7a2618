"""D004 repeats-claude-md: memory text that the project's CLAUDE.md already says, and where CLAUDE.md is."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TODAY, MakeMemory, invoke_memdir

from memdir import MemoryDir
from memdir.core.claude_code import claude_project_of, sanitise_project_path
from memdir.core.config import Config, LintSettings, load_config
from memdir.core.errors import ConfigError
from memdir.lint.duplicates import repeat_keys
from memdir.text import words as text_words

RULE = "Run `npm run lint` before every commit; CI rejects unlinted code."
CLAUDE_MD = f"# Project\n\n## Rules\n\n- {RULE}\n- Use pnpm.\n"


def d004(folder: Path, config: Config | None = None) -> list[tuple[str, int | None, str]]:
    report = MemoryDir(folder, config, today=TODAY).lint(select=["D004"])
    return [(f.path, f.line, f.message) for f in report.findings]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root (a `.git` marks it) holding CLAUDE.md and the memory folder at .claude/memory."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "CLAUDE.md").write_text(CLAUDE_MD)
    memory = root / ".claude" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("")
    return root


def test_body_description_and_hand_written_index_lines(project: Path, make_memory: MakeMemory) -> None:
    memory = project / ".claude" / "memory"
    make_memory(
        "feedback_lint.md", root=memory, description="Run npm run lint before every commit; CI rejects unlinted code",
        body="Lint first.\n\n**Why:** RUN NPM RUN LINT before every commit — CI rejects *unlinted* code!\n",
    )  # fmt: skip
    make_memory("feedback_other.md", root=memory, body="Use pnpm.\n")  # too short to count as repeated text
    MemoryDir(memory, today=TODAY).write_index()
    index = (memory / "MEMORY.md").read_text()
    (memory / "MEMORY.md").write_text(f"# Notes\n\n> {RULE}\n\n{index}")
    found = d004(memory)
    assert [(path, line) for path, line, _ in found] == [
        ("MEMORY.md", 3),  # the generated entry repeats it too, but is reported on its memory's description
        ("feedback_lint.md", 2),
        ("feedback_lint.md", 8),
    ]
    assert all(message.startswith("repeats CLAUDE.md:5: ") for _, _, message in found)
    assert "'Run npm run lint before every commit; CI rejects unlinted...'" in found[1][2]


def test_sentences_match_inside_longer_lines_and_near_misses_do_not(project: Path, make_memory: MakeMemory) -> None:
    memory = project / ".claude" / "memory"
    make_memory("project_a.md", root=memory, body=f"We decided this in March. {RULE} It saved us twice.\n")
    make_memory("project_b.md", root=memory, body="Run `npm run lint` before every push; CI rejects unlinted code.\n")
    make_memory("project_c.md", root=memory, body="Run `npm run lint` before every commit\n")  # 7 words
    assert [(path, line) for path, line, _ in d004(memory)] == [("project_a.md", 6)]


def test_repeat_keys_fold_case_markdown_and_punctuation() -> None:
    assert list(repeat_keys("1. **Never** push to `main` directly, open a PR — always!")) == [
        "never push to main directly open a pr always"
    ]
    assert list(repeat_keys("- Déployer le service après la revue de code complète")) == list(
        repeat_keys("deployer le SERVICE apres la revue de code complete.")
    )
    assert list(repeat_keys("Use pnpm. Never npm.")) == []  # short sentences, short line
    chinese = "这个项目的所有提交都必须先通过代码审查和自动化测试，然后才能合并到主分支里面去，没有例外"
    assert list(repeat_keys(chinese)) != []  # no spaces to count words by: 40 characters count


@pytest.mark.parametrize("name", [".claude/CLAUDE.md", "CLAUDE.local.md"])
def test_other_claude_md_files_at_the_root(project: Path, make_memory: MakeMemory, name: str) -> None:
    (project / "CLAUDE.md").unlink()
    (project / name).write_text(f"Intro.\n{RULE}\n")
    memory = project / ".claude" / "memory"
    make_memory("feedback_lint.md", root=memory, body=f"{RULE}\n")
    assert d004(memory) == [
        ("feedback_lint.md", 6, f"repeats {name}:2: 'Run `npm run lint` before every commit; CI rejects unlint...'")
    ]


def test_superseded_memories_are_not_reported(project: Path, make_memory: MakeMemory) -> None:
    memory = project / ".claude" / "memory"
    make_memory("feedback_lint.md", root=memory, status="superseded", body=f"{RULE}\n")
    assert d004(memory) == []


def test_no_project_root_or_no_claude_md_checks_nothing(
    folder: Path, project: Path, make_memory: MakeMemory, tmp_path: Path
) -> None:
    make_memory("feedback_lint.md", body=f"{RULE}\n")  # tmp_path/memory: no git, no config, no .claude/
    (tmp_path / "CLAUDE.md").write_text(CLAUDE_MD)  # beside it, but nothing says tmp_path is the project
    assert d004(folder) == []
    (project / "CLAUDE.md").unlink()
    (project / "CLAUDE.md").mkdir()  # not a file: skipped, no error
    make_memory("feedback_lint.md", root=project / ".claude" / "memory", body=f"{RULE}\n")
    assert d004(project / ".claude" / "memory") == []


def test_a_claude_code_auto_memory_folder_finds_its_project(tmp_path: Path, make_memory: MakeMemory) -> None:
    """~/.claude/projects/<sanitised project path>/memory: the project is read back from the name."""
    project = tmp_path / "code" / "my-app"
    decoy = tmp_path / "code" / "my" / "app"  # sanitises the same; sorted order picks "my" before "my-app"
    for root in (project, decoy):
        root.mkdir(parents=True)
    (project / "CLAUDE.md").write_text(CLAUDE_MD)
    memory = tmp_path / "home" / ".claude" / "projects" / sanitise_project_path(project) / "memory"
    make_memory("feedback_lint.md", root=memory, body=f"{RULE}\n")
    assert claude_project_of(memory) == decoy
    decoy.rmdir()
    assert claude_project_of(memory) == project
    assert [(p, line) for p, line, _ in d004(memory)] == [("feedback_lint.md", 6)]
    assert claude_project_of(tmp_path / "home" / ".claude" / "projects" / "-no-such-place" / "memory") is None
    assert claude_project_of(project) is None  # not an auto-memory folder


def test_config_names_the_files(tmp_path: Path, folder: Path, make_memory: MakeMemory) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "AGENTS.md").write_text(f"{RULE}\n")
    (tmp_path / "CLAUDE.md").write_text(CLAUDE_MD)
    (tmp_path / ".memdir.toml").write_text('dir = "memory"\n[lint]\nclaude-md = ["docs/AGENTS.md"]\n')
    make_memory("feedback_lint.md", body=f"{RULE}\n")
    config = load_config(tmp_path)
    assert config.lint.claude_md == ((tmp_path / "docs" / "AGENTS.md").resolve(),)
    assert [m for _, _, m in d004(folder, config)] == [
        "repeats docs/AGENTS.md:1: 'Run `npm run lint` before every commit; CI rejects unlint...'"
    ]
    # Without the setting, the config file's folder is the project root, and its CLAUDE.md counts.
    (tmp_path / ".memdir.toml").write_text('dir = "memory"\n')
    assert next(m for _, _, m in d004(folder, load_config(tmp_path))).startswith("repeats CLAUDE.md:5: ")
    assert d004(folder, Config(path=tmp_path / ".memdir.toml", lint=LintSettings(claude_md=()))) == []


@pytest.mark.parametrize("value", ['"CLAUDE.md"', "[1]", '[""]'])
def test_config_claude_md_must_be_a_list_of_paths(tmp_path: Path, value: str) -> None:
    (tmp_path / ".memdir.toml").write_text(f"[lint]\nclaude-md = {value}\n")
    with pytest.raises(ConfigError, match=r"`lint.claude-md` must be a list of file paths"):
        load_config(tmp_path)


def test_on_by_default_a_warning_in_the_cli(project: Path, make_memory: MakeMemory) -> None:
    memory = project / ".claude" / "memory"
    make_memory(
        "feedback_lint.md", root=memory, body=f"{RULE}\n\n**Why:** CI.\n\n**How to apply:** Always.\n"
    )  # fmt: skip
    MemoryDir(memory, today=TODAY).write_index()
    result = invoke_memdir("lint", "--format", "github", cwd=project)
    assert result.exit_code == 0, result.output  # a warning: fails only with --strict
    assert result.stdout.splitlines() == [
        "::warning file=.claude/memory/feedback_lint.md,line=6,title=D004 repeats-claude-md::repeats CLAUDE.md:5: "
        "'Run `npm run lint` before every commit; CI rejects unlint...'"
    ]
    assert invoke_memdir("lint", "--strict", cwd=project).exit_code == 1
    assert invoke_memdir("lint", "--strict", "--ignore", "D004", cwd=project).exit_code == 0


def test_one_pass_the_work_grows_with_the_text(
    project: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each line of CLAUDE.md and of every memory is normalised once: no pairwise comparison."""
    memory = project / ".claude" / "memory"
    rules = "".join(f"Rule number {i} of this project says something long.\n" for i in range(200))
    (project / "CLAUDE.md").write_text(rules)
    calls = 0
    words = text_words.plain_words

    def counting(text: str) -> list[str]:
        nonlocal calls
        calls += 1
        return words(text)

    monkeypatch.setattr(text_words, "plain_words", counting)  # imported where it is used

    def work(memories: int) -> int:
        nonlocal calls
        for i in range(memories):
            make_memory(f"project_m{i}.md", root=memory, body="".join(f"Line {j} of memory {i}.\n" for j in range(10)))
        calls = 0
        assert d004(memory) == []
        return calls

    small, large = work(20), work(40)
    per_memory = (large - small) / 20
    assert per_memory == 11  # its description and its 10 body lines, each once
    assert small == 200 + 20 * per_memory  # and CLAUDE.md's 200 lines, once per run
