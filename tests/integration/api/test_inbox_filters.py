"""The inbox's filters in ``GET /v1/inbox`` and ``GET /v1/inbox/resolved``, which keep what
the cards show (``docs/inbox.md``), and the decision log's stable cursor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User

from editor.models import Run
from tests.integration.api.callers import Caller, bearer_caller, error_of, make_user
from tests.integration.api.running import resume
from tests.integration.inbox import frozen, gated, waiting

pytestmark = pytest.mark.django_db

TODAY = datetime.now(UTC).date()


@pytest.fixture
def operator(db: None) -> User:
    return make_user("otto", "operators")


def get(caller: Caller, path: str, params: dict[str, Any]) -> Any:
    return caller.get(f"{path}?{urlencode(params)}")


def runs_of(caller: Caller, path: str, **params: str) -> list[str]:
    response = get(caller, path, params)
    assert response.status_code == 200, response.content
    return [item["run"] for item in response.json()["items"]]


def approve(approver: User, run_id: str, comment: str | None = None) -> None:
    body: dict[str, Any] = {"input": {"approved": True}}
    if comment is not None:
        body["comment"] = comment
    assert resume(bearer_caller(approver), run_id, body).status_code == 202


def test_a_document_keeps_the_runs_started_from_its_graph_hash_whose_items_show_it(
    reader: Caller, author: User, operator: User, approver: User
) -> None:
    slug, digest = frozen(author, gated(), title="Release notes")
    from_document = waiting(author, operator, graph_hash=digest, document=slug)
    from_hash = waiting(author, operator, graph_hash=digest)  # through the API: no document
    # A second document freezing the same graph later: cards keep naming the first one.
    later, same = frozen(author, gated(), title="Copy")
    assert same == digest
    elsewhere = waiting(author, operator, gated(publish="ship"))

    items = get(reader, "/v1/inbox", {"document": slug}).json()["items"]

    assert [item["run"] for item in items] == [from_document, from_hash]
    assert {item["document"] for item in items} == {slug}
    assert runs_of(reader, "/v1/inbox", document=later) == []
    assert elsewhere not in runs_of(reader, "/v1/inbox", document=slug)

    approve(approver, from_hash)
    decided = get(reader, "/v1/inbox/resolved", {"document": slug}).json()["items"]
    assert [(item["run"], item["document"]) for item in decided] == [(from_hash, slug)]
    assert runs_of(reader, "/v1/inbox/resolved", document=later) == []


def test_pending_items_filter_by_node_person_day_and_prompt(
    reader: Caller, author: User, operator: User
) -> None:
    other_operator = make_user("olive", "operators")
    first = waiting(author, operator, gated(prompt="Publish the **spring** notes?"))
    second = waiting(author, other_operator, gated(prompt="Archive them?", publish="ship"))
    renamed = gated(prompt="Publish?")
    renamed["nodes"][1]["payload"]["id"] = "check"
    renamed["edges"] = [{"from": "write", "to": "check"}, {"from": "check", "to": "publish"}]
    third = waiting(author, operator, renamed)
    yesterday, tomorrow = TODAY - timedelta(days=1), TODAY + timedelta(days=1)

    assert runs_of(reader, "/v1/inbox", node="check") == [third]
    assert runs_of(reader, "/v1/inbox", node="review") == [first, second]
    assert runs_of(reader, "/v1/inbox", person="olive") == [second]
    assert runs_of(reader, "/v1/inbox", q="SPRING") == [first]
    assert runs_of(reader, "/v1/inbox", q="publish", person="otto") == [first, third]
    assert runs_of(reader, "/v1/inbox", **{"from": str(TODAY), "to": str(TODAY)}) == [
        first,
        second,
        third,
    ]
    assert runs_of(reader, "/v1/inbox", **{"from": str(tomorrow)}) == []
    assert runs_of(reader, "/v1/inbox", to=str(yesterday)) == []


def test_decisions_filter_by_graph_node_person_day_and_comment_or_prompt(
    reader: Caller, author: User, operator: User, approver: User
) -> None:
    bea = make_user("bea", "approvers")
    first = waiting(author, operator, gated(prompt="Ship the *autumn* catalogue?"))
    second = waiting(author, operator, gated(prompt="Archive?", publish="ship"))
    third = waiting(author, operator, gated(prompt="Archive?", publish="ship"))
    approve(approver, first, "Checked the prices")
    approve(bea, second, "Fine by me")
    approve(approver, third)
    second_graph = Run.objects.get(pk=second).graph_id

    assert runs_of(reader, "/v1/inbox/resolved", graph=second_graph) == [third, second]
    assert runs_of(reader, "/v1/inbox/resolved", person="bea") == [second]
    assert runs_of(reader, "/v1/inbox/resolved", node="review", person="april") == [third, first]
    assert runs_of(reader, "/v1/inbox/resolved", node="nope") == []
    assert runs_of(reader, "/v1/inbox/resolved", q="prices") == [first]  # the comment
    assert runs_of(reader, "/v1/inbox/resolved", q="AUTUMN") == [first]  # the prompt
    assert runs_of(reader, "/v1/inbox/resolved", q="archive") == [third, second]
    assert runs_of(reader, "/v1/inbox/resolved", **{"from": str(TODAY)}) == [third, second, first]
    assert runs_of(reader, "/v1/inbox/resolved", to=str(TODAY - timedelta(days=1))) == []


def test_a_page_of_decisions_stays_the_same_when_new_decisions_are_made(
    reader: Caller, author: User, operator: User, approver: User
) -> None:
    waiting_runs = [waiting(author, operator) for _ in range(5)]
    for run_id in waiting_runs[:4]:
        approve(approver, run_id)

    first = get(reader, "/v1/inbox/resolved", {"limit": 2}).json()
    approve(approver, waiting_runs[4])  # a new decision, newest of all
    second = get(reader, "/v1/inbox/resolved", {"limit": 2, "cursor": first["next"]}).json()

    assert [item["run"] for item in first["items"]] == waiting_runs[3:1:-1]
    assert [item["run"] for item in second["items"]] == waiting_runs[1::-1]
    assert second["next"] is None


@pytest.mark.parametrize("path", ["/v1/inbox", "/v1/inbox/resolved"])
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "2026-1-5"}, "from"),
        ({"to": "2026-02-30"}, "to"),
        ({"from": "２０２６-01-05"}, "from"),
        ({"from": "2026-03-02", "to": "2026-03-01"}, "from"),
        ({"q": "x" * 201}, "q"),
        ({"node": "n" * 201}, "node"),
    ],
)
def test_a_filter_that_cannot_be_read_is_400_naming_it(
    reader: Caller, path: str, params: dict[str, str], field: str
) -> None:
    response = get(reader, path, params)

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert error["details"] == {"field": field}
    assert f"`{field}`" in error["message"]


def test_one_runs_items_and_decisions_are_kept_by_its_id(
    reader: Caller, author: User, operator: User, approver: User
) -> None:
    first = waiting(author, operator)
    second = waiting(author, operator)
    approve(approver, second)

    assert runs_of(reader, "/v1/inbox", run=first) == [first]
    assert runs_of(reader, "/v1/inbox/resolved", run=second) == [second]
    assert runs_of(reader, "/v1/inbox/resolved", run=first) == []
    refused = get(reader, "/v1/inbox", {"run": "not-a-run"})
    assert refused.status_code == 400 and error_of(refused)["details"] == {"field": "run"}
