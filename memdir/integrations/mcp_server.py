"""`memdir mcp`: the memory folder as a Model Context Protocol server, over stdio.

Two halves. `MemoryServer` answers tool calls and resource reads with plain data and needs no SDK;
`serve` wires it to the official `mcp` SDK (2.x), imported here only, when the command runs, so no
other command pays for it. The server keeps nothing between calls: each one finds the folder again
(as the CLI does, or from the client's workspace root) and reads it afresh, so a CLI run or a hand
edit between two calls is simply seen by the next. Every call takes the folder lock: the reading
tools hold it while they read, the writing ones write through MemoryDir, which takes it per write.

The write tools are the Python API's agent tools (memdir.integrations.tools): the same schemas and
the same handler, so a memory an MCP client saves goes through the write path (secrets, quarantine,
duplicates, supersede, log) with `source: agent`. Every text that leaves passes memdir.text.outward.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlparse
from urllib.request import url2pathname

from memdir.core.cache import ParseCache
from memdir.core.config import Location, load_config, locate
from memdir.core.errors import FolderNotFound, MemdirError, os_error_text
from memdir.core.index import withheld_reason
from memdir.core.model import INDEX_NAME, Memory, MemoryType
from memdir.core.reports import index_summary, memory_list
from memdir.core.store import folder_lock, load_file
from memdir.folder import MemoryDir
from memdir.integrations.claude_runtime import PROMPT_QUERY_LIMIT, prompt_query
from memdir.integrations.tools import CREATE, MODIFY, MemoryTools, ToolInputError, create_definition, modify_definition
from memdir.text.outward import dumps, for_terminal
from memdir.version import __version__

if TYPE_CHECKING:
    from mcp.server import Server

SERVER_NAME = "memdir"
RECALL, LIST, LINT, INDEX = "recall", "list_memories", "lint", "index"
RESOURCE_SCHEME = "memdir"  # memdir:///MEMORY.md, memdir:///feedback_x.md: paths inside the folder in use
ROOTS_TIMEOUT_SECONDS = 5.0  # a client that offers roots but never answers must not hold a call for ever
INSTRUCTIONS = (
    "Long-term memory for this project: one markdown file per memory, indexed by MEMORY.md. Call recall "
    "with the task at hand to load the memories that bear on it (each with its age: verify old ones). "
    "Save what future sessions need with create_memory; change or remove one with modify_memory."
)


@dataclass(frozen=True)
class Workspace:
    """How the folder is found: the CLI's global options and environment, fixed at start-up. Nothing
    else is kept; the folder itself is resolved again for every call."""

    dir_option: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    today: dt.date | None = None  # None: the day of each call (a server can run past midnight)
    cache: bool = True

    @property
    def takes_roots(self) -> bool:
        """Whether the client's workspace roots may choose the folder: not when --dir or MEMDIR_DIR
        names it, since those come first in the CLI's order too."""
        return self.dir_option is None and not self.env.get("MEMDIR_DIR")

    def locate(self, roots: Sequence[Path] = ()) -> tuple[Location, MemoryDir]:
        """The folder in use, found as the CLI finds it, from the first workspace root (when the
        client offers roots) instead of the working directory. Raises FolderNotFound, with how the
        folder was chosen, when it is not there."""
        start = roots[0] if roots and self.takes_roots else self.cwd
        config = load_config(start)
        location = locate(self.dir_option, start, self.env, config)
        if start != self.cwd:
            location = replace(location, reason=f"{location.reason}, from the client's workspace root {start}")
        if not location.path.is_dir():
            remedy = "create it with `memdir init`, or give `memdir mcp` the folder with --dir"
            raise FolderNotFound.at(location.path, remedy, location.reason)
        return location, MemoryDir(location.path, config=config, today=self.today, cache=self.cache)


@dataclass(frozen=True)
class Answer:
    """A tool's answer: `text` for the model, `data` the same as JSON (MCP's structured content)."""

    text: str
    data: dict[str, Any] | None = None
    is_error: bool = False


@dataclass(frozen=True)
class ResourceText:
    uri: str
    text: str
    mime_type: str = "text/markdown"


class ResourceNotFound(MemdirError):
    """A resource URI that names no readable file of the folder."""


def resource_uri(path: str) -> str:
    """The URI of a file of the folder, from its POSIX path relative to the folder."""
    return f"{RESOURCE_SCHEME}:///{quote(path)}"


def resource_path(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme != RESOURCE_SCHEME or parsed.netloc:
        raise ResourceNotFound(f"{uri!r} is not a memdir resource; they are {RESOURCE_SCHEME}:///<path in the folder>")
    return unquote(parsed.path).lstrip("/")


class MemoryServer:
    """The tools and resources, as plain data. `roots` (the client's workspace roots, as folders) is
    given with every call, since a client may change them at any time."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._tools: dict[str, Callable[[MemoryDir, Mapping[str, Any]], Answer]] = {
            RECALL: self._recall,
            CREATE: self._write,
            MODIFY: self._write,
            LIST: self._list,
            LINT: self._lint,
            INDEX: self._index,
        }

    # --- tools -------------------------------------------------------------------------------

    def tool_definitions(self) -> list[dict[str, Any]]:
        """Every tool, as MCP lists them (name, description, inputSchema). The write tools are the
        agent tools' own definitions, always both, and without the enum of existing names that the
        Messages API gets: an MCP client keeps one tool list for a whole session."""
        agent = [
            {"name": d["name"], "description": d["description"], "inputSchema": d["input_schema"]}
            for d in (create_definition(), modify_definition())
        ]
        return [_RECALL_TOOL, *agent, _LIST_TOOL, _LINT_TOOL, _INDEX_TOOL]

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None, roots: Sequence[Path] = ()) -> Answer:
        """One tool call. Whatever goes wrong (bad arguments, a folder that is gone, a refused write)
        is an error answer with the reason, never an exception: the server keeps serving."""
        try:
            handler = self._tools.get(name)
            if handler is None:
                raise ToolInputError(f"there is no tool {name!r}; the tools are {', '.join(self._tools)}")
            if arguments is not None and not isinstance(arguments, Mapping):
                raise ToolInputError(f"the arguments of {name} must be a JSON object")
            _, folder = self.workspace.locate(roots)
            return handler(folder, {"name": name, "arguments": dict(arguments or {})})
        except MemdirError as exc:
            return Answer(f"Error: {exc}", is_error=True)
        except OSError as exc:  # permissions, a full disk, a folder removed half-way: say which file
            return Answer(f"Error: {os_error_text(exc)}", is_error=True)
        except ValueError as exc:  # an unknown lint selector, a value no parser accepts
            return Answer(f"Error: {exc}", is_error=True)

    def _recall(self, folder: MemoryDir, call: Mapping[str, Any]) -> Answer:
        from memdir.read.context import recalled_entry
        from memdir.read.recall import recall, recalled_memories

        args = _Arguments(call, "query", "k")
        # Capped as the prompt hook caps a prompt (its beginning and its end, PROMPT_QUERY_LIMIT
        # characters): recall's work and its log line grow with the query, and a 60 MB one took
        # 140 s, 3 GB and wrote one 60 MB line to recall.jsonl.
        query = prompt_query(args.string("query", required=True))
        k = args.count("k")
        with folder_lock(folder.root):
            found = recall(folder, query, k=k)
            memories = {m.path: m for m in recalled_memories(folder, found)}
        results, sections = [], []
        for chosen in found.results:
            memory = memories.get(chosen.path)
            if memory is None:  # changed into something that is not a memory since it was scored
                continue
            entry, section = recalled_entry(memory, chosen.age, folder.today)
            results.append({**entry, "score": round(chosen.score, 4)})
            sections.append(section)
        data = {"folder": str(folder.root), "query": query, "results": results}
        if not results:
            return Answer(for_terminal(f"nothing recalled for {query!r}: {found.why_nothing()}"), data)
        return Answer("# Memories loaded in full\n" + "".join(sections), data)

    def _write(self, folder: MemoryDir, call: Mapping[str, Any]) -> Answer:
        # The agent tools validate the input and write through MemoryDir, which takes the folder
        # lock for each write; they answer errors, never raise them.
        result = MemoryTools(folder, source="agent").call(call["name"], call["arguments"])
        data: dict[str, Any] | None = None
        change = result.change
        if change is not None:
            data = {"action": change.action, "name": change.name, "path": change.path}
            data["index"] = index_summary(change.index.result)
        return Answer(for_terminal(result.text), data, result.is_error)

    def _list(self, folder: MemoryDir, call: Mapping[str, Any]) -> Answer:
        args = _Arguments(call, "type")
        wanted = args.choice("type", [t.value for t in MemoryType])
        with folder_lock(folder.root):
            scan = folder.scan()
            indexed = {m.path for m in folder.plan_index(scan=scan).entries}
        memories = [m for m in scan.memories if wanted is None or m.raw_type == wanted]
        return _json_answer(memory_list(folder.root, memories, scan.problems, indexed))

    def _lint(self, folder: MemoryDir, call: Mapping[str, Any]) -> Answer:
        from memdir.lint.report import render_json

        args = _Arguments(call, "select", "ignore")
        chosen = {key: args.strings(key) for key in ("select", "ignore")}
        with folder_lock(folder.root):
            report = folder.lint(**chosen)
        # `memdir lint --format json` exactly: the text is that report, the data the same parsed.
        text = render_json(report, folder.root)
        return Answer(text, json.loads(text))

    def _index(self, folder: MemoryDir, call: Mapping[str, Any]) -> Answer:
        args = _Arguments(call, "check", "drop_missing")
        check, drop_missing = args.flag("check"), args.flag("drop_missing")
        write = folder.write_index(drop_missing=drop_missing, dry_run=check)  # takes the folder lock to write
        result = write.result
        data = {"path": str(folder.index_path), "changed": write.changed, **index_summary(result)}
        answer = _json_answer(data)
        if result.refused is not None:
            return Answer(f"Error: MEMORY.md not written: {for_terminal(result.refused)}", answer.data, True)
        return answer

    # --- resources ---------------------------------------------------------------------------

    def resources(self, roots: Sequence[Path] = ()) -> list[dict[str, Any]]:
        """MEMORY.md and every memory file (quarantined ones aside: they wait for a person)."""
        _, folder = self.workspace.locate(roots)
        with folder_lock(folder.root):
            scan = folder.scan()
        listed = [
            {
                "uri": resource_uri(INDEX_NAME),
                "name": INDEX_NAME,
                "description": "The memory index: one line per memory, loaded at the start of every session.",
                "mimeType": "text/markdown",
            }
        ]
        for memory in sorted(_readable(scan.memories), key=lambda m: m.path):
            listed.append(
                {
                    "uri": resource_uri(memory.path),
                    "name": memory.path,
                    "title": memory.title,
                    "description": memory.description,
                    "mimeType": "text/markdown",
                }
            )
        return json.loads(dumps(listed, indent=None))  # type: ignore[no-any-return]  # secrets masked

    def read_resource(self, uri: str, roots: Sequence[Path] = ()) -> ResourceText:
        """One file's text (secrets masked, control characters escaped). Only MEMORY.md and memory
        files are served, so a URI cannot reach `.memdir/`, `.archive/` or anything outside."""
        path = resource_path(uri)
        _, folder = self.workspace.locate(roots)
        with folder_lock(folder.root):
            if path == INDEX_NAME:
                text = folder.read_index()
                if text is None:
                    raise ResourceNotFound(f"{folder.index_path} does not exist yet; the index tool writes it")
            else:
                # Only a path the scan lists: never `..`, a symlink out, or a file memdir does not read.
                listed = {m.path for m in _readable(folder.scan().memories)}
                loaded = load_file(str(folder.root / path), path, ParseCache.disabled()) if path in listed else None
                if not isinstance(loaded, Memory):
                    raise ResourceNotFound(f"{path or uri!r} is not a memory file of {folder.root}")
                text = loaded.doc.text
        return ResourceText(uri, for_terminal(text))


def _readable(memories: Sequence[Memory]) -> Sequence[Memory]:
    # Not one named with a secret: its URI is percent-encoded, where no mask finds the key.
    return [m for m in memories if m.status != "quarantined" and "/." not in f"/{m.path}" and not withheld_reason(m)]


def _json_answer(data: dict[str, Any]) -> Answer:
    text = dumps(data, indent=None)  # secrets masked, control characters escaped
    return Answer(text, json.loads(text))


class _Arguments:
    """A tool call's arguments, read with errors the model can act on."""

    def __init__(self, call: Mapping[str, Any], *allowed: str) -> None:
        self.tool, self.data = str(call["name"]), call["arguments"]
        unknown = sorted(str(key) for key in self.data if key not in allowed)
        if unknown:
            takes = ", ".join(allowed) or "no arguments"
            raise ToolInputError(f"{self.tool} does not take {', '.join(unknown)}; it takes {takes}")

    def string(self, key: str, required: bool = False) -> str:
        value = self.data.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            raise ToolInputError(f"{self.tool} needs `{key}`, a non-empty string")
        return value

    def count(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100:
            raise ToolInputError(f"`{key}` must be a whole number from 1 to 100, not {value!r}")
        return value

    def flag(self, key: str) -> bool:
        value = self.data.get(key, False)
        if not isinstance(value, bool):
            raise ToolInputError(f"`{key}` must be true or false, not {value!r}")
        return value

    def choice(self, key: str, options: Sequence[str]) -> str | None:
        value = self.data.get(key)
        if value is None:
            return None
        if value not in options:
            raise ToolInputError(f"`{key}` must be one of {', '.join(options)}, not {value!r}")
        return str(value)

    def strings(self, key: str) -> list[str]:
        value = self.data.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ToolInputError(f"`{key}` must be a list of rule codes or names, not {value!r}")
        return [part.strip() for item in value for part in item.split(",") if part.strip()]


def _object(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


_RECALL_TOOL = {
    "name": RECALL,
    "description": (
        "Find the memories that bear on a task, best first, and load them in full: each comes with its "
        "age (verify an old one before asserting it). The same memories `memdir context --for TASK` "
        "injects; nothing is returned when no memory is relevant enough."
    ),
    "inputSchema": _object(
        {
            "query": {
                "type": "string",
                "description": "The task or question, in the user's words. A long one is read by its "
                f"beginning and its end, {PROMPT_QUERY_LIMIT:,} characters in all.",
            },
            "k": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "description": "Most memories to return (else the folder's `recall.k`, 5).",
            },
        },
        ["query"],
    ),
}
_LIST_TOOL = {
    "name": LIST,
    "description": "List the memory files: name, path, type, description, dates, importance, status, indexed.",
    "inputSchema": _object({"type": {"type": "string", "enum": [t.value for t in MemoryType]}}),
}
_LINT_TOOL = {
    "name": LINT,
    "description": (
        "Check the memory folder (frontmatter, bodies, duplicates, secrets, MEMORY.md) and return the "
        "findings as `memdir lint --format json` does."
    ),
    "inputSchema": _object(
        {
            "select": {"type": "array", "items": {"type": "string"}, "description": "Rule codes, prefixes or names."},
            "ignore": {"type": "array", "items": {"type": "string"}, "description": "Rules to leave out."},
        }
    ),
}
_INDEX_TOOL = {
    "name": INDEX,
    "description": (
        "Regenerate MEMORY.md from the memory files, within 200 lines and 25,000 bytes, and report what "
        "it holds and what was left out (as `memdir index --format json`)."
    ),
    "inputSchema": _object(
        {
            "check": {"type": "boolean", "description": "Only say whether MEMORY.md is up to date; write nothing."},
            "drop_missing": {"type": "boolean", "description": "Also remove entries whose file is gone."},
        }
    ),
}


# --- the SDK ----------------------------------------------------------------------------------


def serve(workspace: Workspace) -> None:
    """Serve over stdio until the client closes stdin. Needs the `mcp` package (memdir[mcp])."""
    import anyio

    anyio.run(_serve, workspace)


def build_server(workspace: Workspace) -> Server[Any]:
    """The SDK's low-level server, its handlers calling a MemoryServer in a worker thread (a call
    may wait for the folder lock; the event loop keeps answering meanwhile)."""
    import mcp_types as types
    from anyio import to_thread
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext
    from mcp.shared.exceptions import MCPError

    memory = MemoryServer(workspace)

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult.model_validate({"tools": memory.tool_definitions()})

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        roots = await _client_roots(ctx, workspace)
        answer = await to_thread.run_sync(memory.call_tool, params.name, params.arguments, roots)
        return types.CallToolResult(
            content=[types.TextContent(text=answer.text)], structured_content=answer.data, is_error=answer.is_error
        )

    async def list_resources(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
        roots = await _client_roots(ctx, workspace)
        try:
            listed = await to_thread.run_sync(memory.resources, roots)
        except (MemdirError, OSError) as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=_reason(exc)) from None
        return types.ListResourcesResult.model_validate({"resources": listed})

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        roots = await _client_roots(ctx, workspace)
        try:
            found = await to_thread.run_sync(memory.read_resource, str(params.uri), roots)
        except ResourceNotFound as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        except (MemdirError, OSError) as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=_reason(exc)) from None
        text = types.TextResourceContents(uri=found.uri, text=found.text, mime_type=found.mime_type)
        contents: list[types.TextResourceContents | types.BlobResourceContents] = [text]
        return types.ReadResourceResult(contents=contents)

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


async def _serve(workspace: Workspace) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(workspace)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def _client_roots(ctx: Any, workspace: Workspace) -> list[Path]:
    """The client's workspace roots that are local folders, when it offers roots and they may
    choose the folder; else none (the working directory decides). Asked on every call: roots change."""
    if not workspace.takes_roots:
        return []
    capabilities = ctx.session.client_capabilities
    if capabilities is None or capabilities.roots is None or not ctx.session.can_send_request:
        return []
    import warnings

    import anyio

    try:
        with warnings.catch_warnings(), anyio.fail_after(ROOTS_TIMEOUT_SECONDS):
            warnings.simplefilter("ignore")  # roots are deprecated in the 2026-07-28 protocol; still offered
            result = await ctx.session.list_roots()
    except Exception:  # a client that cannot answer after all: work from the working directory
        return []
    folders = []
    for root in result.roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file":
            path = Path(url2pathname(uri.path))
            if path.is_dir():
                folders.append(path)
    return folders


def _reason(exc: BaseException) -> str:
    return os_error_text(exc) if isinstance(exc, OSError) else str(exc)
