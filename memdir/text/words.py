"""How text becomes terms: case and accent folding, stopwords, a light stemmer, and CJK runs read as
characters and character pairs.

Shared on purpose by duplicate detection (text/similarity.py) and recall (read/): a memory and a
query must be read the same way for either to find what the other says. A change here moves both
figures, so both evaluations (`make eval`, `make eval-pairs`) are run for it.
"""

from __future__ import annotations

import array
import itertools
import operator
import re
import sys
import unicodedata
from collections.abc import Collection, Iterable, Iterator, Sequence
from functools import cache
from typing import cast

from memdir.text.lazyre import LazyPattern

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"


# Compiled on first use: a class of "word characters but not ..." is built over all of Unicode, a few
# milliseconds, which every prompt hook would pay at import though most never need it.
TOKEN = LazyPattern(rf"[{CJK}]+|[^\W_{CJK}]+")


# Function words of English, German, Spanish and French (accent-folded, as terms are), plus the labels
# of memdir's own body template ("**Why:**", "**How to apply:**"), which every feedback memory repeats.
# Splitting at the apostrophe leaves "didn" of "didn't" and "isn" of "isn't": those are function words too.
_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been before being below between
    both but by can could did do does doing don done down during each either etc few for from further had has have
    having he her here hers him his how i if in into is it its itself just me more most my no nor not now of off
    on once only or other our ours out over own same she should so some such than that the their theirs them then
    there these they this those through to too under until up upon us very via was we were what when where which
    while who whom whose why will with would you your yours apply s t d ll m re ve
    ain aren couldn didn doesn hadn hasn haven isn mightn mustn needn shan shouldn wasn weren won wouldn
    aber als am an auch auf aus bei bin bis da dann das dass dem den der des die dies diese diesem diesen dieser
    doch dort du durch ein eine einem einen einer eines er es fur hat hatte ich ihr im in ist ja kann mit man nach
    noch nur ob oder ohne sein sich sie sind so uber um und uns von vor war waren was weil wenn wer wie wir wird
    werden wo zu zum zur
    al algo como con cual cuando de del donde el ella ellas ellos en entre era es esa ese eso esta estan este esto
    fue ha hay la las le les lo los mas me mi muy nos o para pero por que se ser si sin sobre son su sus te tu un
    una uno unos y ya
    au aux avec ce ces cet cette dans des du elle elles est et il ils je la le les leur leurs lui ma mais mes meme
    nous on ou par pas pour qu qui sa se ses son sont sur ta te tes ton une vos votre vous
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Chinese characters that carry grammar rather than topic; as single-character terms they only add noise.
_CJK_STOP = frozenset("的了是在和与及或也都而就把被让给对从到为以之其这那个中请时")


def fold(text: str) -> str:
    """Case-fold and strip accents ("Español" -> "espanol"), so spelling variants meet."""
    text = text.casefold()
    if text.isascii():
        return text
    # Almost every real memory holds some non-ASCII character (a dash, a CJK run), few an accent:
    # without a character that decomposes to one, stripping is recomposing, a no-op on NFC text.
    if _may_hold_accents().search(text) is None and unicodedata.is_normalized("NFC", text):
        return text
    # Decompose, drop the combining accents, recompose: Hangul and other scripts come back unchanged.
    return unicodedata.normalize("NFC", _ACCENTS.sub("", unicodedata.normalize("NFD", text)))


_ACCENTS = re.compile("[\u0300-\u036f]")
# Every character whose canonical decomposition holds one of _ACCENTS lies in these blocks (Latin,
# the accents themselves, Greek and Cyrillic, Latin and Greek extended, arrows and mathematical
# operators such as U+2260): test_similarity checks it against the whole of Unicode.
_ACCENT_BLOCKS = ((0x00C0, 0x0500), (0x1E00, 0x2300), (0x2ADC, 0x2ADD))


@cache
def _may_hold_accents() -> re.Pattern[str]:
    """The characters that decompose to an accent (e acute, U+2260), not their blocks' others (Greek
    letters, the multiplication sign, arrows), which real memories use freely; worked out from the
    Unicode database on first use."""
    chars = [
        chr(code)
        for first, end in _ACCENT_BLOCKS
        for code in range(first, end)
        if _ACCENTS.search(unicodedata.normalize("NFD", chr(code)))
    ]
    return re.compile("[" + re.escape("".join(chars)) + "]")


# Longest first; each needs a stem of at least three letters left. Covers the common English
# inflections and the German and Spanish plural/infinitive endings well enough for matching; it is not
# a linguistic stemmer, only a way to let "deploys", "deployed" and "deploying" meet.
_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ed", "ies", "es", "ers", "er", "ly", "s", "en", "e", "n")


def stem(word: str) -> str:
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    # Cutting to six letters merges derived forms ("configure", "configuration") that the suffix list misses.
    return word[:6]


class _TermCache(dict[str, str]):
    """Token -> term ("" for a stopword), filled on first sight.

    Folders reuse a small vocabulary, so one C-level dict lookup per token is what keeps a folder of
    10,000 memories fast. Cleared when it grows past a size that only a long-lived process reaches.
    """

    def __missing__(self, token: str) -> str:
        if len(self) > 200_000:
            self.clear()
        term = self[token] = "" if token in _STOPWORDS else stem(token)
        return term


TERM_OF = _TermCache()
# Everything in ASCII that is not a letter or digit becomes a space, so that split() finds the same
# tokens as TOKEN, several times faster (ASCII-only text is the common case).
_ASCII_SEPARATORS = bytes.maketrans(
    bytes(c for c in range(128) if not chr(c).isalnum()), b" " * sum(not chr(c).isalnum() for c in range(128))
)


def is_cjk(term: str) -> bool:
    """Whether a term is Chinese, Japanese or Korean text (a character or a bigram, not a word)."""
    return term[0] >= "\u3040"


def term_sequence(text: str) -> Iterator[tuple[str, str]]:
    """(term, the text it came from) for each term of `text`, in order: case- and accent-folded,
    stopwords dropped, lightly stemmed; CJK runs as characters and bigrams, having no spaces."""
    folded = fold(text)
    if folded.isascii():  # the common case, several times faster than the regular expression
        for token in folded.encode().translate(_ASCII_SEPARATORS).decode().split():
            term = TERM_OF[token]
            if term:
                yield term, token
        return
    for token in TOKEN.findall(folded):
        if is_cjk(token):
            for char in token:
                if char not in _CJK_STOP:
                    yield char, char
            for i in range(len(token) - 1):
                yield token[i : i + 2], token[i : i + 2]
        else:
            term = TERM_OF[token]
            if term:
                yield term, token


def plain_words(text: str) -> list[str]:
    """The words of `text` in order, case- and accent-folded, none dropped or stemmed: punctuation and
    markdown (`**`, backticks, `#`) fall away, so text repeated word for word meets itself."""
    folded = fold(text)
    if folded.isascii():
        return folded.encode().translate(_ASCII_SEPARATORS).decode().split()
    return TOKEN.findall(folded)


def term_list(text: str) -> list[str]:
    """The terms of `text` in order (term_sequence without the source text, faster on ASCII)."""
    folded = fold(text)
    if folded.isascii():
        terms = map(TERM_OF.__getitem__, folded.encode().translate(_ASCII_SEPARATORS).decode().split())
        return [term for term in terms if term]
    return [term for term, _ in term_sequence(text)]


_CJK_FROM = "\u3040"  # a token from here up is a CJK run (or a word that goes its way): see is_cjk


def words_and_runs(text: str) -> tuple[Iterable[str], Iterable[str], Collection[str]]:
    """The words (folded, each a key of TERM_OF) and CJK runs of `text`, as `TOKEN` finds them:
    the all-ASCII words, the other words, the runs; in text order, repeats and all.

    Cut at ASCII separators first, in bytes (where translate and split run at C speed): a token that is
    all ASCII is a word as it stands, and only the rest need folding and the Unicode-wide patterns. The
    cuts change nothing: a folded word or CJK run never spans an ASCII separator, and neither folding
    nor NFC/NFD joins a character to one. Repeats are left for the caller's set to drop: a set of the
    tokens first would cost more than it saves (few repeat) and hand them back in hash order, out of
    the order they lie in memory, which makes each later step slower.
    """
    raw = text.encode("utf-8", "surrogatepass").lower().translate(_ASCII_SEPARATORS)
    tokens = raw.decode("utf-8", "surrogatepass").split()
    if text.isascii():
        return tokens, (), ()
    # One pass finds the words and the runs, told apart by their first character: a word starting from
    # U+3040 up (full-width letters) goes the CJK way, as in term_sequence.
    found = TOKEN.findall(fold(" ".join(itertools.filterfalse(str.isascii, tokens))))
    runs = list(filter(_CJK_FROM.__le__, found))
    return filter(str.isascii, tokens), filter(_CJK_FROM.__gt__, found) if runs else found, runs


def terms(text: str) -> frozenset[str]:
    """The set of `term_sequence(text)`'s terms, built a set at a time rather than term by term."""
    return terms_of_keys(term_keys(text))


# A CJK term is worked out as a number, several times cheaper to make from the text than a string: a
# character is its code point, a bigram its two code points in one integer (the second one's at bit
# 32, so never a character's). The folder scan, which compares term sets by sizes and overlaps
# only, keeps the numbers (`term_keys`); a term set turns the distinct ones back into text.
_CJK_STOP_KEYS = frozenset(map(ord, _CJK_STOP)) | {0}


_BELOW_CJK = LazyPattern("[\x01-\u303f]")


def _add_cjk_numbers(keys: set[str | int], runs: Collection[str]) -> bool:
    """Add the `term_key`s of the characters and bigrams of CJK runs (and of words that go their way, as
    in term_sequence) to `keys`; False, adding nothing, if a run holds a character below U+3040 (a
    word of full-width letters), whose terms may be plain letters, kept as text."""
    if not runs:
        return True
    joined = "\x00".join(runs) + "\x00"
    if _BELOW_CJK.search(joined):
        return False
    # Code points, four bytes each, read as one number a character or two a bigram: the bigrams at
    # even and at odd offsets are every bigram. NULs between runs (and at the end, to an even length)
    # make the bigrams that straddle two runs, taken out below. Each number goes into `keys` once,
    # as it is read: a CJK text is mostly bigrams, and each set it passes through costs their number.
    joined += "\x00" * (len(joined) % 2)
    points = memoryview(joined.encode("utf-32-le"))
    keys.update(points.cast("I"))
    keys.update(points.cast("Q"))
    keys.update(points[4:-4].cast("Q"))
    # A bigram's first character is never a NUL, so its number has a non-zero low half and is at
    # least 2**32: (c, NUL) at a run's end is c's own number (kept, unless c is a stopword and taken
    # out with it), and (NUL, c) at a run's start is c's times 2**32, read from NUL-c pairs alike.
    starts = "\x00" + "\x00".join(map(operator.itemgetter(0), runs))
    keys.difference_update(memoryview(starts.encode("utf-32-le")).cast("Q"))
    keys.difference_update(_CJK_STOP_KEYS)
    return True


def _cjk_terms(runs: Collection[str]) -> set[str]:
    """The characters and bigrams of CJK runs (and of words that go their way, as in term_sequence),
    as text: for the runs `_add_cjk_numbers` leaves (a word of full-width letters)."""
    joined = "\x00".join(runs)  # no token holds a NUL: bigrams across two runs are dropped below
    terms = set(joined)
    terms.discard("\x00")
    terms -= _CJK_STOP
    pairs = set(map(operator.add, joined, joined[1:]))
    pairs.difference_update([run[-1] + "\x00" for run in runs], ["\x00" + run[0] for run in runs])
    return set(map(sys.intern, terms | pairs))


def _text_of_numbers(numbers: Iterable[int]) -> Iterator[str]:
    """The CJK terms whose `term_key`s these are, each once as a string however many memories hold it
    (ASCII terms already are, through TERM_OF): a folder's term sets then cost their tables."""
    # Each as two code points, the second a NUL for a character: one decoding for all of them.
    text = array.array("Q", numbers).tobytes().decode("utf-32-le")
    return map(sys.intern, map(str.rstrip, map(operator.add, text[::2], text[1::2]), itertools.repeat("\x00")))


def term_keys(text: str, keys: set[str | int] | None = None) -> set[str | int]:
    """`terms(text)` with each CJK term as its `term_key`: a set of the same size, meeting another such
    set in as many elements. Added to `keys` if given (a body read a stretch at a time)."""
    ascii_words, words, runs = words_and_runs(text)
    if keys is None:
        keys = set()
    keys.update(map(TERM_OF.__getitem__, ascii_words))
    keys.update(map(TERM_OF.__getitem__, words))
    keys.discard("")
    if runs and not _add_cjk_numbers(keys, runs):
        keys.update(map(term_key, _cjk_terms(runs)))
    return keys


def terms_of_keys(keys: Collection[str | int]) -> frozenset[str]:
    """The terms whose `term_key`s these are."""
    if not keys:
        return frozenset()
    is_text = list(map(isinstance, keys, itertools.repeat(str)))  # C-level, in one order of `keys`
    words: Iterable[str] = itertools.compress(keys, is_text)  # type: ignore[arg-type]
    numbers: Iterable[int] = itertools.compress(keys, map(operator.not_, is_text))  # type: ignore[arg-type]
    return frozenset(itertools.chain(words, _text_of_numbers(numbers)))


def text_of_keys(keys: Sequence[str | int]) -> Iterator[str]:
    """The term whose `term_key` each of these is, in order."""
    numbers = set(itertools.compress(keys, map(operator.not_, map(isinstance, keys, itertools.repeat(str)))))
    text_of: dict[str | int, str] = dict(zip(numbers, _text_of_numbers(cast(set[int], numbers)), strict=True))
    return cast(Iterator[str], map(text_of.get, keys, keys))  # a word is its own key, and not in text_of


def term_key(term: str) -> str | int:
    """A term as the folder scan holds it (see term_keys). Only a CJK term starts from U+3040 up,
    and it is one or two characters long."""
    if not is_cjk(term):
        return term
    return ord(term) if len(term) == 1 else ord(term[0]) | ord(term[1]) << 32
