"""A catalogue of MCP servers that is wrong in every way an operator (or a tampered file) can
make it: ``manage.py check`` names each entry and what is wrong, and nothing is started."""

from pathlib import Path
from typing import Any

BAD = """
[servers.both]
command = "python3"
url = "https://tools.example.com/mcp"

[servers.neither]
args = ["server.py"]

[servers.typo]
comand = "python3"

[servers.leaky]
command = "python3"
env = { TOKEN = "${GATEHOUSE_NOT_SET_ANYWHERE}" }
"""


def write_catalogues(corpus: Any) -> None:
    folder = Path(corpus.names["folder"])
    (folder / "bad-mcp.toml").write_text(BAD, encoding="utf-8")
    # tomllib is quadratic in a dotted key's depth: the file is bounded before it is parsed.
    (folder / "bomb-mcp.toml").write_text("a." * 200_000 + "a = 1", encoding="utf-8")


CASE = {
    "found": [],
    "attack": (
        "A catalogue (GATEHOUSE_MCP_SERVERS) with two transports in one entry, none in another, "
        "a misspelt key and an unset variable; and one of a 200,000-level dotted key, which "
        "tomllib would take minutes and gigabytes to parse"
    ),
    # Two `manage.py check` runs: Django's own start-up is most of it on a busy machine.
    "bounds": {"seconds": 90},
    "steps": [
        {"do": "python", "call": write_catalogues},
        {
            "do": "command",
            "args": ["check"],
            "env": {"GATEHOUSE_MCP_SERVERS": "{{folder}}/bad-mcp.toml"},
            "expect": {
                "returncode": 1,
                "stderr": {
                    "$contains": [
                        "server `both`: has both `command` (stdio) and `url` (HTTP)",
                        "server `neither`: has neither `command` (a stdio server) nor `url`",
                        "server `typo`: unknown key `comand`",
                        "server `leaky`: `env.TOKEN` names `${GATEHOUSE_NOT_SET_ANYWHERE}`",
                        "gatehouse.E010",
                    ]
                },
            },
        },
        {
            "do": "command",
            "args": ["check"],
            "env": {"GATEHOUSE_MCP_SERVERS": "{{folder}}/bomb-mcp.toml"},
            "expect": {
                "returncode": 1,
                "stderr": {"$contains": "the file: the file is larger than 262144 bytes"},
            },
        },
    ],
}
