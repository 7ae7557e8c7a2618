"""Claude Code's hooks at run time: what `memdir hook session-start|user-prompt-submit|stop` do.
`session_start` re-indexes the memory folder and returns the index as context for the new session
(with `context.recall-on-start`, also pinned memories and those recalled for the git branch);
`prompt_recall` returns the memories recall finds for the prompt just submitted, or nothing;
`record_stop` stages the session's transcript in `.memdir/` for extraction (memdir.write.pending).
None prints: they return what the CLI should write, and notes for stderr. Installing the hooks is
claude_settings.py.

Nothing here imports typer or rich: the hooks run before every session (see cli/fast.py).

Over 500 lines: three hooks, each short, that share reading the hook's input and finding the
session's folder; one module keeps what runs before every session in one import.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.core.cache import ParseCache
from memdir.core.claude_code import find_repo_root
from memdir.core.config import load_config, locate
from memdir.core.errors import LockTimeout, MemdirError
from memdir.core.index import Caps, Indexable, build_index
from memdir.core.inputs import JsonTooDeep, kind_of, parse_json
from memdir.core.model import INDEX_NAME, plural
from memdir.core.store import (
    ensure_state_dir,
    folder_lock,
    open_state_file,
    rotate_log,
    state_dir,
)
from memdir.folder import IndexWrite, MemoryDir
from memdir.text.outward import for_terminal

# --- the hooks themselves -------------------------------------------------------------------

# `memdir hook X`: the events memdir runs for (claude_settings maps them to Claude Code's names)
SESSION_START, USER_PROMPT_SUBMIT, STOP = "session-start", "user-prompt-submit", "stop"
# Claude Code keeps a hook's additionalContext inline only up to 10,000 characters; past that the
# model gets a 2 KB preview and a file path instead. Stay under it with room for the JSON around it.
CONTEXT_LIMIT = 9_000
# The prompt hook recalls for at most this many characters of a prompt: its beginning and its end,
# where people say what they want; a long prompt's middle is mostly a paste (a log, a diff), and
# recall's work grows with the query, which would hold the prompt up (10,000 characters: ~0.6 s).
PROMPT_QUERY_LIMIT = 4_000
# The plugin's slash commands (/memdir:recall, /memdir:lint, /memdir:review) run memdir themselves;
# Claude Code hands the prompt hook their command line, which is not a task to recall for.
OWN_COMMANDS = "/memdir:"
# A hook's JSON on stdin: a prompt with a paste in it is a few hundred kilobytes. Read no further
# than this (past it the hook goes on without its input): a stream that never ends must not fill memory.
HOOK_INPUT_LIMIT = 16 * 1024 * 1024
LOCK_WAIT_SECONDS = 2.0  # a hook must not sit behind a long `memdir lint --fix`; show the plan instead


@dataclass
class HookOutcome:
    """What a hook command writes: `output` as JSON on stdout (None: nothing), `notes` on stderr."""

    output: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


def parse_hook_input(text: str) -> tuple[dict[str, Any], str | None]:
    """The hook's JSON payload, and a note when it is missing or unusable (the hook goes on)."""
    if not text.strip():
        return {}, None
    try:
        payload = parse_json(text)
    except JsonTooDeep as exc:
        return {}, f"hook input is JSON {exc}; going on without it"
    except ValueError as exc:
        return {}, f"hook input is not JSON ({exc}); going on without it"
    if not isinstance(payload, dict):
        return {}, "hook input is not a JSON object; going on without it"
    return payload, None


def _string(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def hook_folder(
    payload: Mapping[str, Any],
    *,
    dir_option: Path | None,
    env: Mapping[str, str],
    cwd: Path,
    today: dt.date | None = None,
    cache: bool = True,
) -> tuple[MemoryDir | None, list[str]]:
    """The memory folder of the session: resolved as usual, from the hook's `cwd` (the project)
    when it sent one. None, with a note, when there is none to work on."""
    notes: list[str] = []
    where = cwd
    sent = _string(payload, "cwd")
    if sent is not None:
        if Path(sent).is_dir():
            where = Path(sent)
        else:
            notes.append(f"hook cwd {sent} is not a folder; resolving from {cwd}")
    try:
        config = load_config(where)
        location = locate(dir_option, where, env, config)
    except MemdirError as exc:
        return None, [*notes, str(exc)]
    if not location.path.is_dir():
        notes.append(f"no memory folder at {location.path} ({location.reason}); nothing to do")
        return None, notes
    return MemoryDir(location.path, config=config, today=today, cache=cache), notes


def session_start(
    payload: Mapping[str, Any],
    *,
    dir_option: Path | None,
    env: Mapping[str, str],
    cwd: Path,
    today: dt.date | None = None,
    cache: bool = True,
) -> HookOutcome:
    """Re-index the session's memory folder and return its index as the session's context."""
    folder, notes = hook_folder(payload, dir_option=dir_option, env=env, cwd=cwd, today=today, cache=cache)
    outcome = HookOutcome(notes=notes)
    if folder is None:
        return outcome
    try:
        write = _reindex(folder, outcome.notes)
    except MemdirError as exc:  # a MEMORY.md memdir will not read: say so, start the session anyway
        outcome.notes.append(str(exc))
        return outcome
    index_text = write.previous if write.result.refused is not None else write.result.text
    if not (index_text or "").strip():
        return outcome
    context = session_context(folder, index_text or "", write.inputs, write.result.dead)
    if write.first_run and write.changed and write.result.rewritten:
        context += first_rewrite_note(len(write.result.rewritten))
    if folder.config.context.recall_on_start:
        where = _string(payload, "cwd")
        topic = session_topic(Path(where) if where and Path(where).is_dir() else cwd)
        context += session_bodies(folder, topic, CONTEXT_LIMIT - _length(context), outcome.notes)
    outcome.output = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
    return outcome


def first_rewrite_note(count: int) -> str:
    """Told to the agent when memdir rewrote this MEMORY.md for the first time: nobody reads a
    hook's stderr, so the session is where the owner can hear that their own lines were replaced."""
    lines = "1 hand-written entry line" if count == 1 else f"{count} hand-written entry lines"
    return (
        f"\n\nNote for the user: memdir has just indexed this folder for the first time and replaced {lines} "
        "of MEMORY.md with the descriptions in the memories' own files. The previous MEMORY.md is in "
        '.memdir/MEMORY.md.prev; to keep hand-written wording, copy it back and set `entry-text = "keep"` '
        "under [index] in .memdir.toml. Mention this to the user once.\n"
    )


def _reindex(folder: MemoryDir, notes: list[str]) -> IndexWrite:
    """`memdir index`, except that it waits for the folder lock only briefly and falls back to
    what the index would be (written by nobody) when it cannot write."""
    try:
        # A probe: write_index waits up to 30 s for the lock, far past the hook's timeout. Another
        # writer could take the lock between the probe and write_index; that is rare and only
        # costs the wait.
        with folder_lock(folder.root, timeout=LOCK_WAIT_SECONDS):
            pass
        write = folder.write_index()
    except (LockTimeout, OSError) as exc:
        notes.append(f"MEMORY.md not rewritten ({exc}); using what it would hold")
        write = folder.write_index(dry_run=True)
    if write.unreadable:
        notes.append(f"{write.unreadable_note()} (`memdir lint` explains)")
    if write.result.refused is not None:
        notes.append(f"MEMORY.md not rewritten: {write.result.refused}")
    if write.result.withheld:
        left = plural(len(write.result.withheld), "memory", "memories")
        notes.append(f"{left} left out of MEMORY.md: a secret in the file name (`memdir lint --select S009`)")
    return write


def session_context(folder: MemoryDir, index_text: str, inputs: Sequence[Indexable], dead: Sequence[str] = ()) -> str:
    """The text a new session starts with: a short header and the index, within CONTEXT_LIMIT.
    `inputs` are the memories the index was built from (IndexWrite.inputs), to fit it smaller;
    `dead` its entries whose file is gone (IndexResult.dead), left out with a line that says so.

    The one place that decides what the session sees; a richer renderer can replace it.
    """
    from memdir.read.context import missing_note, without_dead_entries

    index_text, missing = without_dead_entries(index_text, dead)
    if missing:
        index_text = index_text.rstrip("\n") + "\n\n" + missing_note(missing)
    header = (
        "# Long-term memory (memdir)\n\n"
        f"The index of this project's memory folder, {folder.root}: one line per memory file, with "
        "what it holds. Read a memory's file when its description bears on the task.\n\n"
    )
    # MEMORY.md's hand-written lines are as a person left them: no key and no ESC goes into the session.
    index_text = for_terminal(index_text)
    if _length(header + index_text) > CONTEXT_LIMIT:
        header += f"Some entries are left out here to stay short; the full index is {folder.index_path}.\n\n"
    return header + _fit_index(folder, index_text, CONTEXT_LIMIT - _length(header), inputs)


# Branches that say nothing about the work on them.
_DEFAULT_BRANCHES = frozenset({"main", "master", "trunk", "develop", "development", "dev", "default", "HEAD"})


def session_topic(cwd: Path) -> str | None:
    """What a new session is most likely about, as far as a SessionStart hook can tell: the name of
    the git branch checked out in `cwd` ("fix/route-import" -> "fix route import"), unless it is a
    default branch. None when there is no telling (no repository, a detached HEAD, `main`).

    Read from .git/HEAD (worktrees too), not by running git: the hook runs before every session.
    """
    root = find_repo_root(cwd)
    if root is None:
        return None
    git = root / ".git"
    try:
        if git.is_file():  # a worktree or submodule: "gitdir: <path>"
            pointer = git.read_text(encoding="utf-8").strip()
            if not pointer.startswith("gitdir:"):
                return None
            git = root / pointer.removeprefix("gitdir:").strip()
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not head.startswith("ref: refs/heads/"):
        return None  # detached: a commit id says nothing
    branch = head.removeprefix("ref: refs/heads/")
    if branch in _DEFAULT_BRANCHES:
        return None
    return " ".join(branch.replace("/", " ").replace("-", " ").replace("_", " ").split()) or None


def session_bodies(folder: MemoryDir, topic: str | None, room: int, notes: list[str]) -> str:
    """The full text of the pinned memories and of those recalled for `topic`, each recalled one
    with its age, within `room` characters (after the index: it is spent first). "" when none fit."""
    from memdir.read.context import ContextBudgetTooSmall, pinned_memories, render_context
    from memdir.read.recall import recall, recalled_memories

    scan = folder.scan()  # read once, for the pinned memories here and the bodies below
    pinned = pinned_memories(folder, scan)
    recalled = []
    if topic:
        found = recall(folder, topic, already=[m.path for m in pinned])
        if found.log_error:
            notes.append(f"recall not logged: {found.log_error}")
        recalled = recalled_memories(folder, found)
    # A byte budget: UTF-8 never takes fewer bytes than UTF-16 code units, so it fits `room` too.
    budget = room - 1  # the blank line before the section
    bodies = None
    if budget >= 1:
        with contextlib.suppress(ContextBudgetTooSmall):
            bodies = render_context(folder, "markdown", budget, include_index=False, recalled=recalled, scan=scan)
    if bodies is None or not bodies.loaded:  # the index filled the room, or left too little for any
        if pinned or recalled:
            wanted = plural(len(pinned) + len(recalled), "memory", "memories")
            notes.append(f"{wanted} to load in full left out: the index leaves the hook no room for them")
        return ""
    return "\n" + bodies.text


def _length(text: str) -> int:
    """Length as Claude Code (JavaScript) counts it: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def _fit_index(folder: MemoryDir, text: str, budget: int, inputs: Sequence[Indexable]) -> str:
    """The index within `budget` characters: left out least valuable first, as `memdir index` does
    for its own caps (so never a blind cut), else cut at a line with a note when hand-written text
    alone is too long."""
    length = _length(text)
    if length <= budget:
        return text
    # Caps count UTF-8 bytes; aim the byte cap at the character budget, then tighten if needed.
    max_bytes = int(budget * len(text.encode("utf-8")) / length)
    for _ in range(4):
        # Built again from the same memories, not by reading the folder a second time.
        result = build_index(text, inputs, folder.today, Caps(max_lines=folder.caps.max_lines, max_bytes=max_bytes))
        if result.refused is not None:
            break
        fitted = _length(result.text)
        if fitted <= budget:
            return result.text
        max_bytes = int(max_bytes * budget / fitted) - 1
    note = f"<!-- memdir: cut here to fit Claude Code's hook output limit; the rest is in {INDEX_NAME} -->\n"
    kept, used = [], _length(note)
    for line in text.splitlines(keepends=True):
        used += _length(line)
        if used > budget:
            break
        kept.append(line)
    return "".join(kept) + note


def prompt_recall(
    payload: Mapping[str, Any],
    *,
    dir_option: Path | None,
    env: Mapping[str, str],
    cwd: Path,
    today: dt.date | None = None,
    cache: bool = True,
) -> HookOutcome:
    """The memories recall chooses for the prompt the user just submitted, in full, as context for
    this turn; no output at all when nothing passes recall's gate, or with `context.recall-on-prompt`
    off. Runs before every prompt reaches the model, so it stays on the fast path: the stored term
    index, no model, no re-index."""
    prompt = _string(payload, "prompt")
    if prompt is None or not prompt.strip() or prompt.lstrip().startswith(OWN_COMMANDS):
        return HookOutcome()
    folder, notes = hook_folder(payload, dir_option=dir_option, env=env, cwd=cwd, today=today, cache=cache)
    outcome = HookOutcome(notes=notes)
    if folder is None or not folder.config.context.recall_on_prompt:
        return outcome
    from memdir.read.recall import recall, recalled_memories

    try:
        found = recall(folder, prompt_query(prompt))
    except MemdirError as exc:
        outcome.notes.append(f"recall failed: {exc}")
        return outcome
    if found.log_error:
        outcome.notes.append(f"recall not logged: {found.log_error}")
    if not found.results:  # most prompts: then the parse cache (every file's row) need not be read
        return outcome
    # Through the parse cache: the session's start has parsed these files, so YAML need not load.
    parsed = ParseCache.load(state_dir(folder.root)) if folder.cache else None
    memories = recalled_memories(folder, found, parsed)
    ages = {chosen.path: chosen.age for chosen in found.results}  # as recall counted them
    if not memories:
        return outcome
    from memdir.read.context import recalled_in_full  # only now: most prompts recall nothing

    header = (
        "# Memories recalled for this prompt (memdir)\n\n"
        f"From this project's memory folder, {folder.root}: the memories whose text bears most on what "
        "the user just asked, best first. Use them where they apply; a memory can be out of date.\n"
    )
    context, left_out = header, 0
    for memory in memories:  # each in whole or left out, as the session's context does
        if memory.exclusion(folder.today) is not None:  # changed since recall chose it: as render_context
            continue
        text = recalled_in_full(memory, ages[memory.path], folder.today)
        if _length(context + text) > CONTEXT_LIMIT:
            left_out += 1
            continue
        context += text
    if left_out:
        outcome.notes.append(f"{plural(left_out, 'recalled memory', 'recalled memories')} left out to stay short")
    if context == header:
        return outcome
    outcome.output = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}}
    return outcome


def prompt_query(prompt: str, limit: int = PROMPT_QUERY_LIMIT) -> str:
    """What the prompt hook recalls for: the prompt, or the beginning and the end of a long one,
    each cut at a word boundary, `limit` characters in all."""
    if len(prompt) <= limit:
        return prompt
    half = limit // 2
    head, tail = prompt[:half], prompt[-half:]
    head = head.rsplit(None, 1)[0] if not prompt[half].isspace() and head.strip() else head
    tail = tail.split(None, 1)[-1] if not prompt[-half - 1].isspace() and tail.strip() else tail
    return f"{head}\n{tail}"


def record_stop(
    payload: Mapping[str, Any],
    *,
    dir_option: Path | None,
    env: Mapping[str, str],
    cwd: Path,
    now: dt.datetime | None = None,
) -> HookOutcome:
    """Stage the session's transcript in `.memdir/pending-extractions.jsonl` (memdir.write.pending)
    and start a detached `memdir extract` on it (see `spawn_extraction`).

    Claude Code runs Stop hooks after every reply, so one session would add a line per turn: a
    session already staged (same id and transcript) is not added again. When no extraction starts
    (no API key, or `extract.on-stop` off), the first session staged tells the user, once, through
    the hook's `systemMessage` (Claude Code shows it; it does not stop the agent), how to extract
    what is staged: `memdir extract --pending`. The next one to tell is the first after that clears.
    """
    from memdir.write.llm import has_api_key
    from memdir.write.pending import add_pending

    folder, notes = hook_folder(payload, dir_option=dir_option, env=env, cwd=cwd, cache=False)
    outcome = HookOutcome(notes=notes)
    transcript = _string(payload, "transcript_path")
    if folder is None:
        return outcome
    if transcript is None:
        outcome.notes.append("hook input has no transcript_path; nothing recorded")
        return outcome
    kind = _not_a_file(transcript, _string(payload, "cwd"))
    if kind is not None:  # an extraction would wait on a named pipe forever, or read /dev/zero
        outcome.notes.append(f"transcript_path {transcript} is {kind}, not a regular file; nothing recorded")
        return outcome
    entry = {
        "session_id": _string(payload, "session_id"),
        "transcript_path": transcript,
        "cwd": _string(payload, "cwd"),
        "recorded_at": (now or dt.datetime.now().astimezone()).isoformat(timespec="seconds"),
    }
    staged = add_pending(folder.root, entry)
    if staged.dropped:
        outcome.notes.append(f"{plural(staged.dropped, 'staged session', 'staged sessions')} let go, the oldest")
    sent = _string(payload, "cwd")
    started = spawn_extraction(folder, transcript, env, Path(sent) if sent and Path(sent).is_dir() else cwd)
    if staged.first and not started:
        why = "`extract.on-stop` is off" if has_api_key(env) else "there is no ANTHROPIC_API_KEY in its environment"
        outcome.output = {
            "systemMessage": f"memdir did not extract memories from this session: {why}. Its transcript is "
            f"staged in {folder.root}; run `memdir extract --pending` (with the key set) to extract every "
            "staged session."
        }
    return outcome


def _not_a_file(transcript: str, cwd: str | None) -> str | None:
    """What stands at a transcript path when it is something other than a regular file ("a named
    pipe"), else None (a regular file, or nothing: the extraction says that it is missing). Looked at
    without opening it, which could wait."""
    from memdir.write.pending import transcript_of

    path = transcript_of({"transcript_path": transcript, "cwd": cwd})
    try:
        mode = os.stat(path).st_mode if path is not None else stat.S_IFREG
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(mode) else kind_of(mode)


EXTRACT_HOOK_LOG = "extract-hook.log"


def spawn_extraction(folder: MemoryDir, transcript: str, env: Mapping[str, str], cwd: Path) -> bool:
    """Start `memdir extract TRANSCRIPT --yes --format text` detached from the hook, and return at once.

    The child gets its own session and no terminal: its output goes to `.memdir/extract-hook.log`
    (its decisions to `.memdir/log.jsonl`), never into the agent's session; past 10 MiB that log
    starts afresh, keeping one old generation. Not started without an
    API key (it could only fail) or with `extract.on-stop = false`. It runs in `cwd`, the session's
    project, so it reads the same config as the hook. True when it was started.
    """
    import subprocess
    import sys

    from memdir.write.llm import has_api_key

    if not folder.config.extract.on_stop or not has_api_key(env):
        return False
    # --format text: the log is for people, and MEMDIR_OUTPUT_FORMAT from the user's shell (json, or a
    # value no command has, which would stop the run) must not decide it.
    command = [
        sys.executable,
        "-m",
        "memdir",
        "--dir",
        str(folder.root),
        "extract",
        transcript,
        "--yes",
        "--format",
        "text",
    ]
    log = ensure_state_dir(folder.root) / EXTRACT_HOOK_LOG
    rotate_log(log)
    with open_state_file(log, append=True) as output:
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,  # a process group of its own: the hook's end does not end it
            close_fds=True,
        )
    return True


def run_hook(
    event: str,
    stdin_text: str,
    *,
    dir_option: Path | None,
    env: Mapping[str, str],
    cwd: Path,
    today: dt.date | None = None,
    cache: bool = True,
) -> HookOutcome:
    """`memdir hook EVENT` with its input read: what to print and what to note."""
    payload, note = parse_hook_input(stdin_text)
    if event == SESSION_START:
        outcome = session_start(payload, dir_option=dir_option, env=env, cwd=cwd, today=today, cache=cache)
    elif event == USER_PROMPT_SUBMIT:
        outcome = prompt_recall(payload, dir_option=dir_option, env=env, cwd=cwd, today=today, cache=cache)
    elif event == STOP:
        outcome = record_stop(payload, dir_option=dir_option, env=env, cwd=cwd)
    else:
        raise ValueError(f"unknown hook {event!r}")
    if note is not None:
        outcome.notes.insert(0, note)
    return outcome
