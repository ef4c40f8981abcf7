"""Found here (issue 20, *the live streams fail*): a request on a kept-alive connection
inherited the previous request's thread-sensitive context, already closed, and a stream opened
on it answered ``500`` (``RuntimeError: ThreadSensitiveContext has exited``)."""

import http.client
import socket
from typing import Any
from urllib.parse import urlsplit

ROUNDS = 30
#: A page whose cost does not grow with what earlier attacks stored (the runs list's does: 30
#: rounds of it took most of a minute at the end of the corpus).
PAGE = "/account/"
#: Not a graph: refused, after the whole body was read.
LARGE_BODY = b'{"pad": "' + b"x" * 100_000 + b'"}'
GATE = {
    "schema_version": 1,
    "nodes": [{"kind": "gate", "payload": {"id": "g", "approval_schema": {"type": "string"}}}],
    "edges": [],
}


def one_connection(corpus: Any) -> None:
    """On one HTTP/1.1 connection: a large body, a page, a run's stream (to its end), the
    health check, a JSON page with a query that merely mentions ``from_seq=``, again and
    again; then the pages' stream. Every answer but the refused body is a ``200``."""
    address = urlsplit(corpus.server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=corpus.left())
    cookies = "; ".join(f"{k}={v}" for k, v in corpus.clients["browser"].cookies.items())
    api = {"Authorization": f"Bearer {corpus.names['token']}"}
    run = corpus.names["run"]
    asked = [
        (PAGE, {"Cookie": cookies}),
        (f"/v1/runs/{run}/events", {**api, "Accept": "text/event-stream"}),
        ("/healthz", {}),
        (f"/v1/runs/{run}/events?after=-1&note=from_seq=1", api),
        (f"/v1/runs/{run}/events?from_seq=0", api),
    ]
    statuses: dict[int, int] = {}
    for _ in range(ROUNDS):
        # A body larger than the server's read buffer (64 KiB): reading it pauses and resumes
        # the connection from inside the request, whose context the next requests then start in.
        connection.request("POST", "/v1/graphs", body=LARGE_BODY, headers=api)
        answer = connection.getresponse()
        answer.read()
        assert 400 <= answer.status < 500, answer.status
        for path, headers in asked:
            connection.request("GET", path, headers=headers)
            answer = connection.getresponse()
            body = answer.read()
            statuses[answer.status] = statuses.get(answer.status, 0) + 1
            assert answer.status == 200, f"GET {path} answered {answer.status}: {body[:500]!r}"
            if "events" in path and "note" not in path:
                assert answer.headers["Content-Type"] == "text/event-stream", path
                assert body.rstrip().endswith(b"}"), body[-200:]
                assert b"event: end" in body, body[-300:]
            elif "note" in path:
                assert answer.headers["Content-Type"] == "application/json", path
    connection.request("GET", "/live/", headers={"Cookie": cookies})
    answer = connection.getresponse()
    assert answer.status == 200, answer.read()[:500]
    assert answer.headers["Content-Type"] == "text/event-stream"
    assert b"event: count" in answer.fp.readline() + answer.fp.readline()
    connection.close()
    assert statuses == {200: ROUNDS * len(asked)}, statuses


class _OneReader:
    """The socket's one buffered reader, for every answer read from it in turn."""

    def __init__(self, sock: socket.socket) -> None:
        self.file = sock.makefile("rb")

    def makefile(self, *args: Any, **kwargs: Any) -> Any:
        return self

    def close(self) -> None:
        """An answer read to its end closes its reader: the next answer still needs it."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.file, name)


def pipelined(corpus: Any) -> None:
    """The same sent ahead of the answers (HTTP/1.1 pipelining: each request is read before the
    previous answer is done, and its handling starts from inside the previous one's)."""
    address = urlsplit(corpus.server.url)
    run = corpus.names["run"]
    cookies = "; ".join(f"{k}={v}" for k, v in corpus.clients["browser"].cookies.items())
    host = f"Host: {address.hostname}:{address.port}\r\n"
    page = f"GET {PAGE} HTTP/1.1\r\n{host}Cookie: {cookies}\r\n\r\n"
    stream = (
        f"GET /v1/runs/{run}/events HTTP/1.1\r\n{host}Accept: text/event-stream\r\n"
        f"Authorization: Bearer {corpus.names['token']}\r\n\r\n"
    )
    with socket.create_connection((address.hostname, address.port), corpus.left()) as sock:
        reader = _OneReader(sock)
        for _ in range(ROUNDS // 3):
            sock.sendall(((page + stream) * 2).encode())
            for expected in ("text/html", "text/event-stream") * 2:
                answer = http.client.HTTPResponse(reader)  # type: ignore[arg-type]
                answer.begin()
                body = answer.read()
                assert answer.status == 200, f"answered {answer.status}: {body[:500]!r}"
                assert answer.headers["Content-Type"].startswith(expected), answer.headers
                if expected == "text/event-stream":
                    assert b"event: end" in body, body[-300:]


CASE = {
    "found": [],
    "attack": (
        "Pages, run streams and the health check one after another on one kept-alive HTTP/1.1 "
        "connection, as a browser does: a stream opened after an ordinary request answered "
        "`500` (`ThreadSensitiveContext has exited`), 37 of 224 connections in a browser "
        "session; a query merely containing `from_seq=` was taken for a stream"
    ),
    "bounds": {"seconds": 90},
    "steps": [
        {"do": "store_graph", "graph": GATE},
        {"do": "start_run", "input": {}},
        {"do": "wait_run", "expect": {"status": {"state": "suspended"}}},
        {"do": "python", "call": one_connection},
        {"do": "python", "call": pipelined},
    ],
}
