"""The Claude Code plugin (plugin/, .claude-plugin/marketplace.json) against the real Claude Code client.

The client comes from the npm registry, pinned (CLAUDE_CODE_VERSION), installed once into the
user's cache (~/.cache/memdir-tests/claude-code/, so a fresh clone reuses it) by conftest.cached_build,
so xdist workers do not race; with no
`node`/`npm`, or when the install fails (no network), the tests that need it skip and say why.
MEMDIR_CLAUDE_CODE=/path/to/claude uses a client already installed instead.

The session test runs `claude -p` for real with ANTHROPIC_BASE_URL pointing at a loopback stand-in
for the Messages API (streaming included) that records every request: memdir's SessionStart context
and its UserPromptSubmit recall must be in the model's request, and the Stop hook's extraction (the
same stand-in answers its `save_memories` call) must write the memory the stand-in returned. In the
same session the stand-in's model uses the plugin's MCP server as a model would: ToolSearch to load
the deferred memdir tools, `recall`, `create_memory`, then the client's ReadMcpResourceTool on
memdir:///MEMORY.md; the results the client sends back are asserted.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import USER_CACHE, cached_build

from memdir.integrations.claude_settings import memdir_hooks
from memdir.integrations.mcp_server import INSTRUCTIONS
from memdir.version import __version__

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "plugin"
CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_CODE_VERSION = "2.1.332"  # exact, for reproducible runs; raise it on purpose
# The real home, read before the autouse fixture swaps HOME: npm's own config and cache live there.
REAL_HOME = os.environ.get("HOME", "")
CALL_ID = "toolu_standin_call_"  # the ids of the tool calls the stand-in makes for the model

LINT_MEMORY = (
    "---\nname: lint-first\ndescription: Run the linter before every commit\ntype: feedback\n---\n"
    "Run `make lint` before every commit.\n\n**Why:** CI was red for a day.\n\n**How to apply:** Before commits.\n"
)
PROMPT = "Should I run the linter before this commit?"
EXTRACTED = {
    "type": "project",
    "name": "billing-deploys-tuesdays",
    "description": "The billing service deploys on Tuesdays only, after the staging soak",
    "body": "The billing service deploys on Tuesdays only.",
    "why": "Two Monday deploys broke invoicing.",
    "how_to_apply": "Plan billing releases for a Tuesday.",
    "source": "user",
}


# --- the plugin's files, without the client ------------------------------------------------------


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_plugin_hooks_are_the_hooks_memdir_installs() -> None:
    """One list of hooks: the plugin's hooks.json is what `memdir hooks install` writes."""
    hooks = _json(PLUGIN / "hooks" / "hooks.json")["hooks"]
    assert hooks == {h.event: [h.group()] for h in memdir_hooks()}


def test_plugin_and_marketplace_name_memdirs_version() -> None:
    (entry,) = _json(REPO / ".claude-plugin" / "marketplace.json")["plugins"]
    manifest = _json(PLUGIN / ".claude-plugin" / "plugin.json")
    assert entry["name"] == manifest["name"] == "memdir" and entry["source"] == "./plugin"
    assert entry["version"] == manifest["version"] == __version__


def test_plugin_commands_are_the_three_slash_commands() -> None:
    assert sorted(p.stem for p in (PLUGIN / "commands").glob("*.md")) == ["lint", "recall", "review"]
    assert _json(PLUGIN / ".mcp.json") == {"mcpServers": {"memdir": {"command": "memdir", "args": ["mcp"]}}}


def test_the_install_the_plugin_asks_for_has_the_extra_its_mcp_server_needs() -> None:
    """.mcp.json runs `memdir mcp`, which needs `memdir[mcp]`: a plain `pipx install memdir` leaves
    the plugin's server failing to connect while its hooks work."""
    manifest = _json(PLUGIN / ".claude-plugin" / "plugin.json")
    assert "pipx install 'memdir[mcp]'" in manifest["description"]
    guide = (REPO / "docs" / "claude-code.md").read_text(encoding="utf-8")
    plugin_section = guide[guide.index("## The plugin") : guide.index("## Without the plugin")]
    assert "pipx install 'memdir[mcp]'" in plugin_section


# --- the real client -----------------------------------------------------------------------------


def _version_of(binary: Path) -> str | None:
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    return done.stdout.split()[0] if done.returncode == 0 and done.stdout.strip() else None


@pytest.fixture(scope="session")
def claude() -> Path:
    """The Claude Code CLI at CLAUDE_CODE_VERSION, installed from npm into .cache/ once."""
    given = os.environ.get("MEMDIR_CLAUDE_CODE")
    if given:
        if _version_of(Path(given)) is None:
            pytest.skip(f"MEMDIR_CLAUDE_CODE={given} does not run `--version`")
        return Path(given)
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("the real Claude Code client needs node and npm, and they are not on PATH")

    def install(prefix: Path) -> None:
        env = {**os.environ, "HOME": REAL_HOME, "npm_config_update_notifier": "false"}
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--prefer-offline",
                 f"{CLAUDE_CODE_PACKAGE}@{CLAUDE_CODE_VERSION}"],
                capture_output=True, text=True, env=env, timeout=900,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {CLAUDE_CODE_PACKAGE}@{CLAUDE_CODE_VERSION} took over 15 minutes")
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"npm install {CLAUDE_CODE_PACKAGE}@{CLAUDE_CODE_VERSION} failed: {last}")

    # One worker installs, the others wait and then find it; a failed install is tried again.
    # In the user's cache: a pinned version does not depend on this tree, so a fresh clone reuses it.
    prefix = cached_build("claude-code", CLAUDE_CODE_VERSION, install, cache=USER_CACHE)
    binary = prefix / "node_modules" / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe"
    if _version_of(binary) != CLAUDE_CODE_VERSION:
        pytest.skip(f"{binary} does not run as Claude Code {CLAUDE_CODE_VERSION} on this machine")
    return binary


def _client_env(home: Path, **extra: str) -> dict[str, str]:
    """A client with its own home and nothing to say to anyone but the stand-in."""
    # Nothing of the caller's: no key, no Claude Code session around the test, no config folders.
    dropped = ("ANTHROPIC_", "CLAUDE", "MEMDIR_", "PYTEST_", "OTEL_", "XDG_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_BUG_COMMAND="1",
        CLAUDE_CODE_ENABLE_TELEMETRY="0",
        NO_COLOR="1",
        **extra,
    )
    return env


def _validate(claude: Path, target: Path, home: Path) -> dict[str, Any]:
    done = subprocess.run(
        [str(claude), "plugin", "validate", "--strict", "--json", str(target)],
        capture_output=True, text=True, env=_client_env(home), cwd=REPO, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.slow
def test_the_clients_validator_accepts_the_plugin_and_the_marketplace(claude: Path, tmp_path: Path) -> None:
    plugin = _validate(claude, PLUGIN, tmp_path)
    assert plugin["success"] and plugin["manifest"]["type"] == "plugin"
    assert plugin["manifest"]["errors"] == plugin["manifest"]["warnings"] == []
    provides = plugin["provides"]
    assert [(h["event"], h.get("matcher"), h["command"]) for h in provides["hooks"]] == [
        (h.event, h.matcher, h.command) for h in memdir_hooks()
    ]
    assert provides["commands"] == ["memdir:lint", "memdir:recall", "memdir:review"]
    assert [(s["name"], s["target"], s["args"]) for s in provides["mcpServers"]] == [("memdir", "memdir", ["mcp"])]
    marketplace = _validate(claude, REPO, tmp_path)
    assert marketplace["success"] and marketplace["manifest"]["type"] == "marketplace"
    assert marketplace["manifest"]["errors"] == marketplace["manifest"]["warnings"] == []


# --- a loopback stand-in for the Messages API ------------------------------------------------------


class MessagesStandIn:
    """POST /v1/messages answered as the API would (SSE when `stream` is true): a short text reply,
    or, when the request forces a tool (memdir's extraction), a call to it with `memories`. Every
    request is recorded as (method, path, body); count_tokens is answered, anything else is a 404.

    `calls` makes the model use tools first, as (name, input): the session's n-th request (n counted
    by the stand-in's calls already in its messages, so a retried request gets the same answer) calls
    the n-th, named by its full name or by a `__suffix` that finds the MCP tool among the `mcp__`
    names the request carries (its tools, what ToolSearch returned); the request after the last gets
    the text reply."""

    def __init__(self, memories: list[dict[str, Any]], calls: Sequence[tuple[str, dict[str, Any]]] = ()) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        self.memories = memories
        self.calls = list(calls)
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> MessagesStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def record(self, method: str, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append((method, path, body))

    def answer(self, body: Any) -> dict[str, Any]:
        choice = body.get("tool_choice") if isinstance(body, dict) else None
        forced = choice.get("name") if isinstance(choice, dict) else None
        call = None if forced or not isinstance(body, dict) else self._next_call(body)
        if forced:
            tool_input = {"memories": self.memories} if forced == "save_memories" else {}
            content: list[dict[str, Any]] = [{"type": "tool_use", "id": "toolu_standin", "name": forced,
                                              "input": tool_input}]  # fmt: skip
        elif call is not None:
            content = [call]
        else:
            content = [{"type": "text", "text": "Noted."}]
        return {
            "id": "msg_standin",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude") if isinstance(body, dict) else "claude",
            "content": content,
            "stop_reason": "tool_use" if forced or call is not None else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def _next_call(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The tool_use block for this point of the session, or None when the calls are done."""
        if not body.get("tools"):  # a side request of the client's (a title, a summary), not the session's turn
            return None
        blocks = [b for m in body.get("messages", []) if isinstance(m.get("content"), list) for b in m["content"]]
        calls = [b for b in blocks if b.get("type") == "tool_use" and str(b.get("id")).startswith(CALL_ID)]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        # On a loaded machine the plugin's MCP server may still be starting when the model first
        # searches; the client then says so and asks to search again, which a model does (a second
        # later, up to 20 times: a server that never connects still fails the test).
        last = calls[-1] if calls else {}
        answered = results[-1] if results and results[-1].get("tool_use_id") == last.get("id") else {}
        if "still connecting" in json.dumps(answered.get("content")) and len(calls) < 20:
            time.sleep(1)
            again = str(last["id"]).split("-")[0] + f"-again{len(calls)}"
            return {"type": "tool_use", "id": again, "name": last["name"], "input": last["input"]}
        done = len({str(b["id"]).split("-")[0] for b in calls})
        if done >= len(self.calls):
            return None
        name, tool_input = self.calls[done]
        if name.startswith("__"):  # the session's full name of an MCP tool, from what it has seen
            known = re.findall(r"mcp__[A-Za-z0-9_-]+", json.dumps(body))
            name = next((k for k in known if k.endswith(name)), f"mcp__unknown{name}")
        return {"type": "tool_use", "id": f"{CALL_ID}{done}", "name": name, "input": tool_input}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, code: int, data: bytes, content_type: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", "req_standin")
                self.end_headers()
                self.wfile.write(data)

            def _not_found(self) -> None:
                error = {"type": "error", "error": {"type": "not_found_error", "message": "not in the stand-in"}}
                self._send(404, json.dumps(error).encode())

            def do_GET(self) -> None:
                standin.record("GET", self.path, None)
                self._not_found()

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                standin.record("POST", self.path, body)
                path = self.path.split("?")[0]
                if path.endswith("/v1/messages/count_tokens"):
                    self._send(200, b'{"input_tokens": 100}')
                elif not path.endswith("/v1/messages") or not isinstance(body, dict):
                    self._not_found()
                elif body.get("stream"):
                    self._send(200, _sse(standin.answer(body)), "text/event-stream")
                else:
                    self._send(200, json.dumps(standin.answer(body)).encode())

        return Handler


def _sse(message: dict[str, Any]) -> bytes:
    """A message as the Messages API streams it."""
    start = {**message, "content": [], "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": i, "content_block": opened}),
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": i}),
        ]
    events += [
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                                                              "stop_sequence": None}, "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


# --- a real headless session -----------------------------------------------------------------------


def _memdir_on_path(where: Path) -> Path:
    """`memdir` on the hooks' PATH, as `pipx install memdir` would put it, running this checkout."""
    where.mkdir()
    shim = where / "memdir"
    shim.write_text(f'#!/bin/sh\nexport PYTHONPATH="{REPO}"\nexec "{sys.executable}" -m memdir "$@"\n')
    shim.chmod(0o755)
    return where


def _run(claude: Path, args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(claude), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    assert done.returncode == 0, f"claude {' '.join(args)}: {done.stdout}\n{done.stderr}"
    return done


def _tool_result(requests: list[tuple[str, str, Any]], call: int) -> tuple[str, bool] | None:
    """What the client sent back for the stand-in's `call`-th tool call (its content as JSON text, and
    whether it is an error), the last time it was made (see MessagesStandIn._next_call's retry)."""
    found = None
    for _, _, body in requests:
        messages = body.get("messages", []) if isinstance(body, dict) else []
        for block in (b for m in messages if isinstance(m.get("content"), list) for b in m["content"]):
            made = str(block.get("tool_use_id")).split("-")[0]  # a retry's id is the call's, then -againN
            if block.get("type") == "tool_result" and made == f"{CALL_ID}{call}":
                found = json.dumps(block.get("content"), ensure_ascii=False), bool(block.get("is_error"))
    return found


HAS_MCP_SDK = importlib.util.find_spec("mcp") is not None  # `memdir mcp` needs memdir[mcp]
MCP_SERVER = "mcp__plugin_memdir_memdir__"  # Claude Code's prefix for the tools of the plugin's server `memdir`
MCP_TOOLS = ["create_memory", "index", "lint", "list_memories", "modify_memory", "recall"]
CREATED = {
    "type": "reference",
    "name": "ci-dashboard",
    "description": "CI runs and flaky-test history are on the Buildkite dashboard, pipeline app-main",
    "body": "CI runs are on https://buildkite.com/acme/app-main.",
}
MODEL_CALLS = [  # what the stand-in's model does before its answer, as a model would with deferred MCP tools
    ("ToolSearch", {"query": "memdir", "max_results": 10}),  # loads the memdir tools' schemas
    ("__recall", {"query": "run the linter before a commit", "k": 3}),
    ("__create_memory", CREATED),
    ("ToolSearch", {"query": "select:ReadMcpResourceTool"}),  # the client's own tool for MCP resources
    ("ReadMcpResourceTool", {"server": "plugin:memdir:memdir", "uri": "memdir:///MEMORY.md"}),
]


@pytest.mark.slow
def test_a_real_session_gets_the_index_and_the_recall_uses_the_mcp_tools_and_its_stop_hook_extracts(
    claude: Path, tmp_path: Path
) -> None:
    """One session for everything the plugin gives a session (each session costs seconds): its hooks
    and its MCP server, started by the client from the plugin's .mcp.json."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    memory = project / ".claude" / "memory"
    memory.mkdir(parents=True)
    (project / ".git").mkdir()  # the repository root: memdir finds .claude/memory/ there
    (memory / "feedback_lint-first.md").write_text(LINT_MEMORY, encoding="utf-8")
    tools = _memdir_on_path(tmp_path / "bin")

    with MessagesStandIn([EXTRACTED], MODEL_CALLS if HAS_MCP_SDK else []) as standin:
        env = _client_env(
            home,
            PATH=f"{tools}{os.pathsep}{os.environ.get('PATH', '')}",
            ANTHROPIC_BASE_URL=standin.url,
            ANTHROPIC_API_KEY="sk-ant-standin",  # memdir's extraction needs one too, for the same stand-in
        )
        # Installed as a user would: the repository as a marketplace, then the plugin from it.
        _run(claude, ["plugin", "marketplace", "add", str(REPO)], env, project)
        _run(claude, ["plugin", "install", "memdir@memdir"], env, project)
        # Headless, an MCP tool runs only when allowed; the server's prefix allows all its tools.
        args = ["-p", PROMPT, "--output-format", "json", "--allowedTools", MCP_SERVER.rstrip("_")]
        done = _run(claude, args, env, project)
        result = json.loads(done.stdout)
        assert result["is_error"] is False and result["result"] == "Noted.", done.stdout

        # The Stop hook started the extraction detached; the bound is for a broken run, not a speed claim.
        wanted = memory / "project_billing-deploys-tuesdays.md"
        deadline = time.monotonic() + 180
        while not wanted.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        requests = list(standin.requests)

    seen = [(method, path) for method, path, _ in requests]
    turns = [body for _, path, body in requests if path.split("?")[0] == "/v1/messages" and body.get("stream")]
    assert turns, f"no streamed Messages request reached the stand-in: {seen}"
    sent = json.dumps(turns[0], ensure_ascii=False)
    # SessionStart: the index, as the model received it.
    assert "# Long-term memory (memdir)" in sent and "- [lint-first](feedback_lint-first.md)" in sent
    # UserPromptSubmit: the recalled memory in full, beside the prompt.
    assert "# Memories recalled for this prompt (memdir)" in sent
    assert "Run `make lint` before every commit." in sent and PROMPT in sent

    extractions = [body for _, _, body in requests if isinstance(body, dict) and body.get("tool_choice")]
    assert [b["tool_choice"]["name"] for b in extractions] == ["save_memories"], seen
    assert PROMPT in json.dumps(extractions[0]["messages"], ensure_ascii=False)  # the transcript got there
    log = memory / ".memdir" / "extract-hook.log"
    assert wanted.exists(), f"no memory written; extract-hook.log: {log.read_text() if log.exists() else 'none'}"
    text = wanted.read_text(encoding="utf-8")
    assert f"description: {EXTRACTED['description']}" in text and "type: project" in text
    assert "**Why:** Two Monday deploys broke invoicing." in text

    # The folder `memdir where` says Claude Code loads is the one the client told its model about.
    loads = _where_claude_loads(env, project)
    assert f"You have a persistent file-based memory at `{loads}/`" in sent, loads

    if not HAS_MCP_SDK:  # the hooks are checked; the plugin's server could not start
        pytest.skip("the MCP part: the MCP SDK is not installed (pip install 'memdir[mcp]')")
    # The MCP server, started from the plugin's .mcp.json: its instructions reached the model, and
    # ToolSearch found its six tools under the plugin server's prefix, which the next turns list ...
    found = _tool_result(requests, 0)
    assert found is not None and not found[1], f"ToolSearch: {found}"
    assert sorted(set(re.findall(MCP_SERVER + r"(\w+)", found[0]))) == MCP_TOOLS, found[0]
    listing = [b for b in turns if any(t.get("name", "").startswith(MCP_SERVER) for t in b.get("tools", []))]
    assert listing, "no request listed the memdir tools"
    assert sorted(t["name"] for t in listing[-1]["tools"] if t["name"].startswith(MCP_SERVER)) == [
        MCP_SERVER + name for name in MCP_TOOLS
    ]
    last = json.dumps(listing[-1], ensure_ascii=False)
    assert "## plugin:memdir:memdir" in last and json.dumps(INSTRUCTIONS)[1:-1] in last
    # ... `recall` answered with the memory's body, its path, its age (no date in it: its file was
    # written today) and its score ...
    recalled = _tool_result(requests, 1)
    assert recalled is not None and not recalled[1], f"recall: {recalled}"
    assert "Run `make lint` before every commit." in recalled[0] and "feedback_lint-first.md" in recalled[0]
    assert "This memory is from today." in recalled[0] and '\\"score\\"' in recalled[0]
    # ... and `create_memory` wrote through the write path, marked as the agent's.
    created = _tool_result(requests, 2)
    assert created is not None and not created[1], f"create_memory: {created}"
    saved = (memory / "reference_ci-dashboard.md").read_text(encoding="utf-8")
    assert "source: agent" in saved and CREATED["body"] in saved
    assert "- [ci-dashboard](reference_ci-dashboard.md)" in (memory / "MEMORY.md").read_text(encoding="utf-8")
    # The index as a resource, read after the write: the new memory is in it.
    resource = _tool_result(requests, 4)
    assert resource is not None and not resource[1], f"ReadMcpResourceTool: {resource}"
    assert "memdir:///MEMORY.md" in resource[0] and "[ci-dashboard](reference_ci-dashboard.md)" in resource[0]


def _where_claude_loads(env: dict[str, str], cwd: Path) -> str:
    """What `memdir where --format json` gives as the folder Claude Code loads, run as a user would."""
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "where", "--format", "json"],
        capture_output=True, text=True, env={**env, "PYTHONPATH": str(REPO)}, cwd=cwd, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    loads: str = json.loads(done.stdout)["claude_code"]["path"]
    return loads


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["worktree", "user-setting"])
def test_the_folder_where_says_claude_code_loads_is_the_one_it_loads(claude: Path, tmp_path: Path, case: str) -> None:
    """A worktree's memory is its main checkout's (not keyed on the worktree's own path), and
    `autoMemoryDirectory: "~/..."` in the user's settings is under HOME: what the real client does,
    asked through a session whose model is told the folder and given its MEMORY.md."""
    home, main = tmp_path / "home", tmp_path / "main"
    main.mkdir()
    _git("init", "-q", cwd=main)
    _git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x", cwd=main)
    session_dir = main
    if case == "worktree":
        _git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
        session_dir = tmp_path / "wt" / "src"
        session_dir.mkdir()
    else:
        (home / ".claude").mkdir(parents=True)
        (home / ".claude" / "settings.json").write_text('{"autoMemoryDirectory": "~/notes/memory"}')
    with MessagesStandIn([]) as standin:
        env = _client_env(home, ANTHROPIC_BASE_URL=standin.url, ANTHROPIC_API_KEY="sk-ant-standin")
        loads = Path(_where_claude_loads(env, session_dir))
        loads.mkdir(parents=True, exist_ok=True)
        (loads / "MEMORY.md").write_text("- [marker](user_marker.md) — MARKER-where-names-it\n")
        _run(claude, ["-p", "hello", "--output-format", "json"], env, session_dir)
        turns = [b for _, path, b in standin.requests if path.split("?")[0] == "/v1/messages" and b.get("stream")]
    sent = json.dumps(turns[0], ensure_ascii=False)
    assert f"You have a persistent file-based memory at `{loads}/`" in sent
    assert "MARKER-where-names-it" in sent  # and it loaded that folder's MEMORY.md
    expected = home / "notes" / "memory" if case == "user-setting" else home / ".claude" / "projects"
    assert loads.is_relative_to(expected) and (case != "worktree" or loads.parent.name.endswith("-main"))
