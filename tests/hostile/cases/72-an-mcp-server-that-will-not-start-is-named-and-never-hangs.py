"""MCP servers that will not start: a missing program, one that exits at once, one that never
answers ``initialize``. ``manage.py mcp list`` names each with why, within the start timeout."""

from pathlib import Path
from typing import Any

CATALOGUE = """
[servers.missing]
command = "gatehouse-no-such-program"

[servers.exits]
command = "sh"
args = ["-c", "echo 'the licence file is gone' >&2; exit 3"]

[servers.mute]
command = "sleep"
args = ["120"]
"""


def write_catalogue(corpus: Any) -> None:
    (Path(corpus.names["folder"]) / "dead-mcp.toml").write_text(CATALOGUE, encoding="utf-8")


CASE = {
    "found": [],
    "attack": (
        "Tool servers that cannot be started, or start and never speak: a client that waited "
        "on them would hang a run or a command for ever"
    ),
    "bounds": {"seconds": 90},
    "steps": [
        {"do": "python", "call": write_catalogue},
        {
            "do": "command",
            "args": ["mcp", "list"],
            "env": {
                "GATEHOUSE_MCP_SERVERS": "{{folder}}/dead-mcp.toml",
                "GATEHOUSE_MCP_START_TIMEOUT": "2",
            },
            "expect": {
                "returncode": 1,
                "stdout": {
                    "$contains": [
                        "the MCP server `missing` could not be started: it exited before "
                        "answering: cannot start `gatehouse-no-such-program`: No such file",
                        "the MCP server `exits` could not be started: it exited before "
                        "answering: the licence file is gone",
                        "the MCP server `mute` could not be started: it did not answer "
                        "`initialize` within 2 s",
                    ]
                },
                "stderr": {"$contains": "could not list: missing, exits, mute"},
            },
        },
    ],
}
