"""Signing in through the form, and the Account page's API tokens, in a real browser."""

from __future__ import annotations

import re

from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from editor.models import ApiToken
from tests.functional.browser import PASSWORD


def test_a_user_signs_in_through_the_form_and_sees_the_graphs_page(
    page: Page, author: User
) -> None:
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))
    page.get_by_label("Username").fill(author.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    expect(page).to_have_url(re.compile(r"/$"))
    navigation = page.get_by_role("navigation", name="Main")
    expect(navigation.get_by_role("link", name="Graphs")).to_have_attribute("aria-current", "page")
    expect(navigation.get_by_role("button", name="Sign out")).to_be_visible()


def test_the_account_page_shows_a_new_api_token_once(author_page: Page, author: User) -> None:
    page = author_page
    page.goto("/account/")
    page.get_by_label("Name").fill("laptop")
    page.get_by_role("button", name="Create token").click()

    shown = page.get_by_label("Token “laptop”")
    expect(shown).to_be_visible()
    value = shown.input_value()
    assert len(value) >= 32
    token = ApiToken.objects.get(user=author, name="laptop")
    assert value.startswith(token.prefix)
    expect(page.locator("table.tokens")).to_contain_text("laptop")

    page.goto("/account/")
    expect(page.get_by_role("heading", name="API tokens")).to_be_visible()
    expect(page.get_by_label("Token “laptop”")).to_have_count(0)
    assert value not in page.content()
