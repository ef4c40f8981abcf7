"""The gunicorn worker class of the production server: uvicorn's, tuned for event streams and
bounded against clients that hold connections without sending a request.

``gunicorn editor.asgi:application -k editor.server.UvicornWorker``. Server-sent event streams
stay open until their run rests (a page's, until the page is closed), so a worker that is told
to stop waits for them only briefly, then closes them; browsers and the reference's client
reconnect on their own (``Last-Event-ID``, ``from_seq``) and carry on where they were.

uvicorn closes a kept-alive connection that stays silent after an answer, but it would hold a
new connection that never sends a request, or one that trickles its headers a byte at a time,
forever: each costs a socket and a little memory, and enough of them exhaust the process's file
descriptors. :class:`H11Protocol` closes a connection whose request line and headers have not
all arrived within ``GATEHOUSE_HEADER_TIMEOUT`` seconds of its opening (or of the answer before,
on a kept-alive connection); ``GATEHOUSE_KEEP_ALIVE_TIMEOUT`` bounds the silence between
requests. ``make run`` serves with the same protocol and timeouts (``--http``).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol as _H11Protocol
from uvicorn_worker import UvicornWorker as _UvicornWorker

from editor.environment import env_int

__all__ = ["H11Protocol", "UvicornWorker"]

#: Seconds a stopping worker lets open streams run before it closes them.
STREAMS_GRACE_SECONDS = 3
#: Seconds a connection has to send a whole request line and headers.
HEADER_TIMEOUT_SECONDS = env_int("GATEHOUSE_HEADER_TIMEOUT", 10)
#: Seconds a kept-alive connection may stay silent between requests.
KEEP_ALIVE_TIMEOUT_SECONDS = env_int("GATEHOUSE_KEEP_ALIVE_TIMEOUT", 5)


#: The headers of uvicorn's own answer to a request it cannot parse (a plain-text 400, written
#: before the app sees anything): those of every page, as far as they apply to plain text.
_UNPARSED_REQUEST_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-type", b"text/plain; charset=utf-8"),
    (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"connection", b"close"),
]


class H11Protocol(_H11Protocol):
    """uvicorn's HTTP/1.1 protocol (h11), with a bound on the time a request's headers take,
    and the security headers on its own ``400``."""

    header_timeout: ClassVar[float] = HEADER_TIMEOUT_SECONDS

    _headers_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_headers()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The next request on a kept-alive connection has the same time for its headers.
        self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        # uvicorn's own, with the headers above.
        response = h11.Response(
            status_code=400, headers=_UNPARSED_REQUEST_HEADERS, reason=b"Bad Request"
        )
        for event in (response, h11.Data(data=msg.encode("ascii")), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()

    def _await_headers(self) -> None:
        self._stop_waiting()
        if not self.transport.is_closing():
            self._headers_deadline = self.loop.call_later(self.header_timeout, self._headers_late)

    def _stop_waiting(self) -> None:
        if self._headers_deadline is not None:
            self._headers_deadline.cancel()
            self._headers_deadline = None

    def _headers_late(self) -> None:
        self._headers_deadline = None
        if self.transport.is_closing():
            return
        # h11 leaves IDLE once a request's line and headers have all been received: a request
        # being answered (a stream included) is never cut here.
        between_requests = self.cycle is None or self.cycle.response_complete
        if between_requests and self.conn.their_state is h11.IDLE:
            self.logger.debug("closing a connection whose request headers did not arrive in time")
            self.transport.close()


class UvicornWorker(_UvicornWorker):
    CONFIG_KWARGS: ClassVar[dict[str, Any]] = {
        **_UvicornWorker.CONFIG_KWARGS,
        "http": H11Protocol,
        "lifespan": "on",
        "timeout_graceful_shutdown": STREAMS_GRACE_SECONDS,
        # Wins over gunicorn's --keep-alive: the setting is the project's, read like the others.
        "timeout_keep_alive": KEEP_ALIVE_TIMEOUT_SECONDS,
    }
