"""Index entries for any file name and any one-line description (hypothesis).

A memory file may be called anything the file system allows: any Unicode but "/" and NUL, spaces,
`<` `>` `[` `]` `(` `)` `#` `%` and backslashes included, up to 255 bytes. Its description is any one
line. Whatever they are, the entry memdir writes must link back to that very file, building the
index twice must give the same bytes with every memory listed once (and lint agreeing that it is
listed), the caps must hold, and no description may push an entry line past 150 characters.

Memory files are written as a person would, with the frontmatter dumped by yaml.safe_dump so that it
is valid YAML whatever the text. Runs are derandomized (the same examples every run) and bounded.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest
import yaml
from conftest import TODAY, invoke_memdir
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from memdir.core.cache import ParseCache
from memdir.core.index import IndexRow, _Price, build_index, entry_target, find_links, render_entry, split_lines
from memdir.core.model import Memory, parse_document
from memdir.core.store import load_file
from memdir.folder import MemoryDir

MAX_LINES, MAX_BYTES, ENTRY_MAX = 200, 25_000, 150
NAME_MAX_BYTES = 255  # the longest file name Linux file systems (ext4, tmpfs) take

FUZZ = settings(
    max_examples=60,
    deadline=None,  # the first example imports yaml and the CLI: never a flaky deadline
    derandomize=True,  # the same examples every run: a failure reproduces
    database=None,  # nothing written into the checkout
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
# Examples that write a whole folder (and run the CLI): fewer, and not shrunk, since shrinking one
# such failure takes minutes; the example that failed is printed as it was generated, and the
# tricky names at the end of this file give the small cases.
UNSHRUNK = (Phase.explicit, Phase.reuse, Phase.generate)
FOLDERS = settings(FUZZ, max_examples=25, phases=UNSHRUNK)  # a few memories each
MANY = settings(FUZZ, max_examples=15, phases=UNSHRUNK)  # hundreds of memories each

# Characters that mean something in a markdown link or a URL, weighted in so that most names
# have some; the rest is any Unicode a file name may hold (not "/", not NUL, no lone surrogates).
MARKUP = " <>[]()#%\\`*_!:;?&=~'\"\t\r\n\u2028\u0085\u00a0.-"
ANY_CHAR = st.characters(codec="utf-8", exclude_characters="/\x00")  # utf-8: no lone surrogates
NAME_CHAR = st.one_of(st.sampled_from(MARKUP), ANY_CHAR)


@st.composite
def file_names(draw: st.DrawFn) -> str:
    """A legal memory file name: `<anything>.md`, at most 255 bytes. Not hidden (a dot-file is not
    listed as a memory, by memdir's store or by a person) and not the index itself."""
    stem = draw(st.text(NAME_CHAR, min_size=1, max_size=60))
    name = f"{stem}.md"
    if len(name.encode("utf-8")) > NAME_MAX_BYTES:
        name = name.encode("utf-8")[: NAME_MAX_BYTES - 3].decode("utf-8", "ignore") + ".md"
    if name.startswith(".") or name == "MEMORY.md":
        name = "m" + name[1:] if name.startswith(".") else "memory-file.md"
    return name


# One line: no "\n" (the write path refuses it; YAML would fold it anyway). Anything else goes.
DESCRIPTION_CHAR = st.one_of(st.sampled_from(MARKUP.replace("\n", "") + " " * 8), ANY_CHAR.filter(lambda c: c != "\n"))
descriptions = st.text(DESCRIPTION_CHAR, min_size=1, max_size=300).filter(lambda d: d.strip())
# A `name` is optional: without one, the title is the file's stem (with all its characters).
names = st.one_of(st.none(), st.text(DESCRIPTION_CHAR, min_size=1, max_size=40).filter(lambda n: n.strip()))
TYPES = st.sampled_from(["user", "feedback", "project", "reference"])


@dataclasses.dataclass(frozen=True)
class Spec:
    file_name: str
    description: str
    name: str | None
    type: str


specs = st.builds(Spec, file_names(), descriptions, names, TYPES)


def unique_specs(min_size: int, max_size: int) -> st.SearchStrategy[list[Spec]]:
    """Memories with distinct file names, case aside: `A.md` and `a.md` would be one file to a
    case-insensitive reader (issue #3 resolves case variants to the same file)."""
    return st.lists(specs, min_size=min_size, max_size=max_size, unique_by=lambda s: s.file_name.casefold())


def write_memory(root: Path, spec: Spec) -> Path:
    """A hand-written memory file: frontmatter by yaml.safe_dump, so valid YAML whatever the text."""
    fields = {"description": spec.description, "type": spec.type}
    if spec.name is not None:
        fields = {"name": spec.name, **fields}
    frontmatter = yaml.safe_dump(fields, allow_unicode=True, sort_keys=False, width=10**6)
    path = root / spec.file_name
    path.write_bytes(f"---\n{frontmatter}---\nBody.\n".encode())
    return path


@contextmanager
def folder() -> Iterator[Path]:
    """A fresh memory folder (hypothesis examples cannot share pytest's function-scoped tmp_path)."""
    with tempfile.TemporaryDirectory(prefix="memdir-fuzz-") as tmp:
        root = Path(tmp) / "memory"
        root.mkdir()
        (root / "MEMORY.md").write_text("")
        yield root


def loaded(root: Path, file_name: str) -> Memory:
    memory = load_file(str(root / file_name), file_name, ParseCache.disabled())
    assert isinstance(memory, Memory), f"{file_name!r} does not load as a memory: {memory}"
    return memory


def longest_allowed(memory: Memory) -> int:
    """150 characters, or the bare link when the file name alone makes it longer: the link cannot be
    shortened (it must open the file); the description must never add to it past 150."""
    bare = dataclasses.replace(IndexRow.of(memory), description="")
    return max(ENTRY_MAX, len(render_entry(bare)))


def link_lines(text: str) -> Counter[str]:
    """How many lines of MEMORY.md link each folder path (a line linking a file twice counts once)."""
    return Counter(target for _, target in {(link.line, link.target) for link in find_links(text) if link.target})


@FUZZ
@given(spec=specs)
def test_entry_links_back_to_its_file(spec: Spec) -> None:
    with folder() as root:
        write_memory(root, spec)
        memory = loaded(root, spec.file_name)
        line = render_entry(memory)
        # One line for every reader: markdown also ends a line at a bare CR.
        assert "\n" not in line and "\r" not in line, repr(line)
        assert entry_target(line) == memory.path, line
        assert len(line) <= longest_allowed(memory), f"{len(line)} characters: {line}"


@FOLDERS
@given(memories=unique_specs(1, 8))
# Always tried, whatever the random examples hit: names the random search found breaking the index.
@example(memories=[Spec("0.md", "<", None, "user"), Spec("\n.md", "<", None, "user")])
@example(memories=[Spec(" >.md", "a b", "x", "project")])
@example(memories=[Spec("A:.md", "c: d", None, "reference")])
def test_index_twice_lists_each_memory_once(memories: list[Spec]) -> None:
    with folder() as root:
        for spec in memories:
            write_memory(root, spec)
        first = MemoryDir(root, today=TODAY).write_index()
        text = (root / "MEMORY.md").read_bytes()
        second = MemoryDir(root, today=TODAY).write_index()
        assert (root / "MEMORY.md").read_bytes() == text and not second.changed, "the second index rewrote MEMORY.md"

        index = text.decode("utf-8")
        assert not first.result.left_out, "a handful of memories fits the caps"
        counts = link_lines(index)
        listed = {spec.file_name: counts[spec.file_name] for spec in memories}
        assert listed == dict.fromkeys(listed, 1), f"lines linking each memory: {listed}\n{index}"
        for line in split_lines(index):
            if entry_target(line) is not None:
                memory = loaded(root, entry_target(line) or "")
                assert len(line) <= longest_allowed(memory), f"{len(line)} characters: {line}"

        lint = invoke_memdir("--dir", str(root), "lint", "--select", "I", "--format", "json", cwd=root)
        assert lint.exit_code in (0, 1), lint.output
        findings = json.loads(lint.stdout)["findings"]
        unlisted = [f for f in findings if f["code"] in ("I001", "I003")]
        assert not unlisted, (unlisted, index)


@MANY
@given(pool=st.lists(descriptions, min_size=1, max_size=4), count=st.integers(150, 260), long=st.booleans())
def test_caps_hold_with_many_long_descriptions(pool: list[str], count: int, long: bool) -> None:
    with folder() as root:
        for i in range(count):
            text = pool[i % len(pool)]
            if long:  # descriptions far over 150 characters, as a fifth of real ones are
                text = (text + " ") * (400 // len(text) + 1)
            write_memory(root, Spec(f"feedback_{i:03}.md", f"{i} {text}".strip(), f"rule {i}", "feedback"))
        write = MemoryDir(root, today=TODAY).write_index()
        index = (root / "MEMORY.md").read_bytes()
        assert write.result.refused is None, write.result.refused
        assert len(split_lines(index.decode("utf-8"))) <= MAX_LINES
        assert len(index) <= MAX_BYTES
        listed = set(link_lines(index.decode("utf-8")))
        left_out = {left.memory.path for left in write.result.left_out}
        assert listed | left_out == {f"feedback_{i:03}.md" for i in range(count)}
        entries = [line for line in split_lines(index.decode("utf-8")) if entry_target(line) is not None]
        too_long = [line for line in entries if len(line) > ENTRY_MAX]
        assert not too_long, f"{len(too_long)} entry lines over {ENTRY_MAX} characters, e.g. {too_long[0]}"


# Names that each break a link in their own way, as a checklist beside the random ones: a line break,
# the characters of the `<...>` form, a scheme or drive letter, a fragment, an escape, brackets.
TRICKY_NAMES = [
    "\n.md",
    "a\rb.md",
    "a\u2028b.md",
    " >.md",
    "<x>.md",
    "a b.md",
    "A:.md",
    "http:x.md",
    "C:\\x.md",
    "a#b.md",
    "50%25.md",
    "x\\y.md",
    "[a](b).md",
    "a)b.md",
    "a(b.md",
    "`x`.md",
    "*x*.md",
    "é中 ü.md",
]


@pytest.mark.parametrize("file_name", TRICKY_NAMES)
def test_tricky_file_name_is_indexed_once_and_links_back(file_name: str, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("")
    write_memory(root, Spec(file_name, "A description", None, "feedback"))
    memory = loaded(root, file_name)
    line = render_entry(memory)
    assert "\n" not in line and "\r" not in line, repr(line)
    assert entry_target(line) == file_name, line
    MemoryDir(root, today=TODAY).write_index()
    text = (root / "MEMORY.md").read_bytes()
    assert not MemoryDir(root, today=TODAY).write_index().changed, "the second index rewrote MEMORY.md"
    assert (root / "MEMORY.md").read_bytes() == text
    assert link_lines(text.decode("utf-8"))[file_name] == 1, text.decode("utf-8")


def memory_of(spec: Spec) -> Memory:
    """The memory `write_memory` would write, parsed in memory: no folder needed to price its line."""
    fields = {"description": spec.description, "type": spec.type}
    if spec.name is not None:
        fields = {"name": spec.name, **fields}
    frontmatter = yaml.safe_dump(fields, allow_unicode=True, sort_keys=False, width=10**6)
    return Memory(path=spec.file_name, doc=parse_document(f"---\n{frontmatter}---\nBody.\n"))


@FUZZ
@given(spec=specs, newline=st.sampled_from(["\n", "\r\n"]))
@example(spec=Spec("%" * 200 + ".md", "d " * 100, "[" * 40, "user"), newline="\n")
@example(spec=Spec("\x85" * 100 + ".md", "x", None, "user"), newline="\r\n")
def test_an_entry_line_costs_within_the_bounds_its_path_gives(spec: Spec, newline: str) -> None:
    """Packing prices a line exactly only when bounds from its path cannot decide (`_Price`): the
    bounds must hold for every line render_entry draws, or an entry would be left out that fits."""
    price = _Price([], keep_wording=False, newline=newline)
    memory = memory_of(spec)
    assert price.floor(memory) <= price.cost(memory) <= price.ceiling(memory), render_entry(memory)


@MANY
@given(pool=unique_specs(1, 30), count=st.integers(100, 250), hand=st.integers(0, 24_800))
def test_packing_by_bounds_leaves_out_what_pricing_every_line_does(pool: list[Spec], count: int, hand: int) -> None:
    """The bounds only skip rendering: the index, what is left out and why are what pricing every
    line exactly gives, whatever room the hand-written text leaves."""
    memories = [
        memory_of(dataclasses.replace(spec, file_name=f"{i}-{spec.file_name}"))
        for i, spec in enumerate(pool[i % len(pool)] for i in range(count))
    ]
    existing = "# Notes\n\n" + "hand-written " * (hand // 13) + "\n"

    def plan() -> tuple[str, list[tuple[str, str]], list[str]]:
        result = build_index(existing, memories, TODAY)
        return result.text, [(left.memory.path, left.reason) for left in result.left_out], result.refused or ""

    by_bounds = plan()
    with (
        mock.patch.object(_Price, "floor", lambda self, memory: 0),
        mock.patch.object(_Price, "ceiling", lambda self, memory: 10**9),
    ):
        assert plan() == by_bounds


@pytest.mark.parametrize("hand", [*range(0, 400, 53), *range(24_500, 24_950, 75)])
def test_packing_by_bounds_decides_the_end_game_as_pricing_every_line_does(hand: int) -> None:
    """Where the bounds decide: the last bytes of room, after long lines, go to short ones (a floor
    too high would leave them out), and with little room a line longer than all of it is `too long
    to ever fit`, not merely over the cap (a ceiling too low would say so)."""
    specs = [
        *(Spec(f"a{i:03}-long.md", f"{i} " + "word " * 40, f"long {i}", "project") for i in range(170)),
        *(Spec(f"b{i:03}.md", "x", None, "user") for i in range(30)),
        *(Spec(f"c{i:03}-{'p' * 40}.md", "y " * 60, None, "feedback") for i in range(5)),
        *(Spec(f"d{i:03}.md", "z", None, "user") for i in range(10)),
    ]
    memories = [memory_of(spec) for spec in specs]
    existing = "# Notes\n\n" + "hand-written " * (hand // 13) + "\n"

    def plan() -> tuple[str, list[tuple[str, str]]]:
        result = build_index(existing, memories, TODAY)
        return result.text, [(left.memory.path, left.reason) for left in result.left_out]

    by_bounds = plan()
    with (
        mock.patch.object(_Price, "floor", lambda self, memory: 0),
        mock.patch.object(_Price, "ceiling", lambda self, memory: 10**9),
    ):
        assert plan() == by_bounds
