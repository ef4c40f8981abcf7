"""**Execute this node** (``POST /v1/documents/{slug}/test-runs`` with ``node``) and **Test from
here** (``POST /v1/documents/{slug}/test-runs/fork``), issue 24: one node of the draft run alone
with the input it received last (or a typed one), and the draft run from a node of an earlier
test run, with the reference's fork rules."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from editor.models import Run
from tests.integration.api.callers import Caller, bearer_caller, error_of, make_user
from tests.integration.api.running import drive, events_of, run_of
from tests.integration.runs.fork_tools import WRITING, calls

pytestmark = pytest.mark.django_db

#: ask (echo) → shape (echo; its input an object with a string `text`) → answer (echo).
CHAIN = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "ask", "tool": "echo"}},
        {
            "kind": "tool",
            "payload": {
                "id": "shape",
                "tool": "echo",
                "input_schema": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
            },
        },
        {"kind": "tool", "payload": {"id": "answer", "tool": "echo"}},
    ],
    "edges": [{"from": "ask", "to": "shape"}, {"from": "shape", "to": "answer"}],
}


@pytest.fixture(autouse=True)
def fork_tools(settings: Any) -> Iterator[None]:
    from editor.services.installation import tools

    settings.GATEHOUSE_TOOL_MODULES = ["tests.integration.runs.fork_tools"]
    tools.cache_clear()
    try:
        yield
    finally:
        tools.cache_clear()


def document(api: Caller, graph: Any, slug: str = "trial") -> str:
    response = api.post(
        "/v1/documents", {"slug": slug, "title": "Trial", "text": json.dumps(graph)}
    )
    assert response.status_code == 201, response.content
    return slug


def save(api: Caller, slug: str, graph: Any) -> None:
    revision = api.get(f"/v1/documents/{slug}/draft").json()["revision"]
    saved = api.put(
        f"/v1/documents/{slug}/draft",
        {"text": json.dumps(graph)},
        headers={"If-Match": f'"{revision}"'},
    )
    assert saved.status_code == 200, saved.content


def rested_test_run(api: Caller, slug: str, **body: Any) -> str:
    """A test run started and driven to rest; its id."""
    response = api.post(f"/v1/documents/{slug}/test-runs", body)
    assert response.status_code == 201, response.content
    run: str = response.json()["run"]
    drive(run)
    return run


def nodes_run(api: Caller, run: str) -> list[str]:
    """The nodes that ran for real (entered past what a fork replays), in order."""
    envelopes = events_of(api, run)
    forked = envelopes[0]["event"]["payload"].get("forked_from")
    through = forked["through_seq"] if forked else -1
    return [
        e["event"]["payload"]["node"]
        for e in envelopes
        if e["event"]["kind"] == "NodeEntered" and e["seq"] > through
    ]


# --- Execute this node --------------------------------------------------------------------


def test_executing_a_node_runs_it_alone_with_the_input_it_received_in_the_last_test_run(
    api: Caller,
) -> None:
    slug = document(api, CHAIN)
    rested_test_run(api, slug, input={"text": "first"})

    response = api.post(f"/v1/documents/{slug}/test-runs", {"node": "shape"})

    assert response.status_code == 201, response.content
    made = response.json()
    assert made["test"] == {"document": slug, "revision": 1, "node": "shape"}
    assert drive(made["run"]) == "completed"
    assert nodes_run(api, made["run"]) == ["shape"]
    assert run_of(api, made["run"])["status"]["output"] == {"text": "first"}


def test_executing_a_node_with_a_typed_input_checks_it_against_the_nodes_input_schema(
    api: Caller,
) -> None:
    slug = document(api, CHAIN)

    refused = api.post(f"/v1/documents/{slug}/test-runs", {"node": "shape", "input": {"x": 1}})

    assert refused.status_code == 400
    error = error_of(refused)
    assert "shape" in error["message"]
    assert "text" in error["message"]
    assert error["details"] == {"field": "input"}
    assert not Run.objects.exists()

    typed = api.post(f"/v1/documents/{slug}/test-runs", {"node": "shape", "input": {"text": "t"}})
    assert typed.status_code == 201, typed.content
    assert drive(typed.json()["run"]) == "completed"


def test_executing_a_node_no_test_run_reached_needs_a_typed_input(api: Caller) -> None:
    slug = document(api, CHAIN)
    error = error_of(api.post(f"/v1/documents/{slug}/test-runs", {"node": "answer"}))
    assert "no test run" in error["message"]
    assert "answer" in error["message"]
    # null is an input like any other: given, it is used.
    given = api.post(f"/v1/documents/{slug}/test-runs", {"node": "answer", "input": None})
    assert given.status_code == 201, given.content


def test_a_node_runs_alone_while_the_rest_of_the_draft_is_unfinished(api: Caller) -> None:
    unfinished = {
        **CHAIN,
        "edges": [*CHAIN["edges"], {"from": "answer", "to": "ghost"}],
    }
    slug = document(api, unfinished)
    assert api.post(f"/v1/documents/{slug}/test-runs", {"input": 1}).status_code == 409

    response = api.post(f"/v1/documents/{slug}/test-runs", {"node": "ask", "input": 1})

    assert response.status_code == 201, response.content


def test_a_branch_or_an_unknown_node_cannot_run_alone(api: Caller) -> None:
    branching = {
        "schema_version": 1,
        "nodes": [
            {
                "kind": "branch",
                "payload": {
                    "id": "pick",
                    "cases": [{"name": "yes", "when": {"kind": "expression", "value": "true"}}],
                },
            },
            {"kind": "tool", "payload": {"id": "done", "tool": "echo"}},
        ],
        "edges": [{"from": "pick", "to": "done", "label": "yes"}],
    }
    slug = document(api, branching)
    branch = error_of(api.post(f"/v1/documents/{slug}/test-runs", {"node": "pick", "input": 1}))
    assert "branch" in branch["message"]
    ghost = error_of(api.post(f"/v1/documents/{slug}/test-runs", {"node": "ghost", "input": 1}))
    assert "ghost" in ghost["message"]
    assert ghost["details"] == {"field": "node"}
    assert not Run.objects.exists()


def test_executing_a_write_node_needs_its_tool_confirmed(api: Caller, tmp_path: Path) -> None:
    slug = document(api, WRITING)
    notes = {"calls": str(tmp_path / "calls")}

    refused = api.post(f"/v1/documents/{slug}/test-runs", {"node": "send", "input": notes})

    assert refused.status_code == 409
    assert error_of(refused)["code"] == "writes_unconfirmed"
    confirmed = api.post(
        f"/v1/documents/{slug}/test-runs",
        {"node": "send", "input": notes, "confirm_writes": ["sends"]},
    )
    assert confirmed.status_code == 201, confirmed.content
    assert drive(confirmed.json()["run"]) == "completed"
    assert calls(Path(notes["calls"])) == {"send": 1}


def test_pins_do_not_apply_to_a_node_run_alone(api: Caller) -> None:
    slug = document(api, CHAIN)
    response = api.post(f"/v1/documents/{slug}/test-runs", {"node": "ask", "input": 1, "pins": {}})
    assert response.status_code == 400
    assert "pins" in error_of(response)["message"]


# --- Test from here -----------------------------------------------------------------------


def test_testing_from_a_node_replays_the_nodes_before_it_and_runs_the_draft_from_it(
    api: Caller,
) -> None:
    slug = document(api, CHAIN)
    first = rested_test_run(api, slug, input={"text": "kept"})
    changed = json.loads(json.dumps(CHAIN))
    changed["nodes"][2]["payload"]["input"] = {"said": "text"}
    save(api, slug, changed)

    response = api.post(f"/v1/documents/{slug}/test-runs/fork", {"from_node": "shape"})

    assert response.status_code == 201, response.content
    child = response.json()
    assert child["test"] == {"document": slug, "revision": 2}
    assert child["forked_from"]["run_id"] == first
    assert child["forked_from"]["from_node"] == "shape"
    assert child["graph_hash"] != run_of(api, first)["graph_hash"]
    assert drive(child["run"]) == "completed"
    assert nodes_run(api, child["run"]) == ["shape", "answer"]
    assert run_of(api, child["run"])["status"]["output"] == {"said": "kept"}


def test_a_dry_run_says_what_the_fork_would_run_again_and_creates_nothing(
    api: Caller, tmp_path: Path
) -> None:
    slug = document(api, WRITING)
    notes = {"calls": str(tmp_path / "calls")}
    first = rested_test_run(api, slug, input=notes, confirm_writes=["sends"])
    before = Run.objects.count()

    preview = api.post(
        f"/v1/documents/{slug}/test-runs/fork", {"from_node": "send", "dry_run": True}
    )

    assert preview.status_code == 200, preview.content
    shown = preview.json()
    assert shown["origin"] == first
    assert [write["tool"] for write in shown["writes"]] == ["sends"]
    assert shown["unacknowledged_writes"] == [shown["writes"][0]["seq"]]
    assert shown["would_proceed"] is False
    assert shown["revision"] == 1
    assert Run.objects.count() == before

    hazard = api.post(f"/v1/documents/{slug}/test-runs/fork", {"from_node": "send"})
    assert hazard.status_code == 409
    error = error_of(hazard)
    assert error["code"] == "write_replay_hazard"
    assert [write["tool"] for write in error["details"]["writes"]] == ["sends"]
    assert Run.objects.count() == before

    acknowledged = api.post(
        f"/v1/documents/{slug}/test-runs/fork",
        {"from_node": "send", "acknowledge_writes": shown["unacknowledged_writes"]},
    )
    assert acknowledged.status_code == 201, acknowledged.content
    assert drive(acknowledged.json()["run"]) == "completed"
    assert calls(Path(notes["calls"])) == {"a": 1, "send": 2, "after": 2}


def test_testing_from_a_node_no_test_run_entered_is_400_invalid_fork_node(api: Caller) -> None:
    slug = document(api, CHAIN)
    no_run = api.post(f"/v1/documents/{slug}/test-runs/fork", {"from_node": "shape"})
    assert no_run.status_code == 400
    assert error_of(no_run)["code"] == "invalid_fork_node"
    rested_test_run(api, slug, input={"text": "x"})
    ghost = api.post(f"/v1/documents/{slug}/test-runs/fork", {"from_node": "ghost"})
    assert error_of(ghost)["code"] == "invalid_fork_node"
    assert error_of(ghost)["details"] == {"node": "ghost"}


def test_testing_from_here_is_an_authors_and_only_of_this_documents_runs(api: Caller) -> None:
    slug = document(api, CHAIN)
    other = document(api, CHAIN, slug="other")
    theirs = rested_test_run(api, other, input={"text": "x"})
    rested_test_run(api, slug, input={"text": "y"})

    elsewhere = api.post(
        f"/v1/documents/{slug}/test-runs/fork", {"from_node": "shape", "from_run": theirs}
    )
    assert elsewhere.status_code == 400
    assert error_of(elsewhere)["details"] == {"field": "from_run"}
    reader = bearer_caller(make_user("rita"))
    refused = reader.post(f"/v1/documents/{slug}/test-runs/fork", {"from_node": "shape"})
    assert refused.status_code == 403


def test_testing_from_here_needs_the_draft_valid(api: Caller) -> None:
    slug = document(api, CHAIN)
    rested_test_run(api, slug, input={"text": "x"})
    save(api, slug, {**CHAIN, "edges": [*CHAIN["edges"], {"from": "answer", "to": "ghost"}]})

    response = api.post(f"/v1/documents/{slug}/test-runs/fork", {"from_node": "shape"})

    assert response.status_code == 409
    assert error_of(response)["code"] == "draft_invalid"


def test_executing_a_map_runs_its_body_node_with_it(api: Caller) -> None:
    mapped = {
        "schema_version": 1,
        "nodes": [
            {"kind": "tool", "payload": {"id": "first", "tool": "echo"}},
            {
                "kind": "map",
                "payload": {
                    "id": "fan",
                    "over": "items",
                    "concurrency": 1,
                    "body": {"kind": "node", "value": "each"},
                },
            },
            {"kind": "tool", "payload": {"id": "each", "tool": "echo"}},
        ],
        "edges": [{"from": "first", "to": "fan"}],
    }
    slug = document(api, mapped)

    response = api.post(
        f"/v1/documents/{slug}/test-runs", {"node": "fan", "input": {"items": [1, 2]}}
    )

    assert response.status_code == 201, response.content
    run = response.json()["run"]
    assert drive(run) == "completed"
    assert nodes_run(api, run)[0] == "fan"
    assert "first" not in nodes_run(api, run)
    assert run_of(api, run)["status"]["output"] == [1, 2]
