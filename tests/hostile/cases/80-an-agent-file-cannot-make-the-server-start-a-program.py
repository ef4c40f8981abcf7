"""The reference starts whatever ``command`` an agent file's ``[[mcp_servers]]`` names. Here an
entry must name a server of the operator's catalogue (this installation has none), so a file
naming a program is refused naming the entry, and nothing is started."""

from pathlib import Path
from typing import Any

TOML = {"Content-Type": "application/toml"}
AGENT = 'model = "claude-opus-4-8"\nsystem_prompt = "x"\n\n'
ENTRY = '[[mcp_servers]]\ncommand = "sh"\nargs = ["-c", "touch {{folder}}/started-by-an-agent"]\n'


def nothing_started(corpus: Any) -> None:
    assert not (Path(corpus.names["folder"]) / "started-by-an-agent").exists()


def refused(**body: Any) -> dict[str, Any]:
    return {
        "do": "request",
        "method": "POST",
        "path": "/v1/agents",
        **body,
        "expect": {
            "status": 400,
            "json": {
                "error": {
                    "code": "invalid_agent",
                    "details": {
                        "errors": [
                            {
                                "code": "unknown_mcp_server",
                                "field": "mcp_servers[0]",
                                "message": {
                                    "$contains": [
                                        "`[[mcp_servers]]` entry 1 (`sh -c touch ",
                                        "matches no MCP server of this installation",
                                        "The catalogue has no servers at all",
                                    ]
                                },
                            }
                        ]
                    },
                }
            },
        },
    }


CASE = {
    "found": [],
    "attack": (
        "An agent file whose [[mcp_servers]] entry names a program (`sh -c touch …`), sent as "
        "TOML and as the reference's JSON fields, hoping the server starts it as the reference's "
        "CLI would: a remote-code hole on a shared server"
    ),
    "bounds": {"seconds": 20},
    "steps": [
        refused(headers=TOML, body=AGENT + ENTRY),
        refused(
            json={
                "model": "claude-opus-4-8",
                "system_prompt": "x",
                "mcp_servers": [{"command": "sh", "args": ["-c", "touch {{folder}}/x"]}],
            }
        ),
        {"do": "python", "call": nothing_started},
    ],
}
