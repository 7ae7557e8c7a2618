"""Find memories that say the same thing twice, and same-topic memories that may contradict each other.

Everything here is lexical and needs no model: a similarity score over stemmed content words, and a
check of the facts that a reworded duplicate keeps but an update changes (numbers and dates, names and
identifiers, words that announce a change such as "now" or "no longer"). `find_pairs` scans a whole
folder without comparing every pair, through an inverted index over the rarest words of each memory's
name and description.

Over 500 lines: one scoring model (tokens, stems, fact checks, the candidate index) whose parts are
tuned together on the dev pairs.
"""

# How the pieces fit, and why:
#
# - Score. Binary cosine over content terms, averaged over two views: the whole memory and its head
#   (name + description). The head is the memory's one-line claim, so a reworded duplicate keeps it
#   close even when the body is rewritten; the whole text adds the evidence of shared details.
#   Terms are case- and accent-folded words minus stopwords (en/de/es/fr), lightly stemmed; CJK runs,
#   which have no spaces, become single characters plus bigrams, the usual stand-in for words.
# - Facts. A duplicate and an update of the same memory look alike word for word; what separates them
#   is a changed value. Paraphrases keep numbers, dates, names and identifiers as they are (they
#   reword the ordinary words around them), so a value that only one side has, on both sides, is
#   strong evidence of a contradiction. Negation is deliberately not a signal on its own: reworded
#   duplicates move it around freely ("X, not Y" vs "X instead of Y", "skip" vs "don't explain").
#   Two narrower cues are: calling a plan off ("cancelled", _CALL_OFF) is a difference, as an
#   announced change is; and the facts rule, which reads little else, says nothing when only one
#   side says no or never (_NEGATION).
# - Types. Memories of different types are different kinds of statement (a profile, a rule, a project
#   fact, a pointer), so their score is scaled down: shared words across types are weaker evidence.
# - Verdict. Score >= DUPLICATE_SCORE and no differing fact: duplicate. Score >= TOPIC_SCORE and some
#   differing fact: possible contradiction (same topic, values differ). Anything else: no verdict.
#   A false "duplicate" can cost a user a memory, so the duplicate bar is set for precision; the
#   thresholds are round numbers chosen on a labelled dev set (scripts/eval_pairs.py). `compare`
#   (not the folder scan, for its cost) also calls a pair below the bar a duplicate when every
#   specific fact of each agrees (`_same_facts`): a rewording from end to end keeps those.
# - Write path: `compare` a candidate with its neighbours; a duplicate can be skipped, and a pair
#   with `similarity` >= TOPIC_SCORE (or a little lower, to be safe) is worth asking a model about.

from __future__ import annotations

import bisect
import functools
import itertools
import math
import operator
import re
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Literal

from memdir.text.bulk import paused_gc
from memdir.text.valuewords import MONTHS, NUMBER_WORDS, TIME_WORDS, VALUE_WORDS
from memdir.text.words import (
    TOKEN,
    fold,
    is_cjk,
    stem,
    term_key,
    term_keys,
    terms,
    terms_of_keys,
    text_of_keys,
)

__all__ = [
    "DUPLICATE_SCORE",
    "TOPIC_SCORE",
    "Comparer",
    "MemoryText",
    "PairVerdict",
    "compare",
    "duplicate_groups",
    "fact_differences",
    "find_pairs",
    "similarity",
]

DUPLICATE_SCORE = 0.45
"""Similarity from which two memories with the same facts count as duplicates."""
TOPIC_SCORE = 0.4
"""Similarity from which two memories count as the same topic (candidates for a contradiction check)."""


@dataclass(frozen=True)
class MemoryText:
    """What similarity looks at in one memory. `key` (e.g. the file path) is only passed through."""

    key: str
    name: str
    description: str
    body: str
    type: str | None = None


@dataclass(frozen=True)
class PairVerdict:
    """Two memories flagged together; `a` comes before `b` in the input."""

    a: str
    b: str
    label: Literal["duplicate", "contradiction"]
    score: float  # similarity, 0..1
    reason: str  # short and human-readable, e.g. "same topic; numbers differ: 30 vs 45"


@dataclass(frozen=True)
class _Profile:
    """One memory's terms, computed once; its facts are extracted only when a close pair needs them."""

    memory: MemoryText
    # The terms of the name and description as `term_key`s, each once: a tuple, a fifth of a set's size,
    # since a folder scan holds one for every memory (20 MiB as sets for the realistic 10k folder).
    # As keys, not text, a body's reading starts from them as they are; the text of a CJK term is
    # made only where an order or a digit asks for it (`_signatures`, `_word_score`).
    head: tuple[str | int, ...]
    judged: _Judged = field(default_factory=lambda: _Judged(), compare=False, repr=False)  # one per scan

    @classmethod
    def of(cls, memory: MemoryText) -> _Profile:
        return cls.all_of([memory])[0]

    @classmethod
    def all_of(cls, memories: Sequence[MemoryText]) -> list[_Profile]:
        """Profiles of many memories. Each CJK key is one number object however many heads hold it
        (`shared`), as each word is one string: a number for each CJK term of each head took 11 MiB
        of the realistic 10k folder."""
        shared: dict[str | int, str | int] = {}
        judged = _Judged()
        profiles = []
        for memory in memories:
            keys = term_keys(f"{memory.name}\n{memory.description}")  # slug hyphens split like spaces
            profiles.append(cls(memory, tuple(map(shared.setdefault, keys, keys)), judged))
        return profiles

    @cached_property
    def keys(self) -> set[str | int]:
        """The whole memory's terms as `term_key`s: worked out only for a memory that meets another, since
        a folder's bodies hold most of its text, and dropped (`forget`) once a folder scan is done with
        them. Sizes, overlaps and membership (`has`) need no more, so the text of CJK terms is made
        only when asked for (`terms`)."""
        reading: _Reading | None = self.__dict__.get("reading")
        if reading is not None and reading.done:  # a folder scan has read the body already
            return reading.keys
        return term_keys(self.memory.body, set(self.head))

    @cached_property
    def terms(self) -> frozenset[str]:
        """The whole memory's terms."""
        return terms_of_keys(self.keys)

    def has(self, term: str) -> bool:
        """Whether `term` is one of the whole memory's terms, asked of its keys. A term from U+3040 up
        is a CJK character or bigram (see term_key), so a longer such string is none."""
        if is_cjk(term):
            return len(term) <= 2 and term_key(term) in self.keys
        return term in self.keys

    @cached_property
    def wordy(self) -> tuple[frozenset[str], frozenset[str]]:
        """The head's terms and the whole memory's without the terms that hold a digit (`_word_score`)."""
        head, whole = terms_of_keys(self.head), self.terms
        return frozenset(t for t in head if not _DIGIT.search(t)), frozenset(t for t in whole if not _DIGIT.search(t))

    @cached_property
    def reading(self) -> _Reading:
        """The whole memory's terms as a folder scan reads them, a stretch of the body at a time."""
        return _Reading(self)

    def forget(self) -> None:
        """Let go of what was worked out from the body; it is worked out again if asked for."""
        worked_out = self.__dict__
        for name in _WORKED_OUT.intersection(worked_out):  # one set operation: a scan forgets every memory
            del worked_out[name]

    # The facts come from the description and body: the name is a slug that repeats them, mangled
    # ("k8s-131-upgrade" for 1.31).
    @cached_property
    def values(self) -> dict[str, str]:
        # The same text, folded once for both; the words, if a pair's names have asked for them
        # already, can tell that no word of the text is a value or a month (_stated_values).
        return _stated_values(self.said, self.__dict__.get("words"))

    @cached_property
    def head_values(self) -> dict[str, str]:
        return stated_values(self.memory.description)

    @cached_property
    def names(self) -> dict[str, str]:
        return _names(self.memory.description + "\n" + self.memory.body, self.judged.names)

    @cached_property
    def subject(self) -> list[str]:
        """The ordinary words of the head: not a stated value (number, date, weekday, cadence), not a
        month, not part of a name or identifier (see `_own_subject`)."""
        told = set(self.values.values()) | set(self.names.values()) | set(MONTHS)
        stated = terms(" ".join(told))
        # A CJK term's key is a number (see term_key); a word's is the word.
        return [t for t in self.head if isinstance(t, str) and t not in stated and not any(c.isdigit() for c in t)]

    @cached_property
    def words(self) -> frozenset[str]:
        """Every word and name-like token, squashed, to tell whether this memory mentions a name at all."""
        # Folding reads one character (or one run of accents) at a time, and never across a line
        # break: the folded name joined to the text folded already is the whole memory folded.
        text = f"{fold(self.memory.name)}\n{self.said}"
        # Each distinct candidate squashed once (the pattern has no groups: findall gives whole matches);
        # most are plain words, all word characters but "_", which squashing leaves as they are.
        candidates = set(_NAME_CANDIDATE.findall(text))
        plain = set(filter(str.isalnum, candidates))
        squashed = map(functools.partial(_SQUASH.sub, ""), candidates - plain)
        # Every word (`TOKEN`) lies inside one candidate, rather than read from the text again: no
        # word character is left between candidates, and each candidate has a character that is no
        # word character (or none) on its either side. An ASCII plain candidate is a word as it
        # stands, so only the other candidates are searched for their words.
        others = itertools.chain(candidates - plain, itertools.filterfalse(str.isascii, plain))
        return frozenset(TOKEN.findall(" ".join(others))).union(plain, squashed)

    @cached_property
    def said(self) -> str:
        """The description and body, folded: what the cues below are searched in."""
        return fold(self.memory.description + "\n" + self.memory.body)

    @cached_property
    def change(self) -> str | None:
        """The first words announcing a change ("moved to", "no longer"), or None (see _CHANGE)."""
        return self._first_cue(_CHANGE, _cue_words(_CHANGE_WORDS), _CHANGE_CJK)

    @cached_property
    def called_off(self) -> str | None:
        """The first word calling something off ("cancelled", "postponed"), or None (see _CALL_OFF)."""
        return self._first_cue(_CALL_OFF, _cue_words(_CALL_OFF_WORDS), _CALL_OFF_CJK)

    def _first_cue(self, pattern: re.Pattern[str], phrases: list[frozenset[str]], cjk: tuple[str, ...]) -> str | None:
        """The first match of a cue's `pattern` in the text, or None. The patterns match whole words
        only, so each of a phrase's words is one of the text's words (`words`): once those are
        known (a pair's names have asked for them), a text that lacks a word of every phrase, and
        every CJK cue, is told in C, without a pass of the pattern over it."""
        words: frozenset[str] | None = self.__dict__.get("words")
        if words is not None and not any(map(words.issuperset, phrases)) and not any(map(self.said.__contains__, cjk)):
            return None
        found = pattern.search(self.said)
        return found[0] if found else None

    @cached_property
    def negated(self) -> bool:
        """Whether the memory says no or never anywhere (see _NEGATION)."""
        return _NEGATION.search(self.said) is not None


_WORKED_OUT = frozenset(
    (
        *("keys", "terms", "wordy", "reading", "values", "head_values", "names", "subject", "words", "said"),
        *("change", "called_off", "negated"),
    )
)
"""What a _Profile works out from the body and can `forget`."""

# ASCII whitespace: a body cut there has the terms of its parts (see words_and_runs).
_CUT = re.compile("[\t\n\v\f\r ]")


class _Reading:
    """One memory's term keys (`term_keys` of the body, and the head's), read from the body a
    stretch at a time: a pair that cannot reach TOPIC_SCORE is often told from part of the longer body."""

    __slots__ = ("_memory", "keys", "length", "read")

    def __init__(self, profile: _Profile) -> None:
        self._memory = profile.memory
        self.keys: set[str | int] = set(profile.head)
        self.length = len(profile.memory.body)
        self.read = 0  # characters of the body read so far

    @property
    def done(self) -> bool:
        return self.read >= self.length

    def read_on(self, chars: int) -> None:
        """Read at least `chars` more characters of the body, up to the next cut (or the end)."""
        body = self._memory.body  # not held: a lint's memory cuts it from the file's text when asked
        cut = _CUT.search(body, self.read + chars)
        end = len(body) if cut is None else cut.start()
        term_keys(body[self.read : end], self.keys)
        self.read = end
        if self.done:
            # Grown a stretch at a time, with the junk bigrams of each taken out again, the set's table
            # is often a size class too large; a copy fits it. Held until a memory's last pair, the
            # slack came to 4 MiB of the realistic 10k folder's peak.
            self.keys = set(self.keys)

    def read_all(self) -> set[str | int]:
        if not self.done:
            self.read_on(self.length)
        return self.keys


def _cosine(a: Set[str | int], b: Set[str | int]) -> float:
    return _cosine_of(len(a & b), len(a), len(b))


def _cosine_of(shared: int, size_a: int, size_b: int) -> float:
    if not size_a or not size_b:
        return 0.0
    return shared / math.sqrt(size_a * size_b)


_OTHER_TYPE_FACTOR = 0.8


def _score(a: _Profile, b: _Profile, whole: float | None = None) -> float:
    """`whole`: the cosine of the two whole memories' terms, when the caller has worked it out."""
    return _scored(a, b, _cosine(a.keys, b.keys) if whole is None else whole, _head_cosine(a, b))


def _head_cosine(a: _Profile, b: _Profile) -> float:
    return _cosine_of(len(set(a.head).intersection(b.head)), len(a.head), len(b.head))


def _scored(a: _Profile, b: _Profile, whole: float, head: float) -> float:
    """The score of two memories from the cosines of their whole terms and of their heads'."""
    score = (whole + head) / 2
    # Memories of different types are different kinds of statement (a user's profile, a rule, a project
    # fact, a pointer); one that shares words with a memory of another type is less likely the same fact.
    if a.memory.type and b.memory.type and a.memory.type != b.memory.type:
        score *= _OTHER_TYPE_FACTOR
    return score


def similarity(a: MemoryText, b: MemoryText) -> float:
    """How much two memories say the same thing, 0..1, from their words alone (facts are not checked).

    From DUPLICATE_SCORE (0.45) up, reworded duplicates if their facts agree; from TOPIC_SCORE (0.4),
    the same topic; below about 0.3, different subjects. Memories of different types score lower.
    """
    return _score(_Profile.of(a), _Profile.of(b))


# --- facts: what a reworded duplicate keeps and an update changes ---------------------------------

# Each of these patterns starts with the character class of its first character and looks behind it
# after, where the plain form would start with `\b` or a lookbehind: `re` then skips to the places
# that character stands at, rather than trying the whole pattern at every character of the text.
# `\d(?<!\w\d)` is `\b\d`: the character before is no word character (or there is none).
_ISO_DATE = re.compile(r"(\d(?<!\w\d)\d{3})-(\d{1,2})-(\d{1,2})\b")
# A word is taken whole (`++`, possessive): what follows it is never a letter, so giving letters back
# could never make a match, and trying it at every word of a long body was most of these patterns' cost.
_DAY_MONTH_YEAR = re.compile(r"(\d(?<!\w\d)\d?)(?:st|nd|rd|th)?\.?\s+(?:de\s+)?([a-z]++)\.?,?\s+(?:de\s+)?(\d{4})\b")
_MONTH_DAY_YEAR = re.compile(r"([a-z](?<!\w[a-z])[a-z]*+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b")
_MONTH_YEAR = re.compile(r"([a-z](?<!\w[a-z])[a-z]*+)\s+(\d{4})\b")
# A number standing alone (not inside an identifier such as eu-west-1 or PA5), with an optional "v" of a
# version and a k or % that changes its meaning; "1,000" and "8,400" are thousands. Its first character
# is a "v" followed by a digit, or a digit, with neither a word character or a dot nor a letter and a
# hyphen before it (`_number` takes the "v" and the k or % off again).
_NUMBER = re.compile(r"[v\d](?<![\w.][v\d])(?<![a-z]-[v\d])(?:(?<=v)\d+|(?<=\d)\d*)(?:[.,:]\d+)*(k|%)?(?!\w)")
_VERSION = re.compile(r"v\d[\d.]*")
_DATE_VALUE = re.compile(r"\d{4}-\d{2}(?:-\d{2})?")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+")
_WORD = re.compile(r"[^\W\d_]+")
# The last branch is tried at every place of a run of punctuation with no word after it, and reads
# to the run's end each time: quadratic (20,000 quotes took 7 s; a megabyte, hours). A place after
# 40 of them cannot start a match that an earlier place of the run did not (the same run, no word
# in it), unless another branch's match ended just before: a quoted text or URL ending in 40 marks.
_NAME_CANDIDATE = re.compile(
    r"'[^'\n]{2,40}'|\"[^\"\n]{2,40}\"|https?://\S+|(?:(?=\w)|(?<![./@#+'’-]{40}))[\w./@#+'’-]*\w"
)
_SQUASH = re.compile(r"[\W_]+")
# Marks of an identifier rather than a word: a URL, a digit next to a letter, or after a letter and a
# hyphen (PA5, 2xAA, eu-west-1), an inner dot, slash or underscore (app.qonto.com, /data/x,
# to_parquet), a capital after the first letter.
_IDENTIFIER = re.compile(r"://|[^\W\d_]\d|\d[^\W\d_]|\w[./_]\w|^.+[A-Z]")
_HYPHEN_NUMBER = re.compile(r"[^\W\d_]-\d")  # apart: searched only in a token with a hyphen
# Single letters joined by dots are abbreviations of prose (e.g., i.e., a.m., U.S.), not host or file
# names, whose parts are longer: a paraphrase may use one where the other does not.
_ABBREVIATION = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]?")
# Calling off a plan or an event ("the freeze of 2026-12-01 is cancelled") keeps every fact of the
# plan and reverses it: like an announced change, it is a difference, never a rewording.
_CALL_OFF_WORDS = "cancel|canceled|cancelled|cancels|called off|postponed|abandoned|abgesagt|cancelado|cancelada"
_CALL_OFF_CJK = ("取消",)
_CALL_OFF = re.compile(rf"\b(?:{_CALL_OFF_WORDS})\b|{'|'.join(_CALL_OFF_CJK)}")
# One side saying no or never, and not the other, can turn a statement of the same facts into its
# opposite ("set the timeout to 30 seconds" / "never set it above 30 seconds"). Where most words
# agree that is a rewording more often than not ("don't" for "never"), but the facts rule
# (`_same_facts`) reads little else, so there a lone negation means no verdict.
_NEGATION = re.compile(
    r"\b(?:not|no|never|cannot|without|avoid|rather than|instead of|don't|doesn't|isn't|aren't|won't|can't|"
    r"shouldn't|didn't|nicht|kein\w*|nie|nunca|jamais)\b|不|没|別|别"
)
# Phrases that announce that something changed, so the memory updates an earlier state (en/de/es/fr/zh):
# a move said while it happens as well as after ("moving off", "moved off"), and a quantity "raised to" or
# "reduced to" a new value, which is "changed to" said of a number.
_CHANGE_WORDS = (
    "now|no longer|anymore|any more|from now on|switched|moved to|moved over|moved off|moving to|moving over|"
    "moving off|switching to|raised to|increased to|reduced to|decreased to|lowered to|replaced|retired|"
    "decommissioned|deprecated|superseded|took over|changed to|jetzt|nun|nicht mehr|nur noch|ab sofort|"
    "umgestellt|ahora|ya no|a partir de|desormais|maintenant|a partir du"
)
_CHANGE_CJK = ("现在", "改为", "改成", "不再", "已迁移", "迁移到")
_CHANGE = re.compile(rf"\b({_CHANGE_WORDS})\b|{'|'.join(_CHANGE_CJK)}")


@cache
def _cue_words(phrases: str) -> list[frozenset[str]]:
    """The words of each of the phrases of a cue ("now|no longer": {now}, {no, longer})."""
    return [frozenset(phrase.split()) for phrase in phrases.split("|")]


def _date(year: str, month: int, day: str) -> str:
    return f"{int(year):04d}-{month:02d}-{int(day):02d}"


def stated_values(text: str) -> dict[str, str]:
    """Numbers, dates, times, weekdays and cadences in `text`, normalised -> as written."""
    return _stated_values(fold(text))


def _stated_values(folded: str, known: frozenset[str] | None = None) -> dict[str, str]:
    """`stated_values` of text already folded (`fold`); `known`, if given, holds its words
    (`_Profile.words`), which can spare the pass that reads the words in order."""
    found: dict[str, str] = {}

    def take(pattern: re.Pattern[str], value: Callable[[re.Match[str]], str | None]) -> None:
        # Record each match and blank it out, so that the parts of a date are not read again as numbers.
        def replace(m: re.Match[str]) -> str:
            normalised = value(m)
            if normalised is None:
                return m[0]
            found[normalised] = m[0]
            return " "

        nonlocal folded
        folded = pattern.sub(replace, folded)

    # The words, before any value is blanked out: a date or number holds no value word (only digits,
    # month names and "v", "k", "st", "de" ...), and blanking one never joins or splits a word. A text
    # that names no month has no date of the three patterns that need one, each a pass over it.
    words = _WORD.findall(folded) if known is None or _may_say_value_words(known) else []
    # Every date and number holds a digit: a text without one (many a description) needs none of these passes.
    if _DIGIT.search(folded):
        take(_ISO_DATE, lambda m: _date(m[1], int(m[2]), m[3]))
        if not MONTHS.keys().isdisjoint(words):
            take(_DAY_MONTH_YEAR, lambda m: _date(m[3], MONTHS[m[2]], m[1]) if m[2] in MONTHS else None)
            take(_MONTH_DAY_YEAR, lambda m: _date(m[3], MONTHS[m[1]], m[2]) if m[1] in MONTHS else None)
            take(_MONTH_YEAR, lambda m: f"{m[2]}-{MONTHS[m[1]]:02d}" if m[1] in MONTHS else None)
        take(_NUMBER, _number)
    for word in filter(VALUE_WORDS.__contains__, words):
        found.setdefault(NUMBER_WORDS.get(word) or TIME_WORDS[word], word)
    return found


def _number(found: re.Match[str]) -> str:
    """A `_NUMBER` as a value: without its "v", thousands without their commas, a k or % kept."""
    written, suffix = found[0], found[1] or ""
    number = written[written[0] == "v" : len(written) - len(suffix)]
    return (number.replace(",", "") if _THOUSANDS.fullmatch(number) else number) + suffix


_VALUE_AND_MONTH_WORDS = VALUE_WORDS | MONTHS.keys()
_DIGITS = re.compile(r"\d+")


def _may_say_value_words(words: frozenset[str]) -> bool:
    """Whether a text of these words (_Profile.words: each run of letters and digits, and more) may
    have a value word or month as a run of letters (`_WORD`). Such a run is a word as it stands, or
    part of one between digits (5may2026): the words with a digit are cut at their digits."""
    if not _VALUE_AND_MONTH_WORDS.isdisjoint(words):
        return True
    pieces = _DIGITS.sub(" ", " ".join(itertools.filterfalse(str.isalpha, words))).split()
    return not _VALUE_AND_MONTH_WORDS.isdisjoint(pieces)


def _starts_sentence(text: str, at: int) -> bool:
    # Capitalised because it opens a sentence, a line, a label ("**Why:** The ..."), a list item, a
    # heading, a quote or a table cell.
    before = text[max(0, at - 8) : at].rstrip(" \t")
    return not before or before[-1] in ".!?:;*-(#>|\n"


def _names(text: str, judged: _NameCache | None = None) -> dict[str, str]:
    """Identity-bearing words in `text`, squashed -> as written.

    Quoted strings, URLs, identifiers with digits or inner dots, slashes or underscores (paths, hosts,
    file names, PA5, eu-west-1), acronyms and CamelCase (IEEE, TestFlight), and capitalised words that
    do not start a sentence (Lena, Polars). Numbers, weekdays and months are values, not names.
    `judged`, if given, holds the candidates judged already (a folder scan's, `_Judged`).
    """
    # Split at the candidates, in C: the odd parts are the candidates in order, and the lengths of the
    # parts before one add up to where it starts. Words recur and all but one check reads a word
    # alone, so each distinct candidate is judged once, and only the few that may be names are
    # visited where they stand; a loop over every candidate in a long body was most of the cost.
    parts = _name_split().split(text)
    candidates = parts[1::2]
    judged = _NameCache() if judged is None else judged
    name_of = {word: name for word in _maybe_names(set(candidates)) if (name := judged[word]) is not None}
    if not name_of:
        return {}
    ends = list(itertools.accumulate(map(len, parts)))  # ends[2k]: where candidate k starts
    found: dict[str, str] = {}
    for k in itertools.compress(range(len(candidates)), map(name_of.__contains__, candidates)):
        key, shown, anywhere = name_of[candidates[k]]
        # A capitalised word that is nothing else is a name only where no sentence starts.
        if key not in found and (anywhere or not _starts_sentence(text, ends[2 * k])):
            found[key] = shown
    return found


@cache
def _name_split() -> re.Pattern[str]:
    """_NAME_CANDIDATE as one group, so that `split` keeps the candidates between the other parts."""
    return re.compile(f"({_NAME_CANDIDATE.pattern})")


def _maybe_names(words: set[str]) -> set[str]:
    """`words` without most of those that `_name_of` turns down at its first test (letters only, none
    of them capitals), sorted out in C: most candidates of a text are such ordinary words."""
    letters = list(filter(str.isalpha, words))
    lower = list(itertools.compress(letters, map(operator.eq, letters, map(str.lower, letters))))
    ordinary = itertools.compress(lower, map(operator.not_, map(str.isupper, map(operator.itemgetter(0), lower))))
    return words.difference(ordinary)


class _NameCache(dict[str, "tuple[str, str, bool] | None"]):
    """Candidate -> (key, as written, whether it is a name wherever it stands), or None if it is
    never one: what `_names` makes of a candidate, but for the place it stands in the text.

    Names recur across the memories of a folder, and all but one of the checks read a candidate
    alone, so each distinct one is judged once. Only candidates that may be names come here (see
    `_maybe_names`), not the ordinary words around them: the realistic 10k folder's close pairs
    fill some 8,000 entries.
    """

    def __missing__(self, word: str) -> tuple[str, str, bool] | None:
        name = self[word] = _name_of(word)
        return name


class _Judged:
    """What the fact checks of one folder scan (`_Profile.all_of`) work out once for all its
    memories, since names recur across them: each name candidate's judgement (`names`) and each
    name's other forms (`other_forms`). The scan's profiles hold it, and it goes with them: kept
    for the whole process instead, it held 2.9 MiB past the realistic 10k folder's pair search,
    and lint's peak memory comes after that search (the other rules' findings, the report)."""

    __slots__ = ("_forms", "names")

    def __init__(self) -> None:
        self.names = _NameCache()
        self._forms: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}

    def other_forms(self, key: str, shown: str) -> tuple[str, tuple[str, ...]]:
        """`_other_forms` of a name, worked out once: a name is looked for in each memory its own
        is paired with."""
        forms = self._forms.get((key, shown))
        if forms is None:
            forms = self._forms[key, shown] = _other_forms(key, shown)
        return forms


def _name_of(word: str) -> tuple[str, str, bool] | None:
    # Most candidates are ordinary words: letters only, no capital (nor A-Z inside). None qualifies.
    if word.isalpha() and word.lower() == word and not word[0].isupper():
        return None
    if word.isascii() and word.isalpha():
        # Most of the rest are ASCII words with a capital, which the checks below read as: a name
        # wherever it stands if it has a capital after the first letter (CamelCase, an acronym),
        # else where no sentence starts if it is capitalised; keyed lower-case, unless too short
        # or a weekday or month. The same answer without their regular expressions.
        anywhere = word[1:] != word[1:].lower()
        key = word.lower()
        if len(word) < 2 or not (anywhere or word[0].isupper()) or key in TIME_WORDS or key in MONTHS:
            return None
        return key, word, anywhere
    token = word.rstrip(".,;:)")
    core = token.strip("'\"")
    if len(core) < 2:
        return None
    anywhere = bool(token[0] in "'\"" or _IDENTIFIER.search(core) or ("-" in core and _HYPHEN_NUMBER.search(core)))
    if not (anywhere or core[0].isupper()) or ("." in core and _ABBREVIATION.fullmatch(core)):
        return None
    key = _SQUASH.sub("", fold(core))
    if key and not key.isdigit() and key not in TIME_WORDS and key not in MONTHS and not _VERSION.fullmatch(key):
        return key, core, anywhere
    return None


def _mentions(memory: _Profile, key: str, shown: str) -> bool:
    """Whether `memory` mentions a name in any form: as a word or identifier, by its stem, or (a
    quoted phrase) word by word."""
    if key in memory.words:
        return True
    stem, phrase = memory.judged.other_forms(key, shown)
    return memory.has(stem) or (bool(phrase) and memory.words.issuperset(phrase))


def _unmentioned(a: _Profile, b: _Profile) -> list[str]:
    """The names of `a`, as written, that `b` never mentions (`_mentions`). Most are words of `b`:
    those are told apart in C, the first of `_mentions`' checks for all of them at once."""
    keys = list(a.names)
    unsaid = itertools.compress(keys, map(operator.not_, map(b.words.__contains__, keys)))
    return [a.names[key] for key in unsaid if not _mentions(b, key, a.names[key])]


def _other_forms(key: str, shown: str) -> tuple[str, tuple[str, ...]]:
    """A name's stem, and its words if it is a phrase (more than one)."""
    words = tuple(TOKEN.findall(fold(shown)))
    return stem(key), words if len(words) > 1 else ()


def _kind(values: Iterable[str]) -> str:
    values = list(values)
    if all(_DATE_VALUE.fullmatch(v) for v in values):
        return "dates"
    if all(v[0].isdigit() for v in values):
        return "numbers"
    return "values"


def _show(values: Iterable[str]) -> str:
    shown = sorted(values)
    return ", ".join(shown[:3]) + (", ..." if len(shown) > 3 else "")


def _unmatched_values(mine: dict[str, str], theirs: dict[str, str]) -> list[str]:
    # A month ("2026-03") and a day in it ("2026-03-31") do not disagree; one is just less precise:
    # a value matches one that it starts up to a hyphen, or that starts it. Only dates hold a hyphen,
    # so the prefixes of a few values are looked up, not every value of one side against the other's.
    matched = set(theirs).union(*(_hyphen_prefixes(value) for value in theirs if "-" in value))
    return [
        v for v in mine if v not in matched and not ("-" in v and not theirs.keys().isdisjoint(_hyphen_prefixes(v)))
    ]


def _hyphen_prefixes(value: str) -> list[str]:
    """What `value` starts with up to each of its hyphens ("2026-03-31": "2026", "2026-03")."""
    return [value[:i] for i, char in enumerate(value) if char == "-"]


def _differences(a: _Profile, b: _Profile) -> list[str]:
    # The names first: looking them up reads the words, which spare the values a pass.
    names_a = _unmentioned(a, b)
    names_b = _unmentioned(b, a) if names_a else []  # no reason either way
    reasons: list[str] = []
    for values_a, values_b in ((a.values, b.values), (a.head_values, b.head_values)):
        only_a, only_b = _unmatched_values(values_a, values_b), _unmatched_values(values_b, values_a)
        if only_a and only_b:
            reasons.append(f"{_kind(only_a + only_b)} differ: {_show(only_a)} vs {_show(only_b)}")
            break
    if names_a and names_b:
        reasons.append(f"names differ: {_show(names_a)} vs {_show(names_b)}")
    # Both saying "now ..." is two updates that may well agree; one saying it is an update of the other.
    if bool(a.change) != bool(b.change):
        changed = a if a.change else b
        reasons.append(f"{changed.memory.name or changed.memory.key} says it changed ({changed.change!r})")
    elif bool(a.called_off) != bool(b.called_off):
        off = a if a.called_off else b
        reasons.append(f"{off.memory.name or off.memory.key} says it was called off ({off.called_off!r})")
    return reasons


def fact_differences(a: MemoryText, b: MemoryText) -> list[str]:
    """Why `a` and `b` cannot be the same fact, as short reasons; empty if nothing found differs.

    Checks numbers, dates, times and versions (each side has a value the other lacks), names and
    identifiers (each side names something the other never mentions), and whether exactly one of them
    announces a change ("now", "no longer", "jetzt", ...). Consolidation must not merge memories for
    which this is non-empty: a merge would silently pick one of two values.
    """
    return _differences(_Profile.of(a), _Profile.of(b))


def _own_subject(a: _Profile, b: _Profile) -> set[str]:
    """The ordinary words of `a`'s head that `b` never uses: not a stated value (number, date, weekday,
    cadence), not a month, not part of a name or identifier. Such a word is what `a` is about."""
    return set(a.subject).difference(b.keys)


def _verdict(a: _Profile, b: _Profile, whole: float | None = None) -> PairVerdict | None:
    score = _score(a, b, whole)
    if score < TOPIC_SCORE:
        return None
    differences = _differences(a, b)
    # Two memories that share a template but not a subject ("payments owner is Alice", "search owner
    # is Bob"; the gateway board's baud rate and the sensor board's) differ in values because they
    # are about different things. Each head then names something the other memory never mentions. An
    # update announcing a change ("moved to the handbook") or calling something off is exempt: it may
    # well rename its subject.
    updated = a.change or b.change or a.called_off or b.called_off
    if differences and not updated and _own_subject(a, b) and _own_subject(b, a):
        return None
    if differences:
        return PairVerdict(a.memory.key, b.memory.key, "contradiction", score, "same topic; " + "; ".join(differences))
    if score < DUPLICATE_SCORE:
        return None
    shared = [shown for key, shown in a.names.items() if key in b.names] + [
        shown for value, shown in a.values.items() if value in b.values
    ]
    reason = "same content, reworded" + (f"; both say {_show(shared)}" if shared else "")
    return PairVerdict(a.memory.key, b.memory.key, "duplicate", score, reason)


def compare(a: MemoryText, b: MemoryText) -> PairVerdict | None:
    """Compare two memories: a duplicate, a possible contradiction, or None (unrelated or compatible).

    Beyond what the folder scan finds (`find_pairs`), a pair below DUPLICATE_SCORE is a duplicate
    when its specific facts agree (`_same_facts`): the write path compares a new memory with each
    of its neighbours, where a duplicate reworded from end to end is cheapest to stop.
    """
    return Comparer().compare(a, b)


class Comparer:
    """`compare` and `similarity` for many pairs among the same memories, each memory's terms worked
    out once rather than once a pair: the write path's screen compares every new memory of a batch
    (an import brings hundreds) with every memory in the folder."""

    def __init__(self) -> None:
        self._profiles: dict[MemoryText, _Profile] = {}

    def _profile(self, memory: MemoryText) -> _Profile:
        found = self._profiles.get(memory)
        if found is None:
            found = self._profiles[memory] = _Profile.of(memory)
        return found

    def compare(self, a: MemoryText, b: MemoryText) -> PairVerdict | None:
        """As the function `compare`."""
        pa, pb = self._profile(a), self._profile(b)
        return _verdict(pa, pb) or _same_facts(pa, pb)

    def similarity(self, a: MemoryText, b: MemoryText) -> float:
        """As the function `similarity`."""
        return _score(self._profile(a), self._profile(b))


# A reworded duplicate keeps its specific facts (see "Facts" at the top) while its ordinary words
# change, sometimes nearly all of them ("Net 30 terms" / "thirty days from issuance"). Such facts
# are specific when two memories rarely share them by chance: a date, a time, a percentage, a
# decimal or version, a number from 10 up that is not a year; an identifier with a digit, a URL, a
# path, a host or file name; a quoted phrase of several words (a board's or a document's title).
# A small count ("at most 4"), a year, a weekday or a cadence recurs in unrelated memories, and so
# does a capitalised name (a product, a team): those are not.
_FACTS_SCORE = 0.1  # some words must agree too (`_word_score`): one shared number alone is chance
_YEAR = re.compile(r"(?:19|20)\d\d")
_SPECIFIC_NAME = re.compile(r"://|\d|\w[./_]\w")
_DIGIT = re.compile(r"\d")


def _specific_value(value: str) -> bool:
    if _DATE_VALUE.fullmatch(value):
        return True
    if not value[0].isdigit() or _YEAR.fullmatch(value):
        return False
    if value.endswith("%") or any(mark in value for mark in ".:"):
        return True
    # From 10 up: two digits or more past the leading zeros. Not int(): Python converts no text of
    # more than 4,300 digits to an int, and one such number in a memory made the write path fail.
    return len("".join(filter(str.isdigit, value)).lstrip("0")) >= 2


def _specific_facts(a: _Profile, b: _Profile) -> list[str] | None:
    """The specific facts of `a` (as written), or None if `b` lacks one of them."""
    shared = []
    for value, shown in a.values.items():
        if _specific_value(value):
            if _unmatched_values({value: shown}, b.values):
                return None
            shared.append(shown)
    for key, shown in a.names.items():
        # Only a quoted name holds a space (_NAME_CANDIDATE): a title said word for word.
        if _SPECIFIC_NAME.search(shown) or " " in shown:
            if not _mentions(b, key, shown):
                return None
            shared.append(shown)
    return shared


def _word_score(a: _Profile, b: _Profile) -> float:
    """`_score` of two memories of one type over their words alone, without the terms that hold a
    digit: in a short memory a shared number is a good part of its terms, and says nothing of topic."""
    (head_a, all_a), (head_b, all_b) = a.wordy, b.wordy
    return (_cosine(head_a, head_b) + _cosine(all_a, all_b)) / 2


def _same_facts(a: _Profile, b: _Profile) -> PairVerdict | None:
    """A duplicate by its facts: two memories of the same type, close enough in words to share a
    topic at all (_FACTS_SCORE), that state at least one specific fact, every specific fact either
    states the other states too, and no fact differs (_differences). Checked from the cheapest
    condition to the dearest, since the write path asks it of every neighbour."""
    if a.memory.type != b.memory.type:
        return None
    score = _score(a, b)
    if score >= DUPLICATE_SCORE or _word_score(a, b) < _FACTS_SCORE:
        return None
    mine = _specific_facts(a, b)
    theirs = _specific_facts(b, a) if mine is not None else None
    if not mine or theirs is None or a.negated != b.negated or _differences(a, b):
        return None
    return PairVerdict(a.memory.key, b.memory.key, "duplicate", score, f"same facts, reworded: {_show(mine)}")


# --- a whole folder -------------------------------------------------------------------------------

# Candidate pairs come from an inverted index over each memory's signature: the rarest terms of its
# head (name + description), the one-line claim that a reworded duplicate or an update of it repeats.
# The index is keyed by two signature terms at a time, so only memories that share two rare terms
# meet: one shared rare word is often chance, two rarely are. The work grows with the number of
# memories (at most 28 keys each), not with the number of pairs.
#
# A candidate pair's score needs the cosine of the two whole memories, so their bodies' terms, most of
# a scan's work. The shorter body is read whole and the longer a stretch at a time (`_whole`), until
# either it is done or what has been read proves the pair cannot reach TOPIC_SCORE: on the realistic
# 10k folder that leaves a fifth of the text unread, and the verdicts are those of reading it all.
_SIGNATURE_SIZE = 8
_COMMON_MIN = 100  # a term in more heads than this (or 1% of the folder, if more) is not indexed
_COMMON_SHARE = 0.01


def _signatures(profiles: Sequence[_Profile]) -> list[list[str | int]]:
    frequency = Counter(itertools.chain.from_iterable(profile.head for profile in profiles))
    common = max(_COMMON_MIN, int(len(profiles) * _COMMON_SHARE))
    # A term of one memory only cannot pair it with another; (frequency, term) is one global order, so
    # two memories that share terms build the same keys from them. A CJK term's key is a number, so
    # the order is of the terms' text (text_of_keys).
    keys = [key for key, n in frequency.items() if 1 < n <= common]
    ranked = sorted(zip(map(frequency.__getitem__, keys), text_of_keys(keys), keys, strict=True))
    # Each key's place in that order, a number: sorting by it compares no tuples, and no text.
    rank = {key: place for place, (_, _, key) in enumerate(ranked)}
    indexed = rank.keys()  # a set view: intersecting with it costs the size of the smaller side
    return [sorted(indexed & profile.head, key=rank.__getitem__)[:_SIGNATURE_SIZE] for profile in profiles]


def _candidates(profiles: Sequence[_Profile]) -> list[tuple[int, int]]:
    """Index pairs (i < j) worth scoring, in order."""
    signatures = _signatures(profiles)
    postings: dict[str | int, list[int]] = defaultdict(list)
    for i, signature in enumerate(signatures):
        for term in signature:
            postings[term].append(i)
    pairs: set[tuple[int, int]] = set()
    # Two memories meet when their signatures share two terms: count, for each memory, the later
    # memories behind each of its terms. Counting two-term keys for the whole folder at once took
    # tens of MiB (a key per two terms of every signature) for the same pairs.
    for i, signature in enumerate(signatures):
        if len(signature) < 2:
            continue
        later = [postings[term][bisect.bisect_right(postings[term], i) :] for term in signature]
        shared = Counter(itertools.chain.from_iterable(later))
        pairs.update((i, j) for j, n in shared.items() if n > 1)
    # A memory with fewer than two indexed terms meets every memory that indexes the one it has, and
    # exact copies of it meet through their identical term sets.
    copies: dict[frozenset[str], list[int]] = defaultdict(list)
    for i, signature in enumerate(signatures):
        if len(signature) < 2:
            copies[profiles[i].terms].append(i)
            pairs.update((min(i, j), max(i, j)) for term in signature for j in postings[term] if j != i)
    for members in copies.values():
        pairs.update(itertools.combinations(members, 2))
    return sorted(pairs)


def _close_together(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`pairs` reordered so that each memory's pairs come close together: breadth first through the
    graph the pairs make, low degrees first (Cuthill-McKee).
    A memory's terms are held from its first pair to its last: in index order the realistic folder
    of 10,000 memories held 2,400 memories' terms at once, in this order 700."""
    neighbours: dict[int, list[int]] = defaultdict(list)
    for i, j in pairs:
        neighbours[i].append(j)
        neighbours[j].append(i)

    def degree(k: int) -> tuple[int, int]:
        return len(neighbours[k]), k

    rank: dict[int, int] = {}
    for start in sorted(neighbours, key=degree):
        if start in rank:
            continue
        rank[start] = len(rank)
        queue = deque([start])
        while queue:
            for k in sorted(neighbours[queue.popleft()], key=degree):
                if k not in rank:
                    rank[k] = len(rank)
                    queue.append(k)
    return sorted(pairs, key=lambda pair: sorted((rank[pair[0]], rank[pair[1]])))


def _pairs(profiles: Sequence[_Profile]) -> list[tuple[int, int, PairVerdict]]:
    candidates = _close_together(_candidates(profiles))
    # A body's terms take tens of kilobytes in a CJK memory: keep each only while a pair still needs it.
    last = {k: n for n, pair in enumerate(candidates) for k in pair}
    for k in set(range(len(profiles))) - last.keys():
        profiles[k].forget()  # a lone copy's terms, read to find its copies
    out = []
    for n, (i, j) in enumerate(candidates):
        whole = _whole(profiles[i], profiles[j])
        if whole is not None:
            verdict = _verdict(profiles[i], profiles[j], whole)
            if verdict is not None:
                out.append((i, j, verdict))
        for k in (i, j):
            if last[k] == n:
                profiles[k].forget()
    out.sort(key=lambda found: found[:2])  # in index order, whatever order they were worked out in
    return out


_FIRST_READ = 1000  # characters of the longer body read at first, at least; then twice as many each time


def _whole(a: _Profile, b: _Profile) -> float | None:
    """The cosine of two memories' whole terms, or None when it cannot bring their score up to
    TOPIC_SCORE. The shorter body is read whole, the longer one only as far as it takes to tell."""
    short, long = sorted((a.reading, b.reading), key=operator.attrgetter("length"))
    head = _head_cosine(a, b)  # the same at each step below
    keys = short.read_all()
    size = len(keys)
    step = max(_FIRST_READ, short.length)
    while True:
        if long.read or long.done:
            # Whatever the rest of the longer body holds, each term it adds that the shorter has
            # raises both the overlap and the longer's size by one: the cosine is at most the one
            # reached when all the shorter's terms not seen yet turn up. The score grows with the
            # cosine (the margin covers rounding), so a pair that cannot reach TOPIC_SCORE even then
            # is done with. The sizes alone bound the overlap first, the cheaper test.
            seen = len(long.keys)
            if _scored(a, b, _cosine_of(size, size, max(seen, size)) * (1 + 1e-9), head) < TOPIC_SCORE:
                return None
            if long.done:
                return _cosine_of(len(keys.intersection(long.keys)), size, seen)
            best = _cosine_of(size, size, seen + size - len(keys.intersection(long.keys))) * (1 + 1e-9)
            if _scored(a, b, best, head) < TOPIC_SCORE:
                return None
        long.read_on(step)
        step *= 2


def find_pairs(items: Sequence[MemoryText]) -> list[PairVerdict]:
    """Every duplicate and possible contradiction in a folder, each pair once, in input order.

    Only pairs that share two rare words of their name and description are compared, so a folder of
    10,000 memories takes a fraction of a second rather than 50 million comparisons.
    """
    with paused_gc():
        return [verdict for _, _, verdict in _pairs(_Profile.all_of(items))]


def duplicate_groups(items: Sequence[MemoryText]) -> list[list[str]]:
    """Keys of memories that say the same thing, grouped for consolidation; singletons are left out.

    Groups grow through duplicate pairs, but two groups are joined only if no member of one has a
    differing fact (number, date, name, change) with a member of the other, so a chain of near
    duplicates can never put two different values in one group.
    """
    with paused_gc():
        profiles = _Profile.all_of(items)
        pairs = _pairs(profiles)
    group_of = list(range(len(items)))  # each memory's group, named by one of its members
    members: dict[int, list[int]] = {i: [i] for i in range(len(items))}
    for i, j, verdict in pairs:
        ga, gb = group_of[i], group_of[j]
        if verdict.label != "duplicate" or ga == gb:
            continue
        if any(_differences(profiles[x], profiles[y]) for x in members[ga] for y in members[gb]):
            continue
        for x in members[gb]:
            group_of[x] = ga
        members[ga].extend(members.pop(gb))
    return [[items[x].key for x in group] for group in sorted(sorted(g) for g in members.values() if len(g) > 1)]
