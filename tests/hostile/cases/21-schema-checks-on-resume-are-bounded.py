"""Found while attacking the closed-world schemas: a gate's approval schema is checked by the
web process when someone resolves the gate, and three keywords made that check cost far more
than the request's size, with nothing to stop it."""

from typing import Any

ENUM = list(range(50_000))
WIDE = 2_000
APPROVAL = {
    "type": "object",
    "properties": {
        # jsonschema compares objects pair by pair: quadratic in the array.
        "tags": {"type": "array", "uniqueItems": True},
        # Each failing item's message quotes the whole enum (300 kB each).
        "codes": {"type": "array", "items": {"enum": ENUM}},
        # The value is checked once per branch: schema size times value size.
        "many": {"allOf": [{"items": {"type": "integer"}}] * WIDE},
    },
}
GATE = {
    "schema_version": 1,
    "nodes": [{"kind": "gate", "payload": {"id": "approve", "approval_schema": APPROVAL}}],
    "edges": [],
}


def answer_is_small(corpus: Any) -> None:
    """The violations of a thousand items that are not in a 50,000-member enum: each message
    is shortened, so the answer (and the server's memory) stays small."""
    answer = corpus.request(
        "POST",
        f"/v1/runs/{corpus.names['run']}/resume",
        json={"input": {"codes": [-1] * 1000}},
    )
    assert answer.status_code == 400, answer.text[:500]
    assert len(answer.content) < 1 << 20, len(answer.content)
    violations = answer.json()["error"]["details"]["violations"]
    assert violations[0]["path"] == "$.codes[0]"
    message = violations[0]["message"]
    assert message.startswith("-1 is not one of [0, 1, 2, ")
    assert message.endswith(", 49998, 49999]")
    assert "…" in message and len(message) <= 1000


CASE = {
    "found": [2],
    "attack": (
        "Approval schemas crafted to make the web process's check slow or huge when the gate is "
        "resolved: `uniqueItems` over 20,000 objects (quadratic: minutes), a 50,000-member "
        "`enum` against a thousand items (300 MB of messages), and 2,000 `allOf` branches each "
        "checking a 100,000-item array (minutes)"
    ),
    "bounds": {"seconds": 40},
    "steps": [
        {"do": "store_graph", "graph": GATE},
        {"do": "start_run", "input": None},
        {"do": "wait_run", "expect": {"status": {"state": "suspended"}}},
        {
            "do": "resume",
            "body": {"input": {"tags": [{"k": n} for n in range(20_000)] + [{"k": 7}]}},
            "expect": {
                "status": 400,
                "json": {
                    "error": {
                        "details": {
                            "violations": [
                                {
                                    "path": "$.tags",
                                    "message": {"$contains": "has non-unique elements"},
                                }
                            ]
                        }
                    }
                },
            },
        },
        {"do": "python", "call": answer_is_small},
        {
            "do": "resume",
            "body": {"input": {"many": list(range(100_000))}},
            "expect": {
                "status": 400,
                "json": {
                    "error": {
                        "details": {
                            "violations": [
                                {"path": "$", "message": {"$contains": "could not be checked"}}
                            ]
                        }
                    }
                },
            },
        },
        {"do": "wait_run", "expect": {"status": {"state": "suspended"}, "event_count": 3}},
        {
            "do": "resume",
            "body": {"input": {"tags": [{"k": n} for n in range(20_000)], "codes": [1, 2]}},
            "expect": {"status": 202},
        },
        {"do": "wait_run", "expect": {"status": {"state": "completed"}}},
    ],
}
