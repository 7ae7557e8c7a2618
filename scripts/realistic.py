"""Generated memory folders whose text follows real memories' statistics, for benchmarks; seeded.

    python scripts/realistic.py [--corpus DIR] [--size N] [--seed S] FOLDER   # write a folder
    python scripts/realistic.py --stats [--corpus DIR]                          # print the statistics

The statistics come from the real folders in `../shared/corpus/real/` (beside the repository), read
at run time; none of their text is kept in the repository. From each real memory file it takes a
record of its shape, and no words: its language (by script, and by common words among Latin
languages), its body and description lengths, its type and where the type sits (top level or under
`metadata:`), the other frontmatter fields and the kind of value each holds (uuid, timestamp, date,
number, words), whether its name is a slug or a title, its Why/How label forms (`**Why:**`,
a full-width colon, `**Pourquoi :**` ...) and the sizes of its fenced code blocks. From the bodies it builds,
per language, a bigram model over tokens (words; single characters for Han and kana, which are
written without spaces; line breaks as tokens, so bullets and headings keep their place), and one
more over the lines of fenced code. A generated memory draws a record (so lengths, languages, types
and shapes keep their real mix and their joint distribution) and then its words from the models,
with 1% reworded copies of another memory planted as near-duplicates, as scripts/synthetic.py does.

When the corpus is absent it falls back to scripts/synthetic.py, and says so (`describe`).
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import datetime as dt
import functools
import itertools
import random
import re
import sys
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from memdir.core.config import DEFAULT_HOW_LABELS, DEFAULT_WHY_LABELS  # noqa: E402
from memdir.core.errors import InvalidMemory  # noqa: E402
from memdir.core.model import FrontmatterError, parse_document, slugify, yaml_scalar  # noqa: E402
from memdir.lint.body import label_pattern  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "real"

# Han and kana are written without spaces: one token a character, glued to the one before.
_CJK_CHAR = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"\n|[ \t]*(?:[{_CJK_CHAR}]|[^\s{_CJK_CHAR}]+)")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d")
_DAY = re.compile(r"\d{4}-\d\d-\d\d")
_SLUG = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")
# Fields whose values are a closed set of labels, not prose: kept as they are.
_LABEL_FIELDS = frozenset({"type", "node_type", "status", "source", "namespace"})
_LATIN_WORDS = {
    "es": frozenset(["el", "la", "los", "las", "que", "de", "del", "para", "por", "con", "una", "es", "se"]),
    "fr": frozenset(["le", "la", "les", "des", "est", "et", "pour", "dans", "une", "pas", "sur", "du", "au"]),
    "en": frozenset(["the", "and", "to", "of", "is", "for", "in", "on", "with", "that", "it", "be", "not"]),
}
_WHY = label_pattern(DEFAULT_WHY_LABELS)
_HOW = label_pattern(DEFAULT_HOW_LABELS)
_BOS = "\n"  # a model's state at the start of a line


def language(text: str) -> str:
    """A memory's language, as far as the bigram models need one: by script, then by common words."""
    counts: Counter[str] = Counter()
    for ch in text:
        if "\uac00" <= ch <= "\ud7af":
            counts["ko"] += 1
        elif "\u3040" <= ch <= "\u30ff":
            counts["ja"] += 1
        elif "\u4e00" <= ch <= "\u9fff":
            counts["zh"] += 1
        elif "\u0400" <= ch <= "\u04ff":
            counts["ru"] += 1
        elif (ch.isascii() and ch.isalpha()) or "\u00c0" <= ch <= "\u024f":
            counts["latin"] += 1
    if counts["ja"] * 10 > counts["zh"] and counts["ja"] > 20:
        return "ja"
    # Han characters carry a word each, Latin letters a fifth of one: weigh them so.
    weighted = {k: v * (5 if k in ("zh", "ko", "ja") else 1) for k, v in counts.items()}
    top = max(weighted, key=lambda k: weighted[k], default="latin")
    if top != "latin":
        return top
    words = Counter(w for w in re.findall(r"[a-zà-ÿ]+", text.lower()))
    return max(_LATIN_WORDS, key=lambda lang: (sum(words[w] for w in _LATIN_WORDS[lang]), lang == "en"))


@dataclass
class Shape:
    """What one real memory file looks like, without its words."""

    language: str
    body_chars: int
    description_chars: int | None  # None: no description field
    name: str  # "slug", "title", "empty" or "none"
    name_chars: int
    type_prefix: bool  # the file name starts with `<type>_`
    fields: list[tuple[str, Any]]  # top-level fields after name/description, in order: (key, kind)
    why: list[str] = field(default_factory=list)  # label forms, as written (markup, no text)
    how: list[str] = field(default_factory=list)
    fences: list[int] = field(default_factory=list)  # line counts of fenced code blocks
    has_frontmatter: bool = True


def _kind(key: str, value: Any) -> Any:
    """The kind of a frontmatter value: enough to write another of the same shape, not its text."""
    if isinstance(value, dict):
        return {k: _kind(k, v) for k, v in value.items()}
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, int | float):
        return ("literal", value)
    if isinstance(value, dt.datetime):
        return ("timestamp", None)
    if isinstance(value, dt.date):
        return ("date", None)
    if isinstance(value, list):
        return ("list", len(value))
    text = str(value)
    if key in _LABEL_FIELDS and len(text) <= 20 and " " not in text:
        return ("literal", text)
    if _UUID.fullmatch(text):
        return ("uuid", None)
    if _TIMESTAMP.match(text):
        return ("timestamp", text.endswith("Z"))
    if _DAY.fullmatch(text):
        return ("date", None)
    return ("words", len(text))


class Bigrams:
    """A bigram model over tokens: for each token, the tokens that follow it and how often."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter[str]] = {}

    def add(self, tokens: list[str]) -> None:
        for prev, nxt in itertools.pairwise([_BOS, *tokens]):
            self.counts.setdefault(prev, Counter())[nxt] += 1

    @functools.cached_property
    def table(self) -> dict[str, tuple[list[str], list[int]]]:
        return {prev: (list(after), list(itertools.accumulate(after.values()))) for prev, after in self.counts.items()}

    def vocabulary(self) -> int:
        return len({t.strip() for after in self.counts.values() for t in after})

    def words(self, rng: random.Random, chars: int, *, one_line: bool = False, start: str = _BOS) -> str:
        """About `chars` characters of text walked from `start`."""
        table = self.table
        out: list[str] = []
        size = 0
        prev = start
        while size < chars:
            after = table.get(prev) or table[_BOS]
            tokens, cumulative = after
            token = tokens[bisect.bisect_right(cumulative, rng.random() * cumulative[-1])]
            prev = token
            if one_line and token == "\n":
                continue
            if not out and token != "\n":
                token = token.lstrip()
            out.append(token)
            size += len(token)
        return "".join(out)


@dataclass
class CorpusStats:
    root: Path
    shapes: list[Shape]
    prose: dict[str, Bigrams]
    code: Bigrams
    skipped: int  # files whose frontmatter no parser reads
    folders: int

    def describe(self) -> list[str]:
        """The statistics, in a few lines (for BENCHMARKS.md)."""
        n = len(self.shapes)
        langs = Counter(s.language for s in self.shapes)
        types = Counter(_type_of(s) or "(none)" for s in self.shapes)
        nested = sum(1 for s in self.shapes if any(k == "metadata" and isinstance(v, dict) for k, v in s.fields))
        bodies = sorted(s.body_chars for s in self.shapes)
        descriptions = sorted(s.description_chars for s in self.shapes if s.description_chars is not None)
        labelled = sum(1 for s in self.shapes if s.why or s.how)
        fenced = sum(1 for s in self.shapes if s.fences)
        tokens = sum(sum(c.values()) for m in self.prose.values() for c in m.counts.values())

        def share(counter: Counter[str]) -> str:
            return ", ".join(f"{k} {v / n:.0%}" for k, v in counter.most_common())

        return [
            f"{n} memory files from {self.folders} real folders ({self.skipped} unreadable skipped), "
            f"{tokens:,} body tokens, vocabulary "
            + ", ".join(f"{lang} {m.vocabulary():,}" for lang, m in sorted(self.prose.items())),
            f"languages: {share(langs)}",
            f"types: {share(types)}; type nested under `metadata:` in {nested / n:.0%}",
            f"body length median {bodies[n // 2]:,} characters (max {bodies[-1]:,}); description median "
            f"{descriptions[len(descriptions) // 2]} characters; Why/How labels in {labelled / n:.0%}, "
            f"fenced code in {fenced / n:.0%}",
        ]


def _type_of(shape: Shape) -> str | None:
    for key, kind in shape.fields:
        if key == "type" and kind[0] == "literal":
            return str(kind[1])
        if key == "metadata" and isinstance(kind, dict) and "type" in kind and kind["type"][0] == "literal":
            return str(kind["type"][1])
    return None


def _memory_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*.md")
        if p.name != "MEMORY.md" and not any(part.startswith(".") for part in p.parts[len(root.parts) :])
    )


def _split_body(body: str) -> tuple[list[str], list[list[str]], list[str], list[str], list[int]]:
    """Prose lines (labels taken off), code blocks' lines, Why and How label forms, fence sizes."""
    prose: list[str] = []
    blocks: list[list[str]] = []
    why: list[str] = []
    how: list[str] = []
    fence: str | None = None
    for line in body.split("\n"):
        opener = _FENCE.match(line)
        if fence is not None:
            if opener and opener.group(1)[0] == fence[0] and not line[opener.end() :].strip():
                fence = None
            else:
                blocks[-1].append(line)
            continue
        if opener:
            fence = opener.group(1)
            blocks.append([])
            continue
        for pattern, forms in ((_WHY, why), (_HOW, how)):
            found = pattern.match(line)
            if found:
                end = found.end()
                shut = re.match(r"[ \t]*(?:\*\*|__)", line[end:])
                end += shut.end() if shut else 0
                forms.append(line[:end].strip())
                line = line[end:]
                break
        prose.append(line)
    return prose, blocks, why, how, [len(b) for b in blocks]


def tokens(lines: list[str]) -> list[str]:
    return _TOKEN.findall("\n".join(lines))


@functools.cache
def load(root: Path = CORPUS) -> CorpusStats | None:
    """The statistics of the real folders under `root`, or None when it is absent or empty."""
    if not root.is_dir():
        return None
    shapes: list[Shape] = []
    prose: dict[str, Bigrams] = {}
    code = Bigrams()
    skipped = 0
    folders: set[str] = set()
    for path in _memory_files(root):
        try:
            text = path.read_text(encoding="utf-8")
            doc = parse_document(text)
        except (OSError, UnicodeDecodeError, FrontmatterError):
            skipped += 1
            continue
        inside = path.relative_to(root).parts
        folders.add(inside[0] if len(inside) > 1 else ".")  # files right under root: one folder
        body = doc.body
        lines, blocks, why, how, fences = _split_body(body)
        lang = language(body)
        prose.setdefault(lang, Bigrams()).add(tokens(lines))
        for block in blocks:
            code.add(tokens(block))
        data = doc.data
        name = data.get("name")
        name_kind = (
            "none" if name is None else "empty" if not str(name).strip()
            else "slug" if _SLUG.fullmatch(str(name)) else "title"
        )  # fmt: skip
        description = data.get("description")
        fields = [(k, _kind(k, v)) for k, v in data.items() if k not in ("name", "description")]
        type_ = next((str(v[1]) for k, v in fields if k == "type" and v[0] == "literal"), None)
        shapes.append(
            Shape(
                language=lang,
                body_chars=len(body),
                description_chars=None if description is None else len(str(description)),
                name=name_kind,
                name_chars=len(str(name or "")),
                type_prefix=bool(type_) and path.name.startswith(f"{type_}_"),
                fields=fields,
                why=why,
                how=how,
                fences=fences,
                has_frontmatter=doc.has_frontmatter,
            )
        )
    if not shapes:
        return None
    return CorpusStats(root, shapes, prose, code, skipped, len(folders))


# --- generation ------------------------------------------------------------------------------

_START = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


def _value(rng: random.Random, kind: Any, words: Bigrams) -> Any:
    if isinstance(kind, dict):
        return {k: _value(rng, v, words) for k, v in kind.items()}
    what, detail = kind
    if what == "literal":
        return detail
    if what == "uuid":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    when = _START + dt.timedelta(seconds=rng.randrange(690 * 86400))
    if what == "timestamp":
        return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rng.randrange(1000):03d}" + ("Z" if detail else "")
    if what == "date":
        return when.date().isoformat()
    if what == "list":
        return [words.words(rng, rng.randint(4, 12), one_line=True).strip() for _ in range(detail)]
    return words.words(rng, detail, one_line=True).strip()


def _frontmatter_lines(key: str, value: Any, indent: str = "") -> list[str]:
    if isinstance(value, dict):
        out = [f"{indent}{key}:"]
        for k, v in value.items():
            out += _frontmatter_lines(k, v, indent + "  ")
        return out
    return [f"{indent}{key}: {yaml_scalar(value)}"]


def _body(rng: random.Random, shape: Shape, stats: CorpusStats) -> str:
    words = stats.prose[shape.language]
    code_chars = 0
    blocks: list[str] = []
    for lines in shape.fences:
        fence = ["```", *stats.code.words(rng, 40 * lines).split("\n")[:lines], "```"]
        blocks.append("\n".join(fence))
        code_chars += sum(len(x) + 1 for x in fence)
    prose_chars = max(20, shape.body_chars - code_chars)
    labels = (
        [*zip(shape.why, shape.how, strict=False)]
        or ([(shape.why[0], "")] if shape.why else [])
        or ([("", shape.how[0])] if shape.how else [])
    )
    parts = [words.words(rng, prose_chars // (1 + 2 * len(labels)) if labels else prose_chars)]
    for why, how in labels:
        for label in (why, how):
            if label:
                parts.append(f"{label} " + words.words(rng, prose_chars // (1 + 2 * len(labels)), one_line=True))
    body = "\n\n".join(p.strip("\n") for p in parts)
    for block in blocks:  # at a line break, as a person puts one
        breaks = [m.start() for m in re.finditer("\n", body)] or [len(body)]
        at = rng.choice(breaks)
        body = f"{body[:at]}\n{block}\n{body[at:]}"
    return "\n" + body.strip("\n") + "\n"


def _name(rng: random.Random, shape: Shape, words: Bigrams, i: int) -> str | None:
    if shape.name == "none":
        return None
    if shape.name == "empty":
        return ""
    text = words.words(rng, max(3, shape.name_chars), one_line=True).strip()
    if shape.name == "slug":
        try:
            text = slugify(text)
        except InvalidMemory:
            text = "memory"
        return f"{text[:60]}-{i}"
    return f"{text[:80]} {i}"


def _reworded(rng: random.Random, body: str) -> str:
    """The same memory said again: its body's lines reordered and a tenth of its words dropped."""
    lines = body.strip("\n").split("\n")
    rng.shuffle(lines)
    return "\n" + "\n".join(" ".join(w for w in line.split(" ") if rng.random() > 0.1) for line in lines) + "\n"


def _render(fields: list[tuple[str, Any]] | None, body: str) -> str:
    if fields is None:  # no frontmatter, and none that a first `---` line would start by chance
        body = body.lstrip("\n")
        return f"# Notes\n{body}" if body.startswith("---") else body
    lines = ["---"]
    for key, value in fields:
        lines += _frontmatter_lines(key, value)
    return "\n".join([*lines, "---"]) + body


def realistic_files(size: int, seed: int = 7, stats: CorpusStats | None = None) -> list[tuple[str, str]]:
    """(file name, text) of `size` generated memories, the same for the same seed and corpus."""
    stats = stats or load()
    assert stats is not None
    rng = random.Random(seed)
    drafts: list[tuple[str, list[tuple[str, Any]] | None, str]] = []  # file name, frontmatter, body
    for i in range(size):
        shape = rng.choice(stats.shapes)
        words = stats.prose[shape.language]
        body = _body(rng, shape, stats)
        if not shape.has_frontmatter:
            drafts.append((f"notes-{i}.md", None, body))
            continue
        name = _name(rng, shape, words, i)
        fields: list[tuple[str, Any]] = [] if name is None else [("name", name)]
        if shape.description_chars is not None:
            fields.append(("description", words.words(rng, shape.description_chars, one_line=True).strip()))
        fields += [(key, _value(rng, kind, words)) for key, kind in shape.fields]
        stem = f"memory-{i}"
        with contextlib.suppress(InvalidMemory):  # a name with no letters or digits keeps memory-<i>
            stem = slugify(name or "")[-60:] if name else stem
        type_ = _type_of(shape)
        drafts.append((f"{type_}_{stem}.md" if shape.type_prefix else f"{stem}.md", fields, body))
    # 1% planted near-duplicates: a memory said again in other words, as in scripts/synthetic.py.
    typed = [i for i, (_, given, _) in enumerate(drafts) if given is not None]
    for at in rng.sample(range(1, len(typed)), min(len(typed) - 1, max(1, size // 100))):
        i = typed[at]
        _, said, text = drafts[typed[at - 1]]
        assert said is not None
        renamed = [(k, f"{v} again" if k == "name" and v else v) for k, v in said]
        drafts[i] = (drafts[i][0], renamed, _reworded(rng, text))
    return [(file_name, _render(given, text)) for file_name, given, text in drafts]


def write_folder(folder: Path, size: int, seed: int = 7, corpus: Path = CORPUS) -> list[str]:
    """`size` memory files under `folder` (created) and a MEMORY.md holding only a heading; returns
    lines saying which generator and statistics were used (the real corpus's, else synthetic.py's)."""
    stats = load(corpus)
    if stats is None:
        from scripts.synthetic import write_folder as synthetic_folder

        synthetic_folder(folder, size, seed)
        return [f"`scripts/synthetic.py` (no real corpus at {corpus})"]
    folder.mkdir(parents=True)
    for name, text in realistic_files(size, seed, stats):
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    shown = corpus.resolve().relative_to(REPO.parent) if corpus.resolve().is_relative_to(REPO.parent) else corpus
    return [f"`scripts/realistic.py`, statistics of `{shown}`:", *stats.describe()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, nargs="?")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--stats", action="store_true", help="print the corpus statistics and exit")
    args = parser.parse_args()
    if args.stats or args.folder is None:
        stats = load(args.corpus)
        print("\n".join(stats.describe()) if stats else f"no corpus at {args.corpus}")
        return
    print("\n".join(write_folder(args.folder, args.size, args.seed, args.corpus)))


if __name__ == "__main__":
    main()
