"""A streamable-HTTP MCP server for the tests, built with the ``mcp`` package's own server:
``python http_server.py PORT TOKEN`` serves one tool, ``lookup_dispute`` (read-only), at
``http://127.0.0.1:PORT/mcp``, and answers 401 to a request without ``Bearer TOKEN``."""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("disputes")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def lookup_dispute(dispute_id: str) -> dict[str, str]:
    """Look up one dispute by its id."""
    return {"dispute_id": dispute_id, "status": "open"}


def guarded(app: Any, token: str) -> Any:
    async def guard(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"no"})
                return
        await app(scope, receive, send)

    return guard


if __name__ == "__main__":
    port, token = int(sys.argv[1]), sys.argv[2]
    app = guarded(server.streamable_http_app(), token)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
