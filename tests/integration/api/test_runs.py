"""``POST /v1/graph-runs``, ``GET /v1/runs…`` and ``GET /v1/tools`` (spec 05, *Runs*).

Resolving and abandoning runs are in ``test_runs_resume``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django_tasks_db.models import DBTaskResult

from editor.models import Run, RunEvent
from tests.integration.api.callers import DANGLING, Caller, bearer_caller, error_of, json_of
from tests.integration.api.running import (
    ECHO_CHAIN,
    GATED,
    UNKNOWN_AGENT,
    UNKNOWN_TOOLS,
    ZERO_HASH,
    drive,
    events_of,
    run_of,
    start,
    store,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator_api(operator: User) -> Caller:
    return bearer_caller(operator)


@pytest.fixture
def echo_chain(api: Caller) -> str:
    return store(api, ECHO_CHAIN)


def nothing_created() -> bool:
    return not Run.objects.exists() and not RunEvent.objects.exists()


# --- Starting -------------------------------------------------------------------------------


def test_an_operator_starts_a_run_and_it_is_queued(operator_api: Caller, echo_chain: str) -> None:
    response = operator_api.post(
        "/v1/graph-runs", {"graph_hash": echo_chain, "input": {"topic": "tea"}}
    )

    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"run", "status"}
    assert body["status"] == "queued"
    assert str(uuid.UUID(body["run"])) == body["run"]
    run = run_of(operator_api, body["run"])
    assert run["status"] == {"state": "queued"}
    assert run["graph_hash"] == echo_chain
    assert run["event_count"] == 1


def test_a_run_opens_its_log_with_graph_run_started(operator_api: Caller, echo_chain: str) -> None:
    run_id = start(operator_api, echo_chain, input=[1, "two"], labels={"team": "docs"})

    (envelope,) = events_of(operator_api, run_id)

    assert envelope["run_id"] == run_id
    assert envelope["seq"] == 0
    assert envelope["schema_version"] == 1
    assert envelope["recorded_at"].endswith("Z")
    assert envelope["event"] == {
        "kind": "GraphRunStarted",
        "payload": {"graph_hash": echo_chain, "input": [1, "two"], "labels": {"team": "docs"}},
    }


def test_the_input_defaults_to_null_and_a_run_without_labels_omits_them(
    operator_api: Caller, echo_chain: str
) -> None:
    run_id = start(operator_api, echo_chain)

    (envelope,) = events_of(operator_api, run_id)
    assert envelope["event"]["payload"] == {"graph_hash": echo_chain, "input": None}
    assert "labels" not in run_of(operator_api, run_id)


def test_a_run_is_answered_with_every_field_of_spec_05(
    operator_api: Caller, echo_chain: str
) -> None:
    run_id = start(operator_api, echo_chain, labels={"team": "docs", "ticket": "T-1"})

    run = run_of(operator_api, run_id)

    assert set(run) == {
        "run",
        "graph_hash",
        "labels",
        "status",
        "event_count",
        "first_recorded_at",
        "last_recorded_at",
        "usage",
        "step_count",
        "driver",
        "created_at",
        "updated_at",
    }
    assert run["run"] == run_id
    assert run["labels"] == {"team": "docs", "ticket": "T-1"}
    (started,) = events_of(operator_api, run_id)
    assert run["first_recorded_at"] == run["last_recorded_at"] == started["recorded_at"]
    assert run["usage"] == {"input_tokens": 0, "output_tokens": 0}
    assert run["step_count"] == 0
    assert run["driver"] == "none"


def test_a_started_run_is_handed_to_a_worker_when_it_is_committed(
    operator_api: Caller, echo_chain: str, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run_id = start(operator_api, echo_chain)

    task = DBTaskResult.objects.get()
    assert task.task_path == "editor.tasks.drive_run"
    assert task.args_kwargs["args"] == [run_id]


def test_a_run_of_an_unknown_graph_is_404_unknown_graph(operator_api: Caller) -> None:
    response = operator_api.post("/v1/graph-runs", {"graph_hash": ZERO_HASH})

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_graph"
    assert nothing_created()


def test_a_graph_hash_that_is_not_a_hash_is_404_unknown_graph(operator_api: Caller) -> None:
    response = operator_api.post("/v1/graph-runs", {"graph_hash": "approval-flow"})

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_graph"


def test_a_graph_naming_unregistered_tools_is_404_with_every_resolution_error(
    api: Caller, operator_api: Caller
) -> None:
    graph = store(api, UNKNOWN_TOOLS)

    response = operator_api.post("/v1/graph-runs", {"graph_hash": graph})

    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "unknown_tool"
    errors = error["details"]["errors"]
    assert [(item["code"], item["node"], item["tool"]) for item in errors] == [
        ("unknown_tool", "first", "ecko"),
        ("unknown_tool", "second", "no_such_tool"),
    ]
    assert errors[0]["message"].startswith(
        "tool node `first`: no tool registered under the name `ecko`"
    )
    assert nothing_created()


def test_the_code_is_the_first_resolution_error_in_document_order(
    api: Caller, operator_api: Caller
) -> None:
    graph = store(api, UNKNOWN_AGENT)

    response = operator_api.post("/v1/graph-runs", {"graph_hash": graph})

    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "unknown_agent"
    assert [item["code"] for item in error["details"]["errors"]] == [
        "unknown_agent",
        "unknown_tool",
    ]
    assert nothing_created()


@pytest.mark.parametrize(
    "labels",
    [
        {f"k{index}": "v" for index in range(17)},
        {"k" * 65: "v"},
        {"é" * 33: "v"},  # 33 characters, 66 bytes
        {"key": "v" * 257},
        {"key": "é" * 129},  # 258 bytes
        {"key": 1},
        {"key": None},
        {"key": ["a"]},
        ["team", "docs"],
        "team=docs",
    ],
    ids=[
        "17 labels",
        "a 65-byte key",
        "a 66-byte key of 33 characters",
        "a 257-byte value",
        "a 258-byte value of 129 characters",
        "a number",
        "null",
        "a list value",
        "a list",
        "a string",
    ],
)
def test_labels_beyond_the_limits_are_400_bad_request(
    operator_api: Caller, echo_chain: str, labels: Any
) -> None:
    response = operator_api.post("/v1/graph-runs", {"graph_hash": echo_chain, "labels": labels})

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"
    assert nothing_created()


def test_labels_at_the_limits_are_taken(operator_api: Caller, echo_chain: str) -> None:
    labels = {f"k{index}": "v" for index in range(14)}
    labels["k" * 64] = "v" * 256
    labels["é" * 32] = "é" * 128

    run_id = start(operator_api, echo_chain, labels=labels)

    assert run_of(operator_api, run_id)["labels"] == labels


def test_an_input_holding_nul_is_400_bad_request(operator_api: Caller, echo_chain: str) -> None:
    response = operator_api.post(
        "/v1/graph-runs", {"graph_hash": echo_chain, "input": {"text": "a\u0000b"}}
    )

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"
    assert nothing_created()


def test_a_body_without_a_graph_hash_is_400_bad_request(operator_api: Caller) -> None:
    response = operator_api.post("/v1/graph-runs", {"input": 1})

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"


@pytest.mark.parametrize("actor", ["author", "approver", "nobody"])
def test_only_operators_may_start_runs(
    request: pytest.FixtureRequest, echo_chain: str, actor: str
) -> None:
    caller = bearer_caller(request.getfixturevalue(actor))

    response = caller.post("/v1/graph-runs", {"graph_hash": echo_chain})

    assert response.status_code == 403
    assert error_of(response)["code"] == "forbidden"
    assert nothing_created()


def test_without_credentials_starting_a_run_is_401(anonymous: Caller, echo_chain: str) -> None:
    response = anonymous.post("/v1/graph-runs", {"graph_hash": echo_chain})

    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"
    assert nothing_created()


def test_a_superuser_may_start_a_run(echo_chain: str) -> None:
    root = User.objects.create_superuser("root", password="not-used")

    response = bearer_caller(root).post("/v1/graph-runs", {"graph_hash": echo_chain})

    assert response.status_code == 201


# --- Listing and reading --------------------------------------------------------------------


def test_runs_are_listed_newest_first(operator_api: Caller, echo_chain: str) -> None:
    first = start(operator_api, echo_chain)
    second = start(operator_api, echo_chain)

    body = json_of(operator_api.get("/v1/runs"))

    assert [run["run"] for run in body["runs"]] == [second, first]
    assert "next" not in body
    assert body["runs"][0] == run_of(operator_api, second)


def test_the_runs_list_pages_with_a_cursor(operator_api: Caller, echo_chain: str) -> None:
    started = [start(operator_api, echo_chain) for _ in range(5)]

    seen: list[str] = []
    path = "/v1/runs?limit=2"
    while True:
        body = operator_api.get(path).json()
        seen += [run["run"] for run in body["runs"]]
        if body["next"] is None:
            break
        assert len(body["runs"]) == 2
        path = f"/v1/runs?limit=2&cursor={body['next']}"

    assert seen == started[::-1]


def test_the_runs_list_keeps_one_state(api: Caller, operator_api: Caller, echo_chain: str) -> None:
    gated = store(api, GATED)
    queued = start(operator_api, echo_chain)
    suspended = start(operator_api, gated)
    drive(suspended)

    def listed(query: str) -> list[str]:
        response = operator_api.get(f"/v1/runs?{query}")
        assert response.status_code == 200, response.content
        return [run["run"] for run in json_of(response)["runs"]]

    assert listed("status=suspended") == [suspended]
    assert listed("status=queued") == [queued]
    assert listed("status=completed") == []
    assert listed(f"graph={gated}") == [suspended]
    assert listed(f"graph={echo_chain}&status=queued") == [queued]
    assert listed(f"graph={ZERO_HASH}") == []


@pytest.mark.parametrize("query", ["status=paused", "cursor=not-a-cursor", "limit=0", "limit=201"])
def test_a_bad_runs_query_is_400_bad_request(operator_api: Caller, query: str) -> None:
    response = operator_api.get(f"/v1/runs?{query}")

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"


@pytest.mark.parametrize("path", ["", "/events", "/graph"])
@pytest.mark.parametrize("run_id", [str(uuid.UUID(int=7)), "not-a-uuid", "1"])
def test_an_unknown_run_is_404_unknown_run(operator_api: Caller, run_id: str, path: str) -> None:
    response = operator_api.get(f"/v1/runs/{run_id}{path}")

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_run"


def test_any_signed_in_user_may_read_runs(
    reader: Caller, operator_api: Caller, echo_chain: str
) -> None:
    run_id = start(operator_api, echo_chain)

    for path in ["/v1/runs", f"/v1/runs/{run_id}", f"/v1/runs/{run_id}/events",
                 f"/v1/runs/{run_id}/graph", "/v1/tools"]:  # fmt: skip
        assert reader.get(path).status_code == 200, path


@pytest.mark.parametrize("path", ["/v1/runs", "/v1/runs/{run}", "/v1/runs/{run}/events",
                                  "/v1/runs/{run}/graph", "/v1/tools"])  # fmt: skip
def test_without_credentials_reading_runs_is_401(
    anonymous: Caller, operator_api: Caller, echo_chain: str, path: str
) -> None:
    run_id = start(operator_api, echo_chain)

    response = anonymous.get(path.format(run=run_id))

    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"


# --- Events and the graph projection ---------------------------------------------------------


def test_a_completed_runs_events_are_in_seq_order(operator_api: Caller, echo_chain: str) -> None:
    run_id = start(operator_api, echo_chain, input={"topic": "tea"})
    assert drive(run_id) == "completed"

    events = events_of(operator_api, run_id)

    assert [envelope["seq"] for envelope in events] == list(range(len(events)))
    assert events[0]["event"]["kind"] == "GraphRunStarted"
    assert events[-1]["event"] == {"kind": "RunCompleted", "payload": {"output": {"topic": "tea"}}}
    assert run_of(operator_api, run_id)["event_count"] == len(events)


def test_an_events_page_keeps_integers_past_64_bits_and_any_text_exactly(
    operator_api: Caller, echo_chain: str
) -> None:
    value = {"big": 2**70, "negative": -(2**65), "text": "é — 雪 \u2028", "float": 1e100}
    run_id = start(operator_api, echo_chain, input=value)
    drive(run_id)

    response = operator_api.get(f"/v1/runs/{run_id}/events")

    assert response["Content-Type"] == "application/json"
    events = json.loads(response.content)["events"]
    assert events[0]["event"]["payload"]["input"] == value
    assert events[-1]["event"]["payload"]["output"] == value


def test_an_events_page_is_the_stored_log_as_the_store_reads_it(
    operator_api: Caller, echo_chain: str
) -> None:
    """The page is written from the payloads' stored text; it must say what decoding them says."""
    from editor.models import RunEvent
    from editor.store import envelope_of

    run_id = start(operator_api, echo_chain, input={"nested": [{"a": None, "b": [1.5, True]}]})
    drive(run_id)

    page = json.loads(operator_api.get(f"/v1/runs/{run_id}/events").content)

    stored = RunEvent.objects.filter(run_id=run_id).order_by("seq")
    assert page == {"events": [envelope_of(row).as_json() for row in stored], "next": None}


def test_events_after_a_seq_are_read_incrementally(operator_api: Caller, echo_chain: str) -> None:
    run_id = start(operator_api, echo_chain)
    drive(run_id)
    every = events_of(operator_api, run_id)

    after = operator_api.get(f"/v1/runs/{run_id}/events?after=2").json()
    first_page = operator_api.get(f"/v1/runs/{run_id}/events?limit=2").json()
    second_page = operator_api.get(
        f"/v1/runs/{run_id}/events?limit=2&after={first_page['next']}"
    ).json()
    past_the_end = operator_api.get(f"/v1/runs/{run_id}/events?after={len(every)}").json()

    assert after == {"events": every[3:], "next": None}
    assert first_page == {"events": every[:2], "next": 1}
    assert second_page["events"] == every[2:4]
    assert past_the_end == {"events": [], "next": None}


@pytest.mark.parametrize("query", ["after=-2", "after=x", "limit=0", "limit=1001"])
def test_a_bad_events_query_is_400_bad_request(
    operator_api: Caller, echo_chain: str, query: str
) -> None:
    run_id = start(operator_api, echo_chain)

    response = operator_api.get(f"/v1/runs/{run_id}/events?{query}")

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"


def test_a_queued_runs_graph_lists_no_node(operator_api: Caller, echo_chain: str) -> None:
    run_id = start(operator_api, echo_chain)

    response = operator_api.get(f"/v1/runs/{run_id}/graph")

    assert response.status_code == 200
    assert response.json() == {"graph_hash": echo_chain, "nodes": []}


def test_a_runs_graph_shows_each_node_it_passed(operator_api: Caller, echo_chain: str) -> None:
    run_id = start(operator_api, echo_chain)
    drive(run_id)

    body = operator_api.get(f"/v1/runs/{run_id}/graph").json()

    assert body["graph_hash"] == echo_chain
    assert "current_node" not in body
    assert [(node["node"], node["state"]) for node in body["nodes"]] == [
        ("write", "exited"),
        ("publish", "exited"),
    ]


def test_a_suspended_runs_graph_names_its_current_node(api: Caller, operator_api: Caller) -> None:
    run_id = start(operator_api, store(api, GATED))
    drive(run_id)

    body = operator_api.get(f"/v1/runs/{run_id}/graph").json()

    assert body["current_node"] == "review"
    assert [(node["node"], node["state"]) for node in body["nodes"]] == [
        ("write", "exited"),
        ("review", "entered"),
    ]


# --- Tools and runnable validation -----------------------------------------------------------


def test_tools_lists_every_registered_tool_with_its_schemas(reader: Caller) -> None:
    response = reader.get("/v1/tools")

    assert response.status_code == 200
    tools = {tool["name"]: tool for tool in response.json()["tools"]}
    assert {"echo", "template", "pick", "merge", "score_text", "http_request"} <= set(tools)
    for tool in tools.values():
        assert set(tool) == {
            "name",
            "description",
            "effect",
            "enabled",
            "input_schema",
            "output_schema",
            "server",
        }
        assert tool["description"]
    assert tools["http_request"]["effect"] == "write"
    assert tools["http_request"]["enabled"] is False  # GATEHOUSE_HTTP_ALLOW is empty
    assert tools["template"]["input_schema"]["type"] == "object"


def test_validate_with_runnable_lists_the_names_that_do_not_resolve(reader: Caller) -> None:
    response = reader.post("/v1/graphs/validate?runnable=true", UNKNOWN_TOOLS)

    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is True
    assert [(item["code"], item["node"]) for item in body["not_runnable"]] == [
        ("unknown_tool", "first"),
        ("unknown_tool", "second"),
    ]


def test_validate_with_runnable_answers_an_empty_list_for_a_runnable_graph(
    reader: Caller,
) -> None:
    body = reader.post("/v1/graphs/validate?runnable=true", ECHO_CHAIN).json()

    assert body["valid"] is True
    assert body["not_runnable"] == []


def test_validate_with_runnable_answers_an_invalid_graph_as_before(reader: Caller) -> None:
    plain = reader.post("/v1/graphs/validate", DANGLING).json()

    body = reader.post("/v1/graphs/validate?runnable=true", DANGLING).json()

    assert body == plain
    assert body["valid"] is False
    assert "not_runnable" not in body


def test_validate_without_runnable_does_not_resolve_names(reader: Caller) -> None:
    body = reader.post("/v1/graphs/validate", UNKNOWN_TOOLS).json()

    assert body["valid"] is True
    assert "not_runnable" not in body
