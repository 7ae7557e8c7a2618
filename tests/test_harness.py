"""The test harness itself (conftest.py): what it does before the first test must never stop the suite."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from conftest import compile_tree


def test_bytecode_is_written_checked_against_the_source(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text("X = 1\n")
    compile_tree(tmp_path)
    cached = Path(importlib.util.cache_from_source(str(source)))
    assert cached.read_bytes()[4:8] == (3).to_bytes(4, "little")  # hash-based and checked: never stale


def test_a_tree_whose_bytecode_cannot_be_written_is_left_as_it_is(tmp_path: Path) -> None:
    """Bug: one source whose bytecode could not be written (a read-only checkout) raised while
    conftest.py was imported, and no test ran at all."""
    (tmp_path / "module.py").write_text("X = 1\n")
    (tmp_path / "__pycache__").write_text("a file where the bytecode's folder would be\n")
    compile_tree(tmp_path)  # no OSError
