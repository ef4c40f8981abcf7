"""The node form's schema builder without JavaScript: a gate's approval form, a node's input
and output schemas built as a list of fields through plain form posts (buttons included),
what it cannot show kept as JSON and said so, and what cannot be read held back."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.models import Draft
from editor.services import documents
from tests.integration.forms import PageForm, page_form

pytestmark = pytest.mark.django_db

HASH = "sha256:" + "a" * 64


@pytest.fixture
def graph(author: User) -> str:
    text = json.dumps(wire_value(approval_gate(HASH)), indent=2) + "\n"
    documents.create_document(author, title="Approval flow", slug="flow", text=text)
    return "flow"


def draft() -> Draft:
    return Draft.objects.get(document__slug="flow")


def payload(node_id: str) -> dict[str, Any]:
    nodes = json.loads(draft().text)["nodes"]
    return next(node["payload"] for node in nodes if node["payload"]["id"] == node_id)


def node_form(client: Client, node_id: str) -> PageForm:
    page = client.get(f"/graphs/flow/?node={node_id}")
    assert page.status_code == 200
    return page_form(page.content.decode(), "node-form")


def post(client: Client, form: PageForm, press: tuple[str, str] | None = None) -> str:
    answer = client.post(form.action, form.post_data(press), follow=True)
    assert answer.status_code == 200
    return answer.content.decode()


def test_a_new_gate_asks_to_approve_or_reject_with_a_comment(
    author_client: Client, graph: str
) -> None:
    answer = author_client.post(
        "/graphs/flow/edit/add-node/",
        {"revision": str(draft().revision), "kind": "gate", "id": "check"},
    )
    assert answer.status_code == 302
    form = node_form(author_client, "check")

    assert form["approval_schema-mode"] == "fields"
    assert [form["approval_schema-0-name"], form["approval_schema-1-name"]] == [
        "approved",
        "comment",
    ]
    assert form["approval_schema-0-type"] == "boolean"
    assert form["approval_schema-0-required"] == "on"
    assert "approval_schema" not in form  # no JSON box to fill in


def add_gate(client: Client) -> None:
    data = {"revision": str(draft().revision), "kind": "gate", "id": "check"}
    assert client.post("/graphs/flow/edit/add-node/", data).status_code == 302


def test_three_fields_are_built_with_buttons_and_boxes_alone(
    author_client: Client, graph: str
) -> None:
    add_gate(author_client)
    form = node_form(author_client, "check")

    page = post(author_client, form, ("approval_schema-add", "1"))
    form = page_form(page, "node-form")
    assert form["approval_schema-2-name"] == "field3"
    # The new row's name takes the focus, without JavaScript too.
    assert re.search(r'<input id="f-approval_schema-2-name" [^>]* autofocus>', page)
    form.set("approval_schema-2-name", "amount")
    form.set("approval_schema-2-title", "Amount (EUR)")
    form.set("approval_schema-2-type", "number")
    form.set("approval_schema-2-required", "on")
    post(author_client, form)

    assert payload("check")["approval_schema"] == {
        "type": "object",
        "properties": {
            "amount": {"type": "number", "title": "Amount (EUR)"},
            "approved": {"type": "boolean", "title": "Approve"},
            "comment": {"type": "string", "title": "Comment"},
        },
        "required": ["approved", "amount"],
    }
    form = node_form(author_client, "check")
    # Drawn again with the number's own parts: its bounds.
    form.set("approval_schema-1-minimum", "0")
    form.set("approval_schema-1-maximum", "5000")
    post(author_client, form)
    assert payload("check")["approval_schema"]["properties"]["amount"] == {
        "type": "number",
        "title": "Amount (EUR)",
        "minimum": 0,
        "maximum": 5000,
    }


def test_fields_move_and_are_removed_and_the_order_is_the_approvers(
    author_client: Client, graph: str
) -> None:
    add_gate(author_client)
    form = node_form(author_client, "check")
    form = page_form(post(author_client, form, ("approval_schema-add", "1")), "node-form")
    form.set("approval_schema-2-name", "reason")
    form = page_form(post(author_client, form), "node-form")
    assert ("approval_schema-up", "1") not in form.buttons  # the first optional field

    form = page_form(post(author_client, form, ("approval_schema-up", "2")), "node-form")
    assert [form["approval_schema-1-name"], form["approval_schema-2-name"]] == ["reason", "comment"]
    properties = payload("check")["approval_schema"]["properties"]
    assert properties["reason"]["x-order"] < properties["comment"]["x-order"]

    form = page_form(post(author_client, form, ("approval_schema-remove", "2")), "node-form")
    assert payload("check")["approval_schema"]["properties"].keys() == {"approved", "reason"}


def test_posting_the_form_unchanged_leaves_every_schema_byte_for_byte(
    author_client: Client, graph: str
) -> None:
    text, revision = draft().text, draft().revision
    for node_id in ("write", "review", "publish"):
        post(author_client, node_form(author_client, node_id))
    assert (draft().text, draft().revision) == (text, revision)


def test_a_schema_the_fields_cannot_show_is_kept_as_json_and_said_so(
    author_client: Client, graph: str
) -> None:
    value = json.loads(draft().text)
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"ok": {"type": "boolean"}},
    }
    value["nodes"][1]["payload"]["approval_schema"] = schema
    Draft.objects.filter(document__slug="flow").update(text=json.dumps(value, indent=2))

    page = author_client.get("/graphs/flow/?node=review").content.decode()
    form = page_form(page, "node-form")

    assert form["approval_schema-mode"] == "json"
    assert "it uses `additionalProperties`, which the fields cannot show" in page
    form.set("prompt", "Still fine?")
    post(author_client, form)
    assert payload("review")["approval_schema"] == schema
    assert payload("review")["prompt"] == "Still fine?"


def test_json_is_there_when_asked_for_and_fields_again_after(
    author_client: Client, graph: str
) -> None:
    form = node_form(author_client, "review")
    form.set("approval_schema-mode", "json")
    page = post(author_client, form)
    form = page_form(page, "node-form")
    assert json.loads(form["approval_schema"]) == payload("review")["approval_schema"]

    form.set("approval_schema", '{"type": "object", "properties": {"ok": {"type": "boolean"}}}')
    form.set("approval_schema-mode", "fields")
    form = page_form(post(author_client, form), "node-form")
    assert form["approval_schema-mode"] == "fields"
    assert form["approval_schema-0-name"] == "ok"


def test_an_optional_schema_starts_unset_and_a_field_sets_it(
    author_client: Client, graph: str
) -> None:
    form = node_form(author_client, "write")
    assert form["output_schema-mode"] == "unset"
    assert "output_schema" not in payload("write")

    form = page_form(post(author_client, form, ("output_schema-add", "1")), "node-form")
    assert payload("write")["output_schema"] == {
        "type": "object",
        "properties": {"field1": {"type": "string"}},
    }
    form.set("output_schema-mode", "unset")
    post(author_client, form)
    assert "output_schema" not in payload("write")


def test_a_field_that_cannot_be_read_is_held_back_as_typed_and_blocks_freezing(
    author_client: Client, graph: str
) -> None:
    before = payload("review")["approval_schema"]
    form = node_form(author_client, "review")
    # draft, approved (required), then comment
    form.set("approval_schema-2-type", "number")
    form.set("approval_schema-2-default", "lots")
    page = post(author_client, form)

    assert payload("review")["approval_schema"] == before
    assert "freeze is blocked" in page
    assert "Approval form was not saved: it has fields that need fixing" in page
    form = page_form(page, "node-form")
    assert form["approval_schema-2-default"] == "lots"  # shown as typed

    form.set("approval_schema-2-default", "12")
    page = post(author_client, form)
    assert payload("review")["approval_schema"]["properties"]["comment"] == {
        "type": "number",
        "default": 12,
    }
    assert "freeze is blocked" not in page
    assert draft().held == []
