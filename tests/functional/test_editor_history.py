"""The editor people trust with their work: undo and redo, the History panel, undoable
destructive actions, fields held back from a save, and the saving indicator."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from editor.services import documents
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import htmx_settles
from tests.functional.test_editor import (
    BLOCKED,
    FREEZABLE,
    approval_document,
    assert_not_reloaded,
    choose_node,
    open_editor,
)

SAVED = re.compile(r"^Saved \d\d:\d\d$")


@pytest.fixture
def slug(author: User) -> str:
    return approval_document(author)


def node_ids(slug: str) -> list[str]:
    import json

    return [node["payload"]["id"] for node in json.loads(documents.read_draft(slug).text)["nodes"]]


def test_ctrl_z_undoes_a_rename_and_ctrl_shift_z_redoes_it(author_page: Page, slug: str) -> None:
    page = author_page
    open_editor(page, slug)
    assert_accessible(page)
    choose_node(page, "review")
    with htmx_settles(page):
        page.get_by_label("Id", exact=True).fill("approve")
    expect(page.locator("#node-list")).to_contain_text("approve")
    expect(page.locator("#save-state")).to_have_text(SAVED)
    assert "approve" in node_ids(slug)

    page.locator("#canvas-panel").click()
    with htmx_settles(page):
        page.keyboard.press("Control+z")
    expect(page.locator("#undo-notice")).to_contain_text("Undone.")
    expect(page.locator("#node-list")).to_contain_text("review")
    assert "review" in node_ids(slug) and "approve" not in node_ids(slug)

    with htmx_settles(page):
        page.keyboard.press("Control+Shift+Z")
    expect(page.locator("#node-list")).to_contain_text("approve")
    assert "approve" in node_ids(slug)
    assert_accessible(page)
    assert_not_reloaded(page)


def test_a_revision_is_restored_from_the_history_panel(author_page: Page, slug: str) -> None:
    page = author_page
    open_editor(page, slug)
    choose_node(page, "write")
    with htmx_settles(page):
        page.get_by_label("Display name").fill("Draft the announcement")
    expect(page.locator("#canvas-panel svg")).to_contain_text("Draft the announcement")

    with htmx_settles(page):
        page.locator("#history > summary").click()
    rows = page.locator("#history-rows")
    expect(rows).to_contain_text("changed the display name of `write`")
    expect(rows).to_contain_text("created the graph")
    assert_accessible(page)

    with htmx_settles(page):
        rows.get_by_role("button", name="Restore r1").click()
    expect(page.locator("#undo-notice")).to_contain_text("Restored revision 1.")
    expect(page.locator("#canvas-panel svg")).not_to_contain_text("Draft the announcement")
    assert "Draft the announcement" not in documents.read_draft(slug).text
    assert_not_reloaded(page)


def test_discard_changes_says_so_and_undo_brings_the_work_back(
    author_page: Page, author: User, slug: str
) -> None:
    documents.freeze(author, slug, expected_revision=1)
    page = author_page
    open_editor(page, slug)
    choose_node(page, "write")
    with htmx_settles(page):
        page.get_by_label("Display name").fill("Work worth keeping")
    expect(page.locator("#canvas-panel svg")).to_contain_text("Work worth keeping")

    with htmx_settles(page):
        page.get_by_role("button", name="Discard changes").click()
    notice = page.locator("#undo-notice")
    expect(notice).to_contain_text("Discarded.")
    expect(page.locator("#canvas-panel svg")).not_to_contain_text("Work worth keeping")
    assert_accessible(page)

    with htmx_settles(page):
        notice.get_by_role("button", name="Undo").click()
    expect(page.locator("#canvas-panel svg")).to_contain_text("Work worth keeping")
    assert "Work worth keeping" in documents.read_draft(slug).text
    assert_not_reloaded(page)


def test_a_schema_field_that_is_not_json_blocks_freezing_until_it_is_fixed(
    author_page: Page, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    expect(page.locator("#verdict")).to_have_text(FREEZABLE)
    choose_node(page, "write")
    with htmx_settles(page):
        page.locator("#f-output_schema-mode").select_option("json")
    expect(page.get_by_label("Output schema (JSON)")).to_be_focused()

    with htmx_settles(page):
        page.get_by_label("Output schema (JSON)").fill('{"type": "object",')
    # The browser says so as it is typed, and posts it all the same: the server holds it back.
    expect(page.locator("#f-output_schema + .json-hint")).to_contain_text("Not valid JSON yet")
    expect(page.get_by_label("Output schema (JSON)")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#verdict")).to_have_text(BLOCKED)
    expect(page.locator("#error-list")).to_contain_text("Output schema was not saved")
    expect(page.locator("#freeze-button")).to_be_disabled()
    expect(page.locator("#fe-output_schema")).to_contain_text("not valid JSON")
    assert_accessible(page)

    with htmx_settles(page):
        page.get_by_label("Output schema (JSON)").fill('{"type": "object"}')
    expect(page.locator("#verdict")).to_have_text(FREEZABLE)
    expect(page.locator("#f-output_schema + .json-hint")).to_be_empty()
    expect(page.locator("#freeze-button")).to_be_enabled()
    assert '"output_schema": {\n' in documents.read_draft(slug).text
    assert_not_reloaded(page)


def test_a_change_that_could_not_be_saved_says_so_and_can_be_retried(
    author_page: Page, slug: str, browser_problems: list[str]
) -> None:
    page = author_page
    open_editor(page, slug)
    choose_node(page, "write")
    page.route("**/edit/node/", lambda route: route.abort())

    page.get_by_label("Display name").fill("Not yet saved")
    state = page.locator("#save-state")
    expect(state).to_have_text("Not saved — retry")
    assert "Not yet saved" not in documents.read_draft(slug).text

    page.unroute("**/edit/node/")
    with htmx_settles(page):
        state.get_by_role("button", name="retry").click()
    expect(state).to_have_text(SAVED)
    assert "Not yet saved" in documents.read_draft(slug).text
    # What the browser reported is the request this test cut off (and htmx's note of it).
    expected = ("/edit/node/", "htmx:sendError", "htmx:afterRequest")
    failed = [problem for problem in browser_problems if any(e in problem for e in expected)]
    assert any("ERR_FAILED" in problem for problem in failed)
    browser_problems[:] = [problem for problem in browser_problems if problem not in failed]
