"""Found here (issue 20, item 5): a connection that sent nothing, or its headers a byte at a
time, was held open forever; enough of them exhaust the web process's file descriptors."""

import threading
from typing import Any

from tests.hostile.raw_http import closed_by_server, connect

#: The corpus's GATEHOUSE_HEADER_TIMEOUT and GATEHOUSE_KEEP_ALIVE_TIMEOUT (conftest.py), and
#: the slack allowed on top of them.
HEADER_TIMEOUT = 2
KEEP_ALIVE_TIMEOUT = 2
SLACK = 4

NEVER_ENDING_HEADERS = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100


def held_connections_are_closed(corpus: Any) -> None:
    url = corpus.server.url
    silent = connect(url)
    trickling = connect(url)
    closed: dict[str, bool] = {}

    def trickle() -> None:
        closed["trickling"] = closed_by_server(
            trickling, HEADER_TIMEOUT + SLACK, trickle=NEVER_ENDING_HEADERS
        )

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    # The health check answers while both are held.
    health = corpus.request("GET", "/healthz", client="anonymous")
    assert health.status_code == 200
    closed["silent"] = closed_by_server(silent, HEADER_TIMEOUT + SLACK)
    trickler.join(HEADER_TIMEOUT + SLACK + 2)

    kept_alive = connect(url)
    kept_alive.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    first = kept_alive.recv(65536)
    assert first.startswith(b"HTTP/1.1 200"), first[:200]
    closed["kept alive, then silent"] = closed_by_server(kept_alive, KEEP_ALIVE_TIMEOUT + SLACK)

    for connection in (silent, trickling, kept_alive):
        connection.close()
    assert closed == {"trickling": True, "silent": True, "kept alive, then silent": True}, closed
    assert corpus.request("GET", "/healthz", client="anonymous").status_code == 200


CASE = {
    "found": [],
    "attack": (
        "A client opens connections and sends nothing, or sends its headers one byte a second, "
        "or goes silent after an answer: uvicorn held the first two forever (it only times "
        "out a kept-alive connection after an answer)"
    ),
    "steps": [{"do": "python", "call": held_connections_are_closed}],
}
