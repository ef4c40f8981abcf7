"""With the database unreachable a browser gets a plain page that says so (503), never a
traceback; any other failure gets a plain 500 page. The API's ``503 unavailable`` is covered
with its other errors in ``api/test_errors.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.db import InterfaceError, OperationalError, connection
from django.test import Client

from tests.integration.api.callers import bearer_caller, error_of

UNAVAILABLE = "Gatehouse cannot reach its database right now; try again in a moment."

Down = Callable[[type[Exception]], AbstractContextManager[Any]]


@pytest.fixture
def database_down() -> Down:
    """Every query fails as it does when the database server is unreachable."""

    def down(error: type[Exception]) -> AbstractContextManager[Any]:
        def refuse(*args: Any) -> None:
            raise error("could not connect to server: Connection refused")

        return connection.execute_wrapper(refuse)

    return down


@pytest.fixture
def browser(author: User) -> Iterator[Client]:
    """A signed-in browser that sees the pages a person would, not the test's exceptions."""
    client = Client(raise_request_exception=False)
    client.force_login(author)
    yield client


def assert_plain_page(response: Any, status: int, text: str) -> None:
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert text in page
    assert "Traceback" not in page
    assert "OperationalError" not in page
    assert "Connection refused" not in page


@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
@pytest.mark.parametrize("path", ["/", "/runs/", "/inbox/", "/graphs/flow/", "/account/"])
def test_a_page_says_the_database_is_unreachable(
    browser: Client, database_down: Down, error: type[Exception], path: str
) -> None:
    with database_down(error):
        response = browser.get(path)

    assert_plain_page(response, 503, UNAVAILABLE)
    assert response["Retry-After"] == "5"


def test_a_form_post_says_the_database_is_unreachable(browser: Client, database_down: Down) -> None:
    with database_down(OperationalError):
        response = browser.post("/new/", {"title": "Flow", "template": "blank"})

    assert_plain_page(response, 503, UNAVAILABLE)


def test_signing_in_says_the_database_is_unreachable(db: None, database_down: Down) -> None:
    browser = Client(raise_request_exception=False)

    with database_down(OperationalError):
        form = browser.get("/accounts/login/")
        response = browser.post("/accounts/login/", {"username": "ada", "password": "secret"})

    assert form.status_code == 200
    assert_plain_page(response, 503, UNAVAILABLE)


def test_the_health_check_answers_without_the_database(db: None, database_down: Down) -> None:
    with database_down(OperationalError):
        response = Client().get("/healthz")

    assert response.status_code == 200


def test_the_api_answers_in_its_envelope(author: User, database_down: Down) -> None:
    api = bearer_caller(author)

    with database_down(OperationalError):
        response = api.get("/v1/graphs")

    assert response.status_code == 503
    assert error_of(response)["code"] == "unavailable"


def test_the_pages_work_again_once_the_database_is_back(
    browser: Client, database_down: Down
) -> None:
    with database_down(OperationalError):
        assert browser.get("/").status_code == 503

    assert browser.get("/").status_code == 200


def test_any_other_failure_gets_a_plain_500_page(browser: Client) -> None:
    with mock.patch(
        "editor.views.graphs.documents.list_documents", side_effect=RuntimeError("boom")
    ):
        response = browser.get("/")

    assert_plain_page(response, 500, "Gatehouse could not answer this request.")
    assert "boom" not in response.content.decode()


def test_the_error_page_is_still_plain_when_its_template_cannot_be_drawn(
    browser: Client, database_down: Down
) -> None:
    with (
        database_down(OperationalError),
        mock.patch("editor.views.errors.render_to_string", side_effect=ValueError("no manifest")),
    ):
        response = browser.get("/")

    assert_plain_page(response, 503, UNAVAILABLE)
