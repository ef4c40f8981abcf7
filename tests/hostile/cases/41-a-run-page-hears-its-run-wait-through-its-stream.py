"""Found here (issue 20, *the live streams fail*): a run page showed "queued" for seconds after
its run waited at a gate. A person starts a run from the graph's page with a large input; the
browser follows to the run's page and opens its stream on the same kept-alive connection. That
stream answered ``500`` (the context the large body's request left behind had closed), and the
browser tried again only seconds later."""

import html
import json
import re
from typing import Any
from urllib.parse import urlencode

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
#: An input larger than the server's read buffer (64 KiB), as a pasted document would be.
INPUT = {"seconds": 2, "document": "x" * 100_000}
STREAM_URL = re.compile(r'sse-connect="(/live/\?run=[^"]+)"')
STATE = re.compile(r'<div id="run-live" class="run-live" data-state="(\w+)">')
SEEN = re.compile(r'<input type="hidden" id="run-seen" name="seen" value="(\d+)">')


def hears_the_wait(corpus: Any) -> None:
    """On one kept-alive connection, as a browser: the start form posted, its redirect to the
    run's page followed, then the stream that page opens. Each ``event: run`` makes the page
    ask for its live part (``hx-get`` with the events it shows); the gate's wait arrives that
    way."""
    cookies = browser_cookies(corpus)
    csrf = corpus.clients["browser"].cookies["csrftoken"]
    digest = corpus.names["graph"].split(":", 1)[1]
    form = urlencode({"csrfmiddlewaretoken": csrf, "input": json.dumps(INPUT)})
    connection = connection_to(corpus.server.url, corpus.left())
    try:
        connection.request("POST", f"/g/{digest}/runs/", body=form, headers={
            "Cookie": cookies, "Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
        started = connection.getresponse()
        started.read()
        assert started.status == 302, started.status
        run_page = started.headers["Location"]
        run = run_page.strip("/").split("/")[-1]
        connection.request("GET", run_page, headers={"Cookie": cookies})
        answer = connection.getresponse()
        page = answer.read().decode()
        assert answer.status == 200, page[:500]
        found_state, found_url = STATE.search(page), STREAM_URL.search(page)
        seen = SEEN.search(page)
        assert found_state and found_url and seen, page[:2000]
        assert found_state.group(1) in ("queued", "running"), found_state.group(1)
        shown = int(seen.group(1))
        frames = open_stream(
            connection, html.unescape(found_url.group(1)), {"Cookie": cookies}, corpus
        )

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
        "A person starts a run from the graph's page with a 100 kB input and follows it to the "
        "run's page, whose stream opens on the same kept-alive connection: it answered 500, "
        "and the page said 'queued' until the browser tried again seconds later"
    ),
    "bounds": {"seconds": 30},
    "steps": [
        {"do": "store_graph", "graph": NAP_THEN_GATE},
        {"do": "python", "call": hears_the_wait},
    ],
}
