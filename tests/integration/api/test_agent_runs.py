"""``POST /v1/runs {"agent", "input", "labels"?}``: the reference's agent runs, as runs of a
one-node graph started through the one start path (roles, quotas, rates and the input cap
apply), shown as that agent's runs; streamed, resumed, abandoned and forked like any run."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from pytest_django import Settings

from editor.models import FrozenGraph, Run
from tests.integration.api.callers import Caller, bearer_caller, error_of
from tests.integration.api.running import ZERO_HASH, drive, events_of, kinds_of, resume, run_of
from tests.integration.api.test_run_streams import STREAM, streamed

pytestmark = pytest.mark.django_db

TOOL_CALL = json.dumps({"tool_calls": [{"name": "echo", "arguments": {"n": 1}}]})


@pytest.fixture
def operator_api(operator: User) -> Caller:
    return bearer_caller(operator)


def register(api: Caller, definition: dict[str, Any]) -> str:
    response = api.post("/v1/agents", definition)
    assert response.status_code == 201, response.content
    return str(response.json()["agent"])


@pytest.fixture
def echo_agent(api: Caller) -> str:
    return register(api, {"name": "drafter", "model": "echo", "prompt": "Draft a note."})


@pytest.fixture
def budgeted_agent(api: Caller) -> str:
    """Allowed one step; its script asks for two tool calls, so it parks ``budget_exceeded``."""
    return register(
        api,
        {
            "name": "budgeted",
            "model": "scripted",
            "prompt": "Research the subject.",
            "tools": ["echo"],
            "budget": {"max_steps": 1},
            "options": {"replies": [TOOL_CALL, TOOL_CALL, '"done"']},
        },
    )


def start_agent(caller: Caller, agent: str, **body: Any) -> Any:
    return caller.post("/v1/runs", {"agent": agent, **body})


def started(caller: Caller, agent: str, **body: Any) -> str:
    response = start_agent(caller, agent, **body)
    assert response.status_code == 201, response.content
    return str(response.json()["run"])


# --- Starting ---------------------------------------------------------------------------------


def test_an_agent_run_is_created_as_the_reference_answers_and_names_its_agent(
    operator_api: Caller, echo_agent: str
) -> None:
    response = start_agent(operator_api, echo_agent, input={"topic": "tea"}, labels={"ci": "1"})

    assert response.status_code == 201
    body = response.json()
    assert body == {"run": body["run"], "status": "queued"}
    run = run_of(operator_api, body["run"])
    assert run["agent_def_hash"] == echo_agent
    assert run["labels"] == {"ci": "1"}
    listed = operator_api.get("/v1/runs?limit=10").json()["runs"]
    assert [row["agent_def_hash"] for row in listed if row["run"] == body["run"]] == [echo_agent]
    # Underneath, a stored graph of one agent node naming the hash.
    graph = operator_api.get(f"/v1/graphs/{run['graph_hash']}").json()
    nodes = (graph.get("document") or graph)["nodes"]
    assert nodes == [{"kind": "agent", "payload": {"id": "agent", "agent_hash": echo_agent}}]


def test_two_runs_of_one_agent_share_one_stored_graph(
    operator_api: Caller, echo_agent: str
) -> None:
    first = run_of(operator_api, started(operator_api, echo_agent))
    second = run_of(operator_api, started(operator_api, echo_agent, input=2))

    assert first["graph_hash"] == second["graph_hash"]
    assert FrozenGraph.objects.count() == 1


def test_a_graph_run_names_no_agent(operator_api: Caller, api: Caller) -> None:
    from tests.integration.api.running import ECHO_CHAIN, start, store

    run_id = start(operator_api, store(api, ECHO_CHAIN))

    assert "agent_def_hash" not in run_of(operator_api, run_id)


@pytest.mark.parametrize("agent", [ZERO_HASH, "sha256:nope", "drafter", ""])
def test_an_unknown_agent_is_404_unknown_agent_and_nothing_is_stored(
    operator_api: Caller, agent: str
) -> None:
    response = start_agent(operator_api, agent)

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_agent"
    assert not Run.objects.exists() and not FrozenGraph.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "agent"),
        ({"agent": 7}, "agent"),
        ({"agent": ZERO_HASH, "labels": {"k": 1}}, "labels"),
        ({"agent": ZERO_HASH, "run_id": "x"}, "run_id"),
    ],
)
def test_a_bad_body_is_400_naming_what_is_wrong(
    operator_api: Caller, body: Any, field: str
) -> None:
    response = operator_api.post("/v1/runs", body)

    assert response.status_code == 400, response.content
    assert field in response.content.decode()
    assert not Run.objects.exists()


def test_an_input_over_the_event_cap_is_413_and_nothing_is_created(
    operator_api: Caller, echo_agent: str, settings: Settings
) -> None:
    settings.GATEHOUSE_EVENT_MAX_BYTES = 2000

    response = start_agent(operator_api, echo_agent, input="x" * 3000)

    assert response.status_code == 413
    assert error_of(response)["code"] == "payload_too_large"
    assert not Run.objects.exists()


def test_starting_an_agent_run_needs_the_operators_role(api: Caller, echo_agent: str) -> None:
    response = start_agent(api, echo_agent)  # an author, not an operator

    assert response.status_code == 403
    assert not Run.objects.exists() and not FrozenGraph.objects.exists()


def test_the_hourly_run_rate_refuses_agent_runs_as_it_refuses_graph_runs(
    operator_api: Caller, echo_agent: str, settings: Settings
) -> None:
    settings.GATEHOUSE_RATE_RUNS_PER_HOUR = 1
    started(operator_api, echo_agent)

    response = start_agent(operator_api, echo_agent)

    assert response.status_code == 429
    assert error_of(response)["code"] == "rate_limited"
    assert Run.objects.count() == 1


def test_the_stored_bytes_quota_refuses_the_agent_runs_graph(
    operator_api: Caller, echo_agent: str, settings: Settings
) -> None:
    settings.GATEHOUSE_QUOTA_STORED_BYTES = 1  # the graph could not be stored

    response = start_agent(operator_api, echo_agent)

    assert response.status_code == 413, response.content
    assert error_of(response)["code"] == "quota_exceeded"
    assert not Run.objects.exists() and not FrozenGraph.objects.exists()


# --- Running ----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_echo_agent_run_completes_on_a_real_worker(
    operator_api: Caller, echo_agent: str
) -> None:
    run_id = started(operator_api, echo_agent, input={"topic": "tea"})

    call_command("db_worker", batch=True, no_startup_delay=True, reload=False)

    run = run_of(operator_api, run_id)
    assert run["status"]["state"] == "completed"
    assert run["agent_def_hash"] == echo_agent
    kinds = kinds_of(operator_api, run_id)
    assert kinds[0] == "GraphRunStarted" and kinds[-1] == "RunCompleted"
    assert "ModelCallCompleted" in kinds


def test_an_agent_run_streams_to_its_end(operator_api: Caller, echo_agent: str) -> None:
    run_id = started(operator_api, echo_agent, input="tea")
    assert drive(run_id) == "completed"

    sent = list(streamed(operator_api.get(f"/v1/runs/{run_id}/events", headers=STREAM)))

    envelopes = events_of(operator_api, run_id)
    assert [frame["data"] for frame in sent[:-1]] == envelopes
    assert sent[-1]["event"] == "end" and sent[-1]["data"]["status"]["state"] == "completed"


def test_an_agent_run_over_its_budget_is_resumed_with_an_extend(
    operator_api: Caller, budgeted_agent: str
) -> None:
    run_id = started(operator_api, budgeted_agent, input={"subject": "tea"})
    assert drive(run_id) == "budget_exceeded"

    response = resume(operator_api, run_id, {"extend": {"steps": 5}})

    assert response.status_code == 202, response.content
    assert drive(run_id) == "completed"
    assert run_of(operator_api, run_id)["status"] == {"state": "completed", "output": "done"}


def test_an_agent_run_is_abandoned(operator_api: Caller, budgeted_agent: str) -> None:
    run_id = started(operator_api, budgeted_agent)
    assert drive(run_id) == "budget_exceeded"

    response = operator_api.post(f"/v1/runs/{run_id}/abandon", {"reason": "not needed"})

    assert response.status_code == 200, response.content
    status = run_of(operator_api, run_id)["status"]
    assert status == {"state": "abandoned", "reason": "not needed"}


def test_a_fork_of_an_agent_run_is_a_run_of_the_same_agent(
    operator_api: Caller, echo_agent: str
) -> None:
    origin = started(operator_api, echo_agent, input="tea")
    assert drive(origin) == "completed"

    response = operator_api.post(f"/v1/runs/{origin}/fork", {"from_node": "agent"})

    assert response.status_code == 201, response.content
    child = response.json()["run"]
    assert drive(child) == "completed"
    shown = run_of(operator_api, child)
    assert shown["agent_def_hash"] == echo_agent
    assert shown["forked_from"]["run_id"] == origin


# --- Pages ------------------------------------------------------------------------------------


def test_the_run_page_and_the_runs_list_show_it_as_that_agents_run(
    client: Any, operator: User, operator_api: Caller, echo_agent: str
) -> None:
    run_id = started(operator_api, echo_agent)
    client.force_login(operator)
    short = echo_agent[:15]

    page = client.get(f"/runs/{run_id}/").content.decode()
    listed = client.get("/runs/").content.decode()

    assert "agent run of <code>drafter</code>" in page and echo_agent in page
    assert "agent run of <code>drafter</code>" in listed and short in listed
