"""A web server of the attacks' own, for the limits that belong to a process or an address
rather than to a user (cases 42 and 58): the image's command again, on the corpus's database,
with small limits of its own (:data:`LIMITED`), started by the first attack that needs it and
stopped with the corpus (one start for all of them). The shared server keeps the corpus's
settings for every other attack; this one is watched by nothing but the attacks that use it.

Requests may come from an address of their own on the loopback network (``127.x.y.z``), so an
attack on a per-address limit starts from a count no other attack touched.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from tests.hostile.processes import Server, start_server

__all__ = ["LIMITED", "Answer", "a_loopback_address", "limited_server", "send"]

#: The limits of the attacks' own server: each attack trips one, and none trips another's
#: (streams are not writes; writes hold no stream).
LIMITED = {
    # Case 42: four streams at once, and a stream whose client went away noticed within 1 s.
    "GATEHOUSE_STREAMS_PER_PROCESS": "4",
    "GATEHOUSE_STREAM_KEEPALIVE_SECONDS": "1",
    # Case 58: six write requests a minute from one address.
    "GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE": "6",
}


def limited_server(corpus: Any) -> Server:
    """The server with :data:`LIMITED`, started on first use; its output in
    ``server-limited.log`` in the corpus's folder."""
    if "limited_server" not in corpus.shared:
        corpus.shared["limited_server"] = corpus.stops.enter_context(_serving(corpus))
    server: Server = corpus.shared["limited_server"]
    return server


@contextlib.contextmanager
def _serving(corpus: Any) -> Iterator[Server]:
    server = start_server({**corpus.env, **LIMITED}, corpus.folder, "server-limited.log")
    try:
        yield server
    finally:
        server.started.stop()


def a_loopback_address() -> str:
    """An address of the loopback network no other attack sends from (never 127.0.0.1)."""
    return f"127.{random.randrange(1, 255)}.{random.randrange(0, 256)}.{random.randrange(2, 255)}"


class Answer:
    """A read answer, read as ``requests`` reads one: ``status_code``, ``headers``, ``text``,
    ``json()``."""

    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.status_code = response.status
        self.headers = response.headers
        self.text = response.read().decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.text)


def send(
    server: Server,
    method: str,
    path: str,
    *,
    source: str,
    timeout: float,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> Answer:
    """One request from ``source`` on a connection of its own; never a ``5xx``."""
    address = urlsplit(server.url)
    connection = http.client.HTTPConnection(
        address.hostname, address.port, timeout=timeout, source_address=(source, 0)
    )
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = Answer(connection.getresponse())
    finally:
        connection.close()
    assert answer.status_code < 500, (
        f"{method} {path} answered {answer.status_code}: {answer.text[:500]}"
    )
    return answer
