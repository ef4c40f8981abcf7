"""openai:<model> against a local fake OpenAI-compatible server (never the internet)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from editor.engine.errors import ProviderError
from editor.engine.ports import ModelRequest, ToolCall, ToolSpec, Usage
from editor.providers import build_registry
from tests.unit.engine.fake_openai import FakeOpenAI

PICK = ToolSpec(
    "pick",
    "Selects paths.",
    lambda value, context: value,
    input_schema={"type": "object", "properties": {"paths": {"type": "array"}}},
)
NO_SCHEMA = ToolSpec("echo", "Echoes.", lambda value, context: value)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def make_request(
    messages: tuple[dict[str, Any], ...] = ({"role": "user", "content": '{"q":1}'},),
    tools: tuple[ToolSpec, ...] = (),
    timeout: float = 5.0,
) -> ModelRequest:
    return ModelRequest(
        "openai:gpt-test", "You are terse.", messages, tools, {}, 0, "idem-7", timeout
    )


def provider(base_url: str, key: str | None = "sk-test") -> Any:
    return build_registry(base_url, key).provider_for("openai:gpt-test")


def test_a_text_reply_comes_back_with_its_usage(server: FakeOpenAI) -> None:
    server.reply(content="Looks fine.", usage=(21, 4))
    reply = provider(server.base_url).complete(make_request())
    assert reply.content == "Looks fine."
    assert reply.tool_calls == ()
    assert reply.usage == Usage(21, 4)


def test_the_request_follows_the_chat_completions_protocol(server: FakeOpenAI) -> None:
    server.reply(content="ok")
    provider(server.base_url).complete(make_request(tools=(PICK, NO_SCHEMA)))
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["Authorization"] == "Bearer sk-test"
    assert sent.headers["Idempotency-Key"] == "idem-7"
    assert sent.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": '{"q":1}'},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "pick",
                    "description": "Selects paths.",
                    "parameters": {"type": "object", "properties": {"paths": {"type": "array"}}},
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "echo",
                    "description": "Echoes.",
                    "parameters": {"type": "object"},
                },
            },
        ],
    }


def test_no_key_means_no_authorization_and_no_tools_means_no_tools_field(
    server: FakeOpenAI,
) -> None:
    server.reply(content="ok")
    provider(server.base_url, key=None).complete(make_request())
    sent = server.requests[0]
    assert "Authorization" not in sent.headers
    assert "tools" not in sent.body


def test_a_tool_call_round_trip(server: FakeOpenAI) -> None:
    server.reply(
        tool_calls=[{"id": "call_a", "name": "pick", "arguments": '{"paths": ["x"]}'}],
        usage=(30, 9),
    )
    server.reply(content="The answer is 1.", usage=(40, 5))
    model = provider(server.base_url)

    first = model.complete(make_request(tools=(PICK,)))
    assert first.content is None
    assert first.tool_calls == (ToolCall("call_a", "pick", {"paths": ["x"]}),)

    history = (
        {"role": "user", "content": '{"q":1}'},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_a", "name": "pick", "arguments": {"paths": ["x"]}}],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": '{"x":1}'},
    )
    second = model.complete(make_request(history, tools=(PICK,)))
    assert second.content == "The answer is 1."
    assert server.requests[1].body["messages"][1:] == [
        {"role": "user", "content": '{"q":1}'},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "pick", "arguments": '{"paths":["x"]}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": '{"x":1}'},
    ]


def test_tool_call_arguments_that_are_not_json_fail_the_call(server: FakeOpenAI) -> None:
    server.reply(tool_calls=[{"id": "c", "name": "pick", "arguments": "{paths:"}])
    with pytest.raises(ProviderError, match="called the tool `pick` with arguments that are not"):
        provider(server.base_url).complete(make_request(tools=(PICK,)))


def test_empty_tool_call_arguments_are_an_empty_object(server: FakeOpenAI) -> None:
    server.reply(tool_calls=[{"id": "c", "name": "echo", "arguments": ""}])
    reply = provider(server.base_url).complete(make_request(tools=(NO_SCHEMA,)))
    assert reply.tool_calls == (ToolCall("c", "echo", {}),)


def test_an_http_error_names_the_status_and_the_servers_message(server: FakeOpenAI) -> None:
    server.error(429, "Rate limit reached for gpt-test")
    with pytest.raises(ProviderError) as raised:
        provider(server.base_url).complete(make_request())
    assert str(raised.value) == (
        "the model provider answered HTTP 429: Rate limit reached for gpt-test"
    )


def test_an_http_error_without_a_json_body_still_names_the_status(server: FakeOpenAI) -> None:
    server.raw(502, b"<html>Bad gateway</html>", "text/html")
    with pytest.raises(ProviderError, match="answered HTTP 502: <html>Bad gateway</html>"):
        provider(server.base_url).complete(make_request())


def test_an_answer_that_is_not_json_fails_the_call(server: FakeOpenAI) -> None:
    server.raw(200, b"not json", "text/plain")
    with pytest.raises(ProviderError, match="the model provider's answer is not JSON"):
        provider(server.base_url).complete(make_request())


def test_an_answer_without_choices_fails_the_call(server: FakeOpenAI) -> None:
    server.raw(200, b'{"choices": []}')
    with pytest.raises(ProviderError, match=r"has no `choices\[0\].message`"):
        provider(server.base_url).complete(make_request())


def test_a_server_that_does_not_answer_in_time_fails_the_call(server: FakeOpenAI) -> None:
    server.stall()
    with pytest.raises(ProviderError, match=r"did not answer within 0\.2 s"):
        provider(server.base_url).complete(make_request(timeout=0.2))


def test_a_refused_connection_fails_the_call_with_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(
        ProviderError,
        match=f"cannot reach the model provider at http://127.0.0.1:{port}/v1/chat/completions",
    ):
        provider(f"http://127.0.0.1:{port}/v1").complete(make_request())


def test_a_custom_fetch_replaces_the_transport() -> None:
    from editor.providers import HttpAnswer

    calls: list[tuple[str, float]] = []

    def fetch(url: str, body: bytes, headers: Any, timeout: float) -> HttpAnswer:
        calls.append((url, timeout))
        return HttpAnswer(200, b'{"choices":[{"message":{"role":"assistant","content":"hi"}}]}')

    model = build_registry("https://models.internal/v1/", None, fetch).provider_for("openai:m")
    assert model.complete(make_request(timeout=7.0)).content == "hi"
    assert calls == [("https://models.internal/v1/chat/completions", 7.0)]


def test_a_structured_answer_offers_salvor_answer_and_forces_a_tool_call(
    server: FakeOpenAI,
) -> None:
    schema = {"type": "object", "required": ["score"]}
    server.reply(tool_calls=[{"id": "call_s", "name": "salvor_answer", "arguments": '{"score":1}'}])
    request = replace(make_request(tools=(PICK,)), answer_schema=schema)

    reply = provider(server.base_url).complete(request)

    assert reply.tool_calls == (ToolCall("call_s", "salvor_answer", {"score": 1}),)
    sent = server.requests[0].body
    assert sent["tool_choice"] == "required"
    assert [tool["function"]["name"] for tool in sent["tools"]] == ["pick", "salvor_answer"]
    assert sent["tools"][1]["function"]["parameters"] == schema


def test_an_ordinary_call_does_not_force_a_tool_call(server: FakeOpenAI) -> None:
    server.reply(content="ok")
    provider(server.base_url).complete(make_request(tools=(PICK,)))
    assert "tool_choice" not in server.requests[0].body
