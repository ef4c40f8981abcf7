"""``claude-…`` models over the Anthropic Messages protocol, against a local fake server
(``tests/fake_anthropic.py``) over real HTTP: tool use, stop reasons, usage, retries and their
bound, the request timeout, and the key, which is never logged."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import pytest

from editor.engine import ModelRequest, ProviderError, ToolSpec
from editor.engine.calls import cost_usd
from editor.graph.model import AgentNode
from editor.providers import AnthropicProvider, build_registry
from editor.providers.anthropic import messages_body
from tests.fake_anthropic import FakeAnthropic
from tests.reference_examples import EXAMPLES, needs_examples
from tests.unit.engine.harness import Harness, graph

KEY = "sk-ant-test-0123456789-never-logged"


def send_summary(value: Any, context: Any) -> Any:
    return {"sent": True}


TOOL = ToolSpec(
    "send_summary",
    "Send the closing notice",
    send_summary,
    input_schema={"type": "object", "properties": {"message": {"type": "string"}}},
)


def request(
    llm: dict[str, Any],
    messages: tuple[dict[str, Any], ...] = ({"role": "user", "content": '{"q":1}'},),
    *,
    system: str = "You are the notify-summary writer.",
    timeout: float = 30.0,
    max_response_tokens: int | None = None,
) -> ModelRequest:
    return ModelRequest(
        model="claude-opus-4-8",
        system=system,
        messages=messages,
        tools=(TOOL,),
        options={},
        cursor=0,
        idempotency_key="k",
        timeout=timeout,
        llm=llm,
        max_response_tokens=max_response_tokens,
    )


class Waits(list[float]):
    """A ``sleep`` that records what it was asked to wait, and does not wait."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def model() -> Any:
    with FakeAnthropic() as server:
        yield server


def provider(server: FakeAnthropic, waits: Waits | None = None, **environ: str) -> Any:
    env = {"MODEL_URL": server.base_url, "ANTHROPIC_API_KEY": KEY, **environ}
    return AnthropicProvider(
        env, {"MODEL_URL", "OTHER_KEY"}, sleep=waits if waits is not None else Waits()
    )


LLM = {"base_url_env": "MODEL_URL"}


def test_a_tool_use_round_trip_speaks_the_messages_protocol(model: FakeAnthropic) -> None:
    model.reply("Sending.", tool_use=[("tu_1", "send_summary", {"message": "done"})])
    model.reply("Notice sent.", usage=(30, 7))
    answer = provider(model)

    first = answer.complete(request(LLM))
    assert first.content == "Sending."
    (call,) = first.tool_calls
    assert (call.id, call.name, call.arguments) == ("tu_1", "send_summary", {"message": "done"})
    conversation = (
        {"role": "user", "content": '{"q":1}'},
        {"role": "assistant", "content": "Sending.", "tool_calls": [
            {"id": "tu_1", "name": "send_summary", "arguments": {"message": "done"}}]},
        {"role": "tool", "tool_call_id": "tu_1", "content": '{"sent":true}'},
    )  # fmt: skip
    second = answer.complete(request(LLM, conversation, max_response_tokens=256))
    assert (second.content, second.tool_calls) == ("Notice sent.", ())
    assert (second.usage.input_tokens, second.usage.output_tokens) == (30, 7)

    sent = model.requests[0]
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body == {
        "model": "claude-opus-4-8",
        "max_tokens": 4096,
        "system": "You are the notify-summary writer.",
        "messages": [{"role": "user", "content": '{"q":1}'}],
        "tools": [
            {
                "name": "send_summary",
                "description": "Send the closing notice",
                "input_schema": TOOL.input_schema,
            }
        ],
    }
    assert model.requests[1].body["max_tokens"] == 256
    assert model.requests[1].body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Sending."},
                {"type": "tool_use", "id": "tu_1", "name": "send_summary",
                 "input": {"message": "done"}},
            ],
        },
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu_1", "content": '{"sent":true}'}]},
    ]  # fmt: skip


@needs_examples()
def test_it_plays_the_references_payroll_script_by_the_name_in_the_system_prompt() -> None:
    with FakeAnthropic.from_file(EXAMPLES / "payroll" / "model-script.json") as model:
        answer = provider(model)
        first = answer.complete(request(LLM))
        assert [call.name for call in first.tool_calls] == ["send_summary"]
        call = first.tool_calls[0]
        conversation = (
            {"role": "user", "content": "[]"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": call.id, "name": call.name, "arguments": call.arguments}]},
            {"role": "tool", "tool_call_id": call.id, "content": "{}"},
        )  # fmt: skip
        last = answer.complete(request(LLM, conversation))
        assert last.content is not None and last.content.startswith("Summary notice sent")
        assert (last.usage.input_tokens, last.usage.output_tokens) == (320, 24)

        with pytest.raises(ProviderError) as missed:
            answer.complete(request(LLM, system="You are someone else."))
        assert "demo_script_no_conversation" in str(missed.value)
        assert "notify-summary" in str(missed.value)


@pytest.mark.parametrize(
    ("stop_reason", "message"),
    [
        ("max_tokens", "cut off at its `max_tokens` limit"),
        ("refusal", "the model refused to answer"),
        ("pause_turn", "paused its turn"),
    ],
)
def test_a_stop_reason_that_is_not_an_answer_fails_the_call_saying_so(
    model: FakeAnthropic, stop_reason: str, message: str
) -> None:
    model.reply("half an ans", stop_reason=stop_reason)

    with pytest.raises(ProviderError) as refused:
        provider(model).complete(request(LLM))

    assert message in str(refused.value)


def test_end_turn_and_stop_sequence_are_answers(model: FakeAnthropic) -> None:
    model.reply('{"score": 1}', stop_reason="end_turn")
    model.reply("stopped", stop_reason="stop_sequence")
    answer = provider(model)

    assert answer.complete(request(LLM)).content == '{"score": 1}'
    assert answer.complete(request(LLM)).content == "stopped"


def test_the_cost_of_a_call_is_its_usage_at_the_agents_prices(model: FakeAnthropic) -> None:
    model.reply("ok", usage=(260, 40))
    usage = provider(model).complete(request(LLM)).usage

    pricing = {"input_per_mtok": 3.0, "output_per_mtok": 15.0}
    assert cost_usd(pricing, usage.input_tokens, usage.output_tokens) == pytest.approx(0.00138)


def test_a_429_is_retried_after_what_retry_after_asks(model: FakeAnthropic) -> None:
    model.fail(429, retry_after="2")
    model.reply("ok")
    waits = Waits()

    assert provider(model, waits).complete(request(LLM)).content == "ok"
    assert waits == [2.0]
    assert len(model.requests) == 2


def test_server_errors_are_retried_with_a_growing_backoff_up_to_max_retries(
    model: FakeAnthropic,
) -> None:
    model.fail(500)
    model.fail(529)
    model.reply("ok")
    waits = Waits()

    assert provider(model, waits).complete(request(LLM)).content == "ok"
    assert len(waits) == 2
    assert 0.25 <= waits[0] <= 0.5 and 0.5 <= waits[1] <= 1.0


def test_the_retries_are_bounded_and_the_last_failure_is_reported(model: FakeAnthropic) -> None:
    model.fail(503, times=5)

    with pytest.raises(ProviderError) as failed:
        provider(model).complete(request({**LLM, "max_retries": 1}))

    assert str(failed.value) == (
        "the model provider answered HTTP 503: fault: injected (after 2 attempts)"
    )
    assert len(model.requests) == 2


def test_a_client_error_is_not_retried(model: FakeAnthropic) -> None:
    model.fail(400)

    with pytest.raises(ProviderError) as failed:
        provider(model).complete(request(LLM))

    assert str(failed.value).startswith("the model provider answered HTTP 400")
    assert len(model.requests) == 1


def test_a_retry_after_past_the_model_timeout_is_not_waited_for(model: FakeAnthropic) -> None:
    model.fail(429, retry_after="600")
    waits = Waits()

    with pytest.raises(ProviderError) as failed:
        provider(model, waits).complete(request(LLM, timeout=30))

    assert "the next attempt would start after the model timeout (30 s)" in str(failed.value)
    assert waits == []


def test_an_endpoint_that_does_not_answer_times_out_and_is_retried(model: FakeAnthropic) -> None:
    model.stall()
    model.reply("ok")
    waits = Waits()

    reply = provider(model, waits).complete(request({**LLM, "timeout_seconds": 1}))

    assert reply.content == "ok"
    assert len(waits) == 1 and len(model.requests) == 2


def test_a_timeout_on_the_last_attempt_fails_the_call_naming_it(model: FakeAnthropic) -> None:
    model.stall()

    with pytest.raises(ProviderError) as failed:
        provider(model).complete(request({**LLM, "timeout_seconds": 1, "max_retries": 0}))

    assert str(failed.value) == (
        f"the model provider at {model.base_url}/v1/messages did not answer within 1 s"
    )


def test_the_key_comes_from_the_variable_api_key_env_names(model: FakeAnthropic) -> None:
    model.reply("ok")
    model.reply("ok")
    answer = provider(model, OTHER_KEY="sk-other")

    answer.complete(request({**LLM, "api_key_env": "OTHER_KEY"}))
    answer.complete(request({**LLM, "api_key_env": "OTHER_KEY", "api_key_kind": "oauth"}))

    assert model.requests[0].headers["x-api-key"] == "sk-other"
    assert "x-api-key" not in model.requests[1].headers
    assert model.requests[1].headers["authorization"] == "Bearer sk-other"
    assert model.requests[1].headers["anthropic-beta"] == "oauth-2025-04-20"


def test_no_key_no_header(model: FakeAnthropic) -> None:
    model.reply("ok")
    AnthropicProvider({"MODEL_URL": model.base_url}, {"MODEL_URL"}).complete(request(LLM))

    assert "x-api-key" not in model.requests[0].headers


@pytest.mark.parametrize("key", ["base_url_env", "api_key_env"])
def test_a_variable_the_installation_does_not_allow_is_never_read(
    model: FakeAnthropic, key: str
) -> None:
    llm = {**LLM, key: "SECRET_KEY"}

    with pytest.raises(ProviderError) as refused:
        provider(model, SECRET_KEY="http://127.0.0.1:1").complete(request(llm))

    assert str(refused.value) == (
        f"`llm.{key}` names `SECRET_KEY`, which this installation's GATEHOUSE_LLM_ENV_ALLOW "
        "does not list"
    )
    assert model.requests == []


def test_the_key_is_never_logged_nor_in_an_error(
    model: FakeAnthropic, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    model.fail(500, times=3)
    model.reply("ok")

    with pytest.raises(ProviderError) as failed:
        provider(model).complete(request(LLM))
    answer = provider(model)
    answer.complete(request(LLM))

    assert model.requests[-1].headers["x-api-key"] == KEY  # it was sent …
    assert KEY not in caplog.text  # … and never written down
    assert KEY not in str(failed.value)
    assert KEY not in repr(answer)


def test_the_registry_answers_every_claude_model_and_nothing_else() -> None:
    registry = build_registry(None, None, environ={}, llm_env_allow=())

    assert isinstance(registry.provider_for("claude-opus-4-8"), AnthropicProvider)
    assert registry.provider_for("claude-") is None
    assert registry.provider_for("gpt-4o") is None


@needs_examples()
def test_the_engine_plays_the_references_payroll_conversation_through_the_provider(
    h: Harness,
) -> None:
    h.tool("send_summary", lambda value, context: {"sent": value["message"]})
    with FakeAnthropic.from_file(EXAMPLES / "payroll" / "model-script.json") as model:
        h.providers.extra["claude-opus-4-8"] = provider(model)
        agent = h.agents.add(
            {
                "model": "claude-opus-4-8",
                "prompt": "You are the notify-summary writer on a payroll desk.",
                "tools": ["send_summary"],
                "llm": LLM,
                "pricing": {"input_per_mtok": 3.0, "output_per_mtok": 15.0},
                "budget": {"max_cost_usd": 1.0},
            }
        )
        run_id = h.run(graph(AgentNode("notify", agent)), [{"employee": "e-1", "paid": True}])

    assert h.output(run_id).startswith("Summary notice sent")
    (sent,) = h.of(run_id, "ToolCallCompleted")
    assert sent["output"]["sent"].startswith("Payroll run complete")
    assert [len(request.body["messages"]) for request in model.requests] == [1, 3]
    assert [p["usage"] for p in h.of(run_id, "ModelCallCompleted")] == [
        {"input_tokens": 260, "output_tokens": 40},
        {"input_tokens": 320, "output_tokens": 24},
    ]


def test_the_structured_loop_offers_salvor_answer_and_forces_a_tool_call() -> None:
    schema = {"type": "object", "required": ["score"]}
    body = messages_body(replace(request({}), answer_schema=schema))

    assert body["tool_choice"] == {"type": "any"}
    assert [tool["name"] for tool in body["tools"]] == [TOOL.name, "salvor_answer"]
    assert body["tools"][-1]["input_schema"] == schema
    assert "tool_choice" not in messages_body(request({}))
