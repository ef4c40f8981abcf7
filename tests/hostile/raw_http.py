"""HTTP spoken over a bare socket, for the attacks no HTTP library lets one send: a body far
over the cap sent chunk by chunk, a connection that says nothing, headers a byte at a time."""

from __future__ import annotations

import os
import select
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

MIB = 1 << 20


def connect(url: str, timeout: float = 5.0) -> socket.socket:
    parts = urlsplit(url)
    connection = socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout)
    connection.settimeout(timeout)
    return connection


@dataclass
class Answer:
    """What the server answered (as far as it was read) and what the client managed to send."""

    sent: int
    raw: bytes
    #: The body the server still took after the last chunk, if it took all of it.
    took_everything: bool = False
    temporary_files: list[str] = field(default_factory=list)

    @property
    def status(self) -> int:
        line = self.raw.split(b"\r\n", 1)[0].split()
        return int(line[1]) if len(line) > 1 else 0

    @property
    def head(self) -> str:
        return self.raw.split(b"\r\n\r\n", 1)[0].decode("latin1").lower()

    @property
    def text(self) -> str:
        return self.raw.decode("utf-8", errors="replace")


def temporary_files_of(pid: int | None) -> list[str]:
    """The unnamed files under the temporary folder a process holds open: a spooled upload
    is one (``tempfile.TemporaryFile`` unlinks its file as it makes it)."""
    if pid is None:
        return []
    folder = os.path.realpath(tempfile.gettempdir())
    found = []
    for descriptor in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(descriptor)
        except OSError:
            continue
        if target.startswith(folder + "/") and target.endswith(" (deleted)"):
            found.append(target)
    return found


def send_chunked(
    url: str,
    path: str,
    total: int,
    *,
    server_pid: Callable[[], int | None],
    chunk: int = MIB,
    headers: dict[str, str] | None = None,
) -> Answer:
    """POSTs ``total`` bytes to ``path`` as a chunked body, ``chunk`` at a time, and stops as
    soon as the server answers or closes; the server's open temporary files are noted after
    every chunk (those it held before are left out)."""
    connection = connect(url)
    lines = [f"POST {path} HTTP/1.1", f"Host: {urlsplit(url).netloc}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    lines += ["Transfer-Encoding: chunked", "", ""]
    piece = b"x" * chunk
    answer = Answer(sent=0, raw=b"")
    # Held before the request (gunicorn's heartbeat file): not the request's.
    held_before = set(temporary_files_of(server_pid()))
    try:
        connection.sendall("\r\n".join(lines).encode())
        while answer.sent < total:
            connection.sendall(b"%x\r\n" % chunk + piece + b"\r\n")
            answer.sent += chunk
            answer.temporary_files += [
                name for name in temporary_files_of(server_pid()) if name not in held_before
            ]
            if select.select([connection], [], [], 0)[0]:
                break
        else:
            connection.sendall(b"0\r\n\r\n")
            answer.took_everything = True
    except OSError:
        pass  # the server closed the connection: what it answered is read below
    answer.raw = _read_all(connection)
    connection.close()
    return answer


def send_declared(url: str, path: str, length: int, *, method: str = "POST") -> Answer:
    """Declares a ``Content-Length`` of ``length`` and sends none of it: answered at once, or
    the server is waiting to read it."""
    connection = connect(url)
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: {urlsplit(url).netloc}\r\n"
        f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {length}\r\n\r\n"
    )
    connection.sendall(head.encode())
    answer = Answer(sent=0, raw=_read_all(connection))
    connection.close()
    return answer


def _read_all(connection: socket.socket) -> bytes:
    received = b""
    try:
        while True:
            data = connection.recv(65536)
            if not data:
                break
            received += data
    except OSError:
        pass  # reset after the answer, or no answer within the timeout
    return received


def closed_by_server(connection: socket.socket, within: float, *, trickle: bytes = b"") -> bool:
    """Whether the server closes ``connection`` within ``within`` seconds, while the client
    sends one byte of ``trickle`` each second (nothing when empty)."""
    deadline = time.monotonic() + within
    position = 0
    while time.monotonic() < deadline:
        if trickle and position < len(trickle):
            try:
                connection.send(trickle[position : position + 1])
            except OSError:
                return True
            position += 1
        connection.settimeout(max(0.01, min(1.0, deadline - time.monotonic())))
        try:
            if connection.recv(1024) == b"":
                return True
        except TimeoutError:
            continue
        except OSError:
            return True
    return False
