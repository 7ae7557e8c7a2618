"""The stored term index: what recall knows of each memory, kept in `.memdir/recall-index` between
runs and rebuilt per changed file.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import mmap
import os
import time
import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.core.age import Age, FolderAges
from memdir.core.cache import RACY_SECONDS, ParseCache
from memdir.core.model import Memory, exclusion, name_key
from memdir.core.store import (
    STATE_DIR,
    FileProblem,
    ensure_state_dir,
    list_files,
    load_file,
    state_dir,
    write_state_file,
)
from memdir.text.bulk import paused_gc

# The terms duplicate detection uses, made the same way (and as fast).
from memdir.text.words import is_cjk, term_list

if TYPE_CHECKING:
    from memdir.folder import MemoryDir


INDEX_FILE = "recall-index"
# BM25F. The head is the memory's claim in one line: a word there says more than one in the body.
_K1 = 1.2
_HEAD_WEIGHT, _BODY_WEIGHT = 2.0, 1.0
_HEAD_B, _BODY_B = 0.5, 0.75  # length normalisation: heads are all about as long, bodies are not
MIN_FOLDER = 100  # folders smaller than this get the IDF of a folder this size (see idf)


# --- the index: what recall knows of each memory, kept in .memdir/ between runs --------------------


@dataclass(frozen=True)
class IndexedDoc:
    """What recall needs of one memory besides its terms."""

    path: str
    name: str
    type: str
    description: str
    importance: float
    date: str  # ISO date of `updated` (else `created`...), "" when the frontmatter states none
    status: str
    superseded_by: str
    expires: str  # ISO date or ""
    successor: int  # index of the memory `superseded_by` names, -1 when none is found

    def to_json(self) -> list[Any]:
        return [getattr(self, name) for name in _DOC_FIELDS]

    @classmethod
    def from_json(cls, row: list[Any]) -> IndexedDoc:
        return cls(*row)

    def exclusion(self, today: dt.date) -> str | None:
        expires = dt.date.fromisoformat(self.expires) if self.expires else None
        return exclusion(self.status, bool(self.superseded_by), expires, today)


_DOC_FIELDS = tuple(IndexedDoc.__dataclass_fields__)
Posting = tuple[int, int, int]  # memory, times in its head, times in its body


class TermIndex:
    """The terms of every memory and the statistics BM25F needs. `_Built` holds them in memory as a run
    builds them, `_Stored` reads them from the index file; both answer through these methods."""

    n: int
    average_head: float
    average_body: float
    # (path, why) of the files that could not be read as memories, so nothing searched is silently
    # missing: what the index met while loading, then (load_index) what the listing found.
    unreadable: list[tuple[str, str]]
    # Each memory's age, from the mtimes load_index has just listed: never stored, so never stale.
    ages: FolderAges

    def age(self, i: int) -> Age:
        """Memory i's age (memdir.core.age): its stored frontmatter date, else what its file says now."""
        doc = self.doc(i)
        return self.ages.age(doc.path, dt.date.fromisoformat(doc.date) if doc.date else None)

    def postings(self, term: str) -> list[Posting]:
        """The memories containing `term`; a pair "a_b" is found by checking adjacency in the memories
        that contain both words, so pairs need no room in the index."""
        if "_" not in term:
            return self._postings(term)
        first, second = term.split("_", 1)
        both = {i for i, _, _ in self._postings(first)} & {i for i, _, _ in self._postings(second)}
        found = []
        for i in sorted(both):
            head, body = self.terms(i)
            in_head, in_body = _adjacent(head, first, second), _adjacent(body, first, second)
            if in_head or in_body:
                found.append((i, in_head, in_body))
        return found

    def weight(self, i: int, in_head: int, in_body: int) -> float:
        """BM25F's saturated term frequency of a term found `in_head` and `in_body` times in memory i."""
        head_length, body_length = self.lengths(i)
        tf = _HEAD_WEIGHT * in_head / (1 - _HEAD_B + _HEAD_B * head_length / self.average_head)
        tf += _BODY_WEIGHT * in_body / (1 - _BODY_B + _BODY_B * body_length / self.average_body)
        return tf * (_K1 + 1) / (tf + _K1)

    @property
    def idf_max(self) -> float:
        return idf(1, self.n)

    def _postings(self, term: str) -> list[Posting]:
        raise NotImplementedError

    def df(self, term: str) -> int:
        """How many memories contain the word `term` (not a pair)."""
        return len(self._postings(term))

    def terms(self, i: int) -> tuple[list[str], list[str]]:
        raise NotImplementedError

    def lengths(self, i: int) -> tuple[int, int]:
        raise NotImplementedError

    def doc(self, i: int) -> IndexedDoc:
        raise NotImplementedError


def _adjacent(terms: Sequence[str], first: str, second: str) -> int:
    """How often `second` is the next word after `first` in `terms`, CJK terms (characters and
    bigrams, which sit between the words of a mixed text) skipped. Only the terms after each
    `first` are looked at: a pair in a query is checked against every memory holding both words."""
    if is_cjk(first):
        return 0
    count, at, end = 0, -1, len(terms)
    while True:
        try:
            at = terms.index(first, at + 1)
        except ValueError:
            return count
        after = at + 1
        while after < end and is_cjk(terms[after]):
            after += 1
        count += after < end and terms[after] == second


class _Built(TermIndex):
    """The index of a folder as this process built it (from the files, the parse cache and the old index)."""

    def __init__(
        self,
        docs: list[IndexedDoc],
        terms: list[tuple[list[str], list[str]]],
        files: list[list[Any]],
        unreadable: list[tuple[str, str]],
    ) -> None:
        self.docs, self.term_lists, self.files = docs, terms, files  # files: [rel, key or None, doc or -1]
        self.unreadable = unreadable
        self.n = len(docs)
        self.average_head = _average(len(h) for h, _ in terms)
        self.average_body = _average(len(b) for _, b in terms)
        table: dict[str, list[Posting]] = defaultdict(list)
        for i, (head, body) in enumerate(terms):
            in_head, in_body = _count(head), _count(body)
            for term in in_head.keys() | in_body.keys():
                table[term].append((i, in_head.get(term, 0), in_body.get(term, 0)))
        self.table = dict(table)

    def _postings(self, term: str) -> list[Posting]:
        return self.table.get(term, [])

    def terms(self, i: int) -> tuple[list[str], list[str]]:
        return self.term_lists[i]

    def lengths(self, i: int) -> tuple[int, int]:
        head, body = self.term_lists[i]
        return len(head), len(body)

    def doc(self, i: int) -> IndexedDoc:
        return self.docs[i]

    def encode(self, digest: str) -> bytes:
        """The index file: a magic line, a header, then sections the reader finds by their sizes."""
        from memdir.version import __version__

        def lines(rows: Iterable[Any]) -> tuple[bytes, list[int]]:
            encoded = [json.dumps(row, ensure_ascii=True, separators=(",", ":")).encode() + b"\n" for row in rows]
            return b"".join(encoded), list(itertools.accumulate((len(line) for line in encoded), initial=0))[:-1]

        files = json.dumps(self.files, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"
        terms, term_offsets = lines(" ".join(h) + "\t" + " ".join(b) for h, b in self.term_lists)
        docs, doc_offsets = lines(doc.to_json() for doc in self.docs)
        lengths = [n for head, body in self.term_lists for n in (len(head), len(body))]
        tables = json.dumps([term_offsets, doc_offsets, lengths], separators=(",", ":")).encode() + b"\n"
        postings = "".join(
            f"{term}\t{' '.join(f'{i}:{h}:{b}' for i, h, b in self.table[term])}\n"
            for term in sorted(self.table, key=str.encode)
        ).encode()
        sections = [files, terms, docs, tables, postings]
        header = {
            "memdir": __version__,
            "digest": digest,
            "n": self.n,
            "average": [self.average_head, self.average_body],
            "sizes": [len(s) for s in sections],
            "unreadable": self.unreadable,
        }
        return b"".join([_MAGIC, json.dumps(header, separators=(",", ":")).encode(), b"\n", *sections])


def _average(lengths: Iterable[int]) -> float:
    """A field's average length for BM25's length norm; 1.0 when there is nothing to average or every
    field is empty (a folder of memories without bodies), which would otherwise divide by zero. Any
    non-zero value does: an empty field has no terms to weigh."""
    counted = list(lengths)
    return sum(counted) / len(counted) if counted and any(counted) else 1.0


def _count(terms: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for term in terms:
        counts[term] += 1
    return counts


_MAGIC = b"memdir recall index 3\n"  # bump when what is stored or how terms are made changes


class _Stored(TermIndex):
    """An index file as `_Built.encode` wrote it, mapped into memory and searched in place.

    Postings lines are sorted by term, so a query term is found by binary search over the bytes, and
    only the lines a query needs, and the memories that match, are ever decoded."""

    def __init__(self, data: mmap.mmap | bytes, header: dict[str, Any], start: int) -> None:
        self.data = data
        self.n = int(header["n"])
        self.average_head, self.average_body = (float(x) or 1.0 for x in header["average"])
        self.unreadable = [(str(path), str(why)) for path, why in header["unreadable"]]
        bounds = list(itertools.accumulate(header["sizes"], initial=start))
        self.files_at, self.terms_at, self.docs_at, self.tables_at, self.postings_at, self.end = bounds
        if self.end != len(data):
            raise ValueError("truncated recall index")
        self._tables: tuple[list[int], list[int], list[int]] | None = None
        self._docs: dict[int, IndexedDoc] = {}

    @classmethod
    def read(cls, path: Path) -> tuple[_Stored, str]:
        """The index at `path` and the digest it was built for. Raises OSError (NotRegularFile for a
        named pipe or the like, which must not be opened blocking) or ValueError."""
        from memdir.core.store import open_state_file
        from memdir.version import __version__

        with open_state_file(path) as handle:
            try:  # mapped, not read: a query touches a few pages of a file that may be megabytes
                data: mmap.mmap | bytes = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # an empty file, or a file system without mmap
                data = handle.read()
        if data[: len(_MAGIC)] != _MAGIC:
            raise ValueError("not a recall index")
        end = data.find(b"\n", len(_MAGIC))
        header = json.loads(data[len(_MAGIC) : end])
        if header.get("memdir") != __version__:
            raise ValueError("another version's index")
        return cls(data, header, end + 1), str(header["digest"])

    @property
    def tables(self) -> tuple[list[int], list[int], list[int]]:
        if self._tables is None:
            term_offsets, doc_offsets, lengths = json.loads(self.data[self.tables_at : self.postings_at])
            self._tables = term_offsets, doc_offsets, lengths
        return self._tables

    def _postings(self, term: str) -> list[Posting]:
        found = self._line(term)
        if found is None:
            return []
        out = []
        for posting in self.data[found[0] : found[1]].split():
            i, h, b = posting.split(b":")
            out.append((int(i), int(h), int(b)))
        return out

    def df(self, term: str) -> int:
        found = self._line(term)
        return 0 if found is None else self.data[found[0] : found[1]].count(b" ") + 1  # no decoding

    def _line(self, term: str) -> tuple[int, int] | None:
        """Where the postings of `term` are in the file (a binary search of its sorted lines), if there."""
        key, data = term.encode(), self.data
        lo, hi = self.postings_at, self.end
        while lo < hi:  # lo is always the start of a line
            mid = (lo + hi) // 2
            start = data.rfind(b"\n", lo, mid) + 1 or lo
            stop = data.find(b"\n", start, self.end)
            tab = data.find(b"\t", start, stop)
            found = data[start:tab]
            if found == key:
                return tab + 1, stop
            if found < key:
                lo = stop + 1
            else:
                hi = start
        return None

    def terms(self, i: int) -> tuple[list[str], list[str]]:
        start = self.terms_at + self.tables[0][i]
        head, _, body = json.loads(self.data[start : self.data.find(b"\n", start)]).partition("\t")
        return head.split(), body.split()

    def lengths(self, i: int) -> tuple[int, int]:
        lengths = self.tables[2]
        return lengths[2 * i], lengths[2 * i + 1]

    def doc(self, i: int) -> IndexedDoc:
        if i not in self._docs:
            start = self.docs_at + self.tables[1][i]
            self._docs[i] = IndexedDoc.from_json(json.loads(self.data[start : self.data.find(b"\n", start)]))
        return self._docs[i]

    def reusable(self) -> dict[str, tuple[list[Any], IndexedDoc | None, tuple[list[str], list[str]] | None]]:
        """rel -> (key, doc, terms) of every file this index was built from, for an incremental rebuild."""
        out: dict[str, tuple[list[Any], IndexedDoc | None, tuple[list[str], list[str]] | None]] = {}
        for rel, key, i in json.loads(self.data[self.files_at : self.terms_at]):
            if key is not None:
                out[rel] = (key, None, None) if i < 0 else (key, self.doc(i), self.terms(i))
        return out


def idf(df: int, n: int) -> float:
    """BM25's IDF, with a folder of fewer than MIN_FOLDER memories counted as that many: in a folder
    of three, a word in two of them is not common, only unlucky; the general-language prior is what
    says how common a word is there."""
    n = max(n, MIN_FOLDER)
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def _doc_of(memory: Memory) -> tuple[IndexedDoc, tuple[list[str], list[str]]]:
    date = memory.last_changed
    doc = IndexedDoc(
        path=memory.path,
        name=memory.title,
        type=memory.type.value if memory.type else "",
        description=memory.description,
        importance=memory.importance,
        date=date.isoformat() if date else "",
        status=memory.status,
        superseded_by=" ".join(str(memory.fields.get("superseded_by") or "").split()),
        expires=memory.expires.isoformat() if memory.expires else "",
        successor=-1,
    )
    return doc, (term_list(f"{memory.name}\n{memory.description}"), term_list(memory.body))


def _link_successors(docs: list[IndexedDoc]) -> list[IndexedDoc]:
    """Resolve each `superseded_by` (a file name, path or memory name) to the memory it names."""
    if not any(doc.superseded_by for doc in docs):
        return docs
    by_key: dict[str, int] = {}
    for i, doc in enumerate(docs):  # least specific first, so that a path beats a name
        by_key.setdefault(f"name:{name_key(doc.name)}", i)
        by_key.setdefault(f"stem:{Path(doc.path).stem}", i)
        by_key.setdefault(f"file:{Path(doc.path).name}", i)
    for i, doc in enumerate(docs):
        by_key[f"path:{doc.path}"] = i
    linked = []
    for doc in docs:
        successor = -1
        if doc.superseded_by:
            wanted = doc.superseded_by.removeprefix("./")
            keys = (f"path:{wanted}", f"file:{Path(wanted).name}", f"stem:{Path(wanted).stem}")
            for key in (*keys, f"name:{name_key(wanted)}"):
                if key in by_key:
                    successor = by_key[key]
                    break
        linked.append(doc if successor == doc.successor else replace(doc, successor=successor))
    return linked


Listed = list[tuple[str, str, list[int] | None]]  # (rel, path, key) of each file; key None: could not stat


def _listed(root: Path) -> tuple[Listed, list[tuple[str, str]]]:
    """Every candidate memory file, as `scan` lists them, with its key (size, mtime, ctime, inode); and
    the entries that are problems in themselves (a symlink out of the folder, a named pipe)."""
    out: Listed = []
    problems: list[tuple[str, str]] = []
    for item in list_files(root):
        if isinstance(item, FileProblem):
            problems.append((item.path, item.message))
            continue
        rel, path = item
        try:
            status = os.stat(path, follow_symlinks=False)
            out.append((rel, path, [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]))
        except OSError:
            out.append((rel, path, None))
    return out, problems


def _digest(listed: Listed) -> str:
    """Whether the listing changed since the index was stored. Not a defence against anyone: two
    checksums and the length tell a changed listing apart, and zlib is loaded already, where hashlib's
    OpenSSL would cost every prompt hook a tenth of its start-up."""
    data = "".join(f"{rel}\0{key}\n" for rel, _, key in listed).encode("utf-8", "surrogateescape")
    return f"{len(data):x}-{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def load_index(folder: MemoryDir) -> TermIndex:
    """The recall index of `folder`: from `.memdir/recall-index` when no file changed since it was
    written, else rebuilt (re-reading only the files that changed) and written back. With the folder's
    cache off, built from the files and not written."""
    listed, listing_problems = _listed(folder.root)
    digest = _digest(listed)
    ages = FolderAges(folder.root, {rel: key[1] / 1e9 for rel, _, key in listed if key is not None})
    path = (state_dir(folder.root) if folder.cache else folder.root / STATE_DIR) / INDEX_FILE
    old: _Stored | None = None
    if folder.cache:
        try:
            old, old_digest = _Stored.read(path)
            if old_digest == digest:
                old.unreadable = listing_problems + old.unreadable
                old.ages = ages
                return old
        except (OSError, ValueError, LookupError, TypeError):
            old = None  # missing, corrupt or another version's: rebuilt below
    built = _build(folder, listed, old)
    if folder.cache:
        # A file changed in the last moments could change again without its key changing: it is
        # recorded as untrusted, so the next run reads it again (as the parse cache does).
        racy_after = time.time_ns() - int(RACY_SECONDS * 1e9)
        for entry in built.files:
            if entry[1] is not None and entry[1][1] > racy_after:
                entry[1] = None
        stable = [(rel, "", key) for rel, key, _ in built.files]
        try:
            ensure_state_dir(folder.root)
            write_state_file(path, built.encode(_digest(stable)))
        except OSError:
            pass  # a read-only folder: recall works, it only rebuilds each time
    built.unreadable = listing_problems + built.unreadable
    built.ages = ages
    return built


def _build(folder: MemoryDir, listed: Listed, old: _Stored | None) -> _Built:
    try:
        reusable = old.reusable() if old is not None else {}
        known = dict(old.unreadable) if old is not None else {}
    except (ValueError, LookupError, TypeError):
        reusable, known = {}, {}
    cache = ParseCache.load(state_dir(folder.root)) if folder.cache else ParseCache.disabled()
    docs: list[IndexedDoc] = []
    terms: list[tuple[list[str], list[str]]] = []
    files: list[list[Any]] = []
    unreadable: list[tuple[str, str]] = []
    with paused_gc():  # many small acyclic objects: terms, rows
        for rel, path, key in listed:
            kept = reusable.get(rel)
            doc: IndexedDoc | None = None
            doc_terms: tuple[list[str], list[str]] | None = None
            if key is not None and kept is not None and kept[0] == key:
                doc, doc_terms = kept[1], kept[2]
                if rel in known:
                    unreadable.append((rel, known[rel]))
            else:
                loaded = load_file(path, rel, cache)
                if isinstance(loaded, Memory) and loaded.type is not None:  # what the index would list
                    doc, doc_terms = _doc_of(loaded)
                elif isinstance(loaded, FileProblem) and loaded.unreadable:
                    unreadable.append((rel, loaded.message))
            if doc is None or doc_terms is None:
                files.append([rel, key, -1])
                continue
            files.append([rel, key, len(docs)])
            docs.append(doc)
            terms.append(doc_terms)
        cache.save()
        return _Built(_link_successors(docs), terms, files, unreadable)
