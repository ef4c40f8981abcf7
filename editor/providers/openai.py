"""``openai:<model>``: any OpenAI-compatible chat-completions endpoint, over plain HTTP(S).

One :class:`OpenAIProvider` per model name. It POSTs ``{base}/chat/completions`` with the
definition's prompt as the system message, the request's messages converted to the
protocol's shape, and the offered tools as ``function`` tools; it sends
``Authorization: Bearer <key>`` when a key is set and ``Idempotency-Key`` always. Every
failure — a refused connection, a timeout, an HTTP error, an answer that is not the
protocol — becomes a :class:`~editor.engine.errors.ProviderError` with a one-line message.

The transport is a ``fetch`` function (:data:`Fetch`); :func:`http_fetch`, the default, speaks
HTTP/1.1 through :mod:`http.client` directly (no proxy settings are read).
"""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from editor.engine.errors import ProviderError
from editor.engine.ports import (
    ANSWER_TOOL,
    ANSWER_TOOL_DESCRIPTION,
    ModelReply,
    ModelRequest,
    ToolCall,
    ToolSpec,
    Usage,
)
from editor.providers.offline import compact_json

__all__ = ["Fetch", "HttpAnswer", "OpenAIProvider", "http_fetch", "request_body"]

#: The most of an answer that is read (a chat completion is far smaller).
MAX_ANSWER_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class HttpAnswer:
    status: int
    body: bytes
    #: The answer's headers, names in lower case (``retry-after`` is read from them).
    headers: Mapping[str, str] = field(default_factory=dict)


#: ``fetch(url, body, headers, timeout)``: POST and return the answer, whatever its status;
#: raise :class:`TimeoutError` or another :class:`OSError` when there is none.
Fetch = Callable[[str, bytes, Mapping[str, str], float], HttpAnswer]


def http_fetch(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> HttpAnswer:
    split = urlsplit(url)
    target = (split.path or "/") + (f"?{split.query}" if split.query else "")
    connection: http.client.HTTPConnection
    if split.scheme == "https":
        connection = http.client.HTTPSConnection(
            split.hostname or "", split.port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(split.hostname or "", split.port, timeout=timeout)
    try:
        connection.request("POST", target, body=body, headers=dict(headers))
        response = connection.getresponse()
        data = response.read(MAX_ANSWER_BYTES + 1)
        if len(data) > MAX_ANSWER_BYTES:
            raise OSError(f"the answer is larger than {MAX_ANSWER_BYTES} bytes")
        headers = {name.lower(): value for name, value in response.getheaders()}
        return HttpAnswer(response.status, data, headers)
    except http.client.HTTPException as error:
        raise OSError(f"{type(error).__name__}: {error}") from None
    finally:
        connection.close()


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.input_schema or {"type": "object"},
        },
    }


def _answer_tool(schema: dict[str, Any] | bool) -> dict[str, Any]:
    """``salvor_answer`` with the answer's schema (``true``: any object; the protocol wants an
    object schema there)."""
    return {
        "type": "function",
        "function": {
            "name": ANSWER_TOOL,
            "description": ANSWER_TOOL_DESCRIPTION,
            "parameters": schema if isinstance(schema, dict) else {"type": "object"},
        },
    }


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    role = message.get("role")
    if role == "assistant":
        converted: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        calls = message.get("tool_calls") or []
        if calls:
            converted["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": compact_json(call.get("arguments")),
                    },
                }
                for call in calls
            ]
        return converted
    content = message.get("content")
    text = content if isinstance(content, str) or content is None else compact_json(content)
    if role == "tool":
        return {"role": "tool", "tool_call_id": message["tool_call_id"], "content": text}
    return {"role": role, "content": text}


def request_body(model: str, request: ModelRequest) -> dict[str, Any]:
    """The chat-completions request for ``request`` (``model`` is the name after ``openai:``)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": request.system},
            *(_message(message) for message in request.messages),
        ],
    }
    tools = [_tool(spec) for spec in request.tools]
    if request.answer_schema is not None:  # the structured loop (spec 08, section 4)
        tools.append(_answer_tool(request.answer_schema))
        body["tool_choice"] = "required"
    if tools:
        body["tools"] = tools
    return body


def _error_detail(data: bytes) -> str:
    try:
        value = json.loads(data)
    except ValueError:
        text = data.decode("utf-8", errors="replace").strip()
        return text[:200]
    if isinstance(value, dict):
        error = value.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
        if isinstance(value.get("message"), str):
            return value["message"]
    return ""


class OpenAIProvider:
    def __init__(
        self, model: str, base_url: str, api_key: str | None, fetch: Fetch = http_fetch
    ) -> None:
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.fetch = fetch

    def complete(self, request: ModelRequest) -> ModelReply:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Idempotency-Key": request.idempotency_key,
        }
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        payload = compact_json(request_body(self.model, request)).encode("utf-8")
        try:
            answer = self.fetch(self.url, payload, headers, request.timeout)
        except TimeoutError:
            raise ProviderError(
                f"the model provider at {self.url} did not answer within {request.timeout:g} s"
            ) from None
        except (OSError, ValueError) as error:
            raise ProviderError(f"cannot reach the model provider at {self.url}: {error}") from None
        if not 200 <= answer.status < 300:
            detail = _error_detail(answer.body)
            raise ProviderError(
                f"the model provider answered HTTP {answer.status}"
                + (f": {detail}" if detail else "")
            )
        try:
            value = json.loads(answer.body)
        except ValueError:
            raise ProviderError("the model provider's answer is not JSON") from None
        return self._reply(value)

    def _reply(self, value: Any) -> ModelReply:
        try:
            message = value["choices"][0]["message"]
            if not isinstance(message, dict):
                raise TypeError
        except (KeyError, IndexError, TypeError):
            raise ProviderError("the model provider's answer has no `choices[0].message`") from None
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise ProviderError("the model provider's message content is not text")
        calls = tuple(self._call(call) for call in message.get("tool_calls") or ())
        usage = value.get("usage") if isinstance(value.get("usage"), dict) else {}
        return ModelReply(
            content,
            calls,
            Usage(_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))),
        )

    @staticmethod
    def _call(call: Any) -> ToolCall:
        try:
            function = call["function"]
            name, arguments, call_id = function["name"], function.get("arguments"), call["id"]
        except (KeyError, TypeError):
            raise ProviderError("the model asked for a tool call without an id or name") from None
        if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
            return ToolCall(str(call_id), str(name), {})
        if not isinstance(arguments, str):
            return ToolCall(str(call_id), str(name), arguments)
        try:
            parsed = json.loads(arguments)
        except ValueError as error:
            raise ProviderError(
                f"the model called the tool `{name}` with arguments that are not JSON: {error}"
            ) from None
        return ToolCall(str(call_id), str(name), parsed)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
