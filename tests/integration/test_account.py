"""The account page: `/account/`, its password form and the user's own API tokens."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest
from django.test import Client
from pytest_django.asserts import assertContains, assertNotContains

from editor.models import ApiToken
from editor.services.tokens import create_token, revoke_token, user_for_token

pytestmark = pytest.mark.django_db

PASSWORD = "an-old-passphrase-of-ada"
NEW_PASSWORD = "a-fresh-passphrase-2026"
#: How a raw token looks: the prefix, then 32 random bytes in URL-safe base64.
RAW_TOKEN = re.compile(r"gh_[A-Za-z0-9_-]{43}")
HOSTILE_NAME = "<img src=x onerror=alert(1)>"


@pytest.fixture
def ada(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("ada", password=PASSWORD)


@pytest.fixture
def bob(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("bob", password="bobs-own-passphrase")


@pytest.fixture
def signed_in(client: Client, ada: Any) -> Client:
    assert client.login(username="ada", password=PASSWORD)
    return client


def new_token_on_page(page: str) -> str:
    [raw] = RAW_TOKEN.findall(page)
    return raw


# --- The page ---------------------------------------------------------------------------------


def test_it_sends_an_anonymous_visitor_to_sign_in(client: Client) -> None:
    response = client.get("/account/")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/account/"


def test_it_refuses_an_anonymous_post_without_creating_a_token(client: Client, ada: Any) -> None:
    response = client.post("/account/tokens/", {"name": "sneaky"})

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not ApiToken.objects.exists()


def test_it_shows_the_password_form_and_the_token_section(signed_in: Client) -> None:
    response = signed_in.get("/account/")

    assert response.status_code == 200
    assertContains(response, "<title>Account · Gatehouse</title>")
    assertContains(response, "<h1>Account</h1>")
    assertContains(response, "Change password")
    assertContains(response, '<h2 id="tokens-heading">API tokens</h2>')
    assertContains(response, "<h3>New token</h3>")
    assertContains(response, 'name="old_password"')
    assertContains(response, 'name="new_password1"')
    assertContains(response, 'name="new_password2"')
    assertContains(response, '<label for="id_token_name">Name</label>')
    assertContains(response, "You have no API tokens yet.")
    assert "no-store" in response["Cache-Control"]


def test_every_form_on_it_carries_the_csrf_token_and_has_no_inline_script(
    signed_in: Client, ada: Any
) -> None:
    create_token(ada, "laptop")

    page = signed_in.get("/account/").content.decode()

    assert page.count('method="post"') == page.count('name="csrfmiddlewaretoken"')
    assert page.count('method="post"') == 4  # sign out, password, new token, one revoke
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page, flags=re.DOTALL)
    assert scripts and all(body == "" for body in scripts)
    assert all(
        tag.startswith('<script src="/static/') for tag in re.findall(r"<script\b[^>]*>", page)
    )


# --- Change password --------------------------------------------------------------------------


def test_changing_the_password_keeps_the_session_and_confirms_it(
    signed_in: Client, ada: Any
) -> None:
    response = signed_in.post(
        "/account/password/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assert response.status_code == 302
    assert response["Location"] == "/account/"
    ada.refresh_from_db()
    assert ada.check_password(NEW_PASSWORD)
    page = signed_in.get("/account/")
    assert page.status_code == 200
    assertContains(page, "Your password was changed.")


def test_after_a_change_the_new_password_signs_in_and_the_old_one_does_not(
    signed_in: Client,
) -> None:
    signed_in.post(
        "/account/password/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assert not Client().login(username="ada", password=PASSWORD)
    assert Client().login(username="ada", password=NEW_PASSWORD)


def test_a_wrong_old_password_is_refused_beside_its_field(signed_in: Client, ada: Any) -> None:
    response = signed_in.post(
        "/account/password/",
        {"old_password": "not-it", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assert response.status_code == 200
    assertContains(response, '<div class="field-errors" id="id_old_password_error">')
    assertContains(response, "Your old password was entered incorrectly")
    assertContains(response, 'aria-invalid="true"')
    ada.refresh_from_db()
    assert ada.check_password(PASSWORD)


def test_two_new_passwords_that_differ_are_refused_beside_the_second(
    signed_in: Client, ada: Any
) -> None:
    response = signed_in.post(
        "/account/password/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": "other-one-9"},
    )

    assert response.status_code == 200
    assertContains(response, '<div class="field-errors" id="id_new_password2_error">')
    assertContains(response, "didn’t match")
    ada.refresh_from_db()
    assert ada.check_password(PASSWORD)


def test_a_weak_new_password_is_refused_with_the_reason(signed_in: Client, ada: Any) -> None:
    response = signed_in.post(
        "/account/password/",
        {"old_password": PASSWORD, "new_password1": "12345678", "new_password2": "12345678"},
    )

    assert response.status_code == 200
    assertContains(response, "This password is too common.")
    ada.refresh_from_db()
    assert ada.check_password(PASSWORD)


def test_a_refused_password_is_not_echoed_back(signed_in: Client) -> None:
    response = signed_in.post(
        "/account/password/",
        {"old_password": "not-it", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assertNotContains(response, NEW_PASSWORD)
    assertNotContains(response, "not-it")


@pytest.mark.parametrize(
    ("address", "section"), [("/account/password/", "password"), ("/account/tokens/", "tokens")]
)
def test_opening_a_form_address_goes_back_to_its_section_of_the_page(
    signed_in: Client, address: str, section: str
) -> None:
    response = signed_in.get(address)

    assert response.status_code == 302
    assert response["Location"] == f"/account/#{section}"
    assert not ApiToken.objects.exists()


# --- New token --------------------------------------------------------------------------------


def test_a_new_token_is_shown_once_in_the_response_that_created_it(
    signed_in: Client, ada: Any
) -> None:
    response = signed_in.post("/account/tokens/", {"name": "laptop"})

    assert response.status_code == 200
    raw = new_token_on_page(response.content.decode())
    assertContains(response, "it will not be shown again")
    assert "no-store" in response["Cache-Control"]
    assert user_for_token(raw) == ada
    later = signed_in.get("/account/")
    assertNotContains(later, raw)
    assert not RAW_TOKEN.search(later.content.decode())
    assertContains(later, "laptop")


def test_the_new_token_is_kept_out_of_urls_cookies_and_the_session(signed_in: Client) -> None:
    response = signed_in.post("/account/tokens/", {"name": "laptop"})
    raw = new_token_on_page(response.content.decode())

    assert not response.has_header("Location")
    assert raw not in str(dict(signed_in.session))
    assert all(raw not in morsel.value for morsel in signed_in.cookies.values())


def test_only_the_digest_of_a_new_token_is_stored(signed_in: Client) -> None:
    raw = new_token_on_page(signed_in.post("/account/tokens/", {"name": "ci"}).content.decode())

    token = ApiToken.objects.get()
    assert token.digest != raw
    assert token.digest == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in (token.name, token.prefix)
    assert raw.startswith(token.prefix)


def test_the_token_list_shows_name_prefix_created_last_use_and_status(
    signed_in: Client, ada: Any
) -> None:
    used, raw_used = create_token(ada, "deploy bot")
    unused, _ = create_token(ada, "spare")
    gone, _ = create_token(ada, "old laptop")
    user_for_token(raw_used)
    revoke_token(ada, gone.pk)

    response = signed_in.get("/account/")

    page = response.content.decode()
    assertContains(response, f"<code>{used.prefix}…</code>")
    assert re.fullmatch(r"gh_.{7}", used.prefix)
    assertContains(response, '<th scope="col">Last use</th>')
    assert page.count("never") == 2  # "spare" and "old laptop" were never used
    assert page.count('<span class="status active">active</span>') == 2
    assert page.count('<span class="status revoked">revoked</span>') == 1
    assert page.count(">Revoke<") == 2  # only active tokens offer Revoke
    assertContains(response, f'action="/account/tokens/{unused.pk}/revoke/"')
    assertNotContains(response, f'action="/account/tokens/{gone.pk}/revoke/"')


def test_a_token_needs_a_name(signed_in: Client) -> None:
    response = signed_in.post("/account/tokens/", {"name": "   "})

    assert response.status_code == 200
    assertContains(response, '<div class="field-errors" id="id_token_name_error">')
    assertContains(response, "This field is required.")
    assert not ApiToken.objects.exists()
    assert not RAW_TOKEN.search(response.content.decode())


def test_a_token_name_longer_than_100_characters_is_refused(signed_in: Client) -> None:
    response = signed_in.post("/account/tokens/", {"name": "x" * 101})

    assert response.status_code == 200
    assertContains(response, "at most 100 characters")
    assert not ApiToken.objects.exists()


def test_a_hostile_token_name_is_shown_as_text(signed_in: Client, ada: Any) -> None:
    response = signed_in.post("/account/tokens/", {"name": HOSTILE_NAME})

    assertContains(response, "&lt;img src=x onerror=alert(1)&gt;")
    assertNotContains(response, HOSTILE_NAME)
    later = signed_in.get("/account/")
    assertContains(later, "&lt;img src=x onerror=alert(1)&gt;")
    assertNotContains(later, HOSTILE_NAME)


def test_a_user_sees_only_their_own_tokens(signed_in: Client, bob: Any) -> None:
    create_token(bob, "bobs secret thing")

    response = signed_in.get("/account/")

    assertNotContains(response, "bobs secret thing")
    assertContains(response, "You have no API tokens yet.")


# --- Revoke -----------------------------------------------------------------------------------


def test_revoking_an_own_token_stops_it_working_and_says_so(signed_in: Client, ada: Any) -> None:
    token, raw = create_token(ada, "laptop")

    response = signed_in.post(f"/account/tokens/{token.pk}/revoke/", follow=True)

    assert response.redirect_chain == [("/account/", 302)]
    assertContains(response, "Revoked the API token “laptop”.")
    token.refresh_from_db()
    assert not token.is_active
    assert user_for_token(raw) is None


def test_revoking_a_token_twice_says_it_was_already_revoked(signed_in: Client, ada: Any) -> None:
    token, _ = create_token(ada, "laptop")
    signed_in.post(f"/account/tokens/{token.pk}/revoke/")
    revoked_at = ApiToken.objects.get(pk=token.pk).revoked_at

    response = signed_in.post(f"/account/tokens/{token.pk}/revoke/", follow=True)

    assert response.status_code == 200
    assertContains(response, "was already revoked")
    assert ApiToken.objects.get(pk=token.pk).revoked_at == revoked_at


def test_revoking_another_users_token_is_not_found_and_changes_nothing(
    signed_in: Client, bob: Any
) -> None:
    token, raw = create_token(bob, "bobs laptop")

    response = signed_in.post(f"/account/tokens/{token.pk}/revoke/")

    assert response.status_code == 404
    token.refresh_from_db()
    assert token.is_active
    assert user_for_token(raw) == bob


def test_revoking_a_token_that_does_not_exist_is_not_found(signed_in: Client) -> None:
    assert signed_in.post("/account/tokens/999999/revoke/").status_code == 404


def test_revoking_needs_a_post(signed_in: Client, ada: Any) -> None:
    token, _ = create_token(ada, "laptop")

    assert signed_in.get(f"/account/tokens/{token.pk}/revoke/").status_code == 405
    token.refresh_from_db()
    assert token.is_active


# --- CSRF -------------------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["password", "new token", "revoke"])
def test_every_form_needs_the_csrf_token(ada: Any, action: str) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(ada)
    token, _ = create_token(ada, "laptop")
    url, data = {
        "password": (
            "/account/password/",
            {
                "old_password": PASSWORD,
                "new_password1": NEW_PASSWORD,
                "new_password2": NEW_PASSWORD,
            },
        ),
        "new token": ("/account/tokens/", {"name": "forged"}),
        "revoke": (f"/account/tokens/{token.pk}/revoke/", {}),
    }[action]

    response = client.post(url, data)

    assert response.status_code == 403
    ada.refresh_from_db()
    assert ada.check_password(PASSWORD)
    assert list(ApiToken.objects.values_list("name", "revoked_at")) == [("laptop", None)]


def test_a_form_posted_with_its_csrf_token_is_accepted(ada: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(ada)
    page = client.get("/account/").content.decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert csrf is not None

    response = client.post(
        "/account/tokens/", {"name": "laptop", "csrfmiddlewaretoken": csrf.group(1)}
    )

    assert response.status_code == 200
    assert ApiToken.objects.filter(user=ada, name="laptop").exists()
