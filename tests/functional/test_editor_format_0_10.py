"""The editor speaks the reference's 0.10 format: a Delay node from the palette, its wait typed
as a duration and drawn on the canvas, and a fold's On bound choice."""

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


def node_payload(slug: str, node_id: str) -> dict[str, object]:
    nodes = json.loads(documents.read_draft(slug).text)["nodes"]
    return next(node["payload"] for node in nodes if node["payload"]["id"] == node_id)


def test_a_delay_added_from_the_palette_takes_its_wait_as_a_duration(
    author_page: Page, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    choose_node(page, "publish")
    page.locator("#canvas-panel .canvas-drawing").focus()
    page.keyboard.press("n")
    with htmx_settles(page):
        page.get_by_role("button", name="delay", exact=True).click()
    expect(page.locator("#node-heading")).to_contain_text("delay")
    wait = page.get_by_label("Wait", exact=True)
    expect(wait).to_have_value("1 h")  # the new node's 3600 seconds, as a person reads them

    with htmx_settles(page):
        wait.fill("1h30m")
    assert node_payload(slug, "delay") == {"id": "delay", "seconds": 5400}
    expect(page.locator("#canvas-panel svg")).to_contain_text("delay · 1 h 30 min")

    with htmx_settles(page):
        wait.fill("0")
    assert node_payload(slug, "delay")["seconds"] == 0
    expect(page.locator("#fe-seconds")).to_contain_text("would wait 0 seconds")

    with htmx_settles(page):
        wait.fill("soon")
    expect(page.locator("#fe-seconds")).to_contain_text("needs a duration")
    assert node_payload(slug, "delay")["seconds"] == 0  # held back, not saved
    assert_accessible(page)


def test_a_folds_on_bound_is_chosen_and_written_only_when_set(author_page: Page, slug: str) -> None:
    page = author_page
    open_editor(page, slug)
    page.locator("#add-node-kind").select_option("fold")
    page.locator("#add-node-id").fill("refine")
    with htmx_settles(page):
        page.get_by_role("button", name="Add node").click()
    choose_node(page, "refine")
    on_bound = page.get_by_label("On bound", exact=True)
    expect(on_bound).to_have_value("")
    with htmx_settles(page):
        page.get_by_label("Max iterations").fill("4")
    assert "on_bound" not in node_payload(slug, "refine")  # not set: the bytes stay as they were
    expect(page.locator("#fh-on_bound")).to_contain_text("Fail: the run ends failed")

    with htmx_settles(page):
        on_bound.select_option("fail")
    assert node_payload(slug, "refine")["on_bound"] == "fail"
    with htmx_settles(page):
        on_bound.select_option("join")
    assert node_payload(slug, "refine")["on_bound"] == "join"
    assert_accessible(page)
