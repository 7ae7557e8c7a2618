"""LazyPattern: compiled on first use, and then the compiled pattern's own methods answer."""

from __future__ import annotations

import re

from memdir.text.lazyre import LazyPattern


def test_a_lazy_pattern_compiles_on_first_use_and_answers_as_re_does() -> None:
    lazy, eager = LazyPattern(r"(\d+)-(\w)", re.ASCII), re.compile(r"(\d+)-(\w)", re.ASCII)
    assert "compiled" not in lazy.__dict__  # nothing compiled at import
    text = "a 12-b, 3-c and 45-"
    assert lazy.search(text, 3).span() == eager.search(text, 3).span()  # type: ignore[union-attr]
    assert "compiled" in lazy.__dict__ and lazy.search == eager.search  # re's own method from now on
    assert lazy.match(text, 2) is not None and lazy.fullmatch("7-x") is not None
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    assert lazy.findall(text) == eager.findall(text) and lazy.sub("#", text) == eager.sub("#", text)
