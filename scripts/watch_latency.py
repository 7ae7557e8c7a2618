#!/usr/bin/env python3
"""Save-to-index latency of `memdir watch`: from an editor's save to MEMORY.md holding the change.

    python scripts/watch_latency.py [--saves 20] [--sizes 50,1000] [--poll]

For each size, generates a folder (scripts/synthetic.py), starts `python -m memdir --dir F watch
--format json` as a separate process and waits until its first lint is done. Then, one save at a
time, rewrites an indexed memory's description the way editors save (a temporary file renamed over
the memory) and times how long until the watcher reports the index run for that file; each
measurement checks that MEMORY.md then is what a whole `memdir index` would write (`index --check`):
in a folder over the caps an edited entry may rightly give its place to another, so the new
description itself need not be there. The next save waits for the lint of the previous one, so each
figure is the latency of a save to an idle watcher.
`measure()` is importable (scripts/bench.py uses it) and needs nothing outside this file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TIMEOUT_SECONDS = 60.0  # the first index and lint of a large folder, on a busy machine

_LINK = re.compile(r"\]\(([^)\s]+\.md)\)")

Event = tuple[float, dict[str, Any]]  # (perf_counter when the line arrived, the JSON event)


def measure(folder: Path, saves: int, *, poll: bool = False, timeout: float = TIMEOUT_SECONDS) -> list[float]:
    """Seconds from each of `saves` saves to the watcher's index run for it, in order.

    `folder` must be a memory folder whose MEMORY.md lists at least one memory after indexing
    (the watcher indexes it first). `poll` measures the polling fallback instead of native events.
    """
    folder = Path(folder).resolve()
    command = [sys.executable, "-m", "memdir", "--dir", str(folder), "watch", "--format", "json"]
    if poll:
        command.append("--poll")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    env["NO_COLOR"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=env,
        cwd=folder,
        # Stopped with SIGINT (Ctrl-C), which a background job of a shell inherits as ignored.
        preexec_fn=_default_sigint if os.name == "posix" else None,
    )
    events: queue.Queue[Event | None] = queue.Queue()
    errors: list[str] = []
    threading.Thread(target=_read_events, args=(child, events), daemon=True).start()
    threading.Thread(target=_read_stderr, args=(child, errors), daemon=True).start()
    latencies: list[float] = []
    try:
        _next_event(events, lambda e: e["event"] == "linted", timeout, errors)
        targets = _indexed_memories(folder)
        if not targets:
            raise RuntimeError(f"{folder}/MEMORY.md lists no memory to edit")
        for i in range(saves):
            rel = targets[i % len(targets)]
            path = folder / rel
            token = f"latency{i:04d}p{os.getpid()}"
            temporary = path.with_name(f".{path.name}.saving")
            temporary.write_text(_with_token(path.read_text(encoding="utf-8"), token), encoding="utf-8")
            saved = time.perf_counter()
            os.replace(temporary, path)  # the moment the new text is there: an editor's atomic save
            arrived, _ = _next_event(
                events, lambda e, rel=rel: e["event"] == "indexed" and rel in e["paths"], timeout, errors
            )
            latencies.append(arrived - saved)
            check = [sys.executable, "-m", "memdir", "--dir", str(folder), "index", "--check"]
            done = subprocess.run(check, capture_output=True, text=True, env=env, cwd=folder, timeout=timeout)
            if done.returncode != 0:
                raise RuntimeError(f"after the watcher indexed {rel}, MEMORY.md is stale: {done.stderr.strip()}")
            _next_event(events, lambda e: e["event"] == "linted", timeout, errors)
    finally:
        _stop(child)
    return latencies


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _read_events(child: subprocess.Popen[str], events: queue.Queue[Event | None]) -> None:
    assert child.stdout is not None
    for line in child.stdout:
        arrived = time.perf_counter()
        with contextlib.suppress(ValueError):
            events.put((arrived, json.loads(line)))
    events.put(None)


def _read_stderr(child: subprocess.Popen[str], errors: list[str]) -> None:
    assert child.stderr is not None
    errors.extend(child.stderr)


def _next_event(events: queue.Queue[Event | None], wanted: Any, timeout: float, errors: list[str]) -> Event:
    deadline = time.monotonic() + timeout
    while True:
        try:
            item = events.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise RuntimeError(f"no matching event from `memdir watch` within {timeout:.0f}s") from None
        if item is None:
            raise RuntimeError("`memdir watch` exited early:\n" + "".join(errors[-20:]))
        if item[1].get("event") == "error":
            raise RuntimeError(f"`memdir watch` reported an error: {item[1].get('message')}")
        if wanted(item[1]):
            return item


_TOKEN_BYTES = 32  # a description shorter than this would grow in bytes with the token (_with_token)


def _indexed_memories(folder: Path) -> list[str]:
    """Memories MEMORY.md lists whose description can carry a token (plain, unquoted YAML, long
    enough to take it without growing)."""
    found = []
    for rel in dict.fromkeys(_LINK.findall((folder / "MEMORY.md").read_text(encoding="utf-8"))):
        path = folder / rel
        if not path.is_file():
            continue
        described = re.search(r"^description: ([^'\"\s].*)$", path.read_text(encoding="utf-8"), re.MULTILINE)
        if described and len(described.group(1).encode("utf-8")) >= _TOKEN_BYTES:
            found.append(rel)
    return found


def _with_token(text: str, token: str) -> str:
    """The memory with `token` at the start of its description, which keeps its length in bytes, so
    the entry takes the same bytes in MEMORY.md and stays in it when the index is at its caps (a
    short CJK description made longer in bytes could push this very entry out of a full index)."""

    def retag(match: re.Match[str]) -> str:
        value = match.group(1)
        size = max(len(value.encode("utf-8")), len(token))
        return "description: " + (token + " " + value).encode("utf-8")[:size].decode("utf-8", "ignore")

    return re.sub(r"^description: (.*)$", retag, text, count=1, flags=re.MULTILINE)


def _stop(child: subprocess.Popen[str]) -> None:
    if child.poll() is None:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--saves", type=int, default=20, help="saves measured per folder size")
    parser.add_argument("--sizes", default="50,1000", help="comma-separated folder sizes (memories)")
    parser.add_argument("--poll", action="store_true", help="measure the polling fallback")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(REPO))
    from scripts.synthetic import write_folder

    print(f"memdir watch: save-to-index latency ({'polling' if args.poll else 'native events'}, {args.saves} saves)")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="memdir-watch-") as tmp:
            folder = Path(tmp) / "memory"
            write_folder(folder, size)
            latencies = measure(folder, args.saves, poll=args.poll)
        ms = sorted(1000 * s for s in latencies)
        print(
            f"{size:>7,} files: median {statistics.median(ms):.0f} ms, "
            f"max {ms[-1]:.0f} ms, min {ms[0]:.0f} ms over {len(ms)} saves"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
