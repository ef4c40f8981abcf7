"""Found (issue 20): write requests without a rate."""

from typing import Any

from tests.hostile.quota_users import refused, user_with_limits

RATE = 10


def write_in_a_loop(corpus: Any) -> None:
    user_with_limits(corpus, "writer", {"writes_per_minute": RATE})
    accepted, refusals = 0, 0
    for number in range(2 * RATE + 5):  # two windows at most, should a minute end meanwhile
        answer = corpus.request(
            "POST", "/v1/graphs/validate", client="writer", json={"schema_version": 1,
            "nodes": [], "edges": [], "description": str(number)},
        )  # fmt: skip
        if answer.status_code < 400:
            accepted += 1
            continue
        refused(answer, 429, "rate_limited", "GATEHOUSE_RATE_WRITES_PER_MINUTE")
        refusals += 1
    assert refusals >= 5 and accepted <= 2 * RATE, (accepted, refusals)
    # Reads go on, and so do other users' writes.
    assert corpus.request("GET", "/v1/documents", client="writer").status_code == 200
    assert corpus.request("POST", "/v1/documents", json={"title": "Others"}).status_code == 201


CASE = {
    "found": [],
    "attack": (
        "One user sends write requests as fast as it can: nothing bounded them; now past "
        "the per-user rate each is refused, before its view runs, with 429 rate_limited and "
        "Retry-After, and other users are not affected"
    ),
    # Most of the time is manage.py shell creating the attacker with its limits.
    "bounds": {"seconds": 60},
    "steps": [{"do": "python", "call": write_in_a_loop}],
}
