"""Markdown code and URLs masked out of a text, so that no relative date is looked for inside them
(`tomorrow()`, a fenced block, `https://example.com/next-week`): each masked character becomes
MASK, which no phrase can span, and the text keeps its length so offsets still point into it.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_URL = re.compile(r"\b(?:https?://|ftp://|www\.)\S+", re.IGNORECASE)
MASK = "\x00"  # not a word character and not whitespace, so no phrase can span a mask
# Where "www." ends (as `"www." in text.lower()` finds it, without the copy): `re` skips to each "."
# in C and looks behind it, where a case-blind "www\." was tried at every w of the text.
_WWW = re.compile(r"\.(?<=[wW][wW][wW]\.)")
_URL_SCHEMES = (3, 4, 5)  # how far "ftp", "http" and "https" start before their "://"


def _has_www(text: str) -> bool:
    return _WWW.search(text) is not None


def mask_code(text: str) -> str:
    """text with fenced blocks, inline code and URLs blotted out, keeping every offset."""
    has_url = "://" in text or _has_www(text)
    if "`" not in text and "~~~" not in text and not has_url:
        return text  # nothing to blot out, the common case: skip the line walk
    masked = _mask_fences(text) if "```" in text or "~~~" in text else text
    if "`" in masked:
        masked = _mask_inline_code(masked)
    if has_url:  # every URL holds "://" or "www." (in any case): the scan is spared elsewhere
        masked = _mask_urls(masked)
    return masked


def _mask_urls(text: str) -> str:
    """What `_URL.sub` blots out, trying `_URL` only where a URL can start: a few characters
    before each "://", and at each "www.". Tried at every offset, as `sub` does, the pattern cost
    more than the rest of the masking. Leftmost first, and none inside the one before, as `sub`."""
    starts: set[int] = set()
    at = text.find("://")
    while at >= 0:
        starts.update(at - back for back in _URL_SCHEMES if at >= back)
        at = text.find("://", at + 1)
    if _has_www(text):
        starts.update(found.start() - 3 for found in _WWW.finditer(text))
    spans: list[tuple[int, int]] = []
    for start in sorted(starts):
        if spans and start < spans[-1][1]:
            continue
        found = _URL.match(text, start)  # `\b` still sees the character before `start`
        if found is not None:
            spans.append((start, found.end()))
    return _blotted(text, spans) if spans else text


def _mask_fences(text: str) -> str:
    """Fenced blocks blotted out, line by line (a fence needs three backticks or tildes)."""
    masked: list[tuple[int, int]] = []  # the blotted-out stretches, each a run of whole lines
    fence: str | None = None  # the opening fence while inside a fenced block
    pos = 0
    for line in text.splitlines(keepends=True):
        opener = _FENCE.match(line)
        if fence is not None or opener:
            if masked and masked[-1][1] == pos:
                masked[-1] = (masked[-1][0], pos + len(line))
            else:
                masked.append((pos, pos + len(line)))
            if fence is None and opener:
                fence = opener.group(1)
            elif (
                fence is not None
                and opener
                and opener.group(1)[0] == fence[0]
                and len(opener.group(1)) >= len(fence)
                and not line[opener.end() :].strip()
            ):
                fence = None
        pos += len(line)
    return _blotted(text, masked)


def _blotted(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """`text` with each of the ordered, disjoint `spans` replaced by as many MASK characters."""
    parts: list[str] = []
    pos = 0
    for start, end in spans:
        parts += [text[pos:start], MASK * (end - start)]
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


_TICKS = re.compile("`+")


def _mask_inline_code(text: str) -> str:
    """What `_INLINE_CODE.sub` blots out, in one pass over the backtick runs.

    A code span opens at a run of backticks and closes at the next run of the same length. The
    regular expression finds that by scanning ahead from every opening run, to the end of the text
    when no run closes it: quadratic in a memory full of unpaired backticks (as generated or
    truncated text is). Here each run is looked at once, its closer found in a table of runs by length.
    """
    if "``" not in text:
        return _mask_single_ticks(text)
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for k, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(k)
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(runs):
        start, end = runs[k]
        same = by_length[end - start]
        at = bisect.bisect_right(same, k)
        if at < len(same):  # runs are maximal, so text lies between two of them: (.+?) holds
            closer = same[at]
            spans.append((start, runs[closer][1]))
            k = closer + 1
        else:
            k += 1
    return _blotted(text, spans) if spans else text


def _mask_single_ticks(text: str) -> str:
    """`_mask_inline_code` for a text whose backtick runs are all single (most memories): each
    backtick closes the one before it, so the spans are every other piece between backticks, and
    one split finds them all (a last backtick left without a partner opens nothing). The masks are
    made by `map` over C functions, not a comprehension: a folder's bodies hold ~250,000 backticks."""
    pieces = text.split("`")
    pairs = (len(pieces) - 1) // 2
    if not pairs:
        return text
    code = map(MASK.__mul__, map((2).__add__, map(len, pieces[1 : 2 * pairs : 2])))
    kept = pieces[0 : 2 * pairs : 2]
    return "".join(itertools.chain.from_iterable(zip(kept, code, strict=True))) + "`".join(pieces[2 * pairs :])
