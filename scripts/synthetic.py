"""Generated memory folders for benchmarks: realistic text, all four types, seeded.

Words follow a Zipf-like law over everyday words and invented names and identifiers, as in real
folders; a few memories are planted reworded copies of others. `synthetic_folder` gives the texts,
`write_folder` writes them as memory files with frontmatter and an empty MEMORY.md.
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
import re
from collections.abc import Sequence
from pathlib import Path

from memdir.text.similarity import MemoryText

# A generated folder stands in for a real one: the four types with their usual shapes (feedback and
# project memories carry **Why:** and **How to apply:** lines), sentences of everyday words drawn with
# Zipf frequencies from a large vocabulary (real folders are full of rare names and identifiers, which
# is what lets the index tell memories apart), numbers and dates, and 1% planted reworded duplicates.
_EVERYDAY_TEXT = """
account alert api approval archive audit backup bank batch benchmark billing blog board bot branch budget
build bundle cache calendar camera campaign card chapter chart checklist client cluster code colour column
commit component config console contract cost customer dashboard data database deadline demo deploy design
device diagram digest doc draft driver editor email endpoint engine error event export feature feed field file
filter firmware font form format forecast funnel gateway grant graph guide handler header hotfix image import
incident index input install interview invoice issue job key label latency layout lead library license limit
log loop manual map market menu merge metric migration mobile model module monitor newsletter node note
notebook order owner package page palette parser partner patch payment permission phone pipeline plan player
plugin policy port post preview price printer profile prompt proposal prototype query queue quota receipt
record region release report repo request review roadmap role route runbook runner sample schedule schema
screen script sdk search secret sensor server service session setting shader sheet shipment signal sketch slide
snapshot source spec sprint staging storage store story stream style supplier survey sync table tag task tax
team template test ticket timeline token tool trace tracker training transcript upload user vendor version
video volunteer warehouse webhook widget wiki worker workflow use keep prefer avoid check run send store pin
track ship write log split nightly internal shared legacy public private weekly monthly local remote main
"""
_GLUE = ("the", "the", "the", "a", "to", "to", "for", "in", "in", "with", "and", "and", "on", "of", "before", "when")
_SYLLABLES = "ka ri mo ve lan tor qui sel bra dun fen gal hol ix jor kep lum nar os pim rud sav tel umb vor wex yal zin"


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    """Everyday words first (the most frequent), then invented words, names and identifiers."""
    syllables = _SYLLABLES.split()
    invented: set[str] = set()
    while len(invented) < size:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        shape = rng.random()
        if shape < 0.15:
            word = word.capitalize()
        elif shape < 0.22:
            word = f"{word}-{rng.choice(syllables)}{rng.randint(1, 99)}"
        invented.add(word)
    return _EVERYDAY_TEXT.split() + sorted(invented)


def _sentence(rng: random.Random, vocabulary: Sequence[str], weights: Sequence[float], length: int) -> str:
    words = rng.choices(vocabulary, cum_weights=weights, k=length)
    out = [w if rng.random() < 0.6 else f"{rng.choice(_GLUE)} {w}" for w in words]
    if rng.random() < 0.4:
        number = rng.choice((str(rng.randint(2, 500)), f"{rng.randint(1, 9)}.{rng.randint(0, 9)}"))
        out.insert(rng.randrange(len(out)), number)
    if rng.random() < 0.15:
        out.append(f"by {rng.choice((2025, 2026))}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
    return " ".join(out)


def _memory(rng: random.Random, key: str, vocabulary: Sequence[str], weights: Sequence[float]) -> MemoryText:
    kind = rng.choice(("user", "feedback", "project", "reference"))
    description = _sentence(rng, vocabulary, weights, rng.randint(5, 10)).capitalize()
    sentences = [_sentence(rng, vocabulary, weights, rng.randint(6, 14)).capitalize() + "." for _ in range(2)]
    body = " ".join(sentences)
    if kind in ("feedback", "project"):
        why = _sentence(rng, vocabulary, weights, rng.randint(5, 10))
        how = _sentence(rng, vocabulary, weights, rng.randint(5, 10))
        body += f"\n\n**Why:** {why}.\n**How to apply:** {how}."
    name = "-".join(re.findall(r"[a-z0-9]+", description.lower())[:4])
    return MemoryText(key, name, description, body, kind)


def _reworded(rng: random.Random, original: MemoryText, key: str) -> MemoryText:
    """The same memory said again: sentences reordered, a few words dropped, the facts kept."""
    sentences = re.split(r"(?<=[.;])\s+", original.body)
    rng.shuffle(sentences)
    body = " ".join(w for w in " ".join(sentences).split() if rng.random() > 0.1 or w[0].isdigit())
    return MemoryText(key, original.name + "-again", original.description, body, original.type)


def synthetic_folder(size: int, seed: int = 7) -> list[MemoryText]:
    """`size` generated memories, the same ones for the same seed."""
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng, 20_000)
    # Zipf-Mandelbrot frequencies: the flattened head is what content words look like once stopwords are gone.
    weights = list(itertools.accumulate(1 / (rank + 100) for rank in range(len(vocabulary))))
    items = [_memory(rng, f"m{i:05d}.md", vocabulary, weights) for i in range(size)]
    for i in rng.sample(range(size), max(1, size // 100)):
        items[i] = _reworded(rng, items[i - 1], f"m{i:05d}.md")
    return items


def write_folder(folder: Path, size: int, seed: int = 7) -> None:
    """`size` memory files under `folder` (created), with dates and some importances, and a MEMORY.md
    holding only a heading (so the first `memdir index` has everything to add)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    start = dt.date(2025, 1, 1)
    for i, item in enumerate(synthetic_folder(size, seed)):
        day = start + dt.timedelta(days=rng.randrange(690))
        importance = f"importance: {rng.choice((0.2, 0.5, 0.8))}\n" if i % 3 == 0 else ""
        name = f"{item.name}-{i}"
        (folder / f"{item.type}_{name}.md").write_text(
            f"---\nname: {name}\ndescription: {item.description}\ntype: {item.type}\n"
            f"created: {day}\nupdated: {day}\n{importance}---\n{item.body}\n",
            encoding="utf-8",
        )
    (folder / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
