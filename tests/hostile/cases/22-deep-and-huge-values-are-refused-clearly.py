"""Values built to break a reader: nesting far past the 127 levels documents may have, and
integers of thousands of digits (Python refuses to read more than 4,300)."""

DEEP = 100_000
GATE = {
    "schema_version": 1,
    "nodes": [{"kind": "gate", "payload": {"id": "approve", "approval_schema": {}}}],
    "edges": [],
}


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


CASE = {
    "found": [7],
    "attack": (
        "A run's input and a gate's resolution nested 100,000 and 200 levels deep, and holding "
        "an integer of 5,000 digits: each must be a clear 400, never a 500"
    ),
    "steps": [
        {"do": "store_graph", "graph": GATE},
        *[
            {
                "do": "request",
                "method": "POST",
                "path": "/v1/graph-runs",
                "headers": {"Content-Type": "application/json"},
                "body": '{"graph_hash": "{{graph}}", "input": ' + value + "}",
                "expect": {"status": 400},
            }
            for value in (nested(DEEP), nested(200), "1" * 5000)
        ],
        {
            "do": "request",
            "path": "/v1/runs",
            "params": {"graph": "{{graph}}"},
            "expect": {"status": 200, "json": {"runs": []}},
        },
        {"do": "start_run", "input": {"ok": True}},
        {"do": "wait_run", "expect": {"status": {"state": "suspended"}}},
        *[
            {"do": "resume", "raw": '{"input": ' + value + "}", "expect": {"status": 400}}
            for value in (nested(DEEP), nested(200), "1" * 5000)
        ],
        {"do": "wait_run", "expect": {"status": {"state": "suspended"}, "event_count": 3}},
    ],
}
