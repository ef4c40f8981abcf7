"""Found (issue 20): runs started without a rate."""

from typing import Any

from tests.hostile.quota_users import refused, user_with_limits

RATE = 3
NEVER_ENDS = {  # a gate: each run parks at once and costs nothing more
    "schema_version": 1,
    "nodes": [{"kind": "gate", "payload": {"id": "wait", "approval_schema": {}}}],
    "edges": [],
}


def start_in_a_loop(corpus: Any) -> None:
    user_with_limits(corpus, "starter", {"runs_per_hour": RATE})
    stored = corpus.request("POST", "/v1/graphs", client="starter", json=NEVER_ENDS)
    assert stored.status_code in (200, 201), stored.text[:500]
    graph = stored.json()["graph"]
    started, refusals = 0, 0
    for _ in range(2 * RATE + 1):  # two windows at most, should an hour end meanwhile
        answer = corpus.request(
            "POST", "/v1/graph-runs", client="starter", json={"graph_hash": graph}
        )
        if answer.status_code == 201:
            started += 1
            continue
        error = refused(answer, 429, "rate_limited", "GATEHOUSE_RATE_RUNS_PER_HOUR")
        assert error["details"]["limit"] == RATE
        refusals += 1
    assert refusals >= 1 and started <= 2 * RATE
    runs = corpus.request("GET", "/v1/runs", params={"graph": graph, "limit": 50}).json()["runs"]
    assert len(runs) == started


CASE = {
    "found": [],
    "attack": (
        "An operator starts runs in a loop: nothing bounded how many; now the one past the "
        "hourly rate is refused with 429 rate_limited, Retry-After and the hour's end, and "
        "no run is created for it"
    ),
    # Most of the time is manage.py shell creating the attacker with its limits.
    "bounds": {"seconds": 60},
    "steps": [{"do": "python", "call": start_in_a_loop}],
}
