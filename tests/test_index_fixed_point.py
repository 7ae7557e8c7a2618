"""One `memdir index` run settles: a second run changes nothing (DESIGN: idempotent).

Whatever the first run does (rewrite an entry and lose the links in it, drop dead entries for the
caps, leave memories out and write the note, take over a renamed memory's line, give a line that no
longer fits its generated text), the second run must find nothing to do. Checked on every folder of
the shared corpus (copied; skipped without it), in both entry-text modes, with caps that hold and
caps that bind, and with a third of its memories deleted; and on generated folders built to meet
those cases. A run that stopped short of its fixed point shows here as a second run that writes.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import SHARED, TODAY
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from memdir.core.config import Config, IndexSettings
from memdir.core.index import Caps
from memdir.folder import MemoryDir

CORPUS = SHARED / "corpus" / "real"
FOLDERS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else []
KEEP = Config(index=IndexSettings(entry_text="keep"))
MODES = {"frontmatter": Config(), "keep": KEEP}
THOROUGH = os.environ.get("MEMDIR_HYPOTHESIS_PROFILE") == "thorough"  # ten times the examples, as elsewhere


def settles(root: Path, config: Config, caps: Caps) -> None:
    """Index `root` once and check that a second run would change nothing."""
    first = MemoryDir(root, config, TODAY, caps).write_index()
    again = MemoryDir(root, config, TODAY, caps).write_index(dry_run=True)
    if first.result.refused is None:
        texts = f"--- first\n{first.result.text}--- second\n{again.result.text}"
        assert not again.changed, f"a second run rewrites MEMORY.md:\n{texts}"


def binding(root: Path, config: Config) -> list[Caps]:
    """Caps that leave out about a third of what the folder needs, by lines and by bytes."""
    full = MemoryDir(root, config, TODAY, Caps(10**6, 10**9)).plan_index()
    return [Caps(max_lines=full.lines * 2 // 3), Caps(max_bytes=full.bytes * 2 // 3)]


@pytest.mark.skipif(not FOLDERS, reason=f"the real-folder corpus is not at {CORPUS}")
@pytest.mark.parametrize("name", FOLDERS)
def test_one_index_run_settles_every_real_folder(name: str, scratch: Path) -> None:
    root = Path(tempfile.mkdtemp(dir=scratch)) / name  # on a tmpfs where there is one: runs fsync every write
    shutil.copytree(CORPUS / name, root, ignore=shutil.ignore_patterns(".memdir"), copy_function=shutil.copyfile)
    for folder, _, _ in os.walk(root):
        os.chmod(folder, 0o755)  # copytree copies the corpus' read-only folder modes
    index = root / "MEMORY.md"
    original = index.read_bytes() if index.exists() else None

    def restore() -> None:
        if original is None:
            index.unlink(missing_ok=True)
        else:
            index.write_bytes(original)

    for mode, config in MODES.items():
        for caps in [Caps(), *binding(root, config)]:
            restore()
            try:
                settles(root, config, caps)
            except AssertionError as exc:
                raise AssertionError(f"{mode}, {caps}: {exc}") from None
    # A third of the memories deleted by hand: their entries are dead, and go first when the caps bind.
    memories = sorted(p for p in root.rglob("*.md") if p.name != "MEMORY.md" and ".memdir" not in p.parts)
    for path in memories[::3]:
        path.unlink()
    for mode, config in MODES.items():
        for caps in [Caps(), *binding(root, config)]:
            restore()
            try:
                settles(root, config, caps)
            except AssertionError as exc:
                raise AssertionError(f"a third deleted, {mode}, {caps}: {exc}") from None


# --- generated folders ------------------------------------------------------------------------------

TYPES = ["user", "feedback", "project", "reference"]


@dataclasses.dataclass(frozen=True)
class Spec:
    type: str
    name: str
    description: str
    importance: float | None
    status: str | None

    @property
    def file(self) -> str:
        return f"{self.type}_{self.name}.md"


def _memory_text(spec: Spec) -> str:
    lines = [f"name: {spec.name}", f'description: "{spec.description}"', f"type: {spec.type}"]
    if spec.importance is not None:
        lines.append(f"importance: {spec.importance}")
    if spec.status is not None:
        lines.append(f"status: {spec.status}")
    return "---\n" + "\n".join(lines) + "\n---\nBody.\n"


@st.composite
def folders(draw: st.DrawFn) -> tuple[list[Spec], list[str], str, Caps, Config]:
    """Memories whose descriptions may link each other, some files renamed or deleted after the
    index was written, and a MEMORY.md of entries (own labels, nested, duplicated, with links to
    other memories in their text), prose that links memories, dead entries, headings and fences."""
    count = draw(st.integers(1, 9))
    names = [f"m{i}" for i in range(count)]
    files = [f"{draw(st.sampled_from(TYPES))}_{name}.md" for name in names]

    def a_link() -> str:
        i = draw(st.integers(0, count))  # `count`: a memory that does not exist
        target = files[i] if i < count else "user_gone.md"
        return f"[{draw(st.sampled_from(['see', names[i] if i < count else 'gone']))}]({target})"

    specs = []
    for name, file in zip(names, files, strict=True):
        words = draw(st.sampled_from(["A rule", "word " * 30, "A fact"]))
        description = f"{words.strip()} ({a_link()})" if draw(st.booleans()) else words.strip()
        importance = draw(st.sampled_from([None, 0.1, 0.9]))
        status = draw(st.sampled_from([None, None, None, "superseded"]))
        specs.append(Spec(file.split("_", 1)[0], name, description, importance, status))
    lines = []
    for _ in range(draw(st.integers(0, 14))):
        i = draw(st.integers(0, count - 1))
        label = draw(st.sampled_from([names[i], f"My label {i}", "gone"]))
        indent = draw(st.sampled_from(["", "", "    "]))
        tail = draw(st.sampled_from(["", f" — {specs[i].description}", f" — mine, also {a_link()}", " — short"]))
        lines.append(
            draw(
                st.sampled_from(
                    [
                        f"{indent}- [{label}]({files[i]}){tail}",
                        f"- [old {i}](feedback_old-{i}.md) — a dead entry, see {a_link()}",
                        f"Prose that links {a_link()}.",
                        "## Heading",
                        "",
                        "```",
                        "<!-- memdir: 2 more memories left out -->",
                        f"- [Design doc](design.md) — read with {a_link()}",
                    ]
                )
            )
        )
    renamed = [f for f in files if draw(st.integers(0, 5)) == 0]  # renamed after the index was written
    deleted = [f for f in files if f not in renamed and draw(st.integers(0, 6)) == 0]
    lines_cap, bytes_cap = Caps(max_lines=draw(st.integers(2, 12))), Caps(max_bytes=draw(st.integers(250, 1200)))
    caps = draw(st.sampled_from([Caps(), lines_cap, bytes_cap]))
    config = draw(st.sampled_from([Config(), KEEP]))
    return specs, [*renamed, *(f"-{f}" for f in deleted)], "\n".join(lines) + "\n", caps, config


@contextmanager
def scratch_folder(scratch: Path) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="memdir-settle-", dir=scratch) as tmp:
        root = Path(tmp) / "memory"
        root.mkdir()
        (root / "design.md").write_text("Not a memory.\n")
        yield root


@settings(
    max_examples=1_200 if THOROUGH else 120,  # ~2 s; thorough found nothing more at 3,000
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),  # a failure is printed as generated
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(folders())
def test_one_index_run_settles_a_generated_folder(
    scratch: Path, case: tuple[list[Spec], list[str], str, Caps, Config]
) -> None:
    specs, changes, index, caps, config = case
    with scratch_folder(scratch) as root:
        for spec in specs:
            (root / spec.file).write_text(_memory_text(spec))
        (root / "MEMORY.md").write_text(index)
        for change in changes:
            if change.startswith("-"):
                (root / change[1:]).unlink()
            else:  # renamed, keeping its `name`
                (root / change).rename(root / change.replace(".md", "-renamed.md"))
        settles(root, config, caps)
        problems = MemoryDir(root, config, TODAY, caps).lint(select=["I001", "I003"]).findings
        assert not problems, [f"{f.code} {f.path}: {f.message}" for f in problems]
