"""The two offline providers: ``echo`` and ``scripted`` (spec 04, *Registries*).

Both report usage as characters / 4, rounded up: ``input_tokens`` over the system prompt and
every message content of the request, ``output_tokens`` over the reply content (or the
compact JSON of the tool calls). Deterministic, so budgets can be tested offline.
"""

from __future__ import annotations

import json
import math
from typing import Any

from editor.engine.errors import ProviderError
from editor.engine.ports import ANSWER_TOOL, ModelReply, ModelRequest, ToolCall, Usage

__all__ = ["ECHO_KINDS", "EchoProvider", "ScriptedProvider", "compact_json", "estimate_tokens"]

#: Seed 004's echo contract: the kind a message comes back with.
ECHO_KINDS = {"prompt": "critique", "critique": "rebuttal"}


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _request_tokens(request: ModelRequest) -> int:
    size = len(request.system)
    for message in request.messages:
        content = message.get("content")
        if isinstance(content, str):
            size += len(content)
        elif content is not None:
            size += len(compact_json(content))
    return math.ceil(size / 4)


class EchoProvider:
    """Replies with the routed value (the first user message), seed 004's kinds swapped; asked
    for a structured answer, calls ``salvor_answer`` with that value as its input."""

    def complete(self, request: ModelRequest) -> ModelReply:
        if not request.messages:
            raise ProviderError("the echo model got no message to echo")
        content = request.messages[0].get("content")
        text = content if isinstance(content, str) else compact_json(content)
        reply = text  # the routed value's compact JSON, as the engine wrote it
        try:
            value = json.loads(text)
        except ValueError:
            value = None  # not JSON (the engine always sends JSON): echoed as it is
        if isinstance(value, dict) and value.get("kind") in ECHO_KINDS:
            value = {**value, "kind": ECHO_KINDS[value["kind"]]}
            reply = compact_json(value)
        usage = Usage(_request_tokens(request), estimate_tokens(reply))
        if request.forces_tool_call:  # the structured loop: the echoed value is the answer
            answer = ToolCall(f"call_{request.cursor}_0", ANSWER_TOOL, value)
            return ModelReply(None, (answer,), usage)
        return ModelReply(reply, (), usage)


class ScriptedProvider:
    """Replies with ``options["replies"][request.cursor]``.

    A reply that is (or parses as) a JSON object with a ``tool_calls`` list
    ``[{"name": tool, "arguments": {…}}]`` asks for those calls (ids ``call_<cursor>_<i>``);
    any other reply is the content: a string as it is, another JSON value as compact JSON.
    A structured answer is written as a call like any other,
    ``{"tool_calls": [{"name": "salvor_answer", "arguments": {…}}]}`` (spec 08, section 4).
    """

    def complete(self, request: ModelRequest) -> ModelReply:
        replies = request.options.get("replies", [])
        if not isinstance(replies, list):
            raise ProviderError("the scripted agent's `options.replies` must be a list")
        if request.cursor >= len(replies):
            raise ProviderError("the scripted agent has no reply left")
        reply = replies[request.cursor]
        value = reply
        if isinstance(reply, str):
            try:
                value = json.loads(reply)
            except ValueError:
                value = None
        input_tokens = _request_tokens(request)
        if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
            calls = tuple(
                self._call(request.cursor, index, call)
                for index, call in enumerate(value["tool_calls"])
            )
            output = compact_json(value["tool_calls"])
            return ModelReply(None, calls, Usage(input_tokens, estimate_tokens(output)))
        content = reply if isinstance(reply, str) else compact_json(reply)
        return ModelReply(content, (), Usage(input_tokens, estimate_tokens(content)))

    @staticmethod
    def _call(cursor: int, index: int, call: Any) -> ToolCall:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ProviderError(
                f"the scripted reply {cursor} has a tool call ({index}) without a `name`"
            )
        return ToolCall(f"call_{cursor}_{index}", call["name"], call.get("arguments", {}))
