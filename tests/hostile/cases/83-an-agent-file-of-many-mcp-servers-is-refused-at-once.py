"""An agent file of a thousand ``[[mcp_servers]]`` entries (each a program to start) is
refused at once with one problem naming the cap, not a thousand matches or listings."""

TOML = {"Content-Type": "application/toml"}
BODY = 'model = "claude-opus-4-8"\nsystem_prompt = "x"\n\n' + (
    '[[mcp_servers]]\ncommand = "sh"\nargs = ["-c", "sleep 60"]\n' * 1000
)

CASE = {
    "found": [],
    "attack": (
        "An agent file (50 KB) of 1,000 [[mcp_servers]] entries, each a `sh -c sleep 60`: "
        "matched and listed one by one it would cost a thousand refusals, or a thousand "
        "processes where a catalogue matched them"
    ),
    "bounds": {"seconds": 20},
    "steps": [
        {
            "do": "request",
            "method": "POST",
            "path": "/v1/agents",
            "headers": TOML,
            "body": BODY,
            "expect": {
                "status": 400,
                "json": {
                    "error": {
                        "code": "invalid_agent",
                        "details": {
                            "errors": [
                                {
                                    "code": "too_many_mcp_servers",
                                    "field": "mcp_servers",
                                    "message": {"$contains": "1000 `[[mcp_servers]]` entries"},
                                }
                            ]
                        },
                    }
                },
            },
        },
    ],
}
