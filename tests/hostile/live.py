"""Reading a server-sent event stream as a browser's ``EventSource`` does: one frame at a time,
as it arrives, on a connection of the caller's (a page load and then its stream may share one
kept-alive connection, as they do in a browser)."""

from __future__ import annotations

import http.client
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Frames", "browser_cookies", "connection_to", "open_stream"]


def connection_to(url: str, timeout: float) -> http.client.HTTPConnection:
    address = urlsplit(url)
    return http.client.HTTPConnection(address.hostname, address.port, timeout=timeout)


def browser_cookies(corpus: Any, client: str = "browser") -> str:
    """The ``Cookie`` header of one of the corpus's signed-in sessions."""
    return "; ".join(f"{k}={v}" for k, v in corpus.clients[client].cookies.items())


class Frames:
    """The frames of one stream's answer, each ``(event, data)`` (``message`` when the frame
    names no event); comments (``: keep-alive``) are skipped. Every wait ends with the
    attack's time."""

    def __init__(self, answer: http.client.HTTPResponse, corpus: Any) -> None:
        self.answer = answer
        self.corpus = corpus
        self.buffer = b""
        #: What came so far (each frame's event and the start of its data), for the messages.
        self.seen: list[tuple[str, str]] = []

    def next(self, what: str = "the next frame") -> tuple[str, str]:
        """The next frame, as soon as it arrives."""
        while True:
            frame, separator, rest = self.buffer.partition(b"\n\n")
            if separator:
                self.buffer = rest
                fields = dict(
                    line.split(": ", 1) for line in frame.decode().split("\n") if ": " in line
                )
                if "data" in fields:
                    self.seen.append((fields.get("event", "message"), fields["data"][:40]))
                    return fields.get("event", "message"), fields["data"]
                continue
            assert self.corpus.left() > 0, (
                f"the attack's time ran out waiting on the stream until {what} "
                f"(frames so far: {self.seen[-10:]})"
            )
            data = self.answer.read1(65536)
            if not data:
                raise AssertionError(f"the stream closed; last bytes {self.buffer[-300:]!r}")
            self.buffer += data

    def until(self, wanted: Any, what: str) -> tuple[str, str]:
        """Frames until ``wanted(event, data)`` is true, within the attack's time."""
        while True:
            event, data = self.next(what)
            if wanted(event, data):
                return event, data
            assert self.corpus.left() > 0, (
                f"the attack's time ran out waiting on the stream until {what} "
                f"(frames so far: {self.seen[-10:]})"
            )


def open_stream(
    connection: http.client.HTTPConnection, path: str, headers: dict[str, str], corpus: Any
) -> Frames:
    """``GET path`` as an ``EventSource`` sends it, on ``connection``: a stream that flows."""
    connection.request("GET", path, headers={"Accept": "text/event-stream", **headers})
    answer = connection.getresponse()
    content_type = answer.headers.get("Content-Type", "")
    if answer.status != 200 or not content_type.startswith("text/event-stream"):
        raise AssertionError(f"GET {path} answered {answer.status} {content_type}: "
                             f"{answer.read()[:500]!r}")  # fmt: skip
    return Frames(answer, corpus)
