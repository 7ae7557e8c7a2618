"""Text on its way out of memdir: secrets masked, control characters made visible.

A memory's name, description, file name or body is written by a person, an agent or a tool, and
memdir copies it into terminals, logs, CI annotations, MEMORY.md and the agent's context. Every
such boundary passes it through one of these functions, so a key never leaves the file it is in
and a control sequence (`ESC [2J`, an OSC 52 clipboard write, a C1 CSI, a newline that starts
a forged `::error` line) is printed as text, never obeyed:

- `for_terminal(text)`: multi-line text (reports, the index, the context). Secrets are masked
  (`sensitive.mask_secrets`) and every C0/C1 control character and DEL other than tab and
  newline is written as a Python-style escape: ESC becomes the four characters `\\x1b`. So are
  the invisible characters that change what a reader sees (bidi controls, zero-width characters:
  `INVISIBLE`), as `\\u202e`. A line that would start a CI workflow command (`::error`,
  `##[error]`) has its first character escaped the same way.
- `one_field(text)`: a value inside a one-line format (a lint finding, a log line, a table
  cell): the same, and tab, newline and carriage return are escaped too.
- `masked(obj)` / `dumps(obj)`: a JSON payload with every string (keys too) masked; `dumps`
  also writes DEL, C1 and the invisible characters as `\\u` escapes, which
  json.dumps(ensure_ascii=False) leaves raw. JSON stays exact: they decode back, as C0 characters,
  which JSON escapes itself, do.
- `as_written(text, terminal=...)`: a file for `memdir show`, as it is on disk, but with control and
  invisible characters escaped on a terminal.
- `inert_tags(text)` and `fence_for(text)`: a memory's text in an agent's context (the markdown the
  hooks and `memdir context` give), which must not end the block it sits in or open another. Each
  `<` that would start a tag (`</memory>`, `<system>`, `</system-reminder>`, `<!--`) is written
  `&lt;`, and a body goes inside a code fence longer than any run of backticks in it, where a
  heading, a fence or a rule it holds is text.

The escapes are for reading, not a reversible encoding (a literal backslash is left as it is).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "CONTROL",
    "INVISIBLE",
    "as_written",
    "defuse_commands",
    "dumps",
    "escape_controls",
    "fence_for",
    "find_control",
    "for_terminal",
    "has_control",
    "inert_tags",
    "masked",
    "one_field",
]

# Characters a reader does not see that change what is seen: the bidi embeddings, overrides and
# isolates (U+202A-U+202E, U+2066-U+2069) reorder the text around them ("Trojan Source": a name
# that reads `admin` or a line that reads as a comment), and the zero-width space, non-joiner,
# joiner, word joiner and a byte-order mark inside text (U+200B-U+200D, U+2060, U+FEFF) hide in a
# word (`ig<U+200B>nore previous instructions` escapes a scan for the phrase) or make two names
# that look the same differ. ZWNJ and ZWJ also have work to do, and are kept where they do it
# (`_needed`).
INVISIBLE = "\u200b-\u200d\u2060\ufeff\u202a-\u202e\u2066-\u2069"
# C0 (except tab and newline), DEL and C1: what a terminal or a log reader may act on; and the invisible.
CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{INVISIBLE}]")
_CONTROL_ALL = re.compile(f"[\x00-\x1f\x7f-\x9f{INVISIBLE}]")
_CONTROL_IN_BODY = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{INVISIBLE}]")  # tab and line breaks are text
_JSON_RAW = re.compile(f"[\x7f-\x9f{INVISIBLE}]")  # what json.dumps(ensure_ascii=False) leaves unescaped
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _needed(m: re.Match[str]) -> bool:
    """Whether the character `m` found is one that does a job there, and is shown as it is: a ZWNJ
    or ZWJ between two letters or marks of a script from U+0500 on (Persian, Arabic, the Indic
    scripts, Sinhala, Mongolian shape words with them), a ZWJ that joins two emoji into one (👩‍💻,
    after a skin tone or variation selector too), or a byte-order mark that opens the text.
    Between Latin, Greek or Cyrillic letters, at a word's edge or doubled, they only hide."""
    c, at, text = m.group(), m.start(), m.string
    if c == "\ufeff":
        return at == 0
    if c not in "\u200c\u200d" or at == 0 or at + 1 >= len(text):
        return False
    import unicodedata  # only when a joiner is met

    before, after = text[at - 1], text[at + 1]
    kinds = unicodedata.category(before), unicodedata.category(after)
    if c == "\u200d" and kinds[1] == "So" and (kinds[0] in ("So", "Sk") or before == "\ufe0f"):
        return True
    return before >= "\u0500" and after >= "\u0500" and all(kind[0] in "LM" for kind in kinds)


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    if c > "\xff":
        return c if _needed(m) else f"\\u{ord(c):04x}"
    return _NAMED.get(c) or f"\\x{ord(c):02x}"


def find_control(text: str, pos: int = 0, *, newlines: bool = True, body: bool = False) -> re.Match[str] | None:
    """The first character from `pos` on that memdir writes as an escape: a control character
    (tab and newline count unless `newlines` is False; in a `body`, tab and line breaks are text)
    or an invisible one (`INVISIBLE`) where it does no job."""
    pattern = _CONTROL_IN_BODY if body else _CONTROL_ALL if newlines else CONTROL
    return next((m for m in pattern.finditer(text, pos) if m.group() <= "\xff" or not _needed(m)), None)


def has_control(text: str, *, newlines: bool = True) -> bool:
    """Whether `text` holds a control character (tab and, unless `newlines` is False, newline count
    too) or an invisible one that does no job there."""
    return find_control(text, newlines=newlines) is not None


def escape_controls(text: str, *, keep_lines: bool = True) -> str:
    """`text` with its control and invisible characters written as escapes (`\\x1b`, `\\u202e`);
    tab and newline stay with `keep_lines`, and a joiner where a script or an emoji needs it."""
    return (CONTROL if keep_lines else _CONTROL_ALL).sub(_escape, text)


def as_written(text: str, *, terminal: bool) -> str:
    """A memory file for `memdir show`, which prints it as it is on disk: unchanged in a pipe or a
    file, where a person saving or diffing it wants its bytes; on a `terminal`, with its control and
    invisible characters escaped, since a terminal obeys them (`ESC ]52;` writes the clipboard,
    `ESC [2J` clears the screen) and a person reading must see them. Secrets are not masked here:
    `show --redact` takes them out. A CRLF line ending is a line break there, not a `\\r`."""
    return escape_controls(text.replace("\r\n", "\n")) if terminal else text


def _mask(text: str) -> str:
    # sensitive.py compiles its catalogue on import: loaded on the first text that leaves memdir,
    # and kept, since an import statement costs a lookup on every one of a report's strings.
    global _mask_secrets
    if _mask_secrets is None:
        from memdir.text.sensitive import mask_secrets

        _mask_secrets = mask_secrets
    return _mask_secrets(text)


_mask_secrets: Callable[[str], str] | None = None


def for_terminal(text: str) -> str:
    """Multi-line text safe to print: secrets masked, control characters other than tab and newline
    escaped, and no line that a CI runner would read as a workflow command (`defuse_commands`)."""
    return defuse_commands(escape_controls(_mask(text)))


# GitHub Actions runs `::command ...` and the older `##[command]` found at the start of any line
# of a job's output (stdout or stderr), after leading whitespace.
_COMMAND_START = re.compile(r"^([ \t]*)(:(?=:)|#(?=#\[))", re.MULTILINE)


def defuse_commands(text: str) -> str:
    """`text` with the first character of each line that would start a workflow command escaped
    (`::error` becomes `\\x3a:error`). memdir's own output never starts a line so; a name or file
    name in it may. Only the lint `github` format writes workflow commands, and not through this."""
    return _COMMAND_START.sub(lambda m: f"{m.group(1)}\\x{ord(m.group(2)):02x}", text)


def one_field(text: str) -> str:
    """A value safe inside a one-line format: secrets masked and every control character escaped,
    so it can neither start a line of its own nor move the cursor."""
    return escape_controls(_mask(text), keep_lines=False)


def masked(obj: Any, clean: Callable[[str], str] | None = None) -> Any:
    """`obj` (JSON-shaped: dicts, lists, strings, numbers) with the secrets in every string masked,
    or with every string passed through `clean` (`for_terminal` also escapes control characters)."""
    clean = clean or _mask
    if isinstance(obj, str):
        return clean(obj)
    if isinstance(obj, dict):
        return {clean(k) if isinstance(k, str) else k: masked(v, clean) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [masked(v, clean) for v in obj]
    return obj


def dumps(obj: Any, *, indent: int | None = 2, compact: bool = False, mask: bool = True) -> str:
    """`obj` as JSON text, secrets masked (unless not `mask`) and no raw control character in it
    (no final newline); `compact` drops the spaces after `,` and `:` (for log lines)."""
    value = masked(obj) if mask else obj
    if indent is None and not compact:  # json.dumps would build the same encoder on every call
        text = _ONE_LINE.encode(value)
    else:
        separators = (",", ":") if compact else None
        text = json.dumps(value, ensure_ascii=False, indent=indent, separators=separators)
    return _JSON_RAW.sub(_unicode_escape, text)


_ONE_LINE = json.JSONEncoder(ensure_ascii=False)


def _unicode_escape(m: re.Match[str]) -> str:
    return m.group() if m.group() > "\xff" and _needed(m) else f"\\u{ord(m.group()):04x}"


# What a model, or the harness around it, reads as markup: a tag opening or closing (`<system>`,
# `</memory>`, `<x>`), a comment or a declaration (`<!--`, `<!DOCTYPE`, `<?xml`).
_TAG_START = re.compile(r"<(?=/?[A-Za-z]|[!?])")
_BACKTICKS = re.compile(r"`+")


def inert_tags(text: str) -> str:
    """`text` with every `<` that starts a tag written `&lt;`, so that in an agent's context it can
    neither close the block it is in nor open one (a rendered page still shows `<` outside code)."""
    return _TAG_START.sub("&lt;", text)


def fence_for(text: str) -> str:
    """A backtick code fence that no line of `text` can close: a fence ends only at a run of
    backticks at least as long, so one longer than any run in `text` (and at least three)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)
