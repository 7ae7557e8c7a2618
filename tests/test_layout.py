"""The architecture, checked: imports flow one way, from the CLI down to the core, never back up.

Each package is a layer; a module may import its own layer and the layers below it, never one
above. Imports inside functions count (a lazy import is still a dependency); imports under
`if TYPE_CHECKING:` do not (they exist for the type checker only).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "memdir"

# Lowest first. `memdir.folder` (MemoryDir) sits on the core and the linter; the write and read
# paths, the lifecycle and the integrations use the folder; the CLI uses everything.
LAYERS = ["core", "lint", "folder", "write", "read", "lifecycle", "integrations", "cli", "memdir"]
LEAVES = {"memdir.version": "core"}  # a leaf any layer may name


def layer_of(module: str) -> str:
    if module in LEAVES:
        return LEAVES[module]
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "memdir"
    return parts[1]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every memdir module `path` imports at run time."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names if alias.name.startswith("memdir"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "memdir":
            for alias in node.names:  # `from memdir import lint` names the package memdir.lint
                sub = f"{node.module}.{alias.name}"
                found.append((node.lineno, sub if (PACKAGE.parent / sub.replace(".", "/")).exists() else node.module))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_package_is_a_known_layer() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__", "version"}
    assert packages | modules <= set(LAYERS), "a new package or top-level module needs a place in LAYERS"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_imports_flow_down(path: Path) -> None:
    here = _module_name(path)
    mine = LAYERS.index(layer_of(here))
    upward = [
        f"line {line}: {module} ({layer_of(module)})"
        for line, module in imports(path)
        if LAYERS.index(layer_of(module)) > mine
    ]
    assert not upward, f"{here} ({layer_of(here)}) imports from a layer above it: {upward}"


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The check itself: a core module that imports the CLI, even lazily, is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from memdir.cli.state import State\n")
    assert [m for _, m in imports(bad)] == ["memdir.cli.state"]
    assert LAYERS.index(layer_of("memdir.cli.state")) > LAYERS.index(layer_of("memdir.core.store"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_a_long_module_says_why_at_its_top(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if text.count("\n") > 500:
        doc = ast.get_docstring(ast.parse(text)) or ""
        assert "Over 500 lines" in doc, f"{path.name} is {text.count(chr(10))} lines: split it, or say why not"
