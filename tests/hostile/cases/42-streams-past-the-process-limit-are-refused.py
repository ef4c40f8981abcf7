"""Found here (issue 20, *one user can stall /healthz*): nothing limited how many streams one
web process held; case 36 shows the limit of one user, this one the limit of the process,
which many users together reach."""

import http.client
import json
from typing import Any

from tests.hostile.live import Frames, browser_cookies, connection_to, open_stream
from tests.hostile.own_server import LIMITED, limited_server

LIMIT = int(LIMITED["GATEHOUSE_STREAMS_PER_PROCESS"])
GATE = {
    "schema_version": 1,
    "nodes": [{"kind": "gate", "payload": {"id": "g", "approval_schema": {"type": "string"}}}],
    "edges": [],
}


def refusal(connection: http.client.HTTPConnection, path: str, headers: dict[str, str]) -> str:
    """The body of the ``429`` that opening a stream at ``path`` answers."""
    connection.request("GET", path, headers={"Accept": "text/event-stream", **headers})
    answer = connection.getresponse()
    assert answer.status == 429, f"GET {path} answered {answer.status}, not 429"
    assert answer.headers["Retry-After"] == "10", answer.headers
    return answer.read().decode()


def past_the_limit(corpus: Any) -> None:
    """Two users hold ``LIMIT`` page streams of a server that may hold ``LIMIT`` (each user far
    under their own limit of 20): a page's stream and a run's stream past it are ``429``
    naming ``GATEHOUSE_STREAMS_PER_PROCESS``, ``/healthz`` still answers, and once a stream
    closes its place can be taken again."""
    run = corpus.names["run"]
    mallory = {"Cookie": browser_cookies(corpus)}
    nobody = {"Cookie": browser_cookies(corpus, "browser_nobody")}
    token = {"Authorization": f"Bearer {corpus.users.nobody_token}"}
    server = limited_server(corpus)
    held: list[tuple[http.client.HTTPConnection, Frames]] = []

    def hold(headers: dict[str, str]) -> None:
        connection = connection_to(server.url, corpus.left())
        held.append((connection, open_stream(connection, "/live/", headers, corpus)))
        assert held[-1][1].next()[0] == "count"  # it flows

    try:
        for headers in (mallory, mallory, nobody, nobody):
            hold(headers)
        other = connection_to(server.url, corpus.left())
        page = refusal(other, "/live/", mallory)
        assert "(GATEHOUSE_STREAMS_PER_PROCESS)" in page, page
        error = json.loads(refusal(other, f"/v1/runs/{run}/events", token))["error"]
        assert error["code"] == "too_many_streams", error
        assert error["details"] == {"per": "process", "limit": LIMIT}, error
        assert "(GATEHOUSE_STREAMS_PER_PROCESS)" in error["message"], error
        other.request("GET", "/healthz")
        health = other.getresponse()
        assert (health.status, json.loads(health.read())) == (200, {"status": "ok"})
        other.close()
        # A reader goes away: its place is free again once the server notices.
        held.pop()[0].close()

        def reopened() -> bool:
            try:
                hold(nobody)
            except AssertionError as refused:
                assert "answered 429" in str(refused), refused
                return False
            return True

        corpus.wait(reopened, "a closed stream's place was taken again")
    finally:
        for connection, _ in held:
            connection.close()


CASE = {
    "found": [],
    "attack": (
        "Users together open more streams than a web process may hold "
        "(GATEHOUSE_STREAMS_PER_PROCESS, here 4 on a server of the attacks' own): nothing "
        "bounded them; now the one past the limit is 429 with Retry-After, a run's stream as "
        "a page's, and a place is free again once a stream closes"
    ),
    # Most of the time is the attacks' own server starting, when this attack is the first.
    "bounds": {"seconds": 60},
    "steps": [
        {"do": "store_graph", "graph": GATE},
        {"do": "start_run", "input": {}},
        {"do": "wait_run", "expect": {"status": {"state": "suspended"}}},
        {"do": "python", "call": past_the_limit},
    ],
}
