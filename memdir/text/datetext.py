"""How a resolved relative date is written in place of its phrase: a day as its ISO date, a period
("last quarter", "next week") as that period, never as a day that reads as precise.
"""

from __future__ import annotations

import re
from datetime import date

__all__ = ["PERIODS", "date_in_place", "period_in_place"]

PERIODS = ("week", "month", "quarter", "year")  # what a phrase may name besides a day

# Han, kana and Hangul are written against a date with no space (我们2026-07-30和王磊); any other
# letter or digit would run into it and make one token of both (本周P0 -> 2026-11-23P0).
_CJK = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003ffff]")
# An English phrase names its period in English; other languages get the period's ISO form alone.
_ENGLISH_PERIOD = re.compile(r"\b(?:week|month|quarter|year)\b", re.IGNORECASE)
# After one of these, "by 2026-Q3" reads; elsewhere the period needs its own "in" ("in 2026-Q3").
_PREPOSITION_BEFORE = re.compile(
    r"\b(?:in|by|before|after|until|till|since|from|during|for|of|to|at|on|within|through|throughout|around|"
    r"over|starting|between|and|or)\s+$",
    re.IGNORECASE,
)


def _runs_into(char: str) -> bool:
    return char.isalnum() and not _CJK.match(char)


def _spaced(text: str, start: int, end: int, written: str) -> str:
    if start > 0 and _runs_into(text[start - 1]):
        written = " " + written
    if end < len(text) and _runs_into(text[end]):
        written += " "
    return written


def date_in_place(text: str, start: int, end: int, day: date) -> str:
    """What replaces text[start:end] with `day`: its ISO date, with a space on each side where it
    would otherwise touch a letter or digit (本周P0 -> "2026-11-23 P0", 明天10点 -> "2026-11-26 10点").

    CJK relative dates have no word boundary, so a Latin letter or digit may sit right against
    one; converting it is still right (明天10点 is "tomorrow at 10"), gluing the date onto it is
    not. Han, kana and Hangul neighbours are left unspaced, as CJK text writes dates."""
    return _spaced(text, start, end, day.isoformat())


def period_in_place(text: str, start: int, end: int, first_day: date, period: str) -> str:
    """What replaces text[start:end], a phrase naming a `period` (one of PERIODS, or "day") that
    starts on `first_day`: the period itself, so that "last quarter" does not become a day that
    reads as precise. In English: "the week of 2026-11-16", "in 2026-11", "in 2026-Q3", "in 2026"
    (without "in" after a preposition: "by 2026-Q3"; capitalised where the phrase was). In other
    languages the ISO form alone: 2026-W47, 2026-11, 2026-Q3, 2026. A day is its ISO date."""
    if period not in PERIODS:
        return date_in_place(text, start, end, first_day)
    phrase = text[start:end]
    english = _ENGLISH_PERIOD.search(phrase) is not None
    if period == "week":
        year, week, _ = first_day.isocalendar()
        written = f"the week of {first_day.isoformat()}" if english else f"{year:04d}-W{week:02d}"
    elif period == "month":
        written = f"{first_day.year:04d}-{first_day.month:02d}"
    elif period == "quarter":
        written = f"{first_day.year:04d}-Q{(first_day.month - 1) // 3 + 1}"
    else:
        written = f"{first_day.year:04d}"
    if english and period != "week" and not _PREPOSITION_BEFORE.search(text, max(0, start - 20), start):
        written = "in " + written
    if english and phrase[:1].isupper():
        written = written[0].upper() + written[1:]
    return _spaced(text, start, end, written)
