"""Found while attacking the inbox: a gate's card has a field per property of its approval
schema, and nothing bounded how many."""

from typing import Any

GATES = 3
FIELDS = 9_000


def gate(n: int) -> dict[str, Any]:
    properties = {f"g{n}f{k}": {"enum": ["a", "b", "c"]} for k in range(FIELDS)}
    return {
        "schema_version": 1,
        "nodes": [
            {
                "kind": "gate",
                "payload": {"id": "review", "approval_schema": {"properties": properties}},
            }
        ],
        "edges": [],
    }


def each_card_is_one_json_field(corpus: Any) -> None:
    """Each card offers the JSON text area (with the schema it must match) instead of 9,000
    fields, so it can be posted."""
    page = corpus.request("GET", "/inbox/", client="browser")
    assert page.status_code == 200
    assert page.text.count('name="approval-json"') >= GATES
    assert 'name="field-g0f0"' not in page.text


CASE = {
    "found": [],
    "attack": (
        f"{GATES} runs waiting at gates whose approval schemas have {FIELDS:,} properties each: "
        "every card had a field per property, 3.5 MB of page per card (a page of fifty: "
        "175 MB), and a form no browser could post (Django refuses more than 1,000 fields): "
        "the gate could not be resolved from the inbox at all"
    ),
    "steps": [
        step
        for n in range(GATES)
        for step in (
            {"do": "store_graph", "graph": gate(n)},
            {"do": "start_run", "input": None},
            {"do": "wait_run", "expect": {"status": {"state": "suspended"}}},
        )
    ]
    + [
        {"do": "python", "call": each_card_is_one_json_field},
        {
            "do": "request",
            "as": "browser",
            "method": "POST",
            "path": "/inbox/{{run}}/resolve/",
            "headers": {"HX-Request": "true"},
            "form": {"node": "review", "seq": "2", "approval-json": '{"g2f0": "b"}'},
            "expect": {"status": 200},
        },
        {"do": "wait_run", "expect": {"status": {"state": "completed"}}},
    ],
}
