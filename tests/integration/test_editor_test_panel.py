"""The editor's **Test** panel and the **Runs** page's test-run filter and comparison, as pages
(issue 24): a test run from a typed input or a sample, refusals said in the panel (200, so
htmx swaps them), pins from a result and cleared, a gate decided inline by its author."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.models import Run
from editor.services import documents
from tests.integration.api.callers import DANGLING
from tests.integration.api.running import GATED, drive

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}

CHAIN = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "ask", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "answer", "tool": "echo"}},
    ],
    "edges": [{"from": "ask", "to": "answer"}],
}


def make(author: User, graph: Any = CHAIN, slug: str = "trial") -> str:
    return documents.create_document(author, title=slug, text=json.dumps(graph), slug=slug).slug


def test_the_panel_starts_a_test_run_with_the_typed_input_and_lists_it(
    author_client: Client, author: User
) -> None:
    slug = make(author)

    answer = author_client.post(f"/graphs/{slug}/test/run/", {"input": '{"n": 1}'}, headers=HTMX)

    assert answer.status_code == 200
    assert b"Test run started." in answer.content
    run = Run.objects.get()
    assert run.test_revision == 1 and run.input == {"n": 1}
    assert drive(str(run.id)) == "completed"
    panel = author_client.get(f"/graphs/{slug}/test/", headers=HTMX).content.decode()
    assert "completed" in panel
    assert "&quot;n&quot;: 1" in panel
    assert 'name="from_run"' in panel


def test_input_that_is_not_json_is_said_in_the_panel_and_nothing_starts(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    answer = author_client.post(f"/graphs/{slug}/test/run/", {"input": "{nope"}, headers=HTMX)
    assert answer.status_code == 200
    assert b"The input is not JSON" in answer.content
    assert b"{nope" in answer.content
    assert not Run.objects.exists()


def test_an_invalid_draft_cannot_be_tested_and_the_panel_says_why(
    author_client: Client, author: User
) -> None:
    slug = make(author, DANGLING)
    panel = author_client.get(f"/graphs/{slug}/test/", headers=HTMX).content.decode()
    assert 'id="test-run-button"' in panel and "disabled" in panel
    answer = author_client.post(f"/graphs/{slug}/test/run/", {"input": "1"}, headers=HTMX)
    assert b"cannot be tested yet" in answer.content
    assert b"ghost" in answer.content


def test_a_sample_is_saved_picked_and_remembered(author_client: Client, author: User) -> None:
    slug = make(author)
    samples = json.dumps(
        [{"name": "small refund", "input": {"amount": 5}}, {"name": "big", "input": 9}]
    )
    saved = author_client.post(f"/graphs/{slug}/test/samples/", {"samples": samples}, headers=HTMX)
    assert b"Samples saved." in saved.content

    author_client.post(f"/graphs/{slug}/test/run/", {"input": "9", "sample": "big"}, headers=HTMX)
    panel = author_client.get(f"/graphs/{slug}/test/", headers=HTMX).content.decode()
    assert '<option value="big" selected>' in panel


def test_a_node_is_pinned_from_a_result_and_the_next_test_run_uses_it(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    author_client.post(f"/graphs/{slug}/test/run/", {"input": '"first"'}, headers=HTMX)
    first = Run.objects.get()
    drive(str(first.id))

    pinned = author_client.post(
        f"/graphs/{slug}/test/pin/", {"node": "ask", "from_run": str(first.id)}, headers=HTMX
    )
    assert b"Pinned ask" in pinned.content
    assert b'data-pinned-node="ask"' in pinned.content
    author_client.post(f"/graphs/{slug}/test/run/", {"input": '"second"'}, headers=HTMX)
    second = Run.objects.exclude(pk=first.pk).get()
    drive(str(second.id))
    second.refresh_from_db()
    assert second.status["output"] == "first"
    panel = author_client.get(f"/graphs/{slug}/test/", headers=HTMX).content.decode()
    assert "pinned-tag" in panel

    cleared = author_client.post(f"/graphs/{slug}/test/unpin/", {"all": "1"}, headers=HTMX)
    assert b"No node is pinned" in cleared.content


def test_a_typed_pin_is_checked_and_a_bad_one_said_in_the_panel(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    answer = author_client.post(
        f"/graphs/{slug}/test/pin/", {"node": "ghost", "output": "1"}, headers=HTMX
    )
    assert answer.status_code == 200
    assert b"the pin of `ghost`" in answer.content


def test_a_gate_of_a_test_run_is_decided_in_the_panel(author_client: Client, author: User) -> None:
    slug = make(author, GATED)
    author_client.post(f"/graphs/{slug}/test/run/", {"input": "{}"}, headers=HTMX)
    run = Run.objects.get()
    assert drive(str(run.id)) == "suspended"
    panel = author_client.get(f"/graphs/{slug}/test/", headers=HTMX).content.decode()
    assert "Your decision at" in panel

    decided = author_client.post(
        f"/graphs/{slug}/test/decide/",
        {"run": str(run.id), "node": "review", "input": '{"approved": true}'},
        headers=HTMX,
    )

    assert b"Decided" in decided.content
    assert drive(str(run.id)) == "completed"


def test_the_runs_page_lists_test_runs_only_under_the_filter_and_compares_two(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    for value in ('"a"', '"b"'):
        author_client.post(f"/graphs/{slug}/test/run/", {"input": value}, headers=HTMX)
    a, b = (str(run.id) for run in Run.objects.order_by("created_at"))
    drive(a)
    drive(b)

    default = author_client.get("/runs/").content.decode()
    tests = author_client.get("/runs/?test=true").content.decode()

    assert a not in default and b not in default
    assert a in tests and b in tests
    compared = author_client.get(f"/runs/compare/?run={a}&run={b}")
    assert compared.status_code == 200
    page = compared.content.decode()
    assert 'data-node="ask"' in page
    assert "$: changed" in page
    one = author_client.get(f"/runs/compare/?run={a}")
    assert one.status_code == 400
    assert b"exactly two runs" in one.content


def test_a_test_runs_page_says_it_is_one_and_of_which_revision(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    author_client.post(f"/graphs/{slug}/test/run/", {"input": "1"}, headers=HTMX)
    run = Run.objects.get()

    page = author_client.get(f"/runs/{run.id}/").content.decode()

    assert 'id="test-of"' in page
    assert "revision 1" in page


def test_a_test_runs_page_stays_when_its_document_is_deleted(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    author_client.post(f"/graphs/{slug}/test/run/", {"input": "1"}, headers=HTMX)
    run = Run.objects.get()
    documents_row = run.document
    assert documents_row is not None
    documents_row.delete()

    page = author_client.get(f"/runs/{run.id}/")

    assert page.status_code == 200
    assert "a deleted document" in page.content.decode()


#: take (echo) whose input is an amount (a whole number, at least 1) and whether it is urgent.
TYPED_ENTRY = {
    "schema_version": 1,
    "nodes": [
        {
            "kind": "tool",
            "payload": {
                "id": "take",
                "tool": "echo",
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "amount": {"type": "integer", "minimum": 1, "title": "Amount"},
                        "urgent": {"type": "boolean", "title": "Urgent"},
                    },
                    "required": ["amount", "urgent"],
                },
            },
        }
    ],
    "edges": [],
}


def test_a_sample_is_a_form_made_from_the_entry_nodes_input_schema(
    author_client: Client, author: User
) -> None:
    slug = make(author, TYPED_ENTRY)
    panel = author_client.get(f"/graphs/{slug}/test/", headers=HTMX).content.decode()
    assert "input schema of <code>take</code>" in panel
    assert 'id="sample-new-f-amount"' in panel and 'type="number"' in panel
    # A required boolean is a checkbox here, not an approval's two buttons.
    assert 'type="checkbox" id="sample-new-f-urgent"' in panel

    added = author_client.post(
        f"/graphs/{slug}/test/sample/",
        {"original": "", "name": "small", "field-amount": "5"},
        headers=HTMX,
    )

    assert "The sample small is saved." in added.content.decode()
    shown = author_client.get(f"/v1/documents/{slug}/samples").json()
    assert shown["samples"] == [{"name": "small", "input": {"amount": 5, "urgent": False}}]
    panel = author_client.get(f"/graphs/{slug}/test/", headers=HTMX).content.decode()
    assert 'id="sample-1-f-amount" name="field-amount" value="5"' in panel

    renamed = author_client.post(
        f"/graphs/{slug}/test/sample/",
        {"original": "small", "name": "urgent one", "field-amount": "7", "field-urgent": "true"},
        headers=HTMX,
    )
    assert "The sample urgent one is saved." in renamed.content.decode()
    shown = author_client.get(f"/v1/documents/{slug}/samples").json()
    assert shown["samples"] == [{"name": "urgent one", "input": {"amount": 7, "urgent": True}}]


def test_a_samples_form_that_breaks_the_schema_comes_back_with_its_errors_and_saves_nothing(
    author_client: Client, author: User
) -> None:
    slug = make(author, TYPED_ENTRY)

    below = author_client.post(
        f"/graphs/{slug}/test/sample/",
        {"original": "", "name": "tiny", "field-amount": "0"},
        headers=HTMX,
    ).content.decode()
    not_a_number = author_client.post(
        f"/graphs/{slug}/test/sample/",
        {"original": "", "name": "odd", "field-amount": "lots"},
        headers=HTMX,
    ).content.decode()
    nameless = author_client.post(
        f"/graphs/{slug}/test/sample/", {"original": "", "name": " ", "field-amount": "3"}
    )

    assert "The sample was not saved" in below
    assert re.search(r'id="sample-new-f-amount-error">[^<]*minimum', below), below
    assert 'name="field-amount" value="0"' in below
    assert 'value="tiny"' in below
    assert "Enter a number." in not_a_number
    assert "Give the sample a name." in nameless.content.decode()
    assert author_client.get(f"/v1/documents/{slug}/samples").json()["samples"] == []


def test_a_sample_is_deleted_from_its_form(author_client: Client, author: User) -> None:
    slug = make(author, TYPED_ENTRY)
    author_client.post(
        f"/graphs/{slug}/test/sample/",
        {"original": "", "name": "one", "field-amount": "1"},
        headers=HTMX,
    )
    deleted = author_client.post(
        f"/graphs/{slug}/test/sample/", {"original": "one", "delete": "1"}, headers=HTMX
    )
    assert "The sample one is deleted." in deleted.content.decode()
    assert author_client.get(f"/v1/documents/{slug}/samples").json()["samples"] == []


def test_samples_of_a_draft_without_an_input_schema_are_json(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    panel = author_client.get(f"/graphs/{slug}/test/", headers=HTMX).content.decode()
    assert "each is JSON" in panel
    refused = author_client.post(
        f"/graphs/{slug}/test/sample/",
        {"original": "", "name": "x", "approval-json": "{nope"},
        headers=HTMX,
    ).content.decode()
    assert "This is not valid JSON" in refused
    saved = author_client.post(
        f"/graphs/{slug}/test/sample/",
        {"original": "", "name": "x", "approval-json": '{"a": [1]}'},
        headers=HTMX,
    )
    assert "The sample x is saved." in saved.content.decode()
    shown = author_client.get(f"/v1/documents/{slug}/samples").json()["samples"]
    assert shown == [{"name": "x", "input": {"a": [1]}}]
