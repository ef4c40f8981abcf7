"""HTTP/1.1 on a raw socket, for what ``http.client`` cannot do: hold a stream open while
watching a stop flag, send a body the server may refuse half-way, say nothing at all.

Every connection goes to 127.0.0.1 only, and every wait here is bounded.
"""

from __future__ import annotations

import contextlib
import select
import socket
import time
from collections.abc import Iterable

HOST = "127.0.0.1"
#: The attacker's own address on the loopback network: its writes count against its address,
#: not against the one the traffic comes from (the per-address write rate).
ATTACKER = "127.0.0.66"


def connect(port: int, timeout: float = 10.0, source: str | None = None) -> socket.socket:
    """A connection to the server on loopback (from ``source``, when given)."""
    return socket.create_connection(
        (HOST, port), timeout=timeout, source_address=(source, 0) if source else None
    )


def head(method: str, path: str, port: int, headers: dict[str, str] | None = None) -> bytes:
    """A request line and headers, ``Host`` first, ending with the blank line."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def status_of(data: bytes) -> int | None:
    """The status code of a response that starts with ``data``, if its status line is there."""
    line, found, _ = data.partition(b"\r\n")
    parts = line.split(b" ", 2)
    if not found or len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
        return None
    return int(parts[1]) if parts[1].isdigit() else None


def read_head(sock: socket.socket, seconds: float) -> tuple[int | None, bytes]:
    """Reads until the end of the response's headers (at most ``seconds``); its status (or
    ``None`` when the server closed first or the time ran out) and every byte read."""
    deadline = time.monotonic() + seconds
    data = b""
    while b"\r\n\r\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, data
        sock.settimeout(min(left, 1.0))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            return status_of(data), data
        if not chunk:
            return status_of(data), data
        data += chunk
    return status_of(data), data


def read_response(sock: socket.socket, seconds: float) -> int | None:
    """Reads one whole response whose body has a ``Content-Length`` (as a page's fragment
    has), leaving the connection ready for the next request; its status, or ``None``."""
    deadline = time.monotonic() + seconds
    status, data = read_head(sock, seconds)
    if status is None:
        return None
    headers, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in headers.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except OSError:
            return None
        if not chunk:
            return None
        body += chunk
    return status


def answered(sock: socket.socket) -> bool:
    """Whether the server has written something (or closed) without our reading it yet."""
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


def send_until_answered(sock: socket.socket, parts: Iterable[bytes], seconds: float) -> str:
    """Sends ``parts`` one after the other until all are sent, the server answers (or closes),
    or ``seconds`` pass; which of ``"sent"``, ``"answered"``, ``"reset"`` or ``"timeout"``."""
    deadline = time.monotonic() + seconds
    for part in parts:
        if answered(sock):
            return "answered"
        if time.monotonic() > deadline:
            return "timeout"
        sock.settimeout(max(deadline - time.monotonic(), 0.1))
        try:
            sock.sendall(part)
        except TimeoutError:
            return "timeout"
        except OSError:  # the server closed the connection: it may still have answered
            return "reset"
    return "sent"


def close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()
