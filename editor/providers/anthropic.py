"""``claude-…``: models over the Anthropic Messages protocol, as the reference's agent files reach
them (``model = "claude-…"`` with ``[llm]``).

One :class:`AnthropicProvider` answers every ``claude-…`` model. Each request carries the
agent's ``llm`` table (spec: the reference's ``LlmConfig``), read here at call time:

* the endpoint is ``{base}/v1/messages``, ``base`` the value of the variable ``base_url_env``
  names when it is set and not empty, else the public endpoint;
* the key is the value of the variable ``api_key_env`` names (default ``ANTHROPIC_API_KEY``),
  sent as ``x-api-key`` (``api_key_kind = "oauth"``: ``Authorization: Bearer`` with the OAuth
  beta header); no key, no header (a local endpoint needs none);
* a variable an agent names is read only when the installation allows it
  (``GATEHOUSE_LLM_ENV_ALLOW``): registration refuses any other, and so does a call, should the
  list have shrunk since;
* ``max_retries`` (default 2) more attempts after a 429, a 5xx, a refused connection or a
  timeout, waiting what ``retry-after`` asks or an exponential backoff with jitter (0.5 s
  doubling, at most 30 s, as the reference waits), never past the engine's model timeout;
* ``timeout_seconds`` (default 60) bounds each attempt.

The key is never logged, never put in an error message, and never recorded. The transport is
the same :data:`~editor.providers.openai.Fetch` the ``openai:`` provider uses.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Collection, Mapping
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
from editor.providers.openai import Fetch, HttpAnswer, http_fetch

__all__ = [
    "ANTHROPIC_VERSION",
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_RESPONSE_TOKENS",
    "AnthropicProvider",
    "messages_body",
]

ANTHROPIC_VERSION = "2023-06-01"
OAUTH_BETA = "oauth-2025-04-20"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_API_KEY_ENV = "ANTHROPIC_API_KEY"
#: The ``max_tokens`` asked for when the agent sets no ``max_response_tokens`` (the reference's
#: ``DEFAULT_MAX_RESPONSE_TOKENS``).
DEFAULT_MAX_RESPONSE_TOKENS = 4096
DEFAULT_MAX_RETRIES = 2
DEFAULT_TIMEOUT = 60.0
BACKOFF_BASE = 0.5
BACKOFF_MAX = 30.0
#: Answers worth asking again: rate limited, overloaded (529) or any other server error.
_RETRY_STATUSES = frozenset({429, *range(500, 600)})


class _Retryable(ProviderError):
    """An attempt that failed in a way another attempt may not (``wait``: what the server
    asked for in ``retry-after``, seconds)."""

    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.input_schema or {"type": "object"},
    }


def _messages(messages: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """The engine's (OpenAI-shaped) conversation in the Messages protocol's shape: a tool
    round is one ``assistant`` message of ``tool_use`` blocks and one ``user`` message of
    their ``tool_result`` blocks, so turn *k* carries ``2k - 1`` messages (what the
    reference's scripted model counts)."""
    converted: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) or content is None else compact_json(content)
        if role == "assistant":
            blocks: list[dict[str, Any]] = []
            if text:
                blocks.append({"type": "text", "text": text})
            for call in message.get("tool_calls") or ():
                arguments = call.get("arguments")
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": call["name"],
                        "input": arguments if isinstance(arguments, dict) else {},
                    }
                )
            converted.append({"role": "assistant", "content": blocks or text or ""})
        elif role == "tool":
            result = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": text or "",
            }
            last = converted[-1] if converted else None
            if last is not None and last["role"] == "user" and isinstance(last["content"], list):
                last["content"].append(result)
            else:
                converted.append({"role": "user", "content": [result]})
        else:
            converted.append({"role": "user", "content": text or ""})
    return converted


def messages_body(request: ModelRequest) -> dict[str, Any]:
    """The ``POST /v1/messages`` body for ``request``."""
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_response_tokens or DEFAULT_MAX_RESPONSE_TOKENS,
        "messages": _messages(request.messages),
    }
    if request.system:
        body["system"] = request.system
    tools = [_tool(spec) for spec in request.tools]
    if request.answer_schema is not None:  # the structured loop (spec 08, section 4)
        schema = request.answer_schema
        tools.append(
            {
                "name": ANSWER_TOOL,
                "description": ANSWER_TOOL_DESCRIPTION,
                "input_schema": schema if isinstance(schema, dict) else {"type": "object"},
            }
        )
        # A tool call is forced: the model must answer through one of the tools.
        body["tool_choice"] = {"type": "any"}
    if tools:
        body["tools"] = tools
    return body


def _error_detail(data: bytes) -> str:
    try:
        value = json.loads(data)
    except ValueError:
        return data.decode("utf-8", errors="replace").strip()[:200]
    error = value.get("error") if isinstance(value, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        kind = error.get("type")
        return f"{kind}: {error['message']}" if isinstance(kind, str) else error["message"]
    return ""


def _retry_after(answer: HttpAnswer) -> float | None:
    raw = answer.headers.get("retry-after", "").strip()
    try:
        seconds = float(raw)
    except ValueError:
        return None
    return seconds if 0 <= seconds < 86_400 else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class AnthropicProvider:
    """Implements :class:`editor.engine.ports.ModelProvider` for every ``claude-…`` model.

    ``environ`` is where the variables ``llm`` names are read (the worker's environment);
    ``env_allow`` the names it may read. ``sleep`` waits between attempts (tests pass one that
    only records)."""

    def __init__(
        self,
        environ: Mapping[str, str],
        env_allow: Collection[str],
        fetch: Fetch = http_fetch,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._environ = environ
        self._allow = frozenset(env_allow)
        self._fetch = fetch
        self._sleep = sleep

    def __repr__(self) -> str:  # nothing of the environment, ever
        return "AnthropicProvider()"

    # --- configuration, per request ----------------------------------------------------

    def _variable(self, llm: Mapping[str, Any], key: str, default: str | None) -> str | None:
        name = llm.get(key, default)
        if name is None:
            return None
        if name != default and name not in self._allow:
            raise ProviderError(
                f"`llm.{key}` names `{name}`, which this installation's "
                "GATEHOUSE_LLM_ENV_ALLOW does not list"
            )
        value = self._environ.get(name, "")
        return value or None

    def _url(self, llm: Mapping[str, Any]) -> str:
        base = self._variable(llm, "base_url_env", None) or DEFAULT_BASE_URL
        try:
            split = urlsplit(base)
            split.port  # noqa: B018 (raises ValueError on a bad port)
        except ValueError:
            split = None
        if split is None or split.scheme not in ("http", "https") or not split.hostname:
            name = llm.get("base_url_env")
            raise ProviderError(f"the variable `{name}` does not hold an http(s) URL")
        return base.rstrip("/") + "/v1/messages"

    def _headers(self, llm: Mapping[str, Any]) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        key = self._variable(llm, "api_key_env", DEFAULT_API_KEY_ENV)
        if key is not None:
            if llm.get("api_key_kind") == "oauth":
                headers["Authorization"] = f"Bearer {key}"
                headers["anthropic-beta"] = OAUTH_BETA
            else:
                headers["x-api-key"] = key
        return headers

    # --- the call ----------------------------------------------------------------------

    def complete(self, request: ModelRequest) -> ModelReply:
        llm = request.llm
        url = self._url(llm)
        headers = self._headers(llm)
        payload = compact_json(messages_body(request)).encode("utf-8")
        retries = llm.get("max_retries", DEFAULT_MAX_RETRIES)
        per_attempt = float(llm.get("timeout_seconds") or DEFAULT_TIMEOUT)
        deadline = time.monotonic() + request.timeout
        attempt = 0
        while True:
            left = deadline - time.monotonic()
            timeout = max(0.001, min(per_attempt, left))
            try:
                return self._attempt(url, payload, headers, timeout)
            except _Retryable as failure:
                wait = failure.wait if failure.wait is not None else _backoff(attempt)
                if attempt >= retries:
                    suffix = f" (after {attempt + 1} attempts)" if attempt else ""
                    raise ProviderError(f"{failure}{suffix}") from None
                if time.monotonic() + wait >= deadline:
                    raise ProviderError(
                        f"{failure}; the next attempt would start after the model timeout "
                        f"({request.timeout:g} s)"
                    ) from None
                self._sleep(wait)
                attempt += 1

    def _attempt(
        self, url: str, payload: bytes, headers: Mapping[str, str], timeout: float
    ) -> ModelReply:
        try:
            answer = self._fetch(url, payload, headers, timeout)
        except TimeoutError:
            raise _Retryable(
                f"the model provider at {url} did not answer within {timeout:g} s"
            ) from None
        except (OSError, ValueError) as error:
            raise _Retryable(f"cannot reach the model provider at {url}: {error}") from None
        if not 200 <= answer.status < 300:
            detail = _error_detail(answer.body)
            message = f"the model provider answered HTTP {answer.status}" + (
                f": {detail}" if detail else ""
            )
            if answer.status in _RETRY_STATUSES:
                raise _Retryable(message, _retry_after(answer))
            raise ProviderError(message)
        try:
            value = json.loads(answer.body)
        except ValueError:
            raise ProviderError("the model provider's answer is not JSON") from None
        return _reply(value)


def _backoff(attempt: int) -> float:
    """Half the window plus up to half again at random: 0.5 s doubling, at most 30 s."""
    window = min(BACKOFF_BASE * (2 ** min(attempt, 6)), BACKOFF_MAX)
    return window / 2 + random.random() * window / 2


def _reply(value: Any) -> ModelReply:
    if not isinstance(value, dict) or not isinstance(value.get("content"), list):
        raise ProviderError("the model provider's answer has no `content` list of blocks")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in value["content"]:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "tool_use":
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                raise ProviderError("the model asked for a tool call without an id or name")
            arguments = block.get("input")
            calls.append(ToolCall(call_id, name, arguments if arguments is not None else {}))
    stop = value.get("stop_reason")
    if not calls:
        if stop == "max_tokens":
            raise ProviderError(
                "the model's answer was cut off at its `max_tokens` limit (stop_reason "
                "`max_tokens`): raise the agent's `max_response_tokens`"
            )
        if stop == "refusal":
            raise ProviderError("the model refused to answer (stop_reason `refusal`)")
        if stop == "tool_use":
            raise ProviderError("the model stopped for a tool call but asked for none")
        if stop == "pause_turn":
            raise ProviderError(
                "the model paused its turn (stop_reason `pause_turn`), which agents here "
                "cannot continue"
            )
    raw_usage = value.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    content = "".join(texts) if texts else None
    return ModelReply(
        content,
        tuple(calls),
        Usage(_count(usage.get("input_tokens")), _count(usage.get("output_tokens"))),
    )
