"""Found while attacking validation: the memos of what schemas cost to check were keyed by the
schemas' canonical bytes, so each one kept a large schema's bytes for as long as it lived
(thousands of entries), and any signed-in user may ask for a validation."""

import json
from typing import Any

REQUESTS = 120
MEMBERS = 100_000


def flood(corpus: Any) -> None:
    """Each document has a schema of its own (a 100,000-member enum, 700 kB): before, every
    request left about two megabytes behind in the web process."""
    for n in range(REQUESTS):
        members = list(range(n * MEMBERS, (n + 1) * MEMBERS))
        document = {
            "schema_version": 1,
            "nodes": [
                {
                    "kind": "tool",
                    "payload": {"id": "t", "tool": "echo", "input_schema": {"enum": members}},
                }
            ],
            "edges": [],
        }
        answer = corpus.request(
            "POST", "/v1/graphs/validate", data=json.dumps(document).encode(), client="api_nobody"
        )
        assert answer.status_code == 200 and answer.json()["valid"], answer.text[:300]


CASE = {
    "found": [],
    "attack": (
        f"{REQUESTS} validations, as a user with no role, of documents each holding a different "
        "700 kB schema: the web process kept every schema's bytes in its memos (150 such "
        "requests: +290 MB; its memos had room for 4,096)"
    ),
    "bounds": {"seconds": 40, "server_growth_mib": 100},
    "steps": [{"do": "python", "call": flood}],
}
