"""Found in issue 20 (*Reads are unbounded in bytes*): the run page's timeline read 50 events
whole to show 300 characters of each, and one event's **whole payload** was rendered whole into
the page."""

import re
from typing import Any

from tests.hostile.large_runs import seed_steps

#: A row of the timeline.
ROW = r'<tr id="event-(\d+)"'
#: A page of the run's HTML, whatever its events weigh.
PAGE_BYTES = 512 * 1024


def read_the_page(corpus: Any) -> None:
    """The run page, every **Load older** page, and a large event's payload: each answer
    bounded; the payload is shown cut, with a link to the whole of it, which is the event's
    payload exactly."""
    run, events = corpus.names["run"], corpus.names["events"]
    page = corpus.request("GET", f"/runs/{run}/", client="browser_nobody")
    assert page.status_code == 200, page.text[:500]
    assert len(page.content) < PAGE_BYTES, len(page.content)
    shown = set(map(int, re.findall(ROW, page.text)))
    before = min(shown)
    while True:
        older = corpus.request("GET", f"/runs/{run}/events/", params={"before": before},
                               client="browser_nobody")  # fmt: skip
        assert older.status_code == 200, older.text[:500]
        assert len(older.content) < PAGE_BYTES, len(older.content)
        found = set(map(int, re.findall(ROW, older.text)))
        shown |= found
        if not found or min(found) == 0:
            break
        before = min(found)
    assert shown == set(range(events)), sorted(set(range(events)) - shown)[:20]
    large = corpus.request("GET", f"/runs/{run}/events/5/", client="browser_nobody")
    assert large.status_code == 200, large.text[:500]
    assert len(large.content) < PAGE_BYTES, len(large.content)
    assert "payload.json" in large.text, large.text[:3000]
    whole = corpus.request("GET", f"/runs/{run}/events/5/payload.json", client="browser_nobody")
    assert whole.status_code == 200, whole.status_code
    assert whole.headers["Content-Type"].startswith("application/json")
    log = corpus.request("GET", f"/v1/runs/{run}/events", params={"after": 4, "limit": 1})
    assert whole.json() == log.json()["events"][0]["event"]["payload"]


CASE = {
    "found": [],
    "attack": (
        "The run page of a ~100 MB run, every **Load older** page and one event's whole "
        "payload, as a user with no role (issue 20: the timeline decoded 50 events of up to "
        "the event cap to show 300 characters of each)"
    ),
    "bounds": {"seconds": 240, "server_growth_mib": 80},
    "steps": [*seed_steps(), {"do": "python", "call": read_the_page}],
}
