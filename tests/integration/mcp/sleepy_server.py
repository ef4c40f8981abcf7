"""A stdio MCP server for the tests of a worker's servers, in the standard library alone (as the
reference's example servers are, so a worker starts it quickly): one tool, ``nap``, which says
on stderr that it naps (the worker logs that under the server's name), then sleeps in a child
process of the server's own (so a killed worker leaves a server *and* its child to clean up).
``nap`` carries no annotation: a write."""

import json
import subprocess
import sys

NAP = {
    "name": "nap",
    "description": "Sleep `seconds` in a child process.",
    "inputSchema": {
        "type": "object",
        "properties": {"seconds": {"type": "number"}},
        "required": ["seconds"],
    },
}


def nap(arguments: dict) -> dict:
    seconds = float(arguments.get("seconds", 0))
    print(f"sleepy: napping for {seconds:g} s", file=sys.stderr, flush=True)
    subprocess.run(["sleep", f"{seconds:g}"], check=True)
    return {"content": [{"type": "text", "text": "rested"}], "isError": False}


def answer(request: dict) -> dict | None:
    method, ident = request.get("method"), request.get("id")
    params = request.get("params") or {}
    if method == "initialize":
        result: dict = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "sleepy", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [NAP]}
    elif method == "tools/call" and params.get("name") == "nap":
        result = nap(params.get("arguments") or {})
    elif method == "ping":
        result = {}
    elif ident is None:
        return None  # a notification
    else:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": method}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        response = answer(json.loads(line))
        if response is not None:
            sys.stdout.write(json.dumps(response) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
