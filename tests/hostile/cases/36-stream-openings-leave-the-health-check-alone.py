"""Found here (issue 20, *one user can stall /healthz*): stream set-up and ``/healthz`` shared
asgiref's one shared thread, so 1,000 ``/live/`` opens made the health check wait 6 s."""

import select
import socket
from typing import Any
from urllib.parse import urlsplit

OPENS = 400


def burst(corpus: Any) -> None:
    """Four hundred ``/live/`` requests sent at once (most of them refused ``429`` past the
    user's limit, after the same set-up), then ``/healthz``: it answers while most of the opens
    still wait for theirs."""
    address = urlsplit(corpus.server.url)
    cookies = "; ".join(f"{k}={v}" for k, v in corpus.clients["browser"].cookies.items())
    request = (
        f"GET /live/ HTTP/1.1\r\nHost: {address.hostname}:{address.port}\r\n"
        f"Cookie: {cookies}\r\nConnection: close\r\n\r\n"
    ).encode()
    opens = [socket.create_connection((address.hostname, address.port)) for _ in range(OPENS)]
    try:
        for sock in opens:
            sock.sendall(request)
        health = corpus.request("GET", "/healthz", client="anonymous")
        answered, _, _ = select.select(opens, [], [], 0)
        assert health.status_code == 200
        assert health.json() == {"status": "ok"}
        assert len(answered) < OPENS // 2, (
            f"/healthz answered only after {len(answered)} of {OPENS} stream opens"
        )
        # Every open is answered in the end: a stream (the first 20) or a 429.
        statuses: dict[str, int] = {}
        for sock in opens:
            sock.settimeout(corpus.left())
            head = sock.recv(64).split(b"\r\n", 1)[0].decode()
            statuses[head] = statuses.get(head, 0) + 1
        assert set(statuses) <= {"HTTP/1.1 200 OK", "HTTP/1.1 429 Too Many Requests"}, statuses
        assert statuses.get("HTTP/1.1 200 OK") == 20, statuses
    finally:
        for sock in opens:
            sock.close()


CASE = {
    "found": [],
    "attack": (
        "One signed-in user opens 400 page streams at once: their set-up ran on the thread "
        "`/healthz` used (1,000 opens: the health check took 6 s; 5,000: it timed out, and a "
        "proxy would restart the process), and nothing limited a user's streams"
    ),
    "bounds": {"seconds": 60},
    "steps": [{"do": "python", "call": burst}],
}
