"""The stored term index's pieces that recall leans on at every query."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memdir.read.termindex as termindex
from memdir.read.termindex import _adjacent
from memdir.text.words import is_cjk


def _adjacent_by_filtering(terms: list[str], first: str, second: str) -> int:
    """The definition: drop the CJK terms, count the neighbouring pairs."""
    words = [t for t in terms if not is_cjk(t)]
    return sum(1 for a, b in itertools.pairwise(words) if a == first and b == second)


_TERMS = st.sampled_from(["deploy", "friday", "billing", "部署", "周五", "배포", "a"])


@given(st.lists(_TERMS, max_size=30), _TERMS, _TERMS)
def test_adjacent_counts_what_the_definition_counts(terms: list[str], first: str, second: str) -> None:
    assert _adjacent(terms, first, second) == _adjacent_by_filtering(terms, first, second)


def test_adjacent_looks_only_after_the_first_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pair in a query is checked in every memory holding both words: the work follows the
    occurrences of the first word, not the length of the memory."""
    calls: list[str] = []

    def counting(term: str) -> bool:
        calls.append(term)
        return is_cjk(term)

    monkeypatch.setattr(termindex, "is_cjk", counting)
    terms = ["release", "部署", "checklist", *(["word", "詞"] * 5_000), "release", "checklist"]
    assert _adjacent(terms, "release", "checklist") == 2
    assert len(calls) <= 5
