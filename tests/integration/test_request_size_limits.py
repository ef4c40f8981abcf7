"""The request body cap (``GATEHOUSE_MAX_BODY_BYTES``) at every entry a browser posts to.

A body over the cap gets a plain ``413`` page before anything reads it: no session lookup, no
CSRF check, no form, nothing saved. The API's answer (``413 payload_too_large`` in its
envelope) is covered with the API's errors, in ``api/test_errors.py``; one case is repeated
here so that both halves of the boundary are seen side by side.
"""

from __future__ import annotations

import runpy
import uuid
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from pytest_django import Settings

from editor.models import Document
from editor.services import documents
from tests.integration.api.callers import bearer_caller, error_of

CAP = 2048
HEX = "ab" * 32

#: Every kind of page that takes a body: (what it is, its address).
PAGE_ENTRIES = [
    ("sign in", "/accounts/login/"),
    ("new graph", "/new/"),
    ("import", "/import/"),
    ("editor: a node's form", "/graphs/flow/edit/node/"),
    ("editor: the JSON", "/graphs/flow/edit/json/"),
    ("editor: freeze", "/graphs/flow/freeze/"),
    ("start run", f"/g/{HEX}/runs/"),
    ("inbox: resolve", f"/inbox/{uuid.UUID(int=7)}/resolve/"),
    ("abandon run", f"/runs/{uuid.UUID(int=7)}/abandon/"),
    ("account: password", "/account/password/"),
    ("account: new token", "/account/tokens/"),
    ("admin", "/admin/auth/user/add/"),
]


@pytest.fixture
def small_cap(settings: Settings) -> int:
    settings.GATEHOUSE_MAX_BODY_BYTES = CAP
    return CAP


@pytest.fixture
def flow(author: User) -> Document:
    slug = documents.create_document(author, title="Flow", text="{}").slug
    return Document.objects.get(slug=slug)


def assert_plain_413_page(response: object) -> None:
    assert response.status_code == 413  # type: ignore[attr-defined]
    page = response.content.decode()  # type: ignore[attr-defined]
    assert response["Content-Type"].startswith("text/html")  # type: ignore[index]
    assert "What you sent is larger than Gatehouse accepts (2,048 bytes at most)" in page
    assert "Traceback" not in page


@pytest.mark.parametrize(("entry", "path"), PAGE_ENTRIES, ids=[e for e, _ in PAGE_ENTRIES])
def test_a_form_post_over_the_cap_gets_a_plain_413_page(
    author_client: Client, small_cap: int, flow: Document, entry: str, path: str
) -> None:
    response = author_client.post(path, {"text": "x" * small_cap})

    assert_plain_413_page(response)


def test_the_cap_is_checked_before_the_sign_in_and_csrf_checks(small_cap: int) -> None:
    browser = Client(enforce_csrf_checks=True)

    response = browser.post("/graphs/flow/edit/json/", {"text": "x" * small_cap})

    assert_plain_413_page(response)


def test_an_htmx_post_over_the_cap_is_refused_the_same_way(
    author_client: Client, small_cap: int, flow: Document
) -> None:
    response = author_client.post(
        "/graphs/flow/edit/json/",
        {"text": "x" * small_cap, "revision": "1"},
        headers={"HX-Request": "true"},
    )

    assert_plain_413_page(response)
    flow.refresh_from_db()
    assert flow.draft.text == "{}"


def test_an_uploaded_file_over_the_cap_is_refused_and_nothing_is_imported(
    author_client: Client, small_cap: int
) -> None:
    upload = SimpleUploadedFile("big.json", b"{" + b" " * small_cap + b"}")

    response = author_client.post("/import/", {"file": upload})

    assert_plain_413_page(response)
    assert not Document.objects.exists()


def test_a_form_post_at_the_cap_is_read(author_client: Client, small_cap: int) -> None:
    prefix = b"text="
    body = prefix + b"%20" * ((small_cap - len(prefix)) // 3)
    body += b" " * (small_cap - len(body))
    assert len(body) == small_cap

    response = author_client.generic(
        "POST", "/import/", body, content_type="application/x-www-form-urlencoded"
    )

    assert response.status_code == 200
    assert "Choose a file or paste a graph document." in response.content.decode()


def test_the_api_answers_the_same_cap_in_its_envelope(author: User, small_cap: int) -> None:
    response = bearer_caller(author).post("/v1/graphs", b" " * (small_cap + 1))

    assert response.status_code == 413
    assert error_of(response)["code"] == "payload_too_large"


def test_djangos_own_caps_follow_gatehouses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEHOUSE_MAX_BODY_BYTES", "1234567")

    values = runpy.run_path(str(Path(django_settings.BASE_DIR) / "editor" / "settings.py"))

    assert values["GATEHOUSE_MAX_BODY_BYTES"] == 1234567
    assert values["DATA_UPLOAD_MAX_MEMORY_SIZE"] == 1234567
    assert values["FILE_UPLOAD_MAX_MEMORY_SIZE"] == 1234567
