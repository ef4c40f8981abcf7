"""Found here (issue 20, *the live streams fail*): a run page showed "queued" for seconds after
its run waited at a gate. Its stream, opened on the connection the page had just come on,
answered ``500`` (the previous request's closed context), and the browser tried again seconds
later."""

import html
import re
from typing import Any

from tests.hostile.live import browser_cookies, connection_to, open_stream

#: A short nap, then a gate: the page loads before the run waits.
NAP_THEN_GATE = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "rest", "tool": "nap"}},
        {"kind": "gate", "payload": {"id": "decide", "approval_schema": {}}},
    ],
    "edges": [{"from": "rest", "to": "decide"}],
}
PAGES = 5
STREAM_URL = re.compile(r'sse-connect="(/live/\?run=[^"]+)"')
STATE = re.compile(r'<div id="run-live" class="run-live" data-state="(\w+)">')
SEEN = re.compile(r'<input type="hidden" id="run-seen" name="seen" value="(\d+)">')


def hears_the_wait(corpus: Any) -> None:
    """On one kept-alive connection, as a browser: the run page (a few times, as a person
    reloading it), then the stream it opens. Each ``event: run`` makes the page ask for its
    live part (``hx-get`` with the events it shows); the gate's wait arrives that way."""
    run, cookie = corpus.names["run"], {"Cookie": browser_cookies(corpus)}
    connection = connection_to(corpus.server.url, corpus.left())
    try:
        for _ in range(PAGES):
            connection.request("GET", f"/runs/{run}/", headers=cookie)
            answer = connection.getresponse()
            page = answer.read().decode()
            assert answer.status == 200, page[:500]
        found_state, found_url = STATE.search(page), STREAM_URL.search(page)
        assert found_state and found_url, page[:2000]
        assert found_state.group(1) in ("queued", "running"), found_state.group(1)
        seen = SEEN.search(page)
        assert seen, page[:2000]
        shown = int(seen.group(1))
        frames = open_stream(connection, html.unescape(found_url.group(1)), cookie, corpus)

        def waiting(event: str, data: str) -> bool:
            nonlocal shown
            if event != "run":
                return False
            live = corpus.request(
                "GET", f"/runs/{run}/", client="browser", params={"seen": shown},
                headers={"HX-Request": "true"},
            )  # fmt: skip
            if live.status_code == 204:  # nothing new since what the page shows
                return False
            assert live.status_code == 200, live.text[:500]
            shown = int(SEEN.search(live.text).group(1))  # type: ignore[union-attr]
            state = STATE.search(live.text)
            assert state, live.text[:1000]
            return state.group(1) == "suspended" and "Waiting for a person" in live.text

        frames.until(waiting, "the page's stream brought the gate's wait")
    finally:
        connection.close()


CASE = {
    "found": [],
    "attack": (
        "A person opens a run's page (reloading it a few times) while the run is about to "
        "wait at a gate: the page's stream, opened on the same kept-alive connection, could "
        "answer 500, and the page said 'queued' until the browser tried again seconds later"
    ),
    "bounds": {"seconds": 30},
    "steps": [
        {"do": "store_graph", "graph": NAP_THEN_GATE},
        {"do": "start_run", "input": {"seconds": 2}},
        {"do": "python", "call": hears_the_wait},
    ],
}
