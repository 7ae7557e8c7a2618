"""Plain frontmatter read without a YAML parser: one `key: value` a line, plain values, and one
level of `key:` with indented lines under it (Claude Code's `metadata:` block), as almost every
memory has it. Anything YAML could read otherwise is declined (None), and the YAML parser decides
(core/model.py).

Why a second reader: with PyYAML's C loader alone, a cold `memdir index` of the team's
10,000-memory stress folder takes twice the CPU (1.44 s against 0.75 s), one of 50 realistic
memories 18% more (86 ms against 73 ms), and one changed memory costs a session-start index 13% more
(80 ms against 71 ms: importing yaml). The usual block is read with one regular expression
(`_COMMON_LINES`), anything else line by line (`plain_lines`): the one pass saves 12% of that cold
stress index (0.76 s against 0.87 s). tests/test_model.py and tests/test_properties.py hold both
readings to PyYAML on every file of the real corpus and on fuzzed frontmatter.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from memdir.text.lazyre import LazyPattern

__all__ = ["INT_BOUND", "INT_DIGITS_MAX", "RISKY_START", "YAML_RESOLVERS", "plain_flow_list", "plain_frontmatter",
           "plain_lines"]  # fmt: skip

# Declined, for the YAML parser: quotes other than the plain ones, flow or block collections,
# anchors, tags, `: ` or ` #` inside a value, numbers other than the simple ones, YAML 1.1 booleans,
# characters YAML rejects. The patterns compile on first use (text/lazyre.py): a warm `memdir index`
# or a hook reads every frontmatter from the parse cache.
_SIMPLE_LINE = LazyPattern(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*")
# YAML's indicators: a plain value cannot start with one. `-` only before a space, see _risky.
RISKY_START = frozenset("!&*|>'\"%@`[]{},?#")
# PyYAML's implicit resolvers (yaml/resolver.py, YAML 1.1), copied verbatim: a plain scalar none of
# them matches is a string, whatever its first character. A test holds the copy to PyYAML's table.
YAML_RESOLVERS = (
    r"""^(?: ~
                    |null|Null|NULL
                    | )$""",
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""",
    r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""",
    r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
    r"^(?:<<)$",
    r"^(?:=)$",
    r"""^(?:yes|Yes|YES|no|No|NO
                    |true|True|TRUE|false|False|FALSE
                    |on|On|ON|off|Off|OFF)$""",
)
_YAML_TYPED = LazyPattern("|".join(f"(?:{pattern})" for pattern in YAML_RESOLVERS), re.VERBOSE)
# Compared lower-cased: YAML 1.1 reads these as booleans or null, as values and as keys.
_SPECIAL_WORDS = frozenset(("y", "n", "yes", "no", "true", "false", "on", "off", "null", "~", "<<"))
_DAY = LazyPattern(r"\d{4}-\d\d-\d\d")
_DIGIT_START = frozenset("0123456789")
_QUOTED = LazyPattern(r"'(?:[^'\t]|'')*'|\"(?:[^\"\\\t]|\\[\"\\])*\"")
_QUOTED_ESCAPE = LazyPattern(r'\\(["\\])')  # in double quotes, `\"` and `\\` only: the rest go to YAML
_INT = LazyPattern(r"0|[1-9][0-9]*")
# Python converts no int of more than 4,300 digits to or from text (sys.get_int_max_str_digits) and
# none above about 1.8e308 to a float, so one such number in one file would make every command that
# reads it an internal error. No field of a memory means anything by a number that long: it is read
# as the text it was written as, like an impossible date, and lint F011 names it where a number was due.
INT_DIGITS_MAX = 300
INT_BOUND = 10**INT_DIGITS_MAX
_FLOAT = LazyPattern(r"(?:0|[1-9][0-9]*)\.[0-9]+")
# What YAML refuses: anything outside [\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff],
# written as the characters refused: the negated class takes milliseconds to compile at every start.
_YAML_REJECTS = LazyPattern("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
# A bare CR, NEL, U+2028 and U+2029 are line breaks to YAML but not to the line-by-line reading
# below: a value holding one goes to YAML.
_YAML_BREAKS = LazyPattern("\r(?!\n)|[\x85\u2028\u2029]")


def _risky(value: str) -> bool:
    """Whether YAML might read `value`, a line's plain value, as anything but that text."""
    return (
        value[0] in RISKY_START
        or (value[0] == "-" and value[1:2] in ("", " "))  # a block sequence's `- `
        or value.lower() in _SPECIAL_WORDS
        or _YAML_TYPED.match(value) is not None  # a number, date, boolean, null: read by _simple_value or YAML
        or ": " in value
        or ":\t" in value
        or " #" in value
        or "\t" in value
        or value.endswith(":")
    )


def _simple_value(value: str) -> tuple[bool, Any]:
    """(True, what YAML reads) for a value simple enough to be sure of; (False, None) otherwise."""
    first = value[0]
    if first in _DIGIT_START:
        if _DAY.fullmatch(value):
            try:
                return True, dt.date.fromisoformat(value)
            except ValueError:
                return False, None
        if _INT.fullmatch(value):
            return True, int(value) if len(value) <= INT_DIGITS_MAX else value
        if _FLOAT.fullmatch(value):
            return True, float(value)
    elif first in "'\"" and _QUOTED.fullmatch(value):  # 'it''s' or "say \"no\"": the common quoted descriptions
        return True, value[1:-1].replace("''", "'") if first == "'" else _QUOTED_ESCAPE.sub(r"\1", value[1:-1])
    elif first == "[":
        return plain_flow_list(value)
    if _risky(value):
        return False, None
    return True, value


def plain_flow_list(value: str) -> tuple[bool, Any]:
    """`[a, b, 2026-01-02]`, the usual `tags:` line: a flow list of simple plain values, else declined."""
    if not value.endswith("]") or any(c in value[1:-1] for c in "[]{}'\"#:&*!|>%@`?"):
        return False, None
    inner = value[1:-1].strip()
    if not inner:
        return True, []
    items: list[Any] = []
    for item in inner.split(","):
        item = item.strip()
        simple, parsed = _simple_value(item) if item else (False, None)
        if not simple:
            return False, None
        items.append(parsed)
    return True, items


# The common frontmatter read with one regex call: each line of the block is split into its indent,
# key and value, and the usual values (plain text, a quoted description, a session id, a date) are
# told apart in C, so Python only files them. It reads no line differently from plain_lines below,
# which takes over when a line is anything else. `_OK` is a line's character as that reading allows
# it below U+0100: no line break YAML sees (a bare CR, NEL), nothing YAML rejects.
_OK = "^\x00-\x08\x0a-\x1f\x7f-\x9f"
# The same refusal above U+00FF, looked for apart: in the classes of _COMMON_LINES it took 10 ms to compile.
_YAML_REFUSED_WIDE = LazyPattern("[\u2028\u2029\ud800-\udfff\ufffe\uffff]")
# _SPECIAL_WORDS spelt out (or a few more, as `(?i)` folds `ſ` to s), tried only after a first letter
# one of them has, not on every key and value.
_YAML_WORD = r"(?=[yYnNtTfFoO])(?i:y|n|yes|no|true|false|on|off|null)"
# The blanks before a value and the catch-all value are possessive: were they to give back what
# they took, a long run of blanks before a character no branch takes (a control character, a bare
# CR) would be tried in every split, cubic in its length: a few thousand blanks took seconds.
_COMMON_LINES = LazyPattern(
    rf"""
    (?P<indent>\ *)(?!{_YAML_WORD}[ \t]*:)(?P<key>[A-Za-z_][A-Za-z0-9_-]*)[ \t]*:
    (?:[ \t]++(?:
        # Text _risky passes: no indicator, colon, digit, sign or dot first; words joined by spaces
        # or by a colon, never `: `, ` #`, a tab or a colon at the end.
        (?P<plain>(?!{_YAML_WORD}[ \t]*\r?\n)
            [{_OK}\ \t:!&*|>'"%@`\[\]{{}},?\#0-9+.~=<-][{_OK}\ \t:]*+
            (?:(?:\ ++|:)[{_OK}\ \t:\#][{_OK}\ \t:]*+)*+
          | [0-9a-fA-F]{{8}}(?:-[0-9a-fA-F]{{4}}){{3}}-[0-9a-fA-F]{{12}})  # a UUID: originSessionId
      | (?P<single>'(?:[{_OK}'\t]|'')*')
      | (?P<double>"(?:[{_OK}"\\\t]|\\["\\])*")
      | (?P<day>[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}})
      | (?P<other>[{_OK}]*+)  # anything else, blanks at its end too: _simple_value decides
    ))?[ \t]*\r?\n
    | \ *\r?\n  # a blank line (a tab in one: see plain_lines)
    | \#[{_OK}]*\r?\n  # a comment in the first column
    | (?P<bad>[^\n]*\n)
    """,
    re.VERBOSE,
)


def plain_frontmatter(yaml_text: str) -> dict[str, Any] | None:
    """The frontmatter as YAML would read it, when it is simple enough to be sure; else None.

    Simple: `key: value` lines, and one level of `key:` followed by indented `key: value` lines
    (Claude Code's `metadata:` block)."""
    if yaml_text[-1:] not in ("", "\n") or (not yaml_text.isascii() and _YAML_REFUSED_WIDE.search(yaml_text)):
        return plain_lines(yaml_text)
    data: dict[str, Any] = {}
    block: dict[str, Any] | None = None  # the nested mapping being read
    indent = ""
    target: dict[str, Any]
    for lead, key, plain, single, double, day, other, bad in _COMMON_LINES.findall(yaml_text):
        if bad:
            return plain_lines(yaml_text)
        if not key:
            continue  # a blank line or a comment
        if lead:
            if block is None:
                return None
            if not indent:
                indent = lead
            elif lead != indent:
                return None
            target = block
        else:
            if block is not None:
                if not block:
                    return None  # `key:` with nothing under it is null: let YAML say so
                block = None
            target = data
        if plain:
            target[key] = plain
        elif single:
            target[key] = single[1:-1].replace("''", "'")
        elif double:
            target[key] = _QUOTED_ESCAPE.sub(r"\1", double[1:-1]) if "\\" in double else double[1:-1]
        elif day:
            try:
                target[key] = dt.date.fromisoformat(day)
            except ValueError:
                return None
        elif other:
            simple, parsed = _simple_value(other.rstrip(" \t"))
            if not simple:
                return None
            target[key] = parsed
        elif lead:
            return None  # deeper nesting
        else:
            block, indent = {}, ""
            data[key] = block
    if block is not None and not block:
        return None
    return data


def plain_lines(yaml_text: str) -> dict[str, Any] | None:
    """plain_frontmatter read line by line, for the frontmatter its one regex does not take whole."""
    if _YAML_REJECTS.search(yaml_text) or _YAML_BREAKS.search(yaml_text):
        return None
    data: dict[str, Any] = {}
    block: dict[str, Any] | None = None  # the nested mapping being read
    indent = ""
    for raw in yaml_text.split("\n"):
        line = raw.rstrip("\r")
        if not line.strip():
            if "\t" in line:  # libyaml refuses a tab where a blank line's indentation would be
                return None
            continue
        if line.lstrip().startswith("#"):
            if line[0] in " \t":
                return None  # an indented comment may sit inside a block value
            continue
        if line[0] in " \t":
            if block is None:
                return None
            here = line[: len(line) - len(line.lstrip())]
            indent = indent or here
            if here != indent or "\t" in here:
                return None
            line = line[len(indent) :]
        elif block is not None:
            if not block:
                return None  # `key:` with nothing under it is null: let YAML say so
            block = None
        found = _SIMPLE_LINE.fullmatch(line)
        if found is None:
            return None
        key, value = found.group(1), found.group(2) or ""
        if key.lower() in _SPECIAL_WORDS:
            return None
        target = data if block is None else block
        if not value:
            if block is not None:
                return None  # deeper nesting
            block, indent = {}, ""
            data[key] = block
            continue
        simple, parsed = _simple_value(value)
        if not simple:
            return None
        target[key] = parsed
    if block is not None and not block:
        return None
    return data
