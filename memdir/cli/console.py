"""The rich console the CLI draws tables with: every string cell is made safe before rich sees it."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from memdir.text.outward import one_field


class SafeConsole(Console):
    """A Console whose plain strings pass `outward.one_field`: a name or description holding a key or
    `ESC [2J` shows as text. Rich's own styling (a bold header) is added after, so it still works."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(one_field(text), **kwargs)
