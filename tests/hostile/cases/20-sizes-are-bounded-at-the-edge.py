"""Found 11: node ids without a length limit; a start input over the event cap that failed
late, when the run's first event was written."""

from typing import Any

LONG_ID = "n" * 300
TOO_LONG = f"node `{'n' * 64}…`: the id is 300 characters, over the 256-character cap"
TWO_MIB = "x" * (2 << 20)


def no_run_was_created(corpus: Any) -> None:
    answer = corpus.request("GET", "/v1/runs", params={"graph": corpus.names["graph"], "limit": 5})
    assert answer.status_code == 200
    assert answer.json()["runs"] == [], "a run was created for the refused input"


CASE = {
    "found": 11,
    "attack": (
        "A node id of 300 characters, and a run started with a 2 MiB input: within the body "
        "cap (8 MiB) but over the event cap (1 MiB), it used to fail late and confusingly, "
        "when the run's first event was written"
    ),
    "steps": [
        {
            "do": "store_graph",
            "graph": {
                "schema_version": 1,
                "edges": [],
                "nodes": [{"kind": "tool", "payload": {"id": LONG_ID, "tool": "echo"}}],
            },
            "expect": {
                "status": 400,
                "json": {
                    "error": {
                        "details": {
                            "errors": [
                                {
                                    "code": "node_id_too_long",
                                    "message": TOO_LONG,
                                }
                            ]
                        }
                    }
                },
            },
        },
        {
            "do": "store_graph",
            "graph": {
                "schema_version": 1,
                "edges": [],
                "nodes": [{"kind": "tool", "payload": {"id": "n" * 256, "tool": "echo"}}],
            },
        },
        {
            "do": "start_run",
            "input": {"text": TWO_MIB},
            "expect": {
                "status": 413,
                "json": {
                    "error": {
                        "code": "payload_too_large",
                        "details": {"limit": 1048576},
                        "message": {"$contains": "1048576"},
                    }
                },
            },
        },
        {"do": "python", "call": no_run_was_created},
    ],
}
