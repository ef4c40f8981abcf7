"""``POST /v1/documents/{slug}/test-runs`` and the pins it uses (issue 24): the draft as it
is, run on a worker (driven in process here), marked as a test run; its gates its author's,
never the inbox's; writes confirmed by name or pinned; pins checked against the node's output
schema, used instead of running the node, and never by a frozen version's run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from editor.models import Run
from editor.services.inbox import pending_count
from tests.integration.api.callers import (
    DANGLING,
    Caller,
    bearer_caller,
    error_of,
    json_of,
    make_user,
)
from tests.integration.api.running import GATED, drive, events_of, run_of, start
from tests.integration.runs.fork_tools import WRITING, calls

pytestmark = pytest.mark.django_db

#: ask (echo, its output a string) → answer (echo).
TYPED = {
    "schema_version": 1,
    "nodes": [
        {
            "kind": "tool",
            "payload": {"id": "ask", "tool": "echo", "output_schema": {"type": "string"}},
        },
        {"kind": "tool", "payload": {"id": "answer", "tool": "echo"}},
    ],
    "edges": [{"from": "ask", "to": "answer"}],
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
    text = graph if isinstance(graph, str) else json.dumps(graph)
    response = api.post("/v1/documents", {"slug": slug, "title": "Trial", "text": text})
    assert response.status_code == 201, response.content
    return slug


def test_run(api: Caller, slug: str, **body: Any) -> Any:
    return api.post(f"/v1/documents/{slug}/test-runs", body)


test_run.__test__ = False  # type: ignore[attr-defined]


def test_a_test_run_runs_the_draft_on_a_worker_and_says_which_revision_it_tested(
    api: Caller,
) -> None:
    slug = document(api, TYPED)

    response = test_run(api, slug, input="hello")

    assert response.status_code == 201, response.content
    made = response.json()
    assert made["test"] == {"document": slug, "revision": 1}
    assert made["status"] == {"state": "queued"}
    assert drive(made["run"]) == "completed"
    shown = run_of(api, made["run"])
    assert shown["test"] == {"document": slug, "revision": 1}
    assert shown["status"]["output"] == "hello"
    # The draft's graph is stored like any graph, and no version was frozen for it.
    assert api.get(f"/v1/graphs/{made['graph_hash']}").status_code == 200
    assert api.get(f"/v1/documents/{slug}/versions").json()["versions"] == []


def test_a_run_of_a_frozen_graph_carries_no_test_field(api: Caller, operator: User) -> None:
    stored = api.post("/v1/graphs", TYPED).json()["graph"]
    run = start(bearer_caller(operator), stored, input="x")
    assert "test" not in run_of(api, run)


def test_an_invalid_draft_is_409_draft_invalid_naming_its_errors(api: Caller) -> None:
    slug = document(api, DANGLING)

    response = test_run(api, slug, input=1)

    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "draft_invalid"
    assert "ghost" in json.dumps(error["details"]["errors"])
    assert error["details"]["revision"] == 1
    assert not Run.objects.exists()


def test_someone_who_is_not_an_author_cannot_test_a_draft(api: Caller, reader: Caller) -> None:
    slug = document(api, TYPED)
    assert test_run(reader, slug, input="x").status_code == 403
    assert not Run.objects.exists()


def test_an_unknown_document_is_404(api: Caller) -> None:
    assert error_of(test_run(api, "nothing-here"))["code"] == "unknown_document"


def test_a_write_tool_needs_confirming_by_name_and_then_runs(api: Caller, tmp_path: Path) -> None:
    slug = document(api, WRITING)
    notes = {"calls": str(tmp_path / "calls")}

    refused = test_run(api, slug, input=notes)

    assert refused.status_code == 409
    error = error_of(refused)
    assert error["code"] == "writes_unconfirmed"
    assert error["details"]["tools"] == [{"tool": "sends", "nodes": ["send"]}]
    assert "`sends`" in error["message"]
    assert not Run.objects.exists()

    confirmed = test_run(api, slug, input=notes, confirm_writes=["sends"])
    assert confirmed.status_code == 201, confirmed.content
    assert drive(confirmed.json()["run"]) == "completed"
    assert calls(Path(notes["calls"])) == {"a": 1, "send": 1, "after": 1}


def test_a_pinned_write_is_not_called_and_needs_no_confirmation(
    api: Caller, tmp_path: Path
) -> None:
    slug = document(api, WRITING)
    notes = {"calls": str(tmp_path / "calls")}
    stub = {**notes, "sent": "pinned"}
    pinned = api.put(f"/v1/documents/{slug}/pins/send", {"output": stub})
    assert pinned.status_code == 200, pinned.content

    response = test_run(api, slug, input=notes)

    assert response.status_code == 201, response.content
    run = response.json()["run"]
    assert drive(run) == "completed"
    assert calls(Path(notes["calls"])) == {"a": 1, "after": 1}
    exited = [
        e["event"]["payload"]
        for e in events_of(api, run)
        if e["event"]["kind"] == "NodeExited" and e["event"]["payload"]["node"] == "send"
    ]
    assert exited == [{"node": "send", "output": stub, "pinned": True}]
    assert run_of(api, run)["status"]["output"] == stub


def test_a_test_runs_gate_is_its_authors_and_never_in_the_inbox(api: Caller, author: User) -> None:
    slug = document(api, GATED)
    approver_api = bearer_caller(make_user("apri", "approvers"))
    run = test_run(api, slug, input={"draft": 1}).json()["run"]
    assert drive(run) == "suspended"

    assert json_of(approver_api.get("/v1/inbox"))["items"] == []
    assert pending_count() == 0
    # The approver is not the one to decide it: its author is.
    refused = approver_api.post(f"/v1/runs/{run}/resume", {"input": {"approved": True}})
    assert refused.status_code == 403
    decided = api.post(f"/v1/runs/{run}/resume", {"input": {"approved": True}})
    assert decided.status_code == 202, decided.content
    assert drive(run) == "completed"


def test_test_runs_are_listed_only_under_the_test_filter(api: Caller, operator: User) -> None:
    slug = document(api, TYPED)
    tested = test_run(api, slug, input="t").json()["run"]
    stored = api.post("/v1/graphs", TYPED).json()["graph"]
    ordinary = start(bearer_caller(operator), stored, input="o")

    default = [run["run"] for run in json_of(api.get("/v1/runs"))["runs"]]
    tests = [run["run"] for run in json_of(api.get("/v1/runs?test=true"))["runs"]]
    listed = [run["run"] for run in api.get(f"/v1/documents/{slug}/test-runs").json()["runs"]]

    assert default == [ordinary]
    assert tests == [tested]
    assert listed == [tested]
    assert error_of(api.get("/v1/runs?test=maybe"))["details"] == {"field": "test"}


def test_a_pin_that_breaks_its_nodes_output_schema_is_400_naming_the_node(api: Caller) -> None:
    slug = document(api, TYPED)

    response = api.put(f"/v1/documents/{slug}/pins/ask", {"output": 42})

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_pin"
    assert error["details"] == {"node": "ask"}
    assert "ask" in error["message"]
    assert "string" in error["message"]
    assert api.get(f"/v1/documents/{slug}/pins").json()["pins"] == []


def test_a_pin_of_a_node_the_draft_has_not_is_400(api: Caller) -> None:
    slug = document(api, TYPED)
    error = error_of(api.put(f"/v1/documents/{slug}/pins/ghost", {"output": "x"}))
    assert error["code"] == "invalid_pin"
    assert error["details"] == {"node": "ghost"}


def test_a_pin_taken_from_a_test_runs_result_is_used_by_the_next_and_not_by_a_frozen_run(
    api: Caller, operator: User
) -> None:
    slug = document(api, TYPED)
    first = test_run(api, slug, input="from the run").json()["run"]
    assert drive(first) == "completed"

    pinned = api.put(f"/v1/documents/{slug}/pins/ask", {"from_run": first})
    assert pinned.status_code == 200, pinned.content
    assert pinned.json()["output"] == "from the run"
    assert pinned.json()["from_run"] == first

    second = test_run(api, slug, input="new input").json()["run"]
    assert drive(second) == "completed"
    assert run_of(api, second)["status"]["output"] == "from the run"

    frozen = api.post(f"/v1/documents/{slug}/freeze", headers={"If-Match": '"1"'})
    assert frozen.status_code == 201, frozen.content
    ordinary = start(bearer_caller(operator), frozen.json()["graph"], input="frozen")
    assert drive(ordinary) == "completed"
    assert run_of(api, ordinary)["status"]["output"] == "frozen"


def test_pins_are_cleared_one_or_all_and_never_change_the_graphs_hash(api: Caller) -> None:
    slug = document(api, TYPED)
    before = test_run(api, slug, input="a", pins={}).json()["graph_hash"]
    api.put(f"/v1/documents/{slug}/pins", {"pins": {"ask": "one", "answer": {"two": 2}}})
    assert [pin["node"] for pin in api.get(f"/v1/documents/{slug}/pins").json()["pins"]] == [
        "answer",
        "ask",
    ]
    assert test_run(api, slug, input="a").json()["graph_hash"] == before

    assert api.delete(f"/v1/documents/{slug}/pins/ask").json() == {"cleared": 1}
    assert error_of(api.get(f"/v1/documents/{slug}/pins/ask"))["code"] == "not_pinned"
    assert api.get(f"/v1/documents/{slug}/pins/answer").json()["output"] == {"two": 2}
    assert api.delete(f"/v1/documents/{slug}/pins").json() == {"cleared": 1}
    assert api.get(f"/v1/documents/{slug}/pins").json()["pins"] == []


def test_pins_given_with_a_test_run_are_checked_too(api: Caller) -> None:
    slug = document(api, TYPED)
    error = error_of(test_run(api, slug, input="a", pins={"ask": ["no"]}))
    assert error["code"] == "invalid_pin"
    assert not Run.objects.exists()
