"""Places outside the process that a schema must never reach: a local HTTP server that counts
every request it is sent, and a file whose content must never appear in any message.

Both carry :data:`SECRET`, so a test can check that nothing read from them leaked into an
error, and both are valid JSON Schemas, so a fetch would succeed if it were attempted.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

__all__ = [
    "SECRET",
    "CountingServer",
    "counting_server",
    "secret_file",
    "serving_counter",
    "write_secret_file",
]

SECRET = "c0ffee-this-text-must-never-leave-the-server"

#: What the server and the file hold: a schema a fetch would happily use.
_SCHEMA = json.dumps(
    {"$defs": {"x": {"type": "integer", "description": SECRET}}, "description": SECRET}
).encode()


@dataclass
class CountingServer:
    """A loopback HTTP server answering every GET and POST with :data:`_SCHEMA`, counting
    requests."""

    url: str
    hits: list[str] = field(default_factory=list)


@contextlib.contextmanager
def serving_counter() -> Iterator[CountingServer]:
    """A :class:`CountingServer` listening on loopback until the block ends."""
    served = CountingServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(_SCHEMA)))
            self.end_headers()
            self.wfile.write(_SCHEMA)

        do_POST = do_GET

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def counting_server() -> Iterator[CountingServer]:
    with serving_counter() as served:
        yield served


def write_secret_file(folder: Path) -> Path:
    """A file holding :data:`SECRET` (a valid JSON Schema) in ``folder``; its path."""
    path = folder / "secret-schema.json"
    path.write_bytes(_SCHEMA)
    return path


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    return write_secret_file(tmp_path)
