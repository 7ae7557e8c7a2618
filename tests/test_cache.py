"""The parse cache: the same scan with or without it, and safe when stale, corrupt or unwritable."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest
from conftest import invoke_memdir

import memdir.core.index
import memdir.core.store
from memdir import MemoryDir
from memdir.core.cache import CACHE_FILE, ParseCache
from memdir.core.store import STATE_DIR, Scan

HOUR_AGO = time.time() - 3600
KEY = "sk-ant-api03-" + "Q7x9Lm2Pz4Rt8Vb1" * 6  # the shape of an Anthropic key; not a real one

FILES = {
    "user_role.md": "---\nname: role\ndescription: Data scientist\ntype: user\ncreated: 2026-01-02\n---\nBody.\n",
    "feedback_tz.md": (
        "---\nname: tz\ndescription: 'Quoted: with colon'\ntype: feedback\n"
        "updated: 2026-03-04T05:06:07+02:00\nimportance: 0.8\ntags: [a, b]\n"
        "metadata:\n  modified: 2026-02-03\n  nested: {deep: [2026-01-01, x]}\n---\n"
        "Rule.\n\n**Why:** reason.\n**How to apply:** always.\n"
    ),
    "project_keys.md": "---\nname: keys\n1: numeric key\ntype: project\n---\nNot JSON-able keys.\n",
    "sub/reference_crlf.md": "---\r\nname: crlf\r\ntype: reference\r\n---\r\nWindows.\r\n",
}


def make_folder(root: Path, files: dict[str, str] = FILES, when: float = HOUR_AGO) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
        os.utime(path, (when, when))
    return root


def as_data(scan: Scan) -> list[tuple[str, str, object, int, int, int, int]]:
    return [
        (m.path, m.doc.text, m.doc.data, m.doc.fm_start, m.doc.fm_end, m.doc.body_start, m.doc.body_line)
        for m in scan.memories
    ]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts parse_document was called on during the test."""
    calls: list[str] = []
    real = memdir.core.store.parse_document

    def counting(text: str):  # type: ignore[no-untyped-def]
        calls.append(text)
        return real(text)

    monkeypatch.setattr(memdir.core.store, "parse_document", counting)
    return calls


def test_a_warm_scan_parses_nothing_and_gives_the_same_memories(tmp_path: Path, parses: list[str]) -> None:
    folder = make_folder(tmp_path)
    cold = MemoryDir(folder).scan()
    assert len(parses) == 4 and (folder / STATE_DIR / CACHE_FILE).is_file()
    parses.clear()
    warm = MemoryDir(folder).scan()
    # The file with a numeric key cannot be carried by JSON exactly, so only it is parsed again.
    assert [p.splitlines()[1] for p in parses] == ["name: keys"]
    assert as_data(warm) == as_data(cold) == as_data(MemoryDir(folder, cache=False).scan())
    tz = next(m for m in warm.memories if m.path == "feedback_tz.md")
    assert tz.fields["updated"] == dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert tz.fields["metadata"]["nested"]["deep"][0] == dt.date(2026, 1, 1)


def test_frontmatter_read_only_by_claude_codes_retry_is_cached_with_how_it_was_read(
    tmp_path: Path, parses: list[str]
) -> None:
    text = "---\nname: rosetta\ndescription: Rosetta Stone: 4 principles\ntype: feedback\n"
    text += "metadata:\n\tnote: x\n---\nB.\n"  # a tab the retry reads as two spaces
    folder = make_folder(tmp_path, {"feedback_rosetta.md": text})
    cold = MemoryDir(folder).scan()
    parses.clear()
    warm = MemoryDir(folder).scan()
    assert parses == []
    assert as_data(warm) == as_data(cold)
    [memory] = warm.memories
    assert memory.doc.lenient == cold.memories[0].doc.lenient
    assert memory.doc.lenient is not None and memory.doc.lenient.quoted_lines == (1,) and memory.doc.lenient.tabs


def test_a_cache_saved_after_a_warm_load_still_holds_its_dates(tmp_path: Path) -> None:
    """Dates are decoded into copies, so the entries loaded in a warm run are saved again as JSON."""
    folder = make_folder(tmp_path)
    MemoryDir(folder).scan()
    make_folder(folder, {"user_new.md": "---\nname: new\ntype: user\ncreated: 2026-05-06\n---\nx\n"})
    MemoryDir(folder).scan()  # warm for the old files, and saves again for the new one
    assert as_data(MemoryDir(folder).scan()) == as_data(MemoryDir(folder, cache=False).scan())


def test_a_changed_file_is_read_again(tmp_path: Path, parses: list[str]) -> None:
    folder = make_folder(tmp_path)
    MemoryDir(folder).scan()
    make_folder(folder, {"user_role.md": FILES["user_role.md"].replace("Data scientist", "Data engineer")})
    parses.clear()
    scan = MemoryDir(folder).scan()
    assert [m.description for m in scan.memories if m.path == "user_role.md"] == ["Data engineer"]
    assert len(parses) == 2  # the changed file, and the uncacheable one


def test_same_size_same_mtime_rewrite_is_seen_through_ctime_and_inode(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    MemoryDir(folder).scan()
    path = folder / "user_role.md"
    before = path.stat()
    replacement = folder / "replacement.tmp"
    replacement.write_text(FILES["user_role.md"].replace("scientist", "scientisT"))
    os.replace(replacement, path)  # how editors save: a new inode under the old name
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert [m.description for m in MemoryDir(folder).scan().memories if m.path == "user_role.md"] == ["Data scientisT"]


def test_a_file_modified_just_now_is_not_cached(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, when=time.time())
    MemoryDir(folder).scan()
    cache = ParseCache.load(folder / STATE_DIR)
    assert cache._toc == {}  # too new to trust its timestamp: it may change again within it


def test_a_removed_file_leaves_the_cache(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    MemoryDir(folder).scan()
    (folder / "user_role.md").unlink()
    MemoryDir(folder).scan()
    assert "user_role.md" not in ParseCache.load(folder / STATE_DIR)._toc


ENTRY = "- [role](user_role.md) — Data scientist"
ROW = f'["user","role","Data scientist",0.5,"2026-01-02","active",false,null,"{ENTRY}"]'.encode()
FORGED = ROW.replace(b"\xe2\x80\x94 Data scientist", b"\xe2\x80\x94 forged")


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"garbage",
        b"\x00\xff\xfe binary",
        b"@M\n{not json\n",
        b"@M\n[]\n",
        b'memdir parse cache 1\n{"memdir":"@V","files":{}}\n',  # an older format
        b'@M\n{"memdir":"0.0.1","files":{}}\n',  # another version
        b'@M\n{"memdir":"@V0","files":{"user_role.md":[@K,@F,-1,-1,-1,-1]}}\n',  # other code for the lines
        b'@M\n{"memdir":"@V","files":{"user_role.md":[@K,["user","a","b",1,null,"s",0,null],-1,-1,-1,-1]}}\n',
        b'@M\n{"memdir":"@V","files":{"user_role.md":"x"}}\n',
        b'@M\n{"memdir":"@V","files":{"user_role.md":[1,2,3,4,5,6]}}\n',
        b'@M\n{"memdir":"@V","files":{"user_role.md":[@K,"row",0,0,0,0]}}\n',
        b'@M\n{"memdir":"@V","files":{"user_role.md":[@K,[1,2,3,4,5,6,7,8],0,0,0,0]}}\n',
        b'@M\n{"memdir":"@V","files":{"user_role.md":[@K,["nope","a","b",1,null,"s",0,null],0,0,0,0]}}\n',
        b'@M\n{"memdir":"@V","files":{"user_role.md":[@K,["user","a","b","x",null,"s",0,null],0,0,0,0]}}\n',
        b'@M\n{"memdir":"@V","files":{"user_role.md":[@K,@R,0,5,5,9]}}\nabcdeXXXX',
        b'@M\n{"memdir":"@V","files":{"user_role.md":[@K,@R,0,5,5,9]}}\n[1,2]XXXX',
        b'@M\n{"memdir":"@V","files":{"user_role.md":[@K,@R,0,36,36,40]}}\n[{"a":"x"},[0,0,0,1],[["b","date"]]]XXXX',
        b'@M\n{"memdir":"@V","files":{"user_role.md":[@K,@R,0,36,36,40]}}\n[{"a":"x"},[0,0,0,1],[["a","date"]]]XXXX',
        b'@M\n{"memdir":"@V","files":{"user_role.md":[@K,@R,0,24,24,28]}}\n[{"a":"x"},[0,0,0,1],[]]\xff\xfe\xfd\xfc',
        b'@M\n{"memdir":"@V","files":{"user_role.md":[@K,@R,0,99,99,999]}}\nshort',
    ],
)
def test_a_corrupt_cache_is_ignored_and_replaced(tmp_path: Path, content: bytes) -> None:
    folder = make_folder(tmp_path)
    expected = as_data(MemoryDir(folder, cache=False).scan())
    expected_index = MemoryDir(folder, cache=False).plan_index().text
    key = json.dumps(list(memdir.core.cache.file_key((folder / "user_role.md").stat())))
    state = folder / STATE_DIR
    state.mkdir()
    version = memdir.core.cache.code_version().encode()
    corrupt = content.replace(b"@M", memdir.core.cache._MAGIC).replace(b"@V", version)
    corrupt = corrupt.replace(b"@K", key.encode()).replace(b"@R", ROW).replace(b"@F", FORGED)
    for _ in range(2):  # and the rewritten cache is good
        (state / CACHE_FILE).write_bytes(corrupt)
        assert as_data(MemoryDir(folder).scan()) == expected
        (state / CACHE_FILE).write_bytes(corrupt)
        assert MemoryDir(folder).plan_index().text == expected_index
        corrupt = (state / CACHE_FILE).read_bytes()


def test_a_warm_index_reads_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index comes from the cache's rows: unchanged memory files are not even opened."""
    folder = make_folder(tmp_path)
    MemoryDir(folder).write_index()
    expected = MemoryDir(folder, cache=False).plan_index()
    opened: list[str] = []
    real_open = open

    def watching_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", watching_open)
    planned = MemoryDir(folder).plan_index()
    assert planned.text == expected.text
    assert [str(e.path) for e in planned.entries] == [str(e.path) for e in expected.entries]
    # Not even the file whose frontmatter JSON cannot carry (a numeric key): its row is cached.
    assert not [name for name in opened if name.endswith(".md") and "MEMORY" not in name]


def test_a_warm_index_renders_no_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each row carries its memory's index line, masked: a warm index neither renders nor masks one,
    and a cold run renders each memory's line once."""
    files = {**FILES, "project_key.md": "---\nname: key\ndescription: " + KEY + "\ntype: project\n---\n"}
    folder = make_folder(tmp_path, files)
    expected = MemoryDir(folder, cache=False).plan_index().text
    assert KEY not in expected  # masked
    rendered: list[str] = []
    real = memdir.core.index.render_entry

    def counting(memory):  # type: ignore[no-untyped-def]
        rendered.append(memory.path)
        return real(memory)

    monkeypatch.setattr(memdir.core.index, "render_entry", counting)
    assert MemoryDir(folder).write_index().result.text == expected
    assert sorted(rendered) == sorted(files)  # cold: once each, by the rows the cache made
    rendered.clear()
    assert MemoryDir(folder).write_index().result.text == expected
    assert rendered == []


def test_the_cache_is_dropped_when_the_code_that_draws_lines_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new secret pattern (text/sensitive.py) must mask every line at once, not only the lines of
    files changed since: the cache is written for a checksum of that code and ignored under another."""
    code = tmp_path / "code"
    package = Path(memdir.core.cache.__file__).parents[1]
    for name in memdir.core.cache._LINE_SOURCES:
        (code / name).parent.mkdir(parents=True, exist_ok=True)
        (code / name).write_bytes((package / name).read_bytes())
    monkeypatch.setattr(memdir.core.cache, "__file__", str(code / "core" / "cache.py"))
    folder = make_folder(tmp_path / "memory")
    MemoryDir(folder).write_index()
    assert ParseCache.load(folder / STATE_DIR)._toc
    with (code / "text" / "sensitive.py").open("a") as sensitive:
        sensitive.write("# a new pattern\n")
    assert not ParseCache.load(folder / STATE_DIR)._toc


def test_a_file_in_place_of_the_state_folder_is_refused(tmp_path: Path) -> None:
    """Once scanned around, without a cache; now refused like a symlinked `.memdir` (test_escapes.py):
    memdir keeps its state in a real folder or not at all. Without the cache, nothing is refused."""
    from memdir.core.errors import StateRefused

    folder = make_folder(tmp_path)
    (folder / STATE_DIR).write_text("a file where the state folder should be")
    with pytest.raises(StateRefused, match="is not a folder"):
        MemoryDir(folder).scan()
    assert len(MemoryDir(folder, cache=False).scan().memories) == 4


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through read-only permissions")
def test_a_read_only_folder_is_scanned_without_a_cache(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "ro")
    folder.chmod(0o555)
    try:
        assert len(MemoryDir(folder).scan().memories) == 4
        assert not (folder / STATE_DIR).exists()
    finally:
        folder.chmod(0o755)


def test_no_cache_reads_everything_and_writes_no_cache(tmp_path: Path, parses: list[str]) -> None:
    folder = make_folder(tmp_path)
    MemoryDir(folder, cache=False).scan()
    MemoryDir(folder, cache=False).scan()
    assert len(parses) == 8
    assert not (folder / STATE_DIR / CACHE_FILE).exists()


def test_cli_no_cache_option_and_environment(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    assert invoke_memdir("--dir", str(folder), "--no-cache", "list").exit_code == 0
    assert not (folder / STATE_DIR / CACHE_FILE).exists()
    assert invoke_memdir("--dir", str(folder), "list", env={"MEMDIR_NO_CACHE": "1"}).exit_code == 0
    assert not (folder / STATE_DIR / CACHE_FILE).exists()
    assert invoke_memdir("--dir", str(folder), "list").exit_code == 0
    assert (folder / STATE_DIR / CACHE_FILE).exists()


def test_a_cache_replaced_by_another_process_mid_run_stays_consistent(tmp_path: Path) -> None:
    """The blob is read from the file whose table of contents was read, even once replaced."""
    folder = make_folder(tmp_path)
    MemoryDir(folder).scan()
    path = folder / "user_role.md"
    old_key = memdir.core.cache.file_key(path.stat())
    first = ParseCache.load(folder / STATE_DIR)  # table of contents read, blob not yet
    make_folder(folder, {"user_role.md": FILES["user_role.md"].replace("Data scientist", "A much longer text")})
    MemoryDir(folder).scan()  # another run saves a new cache over the old one
    doc = first.get("user_role.md", old_key)
    assert doc is not None and doc.data["description"] == "Data scientist"
    assert doc.body == "Body.\n"


def test_a_truncated_blob_never_serves_a_wrong_text(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    expected = as_data(MemoryDir(folder, cache=False).scan())
    MemoryDir(folder).scan()
    cache_file = folder / STATE_DIR / CACHE_FILE
    cache_file.write_bytes(cache_file.read_bytes()[:-3])  # the last file's text loses its end
    assert as_data(MemoryDir(folder).scan()) == expected
