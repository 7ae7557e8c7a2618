"""A regular expression compiled on its first use rather than at import.

Every command imports the core, and `re` compiles a pattern in Python: a module-level
`re.compile` costs each start a few hundred microseconds to milliseconds, whether the command
uses it or not. A session-start or prompt hook masks a few lines and never parses a frontmatter or
looks for a phone number, so such patterns wait here until a search needs them.

One idiom per case: a pattern whose source is fixed text is a `LazyPattern`; a `functools.cache`
function returning a compiled pattern is for a source that is itself work to build (worked out from
the Unicode database or from other patterns) or that depends on an argument.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from functools import cached_property
from typing import Any


class LazyPattern:
    """`re.compile(pattern, flags)`, done when a method first needs it; the methods are `re.Pattern`'s."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        compiled = re.compile(self.pattern, self.flags)
        # From here on the pattern's own methods answer, not this class's: an instance attribute
        # comes before a method, and a scan calls some of these once per frontmatter line.
        methods = ("search", "match", "fullmatch", "finditer", "findall", "sub")
        self.__dict__.update({name: getattr(compiled, name) for name in methods})
        return compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)
