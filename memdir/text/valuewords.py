"""The words that state a value, accent-folded, in English, German, Spanish and French: month names,
numbers spelled out, weekdays and cadences. A reworded duplicate keeps its values and an update
changes them (text/similarity.py), so "six years" must meet "6 years" and "every Tuesday" differ
from "every other Thursday". General knowledge of the four languages, not chosen from any folder.
"""

from __future__ import annotations

MONTHS = {
    word: number
    for number, words in enumerate(
        (
            "january jan januar enero janvier",
            "february feb februar febrero fevrier",
            "march mar marz marzo mars",
            "april apr abril avril",
            "may mai mayo",
            "june jun juni junio juin",
            "july jul juli julio juillet",
            "august aug agosto aout",
            "september sep sept septiembre septembre",
            "october oct oktober octubre octobre",
            "november nov noviembre novembre",
            "december dec dezember diciembre decembre",
        ),
        start=1,
    )
    for word in words.split()
}
# Spelled-out numbers, so that "six years" matches "6 years". Words that are also common in another of
# these languages are left out: one/un/uno (articles), once (es 11), tres (fr "tres" = very), sept,
# neuf (fr "new"), elf, null.
NUMBER_WORDS = {
    word: str(number)
    for number, words in enumerate(
        (
            "",
            "",
            "two zwei dos deux",
            "three drei trois",
            "four vier cuatro quatre",
            "five funf cinco cinq",
            "six sechs seis",
            "seven sieben siete",
            "eight acht ocho huit",
            "nine neun nueve",
            "ten zehn diez dix",
            "eleven",
            "twelve zwolf doce douze",
        )
    )
    for word in words.split()
} | {"twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000"}
# Weekdays and cadences are values too ("every Tuesday" vs "every other Thursday", "monthly" vs "weekly").
TIME_WORDS = {
    word: canonical
    for canonical, words in (
        ("monday", "monday mondays montag lunes lundi"),  # not "mon": French for "my"
        ("tuesday", "tuesday tuesdays tue dienstag martes mardi"),
        ("wednesday", "wednesday wednesdays mittwoch miercoles mercredi"),
        ("thursday", "thursday thursdays thu donnerstag jueves jeudi"),
        ("friday", "friday fridays fri freitag viernes vendredi"),
        ("saturday", "saturday saturdays samstag sabado samedi"),
        ("sunday", "sunday sundays sonntag domingo dimanche"),
        ("hourly", "hourly stundlich"),
        ("daily", "daily taglich diario diaria quotidien"),
        ("weekly", "weekly wochentlich semanal hebdomadaire"),
        ("biweekly", "biweekly fortnightly"),
        ("monthly", "monthly monatlich mensual mensuel"),
        ("quarterly", "quarterly quartalsweise trimestral trimestriel"),
        ("yearly", "yearly annually annual jahrlich anual annuel"),
    )
    for word in words.split()
}
VALUE_WORDS = frozenset(NUMBER_WORDS.keys() | TIME_WORDS.keys())
