"""Documents managed in the browser: rename, duplicate, archive and restore, delete."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from editor.models import Document
from tests.functional.accessibility import assert_accessible
from tests.functional.test_editor import approval_document, open_editor


@pytest.fixture
def slug(author: User) -> str:
    return approval_document(author)


def test_rename_duplicate_archive_restore_and_delete(author_page: Page, slug: str) -> None:
    page = author_page
    open_editor(page, slug)
    page.locator("#document-menu > summary").click()
    assert_accessible(page)

    page.get_by_label("Title", exact=True).fill("Launch plan")
    page.get_by_label("Slug", exact=True).fill("launch-plan")
    page.get_by_role("button", name="Rename", exact=True).click()
    expect(page).to_have_url("/graphs/launch-plan/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Launch plan")
    page.goto(f"/graphs/{slug}/")
    expect(page).to_have_url("/graphs/launch-plan/")

    page.locator("#document-menu > summary").click()
    page.get_by_role("button", name="Duplicate", exact=True).click()
    expect(page).to_have_url("/graphs/copy-of-launch-plan/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Copy of Launch plan")

    page.locator("#document-menu > summary").click()
    page.get_by_role("button", name="Archive", exact=True).click()
    expect(page).to_have_url("/")
    expect(page.locator(".messages")).to_contain_text("Archived “Copy of Launch plan”")
    expect(page.locator("#graph-rows")).not_to_contain_text("Copy of Launch plan")
    page.get_by_role("link", name="Archived graphs").click()
    expect(page.locator("#graph-rows")).to_contain_text("Copy of Launch plan")
    assert_accessible(page)
    page.get_by_role("button", name="Restore Copy of Launch plan").click()
    expect(page).to_have_url("/graphs/copy-of-launch-plan/")

    page.locator("#document-menu > summary").click()
    page.locator("#delete-document > summary").click()
    expect(page.locator("#delete-question")).to_contain_text("Nothing of it was frozen.")
    page.get_by_role("button", name="Yes, delete “Copy of Launch plan”").click()
    expect(page).to_have_url("/")
    expect(page.locator(".messages")).to_contain_text("Deleted copy-of-launch-plan")
    assert not Document.objects.filter(slug="copy-of-launch-plan").exists()
    assert_accessible(page)
