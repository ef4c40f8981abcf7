"""The editor's history: Undo, Redo, the History panel, undoable destructive actions, and fields
held back from a save (they block Freeze until fixed or discarded)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.models import DraftRevision
from editor.services import documents
from tests.integration.test_editor_page import (
    HX,
    approval_text,
    draft,
    node_form_data,
    payload,
    stored,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _graph(author: User) -> None:
    """Every test here edits the approval-gate document ``flow``."""
    documents.create_document(author, title="Approval flow", slug="flow", text=approval_text())


def post(client: Client, path: str, **data: str) -> str:
    response = client.post(
        f"/graphs/flow/{path}", {"revision": str(draft().revision), **data}, **HX
    )
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


def ids() -> list[str]:
    return [node["payload"]["id"] for node in stored()["nodes"]]


def test_undo_after_a_rename_brings_the_old_id_back_and_redo_renames_again(
    author_client: Client,
) -> None:
    author_client.post("/graphs/flow/edit/node/", node_form_data("review", id="approve"), **HX)
    assert "approve" in ids()

    page = post(author_client, "undo/")

    assert "review" in ids() and "approve" not in ids()
    assert 'id="undo-notice"' in page and "Undone." in page
    assert 'id="redo-button"' in page
    post(author_client, "redo/")
    assert "approve" in ids()
    summaries = list(DraftRevision.objects.order_by("-number").values_list("summary", flat=True))
    assert summaries[:3] == [
        "redid: renamed `review` → `approve`",
        "undid: renamed `review` → `approve`",
        "renamed `review` → `approve`",
    ]


def test_there_is_nothing_to_undo_on_a_new_draft(author_client: Client) -> None:
    page = author_client.get("/graphs/flow/").content.decode()
    assert 'id="undo-button" aria-keyshortcuts="Control+Z" disabled' in page

    answer = post(author_client, "undo/")

    assert "there is nothing to undo" in answer
    assert draft().revision == 1


def test_typing_in_one_field_is_kept_as_one_revision(author_client: Client) -> None:
    for name in ("W", "Wr", "Writer"):
        author_client.post("/graphs/flow/edit/node/", node_form_data("write", name=name), **HX)

    rows = list(DraftRevision.objects.order_by("-number").values_list("number", "summary"))

    assert rows == [(4, "changed the display name of `write`"), (1, "created the graph")]
    post(author_client, "undo/")
    assert "name" not in payload("write")


def test_discard_changes_says_so_and_can_be_undone(author_client: Client, author: User) -> None:
    documents.freeze(author, "flow", expected_revision=1)
    author_client.post("/graphs/flow/edit/node/", node_form_data("write", name="Keep me"), **HX)

    page = post(author_client, "discard/")

    assert "name" not in payload("write")
    assert "Discarded." in page and 'id="notice-undo"' in page
    post(author_client, "undo/")
    assert payload("write")["name"] == "Keep me"


def test_deleting_an_edge_acts_at_once_and_offers_undo(author_client: Client) -> None:
    before = stored()["edges"]

    page = post(author_client, "edit/delete-edge/", edge="0")

    assert stored()["edges"] == before[1:]
    assert "Deleted edge write → review." in page
    post(author_client, "undo/")
    assert stored()["edges"] == before


def test_the_history_panel_lists_revisions_and_restores_one(author_client: Client) -> None:
    author_client.post("/graphs/flow/edit/node/", node_form_data("write", name="One"), **HX)
    post(author_client, "edit/delete-node/", node="archive")

    panel = author_client.get("/graphs/flow/history/", **HX).content.decode()

    assert "deleted node `archive`" in panel
    assert "changed the display name of `write`" in panel
    assert "Restore r1" in panel
    post(author_client, "history/restore/", number="1")
    assert "archive" in ids()
    assert "name" not in payload("write")
    assert DraftRevision.objects.get(number=draft().revision).summary == "restored revision 1"
    page = author_client.get("/graphs/flow/history/").content.decode()
    assert "<h1>History of" in page


def test_a_held_field_blocks_freeze_until_discarded(author_client: Client) -> None:
    author_client.post(
        "/graphs/flow/edit/node/", node_form_data("write", output_schema="{oops"), **HX
    )
    page = author_client.get("/graphs/flow/").content.decode()
    assert 'id="freeze-button" disabled' in page
    assert "Output schema was not saved" in page
    assert "1 error — freeze is blocked" in page

    answer = post(author_client, "edit/drop-held/", node="write", field="output_schema")

    assert draft().held == []
    assert "No errors · this graph can be frozen" in answer
    assert 'id="freeze-button" hx-swap-oob="true">Freeze' in answer
    page = author_client.get("/graphs/flow/?node=write").content.decode()
    assert "{oops" not in page


def test_fixing_a_held_field_saves_it_and_lifts_the_block(author_client: Client) -> None:
    author_client.post(
        "/graphs/flow/edit/node/", node_form_data("write", output_schema="{oops"), **HX
    )

    author_client.post(
        "/graphs/flow/edit/node/", node_form_data("write", output_schema='{"type": "object"}'), **HX
    )

    assert draft().held == []
    assert payload("write")["output_schema"] == {"type": "object"}


def test_an_id_already_in_use_is_held_and_the_other_fields_are_saved(
    author_client: Client,
) -> None:
    author_client.post(
        "/graphs/flow/edit/node/", node_form_data("write", id="review", name="Writer"), **HX
    )

    assert payload("write")["name"] == "Writer"
    [held] = draft().held
    assert (held["node"], held["field"], held["text"]) == ("write", "id", "review")
    assert "already used" in held["message"]
