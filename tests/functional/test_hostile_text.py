"""User text that looks like markup is shown as text everywhere, and never runs."""

from __future__ import annotations

from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from editor.graph import wire_value
from editor.graph.edits import format_draft
from editor.graph.templates import approval_gate
from editor.services import agents, documents
from tests.functional.browser import htmx_settles, wait_for_htmx

WRITER = '{"name": "Writer", "model": "echo", "prompt": "Write."}'
HOSTILE = "<img src=x onerror=window.__pwned=1>"


def assert_inert(page: Page) -> None:
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    expect(page.locator("img")).to_have_count(0)


def test_a_hostile_title_and_display_name_are_shown_as_text_and_never_run(
    author_page: Page, author: User
) -> None:
    writer = agents.create_agent(
        author, '{"name": "Writer", "model": "echo", "prompt": "Write."}'
    ).agent
    text = format_draft(wire_value(approval_gate(writer)))
    slug = documents.create_document(author, title=HOSTILE, slug="hostile", text=text).slug
    page = author_page

    page.goto("/")
    expect(page.locator("#graph-rows tbody tr a").first).to_have_text(HOSTILE)
    assert_inert(page)

    page.goto(f"/graphs/{slug}/?node=write")
    wait_for_htmx(page)
    expect(page.get_by_role("heading", level=1)).to_have_text(HOSTILE)
    with htmx_settles(page):
        page.get_by_label("Display name").fill(HOSTILE)
    canvas = page.locator("#canvas-panel svg")
    expect(canvas).to_contain_text(HOSTILE)
    expect(page.get_by_label("Display name")).to_have_value(HOSTILE)
    assert_inert(page)

    page.reload()
    wait_for_htmx(page)
    expect(canvas).to_contain_text(HOSTILE)
    expect(page.get_by_label("Display name")).to_have_value(HOSTILE)
    assert_inert(page)
    assert HOSTILE in documents.read_draft(slug).text
