"""`memdir mcp`: serve the memory folder to an MCP client (Claude Code, Claude Desktop, Cursor) over stdio."""

from __future__ import annotations

import os

import typer

from memdir.cli.state import fail
from memdir.cli.typer_app import app, state

INSTALL_HINT = "pip install 'memdir[mcp]'"


@app.command()
def mcp(ctx: typer.Context) -> None:
    """Serve the memory folder as a Model Context Protocol server on stdin and stdout.

    Tools: recall, create_memory, modify_memory, list_memories, lint, index. Resources: MEMORY.md and
    each memory file. The folder is found for every call as the other commands find it, or from the
    client's workspace root when the client offers roots and neither --dir nor MEMDIR_DIR is set. Needs
    the `mcp` extra: `pip install 'memdir[mcp]'`. Client set-up: docs/mcp.md.
    """
    _require_sdk()
    from memdir.integrations.mcp_server import Workspace, serve

    st = state(ctx)
    fixed_today = st.today if os.environ.get("MEMDIR_TODAY") else None  # else each call's own date
    serve(Workspace(dir_option=st.dir_option, cwd=st.cwd, env=dict(os.environ), today=fixed_today,
                    cache=not st.no_cache))  # fmt: skip


def _require_sdk() -> None:
    """One line, not an ImportError, when the optional SDK is missing or of another major version."""
    from importlib import metadata, util

    if util.find_spec("mcp") is None:
        fail(f"`memdir mcp` needs the MCP SDK: {INSTALL_HINT}")
    try:
        version = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        version = ""
    if version.split(".")[0] != "2":
        fail(f"`memdir mcp` needs version 2 of the MCP SDK, not {version or 'an unknown one'}: {INSTALL_HINT}")
