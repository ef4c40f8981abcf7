"""A local fake of the Anthropic Messages API that plays the reference's ``model-script.json``.

A real HTTP server (``http.server`` in a thread, on 127.0.0.1 and a free port) answering
``POST /v1/messages`` the way the reference's scripted model (``salvor-demo-model``, its
``--script`` file) does, so the reference's examples can run here end to end::

    with FakeAnthropic.from_file(EXAMPLES / "payroll" / "model-script.json") as model:
        monkeypatch.setenv("SALVOR_DEMO_BASE_URL", model.base_url)
        ...
        assert model.requests[0].headers["anthropic-version"] == "2023-06-01"

**The script.** A JSON array is one conversation, served whatever the system prompt says; a
JSON object maps names to conversations. A conversation is an array of full Messages responses
(element *i* answers the turn that arrives with ``2i + 1`` messages), or
``{"when": needle, "turns": [...]}``. A conversation without ``when`` is selected when its
name is a substring of the request's ``system`` (text blocks joined by newlines); one with
``when`` when the needle is a substring of the raw request body. Exactly one must match: none,
or more than one, is a ``500`` error envelope (``demo_script_no_conversation``,
``demo_script_ambiguous_conversation``), as is a message count the conversation does not
cover (``demo_script``). A malformed script raises :class:`ValueError` when it is loaded.

**Faults**, for retry and timeout tests, are queued ahead of the script and used one request
each: :meth:`fail` (a status, with ``retry-after`` if asked) and :meth:`stall` (no answer until
:meth:`release`, or a bound). :meth:`play` swaps the script of a running fake (one fake for
several examples). Nothing here ever leaves the machine.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["Conversation", "FakeAnthropic", "RecordedRequest", "load_script"]

#: How long a stalled answer waits at most (the client under test gives up well before).
STALL_BOUND = 10.0
_SYSTEM_HEAD = 80


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: Any  # parsed JSON, or the raw text when it is not JSON


@dataclass(frozen=True)
class Conversation:
    name: str
    turns: tuple[dict[str, Any], ...]
    when: str | None = None

    def matches(self, system: str, body: str) -> bool:
        return self.when in body if self.when is not None else self.name in system

    def label(self) -> str:
        return f"{self.name} (when `{self.when}`)" if self.when is not None else self.name


def _turns(where: str, entries: Any) -> tuple[dict[str, Any], ...]:
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{where} must hold a non-empty JSON array of responses")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"{where} element {index} is not a JSON object")
    return tuple(entries)


def load_script(script: Any) -> tuple[Conversation, ...] | tuple[dict[str, Any], ...]:
    """A script (the parsed JSON of a ``model-script.json``) checked as the reference checks
    it: named conversations sorted by name, or the turns of the one unnamed conversation."""
    if isinstance(script, list):
        return _turns("the script", script)
    if not isinstance(script, dict) or not script:
        raise ValueError("the script must be a non-empty JSON array or object")
    conversations = []
    for name, entry in script.items():
        where = f"conversation `{name}`"
        if isinstance(entry, dict):
            unknown = set(entry) - {"when", "turns"}
            if unknown:
                raise ValueError(f"{where} carries unknown key `{sorted(unknown)[0]}`")
            when = entry.get("when")
            if when is not None and (not isinstance(when, str) or not when):
                raise ValueError(f"{where} must hold `when` as a non-empty string")
            conversations.append(Conversation(name, _turns(where, entry.get("turns")), when))
        else:
            conversations.append(Conversation(name, _turns(where, entry)))
    return tuple(sorted(conversations, key=lambda conversation: conversation.name))


def _system_text(body: Any) -> str:
    system = body.get("system") if isinstance(body, dict) else None
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(
            block["text"]
            for block in system
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
    return ""


def _head(system: str) -> str:
    flat = system[:_SYSTEM_HEAD].replace("\n", " ")
    return flat + "..." if len(system) > _SYSTEM_HEAD else flat


def _envelope(kind: str, message: str) -> tuple[int, dict[str, Any]]:
    return 500, {"type": "error", "error": {"type": kind, "message": message}}


@dataclass(frozen=True)
class _Fault:
    status: int = 0
    retry_after: str | None = None
    stall: bool = False


class FakeAnthropic:
    """``with FakeAnthropic(script) as model: …`` (``script``: the parsed JSON, or ``None``
    for a server that answers only the faults and replies a test queues with :meth:`reply`)."""

    def __init__(self, script: Any = None, *, delay: float = 0.0) -> None:
        self.script = load_script(script) if script is not None else None
        #: Seconds each answer is held (the reference's ``--delay-ms``: a run slow enough to
        #: kill a worker in the middle of it).
        self.delay = delay
        self._held = threading.Event()  # never set: holds an answer for ``delay``
        self.requests: list[RecordedRequest] = []
        self._faults: deque[_Fault] = deque()
        self._replies: deque[dict[str, Any]] = deque()
        self._release = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                text = raw.decode("utf-8", errors="replace")
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = text
                headers = {name.lower(): value for name, value in self.headers.items()}
                with fake._lock:
                    fake.requests.append(RecordedRequest("POST", self.path, headers, body))
                    fault = fake._faults.popleft() if fake._faults else None
                extra: dict[str, str] = {}
                if self.path != "/v1/messages":
                    status, answer = 404, {"error": {"type": "not_found", "message": self.path}}
                elif fault is not None and fault.stall:
                    fake._release.wait(STALL_BOUND)
                    status, answer = fake.answer(body, text)
                elif fault is not None:
                    status = fault.status
                    answer = {"type": "error", "error": {"type": "fault", "message": "injected"}}
                    if fault.retry_after is not None:
                        extra["retry-after"] = fault.retry_after
                else:
                    status, answer = fake.answer(body, text)
                if fake.delay > 0:
                    fake._held.wait(fake.delay)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up (a timeout test)
                    self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @classmethod
    def from_file(cls, path: Path | str, *, delay: float = 0.0) -> FakeAnthropic:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")), delay=delay)

    # --- what it answers -----------------------------------------------------------------

    def answer(self, body: Any, text: str) -> tuple[int, dict[str, Any]]:
        """The scripted answer to one request: ``(status, JSON body)``."""
        with self._lock:
            if self._replies:
                return 200, self._replies.popleft()
        if self.script is None:
            return _envelope("demo_script", "the fake has no script and no reply queued")
        messages = body.get("messages") if isinstance(body, dict) else None
        count = len(messages) if isinstance(messages, list) else 0
        system = _system_text(body)
        turns: tuple[dict[str, Any], ...]
        if self.script and isinstance(self.script[0], Conversation):
            conversations: tuple[Conversation, ...] = self.script  # type: ignore[assignment]
            matched = [c for c in conversations if c.matches(system, text)]
            if not matched:
                known = ", ".join(c.label() for c in conversations)
                return _envelope(
                    "demo_script_no_conversation",
                    f"no conversation matched the request whose system prompt is "
                    f"`{_head(system)}`; the script names {known}",
                )
            if len(matched) > 1:
                names = ", ".join(c.label() for c in matched)
                return _envelope(
                    "demo_script_ambiguous_conversation",
                    f"{len(matched)} conversations matched the same request, whose system "
                    f"prompt is `{_head(system)}` ({names}); exactly one must match",
                )
            turns = matched[0].turns
        else:
            turns = self.script  # type: ignore[assignment]
        index, odd = divmod(count - 1, 2)
        if count < 1 or odd or index >= len(turns):
            return _envelope("demo_script", f"no scripted response for {count} messages")
        return 200, turns[index]

    def reply(
        self,
        text: str | None = None,
        *,
        tool_use: list[tuple[str, str, dict[str, Any]]] = (),  # type: ignore[assignment]
        stop_reason: str | None = None,
        usage: tuple[int, int] = (10, 5),
    ) -> None:
        """Queue one answer ahead of the script: text and/or ``(id, name, input)`` tool uses."""
        content: list[dict[str, Any]] = []
        if text is not None:
            content.append({"type": "text", "text": text})
        content += [
            {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
            for call_id, name, arguments in tool_use
        ]
        stop = stop_reason or ("tool_use" if tool_use else "end_turn")
        with self._lock:
            self._replies.append(
                {
                    "id": f"msg_{len(self._replies)}",
                    "type": "message",
                    "role": "assistant",
                    "model": "fake",
                    "content": content,
                    "stop_reason": stop,
                    "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
                }
            )

    def fail(self, status: int, *, retry_after: str | None = None, times: int = 1) -> None:
        """The next ``times`` requests answer ``status`` (an error envelope)."""
        with self._lock:
            self._faults.extend(_Fault(status, retry_after) for _ in range(times))

    def stall(self, times: int = 1) -> None:
        """The next ``times`` requests get no answer until :meth:`release` (or a bound)."""
        with self._lock:
            if self._release.is_set():
                self._release = threading.Event()
            self._faults.extend(_Fault(stall=True) for _ in range(times))

    def release(self) -> None:
        """Answer every stalled request now (a later :meth:`stall` stalls again)."""
        self._release.set()

    def play(self, script: Any) -> None:
        """Play ``script`` (the parsed JSON of a ``model-script.json``) from now on, in place of
        the one given at the start: one running fake for several examples, whose conversations
        may share a name (the ``small-claims`` of two examples)."""
        loaded = load_script(script)
        with self._lock:
            self.script = loaded

    # --- running -------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
