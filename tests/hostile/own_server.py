"""A web server of an attack's own, for the limits that belong to a process or an address
rather than to a user (cases 42 and 58): the image's command again, on the corpus's database,
with the attack's settings, stopped when the attack ends. The shared server keeps its own
settings for every other attack; this one is watched by nothing but the attack.

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

__all__ = ["Answer", "a_loopback_address", "own_server", "send"]


@contextlib.contextmanager
def own_server(corpus: Any, name: str, settings: dict[str, str]) -> Iterator[Server]:
    """The image's web server with the corpus's settings and ``settings``; its output in
    ``server-<name>.log`` in the corpus's folder."""
    server = start_server({**corpus.env, **settings}, corpus.folder, f"server-{name}.log")
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
