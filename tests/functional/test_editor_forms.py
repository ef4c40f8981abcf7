"""The editor's forms guide: the edge form's label, the tool picker, the agent by name, and
messages written for people."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from editor.services import documents
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import htmx_settles
from tests.functional.test_editor import approval_document, choose_node, open_editor


@pytest.fixture
def slug(author: User) -> str:
    return approval_document(author)


def test_the_edge_label_offers_only_the_sources_cases_and_the_form_clears_after_adding(
    author_page: Page, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    label_field = page.locator("#edge-label-field")

    page.get_by_label("From", exact=True).select_option("publish")
    expect(label_field).to_be_hidden()
    page.get_by_label("From", exact=True).select_option("decide")
    expect(label_field).to_be_visible()
    options = page.locator("#add-edge-label optgroup:not([hidden]) option")
    expect(options).to_have_text(["approved", "rejected"])

    page.get_by_label("To", exact=True).select_option("write")
    page.get_by_label("Label (the branch's case)").select_option("rejected")
    with htmx_settles(page):
        page.get_by_role("button", name="Add edge").click()
    edges = json.loads(documents.read_draft(slug).text)["edges"]
    assert edges[-1] == {"from": "decide", "to": "write", "label": "rejected"}
    expect(page.locator("#edge-list")).to_contain_text("[rejected]")
    # Cleared: the next edge does not silently get the previous label or target.
    expect(page.locator("#add-edge-label")).not_to_have_value("rejected")
    expect(page.locator("#add-edge-to")).not_to_have_value("write")
    assert_accessible(page)


def test_the_tool_field_is_a_picker_of_the_registered_tools(author_page: Page, slug: str) -> None:
    page = author_page
    open_editor(page, slug)
    choose_node(page, "publish")
    tool = page.get_by_label("Tool", exact=True)
    expect(tool).to_have_value("echo")
    expect(tool.locator("option", has_text="template")).to_have_count(1)

    with htmx_settles(page):
        tool.select_option("template")
    assert '"tool": "template"' in documents.read_draft(slug).text
    assert_accessible(page)


def test_an_error_is_said_for_people_with_the_exact_message_behind_details(
    author_page: Page, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    choose_node(page, "decide")
    with htmx_settles(page):
        page.get_by_label("Case 1 expression").fill("approved ==")

    row = page.locator("#error-list li").first
    expect(row).to_contain_text("The condition of case `approved` in `decide` cannot be read")
    details = row.locator("details")
    expect(details.locator("code")).to_be_hidden()
    details.locator("summary").click()
    expect(details.locator("code")).to_contain_text("has an invalid condition expression")
    expect(page.locator("#fe-case-0-value")).to_contain_text("cannot be read")
    assert_accessible(page)
