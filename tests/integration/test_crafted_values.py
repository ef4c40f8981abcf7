"""Crafted values in forms and query strings: a clear answer, never a 500.

``str.isdigit()`` says yes to ``²``, then ``int()`` raises: every integer a page reads goes
through ``editor.services.numbers.strict_int`` instead, and every structured value (a card's
``scope``, JSON typed into a field) is checked before it is used.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.models import Draft, DraftRevision, Run
from editor.services import documents
from tests.integration.api.callers import make_user
from tests.integration.api.running import event_count
from tests.integration.inbox import gated, parked, waiting

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
HASH = "sha256:" + "a" * 64


def browser(user: User) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def pending_seq(run_id: str) -> str:
    return str(Run.objects.get(pk=run_id).status["pending"][0]["seq"])


# --- A user with no role -----------------------------------------------------------------------


@pytest.mark.parametrize("seen", ["²", "١", "9" * 40, "-1"])
def test_a_crafted_seen_on_the_run_fragment_is_a_bad_request(
    author: User, operator: User, seen: str
) -> None:
    run_id = waiting(author, operator)

    response = browser(make_user("nobody")).get(f"/runs/{run_id}/?seen={seen}", headers=HTMX)

    assert response.status_code == 400
    assert "`seen` must be a whole number" in response.content.decode()


@pytest.mark.parametrize(
    "fields",
    [
        {"scope": "[1]"},
        {"scope": '[["each", "²"]]'},
        {"scope": '[["each"]]'},
        {"scope": '{"a": 1}'},
        {"scope": '[["each", 99999999999999999999999]]'},
        {"seq": "²"},
        {"seq": "9" * 30},
    ],
)
def test_a_crafted_scope_or_seq_on_a_card_is_a_clear_error(
    author: User, operator: User, fields: dict[str, str]
) -> None:
    run_id = waiting(author, operator)
    before = event_count(run_id)

    response = browser(make_user("nobody")).post(
        f"/inbox/{run_id}/resolve/", {"node": "review", **fields}, headers=HTMX
    )

    assert response.status_code == 400
    assert "must be" in response.content.decode()
    assert event_count(run_id) == before


# --- The editor's forms ------------------------------------------------------------------------


@pytest.fixture
def flow(author: User) -> str:
    value = wire_value(approval_gate(HASH))
    value["nodes"].append(
        {
            "kind": "fold",
            "payload": {
                "id": "refine",
                "body": {"kind": "node", "value": "write"},
                "max_iterations": 3,
                "stop_when": "done == true",
                "join": {"kind": "last"},
            },
        }
    )
    documents.create_document(author, title="Flow", slug="flow", text=json.dumps(value))
    return "flow"


def revision() -> str:
    return str(Draft.objects.get(document__slug="flow").revision)


@pytest.mark.parametrize("value", ["²", "٣", "9" * 40])
def test_a_crafted_revision_on_an_editor_post_is_a_bad_request(
    author: User, flow: str, value: str
) -> None:
    response = browser(author).post(
        "/graphs/flow/edit/delete-edge/", {"revision": value, "edge": "0"}, headers=HTMX
    )

    assert response.status_code == 400


def test_a_crafted_edge_index_deletes_nothing(author: User, flow: str) -> None:
    before = Draft.objects.get(document__slug="flow").text

    response = browser(author).post(
        "/graphs/flow/edit/delete-edge/", {"revision": revision(), "edge": "²"}, headers=HTMX
    )

    assert response.status_code == 200
    assert Draft.objects.get(document__slug="flow").text == before


def node_post(node: str, **fields: str) -> dict[str, str]:
    return {"revision": revision(), "node": node, "id": node, **fields}


@pytest.mark.parametrize("value", ["²", "3²", "-²", "1" * 40])
def test_a_crafted_max_iterations_is_shown_beside_its_field(
    author: User, flow: str, value: str
) -> None:
    response = browser(author).post(
        "/graphs/flow/edit/node/",
        node_post(
            "refine",
            body_kind="node",
            body_node="write",
            max_iterations=value,
            stop_when="done == true",
            join_kind="last",
        ),
        headers=HTMX,
    )

    assert response.status_code == 200
    assert "a whole number from 0 to 4294967295" in response.content.decode()


@pytest.mark.parametrize("value", ["²", "100000000000"])
def test_a_crafted_case_count_is_a_clear_error_and_adds_no_cases(
    author: User, flow: str, value: str
) -> None:
    def cases() -> Any:
        draft = json.loads(Draft.objects.get(document__slug="flow").text)
        return next(node for node in draft["nodes"] if node["payload"]["id"] == "decide")[
            "payload"
        ]["cases"]

    before = cases()

    response = browser(author).post(
        "/graphs/flow/edit/node/",
        node_post("decide", on="approved", case_count=value),
        headers=HTMX,
    )

    assert response.status_code == 200
    assert "case_count" in response.content.decode()
    # The rest of the form is saved (the draft's text is formatted again); the cases are not.
    assert cases() == before


# --- The inbox's cards -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["²", "١٠", "9" * 40])
def test_a_crafted_budget_limit_is_shown_beside_its_field(
    author: User, operator: User, value: str
) -> None:
    run_id = parked(author, operator, "budget")
    before = event_count(run_id)

    response = browser(operator).post(
        f"/inbox/{run_id}/resolve/", {"node": "write", "limit": value}, headers=HTMX
    )

    assert response.status_code == 200
    assert "Enter a whole number from 1 to" in response.content.decode()
    assert event_count(run_id) == before


@pytest.mark.parametrize("value", ["²", "٠", "0" * 100 + "9"])
def test_a_crafted_choice_of_an_enum_field_is_shown_beside_its_field(
    author: User, operator: User, approver: User, value: str
) -> None:
    schema = {"type": "object", "properties": {"sel": {"enum": ["a", "b"]}}}
    run_id = waiting(author, operator, gated(schema=schema))
    before = event_count(run_id)

    response = browser(approver).post(
        f"/inbox/{run_id}/resolve/",
        {"node": "review", "seq": pending_seq(run_id), "field-sel": value},
        headers=HTMX,
    )

    assert response.status_code == 200
    assert "Choose one of the options." in response.content.decode()
    assert event_count(run_id) == before


@pytest.mark.parametrize("value", ["١٢", "1_000", "ⅷ", "nan", "Infinity", "1e999"])
def test_a_number_field_reads_only_ascii_numbers(
    author: User, operator: User, approver: User, value: str
) -> None:
    schema = {"type": "object", "properties": {"copies": {"type": "integer"}}}
    run_id = waiting(author, operator, gated(schema=schema))
    before = event_count(run_id)

    response = browser(approver).post(
        f"/inbox/{run_id}/resolve/",
        {"node": "review", "seq": pending_seq(run_id), "field-copies": value},
        headers=HTMX,
    )

    assert response.status_code == 200
    assert "Enter a number." in response.content.decode()
    assert event_count(run_id) == before


LOOSE_JSON = {
    "NaN": "NaN",
    "Infinity": '{"approved": Infinity}',
    "duplicate key": '{"approved": true, "approved": false}',
    "a lone surrogate": '{"approved": true, "note": "\\ud800"}',
}


@pytest.mark.parametrize("text", LOOSE_JSON.values(), ids=LOOSE_JSON.keys())
def test_the_json_fallback_refuses_what_strict_json_refuses(
    author: User, operator: User, approver: User, text: str
) -> None:
    run_id = waiting(author, operator, gated(schema={"type": "object"}))
    before = event_count(run_id)

    response = browser(approver).post(
        f"/inbox/{run_id}/resolve/",
        {"node": "review", "seq": pending_seq(run_id), "approval-json": text},
        headers=HTMX,
    )

    assert response.status_code == 200
    assert "This is not valid JSON" in response.content.decode()
    assert event_count(run_id) == before


@pytest.mark.parametrize("text", LOOSE_JSON.values(), ids=LOOSE_JSON.keys())
def test_a_json_field_of_a_form_refuses_what_strict_json_refuses(
    author: User, operator: User, approver: User, text: str
) -> None:
    schema = {"type": "object", "properties": {"extra": {"type": "object"}}}
    run_id = waiting(author, operator, gated(schema=schema))
    before = event_count(run_id)

    response = browser(approver).post(
        f"/inbox/{run_id}/resolve/",
        {"node": "review", "seq": pending_seq(run_id), "field-extra": text},
        headers=HTMX,
    )

    assert response.status_code == 200
    assert "This is not valid JSON" in response.content.decode()
    assert event_count(run_id) == before


@pytest.mark.parametrize("text", LOOSE_JSON.values(), ids=LOOSE_JSON.keys())
def test_record_output_refuses_what_strict_json_refuses(
    author: User, operator: User, text: str
) -> None:
    run_id = parked(author, operator, "reconciliation")
    before = event_count(run_id)

    response = browser(operator).post(
        f"/inbox/{run_id}/resolve/", {"node": "write", "output": text}, headers=HTMX
    )

    assert response.status_code == 200
    assert "This is not valid JSON" in response.content.decode()
    assert event_count(run_id) == before


# --- Found by the page fuzzer ------------------------------------------------------------------


@pytest.mark.parametrize("search", ["x" * 1024 * 1024, "fl\x00ow"], ids=["a megabyte", "a NUL"])
def test_a_search_no_title_can_match_finds_nothing(author: User, flow: str, search: str) -> None:
    response = browser(author).get("/", {"q": search})

    assert response.status_code == 200
    assert 'href="/graphs/flow/"' not in response.content.decode()


def test_a_draft_text_holding_nul_is_a_bad_request_and_is_not_saved(
    author: User, flow: str
) -> None:
    before = Draft.objects.get(document__slug="flow").text

    response = browser(author).post(
        "/graphs/flow/edit/json/", {"revision": revision(), "text": "{\x00}"}, headers=HTMX
    )

    assert response.status_code == 400
    assert "NUL (U+0000)" in response.content.decode()
    assert Draft.objects.get(document__slug="flow").text == before


@pytest.mark.parametrize("value", ["١٢", "²", "1_2", " 1 2"])
def test_a_budget_of_an_agent_reads_only_ascii_digits(author: User, value: str) -> None:
    from editor.models import AgentDefinition

    response = browser(author).post(
        "/agents/", {"name": "Writer", "model": "echo", "prompt": "Write.", "max_steps": value}
    )

    assert response.status_code == 200
    assert "Enter a whole number." in response.content.decode()
    assert not AgentDefinition.objects.exists()


def test_the_rounds_of_a_new_graph_read_only_ascii_digits(author: User) -> None:
    response = browser(author).post(
        "/new/", {"title": "Panel", "template": "blank", "max_rounds": "٣"}
    )

    assert response.status_code == 200
    assert "Enter a whole number." in response.content.decode()
    assert not Draft.objects.filter(document__title="Panel").exists()


# --- Text the history writes itself --------------------------------------------------------


def test_a_node_id_holding_nul_leaves_a_storable_summary_in_the_history(
    author: User, flow: str
) -> None:
    response = browser(author).post(
        "/graphs/flow/edit/add-node/",
        {"revision": revision(), "kind": "tool", "id": "a\x00b"},
        headers=HTMX,
    )

    assert response.status_code == 200
    latest = DraftRevision.objects.filter(document__slug="flow").latest("number")
    # PostgreSQL refuses a NUL in a text column: the summary names the node readably instead.
    assert "\x00" not in latest.summary and "\x00" not in latest.coalesce
    assert "a\ufffdb" in latest.summary


def test_a_field_holding_nul_the_editor_cannot_take_is_a_bad_request(
    author: User, flow: str
) -> None:
    before = Draft.objects.get(document__slug="flow")

    response = browser(author).post(
        "/graphs/flow/edit/node/",
        node_post("review", approval_schema='{"type": "obj\x00ect"'),
        headers=HTMX,
    )

    assert response.status_code == 400
    assert "NUL" in response.content.decode()
    after = Draft.objects.get(document__slug="flow")
    assert (after.revision, after.held) == (before.revision, before.held)
