"""Resolving a gate whose recorded schema cannot be evaluated (issue 11): the graph was stored
before validation refused such schemas, so the run reached the gate. Every resume must answer
with a clear ``400`` that names the problem, record nothing, and reach nothing outside.
Storing such a graph today is refused at validation."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from editor.graph import parse_document
from editor.services.documents.graphs import save_graph
from tests.integration.api.callers import Caller, bearer_caller, error_of
from tests.integration.api.running import GATED, drive, event_count, resume, run_of, start
from tests.outside_world import SECRET, CountingServer, counting_server, secret_file

__all__ = ["counting_server", "secret_file"]  # fixtures used here

pytestmark = pytest.mark.django_db


def gated_with(approval_schema: dict[str, Any]) -> dict[str, Any]:
    graph = copy.deepcopy(GATED)
    graph["nodes"][1]["payload"]["approval_schema"] = approval_schema
    return graph


def stored_before_the_check(graph: dict[str, Any]) -> str:
    """Store ``graph`` as an older release did: parsed, never validated."""
    return save_graph(parse_document(json.dumps(graph))).graph


def suspended_at(operator: User, graph: dict[str, Any]) -> str:
    run_id = start(bearer_caller(operator), stored_before_the_check(graph), input={"d": 1})
    assert drive(run_id) == "suspended"
    return run_id


@pytest.mark.parametrize(
    ("schema", "names"),
    [
        ({"$ref": "#/$defs/missing"}, "points to no schema"),
        ({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}, "leads back to itself"),
        ({"properties": {"approved": {"pattern": r"(a)\1"}}}, "no backreferences"),
    ],
    ids=["dangling", "recursive", "backreference"],
)
def test_resolving_a_gate_whose_schema_cannot_be_evaluated_is_a_clear_400(
    operator: User, approver: User, schema: dict[str, Any], names: str
) -> None:
    run_id = suspended_at(operator, gated_with(schema))
    before = event_count(run_id)

    response = resume(bearer_caller(approver), run_id, {"input": {"approved": True}})

    assert response.status_code == 400
    violations = error_of(response)["details"]["violations"]
    assert len(violations) == 1
    assert violations[0]["path"] == "$"
    assert violations[0]["message"].startswith("the schema cannot be used: ")
    assert names in violations[0]["message"]
    assert event_count(run_id) == before
    assert run_of(bearer_caller(operator), run_id)["status"]["state"] == "suspended"


def test_resolving_a_gate_with_a_remote_reference_fetches_nothing(
    operator: User, approver: User, counting_server: CountingServer, secret_file: Any
) -> None:
    schema = {
        "properties": {
            "approved": {"$ref": f"{counting_server.url}/x.json"},
            "note": {"$ref": secret_file.as_uri()},
        }
    }
    run_id = suspended_at(operator, gated_with(schema))

    response = resume(bearer_caller(approver), run_id, {"input": {"approved": True}})

    assert response.status_code == 400
    [violation] = error_of(response)["details"]["violations"]
    assert "only local `#…` references are allowed" in violation["message"]
    assert SECRET not in json.dumps(response.json(), ensure_ascii=False)
    assert counting_server.hits == []


def test_storing_a_graph_with_such_a_schema_is_refused(api: Caller) -> None:
    response = api.post("/v1/graphs", gated_with({"$ref": "#/$defs/missing"}))

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_graph"
    codes = [problem["code"] for problem in error["details"]["errors"]]
    assert codes == ["schema_reference_dangling"]


def test_the_inbox_card_of_such_a_gate_shows_the_reason_and_records_nothing(
    client: Any, operator: User, approver: User
) -> None:
    from editor.models import Run

    schema = {
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "x": {"$ref": "#/$defs/missing"}},
    }
    run_id = suspended_at(operator, gated_with(schema))
    before = event_count(run_id)
    seq = str(Run.objects.get(pk=run_id).status["pending"][0]["seq"])
    client.force_login(approver)

    page = client.get("/inbox/")
    response = client.post(
        f"/inbox/{run_id}/resolve/",
        {"node": "review", "seq": seq, "field-approved": "true"},
        headers={"HX-Request": "true"},
    )

    assert page.status_code == 200
    assert response.status_code == 200
    assert "the schema cannot be used: it has a reference `#/$defs/missing`" in (
        response.content.decode()
    )
    assert event_count(run_id) == before
