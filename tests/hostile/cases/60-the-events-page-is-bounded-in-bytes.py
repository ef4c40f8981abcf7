"""Found in issue 20 (*Reads are unbounded in bytes*): one user with no role reading the events
page of a 135 MB run added 440 MB to the web process; a page held up to 1,000 events whatever
their size."""

import json
from typing import Any

from tests.hostile.large_runs import seed_steps

#: ``GATEHOUSE_EVENTS_PAGE_BYTES``'s default: a page stops before 1 MiB of events (at least one).
PAGE_BYTES = 1 << 20
#: The largest event of the seeded run is about 800 KiB.
EVENT_BYTES = 900 * 1024


def page_through(corpus: Any) -> None:
    """Pages of at most 1 MiB (or one event), whatever ``limit`` asks for; ``next`` continues
    exactly where the page stopped, and the pages hold the whole log once, in order."""
    run, seqs, after, pages = corpus.names["run"], [], None, 0
    while True:
        params = {"limit": 1000, **({"after": after} if after is not None else {})}
        answer = corpus.request("GET", f"/v1/runs/{run}/events", params=params,
                                client="api_nobody")  # fmt: skip
        assert answer.status_code == 200, answer.text[:500]
        assert len(answer.content) < PAGE_BYTES + EVENT_BYTES, len(answer.content)
        body = json.loads(answer.content)
        assert body["events"], "a page holds at least one event"
        seqs += [event["seq"] for event in body["events"]]
        pages += 1
        after = body["next"]
        if after is None:
            break
        assert after == seqs[-1]
    assert seqs == list(range(corpus.names["events"]))
    assert pages >= corpus.names["events"] // 2


CASE = {
    "found": [],
    "attack": (
        "A completed run of 120 tool calls of ~800 KiB each (~100 MB of events), then its "
        "events page, as a user with no role: `GET /v1/runs/{id}/events?limit=1000` answered "
        "the whole log in one body (issue 20: +440 MB for a 135 MB run)"
    ),
    "bounds": {"seconds": 240, "server_growth_mib": 64},
    "steps": [*seed_steps(), {"do": "python", "call": page_through}],
}
