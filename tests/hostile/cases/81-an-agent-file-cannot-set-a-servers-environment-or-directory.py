"""An ``[[mcp_servers]]`` entry may not bring its own ``env`` (``LD_PRELOAD``, ``PATH``) or
``cwd``: a server's environment and directory are the operator's catalogue's. Each is refused
naming the field, before any server is matched."""

from typing import Any

TOML = {"Content-Type": "application/toml"}
ENTRY = (
    'model = "claude-opus-4-8"\nsystem_prompt = "x"\n\n[[mcp_servers]]\ncommand = "python3"\n'
    'args = ["examples/payroll/server.py"]\n'
)


def refused(extra: str, fields: list[str]) -> dict[str, Any]:
    return {
        "do": "request",
        "method": "POST",
        "path": "/v1/agents",
        "headers": TOML,
        "body": ENTRY + extra,
        "expect": {
            "status": 400,
            "json": {
                "error": {
                    "code": "invalid_agent",
                    "details": {
                        "errors": [
                            {
                                "code": "unsupported_field",
                                "field": field,
                                "message": {"$contains": "GATEHOUSE_MCP_SERVERS"},
                            }
                            for field in fields
                        ]
                    },
                }
            },
        },
    }


CASE = {
    "found": [],
    "attack": (
        "An agent file naming a server with an environment of its own (`LD_PRELOAD` of a "
        "library it wrote, a `PATH` of its choosing, a ledger path pointing at a server file) "
        "or a working directory, to turn an operator's server into its own program"
    ),
    "bounds": {"seconds": 20},
    "steps": [
        refused('env = { LD_PRELOAD = "/tmp/evil.so", PATH = "/tmp" }\n', ["mcp_servers[0].env"]),
        refused('cwd = "/"\n', ["mcp_servers[0].cwd"]),
        refused(
            'env = { SALVOR_PAYROLL_LEDGER = "/etc/passwd" }\ncwd = "/etc"\n',
            ["mcp_servers[0].env", "mcp_servers[0].cwd"],
        ),
    ],
}
