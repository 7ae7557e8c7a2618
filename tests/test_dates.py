"""Tests for memdir.text.dates: relative date phrases found and resolved against an anchor day."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from conftest import cpu_growth

from memdir.text.dates import DateSpan, absolutize, find_relative_dates, find_relative_dates_in

DEV_SET = Path(__file__).resolve().parents[2] / "shared" / "eval" / "dev" / "dates.jsonl"

THU = date(2025, 7, 10)  # a Thursday; its Monday-Sunday week is 2025-07-07 .. 2025-07-13


def convert(text: str, anchor: date = THU) -> tuple[str, list[tuple[str, str]]]:
    out, spans = absolutize(text, anchor)
    return out, [(s.phrase, s.resolved.isoformat()) for s in spans]


def one(text: str, anchor: date = THU) -> tuple[str, str]:
    """The single span found in text, as (phrase, iso)."""
    _, spans = convert(text, anchor)
    assert len(spans) == 1, spans
    return spans[0]


# --- the labelled dev set ---------------------------------------------------------------------


def _dev_rows() -> list[Any]:
    if not DEV_SET.is_file():
        return [pytest.param(None, id="dev-set-absent")]
    lines = DEV_SET.read_text(encoding="utf-8").splitlines()
    return [pytest.param(json.loads(line), id=f"dev{i:02d}") for i, line in enumerate(lines, 1) if line.strip()]


@pytest.mark.parametrize("row", _dev_rows())
def test_dev_set(row: dict[str, Any] | None) -> None:
    if row is None:
        pytest.skip(f"{DEV_SET} is not there (it lives beside the repository)")
    out, spans = convert(row["text"], date.fromisoformat(row["anchor"]))
    assert out == row["expected"]
    assert spans == [(phrase, iso) for phrase, iso in row["spans"]]


# --- English ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ship it today.", "Ship it 2025-07-10."),
        ("Ship it tomorrow.", "Ship it 2025-07-11."),
        ("It broke yesterday.", "It broke 2025-07-09."),
        ("We deploy tonight.", "We deploy 2025-07-10."),
        ("I fixed it this morning.", "I fixed it 2025-07-10."),
        ("Call me this afternoon.", "Call me 2025-07-10."),
        ("Call me this evening.", "Call me 2025-07-10."),
        ("The alarm went off last night.", "The alarm went off 2025-07-09."),
        ("Results arrive the day after tomorrow.", "Results arrive 2025-07-12."),
        ("It started the day before yesterday.", "It started 2025-07-08."),
        ("Due day after tomorrow.", "Due 2025-07-12."),
        ("Draft it by tomorrow evening.", "Draft it by 2025-07-11 evening."),
    ],
)
def test_day_words(text: str, expected: str) -> None:
    assert convert(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "phrase", "iso"),
    [
        ("It expires in 10 days.", "in 10 days", "2025-07-20"),
        ("It expires in one day.", "in one day", "2025-07-11"),
        ("Review it in a week.", "in a week", "2025-07-17"),
        ("Review it in two weeks.", "in two weeks", "2025-07-24"),
        ("Review it in a couple of weeks.", "in a couple of weeks", "2025-07-24"),
        ("Review it in twelve weeks.", "in twelve weeks", "2025-10-02"),
        ("Review it in a fortnight.", "in a fortnight", "2025-07-24"),
        ("Renew in three months.", "in three months", "2025-10-10"),
        ("Renew in an year.", "in an year", "2026-07-10"),
        ("Renew in 2 years.", "in 2 years", "2027-07-10"),
        ("Back in two weeks' time.", "in two weeks' time", "2025-07-24"),
        ("Filed 3 days ago.", "3 days ago", "2025-07-07"),
        ("Filed three weeks ago.", "three weeks ago", "2025-06-19"),
        ("Filed a month ago.", "a month ago", "2025-06-10"),
        ("Filed a couple of days ago.", "a couple of days ago", "2025-07-08"),
        ("Filed one year ago.", "one year ago", "2024-07-10"),
        ("Done two weeks from now.", "two weeks from now", "2025-07-24"),
        ("Done 5 days from today.", "5 days from today", "2025-07-15"),
    ],
)
def test_counts(text: str, phrase: str, iso: str) -> None:
    assert one(text) == (phrase, iso)


def test_a_few_is_too_vague_to_convert() -> None:
    assert convert("Filed a few days ago, back in a few weeks.")[1] == []


# next / this / last <weekday> written on every day of one Monday-Sunday week.
@pytest.mark.parametrize(
    ("anchor", "last_thursday"),
    [
        (date(2025, 7, 7), "2025-07-03"),  # Monday
        (date(2025, 7, 8), "2025-07-03"),
        (date(2025, 7, 9), "2025-07-03"),
        (date(2025, 7, 10), "2025-07-03"),  # Thursday: strictly before, so a week ago
        (date(2025, 7, 11), "2025-07-10"),  # Friday: yesterday
        (date(2025, 7, 12), "2025-07-10"),
        (date(2025, 7, 13), "2025-07-10"),  # Sunday still belongs to the week of 07-07
    ],
)
def test_weekdays_across_the_week(anchor: date, last_thursday: str) -> None:
    assert one("Meet next Thursday.", anchor) == ("next Thursday", "2025-07-17")
    assert one("Meet this Thursday.", anchor) == ("this Thursday", "2025-07-10")
    assert one("Met last Thursday.", anchor) == ("last Thursday", last_thursday)
    assert one("我们下周四开会。", anchor) == ("下周四", "2025-07-17")
    assert one("我们上周四开会了。", anchor) == ("上周四", "2025-07-03")


@pytest.mark.parametrize(
    ("text", "phrase", "iso"),
    [
        ("Off next Monday.", "next Monday", "2025-07-14"),
        ("Off next Sunday.", "next Sunday", "2025-07-20"),
        ("Off this Sunday.", "this Sunday", "2025-07-13"),
        ("Off this Monday.", "this Monday", "2025-07-07"),
        ("It was this past Friday.", "this past Friday", "2025-07-04"),
        ("We meet Tuesday next week.", "Tuesday next week", "2025-07-15"),
        ("It was Friday of last week.", "Friday of last week", "2025-07-04"),
        ("Wednesday this week works.", "Wednesday this week", "2025-07-09"),
        ("SEE YOU NEXT FRIDAY.", "NEXT FRIDAY", "2025-07-18"),
    ],
)
def test_weekday_phrases(text: str, phrase: str, iso: str) -> None:
    assert one(text) == (phrase, iso)


@pytest.mark.parametrize(
    ("text", "phrase", "iso"),
    [
        ("Busy this week.", "this week", "2025-07-07"),
        ("Busy next week.", "next week", "2025-07-14"),
        ("Busy last week.", "last week", "2025-06-30"),
        ("Launch the week after next.", "the week after next", "2025-07-21"),
        ("Busy this month.", "this month", "2025-07-01"),
        ("Busy next month.", "next month", "2025-08-01"),
        ("Busy last month.", "last month", "2025-06-01"),
        ("Busy this quarter.", "this quarter", "2025-07-01"),
        ("Busy next quarter.", "next quarter", "2025-10-01"),
        ("Busy last quarter.", "last quarter", "2025-04-01"),
        ("Busy this year.", "this year", "2025-01-01"),
        ("Busy next year.", "next year", "2026-01-01"),
        ("Busy last year.", "last year", "2024-01-01"),
        ("Done by end of week.", "end of week", "2025-07-13"),
        ("Done by the end of the week.", "the end of the week", "2025-07-13"),
        ("Done by end of month.", "end of month", "2025-07-31"),
        ("Done by the end of this month.", "the end of this month", "2025-07-31"),
        ("Done by end of next month.", "end of next month", "2025-08-31"),
        ("Done by the end of last month.", "the end of last month", "2025-06-30"),
        ("Done by the end of the quarter.", "the end of the quarter", "2025-09-30"),
        ("Done by the end of the year.", "the end of the year", "2025-12-31"),
        ("Done by month-end.", "month-end", "2025-07-31"),
        ("Done by quarter-end, we hope.", "quarter-end", "2025-09-30"),
        ("Done by year-end.", "year-end", "2025-12-31"),
    ],
)
def test_periods(text: str, phrase: str, iso: str) -> None:
    assert one(text) == (phrase, iso)


# --- rollovers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "anchor", "iso"),
    [
        ("tomorrow", date(2025, 12, 31), "2026-01-01"),
        ("yesterday", date(2026, 1, 1), "2025-12-31"),
        ("tomorrow", date(2026, 2, 28), "2026-03-01"),  # not a leap year
        ("tomorrow", date(2028, 2, 28), "2028-02-29"),  # 2028 is a leap year
        ("yesterday", date(2028, 3, 1), "2028-02-29"),
        ("end of month", date(2028, 2, 10), "2028-02-29"),
        ("end of month", date(2026, 2, 10), "2026-02-28"),
        ("end of next month", date(2028, 1, 31), "2028-02-29"),
        ("in 1 month", date(2026, 1, 31), "2026-02-28"),  # clamped to the month's last day
        ("in 1 month", date(2028, 1, 31), "2028-02-29"),
        ("in a year", date(2028, 2, 29), "2029-02-28"),
        ("a year ago", date(2028, 2, 29), "2027-02-28"),
        ("in 2 weeks", date(2025, 12, 22), "2026-01-05"),
        ("3 days ago", date(2028, 3, 2), "2028-02-28"),
        ("next week", date(2025, 12, 29), "2026-01-05"),
        ("last week", date(2026, 1, 7), "2025-12-29"),
        ("next month", date(2025, 12, 15), "2026-01-01"),
        ("last month", date(2026, 1, 15), "2025-12-01"),
        ("next quarter", date(2025, 11, 14), "2026-01-01"),
        ("last quarter", date(2026, 2, 14), "2025-10-01"),
        ("next Monday", date(2025, 12, 31), "2026-01-05"),
        ("last Friday", date(2026, 1, 1), "2025-12-26"),
        ("end of the week", date(2025, 12, 30), "2026-01-04"),
    ],
)
def test_rollovers(text: str, anchor: date, iso: str) -> None:
    assert one(text, anchor) == (text, iso)


# --- things that are not dates ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Thursday's standup is where we triage new bugs.",
        "We triage on Thursday.",
        "We run a week-long sprint before every release.",
        "Use today's date format, YYYY-MM-DD, in all file names.",
        "Tomorrow's leaders read today's news.",
        "This week's numbers look good.",
        "Last year's budget was tight.",
        "The end-of-month close usually takes three working days.",
        "The month-end close and the year-end review.",
        "Every month-end we reconcile.",
        "The invoice is dated 2025-06-30 and due 2025-07-30.",
        "Next steps: write the tests and update the README.",
        "Next up: the migration. At last it works. The last time it failed.",
        "The last week of every quarter is hectic for finance.",
        "In the last week we fixed three bugs; over the next month we hire.",
        "The last Friday of the month is payday.",
        "Daily backups run at 02:30 UTC.",
        "Mondays are busy; todays typo; nextweek; the weekend.",
        "See you next weekend.",
        "The job takes 2-3 days ago, or maybe in a day or two.",
        "It happened two or three weeks ago.",
        "Three times in a week is too often.",
        "The first time in 3 years; the highest in 10 years.",
        "A few days ago and in a few weeks.",
        "Next Monday-Friday we travel.",
        "Edit notes/today.md, tag #today, ping @tomorrow.",
        "Mid-next week is vague.",
        "The last night of the trip was fun.",
        "We built the MVP in two weeks.",
        "The end of month report is rounded.",
    ],
)
def test_not_dates(text: str) -> None:
    assert convert(text) == (text, [])


# --- markdown code and URLs -------------------------------------------------------------------


def test_inline_code_is_skipped() -> None:
    assert convert("Run `date -d tomorrow` tomorrow.") == (
        "Run `date -d tomorrow` 2025-07-11.",
        [("tomorrow", "2025-07-11")],
    )
    assert convert("Use ``next week`` literally.")[1] == []


@pytest.mark.parametrize("fence", ["```", "~~~", "````"])
def test_fenced_blocks_are_skipped(fence: str) -> None:
    text = f"Before, yesterday.\n{fence}python\nrun(tomorrow)\nnext week\n{fence}\nAfter, today.\n"
    out, spans = convert(text)
    assert out == (f"Before, 2025-07-09.\n{fence}python\nrun(tomorrow)\nnext week\n{fence}\nAfter, 2025-07-10.\n")
    assert [s[0] for s in spans] == ["yesterday", "today"]


def test_unclosed_fence_runs_to_the_end() -> None:
    assert convert("today\n```\ntomorrow\nyesterday")[1] == [("today", "2025-07-10")]


def test_shorter_fence_does_not_close_a_longer_one() -> None:
    assert convert("````\n```\ntomorrow\n````\ntoday")[1] == [("today", "2025-07-10")]


def test_urls_are_skipped() -> None:
    text = "See https://example.com/reports/today and www.example.org/tomorrow, then today."
    assert convert(text)[1] == [("today", "2025-07-10")]


# --- several spans, offsets, idempotence ------------------------------------------------------


def test_multiple_spans_in_order_with_offsets() -> None:
    text = "Yesterday we merged; next Friday we ship, and in 3 days we demo."
    spans = find_relative_dates(text, THU)
    assert spans == [
        DateSpan(0, 9, "Yesterday", date(2025, 7, 9)),
        DateSpan(21, 32, "next Friday", date(2025, 7, 18)),
        DateSpan(46, 55, "in 3 days", date(2025, 7, 13)),
    ]
    for span in spans:
        assert text[span.start : span.end] == span.phrase


def test_offsets_are_into_the_original_text_even_after_code() -> None:
    text = "`x` tomorrow"
    assert find_relative_dates(text, THU) == [DateSpan(4, 12, "tomorrow", date(2025, 7, 11))]


def test_longest_phrase_wins_where_phrases_overlap() -> None:
    assert convert("the day after tomorrow")[1] == [("the day after tomorrow", "2025-07-12")]
    assert convert("end of next month")[1] == [("end of next month", "2025-08-31")]
    assert convert("pasado mañana")[1] == [("pasado mañana", "2025-07-12")]
    assert convert("大后天")[1] == [("大后天", "2025-07-13")]


def test_rest_of_sentence_and_its_case_are_kept() -> None:
    assert convert("TOMORROW the API Goes Live.") == ("2025-07-11 the API Goes Live.", [("TOMORROW", "2025-07-11")])


IDEMPOTENCE_TEXTS = [
    "Yesterday we merged; next Friday we ship, and in 3 days we demo.",
    "By the end of the month, or 2 weeks from now, or the week after next.",
    "Wir liefern morgen, nächste Woche und vor drei Tagen.",
    "La semana que viene, mañana por la mañana, hace dos días.",
    "我们下周四开会、三天前提交了、月底结账。",
    "오늘 그리고 다음 주 월요일, 今日は来週の水曜日です。",
    "Run `tomorrow` today; see https://x.org/today.",
]


@pytest.mark.parametrize("text", IDEMPOTENCE_TEXTS)
def test_absolutize_is_idempotent(text: str) -> None:
    once, spans = absolutize(text, THU)
    assert spans  # each text has something to convert
    assert absolutize(once, THU) == (once, [])
    assert absolutize(once, date(2030, 1, 1)) == (once, [])


def test_datespan_is_frozen() -> None:
    span = find_relative_dates("today", THU)[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        span.start = 3  # type: ignore[misc]


def test_empty_text() -> None:
    assert absolutize("", THU) == ("", [])


# --- other languages --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Wir liefern das Update morgen aus.", "Wir liefern das Update 2025-07-11 aus."),
        ("Bis morgen!", "Bis 2025-07-11!"),
        ("Heute Morgen war der Server weg.", "2025-07-10 Morgen war der Server weg."),
        ("Guten Morgen! Am Morgen ist es ruhig.", "Guten Morgen! Am Morgen ist es ruhig."),
        ("Morgen ist ein schönes Wort.", "Morgen ist ein schönes Wort."),
        ("Übermorgen, gestern, vorgestern.", "2025-07-12, 2025-07-09, 2025-07-08."),
        ("Nächste Woche und letzte Woche.", "2025-07-14 und 2025-06-30."),
        ("Wir treffen uns nächsten Montag.", "Wir treffen uns 2025-07-14."),
        ("Das war letzten Freitag.", "Das war 2025-07-04."),
        ("Wir sehen uns nächsten Montag im Büro.", "Wir sehen uns 2025-07-14 im Büro."),
        ("Am letzten Montag im Monat ist Review.", "Am letzten Montag im Monat ist Review."),
        ("Das ist diese Woche fällig.", "Das ist 2025-07-07 fällig."),
        ("Im nächsten Monat und nächstes Jahr.", "2025-08-01 und 2026-01-01."),
        ("Bis Ende des Monats, spätestens zum Monatsende.", "Bis 2025-07-31, spätestens zum 2025-07-31."),
        ("Es kommt in zwei Wochen, es kam vor drei Tagen.", "Es kommt 2025-07-24, es kam 2025-07-07."),
        ("Die letzte Woche des Quartals ist voll.", "Die letzte Woche des Quartals ist voll."),
        ("Das geht nicht von heute auf morgen.", "Das geht nicht von heute auf morgen."),
    ],
)
def test_german(text: str, expected: str) -> None:
    assert convert(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Lucía enviará la pista mañana.", "Lucía enviará la pista 2025-07-11."),
        ("Trabajo por la mañana y de la mañana.", "Trabajo por la mañana y de la mañana."),
        ("La mañana fue larga.", "La mañana fue larga."),
        ("Mañana por la mañana.", "2025-07-11 por la mañana."),
        ("Esta mañana revisé los logs.", "2025-07-10 revisé los logs."),
        ("Hoy, ayer, anteayer y pasado mañana.", "2025-07-10, 2025-07-09, 2025-07-08 y 2025-07-12."),
        ("Hoy en día todo es rápido.", "Hoy en día todo es rápido."),
        ("Nos vemos la semana que viene.", "Nos vemos 2025-07-14."),
        ("Nos vemos la próxima semana.", "Nos vemos 2025-07-14."),
        ("Fue la semana pasada.", "Fue 2025-06-30."),
        ("Llega el próximo lunes.", "Llega 2025-07-14."),
        ("Llega el lunes que viene.", "Llega 2025-07-14."),
        ("Llegó el viernes pasado.", "Llegó 2025-07-04."),
        ("El mes que viene cerramos; el año pasado no.", "2025-08-01 cerramos; 2024-01-01 no."),
        ("Pagamos a fin de mes.", "Pagamos a 2025-07-31."),
        ("El cierre de fin de mes tarda.", "El cierre de fin de mes tarda."),
        ("Llega en dos semanas; salió hace tres días.", "Llega 2025-07-24; salió 2025-07-07."),
    ],
)
def test_spanish(text: str, expected: str) -> None:
    assert convert(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Je livre demain.", "Je livre 2025-07-11."),
        ("Je l'ai envoyé hier.", "Je l'ai envoyé 2025-07-09."),
        ("Ich bin hier.", "Ich bin hier."),
        ("C'est aujourd'hui, après-demain ou avant-hier.", "C'est 2025-07-10, 2025-07-12 ou 2025-07-08."),
        ("On se voit la semaine prochaine.", "On se voit 2025-07-14."),
        ("C'était la semaine dernière.", "C'était 2025-06-30."),
        ("On se voit lundi prochain.", "On se voit 2025-07-14."),
        ("Le mois prochain, dans deux jours, il y a trois jours.", "2025-08-01, 2025-07-12, 2025-07-07."),
    ],
)
def test_french(text: str, expected: str) -> None:
    assert convert(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我们下周四和王磊开会。", "我们2025-07-17和王磊开会。"),
        (
            "今天、明天、昨天、后天、前天、大后天。",
            "2025-07-10、2025-07-11、2025-07-09、2025-07-12、2025-07-08、2025-07-13。",
        ),
        ("下星期五和下礼拜一。", "2025-07-18和2025-07-14。"),
        ("本周二和这周日。", "2025-07-08和2025-07-13。"),
        ("下周上线、上周修复。", "2025-07-14上线、2025-06-30修复。"),
        ("下个月开始、上个月结束、月底结账。", "2025-08-01开始、2025-06-01结束、2025-07-31结账。"),
        ("3天后交付、三天前提交、两周后复查。", "2025-07-13交付、2025-07-07提交、2025-07-24复查。"),
        ("然后天气很好。说明日期格式。", "然后天气很好。说明日期格式。"),
        ("下周末去爬山、每月底结账、3月底交付。", "下周末去爬山、每月底结账、3月底交付。"),
        ("明天的会议。", "明天的会议。"),
    ],
)
def test_chinese(text: str, expected: str) -> None:
    assert convert(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("오늘, 내일, 어제, 모레.", "2025-07-10, 2025-07-11, 2025-07-09, 2025-07-12."),
        ("다음 주에 보고 지난주에 만났다.", "2025-07-14에 보고 2025-06-30에 만났다."),
        ("다음 달부터 시작.", "2025-08-01부터 시작."),
        ("다음 주 월요일에 봐요.", "2025-07-14에 봐요."),
        ("오늘날 다음 주제 지난주말.", "오늘날 다음 주제 지난주말."),
    ],
)
def test_korean(text: str, expected: str) -> None:
    assert convert(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("今日は雨、明日は晴れ、昨日は曇り。", "2025-07-10は雨、2025-07-11は晴れ、2025-07-09は曇り。"),
        ("来週と先週と来月です。", "2025-07-14と2025-06-30と2025-08-01です。"),
        ("来週の水曜日に会います。", "2025-07-16に会います。"),
        ("今週末と今日の日付形式。", "今週末と今日の日付形式。"),
        ("明日之星。", "明日之星。"),  # no kana: Chinese, where 明日 is not "tomorrow" here
    ],
)
def test_japanese(text: str, expected: str) -> None:
    assert convert(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "If the last analyzed date is >7 days ago, re-run it.",
        "Anything older than 30 days ago is stale.",
        "Rebuild when the cache is more than 2 weeks ago.",
        "Flag runs under 3 days from now as urgent.",
        "Keep deadlines at least 2 weeks from now.",
        "Alert if the backup is ≥ 2 days ago.",
    ],
)
def test_thresholds_are_durations_not_dates(text: str) -> None:
    assert find_relative_dates(text, date(2026, 11, 22)) == []


def test_a_count_after_an_unrelated_comparison_still_matches() -> None:
    spans = find_relative_dates("It was more than fine. We shipped it 3 days ago.", date(2026, 11, 22))
    assert [(s.phrase, s.resolved) for s in spans] == [("3 days ago", date(2026, 11, 19))]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2027-01-15", date(2027, 1, 15)),
        (" next month ", date(2026, 12, 1)),
        ("Tomorrow", date(2026, 11, 23)),
        ("someday", None),
        ("tomorrow and next week", None),
        ("2027-13-01", None),
    ],
)
def test_parse_day_takes_an_iso_date_or_one_phrase(value: str, expected: date | None) -> None:
    from memdir.text.dates import parse_day

    assert parse_day(value, date(2026, 11, 22)) == expected


# --- many texts at once ------------------------------------------------------------------------

BULK_TEXTS = [
    "The freeze starts next Thursday and ends the day after tomorrow.",
    "No dates here at all, only a file and a till.",
    "Wir haben das gestern besprochen; Abgabe übermorgen.",
    "El despliegue fue ayer, la revisión es la próxima semana.",
    "On a livré avant-hier, la démo est dans 3 jours.",
    "我们昨天发布了，下周一复盘。",
    "先週リリースし、来月に見直す。",
    "어제 배포했고 다음 주에 검토한다.",
    "`next week` in code, and https://example.com/tomorrow in a URL, but last Friday in prose.",
    "",
    "week",
    "a word that ends in to",  # the next text starts with "morrow": no phrase spans two texts
    "morrow we ship",
    "Two weeks ago, three days from now, end of next month.",
]


def _dev_texts() -> list[str]:
    return [json.loads(line)["text"] for line in DEV_SET.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_many_texts_at_once_give_what_each_gives_alone() -> None:
    texts = BULK_TEXTS + (_dev_texts() if DEV_SET.is_file() else [])
    anchors = [date(2025, 7, 10 + i % 7) for i in range(len(texts))]
    assert find_relative_dates_in(texts, anchors) == [
        find_relative_dates(text, anchor) for text, anchor in zip(texts, anchors, strict=True)
    ]
    assert any(find_relative_dates_in(texts, anchors))  # the texts do hold dates


# --- code-like text and quoted labels: every writer and lint leave them alone ------------------


@pytest.mark.parametrize(
    "text",
    [
        "Call tomorrow() at startup; yesterday() is cached.",
        "Set next_week and getTomorrow; isToday, TOMORROW_CUTOFF, tomorrow_at.",
        "Format with today.isoformat() and date.today().",
        "The template has {today}, {{ tomorrow }}, $yesterday and %today%.",
        "Index it as dates[tomorrow] or tomorrow[0].",
        'Click the "Next Week" button.',
        "Click 'Tomorrow' in the picker.",
        "The \u201cNext Week\u201d button pages forward; \u2018Today\u2019 jumps back.",
        'The "the day after tomorrow" preset.',
        'It has been a week of "tomorrow." Press "Today," then "Next Week!"',
        "Le bouton \u00ab demain \u00bb et le bouton \u00abaujourd'hui\u00bb.",
        "点击\u300c明天\u300d按钮，或\u300e下周\u300f。",
        "Run `tomorrow()` or `next week`.",
    ],
)
def test_code_like_text_and_quoted_labels_are_not_dates(text: str) -> None:
    assert convert(text) == (text, [])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('He said "we ship tomorrow" to me.', 'He said "we ship 2025-07-11" to me.'),  # speech, not a label
        ("It is due (tomorrow).", "It is due (2025-07-11)."),
        ("Tomorrow: deploy. Next week: review.", "2025-07-11: deploy. 2025-07-14: review."),
        ("The 'Today' tab moved tomorrow.", "The 'Today' tab moved 2025-07-11."),
        ("See [tomorrow's notes](x) and [tomorrow](y).", "See [tomorrow's notes](x) and [2025-07-11](y)."),
    ],
)
def test_prose_around_quotes_and_brackets_is_still_converted(text: str, expected: str) -> None:
    assert convert(text)[0] == expected


def test_every_writer_leaves_code_and_labels_alone(tmp_path: Path) -> None:
    from memdir import MemoryDir
    from memdir.core.model import MemoryType, NewMemory

    typed = 'Click the "Next Week" button; tomorrow() is code; we ship tomorrow.'
    written = 'Click the "Next Week" button; tomorrow() is code; we ship 2025-07-11.'
    new = NewMemory(MemoryType.PROJECT, "ui", "The 'Today' tab", body=typed, created=THU)
    new.absolutize_dates()  # what add, the agent tools and extraction call
    assert (new.description, new.body) == ("The 'Today' tab", written)
    folder = MemoryDir(tmp_path / "memory", today=THU)
    folder.init()
    folder.add(NewMemory(MemoryType.USER, "role", "Backend developer", created=THU))
    memory, _ = folder.update("role", body=typed, description="Uses the 'Tomorrow' view")
    assert (memory.description, memory.body.strip()) == ("Uses the 'Tomorrow' view", written)


# --- a date is never glued onto a letter or digit ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("本周P0要修完。", "2025-07-07 P0要修完。"),
        ("P0本周修完。", "P0 2025-07-07修完。"),
        ("明天10点开会。", "2025-07-11 10点开会。"),
        ("v2明天发布。", "v2 2025-07-11发布。"),
        ("来週MTGがあります。", "2025-07-14 MTGがあります。"),
        ("我们下周四和王磊开会。", "我们2025-07-17和王磊开会。"),  # Han on both sides: written without spaces
    ],
)
def test_a_date_is_spaced_from_a_letter_or_digit_it_would_touch(text: str, expected: str) -> None:
    out = absolutize(text, THU)[0]
    assert out == expected
    assert absolutize(out, THU) == (out, [])


# --- growth: the scan's work follows the text --------------------------------------------------


def _stretch_work(monkeypatch: pytest.MonkeyPatch, text: str) -> int:
    """Characters the rules' patterns are run over for `text`: the stretches around their literals."""
    import memdir.text.dates as dates

    work = 0
    stretches = dates._stretches

    def counted(*args: Any) -> list[tuple[int, int]]:
        nonlocal work
        found = stretches(*args)
        work += sum(hi - lo for lo, hi in found)
        return found

    monkeypatch.setattr(dates, "_stretches", counted)
    find_relative_dates_in([text], [THU])
    monkeypatch.undo()
    return work


@pytest.mark.parametrize(
    "sentence",
    [
        "We ship tomorrow, after the review; the freeze starts next week.\n",
        "The migration ran for three days in a row, from the first to the last batch of the year.\n",
        "明天发布，下周五冻结。上周的会议里说过。",
        "내일 배포하고, 다음 주에 정리한다. 올해 목표.\n",
    ],
)
def test_patterns_run_only_over_the_stretches_around_their_literals(
    monkeypatch: pytest.MonkeyPatch, sentence: str
) -> None:
    """Counted, not timed: the characters handed to the patterns grow with the text (n and 4n give
    the same work per character), and each pattern sees only stretches between punctuation around
    its literals, a few times the text in all rather than ~50 times it."""
    small, large = sentence * 200, sentence * 800
    per_char_small = _stretch_work(monkeypatch, small) / len(small)
    per_char_large = _stretch_work(monkeypatch, large) / len(large)
    assert per_char_large <= per_char_small * 1.05
    assert per_char_large < 10


def test_masking_unpaired_backticks_is_linear() -> None:
    """Bug: an unpaired run of backticks made the inline-code pattern scan to the end of the text
    from each one, O(runs x text) on a memory full of them. The scan was the regex engine's, whose
    steps cannot be counted, so the CPU time is compared in the same test: 13 times the text may
    cost at most 26 times (linear is 13; the old scan was ~64)."""
    from memdir.text.codemask import mask_code as _mask

    def text(runs: int) -> str:  # every run of a length of its own, so none is closed
        return "".join("`" * k + " tomorrow " for k in range(1, runs))

    small, large = text(60), text(240)  # ~2,300 and ~31,000 characters: 13 x the text
    ratio = cpu_growth(_mask, small, large)
    assert ratio < 2 * len(large) / len(small), ratio


@pytest.mark.parametrize(
    "text",
    ["a `b` c `d", "`x` `y` `z`", "no ticks", "`", "``", "a ``b`` `c` d", "`a``b`", "``` fence\n`x`", "tomorrow `x` `"],
)
def test_masking_single_backticks_agrees_with_the_general_scan(text: str) -> None:
    """The split that masks a text whose backtick runs are all single blots out what the run table
    does, and a text with a longer run still takes the table."""
    from memdir.text.codemask import _mask_inline_code, _mask_single_ticks

    masked = _mask_inline_code(text + " ``")[: len(text)]  # an unpaired double run: the run table
    assert len(masked) == len(text)
    if "``" not in text:
        assert _mask_single_ticks(text) == masked


@pytest.mark.parametrize("space", [" ", "\t", "\n", "\xa0", "\u3000", "\u2009"])
def test_a_literal_that_whitespace_follows_is_found_after_any_whitespace(space: str) -> None:
    """The prefilter looks for "il " (il, then whitespace) rather than "il" for "il y a 3 jours":
    every whitespace character the pattern's \\s accepts must count as that space."""
    from memdir.text.dates import _RULES

    il = next(rule.needs for rule in _RULES if rule.pattern.pattern.startswith(r"\bil"))
    assert il == frozenset({"il "})
    spans = find_relative_dates(f"Fusionné il{space}y a 3 jours.", date(2026, 11, 22))
    assert [s.resolved for s in spans] == [date(2026, 11, 19)]


_MIXED_TEXTS = [
    "See https://example.com/next-week and www.Example.org, then ftp://files tomorrow.\n",
    "xhttps://a.b next week; HTTPS://A.B/c?d=tomorrow e; hhttps://z www. www.x.www.y z",
    "https://a://b http:// ftp:/x :// www.tomorrow.com ->www.a.b",
    "明天发布，下周五冻结。上周的会议里说过。来週の水曜日に、明後日 año día mañana próxima sábado",
    "내일 배포하고, 다음 주에 정리한다. 올해 목표. übermorgen après-demain aujourd’hui passé dernière",
    "Next\u3000week, last\xa0month, il\ty a 3 jours, hace 2 días, vor 3 Tagen, dans 2 semaines; dienstag",
    "the day after tomorrow, end of next month, this quarter, a fortnight ago, in 3 days from now",
]


@pytest.mark.parametrize("text", _MIXED_TEXTS)
def test_masking_urls_agrees_with_the_pattern_tried_at_every_offset(text: str) -> None:
    """URLs are looked for only a few characters before each "://" and at each "www."; what is
    blotted out is what `_URL.sub`, tried at every offset, blots out."""
    from memdir.text.codemask import _URL, _mask_urls
    from memdir.text.codemask import MASK as _MASK

    assert _mask_urls(text) == _URL.sub(lambda m: _MASK * len(m[0]), text)


@pytest.mark.parametrize("text", [*_MIXED_TEXTS, "wwww. WwW.x ww. www www.www. .www. ẇww. wWw.", ""])
def test_www_is_found_where_a_case_blind_search_finds_it(text: str) -> None:
    from memdir.text.codemask import _WWW, _has_www

    case_blind = [m.start() for m in re.finditer(r"www\.", text, re.IGNORECASE)]
    assert [m.start() - 3 for m in _WWW.finditer(text)] == case_blind
    assert _has_www(text) == bool(case_blind)


def test_the_prefilter_finds_every_place_of_every_literal() -> None:
    """The literals are found in one pass (a trie over the one-byte copy; the characters beyond
    ASCII in the text): every place a search for each literal on its own finds, no other."""
    from memdir.text.codemask import mask_code as _mask
    from memdir.text.dates import _RULES, _in_one_byte, _Prefilter

    lowered = [_mask(text).lower() for text in _MIXED_TEXTS * 3]
    prefilter = _Prefilter(lowered)
    for literal in sorted({lit for rule in _RULES for lit in rule.needs}):
        text, needle = (
            (prefilter.ascii, literal.encode("ascii")) if _in_one_byte(literal) else (prefilter.joined, literal)
        )
        expected: dict[int, list[int]] = {}
        at = text.find(needle)  # type: ignore[arg-type]
        while at >= 0:
            which = max(i for i, start in enumerate(prefilter.starts) if start <= at)
            expected.setdefault(which, []).append(at - prefilter.starts[which])
            at = text.find(needle, at + 1)  # type: ignore[arg-type]
        assert prefilter.places(frozenset({literal})) == expected, literal


# Every rule's phrases, a few spellings each: the generated half of the texts the rules' `needs` and
# the break characters are checked on (below), beside the dev set and the real corpus.
_EVERY_RULE = [
    "the day after tomorrow", "this morning", "last night", "today", "tonight", "day before yesterday",
    "next week", "last month", "this quarter", "the week after next", "next monday", "this past friday",
    "tuesday of next week", "friday this week", "end of the month", "the end of next quarter", "end of year",
    "month-end", "quarter-end", "in 3 days", "in a couple of weeks", "in two months' time", "in a fortnight",
    "3 days ago", "a couple of years ago", "two weeks from now", "5 days from today",
    "heute", "übermorgen", "vorgestern", "morgen", "nächste Woche", "im kommenden Monat", "letztes Jahr",
    "nächsten Dienstag", "letzten Freitag", "Ende des Monats", "Ende nächster Woche", "Monatsende",
    "Jahresende", "in 3 Tagen", "in zwei Wochen", "vor 3 Tagen", "vor einem Monat",
    "hoy", "ayer", "esta mañana", "pasado mañana", "antes de ayer", "anoche", "mañana", "la próxima semana",
    "el pasado mes", "la semana que viene", "el mes pasado", "esta semana", "este año", "el próximo lunes",
    "pasado viernes", "el lunes que viene", "el martes próximo", "este miércoles", "este sábado",
    "fin de mes", "final del trimestre", "en 3 días", "dentro de dos semanas", "hace 3 días",
    "hace un par de meses", "aujourd'hui", "aujourd’hui", "demain", "après-demain", "ce soir",
    "cet après-midi", "avant-hier", "nous avons fini hier", "la semaine prochaine", "le mois dernier",
    "l'année passée", "cette semaine", "ce mois-ci", "lundi prochain", "vendredi dernier", "fin du mois",
    "la fin de l'année", "fin de ce trimestre", "dans 3 jours", "dans deux semaines", "il y a 3 jours",
    "il y a deux mois", "明天", "昨晚", "大后天", "今年", "明年", "下周三", "上个星期五", "这礼拜天", "下周",
    "上个星期", "下个月", "上季度", "月底", "下个月底", "年末", "3天后", "两周以后", "三个月之後", "3天前",
    "两个星期前", "明日は", "一昨日から", "来週から", "先月の", "再来年", "来週の水曜日", "先週金曜",
    "오늘", "내일", "그저께", "올해", "내년", "다음 주 월요일", "지난주금요일", "다음 주", "지난달", "이번 주",
    "월말", "연말",
]  # fmt: skip
_SPACES = [" ", "\t", "\n", "\xa0", "\u3000", "  "]


def _generated_texts() -> list[str]:
    """Each phrase in prose, in capitals, quoted, in brackets, and with each kind of whitespace."""
    texts = []
    for k, phrase in enumerate(_EVERY_RULE):
        space = _SPACES[k % len(_SPACES)]
        for variant in (phrase, phrase.upper(), phrase.replace(" ", space)):
            texts += [f"We spoke of it {variant}, then moved on.", f'("{variant}") {variant}; [{variant}]']
    return texts


def _real_texts() -> list[str]:
    """The dev set's sentences and every file of the real corpus, where ../shared is beside the checkout."""
    texts = []
    if DEV_SET.is_file():
        texts += [json.loads(line)["text"] for line in DEV_SET.read_text(encoding="utf-8").splitlines() if line]
    corpus = DEV_SET.parents[2] / "corpus" / "real"
    texts += [path.read_text(encoding="utf-8", errors="replace") for path in sorted(corpus.rglob("*.md"))]
    return texts


@pytest.mark.parametrize("source", ["generated", "real"])
def test_every_match_of_every_rule_holds_one_of_its_needs_and_no_break(source: str) -> None:
    """Each rule declares `needs`, words one of which every match contains, and `_BREAKS`, characters
    no match holds: the prefilter skips a text without the words and runs a rule only between the
    breaks around them. Checked on every match of every rule: a rule whose declaration is wrong
    would silently miss phrases."""
    from memdir.text.codemask import mask_code as _mask
    from memdir.text.dates import _BREAKS, _RULES

    texts = _generated_texts() if source == "generated" else _real_texts()
    if not texts:
        pytest.skip("no ../shared/eval/dev/dates.jsonl nor ../shared/corpus/real beside this checkout")
    matched = [0] * len(_RULES)
    for text in texts:
        masked = _mask(text)
        for k, rule in enumerate(_RULES):
            for found in rule.pattern.finditer(masked):
                phrase = found.group().lower()
                spaced = re.sub(r"\s", " ", phrase)  # an ASCII word's space stands for any whitespace
                assert any(need in (spaced if need.isascii() else phrase) for need in rule.needs), (phrase, rule)
                assert _BREAKS.search(phrase) is None, (phrase, rule)
                matched[k] += 1
    if source == "generated":  # not vacuous: every rule was put to the test
        assert [rule.pattern.pattern for rule, n in zip(_RULES, matched, strict=True) if not n] == []


@pytest.mark.parametrize("source", ["generated", "real"])
def test_the_prefilter_changes_nothing_but_the_time(source: str) -> None:
    """Every rule run over every whole text finds what the prefilter and the stretches let through."""
    from memdir.text.dates import _find_in_batch

    texts = _generated_texts() if source == "generated" else _real_texts()
    if not texts:
        pytest.skip("no ../shared/eval/dev/dates.jsonl nor ../shared/corpus/real beside this checkout")
    anchors = [THU] * len(texts)
    assert _find_in_batch(texts, anchors) == _find_in_batch(texts, anchors, prefiltered=False)


# --- periods: what lint's fix writes for "last quarter" -------------------------------------------


@pytest.mark.parametrize(
    ("text", "period", "written"),
    [
        ("We shipped it last week.", "week", "We shipped it the week of 2025-06-30."),
        ("Last week we shipped it.", "week", "The week of 2025-06-30 we shipped it."),
        ("Prices go up next quarter.", "quarter", "Prices go up in 2025-Q4."),
        ("Due by next quarter.", "quarter", "Due by 2025-Q4."),
        ("Revenue fell last quarter.", "quarter", "Revenue fell in 2025-Q2."),
        ("We migrate next month.", "month", "We migrate in 2025-08."),
        ("This year we run the pilot.", "year", "In 2025 we run the pilot."),
        ("The week after next we demo.", "week", "The week of 2025-07-21 we demo."),
        ("Nächste Woche liefern wir.", "week", "2025-W29 liefern wir."),
        ("本周P0要修完", "week", "2025-W28 P0要修完"),
        ("明年再说", "year", "2026再说"),
        ("Freeze tomorrow.", "day", "Freeze 2025-07-11."),
        ("Freeze at the end of next month.", "day", "Freeze at 2025-08-31."),  # the last day: a day
    ],
)
def test_a_period_is_written_as_a_period(text: str, period: str, written: str) -> None:
    from memdir.text.datetext import period_in_place

    [span] = find_relative_dates(text, THU)
    assert span.period == period
    replacement = period_in_place(text, span.start, span.end, span.resolved, span.period)
    assert text[: span.start] + replacement + text[span.end :] == written
