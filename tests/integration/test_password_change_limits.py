"""The Account page's password change is limited like sign-in (spec 07): a wrong current
password counts as a failed sign-in of that username from that address, and five lock the
form, with a 429 page saying when it opens again."""

from __future__ import annotations

from typing import Any

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

pytestmark = pytest.mark.django_db

PASSWORD = "an-account-test-passphrase-9043"
NEW_PASSWORD = "a-brand-new-passphrase-7781"
ADDRESS = "192.0.2.44"


@pytest.fixture
def ada() -> User:
    return User.objects.create_user("ada", password=PASSWORD)


@pytest.fixture
def browser(ada: User) -> Client:
    client = Client(REMOTE_ADDR=ADDRESS)
    client.force_login(ada)
    return client


def change(browser: Client, old: str, new: str = NEW_PASSWORD) -> Any:
    return browser.post(
        "/account/password/", {"old_password": old, "new_password1": new, "new_password2": new}
    )


def test_four_wrong_current_passwords_still_let_the_right_one_change_it(
    browser: Client, ada: User
) -> None:
    for _ in range(4):
        assert change(browser, "not-it").status_code == 200

    assert change(browser, PASSWORD).status_code == 302
    ada.refresh_from_db()
    assert ada.check_password(NEW_PASSWORD)


def test_the_right_current_password_clears_the_count_as_a_sign_in_does(browser: Client) -> None:
    for _ in range(4):
        change(browser, "not-it")
    change(browser, PASSWORD)

    for _ in range(4):
        assert change(browser, "not-it", new=PASSWORD + "-2").status_code == 200
    assert AccessAttempt.objects.get().failures_since_start == 4


def test_the_fifth_wrong_current_password_locks_the_form_saying_when_it_opens(
    browser: Client,
) -> None:
    for _ in range(4):
        change(browser, "not-it")

    locked = change(browser, "not-it")

    assert locked.status_code == 429
    assert 0 < int(locked["Retry-After"]) <= 15 * 60
    page = locked.content.decode()
    assert "Password change paused" in page
    assert "the password form opens again at" in page
    assert "in 15 minutes" in page


def test_a_locked_form_refuses_even_the_right_password(browser: Client, ada: User) -> None:
    for _ in range(5):
        change(browser, "not-it")

    refused = change(browser, PASSWORD)

    assert refused.status_code == 429
    ada.refresh_from_db()
    assert ada.check_password(PASSWORD)


def test_wrong_current_passwords_lock_signing_in_too(browser: Client) -> None:
    for _ in range(5):
        change(browser, "not-it")

    signing_in = Client(REMOTE_ADDR="198.51.100.7").post(
        "/accounts/login/", {"username": "ada", "password": PASSWORD}
    )

    assert signing_in.status_code == 429


def test_failed_sign_ins_count_against_the_form(ada: User, browser: Client) -> None:
    for _ in range(5):
        Client(REMOTE_ADDR=ADDRESS).post(
            "/accounts/login/", {"username": "ada", "password": "not-it"}
        )

    assert change(browser, PASSWORD).status_code == 429


def test_the_form_opens_again_after_the_cool_off(browser: Client, ada: User) -> None:
    for _ in range(5):
        change(browser, "not-it")
    AccessAttempt.objects.update(attempt_time=timezone.now() - timezone.timedelta(minutes=16))

    assert change(browser, PASSWORD).status_code == 302


def test_a_mismatched_new_password_is_not_counted(browser: Client) -> None:
    for _ in range(6):
        assert change(browser, PASSWORD, new="x").status_code == 200

    assert AccessAttempt.objects.count() == 0


def test_the_passwords_are_not_kept_with_the_count(browser: Client) -> None:
    change(browser, "the-wrong-guess-1234")

    (attempt,) = AccessAttempt.objects.all()
    assert "the-wrong-guess-1234" not in attempt.post_data
    assert NEW_PASSWORD not in attempt.post_data
