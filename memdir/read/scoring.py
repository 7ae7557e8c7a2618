"""Scoring and the gate: BM25F relevance, recency and importance, lent names and successors, and
the two gates that keep recall silent when the folder does not know the task.
"""

# How the score is built, and why (docs/recall.md has the long form and the evaluation):
#
# - score = w_rel x relevance + w_rec x recency + w_imp x importance (0.6 / 0.25 / 0.15 by default).
#   recency = 0.5 ** (the memory's age in days / half-life (30 days)): its age is its `updated` (else `created`)
#   date, else its file's mtime (memdir.core.age), and a memory with no age at all gets the median recency of
#   the candidates that have one, so Claude Code's undated memories are not ranked last. importance
#   defaults to 0.5.
# - Relevance is BM25F over two fields: the head (name + description, the memory's one-line claim, weighted
#   twice) and the body. Terms are the ones duplicate detection uses (memdir.text.similarity): case- and
#   accent-folded, stopwords of en/de/es/fr dropped, lightly stemmed, CJK runs as characters and bigrams.
#   Pairs of adjacent terms are terms too, so "merge request" or "New York" count for more than the two
#   words apart. Small numbers (one or two digits) in a query are ignored: they match by accident.
# - A query word weighs what it tells apart. Folder statistics (IDF) say how rare a word is here; in a
#   small folder almost everything is rare, so a general-language prior damps the words that are common
#   in any English text ("explain", "example", "new", "week"). Without it, "explain recursion with an
#   example" recalls whatever memory says "explain" and "example". A folder of fewer than 100
#   memories gets the IDF of one of 100: in a folder of three, a word two of them use is not common.
# - A small glossary of general work vocabulary lets a query word match its synonyms and translations
#   at half weight: "release" finds "rollout", "database" finds "Datenbank". Folders are often bilingual;
#   memories written in German answer English questions. `recall.synonyms` from the config adds a
#   folder's own vocabulary at full weight (its owner says the words mean the same).
# - A superseded memory is never recalled, but what matched it passes (at 0.8) to the memory that
#   replaced it: a question in the old memory's words is about the topic its successor now covers.
# - The best matches lend their names. The rare words in the heads of the three best matches (a word in
#   at most 5% of the folder, and at most 50 memories, and not common English) count as query words
#   at half the weight of the match that lent them, in other memories' heads: "the landing page
#   redesign" is an Orion task when the redesign's memory says so, and Orion's style guide bears on it.
#   This runs only once the query has passed the gate, and the gate weighs the query's own words alone.
#   A lent name raises a memory that matches the query; it never recalls one that does not.
# - Raw BM25 grows with log(folder size); it is divided by the largest IDF the folder can give, so that
#   one rare word matched in a head scores about 1 whatever the size, then mapped to 0..1 as
#   relevance = 1 - exp(-score).
# - Two gates. The query gate asks whether the folder knows anything about the query, against a null
#   model of the folder itself (Gate, _chance): scatter the query's words over the folder at their own
#   rates, independently, and count the memories that would match as well as the best match does. When
#   at most `gate-chance` (0.01) would, the best match holds the query's words together beyond chance
#   (and one of them is not a common word: "explain" and "example", "用户" and "需要" meet in any text); when its
#   relevance alone reaches `gate` (0.8), one match is strong enough by itself. Co-occurrence cannot
#   speak for one word, so two more passes need none, when the query names nothing the folder has never
#   seen: a query whose words are all in the best match's name or description restates it (a look-up),
#   and a query that names (capitalised) what at least half of the folder holds is about the folder's
#   subject (a person in every turn of their conversations). Adjacent-word pairs,
#   single CJK characters, CJK pairs holding a particle ("中的") and words in more than a fifth of the
#   folder do not count: the first two repeat their words' evidence, the third is no word, the last is
#   the folder's own subject (a project's name in every memory). Otherwise nothing is recalled:
#   recency and importance must not inject a memory into a query about something the folder does not
#   know. And each recalled memory needs a relevance of its
#   own of at least `min-relevance` (0.3: one rare word in a body), however new or important it is,
#   and some of it from the query's own words.

from __future__ import annotations

import datetime as dt
import heapq
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.core.age import NO_AGE, Age
from memdir.core.config import RecallSettings
from memdir.read.termindex import MIN_FOLDER, TermIndex, idf
from memdir.read.terms import Slot, general_prior, named_words, query_slots
from memdir.text.lazyre import LazyPattern

# The terms duplicate detection uses, made the same way (and as fast).
from memdir.text.words import is_cjk, term_sequence

if TYPE_CHECKING:
    pass


_NEIGHBOUR_WEIGHT = 0.5  # a name the best matches carry in their heads, as evidence for another memory
_NEIGHBOUR_SOURCES = 3  # the best matches whose heads lend their names
_NEIGHBOUR_SHARE, _NEIGHBOUR_MOST = 0.05, 50  # a word in more memories than these is a topic, not a name
_SUCCESSOR_SHARE = 0.8  # what a superseded memory's match passes to the memory that replaced it


# --- scoring -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recalled:
    """One memory as recall scored it."""

    path: str  # relative to the folder
    name: str
    type: str
    description: str
    score: float  # w_rel x relevance + w_rec x recency + w_imp x importance
    relevance: float  # 0..1
    recency: float  # 0..1: 1 today, 0.5 one half-life ago; the candidates' median when the memory has no age
    importance: float  # 0..1, 0.5 when not set
    matched: tuple[str, ...] = ()  # the query's words that matched ("ship=deploy": through a synonym)
    via: str | None = None  # the superseded memory whose match this memory inherits
    direct: float = 0.0  # the relevance from the query's own words and synonyms: what the gate weighs
    age: Age = NO_AGE  # what recency was counted from

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "path": self.path,
            "type": self.type,
            "score": round(self.score, 4),
            "relevance": round(self.relevance, 4),
            "recency": round(self.recency, 4),
            "importance": round(self.importance, 4),
        }
        if explain:
            out |= {"description": self.description, "matched": list(self.matched), "via": self.via,
                    "direct": round(self.direct, 4), "age": self.age.day.isoformat() if self.age.day else None,
                    "age_source": self.age.source.value}  # fmt: skip
        return out


@dataclass(frozen=True)
class RecallResult:
    """What one recall chose, everything it weighed, and where it was logged."""

    query: str
    results: list[Recalled]  # chosen, best first
    candidates: list[Recalled]  # every live memory with some relevance, best first (chosen ones too)
    excluded: list[tuple[str, str]]  # (path, why) of memories that matched but may not be recalled
    top_relevance: float  # the best candidate's relevance
    passed_gate: bool  # whether top_relevance reached the gate
    settings: RecallSettings
    method: str = "lexical"  # or "llm"
    k: int = 5
    min_score: float = 0.0
    llm: dict[str, Any] | None = None  # for method "llm": model, names picked, names not found
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, why) of files not searched
    already: frozenset[str] = frozenset()  # paths in the reader's context already (pinned): never chosen
    log_path: Path | None = None
    log_error: str | None = None  # why the log could not be written (recall itself went on)
    gate: Gate | None = None  # the query gate's verdict and its figures (None for method "llm")

    def why_not(self, candidate: Recalled) -> str | None:
        """Why a candidate was not chosen; None when it was."""
        if any(r.path == candidate.path for r in self.results):
            return None
        if candidate.path in self.already:
            return "already in the context: pinned"
        if self.method == "llm":
            return "not picked by the model"
        if not self.passed_gate:
            why = self.gate.why(self.settings) if self.gate else "the query did not pass the gate"
            return f"the folder does not know the query: {why}"
        if candidate.direct <= 0:
            return "no word of the query matches it, only names lent by the best matches"
        if candidate.relevance < self.settings.min_relevance:
            return f"relevance {candidate.relevance:.2f} below min-relevance {self.settings.min_relevance:g}"
        if candidate.score < self.min_score:
            return f"score {candidate.score:.2f} below min-score {self.min_score:g}"
        return f"not in the top {self.k}"

    def why_nothing(self) -> str:
        """Why nothing was recalled, in a phrase for people (`memdir recall`, the MCP `recall` tool)."""
        if not self.candidates:
            return "no memory shares a word with the query"
        if self.method == "llm":
            return "the model picked no memory"
        if not self.passed_gate:
            why = self.gate.why(self.settings) if self.gate else "the query did not pass the gate"
            return f"the best match is {self.candidates[0].path}, but {why}"
        return "every match is below min-relevance or --min-score"


@dataclass(frozen=True)
class _Evidence:
    """What one query slot gives the memories it matches, for the gate."""

    shown: str
    pair: bool
    values: dict[int, tuple[float, str]]  # memory -> (the slot's part of its normalised BM25F sum, word shown)
    general: bool  # a word common in any text (the general-language prior damps it)
    heads: frozenset[int] = frozenset()  # the memories that hold it in their name or description


@dataclass(frozen=True)
class Gate:
    """Whether the folder knows anything about a query, and why (logged with every recall).

    The null model of docs/recall.md: scatter the query's words over a folder of this size, each held by
    a memory at its own rate, independently of the others. `chance` is how many memories would then
    match as well as the best match does. Few (at most `gate-chance`) means the best match holds the
    query's words together more than chance would, and the folder knows the query's subject, provided
    one of the words is not common English (or two stand side by side as in the query). Co-occurrence
    cannot speak for a query that names the folder's own subject ("What did Priya ..." in a folder of
    Priya's conversations) or restates one memory's claim: those pass as such (`subject`, `lookup`)
    when the query names nothing the folder has never seen (`unknown`). And a best match strong enough
    alone (`gate`) passes."""

    relevance: float  # the best match's relevance over the words the gate weighs (0..1)
    chance: float  # memories expected to match as well as the best by chance
    weighed: tuple[str, ...] = ()  # the query's words the gate weighs
    common: tuple[str, ...] = ()  # query words in so large a share of the folder that they do not count
    specific: bool = False  # whether the best match holds a weighed word that is not common English, or a pair
    passed: bool = False
    lookup: bool = False  # the query's words are all in the best match's name or description
    subject: tuple[str, ...] = ()  # names in the query that at least half of the folder's memories hold
    unknown: tuple[str, ...] = ()  # the query's uncommon words that no memory of the folder holds

    @classmethod
    def of(
        cls,
        index: TermIndex,
        evidence: Sequence[_Evidence],
        settings: RecallSettings,
        slots: Sequence[Slot],
        query: str,
        passes: bool = True,
    ) -> Gate:
        """`passes=False` leaves out the subject pass and looks up one-word queries only, as the gate did
        before issue 31: for the evaluation scripts' side-by-side figures."""
        size = max(index.n, MIN_FOLDER)  # as for IDF: a folder of three is not a place where all is common
        particles = _particles(query)
        words = [e for e in evidence if not e.pair and not _fragment(e.shown, particles)]
        weighed = [e for e in words if len(e.values) <= _COMMON_SHARE * size]
        common = tuple(e.shown for e in words if len(e.values) > _COMMON_SHARE * size)
        # A name the query gives (written with a capital inside a sentence, or in capitals) that most of the
        # folder's memories hold is what the folder is about: a person in a folder of their conversations,
        # a product in its team's folder. Another folder's question names someone else.
        names = named_words(query)
        subject = tuple(e.shown for e in words if e.shown in names and len(e.values) >= _SUBJECT_SHARE * size)
        subject = subject if passes else ()
        # An uncommon query word that no memory holds says the query is (also) about something the folder
        # has never mentioned. Numbers are left out: a date or a count is no subject.
        found = {e.shown for e in evidence}
        unknown = tuple(
            slot.shown
            for slot in slots
            if not slot.pair
            and slot.shown not in found
            and not _fragment(slot.shown, particles)
            and not slot.shown.isdigit()
            and next(iter(slot.alternatives.values()))[0] >= 1
        )
        sums: dict[int, float] = defaultdict(float)
        for e in weighed:
            for i, (value, _) in e.values.items():
                sums[i] += value
        shown = tuple(e.shown for e in weighed)
        if not sums:
            return cls(0.0, float(size), shown, common, subject=subject, unknown=unknown,
                       passed=bool(subject) and not unknown)  # fmt: skip
        top = min(sums, key=lambda i: (-sums[i], i))
        relevance, chance = _bounded(sums[top]), _chance(weighed, sums[top], size)
        # Common English words meet in any text; an uncommon one, or two query words side by side as in
        # the query ("merge request"), is what says the match is about the query's subject.
        specific = any(top in e.values for e in evidence if e.pair or (e in weighed and not e.general))
        # A look-up: the query restates what the best match files itself under. Every word it weighs is in
        # the best match's name or description, one of them not common English, and none of its words is
        # unknown to the folder ("kubernetes"; "Which CPU should the new laptop have?" asks of a laptop the
        # folder never mentions). Co-occurrence cannot show this: one word is where it is.
        named = [e for e in weighed if not e.shown.isdigit()]
        lookup = (
            not unknown and bool(named) and any(not e.general for e in named) and all(top in e.heads for e in named)
        )
        if not passes:
            lookup = lookup and sum(not slot.pair for slot in slots) == 1
        passed = (
            (chance <= settings.gate_chance and specific)
            or relevance >= settings.gate
            or lookup
            or (bool(subject) and not unknown)
        )
        return cls(relevance, chance, shown, common, specific, passed, lookup, subject, unknown)

    def why(self, settings: RecallSettings) -> str:
        """Why the query passed or not, in a phrase for people."""
        count = f"{self.chance:.2g} {'memory' if f'{self.chance:.2g}' == '1' else 'memories'}"
        odds = f"by chance {count} would match the query as well (gate-chance {settings.gate_chance:g})"
        if self.passed:
            if self.relevance >= settings.gate:
                return f"the best match's relevance {self.relevance:.2f} reaches the gate"
            if self.chance <= settings.gate_chance and self.specific:
                return odds
            if self.lookup:
                if len(self.weighed) == 1:
                    return "the query is one uncommon word, in the best match's name or description"
                return "the query's words are all in the best match's name or description"
            return f"the query names {', '.join(self.subject)}, what the folder is about, and nothing it does not know"
        if not self.weighed:
            return "no word of the query that the gate weighs matches"
        if self.chance <= settings.gate_chance:
            odds = "the only words the query shares with the best match are common English words"
        if self.unknown:
            odds += f"; no memory holds {', '.join(self.unknown)}"
        return f"{odds}, and the best match's relevance {self.relevance:.2f} is below the gate {settings.gate:g}"

    def to_json(self) -> dict[str, Any]:
        return {"relevance": round(self.relevance, 4), "chance": round(self.chance, 4), "weighed": list(self.weighed),
                "common": list(self.common), "specific": self.specific, "lookup": self.lookup,
                "subject": list(self.subject), "unknown": list(self.unknown), "passed": self.passed}  # fmt: skip


_COMMON_SHARE = 0.2  # a word in more than this share of the folder is the folder's subject, not the query's
_SUBJECT_SHARE = 0.5  # a name the query gives, held by at least this share of the folder, is what it is about
_CHANCE_BINS = 64  # resolution of the null distribution, in fractions of the best match's evidence


# The grammatical particles of Chinese: "X的Y" (Y of X) and "X了" (X done) join words, so a
# two-character term holding one straddles a word boundary ("中的", "的自", "用的") and says nothing of a
# subject; the few words made with them (目的 purpose, 了解 understand) are generic. Japanese uses 的
# the same way, as a suffix (具体的, 技術的), but 了 is no particle there: it is half of words that name
# a subject (完了 completion, 終了 end), so a query written with kana keeps its 了 pairs.
_CJK_PARTICLES = frozenset("的了")
_JAPANESE_PARTICLES = frozenset("的")
# Hiragana and katakana letters; not the middle dot and the long-vowel mark (・ ー) Chinese text uses too.
_KANA = LazyPattern("[\u3040-\u309f\u30a0-\u30fa]")


def _particles(query: str) -> frozenset[str]:
    return _JAPANESE_PARTICLES if _KANA.search(query) else _CJK_PARTICLES


def _fragment(shown: str, particles: frozenset[str]) -> bool:
    """Whether a query term is a piece of Chinese, Japanese or Korean text rather than a word: a single
    character (a letter of words, whose evidence their two-character terms carry) or a pair holding a
    grammatical particle (`particles`: _particles of the query). The gate does not weigh these."""
    return is_cjk(shown) and (len(shown) == 1 or not particles.isdisjoint(shown))


def _chance(weighed: Sequence[_Evidence], best: float, size: int) -> float:
    """How many memories of a folder of `size` would reach `best` over the `weighed` words by chance: each
    word held by a memory at its folder rate (memories holding it / size), independently of the other
    words, and worth what it is worth in one of the memories that really hold it, drawn at random."""
    # The null distribution of one memory's sum, in bins of best / _CHANCE_BINS, the last bin holding
    # "at least best": a convolution, one distribution per word.
    width = best / _CHANCE_BINS
    dist = [1.0] + [0.0] * _CHANCE_BINS
    for e in weighed:
        held = Counter(min(_CHANCE_BINS, int(value / width + 0.5)) for value, _ in e.values.values())
        outcomes = {step: count / size for step, count in held.items()}
        outcomes[0] = outcomes.get(0, 0.0) + 1 - len(e.values) / size
        shifted = [0.0] * (_CHANCE_BINS + 1)
        for b, p in enumerate(dist):
            if p:
                for step, q in outcomes.items():
                    shifted[min(_CHANCE_BINS, b + step)] += p * q
        dist = shifted
    return size * dist[-1]


UNKNOWN_AGE_RECENCY = 0.5  # when no memory ranked beside it has an age either: any value ranks them alike


def recencies(ages: Sequence[Age], today: dt.date, half_life: float) -> list[float]:
    """The recency of each of the memories ranked together: 1 today, 0.5 one half-life ago. A memory
    with no age (memdir.core.age) gets the median recency of those that have one, as old as a typical
    one of them: never last for its author writing no date (most have none only because Claude Code
    writes none), nor above an older memory that is dated for that alone."""
    known = [0.5 ** (max((today - age.day).days, 0) / half_life) for age in ages if age.day is not None]
    typical = statistics.median(known) if known else UNKNOWN_AGE_RECENCY
    found = iter(known)
    return [float(next(found)) if age.day is not None else float(typical) for age in ages]


def _bounded(score: float) -> float:
    """A normalised BM25F sum as a relevance in 0..1."""
    return 1 - math.exp(-score)


def _relevance(
    index: TermIndex, slots: Sequence[Slot], evidence: list[_Evidence] | None = None
) -> tuple[dict[int, float], dict[int, list[str]]]:
    """Normalised BM25F score of every memory that matches, and the query words it matched. With
    `evidence`, appends what each slot tells the gate: how many memories it matched, and how much it
    gives a memory on average (see _chance)."""
    scores: dict[int, float] = defaultdict(float)
    matched: dict[int, list[str]] = defaultdict(list)
    for slot in slots:
        best: dict[int, tuple[float, str]] = {}  # per memory, the slot's best alternative
        heads: set[int] = set()
        for term, (weight, word) in slot.alternatives.items():
            postings = index.postings(term)
            if not postings:
                continue
            factor = weight * idf(len(postings), index.n) / index.idf_max
            for i, in_head, in_body in postings:
                if slot.heads_only:
                    if not in_head or i in slot.lenders:
                        continue
                    in_body = 0
                value = factor * index.weight(i, in_head, in_body)
                if in_head:
                    heads.add(i)
                if value > best.get(i, (0.0, ""))[0]:
                    best[i] = (value, slot.shown if word == slot.shown else f"{slot.shown}={word}")
        for i, (value, shown) in best.items():
            scores[i] += value
            matched[i].append(shown)
        if evidence is not None and best:
            general = next(iter(slot.alternatives.values()))[0] < 1  # damped by the general-language prior
            evidence.append(_Evidence(slot.shown, slot.pair, best, general, frozenset(heads)))
    return scores, matched


def _neighbours(index: TermIndex, slots: Sequence[Slot], scores: dict[int, float]) -> list[Slot]:
    """Query slots for the names the best matches carry: the rare words in their heads ("Orion",
    "Design Weekly") that the query did not use. A task about the landing page redesign is about Orion
    when the redesign's memory says so, and Orion's style guide and release plan bear on it too."""
    used = {term for slot in slots for term in slot.alternatives}
    prior, most = general_prior(), min(_NEIGHBOUR_MOST, max(2, int(_NEIGHBOUR_SHARE * max(index.n, MIN_FOLDER))))
    lent: dict[str, tuple[float, str]] = {}  # term -> (weight, the words it came from)
    lenders: dict[str, set[int]] = defaultdict(set)
    for i in heapq.nsmallest(_NEIGHBOUR_SOURCES, scores, key=lambda i: (-scores[i], i)):  # the best, in order
        share = _bounded(scores[i])  # a name is worth what its memory's match is worth
        doc = index.doc(i)
        words = dict(reversed(list(term_sequence(f"{doc.name}\n{doc.description}"))))
        head, _ = index.terms(i)
        for term in set(head):
            if term in used or is_cjk(term) or term.isdigit() or prior.get(term, 1.0) < 1:
                continue
            if 2 <= index.df(term) <= most:
                lenders[term].add(i)
                if share > lent.get(term, (0.0, ""))[0]:
                    lent[term] = (share, words.get(term, term))
    return [Slot(f"~{word}", {term: (_NEIGHBOUR_WEIGHT * share, f"~{word}")}, True, frozenset(lenders[term]))
            for term, (share, word) in sorted(lent.items())]  # fmt: skip


def score_query(
    index: TermIndex,
    query: str,
    settings: RecallSettings,
    today: dt.date,
    synonyms: bool = True,
    successors: bool = True,
    neighbours: bool = True,
    passes: bool = True,
) -> tuple[list[Recalled], list[tuple[str, str]], Gate]:
    """Every live memory with some relevance to `query`, best first, the excluded ones that matched, and
    the gate's verdict on the query. The flags leave a part out, for the evaluation's ablations."""
    slots = query_slots(query, settings.synonyms, synonyms)
    evidence: list[_Evidence] = []
    direct, matched = _relevance(index, slots, evidence)
    gate = Gate.of(index, evidence, settings, slots, query, passes)
    scores = dict(direct)
    if neighbours and gate.passed:
        lent, lent_matched = _relevance(index, _neighbours(index, slots, direct))
        for i, value in lent.items():
            scores[i] = scores.get(i, 0.0) + value
            matched[i].extend(lent_matched[i])
    live: dict[int, tuple[float, float, int]] = {}  # memory -> (score, its direct part, inherited from or -1)
    excluded: list[tuple[str, str]] = []
    for i, value in scores.items():
        doc = index.doc(i)
        why = doc.exclusion(today)
        if why is None:
            if value > live.get(i, (0.0, 0.0, -1))[0]:
                live[i] = (value, direct.get(i, 0.0), -1)
            continue
        excluded.append((doc.path, why))
        successor, seen = doc.successor, {i}
        while successors and successor >= 0 and successor not in seen:  # follow a chain of replacements
            seen.add(successor)
            following = index.doc(successor)
            if following.exclusion(today) is None:
                inherited = _SUCCESSOR_SHARE * value
                if inherited > live.get(successor, (0.0, 0.0, -1))[0]:
                    live[successor] = (inherited, _SUCCESSOR_SHARE * direct.get(i, 0.0), i)
                break
            successor = following.successor
    out = []
    ages = [index.age(i) for i in live]
    for (i, (value, own, via)), age, fresh in zip(
        live.items(), ages, recencies(ages, today, settings.half_life_days), strict=True
    ):
        doc = index.doc(i)
        relevance = _bounded(value)
        score = (
            settings.relevance_weight * relevance
            + settings.recency_weight * fresh
            + settings.importance_weight * doc.importance
        )
        words = tuple(matched[i] if via < 0 else matched[via])
        out.append(Recalled(doc.path, doc.name, doc.type, doc.description, score, relevance, fresh, doc.importance,
                            words, index.doc(via).path if via >= 0 else None, _bounded(own), age))  # fmt: skip
    out.sort(key=lambda r: (-r.score, -r.relevance, r.path))
    excluded.sort()
    return out, excluded, gate
