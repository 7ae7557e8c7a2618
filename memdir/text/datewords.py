"""The words relative dates are made of, by language (lower case) -> what they mean: units, days,
weekdays, numbers spelled out, and the words for "next" and "last". General knowledge of English,
German, Spanish, French, Chinese, Japanese and Korean; text/dates.py builds its rules from them.
"""

from __future__ import annotations

from collections.abc import Iterable

UNITS: dict[str, str] = {
    **dict.fromkeys(
        ["day", "days", "tag", "tage", "tagen", "día", "días", "dia", "dias", "jour", "jours", "天"], "day"
    ),
    **dict.fromkeys(
        [
            "week",
            "weeks",
            "woche",
            "wochen",
            "semana",
            "semanas",
            "semaine",
            "semaines",
            "周",
            "週",
            "星期",
            "个星期",
            "個星期",
            "礼拜",
            "禮拜",
            "주",
        ],
        "week",
    ),
    **dict.fromkeys(["fortnight", "fortnights"], "fortnight"),
    **dict.fromkeys(
        [
            "month",
            "months",
            "monat",
            "monate",
            "monaten",
            "monats",
            "mes",
            "meses",
            "mois",
            "月",
            "个月",
            "個月",
            "달",
            "월",
        ],
        "month",
    ),
    **dict.fromkeys(["quarter", "quarters", "quartal", "quartals", "trimestre", "trimestres", "季度"], "quarter"),
    **dict.fromkeys(
        [
            "year",
            "years",
            "jahr",
            "jahre",
            "jahren",
            "jahres",
            "jahrs",
            "año",
            "años",
            "an",
            "ans",
            "année",
            "années",
            "annee",
            "annees",
            "年",
            "연",
        ],
        "year",
    ),
}


def _inflect(stems: Iterable[str], endings: Iterable[str] = ("", "n", "r", "s", "m")) -> list[str]:
    """German adjective endings: nächste, nächsten, nächster, nächstes, nächstem."""
    return [stem + end for stem in stems for end in endings]


# How many periods away a qualifier points: next = +1, last = -1, this = 0.
REL: dict[str, int] = {
    "next": 1,
    "last": -1,
    "this": 0,
    "the": 0,
    "this past": -1,
    **dict.fromkeys(_inflect(["nächste", "naechste", "kommende"]), 1),
    **dict.fromkeys(_inflect(["übernächste", "uebernaechste"]), 2),
    **dict.fromkeys(_inflect(["letzte", "vergangene"]), -1),
    **dict.fromkeys([*_inflect(["diese"]), "des", "der"], 0),
    **dict.fromkeys(["próximo", "próxima", "proximo", "proxima", "que viene", "prochain", "prochaine"], 1),
    **dict.fromkeys(["pasado", "pasada", "dernier", "dernière", "derniere", "passé", "passée", "passe", "passee"], -1),
    **dict.fromkeys(["este", "esta", "ce", "cet", "cette"], 0),
    **dict.fromkeys(["下", "明", "来", "来週", "다음"], 1),
    **dict.fromkeys(["下下", "再来週"], 2),
    **dict.fromkeys(["上", "去", "先", "先週", "지난"], -1),
    **dict.fromkeys(["本", "这", "這", "今", "今週", "이번"], 0),
}

WEEKDAYS: dict[str, int] = {
    name: i
    for names in (
        ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"],
        ["montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag"],
        ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"],
        ["lunes", "martes", "miercoles", "jueves", "viernes", "sabado", "domingo"],
        ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
        ["一", "二", "三", "四", "五", "六", "日"],
        ["月", "火", "水", "木", "金", "土", "日"],
        ["월", "화", "수", "목", "금", "토", "일"],
    )
    for i, name in enumerate(names)
} | {"sonnabend": 5, "天": 6}


def _counting(words: str, start: int) -> dict[str, int]:
    """Number words in counting order: _counting("two three", start=2) == {"two": 2, "three": 3}."""
    return {word: n for n, word in enumerate(words.split(), start=start)}


EN_NUMBERS = {
    "a": 1,
    "an": 1,
    "a couple of": 2,
    "a couple": 2,
    **_counting(
        "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
        " seventeen eighteen nineteen twenty",
        start=1,
    ),
    "thirty": 30,
}
DE_NUMBERS = {
    **dict.fromkeys(["ein", "eine", "einem", "einer", "einen", "eins"], 1),
    **_counting("zwei drei vier fünf sechs sieben acht neun zehn elf zwölf", start=2),
    "vierzehn": 14,
    "zwanzig": 20,
    "dreißig": 30,
}
ES_NUMBERS = {
    **dict.fromkeys(["un", "una", "uno"], 1),
    "un par de": 2,
    **_counting("dos tres cuatro cinco seis siete ocho nueve diez once doce", start=2),
    "quince": 15,
    "veinte": 20,
    "treinta": 30,
}
FR_NUMBERS = {
    **dict.fromkeys(["un", "une"], 1),
    **_counting("deux trois quatre cinq six sept huit neuf dix onze douze", start=2),
    "quinze": 15,
    "vingt": 20,
    "trente": 30,
}
NUMBERS = EN_NUMBERS | DE_NUMBERS | ES_NUMBERS | FR_NUMBERS
ZH_DIGITS = {d: i for i, d in enumerate("一二三四五六七八九", start=1)} | {"两": 2}

# Fixed phrases -> days from the anchor, one table per language.
EN_DAYS = {
    "today": 0,
    "tonight": 0,
    "this morning": 0,
    "this afternoon": 0,
    "this evening": 0,
    "tomorrow": 1,
    "yesterday": -1,
    "last night": -1,
    "the day after tomorrow": 2,
    "day after tomorrow": 2,
    "the day before yesterday": -2,
    "day before yesterday": -2,
}
DE_DAYS = {"heute": 0, "übermorgen": 2, "gestern": -1, "vorgestern": -2}
ES_DAYS = {
    "hoy": 0,
    "esta mañana": 0,
    "esta tarde": 0,
    "esta noche": 0,
    "pasado mañana": 2,
    "ayer": -1,
    "anoche": -1,
    "anteayer": -2,
    "antier": -2,
    "antes de ayer": -2,
}
FR_DAYS = {
    "aujourd'hui": 0,
    "ce matin": 0,
    "ce soir": 0,
    "cet après-midi": 0,
    "demain": 1,
    "après-demain": 2,
    "apres-demain": 2,
    "avant-hier": -2,
}
ZH_DAYS = {
    "今天": 0,
    "今晚": 0,
    "明天": 1,
    "昨天": -1,
    "昨晚": -1,
    "后天": 2,
    "後天": 2,
    "大后天": 3,
    "大後天": 3,
    "前天": -2,
    "大前天": -3,
}
JA_DAYS = {"今日": 0, "明日": 1, "昨日": -1, "明後日": 2, "一昨日": -2}
KO_DAYS = {"오늘": 0, "내일": 1, "어제": -1, "모레": 2, "그저께": -2, "그제": -2}

# Fixed CJK words -> (period, offset): the first day of that period.
ZH_PERIODS = {"今年": ("year", 0), "明年": ("year", 1), "去年": ("year", -1)}
JA_PERIODS = {
    "今週": ("week", 0),
    "来週": ("week", 1),
    "再来週": ("week", 2),
    "先週": ("week", -1),
    "今月": ("month", 0),
    "来月": ("month", 1),
    "再来月": ("month", 2),
    "先月": ("month", -1),
    "来年": ("year", 1),
    "再来年": ("year", 2),
    "昨年": ("year", -1),
}
KO_PERIODS = {"올해": ("year", 0), "내년": ("year", 1), "작년": ("year", -1)}
