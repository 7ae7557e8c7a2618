"""Settings and where the memory folder is.

The folder is resolved in the order DESIGN.md gives: --dir, MEMDIR_DIR, `dir` in the nearest
config (`.memdir.toml` or `[tool.memdir]` in `pyproject.toml`, searched upward), `.claude/memory/`
at the repository root, then Claude Code's own auto-memory folder for the repository (claude_code.py
says where Claude Code puts it).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from memdir.core.claude_code import (
    MANAGED_SETTINGS,
    ClaudeMemory,
    claude_memory,
    find_repo_root,
)
from memdir.core.errors import ConfigError

# Labels accepted for the Why / How-to-apply lines, besides what a config adds. Matching ignores
# case, bold markers and the colon's width; these cover the languages seen in real folders.
DEFAULT_WHY_LABELS = (
    "Why", "Reason", "Pourquoi", "Por qué", "Por que", "Warum", "Perché",
    "为什么", "為什麼", "原因", "理由", "이유", "왜", "Почему", "Причина", "Чому",
)  # fmt: skip
DEFAULT_HOW_LABELS = (
    "How to apply", "How to use", "Comment appliquer", "Cómo aplicar", "Como aplicar",
    "Anwendung", "Wie anwenden", "Come applicare", "如何应用", "如何應用", "应用", "應用",
    "適用方法", "적용 방법", "적용", "Как применять", "Как применить", "Як застосовувати",
)  # fmt: skip

CONFIG_FILE = ".memdir.toml"
_KNOWN_KEYS = {"dir", "why_labels", "how_labels", "lint", "context", "recall", "extract", "index"}
_INDEX_KEYS = {"entry-text"}
ENTRY_TEXTS = ("frontmatter", "keep")
_EXTRACT_KEYS = {"model", "every", "on-stop", "refresh-duplicates"}
_CONTEXT_KEYS = {"pin-importance", "budget", "recall-on-start", "recall-on-prompt"}
_RECALL_KEYS = {
    "relevance-weight", "recency-weight", "importance-weight", "half-life-days", "gate", "gate-chance", "min-relevance",
    "min-score", "k", "synonyms", "model", "log",
}  # fmt: skip
_LINT_KEYS = {"select", "ignore", "extend-select", "per-file-ignores", "stale-project-days", "claude-md"}


@dataclass(frozen=True)
class LintSettings:
    """`[tool.memdir.lint]` (or `[lint]` in `.memdir.toml`). Keys are kebab-case; `_` works too."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, selectors)
    stale_project_days: int = 90
    # D004: the CLAUDE.md files to compare memories with, resolved against the config file's folder;
    # None: the project root's CLAUDE.md, .claude/CLAUDE.md and CLAUDE.local.md (see claude_md_files).
    claude_md: tuple[Path, ...] | None = None


@dataclass(frozen=True)
class IndexSettings:
    """`[tool.memdir.index]` (or `[index]` in `.memdir.toml`): how `memdir index` writes MEMORY.md."""

    # "frontmatter": an entry says what its memory's frontmatter says (the file is the source of
    # truth); "keep": an existing entry keeps the wording a person gave it while its memory lives.
    entry_text: str = "frontmatter"


@dataclass(frozen=True)
class ContextSettings:
    """`[tool.memdir.context]` (or `[context]` in `.memdir.toml`): what `memdir context` loads in full."""

    pin_importance: float | None = 0.9  # memories at or above it load in full; None: only `pin: true`
    budget: int | None = None  # bytes for the whole context; None: no limit
    # The SessionStart hook adds pinned memories in full, and those recalled for the branch's name
    # (docs/claude-code.md says why the branch); off: the hook gives the index alone.
    recall_on_start: bool = False
    # The UserPromptSubmit hook adds the memories recalled for each prompt (none when nothing passes
    # recall's gate); off: the hook does nothing, for those who installed it by the plugin.
    recall_on_prompt: bool = True


@dataclass(frozen=True)
class RecallSettings:
    """`[tool.memdir.recall]` (or `[recall]` in `.memdir.toml`): how `memdir recall` scores and picks.

    score = relevance_weight x relevance + recency_weight x recency + importance_weight x importance;
    docs/recall.md explains each part and the two gates."""

    relevance_weight: float = 0.6
    recency_weight: float = 0.25
    importance_weight: float = 0.15
    half_life_days: float = 30.0  # recency halves every this many days since `updated` (else `created`)
    # The query gate (docs/recall.md): recall speaks when at most `gate_chance` memories would match the
    # query as well as its best match does by chance (0.01, the stricter of the usual significance
    # levels), when the query restates a memory or names the folder's subject, or when the best match
    # alone reaches `gate`.
    gate: float = 0.8
    gate_chance: float = 0.01
    min_relevance: float = 0.3  # and no memory is recalled whose own relevance is below this
    min_score: float = 0.0
    k: int = 5
    synonyms: tuple[tuple[str, ...], ...] = ()  # groups of words that mean the same, added to the built-in ones
    model: str = "claude-haiku-4-5"  # for `recall --llm`
    log: bool = True  # append every recall to .memdir/recall.jsonl


@dataclass(frozen=True)
class ExtractSettings:
    """`[tool.memdir.extract]` (or `[extract]` in `.memdir.toml`): how `memdir extract` runs."""

    model: str = "claude-haiku-4-5"
    every: int = 1  # extract only once this many new user turns have piled up
    on_stop: bool = True  # `memdir hook stop` starts a detached extraction (when an API key is set)
    refresh_duplicates: bool = False  # a skipped duplicate sets `updated` on the memory it repeats


@dataclass(frozen=True)
class Config:
    """Settings from the nearest config file; defaults when there is none."""

    path: Path | None = None  # the file they came from
    dir: Path | None = None  # already resolved against the config file's folder
    why_labels: tuple[str, ...] = DEFAULT_WHY_LABELS
    how_labels: tuple[str, ...] = DEFAULT_HOW_LABELS
    lint: LintSettings = field(default_factory=LintSettings)
    index: IndexSettings = field(default_factory=IndexSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    recall: RecallSettings = field(default_factory=RecallSettings)
    extract: ExtractSettings = field(default_factory=ExtractSettings)
    warnings: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Location:
    """The memory folder and why it is the one."""

    path: Path
    source: str  # option | env | config | repository | claude
    reason: str


def find_config_file(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest `.memdir.toml`, or `pyproject.toml` with a [tool.memdir] table, upward."""
    for folder in (start, *start.parents):
        dedicated = folder / CONFIG_FILE
        if dedicated.is_file():
            return dedicated, _parse_toml(dedicated, _read_config(dedicated))
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            raw = _read_config(pyproject)
            if not may_configure_memdir(raw):
                continue
            table = _memdir_table(pyproject, _parse_toml(pyproject, raw))
            if table is not None:
                return pyproject, table
    return None


def may_configure_memdir(pyproject: bytes) -> bool:
    """Whether a pyproject.toml can hold a [tool.memdir] table: not without the word `memdir`, unless
    a quoted key spells it with an escape (`"\\u006demdir"`).

    Most pyproject.toml files configure other tools only, and `memdir index` runs in a session-start
    hook, often in a Python project's root: importing tomllib alone costs every such run some 10 ms
    (it compiles its patterns). So such a file is neither parsed nor judged; a broken one is left to
    the tools it configures, and the search goes on upward as for any file without the table."""
    return b"memdir" in pyproject or b"\\u" in pyproject or b"\\U" in pyproject


def _memdir_table(path: Path, pyproject: dict[str, Any]) -> dict[str, Any] | None:
    """`[tool.memdir]` of a pyproject.toml, if it has one. A `tool` or `tool.memdir` that is not a
    table is an error of that file, not a reason to look further up for another config."""
    tool = pyproject.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table")
    table = tool.get("memdir")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: `tool.memdir` must be a table")
    return table


def _read_config(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from None


def _parse_toml(path: Path, raw: bytes) -> dict[str, Any]:
    """The TOML document `raw`, read from `path` (named in every error)."""
    try:
        text = raw.decode("utf-8")  # TOML is UTF-8
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        ) from None
    import tomllib  # only when there is a config file to read

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except ValueError as exc:  # an integer past Python's digit limit for int(text)
        raise ConfigError(f"{path}: invalid TOML: {str(exc).split(';')[0]}") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables by recursion
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deep") from None


def _labels(path: Path, table: Mapping[str, Any], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    extra = table.get(key, [])
    if not isinstance(extra, list) or not all(isinstance(x, str) and x.strip() for x in extra):
        raise ConfigError(f"{path}: `{key}` must be a list of non-empty strings")
    return default + tuple(x.strip() for x in extra if x.strip() not in default)


def load_config(cwd: Path) -> Config:
    found = find_config_file(cwd)
    if found is None:
        return Config()
    path, table = found
    folder = table.get("dir")
    if folder is not None and (not isinstance(folder, str) or not folder.strip()):
        raise ConfigError(f"{path}: `dir` must be a path string")
    if folder is not None:
        _check_path(folder, f"{path}: `dir`")
    unknown = sorted(set(table) - _KNOWN_KEYS)
    lint, lint_warnings = _lint_settings(path, table.get("lint", {}))
    index, index_warnings = _index_settings(path, table.get("index", {}))
    context, context_warnings = _context_settings(path, table.get("context", {}))
    recall, recall_warnings = _recall_settings(path, table.get("recall", {}))
    extract, extract_warnings = _extract_settings(path, table.get("extract", {}))
    return Config(
        path=path,
        dir=_config_folder(path, folder) if folder else None,
        why_labels=_labels(path, table, "why_labels", DEFAULT_WHY_LABELS),
        how_labels=_labels(path, table, "how_labels", DEFAULT_HOW_LABELS),
        lint=lint,
        index=index,
        context=context,
        recall=recall,
        extract=extract,
        warnings=(
            tuple(f"{path}: unknown setting `{key}` ignored" for key in unknown)
            + lint_warnings
            + index_warnings
            + context_warnings
            + recall_warnings
            + extract_warnings
        ),
    )


def _config_folder(path: Path, folder: str) -> Path:
    """The folder `dir` names, resolved against the config file's folder. It must lie inside the
    repository holding the config (else inside the config file's own folder): a repository someone
    cloned must not point the session-start hook at a folder elsewhere, to create `.memdir/` there
    and hand its memories to the session. A folder elsewhere is the user's to name (MEMDIR_DIR, --dir)."""
    resolved = (path.parent / os.path.expanduser(folder)).resolve()
    home = (find_repo_root(path.parent) or path.parent).resolve()
    if not resolved.is_relative_to(home):
        where = "the repository at" if find_repo_root(path.parent) is not None else "the folder of this config,"
        raise ConfigError(
            f"{path}: `dir` names {resolved}, outside {where} {home}; a repository's config may name a folder "
            "inside it only (for a folder elsewhere, set MEMDIR_DIR or pass --dir)"
        )
    return resolved


class _Table:
    """One `[section]` of the config: the checks every setting shares, and errors that name it."""

    def __init__(self, path: Path, name: str, table: Any, known: set[str]) -> None:
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: `{name}` must be a table")
        self.path, self.name = path, name
        self.values = {key.replace("_", "-"): value for key, value in table.items()}
        unknown = sorted(set(self.values) - known)
        self.warnings = tuple(f"{path}: unknown setting `{name}.{key}` ignored" for key in unknown)

    def fail(self, key: str, what: str) -> NoReturn:
        raise ConfigError(f"{self.path}: `{self.name}.{key}` must be {what}")

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def flag(self, key: str, default: bool) -> bool:
        value = self.get(key, default)
        if not isinstance(value, bool):
            self.fail(key, "true or false")
        return value

    def count(self, key: str, default: int | None, unit: str) -> int:
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.fail(key, f"a positive whole number{unit}")
        return value

    def number(self, key: str, default: float, low: float, high: float | None = None) -> float:
        value = self.get(key, default)
        # TOML has nan and inf; every comparison with nan is false, so it would slip past the range.
        # An integer too large for a float is no number from any range (and math.isfinite of it raises).
        number = isinstance(value, int | float) and not isinstance(value, bool) and _finite(value)
        if not number or value < low or (high and value > high):
            self.fail(key, f"a number from {low:g} to {high:g}" if high else f"a number of at least {low:g}")
        return float(value)

    def model(self, key: str, default: str) -> str:
        value = self.get(key, default)
        if not isinstance(value, str) or not value.strip():
            self.fail(key, "a model name")
        return value.strip()

    def selectors(self, key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(x, str) and x.strip() for x in value):
            self.fail(key, "a list of rule codes or names")
        return tuple(x.strip() for x in value)


def _index_settings(path: Path, table: Any) -> tuple[IndexSettings, tuple[str, ...]]:
    section = _Table(path, "index", table, _INDEX_KEYS)
    entry_text = section.get("entry-text", IndexSettings.entry_text)
    if entry_text not in ENTRY_TEXTS:
        section.fail("entry-text", " or ".join(f'"{choice}"' for choice in ENTRY_TEXTS))
    return IndexSettings(entry_text=entry_text), section.warnings


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _context_settings(path: Path, table: Any) -> tuple[ContextSettings, tuple[str, ...]]:
    section = _Table(path, "context", table, _CONTEXT_KEYS)
    pin = section.get("pin-importance", ContextSettings.pin_importance)
    if pin is False:  # TOML has no null: `false` turns pinning by importance off
        pin = None
    elif isinstance(pin, bool) or not isinstance(pin, int | float) or not 0 <= pin <= 1:
        section.fail("pin-importance", "a number from 0 to 1, or false")
    budget = None if section.get("budget") is None else section.count("budget", None, " of bytes")
    settings = ContextSettings(
        pin_importance=None if pin is None else float(pin),
        budget=budget,
        recall_on_start=section.flag("recall-on-start", ContextSettings.recall_on_start),
        recall_on_prompt=section.flag("recall-on-prompt", ContextSettings.recall_on_prompt),
    )
    return settings, section.warnings


def _extract_settings(path: Path, table: Any) -> tuple[ExtractSettings, tuple[str, ...]]:
    section = _Table(path, "extract", table, _EXTRACT_KEYS)
    settings = ExtractSettings(
        model=section.model("model", ExtractSettings.model),
        every=section.count("every", ExtractSettings.every, " of turns"),
        on_stop=section.flag("on-stop", ExtractSettings.on_stop),
        refresh_duplicates=section.flag("refresh-duplicates", ExtractSettings.refresh_duplicates),
    )
    return settings, section.warnings


def _recall_settings(path: Path, table: Any) -> tuple[RecallSettings, tuple[str, ...]]:
    section = _Table(path, "recall", table, _RECALL_KEYS)
    defaults = RecallSettings()
    parts = ("relevance", "recency", "importance")
    weights = [section.number(f"{part}-weight", getattr(defaults, f"{part}_weight"), 0) for part in parts]
    if not any(weights):
        raise ConfigError(f"{path}: the `recall.*-weight` settings cannot all be 0")
    half_life = section.number("half-life-days", defaults.half_life_days, 0)
    if half_life <= 0:
        section.fail("half-life-days", "a positive number of days")
    synonyms = section.get("synonyms", [])
    if not isinstance(synonyms, list) or not all(
        isinstance(group, list) and len(group) > 1 and all(isinstance(w, str) and w.strip() for w in group)
        for group in synonyms
    ):
        section.fail("synonyms", 'a list of word lists, e.g. [["ship", "deploy"]]')
    settings = RecallSettings(
        relevance_weight=weights[0],
        recency_weight=weights[1],
        importance_weight=weights[2],
        half_life_days=half_life,
        gate=section.number("gate", defaults.gate, 0, 1),
        gate_chance=section.number("gate-chance", defaults.gate_chance, 0),
        min_relevance=section.number("min-relevance", defaults.min_relevance, 0, 1),
        min_score=section.number("min-score", defaults.min_score, 0),
        k=section.count("k", defaults.k, ""),
        synonyms=tuple(tuple(w.strip() for w in group) for group in synonyms),
        model=section.model("model", defaults.model),
        log=section.flag("log", defaults.log),
    )
    return settings, section.warnings


def _lint_settings(path: Path, table: Any) -> tuple[LintSettings, tuple[str, ...]]:
    section = _Table(path, "lint", table, _LINT_KEYS)
    ignores = section.get("per-file-ignores", {})
    if not isinstance(ignores, dict):
        section.fail("per-file-ignores", "a table of glob = [codes]")
    settings = LintSettings(
        select=section.selectors("select", section.get("select", [])),
        ignore=section.selectors("ignore", section.get("ignore", [])),
        extend_select=section.selectors("extend-select", section.get("extend-select", [])),
        per_file_ignores=tuple(
            (glob, section.selectors(f"per-file-ignores.{glob!r}", codes)) for glob, codes in ignores.items()
        ),
        stale_project_days=section.count("stale-project-days", 90, " of days"),
        claude_md=_claude_md(path, section),
    )
    return settings, section.warnings


def _claude_md(path: Path, section: _Table) -> tuple[Path, ...] | None:
    files = section.get("claude-md")
    if files is None:
        return None
    if not isinstance(files, list) or not all(isinstance(x, str) and x.strip() for x in files):
        section.fail("claude-md", "a list of file paths")
    for file in files:
        _check_path(file, f"{path}: `lint.claude-md`")
    return tuple((path.parent / os.path.expanduser(file.strip())).resolve() for file in files)


def locate(
    dir_option: Path | None,
    cwd: Path,
    env: Mapping[str, str],
    config: Config,
    *,
    managed: Path | None = MANAGED_SETTINGS,
) -> Location:
    """Resolve the memory folder and say which rule chose it. `managed`: Claude Code's managed
    settings file (None: none is read)."""
    if dir_option is not None:
        _check_path(str(dir_option), "--dir")
        return Location(_absolute(dir_option, cwd), "option", "given with --dir")
    if env.get("MEMDIR_DIR"):
        _check_path(env["MEMDIR_DIR"], "MEMDIR_DIR")
        return Location(_absolute(Path(env["MEMDIR_DIR"]), cwd), "env", "set by MEMDIR_DIR")
    if config.dir is not None:
        return Location(config.dir, "config", f"`dir` in {config.path}")
    repo = find_repo_root(cwd)
    if repo is not None and (repo / ".claude" / "memory").is_dir():
        return Location(repo / ".claude" / "memory", "repository", f".claude/memory/ in the repository at {repo}")
    return claude_location(claude_memory(cwd, env, managed), repo or cwd, env)


def claude_location(claude: ClaudeMemory, repo: Path, env: Mapping[str, str]) -> Location:
    """memdir's last resort: the folder Claude Code keeps its own memory in, except one that a
    repository's settings file (`.claude/settings.json`, `.claude/settings.local.json`) names outside
    the repository, which memdir does not follow (see _config_folder for why); then the default one."""
    if claude.setting is not None and claude.setting.in_repository and not _inside(claude.folder, repo, claude.project):
        return Location(
            claude.default,
            "claude",
            f"Claude Code's auto-memory folder for {claude.project}; {claude.setting.path} names "
            f"{claude.folder}, outside the repository, which memdir does not follow (MEMDIR_DIR or --dir can name it)",
        )
    if claude.folder != claude.default:  # from a setting or the environment
        return Location(claude.folder, "claude", claude.reason)
    home = " (CLAUDE_CONFIG_DIR)" if env.get("CLAUDE_CONFIG_DIR") else ""
    return Location(claude.default, "claude", f"Claude Code's auto-memory folder for {claude.project}{home}")


def _inside(folder: Path, *roots: Path) -> bool:
    target = folder.resolve()
    return any(target.is_relative_to(root.resolve()) for root in roots)


def _check_path(path: str, what: str) -> None:
    """A path no system call accepts (every one fails with ValueError) is a configuration error."""
    if "\0" in path:
        raise ConfigError(f"{what} must be a path without a NUL character")


def _absolute(path: Path, cwd: Path) -> Path:
    path = path.expanduser()
    return path if path.is_absolute() else (cwd / path)
