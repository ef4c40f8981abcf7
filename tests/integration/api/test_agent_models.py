"""Agents on ``claude-…`` models (the Anthropic Messages protocol) through the API: the
reference's ``[llm]`` variables only from ``GATEHOUSE_LLM_ENV_ALLOW``, a graph run whose agent
node talks to a fake Messages server through a real worker, and cost budgets extended by
``POST /v1/runs/{id}/resume``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import override_settings

from editor.models import AgentDefinition
from editor.services import installation
from tests.fake_anthropic import FakeAnthropic
from tests.integration.api.callers import Caller, bearer_caller, error_of
from tests.integration.api.running import (
    ECHO_CHAIN,
    drive,
    events_of,
    record,
    resume,
    run_of,
    start,
    store,
)
from tests.reference_examples import EXAMPLES, needs_examples

pytestmark = pytest.mark.django_db

KEY = "sk-ant-integration-5f1e2d-never-logged"
ALLOWED = ["GATEHOUSE_TEST_MODEL_URL", "GATEHOUSE_TEST_MODEL_KEY", "SALVOR_DEMO_BASE_URL"]

NOTIFY = """\
name = "notify-summary"
model = "claude-opus-4-8"
system_prompt = "You are the notify-summary writer on a payroll desk."
tools = ["echo"]

[llm]
base_url_env = "GATEHOUSE_TEST_MODEL_URL"
api_key_env = "GATEHOUSE_TEST_MODEL_KEY"
max_retries = 1
timeout_seconds = 10

[budgets]
steps = 4
"""


def turn(content: list[dict[str, Any]], stop: str, usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": "msg",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-8",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


SCRIPT = {
    "notify-summary": [
        turn(
            [{"type": "tool_use", "id": "tu_1", "name": "echo", "input": {"message": "paid"}}],
            "tool_use",
            (260, 40),
        ),
        turn([{"type": "text", "text": "Summary notice sent."}], "end_turn", (320, 24)),
    ]
}


@pytest.fixture
def operator_api(operator: User) -> Caller:
    return bearer_caller(operator)


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(SCRIPT) as server, override_settings(GATEHOUSE_LLM_ENV_ALLOW=ALLOWED):
        monkeypatch.setenv("GATEHOUSE_TEST_MODEL_URL", server.base_url)
        monkeypatch.setenv("GATEHOUSE_TEST_MODEL_KEY", KEY)
        installation.providers.cache_clear()  # built once per process, from the settings
        yield server
    installation.providers.cache_clear()


def post_toml(api: Caller, text: str) -> Any:
    return api.post("/v1/agents", text.encode(), content_type="application/toml")


def agent_graph(agent_hash: str) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "nodes": [{"kind": "agent", "payload": {"id": "notify", "agent_hash": agent_hash}}],
        "edges": [],
    }


# --- registration ----------------------------------------------------------------------------


@override_settings(GATEHOUSE_LLM_ENV_ALLOW=["SOME_OTHER_URL"])
def test_an_llm_variable_the_installation_does_not_allow_is_refused_naming_it(
    api: Caller,
) -> None:
    text = NOTIFY.replace('"GATEHOUSE_TEST_MODEL_KEY"', '"SECRET_KEY"')

    response = post_toml(api, text)

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_agent"
    problems = [(item["code"], item["field"]) for item in error["details"]["errors"]]
    assert problems == [
        ("llm_env_not_allowed", "llm.base_url_env"),
        ("llm_env_not_allowed", "llm.api_key_env"),
    ]
    message = error["details"]["errors"][1]["message"]
    assert "`SECRET_KEY`" in message and "GATEHOUSE_LLM_ENV_ALLOW" in message
    assert "server secret" in message
    assert not AgentDefinition.objects.exists()


def test_a_literal_base_url_other_than_the_public_endpoint_is_refused(api: Caller) -> None:
    text = NOTIFY.replace(
        'base_url_env = "GATEHOUSE_TEST_MODEL_URL"', 'base_url = "https://collector.example"'
    )

    with override_settings(GATEHOUSE_LLM_ENV_ALLOW=ALLOWED):
        response = post_toml(api, text)

    assert response.status_code == 400
    (problem,) = error_of(response)["details"]["errors"]
    assert (problem["code"], problem["field"]) == ("llm_base_url_refused", "llm.base_url")


@needs_examples()
def test_the_references_tailor_registers_once_its_variable_is_allowed(api: Caller) -> None:
    text = (EXAMPLES / "refine" / "agents" / "tailor.toml").read_text()

    with override_settings(GATEHOUSE_LLM_ENV_ALLOW=[]):
        refused = post_toml(api, text)
    with override_settings(GATEHOUSE_LLM_ENV_ALLOW=["SALVOR_DEMO_BASE_URL"]):
        accepted = post_toml(api, text)

    assert refused.status_code == 400
    assert "SALVOR_DEMO_BASE_URL" in refused.content.decode()
    assert accepted.status_code == 201, accepted.content
    stored = api.get(f"/v1/agents/{accepted.json()['agent']}").json()["definition"]
    assert stored["model"] == "claude-opus-4-8"
    assert stored["llm"] == {"base_url_env": "SALVOR_DEMO_BASE_URL"}
    assert stored["budget"] == {"max_steps": 6, "max_tokens": 60000}


def test_pricing_and_the_other_budgets_are_stored_on_the_definition(api: Caller) -> None:
    text = NOTIFY + (
        "cost_usd = 2.5\nwall_time_seconds = 600\n\n"
        "[pricing]\ninput_per_mtok = 3.0\noutput_per_mtok = 15.0\n"
    )
    text = text.replace('tools = ["echo"]', 'tools = ["echo"]\nmax_response_tokens = 512')

    with override_settings(GATEHOUSE_LLM_ENV_ALLOW=ALLOWED):
        response = post_toml(api, text)

    assert response.status_code == 201, response.content
    stored = api.get(f"/v1/agents/{response.json()['agent']}").json()["definition"]
    assert stored["budget"] == {
        "max_steps": 4,
        "max_cost_usd": 2.5,
        "max_wall_time_seconds": 600,
    }
    assert stored["pricing"] == {"input_per_mtok": 3.0, "output_per_mtok": 15.0}
    assert stored["max_response_tokens"] == 512


def test_a_cost_budget_without_pricing_is_refused(api: Caller) -> None:
    with override_settings(GATEHOUSE_LLM_ENV_ALLOW=ALLOWED):
        response = post_toml(api, NOTIFY + "cost_usd = 1.0\n")

    (problem,) = error_of(response)["details"]["errors"]
    assert (problem["code"], problem["field"]) == ("missing_pricing", "pricing")


# --- runs ------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_graph_run_reaches_a_claude_model_through_the_worker(
    api: Caller,
    operator_api: Caller,
    model: FakeAnthropic,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    agent = post_toml(api, NOTIFY)
    assert agent.status_code == 201, agent.content
    run_id = start(operator_api, store(api, agent_graph(agent.json()["agent"])), input=[1, 2])

    call_command("db_worker", batch=True, no_startup_delay=True, reload=False)

    assert run_of(operator_api, run_id)["status"] == {
        "state": "completed",
        "output": "Summary notice sent.",
    }
    events = events_of(operator_api, run_id)
    kinds = [event["event"]["kind"] for event in events]
    assert kinds.count("ModelCallCompleted") == 2
    assert kinds.count("ToolCallCompleted") == 1
    usages = [e["event"]["payload"]["usage"] for e in events if "usage" in e["event"]["payload"]]
    assert usages == [
        {"input_tokens": 260, "output_tokens": 40},
        {"input_tokens": 320, "output_tokens": 24},
    ]
    first, second = model.requests
    assert first.headers["x-api-key"] == KEY
    assert first.body["messages"] == [{"role": "user", "content": "[1,2]"}]
    assert [block["type"] for block in second.body["messages"][2]["content"]] == ["tool_result"]
    # The key went to the model and nowhere else: not the log, not the run's events.
    assert KEY not in caplog.text
    assert KEY not in str(events)


def test_a_run_over_its_cost_budget_parks_and_an_extend_of_cost_usd_continues_it(
    api: Caller, operator: User, model: FakeAnthropic
) -> None:
    operator_api = bearer_caller(operator)
    text = NOTIFY + "cost_usd = 0.001\n\n[pricing]\ninput_per_mtok = 3.0\noutput_per_mtok = 15.0\n"
    agent = post_toml(api, text)
    assert agent.status_code == 201, agent.content
    run_id = start(operator_api, store(api, agent_graph(agent.json()["agent"])))

    assert drive(run_id) == "budget_exceeded"
    status = run_of(operator_api, run_id)["status"]
    assert status["budget"] == {"kind": "cost_usd", "limit": 0.001}
    assert status["observed"] == pytest.approx(0.00138)

    wrong = resume(operator_api, run_id, {"extend": {"steps": 9}})
    assert wrong.status_code == 400
    assert "must name `cost_usd`" in wrong.content.decode()
    assert resume(operator_api, run_id, {"extend": {"cost_usd": 1.0}}).status_code == 202
    assert drive(run_id) == "completed"
    assert run_of(operator_api, run_id)["status"]["output"] == "Summary notice sent."


@pytest.mark.parametrize("named", ["wall_time_seconds", "wall_time"])
def test_a_run_over_its_wall_time_takes_an_extend_of_wall_time(
    api: Caller, operator: User, named: str
) -> None:
    operator_api = bearer_caller(operator)
    run_id = start(operator_api, store(api, ECHO_CHAIN))
    record(run_id, ("NodeEntered", {"node": "write"}))
    budget = {"kind": "wall_time", "limit": 15}
    record(run_id, ("BudgetExceeded", {"node": "write", "budget": budget, "observed": 20.25}))

    too_little = resume(operator_api, run_id, {"extend": {named: 20}})
    assert too_little.status_code == 400
    assert "a number above what was observed (20.25)" in too_little.content.decode()
    assert resume(operator_api, run_id, {"extend": {named: 30.5}}).status_code == 202

    last = events_of(operator_api, run_id)[-1]["event"]
    assert last["kind"] == "BudgetRaised"
    assert (last["payload"]["kind"], last["payload"]["limit"]) == ("wall_time", 30.5)
