"""The rules' faster scans over every body find what the plain patterns find (counted, not timed)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.core.config import DEFAULT_HOW_LABELS, DEFAULT_WHY_LABELS
from memdir.lint import body, content
from memdir.lint.registry import at_line_starts

_BODIES = [
    "",
    "\n",
    "Why: x\n**How to apply**: y\n## Why\n> - **Warum:** z\n  __Why:__ w\n**Why: the reason**\nWhy\n:",
    "```python\nx = 1\n```\n~~~\ncode\n~~~~\n   ```\n    ```not\n```",
    "src/\n├── api/\n│   └── web/\n|-- a\n`-- b\n| --- | --- |\n|---|---|\n",
    'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
    '  File "b\nc.py", line 9, in f\n    at Foo.bar (x.js:1:2)\n\tat a.b(C.java:3)\ngoroutine 1 [\npanic: x',
    "1. `git pull`\n2) `npm ci`\n3. b\n   more\n4. `make`\n\nStep 5: `cd x`\n6. `rm -r y`\n7. z\n",
    "为什么：中文\n如何应用： 这样\n이유: 한국어\n**Por qué:** x\nHOW TO APPLY: y\nhow\nto apply: z",
]
_LABELS = (*DEFAULT_WHY_LABELS, *DEFAULT_HOW_LABELS)


@pytest.mark.parametrize(
    "pattern",
    [
        content._FENCE,
        content._TREE,
        content._TRACE,
        content._STEP_LINE,
        body.label_pattern(DEFAULT_WHY_LABELS),
        body.label_pattern(DEFAULT_HOW_LABELS),
        body._label_forms(_LABELS),
    ],
    ids=["fence", "tree", "trace", "step", "why", "how", "label-forms"],
)
@pytest.mark.parametrize("text", _BODIES)
def test_line_start_patterns_match_what_the_multiline_ones_match(pattern: re.Pattern[str], text: str) -> None:
    """`^X` searched from the newlines of "\\n" + text: the same matches, each starting where it
    did (at the newline before its line) and with its groups one character on."""

    def spans(found: re.Match[str], shift: int) -> list[tuple[int, int]]:
        return [
            (s - shift, e - shift) if s >= 0 else (s, e) for s, e in map(found.span, range(1, len(found.groups()) + 1))
        ]

    plain = [(m.start(), m.end(), spans(m, 0)) for m in pattern.finditer(text)]
    faster = [(m.start(), m.end() - 1, spans(m, 1)) for m in at_line_starts(pattern).finditer("\n" + text)]
    assert faster == plain


def test_at_line_starts_refuses_a_pattern_not_anchored_at_a_line() -> None:
    with pytest.raises(ValueError, match="not a multi-line pattern"):
        at_line_starts(re.compile("x", re.MULTILINE))
    with pytest.raises(ValueError, match="not a multi-line pattern"):
        at_line_starts(re.compile("^x"))


@pytest.mark.parametrize(
    "text",
    ["3f2a9c1 and 9bd04e7, a71c2f0.", "deadbeef1 xdeadbeef2 0123456 abcdefa 你好3f2a9c1é9bd04e7ü", "ffffff 1234567890"],
)
def test_hex_runs_are_found_in_the_marked_copy_as_in_the_text(text: str) -> None:
    marked = text.encode("ascii", "replace").translate(content._HEX_MARKS)
    runs = [(m.start(), m.end()) for m in content._MARKED_RUN.finditer(marked)]
    assert runs == [(m.start(), m.end()) for m in re.finditer(r"[0-9a-f]{7,}", text)]


_LOOKAHEAD = re.compile(r"\(\?=\[(?:\\.|[^\]\\])*\]\)")
_LABEL_SETS = [
    DEFAULT_WHY_LABELS,
    DEFAULT_HOW_LABELS,
    _LABELS,
    ("Kelvin", "ſtop", "İx", "Ωmega", " lead", "ǅx", "-dash", "]x", "\\x"),
    ("",),
]
# Letters whose case folding is unusual (Kelvin sign, long s, dotted I, titlecase digraphs), markup, CJK.
_LABEL_TEXT = st.text(alphabet="KKſSsİiIıWwΩωßẞПп为이 \t*_#>-+:：\nyYhHeEǆǅxa]\\", max_size=14)


_BEFORES = ["", "x\n", "**", "- ", "## ", "> __", " * **", "\t", "\u212a"]
_AFTERS = ["", ":", "**:", ":** x", " ：", ":__", "\n"]


def _same_without_lookaheads(labels: tuple[str, ...], text: str) -> None:
    for pattern in (body.label_pattern(labels), body._label_forms(labels)):
        plain = re.compile(_LOOKAHEAD.sub("", pattern.pattern), pattern.flags)
        assert plain.pattern != pattern.pattern or not all(labels)
        found = [(m.span(), m.groupdict()) for m in pattern.finditer(text)]
        assert found == [(m.span(), m.groupdict()) for m in plain.finditer(text)], text


@pytest.mark.parametrize("labels", _LABEL_SETS, ids=range(len(_LABEL_SETS)))
def test_the_label_lookaheads_change_no_match(labels: tuple[str, ...]) -> None:
    """The lookaheads that let the label searches skip most lines are implied by what follows them:
    without them, the patterns find the same labels at the same places."""
    for word in labels:
        for before in _BEFORES:
            for after in _AFTERS:
                _same_without_lookaheads(labels, before + word + after)
                _same_without_lookaheads(labels, before + word.upper() + after)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(_LABEL_SETS), st.lists(st.one_of(_LABEL_TEXT, st.sampled_from(_LABELS)), max_size=5))
def test_the_label_lookaheads_change_no_match_in_any_text(labels: tuple[str, ...], parts: list[str]) -> None:
    _same_without_lookaheads(labels, "".join(parts))


def _label_lines_apart(
    text: str, why: tuple[str, ...], how: tuple[str, ...]
) -> tuple[bool, bool, list[tuple[int, int]]]:
    """What B001, B002 and B004 found when each walked the body with its own pattern."""
    view = "\n" + text
    return (
        at_line_starts(body.label_pattern(why)).search(view) is not None,
        at_line_starts(body.label_pattern(how)).search(view) is not None,
        [m.span() for m in at_line_starts(body._label_forms((*why, *how))).finditer(view)],
    )


def _label_lines_shared(
    text: str, why: tuple[str, ...], how: tuple[str, ...]
) -> tuple[bool, bool, list[tuple[int, int]]]:
    found = body.label_lines("\n" + text, 0, why, how)
    return found.why, found.how, [m.span() for m in found.forms]


_LABEL_PAIRS = [
    (DEFAULT_WHY_LABELS, DEFAULT_HOW_LABELS),
    (("to",), ("How to",)),  # "How\nto: x": a label over two lines hides the start of the next
    (("x ", " lead"), ("Kelvin", "ſtop", "İx")),
    (("",), ("How",)),
]


@pytest.mark.parametrize("text", [*_BODIES, "How\nto: x", "**How\nto:** x\n## to"])
@pytest.mark.parametrize("labels", _LABEL_PAIRS, ids=range(len(_LABEL_PAIRS)))
def test_one_label_walk_finds_what_the_three_rules_found_apart(
    labels: tuple[tuple[str, ...], tuple[str, ...]], text: str
) -> None:
    assert _label_lines_shared(text, *labels) == _label_lines_apart(text, *labels)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(_LABEL_PAIRS), st.lists(st.one_of(_LABEL_TEXT, st.sampled_from(_LABELS)), max_size=6))
def test_one_label_walk_finds_what_the_three_rules_found_apart_in_any_text(
    labels: tuple[tuple[str, ...], tuple[str, ...]], parts: list[str]
) -> None:
    text = "".join(parts)
    assert _label_lines_shared(text, *labels) == _label_lines_apart(text, *labels)
