"""New graph shows only the fields its starting point needs, and preselects the one agent."""

from __future__ import annotations

from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from editor.services import agents
from tests.functional.accessibility import assert_accessible

WRITER = '{"name": "Writer", "model": "echo", "prompt": "Write."}'


def test_only_the_fields_of_the_starting_point_are_shown(author_page: Page, author: User) -> None:
    stored = agents.create_agent(author, WRITER).agent
    page = author_page
    page.goto("/new/")
    expect(page.get_by_label("Writer agent")).to_be_hidden()
    expect(page.get_by_label("Personas")).to_be_hidden()

    page.get_by_label("Approval gate").check()
    expect(page.get_by_label("Writer agent")).to_be_visible()
    expect(page.get_by_label("Writer agent")).to_have_value(stored)
    expect(page.get_by_label("Critic agent")).to_be_hidden()
    expect(page.get_by_label("Personas")).to_be_hidden()
    assert_accessible(page)

    page.get_by_label("Critic panel — rounds").check()
    expect(page.get_by_label("Personas")).to_be_visible()
    expect(page.get_by_label("Rounds", exact=True)).to_be_visible()
    expect(page.get_by_label("Writer agent")).to_be_hidden()

    page.get_by_label("Title").fill("Announcement")
    page.get_by_label("Approval gate").check()
    page.get_by_role("button", name="Create graph").click()
    expect(page).to_have_url("/graphs/announcement/")
