"""The ASGI handler reads a request body as it arrives and stops at its route's cap
(``editor.asgi``): the client is answered ``413`` with the connection closed, and the rest of
the body is never read, whether its ``Content-Length`` said so or the chunks that came did.
What the handler answers itself carries the headers of every page."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from editor.asgi import application
from editor.body_limits import NO_BODY_BYTES

MIB = 1 << 20

pytestmark = pytest.mark.django_db(transaction=True)


class Client:
    """One request: its body in ``chunks`` of ``size`` bytes, counted as the handler asks."""

    def __init__(self, chunks: int, size: int = MIB) -> None:
        self.chunks = chunks
        self.size = size
        self.given = 0
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        if self.given >= self.chunks:
            # The body is over: what Django's disconnect listener waits on.
            await asyncio.Event().wait()
        self.given += 1
        return {
            "type": "http.request",
            "body": b"x" * self.size,
            "more_body": self.given < self.chunks,
        }

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    @property
    def headers(self) -> dict[str, str]:
        return {name.decode().lower(): value.decode() for name, value in self.sent[0]["headers"]}

    @property
    def body(self) -> bytes:
        return b"".join(message.get("body", b"") for message in self.sent[1:])


def request(
    path: str,
    client: Client,
    *,
    method: str = "POST",
    length: int | None = None,
    query: bytes = b"",
) -> None:
    headers = [(b"host", b"testserver"), (b"content-type", b"application/json")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    elif client.chunks and client.size:
        # A body without a length is sent chunked, and says so (as every HTTP/1.1 client does).
        headers.append((b"transfer-encoding", b"chunked"))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": query,
        "root_path": "", "headers": headers, "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }  # fmt: skip
    # A loop of its own in a thread of its own: the browser tests' driver keeps an event loop
    # running in the main thread for the rest of the session.
    with ThreadPoolExecutor(1) as pool:
        answered = asyncio.wait_for(application(scope, client.receive, client.send), 30)
        pool.submit(asyncio.run, answered).result()


def test_a_chunked_body_over_the_cap_is_not_read_past_it() -> None:
    client = Client(chunks=64)
    request("/v1/graphs", client)
    assert client.status == 413
    assert json.loads(client.body)["error"]["code"] == "payload_too_large"
    assert client.headers["connection"] == "close"
    # 8 MiB is the cap: the ninth chunk passed it, and no tenth was asked for.
    assert client.given == 9


def test_a_declared_length_over_the_cap_is_answered_before_any_byte_is_read() -> None:
    client = Client(chunks=64)
    request("/graphs/flow/edit/json/", client, length=64 * MIB)
    assert client.status == 413
    assert client.given == 0
    assert "Too large" in client.body.decode()
    assert client.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in client.headers["content-security-policy"]


def test_the_health_check_takes_no_body() -> None:
    client = Client(chunks=4, size=NO_BODY_BYTES)
    request("/healthz", client, method="GET")
    assert client.status == 413
    assert client.given == 2


def test_a_body_within_the_cap_is_read_whole() -> None:
    client = Client(chunks=3, size=100)
    request("/healthz", client, method="GET")
    assert client.given == 3
    assert client.status == 200
    assert "connection" not in client.headers


def test_the_handlers_own_400_carries_the_page_headers() -> None:
    # A query string that is not UTF-8: Django's handler answers it before any middleware.
    # (Not on /healthz, whose GET without a body is answered before Django's handler.)
    client = Client(chunks=1, size=0)
    request("/accounts/login/", client, method="GET", query=b"q=\xff")
    assert client.status == 400
    assert client.headers["x-frame-options"] == "DENY"
    assert client.headers["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in client.headers["content-security-policy"]
