"""Found while attacking the inbox: a gate's prompt is rendered as Markdown for its card, and
the renderer looks for the end of a link's label from every ``[`` to the end of the text."""

from typing import Any

GATES = 20


def gate(n: int) -> dict[str, Any]:
    # Each prompt its own (renderings are memoised), just under the Markdown length cap.
    prompt = f"Gate-{n}:" + "[" * 19_990
    return {
        "schema_version": 1,
        "nodes": [
            {
                "kind": "gate",
                "payload": {"id": "review", "prompt": prompt, "approval_schema": {}},
            }
        ],
        "edges": [],
    }


CASE = {
    "found": [],
    "attack": (
        f"{GATES} runs waiting at gates whose prompts are 20,000 `[` each: every `[` may open a "
        "link, and rendering one such prompt took seconds, so an approver's inbox page held a "
        "web thread for over a minute (a page shows fifty cards)"
    ),
    "bounds": {"seconds": 20},
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
        {
            "do": "request",
            "as": "browser",
            "path": "/inbox/",
            "expect": {"status": 200, "contains": [f"Gate-{n}:[[[[" for n in range(GATES)]},
        }
    ],
}
