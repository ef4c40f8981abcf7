"""A service error that a page view lets through becomes the page
``editor.views.errors.service_error_page`` names, the same for every page: a missing thing is
a ``404``, a missing role a ``403``, a value no form sends a plain-text ``400`` that names it,
and anything else the plain ``500`` page. ``/v1`` keeps its own envelope."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.services.errors import (
    InvalidCursor,
    InvalidRequest,
    NotAllowed,
    ServiceError,
    StaleDraft,
    UnknownAgent,
    UnknownDocument,
    UnknownGraph,
    UnknownRun,
)
from editor.views.errors import NOT_FOUND, service_error_page
from tests.integration.api.callers import make_user


@pytest.fixture
def signed_in(author: User) -> Iterator[Client]:
    """A signed-in browser that sees the pages a person would, not the test's exceptions."""
    client = Client(raise_request_exception=False)
    client.force_login(author)
    yield client


def failing_home(error: Exception) -> mock._patch[mock.MagicMock]:
    """The graphs list, its service raising ``error``."""
    return mock.patch("editor.views.graphs.documents.list_documents", side_effect=error)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (UnknownRun("r"), 404),
        (UnknownGraph("sha256:00"), 404),
        (UnknownDocument("flow"), 404),
        (UnknownAgent("sha256:00"), 404),
        (NotAllowed(), 403),
    ],
)
def test_a_missing_thing_or_role_is_the_plain_404_or_403_page(
    signed_in: Client, error: ServiceError, status: int
) -> None:
    with failing_home(error):
        response = signed_in.get("/")

    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    assert "Traceback" not in response.content.decode()


def test_a_value_no_form_sends_is_a_400_that_names_it(signed_in: Client) -> None:
    with failing_home(InvalidRequest("`q` is not a search", "q")):
        response = signed_in.get("/")

    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode() == "`q` is not a search."


def test_a_subclass_is_answered_as_its_parent(signed_in: Client) -> None:
    with failing_home(InvalidCursor()):
        response = signed_in.get("/")

    assert response.status_code == 400
    assert response.content.decode() == "The cursor is not one this server handed out."


def test_htmx_gets_the_same_status(signed_in: Client) -> None:
    with failing_home(UnknownRun("r")):
        response = signed_in.get("/", headers={"HX-Request": "true"})

    assert response.status_code == 404


def test_an_error_the_table_does_not_name_is_the_plain_500_page(signed_in: Client) -> None:
    with failing_home(StaleDraft(3)):
        response = signed_in.get("/")

    assert response.status_code == 500
    assert "Gatehouse could not answer this request." in response.content.decode()


def test_every_missing_thing_says_what_is_missing_and_nothing_else_is_mapped() -> None:
    for cls, message in NOT_FOUND.items():
        assert issubclass(cls, ServiceError)
        assert message.startswith("No ") and message.endswith(".")
    assert service_error_page(mock.Mock(), RuntimeError("not a service error")) is None


def test_an_unknown_run_is_a_404_on_each_of_its_pages(signed_in: Client) -> None:
    run = uuid.uuid4()
    for path in ("", "events/?before=5", "events/3/", "log.jsonl", "node/?node=a"):
        assert signed_in.get(f"/runs/{run}/{path}").status_code == 404, path
    assert signed_in.post(f"/inbox/{run}/resolve/").status_code == 404


def test_a_person_without_the_role_gets_403_from_the_service(db: None) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(make_user("rita"))  # no role at all
    run = uuid.uuid4()

    assert client.post(f"/runs/{run}/again/").status_code == 403
    response = client.post(f"/runs/{run}/fork/", {"from_node": "a"})
    assert response.status_code == 403
    assert "Your roles do not allow this." in response.content.decode()


def test_the_404_page_says_what_is_missing(signed_in: Client) -> None:
    missing_run = signed_in.get(f"/runs/{uuid.uuid4()}/").content.decode()
    no_page = signed_in.get("/no/such/page/").content.decode()

    assert "No run has this id." in missing_run
    assert "There is nothing at this address." in no_page
    assert "Resolver404" not in no_page


def test_the_api_keeps_its_envelope(signed_in: Client) -> None:
    response = signed_in.get(f"/v1/runs/{uuid.uuid4()}")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_run"
