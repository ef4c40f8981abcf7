"""Found here (issue 20, *the live streams fail*): the open inbox page updated its badge from
the page's stream, never its list; a new run waiting for a person showed only after a reload."""

from typing import Any

from tests.hostile.live import browser_cookies, connection_to, open_stream

#: A gate of its own (its hash is no earlier attack's, so the filtered list starts empty).
GATE = {
    "schema_version": 1,
    "nodes": [
        {
            "kind": "gate",
            "payload": {"id": "followed-by-the-open-inbox", "approval_schema": {"type": "string"}},
        }
    ],
    "edges": [],
}
RESOLVE = {"node": "followed-by-the-open-inbox", "input": "approved"}


def the_list(corpus: Any, query: str) -> str:
    """The inbox's list as the page's script reads it on a change of the count
    (``static/js/inbox-live.js``): the page's own URL, as an htmx fragment."""
    answer = corpus.request("GET", "/inbox/" + query, client="browser",
                            headers={"HX-Request": "true"})  # fmt: skip
    assert answer.status_code == 200, answer.text[:500]
    fragment = answer.text.lstrip()
    assert fragment.startswith('<div id="inbox-cards" data-live-list>'), fragment[:300]
    return fragment


def follows(corpus: Any) -> None:
    """The inbox is open, filtered to one graph (so other attacks' parked runs are not on it).
    A run of that graph parks at its gate: the page's stream says the count changed, and the
    list read then holds the run's card; once resolved, the stream says so again and the card
    is gone."""
    graph, query = corpus.names["graph"], f"?graph={corpus.names['graph']}"
    page = corpus.request("GET", "/inbox/" + query, client="browser")
    assert page.status_code == 200
    # What the page runs: the stream of the whole site, and the script that follows it.
    assert 'sse-connect="/live/"' in page.text, "the page opens no stream"
    assert "js/inbox-live.js" in page.text, "nothing on the page follows the stream's count"
    assert '<div id="inbox-cards" data-live-list>' in page.text, "the list is not marked live"
    assert "Nothing waits for you to decide that matches these filters" in page.text

    connection = connection_to(corpus.server.url, corpus.left())
    try:
        frames = open_stream(connection, "/live/", {"Cookie": browser_cookies(corpus)}, corpus)
        frames.until(lambda event, data: event == "count", "the first count")
        started = corpus.request("POST", "/v1/graph-runs", json={"graph_hash": graph})
        assert started.status_code == 201, started.text[:500]
        run = started.json()["run"]

        def changed_and_listed(event: str, data: str) -> bool:
            return event == "count" and f"/runs/{run}/" in the_list(corpus, query)

        frames.until(changed_and_listed, "the list held the run's card")
        assert '<article class="card inbox-card inbox-gate"' in the_list(corpus, query)

        resumed = corpus.request("POST", f"/v1/runs/{run}/resume", json=RESOLVE)
        assert resumed.status_code == 202, resumed.text[:500]

        def gone(event: str, data: str) -> bool:
            # Other attacks' runs may park meanwhile: any change of the count makes the page
            # read its list again, and this run's card must have left it.
            return event == "count" and f"/runs/{run}/" not in the_list(corpus, query)

        frames.until(gone, "the resolved card left the list")
    finally:
        connection.close()


CASE = {
    "found": [],
    "attack": (
        "An approver keeps the inbox open while runs park and are resolved: its badge followed "
        "the page's stream, its list did not (a new card showed only after a reload, a decided "
        "one stayed); the list now follows the same stream"
    ),
    "bounds": {"seconds": 30},
    "steps": [
        {"do": "store_graph", "graph": GATE},
        {"do": "python", "call": follows},
    ],
}
