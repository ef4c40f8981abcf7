"""The sign-in limit in a real browser: after five wrong passwords the form gives way to a page
that says why and for how long (spec 07), and the right password no longer gets in."""

from __future__ import annotations

import re

from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from tests.functional.browser import PASSWORD

LOCKED_OUT = "Too many failed sign-in attempts; try again in 15 minutes."


def submit(page: Page, username: str, password: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_five_wrong_passwords_lock_the_form_out_with_a_clear_page(
    page: Page, author: User, browser_problems: list[str]
) -> None:
    page.goto("/accounts/login/")
    for _ in range(4):
        submit(page, author.username, "not-the-password")
        expect(page.get_by_role("alert")).to_contain_text("correct username and password")

    submit(page, author.username, "not-the-password")

    expect(page.get_by_role("heading", name="Sign-in paused")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_text(LOCKED_OUT)

    page.get_by_role("link", name="Back to sign in").click()
    submit(page, author.username, PASSWORD)
    expect(page.get_by_role("alert")).to_have_text(LOCKED_OUT)
    expect(page).to_have_url(re.compile(r"/accounts/login/$"))
    # The browser logs each 429 answer as a failed load; those are this test's point.
    browser_problems[:] = [p for p in browser_problems if "status of 429" not in p]
