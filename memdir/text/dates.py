"""Find relative date phrases ("tomorrow", "next Thursday", "下周四") and resolve them to ISO dates.
Memories are read months after they are written, so they must say 2025-03-20, not "next Thursday".

Over 500 lines: one grammar of relative dates in seven languages, with the guards that leave code
and quoted labels alone.
"""

# Conventions (shared with the labelled eval set; weeks run Monday-Sunday):
#
# - today / tonight / this morning|afternoon|evening = the anchor; tomorrow +1; yesterday and
#   last night -1; the day after tomorrow +2; the day before yesterday -2. Only the date word is
#   replaced in "tomorrow evening" (-> "2025-07-01 evening", as the eval set does); "this
#   morning" and "tonight" are replaced whole, since no date word is left to replace alone.
# - next / last / this week|month|quarter|year = the first day of that period (a week starts on
#   Monday, so "this week" is this week's Monday); "the week after next" = the Monday after next.
# - end of [the|this|next|last] week|month|quarter|year, month-end, quarter-end, year-end = the
#   last day of that period; a week ends on its Sunday.
# - next <weekday> = that weekday of the next Monday-Sunday week; this <weekday> = that weekday
#   of the current week (even if already past); last <weekday> = the most recent such weekday
#   strictly before the anchor. "<weekday> next/last/this week" and 下周X / 上周X / 来週の X曜日
#   name a weekday of that particular week, so 上周五 is the Friday of the previous week.
# - in N days|weeks|months|years and "N ... from now" = anchor + N; "N ... ago" = anchor - N.
#   N is digits, a/an, one..twenty, thirty, or "a couple (of)" = 2; "a few" and "several" are
#   vague and left alone. Months and years keep the day of the month, clamped to the month's
#   length (Jan 31 + 1 month = Feb 28, or 29 in a leap year).
#
# Deliberately not matched, because a false conversion corrupts a memory while a miss is only
# a lint warning: a weekday alone ("Thursday's standup"); every possessive ("today's date
# format", and also "today's standup", "this week's numbers", 明天的, 今日の), since "today's"
# often names a time rather than a day; hyphenated compounds ("end-of-month close",
# "week-long"); "month-end" / "end of month" followed by a noun ("month-end close"); "the last
# week" / "the next month" (a stretch of time, not a calendar period) and "last week of ...";
# ranges ("2-3 days ago", "in a day or two"); a past duration ("we built it in two weeks");
# markdown code and URLs; code-like text outside backticks (tomorrow(), next_week, getTomorrow,
# today.isoformat, {today}, $yesterday); a phrase that is all a quotation holds, which names a
# label rather than a day (the "Next Week" button, 'Tomorrow', 「明天」). Capitalised German
# "Morgen" is the noun (morning) and Spanish "la / por la / de la mañana" is the morning: only
# the bare adverbs morgen / mañana mean tomorrow ("esta mañana" is this morning, i.e. today,
# like "heute" in "heute Morgen"). French "hier" is German for "here", so it counts only in
# text that looks French. Japanese-only words (明日, 来週, ...) need kana in the text: the same
# characters inside Chinese compounds (说明日期) mean something else.
#
# A date replacing a CJK phrase that touches a Latin letter or digit gets a space on that side
# (本周P0 -> "2026-11-23 P0", 明天10点 -> "2026-11-26 10点"): converting is right, gluing is not.

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache

from memdir.text.codemask import mask_code
from memdir.text.datetext import date_in_place
from memdir.text.datewords import (
    DE_DAYS,
    DE_NUMBERS,
    EN_DAYS,
    EN_NUMBERS,
    ES_DAYS,
    ES_NUMBERS,
    FR_DAYS,
    FR_NUMBERS,
    JA_DAYS,
    JA_PERIODS,
    KO_DAYS,
    KO_PERIODS,
    NUMBERS,
    REL,
    UNITS,
    WEEKDAYS,
    ZH_DAYS,
    ZH_DIGITS,
    ZH_PERIODS,
)

__all__ = ["DateSpan", "absolutize", "date_in_place", "find_relative_dates", "parse_day"]


@dataclass(frozen=True)
class DateSpan:
    start: int  # character offsets into the text given
    end: int
    phrase: str  # the matched text, e.g. "next Thursday"
    resolved: date  # for a period, its first day
    period: str = "day"  # or what the phrase names: week | month | quarter | year ("last quarter")


# --- calendar arithmetic ---------------------------------------------------------------------


def _week_start(d: date) -> date:
    return d - timedelta(days=d.weekday())


def _add_months(d: date, months: int) -> date:
    """Same day of the month, clamped: Jan 31 + 1 month = Feb 28 (or 29)."""
    year, month0 = divmod(d.year * 12 + d.month - 1 + months, 12)
    following = date(year + (month0 + 1) // 12, (month0 + 1) % 12 + 1, 1)
    return date(year, month0 + 1, min(d.day, (following - timedelta(days=1)).day))


def _period_start(anchor: date, unit: str, offset: int) -> date:
    if unit == "week":
        return _week_start(anchor) + timedelta(weeks=offset)
    if unit == "month":
        return _add_months(anchor.replace(day=1), offset)
    if unit == "quarter":
        return _add_months(anchor.replace(day=1), 3 * offset - (anchor.month - 1) % 3)
    return date(anchor.year + offset, 1, 1)


def _period_end(anchor: date, unit: str, offset: int) -> date:
    return _period_start(anchor, unit, offset + 1) - timedelta(days=1)


def _shift(anchor: date, unit: str, n: int) -> date:
    if unit in ("day", "week", "fortnight"):
        return anchor + timedelta(days=n * {"day": 1, "week": 7, "fortnight": 14}[unit])
    return _add_months(anchor, n * {"month": 1, "quarter": 3, "year": 12}[unit])


# --- resolvers: a match and the anchor -> the date it names ----------------------------------

Resolver = Callable[[re.Match[str], date], date]
Period = Callable[[re.Match[str]], str]  # the period a match names, for the rules that name one


def _key(s: str) -> str:
    return " ".join(s.lower().replace("\u2019", "'").split())


def _rel(m: re.Match[str]) -> int:
    rel = m.groupdict().get("rel")
    return 0 if rel is None else REL[_key(rel)]


def _unit(m: re.Match[str]) -> str:
    return UNITS[_key(m["unit"])]


def _number(word: str) -> int:
    """Digits, a number word, or a Chinese numeral below 100 (三 = 3, 十二 = 12, 二十五 = 25)."""
    if word.isdigit():
        return int(word)
    tens, ten, ones = word.partition("十")
    if ten and tens in ("", *ZH_DIGITS) and ones in ("", *ZH_DIGITS):
        return ZH_DIGITS.get(tens, 1) * 10 + ZH_DIGITS.get(ones, 0)
    number = ZH_DIGITS.get(word) or NUMBERS.get(_key(word))
    if number is None:
        raise ValueError(f"not a number: {word!r}")  # "二五": the match is skipped
    return number


def _day_table(table: Mapping[str, int]) -> Resolver:
    return lambda m, anchor: anchor + timedelta(days=table[_key(m[0])])


def _period_table(table: Mapping[str, tuple[str, int]]) -> Resolver:
    return lambda m, anchor: _period_start(anchor, *table[m[0]])


def _table_unit(table: Mapping[str, tuple[str, int]]) -> Period:
    return lambda m: table[m[0]][0]


def _after_next(m: re.Match[str], anchor: date) -> date:
    return _period_start(anchor, _unit(m), 2)


def _rel_start(m: re.Match[str], anchor: date) -> date:
    return _period_start(anchor, _unit(m), _rel(m))


def _rel_end(m: re.Match[str], anchor: date) -> date:
    return _period_end(anchor, _unit(m), _rel(m))


def _weekday(last_is_most_recent: bool) -> Resolver:
    """English "last Friday" is the most recent Friday; 上周五 is the Friday of last week."""

    def resolve(m: re.Match[str], anchor: date) -> date:
        wd, rel = WEEKDAYS[_key(m["wd"])], _rel(m)
        if rel == -1 and last_is_most_recent:
            return anchor - timedelta(days=(anchor.weekday() - wd - 1) % 7 + 1)
        return _week_start(anchor) + timedelta(weeks=rel, days=wd)

    return resolve


def _count(sign: int) -> Resolver:
    return lambda m, anchor: _shift(anchor, _unit(m), sign * _number(m["n"]))


# --- rules -----------------------------------------------------------------------------------

Guard = Callable[[str, int, int], bool]  # (text, start, end) -> True to reject the match


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    resolve: Resolver
    before: re.Pattern[str] | None  # rejects when it matches the text just before the phrase
    after: re.Pattern[str] | None  # rejects when it matches the text just after the phrase
    guard: Guard | None
    period: Period | None  # what a match names when it is a period, not a day; None: always a day
    # Words one of which every match contains, in lower case: a text, or a stretch of one, without
    # any of them is not searched (_Prefilter). In an ASCII word a space stands for any whitespace.
    needs: frozenset[str]


def _rule(
    pattern: str,
    resolve: Resolver,
    *,
    needs: Iterable[str],
    before: str | None = None,
    after: str | None = None,
    guard: Guard | None = None,
    fold: bool = True,
    period: Period | None = None,
) -> _Rule:
    # Case folding a range of Hangul or Han costs milliseconds per regex, and CJK has no case.
    flags = re.IGNORECASE if fold else 0
    if resolve in (_rel_start, _after_next):  # "next week", "la semaine prochaine": the period's first day
        period = _unit
    return _Rule(
        re.compile(pattern, flags),
        resolve,
        re.compile(f"(?:{before})$", flags) if before else None,
        re.compile(after, flags) if after else None,
        guard,
        period,
        frozenset(needs),
    )


def _cjk(
    pattern: str,
    resolve: Resolver,
    *,
    needs: Iterable[str],
    before: str | None = None,
    after: str | None = None,
    guard: Guard | None = None,
    period: Period | None = None,
) -> _Rule:
    return _rule(pattern, resolve, needs=needs, before=before, after=after, guard=guard, fold=False, period=period)


def _alt(words: Iterable[str]) -> str:
    """Regex alternation, longest first so "a couple of" wins over "a"."""
    escaped = (
        r"\s+".join(re.escape(part) for part in w.split()).replace("'", r"['\u2019]")
        for w in sorted(set(words), key=len, reverse=True)
    )
    return "|".join(escaped)


def _words(table: Iterable[str]) -> str:
    return rf"\b(?:{_alt(table)})\b"


def _last_words(table: Iterable[str]) -> list[str]:
    """`needs` for `_alt(table)`: the last word of each phrase, in each spelling of its apostrophe,
    after a space when other words come before it (`_alt` joins them with whitespace) and the word
    is ASCII (only those are searched with their spaces standing for any whitespace: _Prefilter)."""
    words = []
    for phrase in table:
        *before, last = phrase.lower().split()
        word = (" " if before and last.isascii() else "") + last
        words += [word, word.replace("'", "\u2019")]
    return words


_KANA = re.compile(r"[\u3040-\u30ff]")
_FRENCH = re.compile(
    r"\b(?:le|les|et|est|je|j'|nous|vous|avec|dans|pour|sur|une|pas|ai|avons|été|elle|ils|"
    r"cette|au|aux|c'est|soir|matin)\b",
    re.IGNORECASE,
)

# Characters that, written just before the phrase, make a Chinese compound of its first
# character: 说明 + 天气 contains 明天, 然后 + 天 contains 后天, 以下 + 周期 contains 下周.
_ZH_COMPOUND_BEFORE = {
    "今": "如至当當古现現迄",
    "明": "说說证證表声聲发發透光聪聰文简簡标標注註阐闡指申照分鲜鮮失英精高开開清神言查讲講写寫载載",
    "后": "然以之最随隨前背落先今往日事午稍此其而",
    "後": "然以之最隨前背落先今往日事午稍此其而",
    "前": "以之目当當提面眼从從事空生跟向门門日年月",
    "去": "过過回出进進离離失死除上下来來",
    "下": "以如之底地天一南北乡鄉私部陛",
    "上": "以之马馬早晚路身手网網线線爱愛加向北往楼樓",
    "本": "基日版成资資根样樣课課剧劇文书書",
}


def _zh_compound(text: str, start: int, end: int) -> bool:
    return start > 0 and text[start - 1] in _ZH_COMPOUND_BEFORE.get(text[start], "")


def _needs_kana(text: str, start: int, end: int) -> bool:
    # Japanese words must be in Japanese text and start a word, not end a kanji compound.
    return not _KANA.search(text) or (start > 0 and "\u4e00" <= text[start - 1] <= "\u9fff")


def _not_french(text: str, start: int, end: int) -> bool:
    return not _FRENCH.search(text)


_EN_WD = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_EN_UNIT = "week|month|quarter|year"
_EN_COUNT_UNIT = r"(?P<unit>days?|weeks?|fortnights?|months?|years?)"
_EN_N = rf"(?P<n>\d{{1,3}}|{_alt(EN_NUMBERS)})"
_DE_WD = "montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag"
_DE_REL = r"(?:(?:über|ueber)?n(?:ä|ae)chst|kommend|letzt|vergangen|dies)e[nrsm]?"
_DE_COUNT_UNIT = r"(?P<unit>tag(?:en?)?|wochen?|monat(?:en?)?|jahr(?:en?)?)"
_DE_N = rf"(?P<n>\d{{1,3}}|{_alt(DE_NUMBERS)})"
_ES_WD = "lunes|martes|mi[eé]rcoles|jueves|viernes|s[aá]bado|domingo"
_ES_WEEKDAYS = ("lunes", "martes", "miercoles", "miércoles", "jueves", "viernes", "sabado", "sábado", "domingo")
_ES_UNIT = "semana|mes|año|trimestre"
_ES_COUNT_UNIT = r"(?P<unit>d[ií]as?|semanas?|mes(?:es)?|años?)"
_ES_N = rf"(?P<n>\d{{1,3}}|{_alt(ES_NUMBERS)})"
_FR_WD = "lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche"
_FR_COUNT_UNIT = r"(?P<unit>jours?|semaines?|mois|ans?|ann[ée]es?)"
_FR_N = rf"(?P<n>\d{{1,3}}|{_alt(FR_NUMBERS)})"
_ZH_REL = "(?P<rel>下下|下|上|本|这|這)(?:个|個)?"
_ZH_WEEK_WORDS = ("周", "週", "星期", "礼拜", "禮拜")
_ZH_WEEK = f"(?:{'|'.join(_ZH_WEEK_WORDS)})"
_ZH_NUM = r"\d{1,3}|[一二两三四五六七八九十]{1,3}"
_KO_BEFORE = r"\w"
# Korean particles may follow a date word (내일은, 다음 주부터); any other syllable makes it
# part of a longer word (오늘날 "nowadays", 다음 주제 "next topic", 지난주말 "last weekend").
_KO_AFTER = r"^(?![에는은부까도쯤중내엔가이를로안])[^\W\d_]"
_DASH = r"[-\u2013]"  # hyphen or en dash
_RANGE_AFTER = rf"^\s*(?:{_DASH}\s*\d|(?:or|to|oder|bis|o|ou)\b)"
_RANGE_BEFORE = rf"(?:\d\s*{_DASH}\s*|\b(?:or|to|and|oder|bis|o|ou)\s+)"
_APOSTROPHE = r"['\u2019]"
# A comparison makes a count a threshold, not a day: ">7 days ago", "older than 30 days ago".
_THRESHOLD_BEFORE = (
    r"(?:[<>\u2264\u2265]=?\s*|\b(?:more|less|fewer|older|newer|longer|earlier|later)\s+than\s+"
    r"|\b(?:over|under|within|at\s+(?:least|most)|up\s+to)\s+)"
)
_ARTICLE_DE = r"\b(?:der|die|das|den|dem|des)\s+"
# "month-end close", "end of month report": followed by a noun, the phrase is an adjective.
# Accept it only before punctuation, the end of the text, or a word that starts a new clause.
_ADJECTIVE_USE = (
    r"^\s+(?!(?:and|or|but|so|then|when|if|because|please|at|we|i|you|they|he|"
    r"she|it)\b)\w"
)

_RULES: tuple[_Rule, ...] = (
    # English
    _rule(_words(EN_DAYS), _day_table(EN_DAYS), needs=_last_words(EN_DAYS), before=r"\bthe\s+", after=r"^\s+of\b"),
    _rule(
        rf"\b(?P<rel>next|last|this)\s+(?P<unit>{_EN_UNIT})\b",
        _rel_start,
        needs=("next", "last", "this"),
        before=r"\bthe\s+",
        after=r"^\s+of\b",
    ),
    _rule(rf"\bthe\s+(?P<unit>{_EN_UNIT})\s+after\s+next\b", _after_next, needs=(" after ",)),
    _rule(
        rf"\b(?P<rel>next|last|this(?:\s+past)?)\s+(?P<wd>{_EN_WD})\b",
        _weekday(True),
        needs=_EN_WD.split("|"),
        before=r"\bthe\s+",
        after=r"^\s+of\b",
    ),
    _rule(rf"\b(?P<wd>{_EN_WD})\s+(?:of\s+)?(?P<rel>next|last|this)\s+week\b", _weekday(False), needs=(" week",)),
    _rule(
        rf"\b(?:the\s+)?end\s+of\s+(?P<rel>the|this|next|last)\s+(?P<unit>{_EN_UNIT})\b",
        _rel_end,
        needs=_EN_UNIT.split("|"),
    ),
    _rule(
        rf"\b(?:the\s+)?end\s+of\s+(?P<unit>{_EN_UNIT})\b", _rel_end, needs=_EN_UNIT.split("|"), after=_ADJECTIVE_USE
    ),
    _rule(
        r"\b(?P<unit>month|quarter|year)-end\b",
        _rel_end,
        needs=("-end",),
        before=r"\b(?:every|each|per|a)\s+",
        after=_ADJECTIVE_USE,
    ),
    _rule(
        rf"\bin\s+{_EN_N}\s+{_EN_COUNT_UNIT}(?:{_APOSTROPHE}s?\s+time)?\b",
        _count(+1),
        needs=("day", "week", "fortnight", "month", "year"),
        after=_RANGE_AFTER + r"|^\s+of\b",
        # "once in a week", "the first time in 3 years", "highest in 10 years" are not dates,
        # nor is a duration in the past: "we built the MVP in two weeks".
        before=_THRESHOLD_BEFORE + r"|\b(?:once|twice|times?|first|highest|lowest|best|worst|most|least|ever)\s+"
        r"|\b(?:took|built|did|finished|completed|wrote|managed|learned|was|were)\b"
        r"[^.;:!?,\n]*",
    ),
    _rule(
        rf"\b{_EN_N}\s+{_EN_COUNT_UNIT}\s+ago\b",
        _count(-1),
        needs=(" ago",),
        before=f"{_RANGE_BEFORE}|{_THRESHOLD_BEFORE}",
    ),
    _rule(
        rf"\b{_EN_N}\s+{_EN_COUNT_UNIT}\s+from\s+(?:now|today)\b",
        _count(+1),
        needs=(" from ",),
        before=f"{_RANGE_BEFORE}|{_THRESHOLD_BEFORE}",
    ),
    # German; "von heute auf morgen" is an idiom for "overnight"
    _rule(_words(DE_DAYS), _day_table(DE_DAYS), needs=_last_words(DE_DAYS), after=r"^\s+auf\s+morgen\b"),
    _rule(
        r"\b(?-i:morgen)\b",
        _day_table({"morgen": 1}),  # "Morgen" is the noun
        needs=("morgen",),
        before=r"\b(?:am|guten|gute|jeden|heute|gestern|vorgestern|auf|der|den|dem|des|ein|"
        r"einen|einem|eines|diesen|diesem|dieser|schönen|frühen|nächsten)\s+",
    ),
    _rule(
        rf"\b(?:im\s+|in\s+der\s+)?(?P<rel>{_DE_REL})\s+(?P<unit>woche|monat|quartal|jahr)\b",
        _rel_start,
        needs=("woche", "monat", "quartal", "jahr"),
        before=_ARTICLE_DE,
        after=r"^\s+(?:des|der)\b",
    ),
    _rule(
        rf"\b(?P<rel>{_DE_REL})\s+(?P<wd>{_DE_WD})\b",
        _weekday(True),
        needs=_DE_WD.split("|"),
        before=_ARTICLE_DE,
        after=r"^\s+(?:des|der|im\s+(?:monat|quartal|jahr))\b",
    ),
    _rule(
        rf"\bende\s+(?:(?P<rel>des|der|{_DE_REL})\s+)?"
        r"(?P<unit>woche|monats?|quartals?|jahr(?:es|s)?)\b",
        _rel_end,
        needs=("ende ",),
    ),
    _rule(
        r"\b(?P<unit>monats|quartals|jahres)ende\b",
        _rel_end,
        needs=("monatsende", "quartalsende", "jahresende"),
        before=r"\bjede[nsm]?\s+",
    ),
    _rule(
        rf"\bin\s+{_DE_N}\s+{_DE_COUNT_UNIT}\b", _count(+1), needs=("tag", "woche", "monat", "jahr"), after=_RANGE_AFTER
    ),
    _rule(rf"\bvor\s+{_DE_N}\s+{_DE_COUNT_UNIT}\b", _count(-1), needs=("vor ",), after=_RANGE_AFTER),
    # Spanish; "hoy en día" means "nowadays"
    _rule(_words(ES_DAYS), _day_table(ES_DAYS), needs=_last_words(ES_DAYS), after=r"^\s+(?:en\s+)?d[ií]a\b"),
    _rule(
        r"\bmañana\b",
        _day_table({"mañana": 1}),
        needs=("mañana",),
        before=r"\b(?:la|esta|una|cada|toda|media|misma|buena|buenas|otra|esa|aquella|el|un|"
        r"muy\s+de|a|por|pasado)\s+",
    ),
    _rule(
        rf"\b(?:la|el)\s+(?P<rel>pr[oó]xim[oa]|pasad[oa])\s+(?P<unit>{_ES_UNIT})\b",
        _rel_start,
        needs=("proxim", "próxim", "pasad"),
    ),
    _rule(
        rf"\b(?:la|el)\s+(?P<unit>{_ES_UNIT})\s+(?P<rel>que\s+viene|pr[oó]xim[oa]|pasad[oa])\b",
        _rel_start,
        needs=(" viene", "proxim", "próxim", "pasad"),
    ),
    _rule(rf"\b(?P<rel>est[ea])\s+(?P<unit>{_ES_UNIT})\b", _rel_start, needs=("esta", "este")),
    _rule(
        rf"\b(?:el\s+)?(?P<rel>pr[oó]ximo|pasado)\s+(?P<wd>{_ES_WD})\b",
        _weekday(True),
        needs=("proximo", "próximo", "pasado"),
    ),
    _rule(
        rf"\b(?:el\s+)?(?P<wd>{_ES_WD})\s+(?P<rel>que\s+viene|pr[oó]ximo|pasado)\b",
        _weekday(True),
        needs=(" viene", "proximo", "próximo", "pasado"),
    ),
    _rule(rf"\b(?P<rel>este)\s+(?P<wd>{_ES_WD})\b", _weekday(True), needs=_ES_WEEKDAYS),
    _rule(
        r"\bfin(?:al)?\s+(?:del|de\s+este|de)\s+(?P<unit>mes|trimestre|año)\b",
        _rel_end,
        needs=("fin",),
        before=r"\bde\s+",
    ),  # "cierre de fin de mes" is the month-end close
    _rule(
        rf"\b(?:en|dentro\s+de)\s+{_ES_N}\s+{_ES_COUNT_UNIT}\b",
        _count(+1),
        needs=("dia", "día", "semana", "mes", "año"),
        after=_RANGE_AFTER + r"|^\s+de\b",
    ),
    _rule(rf"\bhace\s+{_ES_N}\s+{_ES_COUNT_UNIT}\b", _count(-1), needs=("hace ",), after=_RANGE_AFTER),
    # French
    _rule(_words(FR_DAYS), _day_table(FR_DAYS), needs=_last_words(FR_DAYS)),
    _rule(r"\bhier\b", _day_table({"hier": -1}), needs=("hier",), guard=_not_french),
    _rule(
        rf"\b(?:la\s+|le\s+|l{_APOSTROPHE})(?P<unit>semaine|mois|ann[ée]e|an|trimestre)\s+"
        r"(?P<rel>prochaine?|derni[eè]re?|pass[ée]e?)\b",
        _rel_start,
        needs=("prochain", "dernier", "dernièr", "passe", "passé"),
    ),
    _rule(
        r"\b(?P<rel>cette|cet|ce)\s+(?P<unit>semaine|mois|ann[ée]e|trimestre)(?:-ci)?\b",
        _rel_start,
        needs=("semaine", "mois", "annee", "année", "trimestre"),
    ),
    _rule(rf"\b(?P<wd>{_FR_WD})\s+(?P<rel>prochain|dernier)\b", _weekday(True), needs=("prochain", "dernier")),
    _rule(
        rf"\b(?:la\s+)?fin\s+(?:du\s+|de\s+l{_APOSTROPHE}|d{_APOSTROPHE}|de\s+cette\s+|"
        r"de\s+ce\s+|de\s+)(?P<unit>mois|trimestre|ann[ée]e)\b",
        _rel_end,
        needs=("mois", "trimestre", "annee", "année"),
        before=r"\bde\s+",
    ),
    _rule(rf"\bdans\s+{_FR_N}\s+{_FR_COUNT_UNIT}\b", _count(+1), needs=("dans ",), after=_RANGE_AFTER + r"|^\s+de\b"),
    _rule(
        rf"\bil\s+y\s+a\s+{_FR_N}\s+{_FR_COUNT_UNIT}\b", _count(-1), needs=("il ",), after=_RANGE_AFTER + r"|^\s+de\b"
    ),
    # Chinese (CJK has no word boundaries: guards look at the neighbouring characters instead)
    _cjk(_alt(ZH_DAYS), _day_table(ZH_DAYS), needs=ZH_DAYS, guard=_zh_compound),
    _cjk(
        _alt(ZH_PERIODS),
        _period_table(ZH_PERIODS),
        needs=ZH_PERIODS,
        guard=_zh_compound,
        period=_table_unit(ZH_PERIODS),
    ),
    _cjk(
        f"{_ZH_REL}{_ZH_WEEK}(?P<wd>[一二三四五六日天])(?![天个個日周週年月号號])",
        _weekday(False),
        needs=_ZH_WEEK_WORDS,
        guard=_zh_compound,
    ),
    _cjk(
        f"{_ZH_REL}(?P<unit>{_ZH_WEEK})(?![一二三四五六日天末期年围圍边邊报報刊长長到])",
        _rel_start,
        needs=_ZH_WEEK_WORDS,
        guard=_zh_compound,
    ),
    _cjk(f"{_ZH_REL}(?P<unit>月|季度)(?![球亮光饼餅份底末初])", _rel_start, needs=("月", "季度"), guard=_zh_compound),
    # 月底/年底 after a number is a named month or year ("3月底", "2025年底"), 每月底 is recurring
    _cjk(
        "(?:(?P<rel>下下|下|上|本|这|這|今|明|去|来|先)(?:个|個)?)?(?P<unit>月|年)[底末]",
        _rel_end,
        needs=("月底", "月末", "年底", "年末"),
        before=r"[0-9\u3007一二三四五六七八九十两每第]",
        guard=_zh_compound,
    ),
    _cjk(
        rf"(?P<n>{_ZH_NUM})\s*(?P<unit>天|个?星期|個?星期|周|週|个月|個月|年)(?:以|之)?[后後]",
        _count(+1),
        needs=("后", "後"),
        before=r"[0-9第]",
    ),
    _cjk(
        rf"(?P<n>{_ZH_NUM})\s*(?P<unit>天|个?星期|個?星期|周|週|个月|個月|年)(?:以|之)?前",
        _count(-1),
        needs=("前",),
        before=r"[0-9第]",
    ),
    # Japanese
    _cjk(_alt(JA_DAYS), _day_table(JA_DAYS), needs=JA_DAYS, guard=_needs_kana),
    _cjk(
        _alt(JA_PERIODS),
        _period_table(JA_PERIODS),
        needs=JA_PERIODS,
        after="^末",
        guard=_needs_kana,
        period=_table_unit(JA_PERIODS),
    ),
    _cjk(
        "(?P<rel>再来週|来週|先週|今週)の?(?P<wd>[月火水木金土日])曜日?",
        _weekday(False),
        needs=("曜",),
        guard=_needs_kana,
    ),
    # Korean
    _cjk(_alt(KO_DAYS), _day_table(KO_DAYS), needs=KO_DAYS, before=_KO_BEFORE, after=_KO_AFTER),
    _cjk(
        _alt(KO_PERIODS),
        _period_table(KO_PERIODS),
        needs=KO_PERIODS,
        before=_KO_BEFORE,
        after=_KO_AFTER,
        period=_table_unit(KO_PERIODS),
    ),
    _cjk(
        r"(?P<rel>다음|지난|이번)\s?주\s?(?P<wd>[월화수목금토일])요일",
        _weekday(False),
        needs=("요일",),
        before=_KO_BEFORE,
        after=_KO_AFTER,
    ),
    _cjk(
        r"(?P<rel>다음|지난|이번)\s?(?P<unit>주|달)",
        _rel_start,
        needs=("다음", "지난", "이번"),
        before=_KO_BEFORE,
        after=_KO_AFTER,
    ),
    _cjk("(?P<unit>월|연)말", _rel_end, needs=("월말", "연말"), before=_KO_BEFORE, after=_KO_AFTER),
)

# Applies to every rule: possessives (today's, 明天的, 今日の, 오늘의), hyphenated compounds
# (end-of-month, week-long), and words inside paths, file names, tags or handles.
_ANY_BEFORE = re.compile(r"(?:\w-|[/\\#@]|\w\.)$")
_ANY_AFTER = re.compile(rf"^(?:{_APOSTROPHE}s\b|-\w|[./\\]\w|[的の의])")
_CONTEXT = 40  # characters of context the guards look at

# Code, not prose, for a phrase written in Latin letters: a call or an index (tomorrow(),
# yesterday[0], isDue(tomorrow), dates[today]), a placeholder or a variable ({today},
# {{ tomorrow }}, $yesterday, %today%). Identifiers (next_week, getTomorrow) and attributes
# (today.isoformat) are already words of their own or caught above. In CJK text a bracket right
# after a word is ordinary punctuation (明天(周五)), so these look only at Latin phrases.
_CODE_BEFORE = re.compile(r"(?:[A-Za-z0-9_][(\[]|[${%]|\{\{\s*)$")
_CODE_AFTER = re.compile(r"^[(\[]")

# A phrase that is the whole of a quotation is a name, not a date: a UI label (the "Next Week"
# button, 'Tomorrow', “Today”), a preset, a title (「明天」, 《明天》). A quotation that says more
# ("we ship tomorrow") is speech, and its dates are converted. Opening quote -> closing quotes.
_QUOTES: dict[str, str] = {
    '"': '"\u201d',
    "'": "'\u2019",
    "\u201c": "\u201d\u201c",  # “…” and German „…“ / Swedish ”…”
    "\u201e": "\u201c\u201d",
    "\u201d": "\u201d",
    "\u2018": "\u2019\u2018",
    "\u201a": "\u2018\u2019",
    "\u00ab": "\u00bb",
    "\u00bb": "\u00ab",  # German »…«
    "\u2039": "\u203a",
    "\u300c": "\u300d",
    "\u300e": "\u300f",
    "\u300a": "\u300b",
    "\uff02": "\uff02",
}


def _quoted_alone(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is all a quotation holds, spaces aside (« demain ») and a stop that
    American style puts inside the quotes (a week of "tomorrow.")."""
    before = text[max(0, start - 4) : start].rstrip()  # a few characters: a folder may hold 58,000 phrases
    after = text[end : end + 4].lstrip().lstrip(".,;:!?\u2026")
    if not before or not after or before[-1] not in _QUOTES or after[0] not in _QUOTES[before[-1]]:
        return False
    if before[-1] == "'":  # an apostrophe (the boss' tomorrow') is not a quote
        return not (len(before) > 1 and before[-2].isalnum()) and not (len(after) > 1 and after[1].isalnum())
    return True


# --- public API ------------------------------------------------------------------------------


def _accepted(rule: _Rule, text: str, start: int, end: int) -> bool:
    before = text[max(0, start - _CONTEXT) : start]
    after = text[end : end + _CONTEXT]
    return not (
        _ANY_BEFORE.search(before)
        or _ANY_AFTER.match(after)
        or (rule.before is not None and rule.before.search(before))
        or (rule.after is not None and rule.after.match(after))
        or (rule.guard is not None and rule.guard(text, start, end))
        or (text[start].isascii() and _CODE_BEFORE.search(before) is not None)
        or (text[end - 1].isascii() and _CODE_AFTER.match(after) is not None)
    )


# Characters no rule's match holds, nor any rule's pattern looks at beyond `\b`: ASCII punctuation
# but - ' and _, and the code mask. A match lies between two of them, so a rule need only be run on
# the stretch of text between the breaks around each place one of its `needs` occurs, instead of the
# whole text: a long memory is scanned sentence by sentence where a word of the rule occurs, not ~50
# times whole. Only non-word characters, so `\b` at the end of a stretch reads as in the whole text.
# A rule whose pattern matches or looks at one of them must take it out of here: tests/test_dates.py
# finds every rule's matches with and without the stretches, over real and generated text.
_BREAKS = re.compile(r"[\x00!\"#$%&()*+,./:;<=>?@\[\\\]^`{|}~]")


# What `\s` matches beyond the ASCII space (str.isspace), for the prefilter's one-byte copy.
_ASCII_SPACES = bytes.maketrans(b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f", b" " * 9)
_WIDE_SPACE = re.compile("[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


class _Prefilter:
    """Where the required literals occur in many texts at once.

    Each literal is searched once through all texts joined, so the cost follows the places where a
    literal occurs, not texts x rules x literals (a 10,000-memory folder has a million such pairs,
    most of them misses). Literals shared by several rules are searched once; an ASCII literal is
    searched in a one-byte-a-character copy, where finding is several times faster."""

    def __init__(self, lowered: Sequence[str]) -> None:
        self.joined = "\x00".join(lowered)  # no literal holds a NUL, so none spans two texts
        # Same offsets, other characters as "?", which no literal holds, and every whitespace
        # character (all that `\s` matches) as a space: a literal's spaces stand for `\s`.
        wide = self.joined if _WIDE_SPACE.search(self.joined) is None else _WIDE_SPACE.sub(" ", self.joined)
        self.ascii = wide.encode("ascii", "replace").translate(_ASCII_SPACES)
        self.starts = list(itertools.accumulate((len(t) + 1 for t in lowered), initial=0))
        self._hits: dict[str, dict[int, list[int]]] = {}

    def places(self, literals: frozenset[str]) -> dict[int, list[int]]:
        """Text index -> sorted offsets where one of `literals` starts, for the texts holding one."""
        if len(literals) == 1:
            return self._places_of(next(iter(literals)))
        found: dict[int, list[int]] = {}
        for literal in literals:
            for i, offsets in self._places_of(literal).items():
                found.setdefault(i, []).extend(offsets)
        return {i: sorted(found[i]) for i in sorted(found)}

    def _places_of(self, literal: str) -> dict[int, list[int]]:
        hits = self._hits.get(literal)
        if hits is None:
            if not _in_one_byte(literal):
                self._find_wide()
                return self._hits[literal]
            inner = _inner_literals().get(literal)
            if inner is None:
                self._find_narrow()
                return self._hits[literal]
            # Where it starts is a few bytes before each place of its inner literal.
            needle = literal.encode("ascii")
            found, offset = self._places_of(inner), literal.find(inner)
            hits = self._hits[literal] = {}
            for which, places in found.items():
                start = self.starts[which]
                here = [p - offset for p in places if p >= offset and self.ascii.startswith(needle, start + p - offset)]
                if here:
                    hits[which] = here
        return hits

    def _find_narrow(self) -> None:
        """The places of every one-byte literal not found inside another, in one pass of a pattern
        (a trie of them) over the one-byte copy: a pass of bytes.find per literal read the whole
        text some seventy times."""
        pattern, by_first = _narrow_literals()
        for literal, _, _ in itertools.chain.from_iterable(by_first.values()):
            self._hits[literal] = {}
        text, starts, search = self.ascii, self.starts, pattern.search
        found = search(text)
        while found is not None:  # every offset where a literal (or, for " from ", its word) starts
            at = found.start()
            which = bisect.bisect_right(starts, at) - 1  # a space never stands for a text's separator
            for literal, needle, back in by_first[text[at]]:
                if at >= back and text.startswith(needle, at - back):
                    self._hits[literal].setdefault(which, []).append(at - back - starts[which])
            found = search(text, at + 1)

    def _find_wide(self) -> None:
        """The places of every literal that is not searched in the one-byte copy (the CJK ones,
        those with accents), in one pass over the text for the characters they hold beyond ASCII
        rather than a pass of str.find per literal, which is slow on a text of two or four bytes a
        character. Searching for their first characters instead stopped at every a, d, m, p, r and s."""
        pattern, by_anchor = _wide_literals()
        for literal, _ in itertools.chain.from_iterable(by_anchor.values()):
            self._hits[literal] = {}
        text, starts = self.joined, self.starts
        for found in pattern.finditer(text):
            at = found.start()
            for literal, offset in by_anchor[found.group()]:
                start = at - offset
                if start >= 0 and text.startswith(literal, start):
                    which = bisect.bisect_right(starts, start) - 1
                    self._hits[literal].setdefault(which, []).append(start - starts[which])


def _in_one_byte(literal: str) -> bool:
    """Whether a literal is searched in the prefilter's one-byte copy of the text."""
    return literal.isascii() and "?" not in literal


@cache
def _inner_literals() -> dict[str, str]:
    """A one-byte literal -> the longest other one inside it ("tomorrow" in " tomorrow", "tag" in
    "dienstag"): its places are found among the inner one's, not by another pass over the text."""
    narrow = {lit for rule in _RULES for lit in rule.needs if _in_one_byte(lit)}
    inner: dict[str, str] = {}
    for literal in narrow:
        inside = [other for other in narrow if other != literal and other in literal]
        if inside:
            inner[literal] = max(inside, key=lambda other: (len(other), other))
    return inner


@cache
def _narrow_literals() -> tuple[re.Pattern[bytes], dict[int, list[tuple[str, bytes, int]]]]:
    """The one-byte literals found by a pass over the text (those with no other inside): a pattern
    finding where any of them starts, and the literals (with their bytes, and how far before the
    pattern's match they start) by the byte the match starts with.

    A literal opening with a space (" from ", " ago") is searched from its word on, the space
    checked after: every space in the text was a place to try the pattern, for a fifth of its time."""
    inner = _inner_literals()
    narrow = sorted({lit for rule in _RULES for lit in rule.needs if _in_one_byte(lit) and lit not in inner})
    by_first: dict[int, list[tuple[str, bytes, int]]] = {}
    words: set[bytes] = set()
    for literal in narrow:
        needle = literal.encode("ascii")
        back = 1 if needle[:1] == b" " and len(needle) > 1 else 0
        words.add(needle[back:])
        by_first.setdefault(needle[back], []).append((literal, needle, back))
    return re.compile(_trie(sorted(words)) or b"(?!)"), by_first


def _trie(words: Sequence[bytes]) -> bytes:
    """A pattern matching any of `words`, as a trie: one branch per first byte, so a try at an
    offset costs a step per byte matched, not one per word (and `re` skips offsets no word starts at)."""
    branches: dict[int, list[bytes]] = {}
    for word in words:
        if word:
            branches.setdefault(word[0], []).append(word[1:])
    alternatives = [re.escape(bytes([first])) + _trie(rests) for first, rests in sorted(branches.items())]
    if not alternatives:
        return b""
    pattern = alternatives[0] if len(alternatives) == 1 else b"(?:" + b"|".join(alternatives) + b")"
    return b"(?:" + pattern + b")?" if b"" in words else pattern


@cache
def _wide_literals() -> tuple[re.Pattern[str], dict[str, list[tuple[str, int]]]]:
    """The rules' literals searched in the text itself: one pattern finding each character beyond
    ASCII that one of them holds (its anchor: the first such character), and the literals with
    the offset of their anchor, by anchor."""
    wide = sorted({lit for rule in _RULES for lit in rule.needs if not _in_one_byte(lit)})
    by_anchor: dict[str, list[tuple[str, int]]] = {}
    for literal in wide:
        offset = next((k for k, ch in enumerate(literal) if not _in_one_byte(ch)), 0)
        by_anchor.setdefault(literal[offset], []).append((literal, offset))
    return re.compile("[" + "".join(map(re.escape, sorted(by_anchor))) + "]" if by_anchor else "(?!)"), by_anchor


def find_relative_dates(text: str, anchor: date) -> list[DateSpan]:
    """Relative date phrases in text, in order, non-overlapping, skipping markdown code (inline
    `code` spans and fenced ``` / ~~~ blocks), URLs, code-like text (tomorrow(), {today}) and
    quoted labels (the "Next Week" button)."""
    return find_relative_dates_in([text], [anchor])[0]


_BATCH_CHARS = 1 << 18  # texts are searched together up to about this much text: speed, bounded memory


def find_relative_dates_in(texts: Iterable[str], anchors: Iterable[date]) -> list[list[DateSpan]]:
    """`find_relative_dates` for many texts at once (each with its anchor): the same answers, with
    the literal prefilter run over batches of texts together. Each text is read once, in order, so
    `texts` may make them as it goes: only a batch of them is held at a time."""
    found: list[list[DateSpan]] = []
    batch: list[str] = []
    days: list[date] = []
    size = 0
    for text, anchor in zip(texts, anchors, strict=True):
        if batch and size + len(text) > _BATCH_CHARS:
            found += _find_in_batch(batch, days)
            batch, days, size = [], [], 0
        batch.append(text)
        days.append(anchor)
        size += len(text)
    if batch:
        found += _find_in_batch(batch, days)
    return found


def _find_in_batch(texts: Sequence[str], anchors: Sequence[date], prefiltered: bool = True) -> list[list[DateSpan]]:
    """Each text's phrases. Not `prefiltered`: every rule run over every whole text, as the tests
    compare against (the prefilter and the stretches must change nothing but the time)."""
    masked = [mask_code(text) for text in texts]
    lowered = [m.lower() for m in masked]
    prefilter = _Prefilter(lowered) if prefiltered else None
    backwards: dict[int, str] = {}  # text index -> the masked text reversed, to find the break before a place
    found: list[list[DateSpan]] = [[] for _ in texts]
    for rule in _RULES:
        places = None if prefilter is None else prefilter.places(rule.needs)
        for i in range(len(texts)) if places is None else places:
            text, hide = texts[i], masked[i]
            if places is None or len(lowered[i]) != len(hide):  # lower() moved offsets
                stretches: Iterable[tuple[int, int]] = ((0, len(hide)),)
            else:
                if i not in backwards:
                    backwards[i] = hide[::-1]
                stretches = _stretches(places[i], hide, backwards[i], _BREAKS)
            for lo, hi in stretches:
                for m in rule.pattern.finditer(hide, lo, hi):
                    if not _accepted(rule, hide, m.start(), m.end()):
                        continue
                    try:
                        resolved = rule.resolve(m, anchors[i])
                    except (OverflowError, ValueError):  # beyond year 1..9999
                        continue
                    period = rule.period(m) if rule.period is not None else "day"
                    found[i].append(DateSpan(m.start(), m.end(), text[m.start() : m.end()], resolved, period))
    # Quotations are judged on the phrase that won: in "the day after tomorrow" (a preset's
    # label) the whole phrase is quoted, and "tomorrow" must not be converted in its place.
    return [
        [s for s in _first_and_longest(spans) if not _quoted_alone(hide, s.start, s.end)]
        for spans, hide in zip(found, masked, strict=True)
    ]


def _stretches(places: list[int], text: str, backwards: str, breaks: re.Pattern[str]) -> list[tuple[int, int]]:
    """The stretches of `text` between breaks that hold `places` (sorted), in order, each once."""
    out: list[tuple[int, int]] = []
    hi = -1
    length = len(text)
    for at in places:
        if at < hi:
            continue  # in the stretch just taken
        before = breaks.search(backwards, length - at)
        after = breaks.search(text, at)
        lo = length - before.start() if before else 0
        hi = after.start() if after else length
        out.append((lo, hi))
    return out


def _first_and_longest(found: list[DateSpan]) -> list[DateSpan]:
    """Where phrases overlap, the one starting first wins, then the longest:
    "the day after tomorrow" over "tomorrow", "end of next month" over "next month"."""
    found.sort(key=lambda s: (s.start, -s.end))
    spans: list[DateSpan] = []
    for span in found:
        if not spans or span.start >= spans[-1].end:
            spans.append(span)
    return spans


def absolutize(text: str, anchor: date) -> tuple[str, list[DateSpan]]:
    """text with every relative phrase replaced by its ISO date, and the spans replaced."""
    spans = find_relative_dates(text, anchor)
    parts: list[str] = []
    pos = 0
    for span in spans:
        parts += [text[pos : span.start], date_in_place(text, span.start, span.end, span.resolved)]
        pos = span.end
    parts.append(text[pos:])
    return "".join(parts), spans


def parse_day(value: str, anchor: date) -> date | None:
    """A day given as YYYY-MM-DD or as one relative phrase ("next month"), else None."""
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        pass
    spans = find_relative_dates(value, anchor)
    if len(spans) == 1 and spans[0].phrase.strip().casefold() == value.strip().casefold():
        return spans[0].resolved
    return None
