"""A run's input as a form generated from the entry nodes' input schema (issue 25): **Start run**
on a frozen graph's page and the editor's **Test run**, each with the JSON beside the fields."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.models import Run
from editor.services import documents
from editor.services.documents import graphs
from tests.integration.forms import page_form

pytestmark = pytest.mark.django_db

SCHEMA = {
    "type": "object",
    "properties": {
        "topic": {"type": "string", "title": "Topic", "default": "tea"},
        "copies": {"type": "integer", "title": "Copies", "maximum": 3},
        "urgent": {"type": "boolean", "title": "Urgent"},
    },
    "required": ["topic"],
}
GRAPH = {
    "schema_version": 1,
    "nodes": [{"kind": "tool", "payload": {"id": "write", "tool": "echo", "input_schema": SCHEMA}}],
    "edges": [],
}


@pytest.fixture
def digest(author: User) -> str:
    return graphs.store_graph(author, json.dumps(GRAPH)).graph


@pytest.fixture
def operator_client(client: Client, operator: User) -> Client:
    client.force_login(operator)
    return client


def test_start_run_is_a_form_of_the_entry_nodes_fields_and_starts_with_what_it_means(
    operator_client: Client, digest: str
) -> None:
    page = operator_client.get(f"/g/{digest[7:]}/").content.decode()
    form = page_form(page, "start-run-form")

    assert form["field-topic"] == "tea"  # proposed by the schema's default
    assert 'id="start-input-json"' in page  # the JSON is still there, behind a disclosure
    form.set("field-copies", "2")
    form.set("field-urgent", "on")
    answer = operator_client.post(form.action, form.post_data(("input_from", "fields")))

    assert answer.status_code == 302
    assert Run.objects.get().input == {"topic": "tea", "copies": 2, "urgent": True}


def test_a_field_that_does_not_fit_is_said_beside_it_and_nothing_starts(
    operator_client: Client, digest: str
) -> None:
    form = page_form(operator_client.get(f"/g/{digest[7:]}/").content.decode(), "start-run-form")
    form.set("field-copies", "9")

    answer = operator_client.post(form.action, form.post_data(("input_from", "fields")))

    page = answer.content.decode()
    assert answer.status_code == 200
    assert not Run.objects.exists()
    assert "9 is greater than the maximum of 3" in page
    assert 'aria-invalid="true"' in page
    assert page_form(page, "start-run-form")["field-copies"] == "9"  # kept as typed


def test_the_json_button_starts_with_the_json(operator_client: Client, digest: str) -> None:
    form = page_form(operator_client.get(f"/g/{digest[7:]}/").content.decode(), "start-run-form")
    form.set("input", '{"topic": "coffee"}')

    answer = operator_client.post(form.action, form.post_data(("input_from", "json")))

    assert answer.status_code == 302
    assert Run.objects.get().input == {"topic": "coffee"}


def test_the_test_panel_tests_with_its_fields_or_the_chosen_sample(
    author_client: Client, author: User
) -> None:
    documents.create_document(author, title="Flow", slug="flow", text=json.dumps(GRAPH))
    page = author_client.get("/graphs/flow/test/").content.decode()
    form = page_form(page, "test-run-form")
    form.set("field-topic", "green tea")

    answer = author_client.post(form.action, form.post_data(("input_from", "fields")))

    assert answer.status_code == 200
    assert "Test run started." in answer.content.decode()
    run: Any = Run.objects.get()
    assert run.input == {"topic": "green tea"}
