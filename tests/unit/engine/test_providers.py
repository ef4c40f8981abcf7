"""The provider registry and the offline providers: echo and scripted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from editor.engine.errors import ProviderError
from editor.engine.ports import ModelReply, ModelRequest, ToolCall, Usage
from editor.providers import EchoProvider, OpenAIProvider, ScriptedProvider, build_registry


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def make_request(
    routed: Any = None,
    *,
    model: str = "echo",
    options: dict[str, Any] | None = None,
    cursor: int = 0,
    system: str = "Be brief.",
) -> ModelRequest:
    return ModelRequest(
        model=model,
        system=system,
        messages=({"role": "user", "content": compact(routed)},),
        tools=(),
        options=options or {},
        cursor=cursor,
        idempotency_key="key",
        timeout=5.0,
    )


def test_echo_and_scripted_are_always_available() -> None:
    registry = build_registry(None, None)
    assert isinstance(registry.provider_for("echo"), EchoProvider)
    assert isinstance(registry.provider_for("scripted"), ScriptedProvider)


def test_openai_models_need_a_configured_base_url() -> None:
    assert build_registry(None, None).provider_for("openai:gpt-test") is None
    assert build_registry("", "sk").provider_for("openai:gpt-test") is None
    provider = build_registry("http://127.0.0.1:9/v1", None).provider_for("openai:gpt-test")
    assert isinstance(provider, OpenAIProvider)
    assert provider.model == "gpt-test"


def test_unknown_models_have_no_provider() -> None:
    registry = build_registry("http://127.0.0.1:9/v1", None)
    assert registry.provider_for("claude") is None
    assert registry.provider_for("openai:") is None


def test_echo_replies_with_the_routed_value_as_compact_json() -> None:
    routed = {"b": [1, 2.5, None], "a": "é"}
    reply = EchoProvider().complete(make_request(routed))
    assert reply.content == compact(routed)
    assert reply.tool_calls == ()


@pytest.mark.parametrize(
    ("kind", "answered"),
    [
        ("prompt", "critique"),
        ("critique", "rebuttal"),
        ("rebuttal", "rebuttal"),
        ("concession", "concession"),
    ],
)
def test_echo_follows_seed_004s_kinds_and_keeps_sender_and_recipient(
    kind: str, answered: str
) -> None:
    message = {"kind": kind, "sender": "system", "recipient": "red-team", "text": "subject"}
    reply = EchoProvider().complete(make_request(message))
    assert json.loads(reply.content) == {**message, "kind": answered}


def test_echo_counts_characters_over_four_rounded_up() -> None:
    reply = EchoProvider().complete(make_request("abcde", system="sys"))
    # input: "sys" + '"abcde"' = 10 characters → 3; output: '"abcde"' = 7 → 2
    assert reply.usage == Usage(3, 2)


def test_scripted_replies_in_cursor_order() -> None:
    options = {"replies": ["first", "second"]}
    provider = ScriptedProvider()
    assert provider.complete(make_request(options=options, cursor=0)).content == "first"
    assert provider.complete(make_request(options=options, cursor=1)).content == "second"


def test_scripted_without_a_reply_left_fails_with_the_exact_message() -> None:
    with pytest.raises(ProviderError) as raised:
        ScriptedProvider().complete(make_request(options={"replies": ["only"]}, cursor=1))
    assert str(raised.value) == "the scripted agent has no reply left"
    with pytest.raises(ProviderError, match="no reply left"):
        ScriptedProvider().complete(make_request(options={}, cursor=0))


def test_a_scripted_tool_calls_reply_asks_for_those_calls() -> None:
    script = compact(
        {
            "tool_calls": [
                {"name": "pick", "arguments": {"from": {}, "paths": []}},
                {"name": "echo", "arguments": "x"},
            ]
        }
    )
    reply = ScriptedProvider().complete(make_request(options={"replies": ["a", script]}, cursor=1))
    assert reply.content is None
    assert reply.tool_calls == (
        ToolCall("call_1_0", "pick", {"from": {}, "paths": []}),
        ToolCall("call_1_1", "echo", "x"),
    )
    assert ModelReply.from_json(reply.as_json()).tool_calls == reply.tool_calls


def test_a_scripted_reply_that_is_other_json_is_its_content_as_text() -> None:
    reply = ScriptedProvider().complete(make_request(options={"replies": ['{"score": 0.9}']}))
    assert reply.content == '{"score": 0.9}'
    assert reply.tool_calls == ()


def test_a_scripted_tool_call_without_a_name_fails_the_call() -> None:
    script = compact({"tool_calls": [{"arguments": {}}]})
    with pytest.raises(ProviderError, match="without a `name`"):
        ScriptedProvider().complete(make_request(options={"replies": [script]}))


def test_scripted_refuses_replies_that_are_not_a_list() -> None:
    with pytest.raises(ProviderError, match="must be a list"):
        ScriptedProvider().complete(make_request(options={"replies": "nope"}))


@pytest.mark.parametrize("url", ["localhost:8080/v1", "ftp://models/v1", "http://host:99999/v1"])
def test_a_base_url_that_is_not_http_names_the_setting(url: str) -> None:
    with pytest.raises(ValueError, match="GATEHOUSE_OPENAI_BASE_URL"):
        build_registry(url, None)
