"""The small things of issue 25 through Django's test client: Compare reads older → newer
everywhere, the versions list's Compare and Restore, what Freeze answers (a link to the
version, Start run and Test run, the Note cleared), freezing an empty graph asks first, and
reasons held back read as sentences."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.models import Draft, Version
from editor.services import documents
from tests.integration.forms import page_form

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


def gate() -> dict[str, Any]:
    return wire_value(approval_gate("sha256:" + "e" * 64))


def revision() -> int:
    return documents.read_draft("flow").revision


@pytest.fixture
def two_versions(author: User) -> tuple[str, str]:
    """Version 1, then version 2 with a node more; the draft is version 2."""
    documents.create_document(author, title="Flow", text=json.dumps(gate()))
    first = documents.freeze(author, "flow", expected_revision=1).graph
    value = gate()
    value["nodes"].append({"kind": "tool", "payload": {"id": "notify", "tool": "echo"}})
    documents.save_draft(author, "flow", text=json.dumps(value), expected_revision=revision())
    second = documents.freeze(author, "flow", expected_revision=revision()).graph
    return first, second


def test_compare_reads_older_to_newer_whichever_side_was_chosen_first(
    author_client: Client, two_versions: tuple[str, str]
) -> None:
    first, second = two_versions

    page = author_client.get("/graphs/flow/compare/", {"from": second, "to": first})

    text = page.content.decode()
    assert "From <strong>version 1 · " in text and "</strong> to <strong>version 2 · " in text
    assert "+ <code>notify</code>" in text  # added, not removed
    assert "− <code>notify</code>" not in text
    form = page_form(
        text.replace('method="get"', 'method="get" id="compare-form"', 1), "compare-form"
    )
    assert (form["from"], form["to"]) == (first, second)


def test_the_draft_is_always_the_newer_side(author_client: Client, two_versions: Any) -> None:
    first, _ = two_versions
    text = author_client.get("/graphs/flow/compare/", {"from": "draft", "to": first}).content
    assert "</strong> to <strong>the draft</strong>" in text.decode()


def test_each_version_compares_with_the_one_before_and_restores_into_the_draft(
    author_client: Client, two_versions: tuple[str, str]
) -> None:
    first, second = two_versions
    page = author_client.get("/graphs/flow/versions/").content.decode()

    assert f"?from={first.replace(':', '%3A')}&amp;to={second.replace(':', '%3A')}" in page
    assert "Compare with version 1" in page
    assert "Compare with the draft" in page  # version 1 has none before it
    before = revision()
    answer = author_client.post("/graphs/flow/versions/restore/", {"version": "1"}, follow=True)

    assert answer.redirect_chain[-1][0] == "/graphs/flow/"
    assert "Restored version 1 into the draft. Undo takes it back." in answer.content.decode()
    assert json.loads(documents.read_draft("flow").text) == gate()
    assert revision() == before + 1
    author_client.post("/graphs/flow/undo/", {"revision": str(revision())})
    assert "notify" in documents.read_draft("flow").text


def test_restore_is_for_authors_and_names_a_version(
    client: Client, author_client: Client, two_versions: Any
) -> None:
    answer = author_client.post("/graphs/flow/versions/restore/", {"version": "9"}, follow=True)
    assert "Nothing was restored: there is no version 9 to restore." in answer.content.decode()

    from tests.integration.api.callers import make_user

    client.force_login(make_user("rex"))
    assert client.post("/graphs/flow/versions/restore/", {"version": "1"}).status_code == 403
    assert "Restore" not in client.get("/graphs/flow/versions/").content.decode().split("<table")[1]


def test_freeze_links_to_the_version_offers_a_run_and_clears_the_note(
    author_client: Client, author: User
) -> None:
    documents.create_document(author, title="Flow", text=json.dumps(gate()))

    answer = author_client.post("/graphs/flow/freeze/", {"revision": "1", "note": "first"}, **HX)

    page = answer.content.decode()
    version = Version.objects.get()
    hex_digits = version.graph_id.removeprefix("sha256:")
    assert f'href="/g/{hex_digits}/?document=flow" autofocus><code class="hash">' in page
    assert f'href="/g/{hex_digits}/?document=flow#start-run">Start run</a>' in page
    assert 'href="#test-run-form">Test run</a>' in page
    # The Note comes back empty.
    assert re.search(r'<input id="freeze-note" name="note" [^>]*hx-swap-oob="true">', page)
    assert 'id="freeze-note" name="note" type="text" value=' not in page


def test_freezing_an_empty_graph_asks_first(author_client: Client, author: User) -> None:
    documents.create_document(author, title="Flow", text='{"schema_version": 1, "nodes": []}')

    page = author_client.post("/graphs/flow/freeze/", {"revision": "1"}, **HX).content.decode()

    assert not Version.objects.exists()
    assert "This graph has no nodes yet" in page
    form = page_form(author_client.get("/graphs/flow/").content.decode(), "freeze-form")
    answer = author_client.post(form.action, {**form.post_data(), "empty_ok": "1"}, **HX)
    assert answer.status_code == 200
    assert Version.objects.get().number == 1


def test_a_field_held_back_reads_as_a_sentence(author_client: Client, author: User) -> None:
    documents.create_document(author, title="Flow", text=json.dumps(gate()))
    form = page_form(author_client.get("/graphs/flow/?node=write").content.decode(), "node-form")
    form.set("id", "review")

    page = author_client.post(form.action, form.post_data(), follow=True).content.decode()

    assert "Id was not saved: id `review` is already used." in page
    assert "not saved: id `review` is already used" in page
    assert "it id" not in page
    assert Draft.objects.get().held[0]["field"] == "id"


def test_the_choices_follow_when_the_sides_are_turned_round(
    author_client: Client, two_versions: tuple[str, str]
) -> None:
    first, second = two_versions

    page = author_client.get(
        "/graphs/flow/compare/", {"from": second, "to": first}, HTTP_HX_REQUEST="true"
    ).content.decode()

    assert page.lstrip().startswith('<select id="compare-from" name="from" hx-swap-oob="true">')
    assert f'<option value="{first}" selected>' in page.split('id="compare-to"')[0]
