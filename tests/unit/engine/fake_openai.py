"""A local fake of an OpenAI-compatible chat-completions server, for the provider tests.

A real HTTP server (``http.server`` in a thread, on 127.0.0.1 and a free port) that answers
``POST …/chat/completions`` from a queue the test fills, and records every request::

    with FakeOpenAI() as server:
        server.reply(content="hello", usage=(12, 3))
        provider = OpenAIProvider("gpt-test", server.base_url, "sk-test")
        ...
        assert server.requests[0].body["model"] == "gpt-test"

Nothing here ever leaves the machine.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAI", "RecordedRequest"]

#: How long a stalled answer waits at most (the test's client gives up well before).
STALL_BOUND = 10.0


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it is not JSON


@dataclass(frozen=True)
class _Answer:
    status: int
    body: bytes
    content_type: str = "application/json"
    stall: bool = False


class FakeOpenAI:
    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._answers: deque[_Answer] = deque()
        self._release = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", errors="replace")
                with fake._lock:
                    fake.requests.append(
                        RecordedRequest("POST", self.path, dict(self.headers.items()), body)
                    )
                    answer = fake._answers.popleft() if fake._answers else None
                if not self.path.endswith("/chat/completions"):
                    answer = _Answer(404, b'{"error":{"message":"no such route"}}')
                if answer is None:
                    answer = _Answer(500, b'{"error":{"message":"the fake has no answer queued"}}')
                if answer.stall:
                    fake._release.wait(STALL_BOUND)
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up (a timeout test)
                    self.wfile.write(answer.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # --- scripting the answers ---------------------------------------------------------

    def reply(
        self,
        content: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        usage: tuple[int, int] | None = None,
    ) -> None:
        """Queue one completion. ``tool_calls``: ``[{"id", "name", "arguments": str}]``."""
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments"]},
                }
                for call in tool_calls
            ]
        answer: dict[str, Any] = {
            "id": f"chatcmpl-{len(self._answers)}",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],
        }
        if usage is not None:
            answer["usage"] = {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": sum(usage),
            }
        self.raw(200, json.dumps(answer).encode())

    def error(self, status: int, message: str) -> None:
        """Queue an error answer in the protocol's shape ``{"error": {"message", …}}``."""
        body = {"error": {"message": message, "type": "invalid_request_error"}}
        self.raw(status, json.dumps(body).encode())

    def raw(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self._answers.append(_Answer(status, body, content_type))

    def stall(self) -> None:
        """Queue an answer that only comes when the server shuts down (a timeout test)."""
        self._answers.append(_Answer(200, b"{}", stall=True))
