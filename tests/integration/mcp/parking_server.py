"""A stdio MCP server for the tests whose tools answer with ``_meta.salvor`` park requests
(spec 08, section 5), built with the ``mcp`` package's own server. ``PARK_META`` (JSON, in its
environment) is what ``park`` puts under ``_meta.salvor``; ``failing_park`` flags it
``isError`` as well."""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

server = MCPServer("parks")


def _result(is_error: bool) -> CallToolResult:
    salvor: Any = json.loads(os.environ.get("PARK_META", "null"))
    return CallToolResult(
        content=[TextContent(type="text", text="parked")],
        structured_content={"ticket": "T-1"},
        is_error=is_error,
        _meta={"salvor": salvor, "trace": "abc"},
    )


@server.tool()
def park(ticket: str) -> CallToolResult:
    """Ask the run to wait, as PARK_META says."""
    return _result(False)


@server.tool()
def failing_park(ticket: str) -> CallToolResult:
    """Fail, and still ask the run to wait."""
    return _result(True)


if __name__ == "__main__":
    server.run()
