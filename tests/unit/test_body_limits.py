"""The route → cap table (``editor.body_limits``): a route that takes little has a small cap,
and no cap is over ``GATEHOUSE_MAX_BODY_BYTES``."""

from __future__ import annotations

import pytest
from django.test import RequestFactory
from pytest_django import Settings

from editor.body_limits import (
    AGENT_BYTES,
    NO_BODY_BYTES,
    REFUSED,
    SIGN_IN_BYTES,
    cap_for,
    declared_length,
    refused_cap,
)

DOCUMENT_CAP = 8 * 1024 * 1024


@pytest.mark.parametrize(
    ("method", "path", "cap"),
    [
        ("POST", "/v1/graphs", DOCUMENT_CAP),
        ("PUT", "/v1/documents/flow/draft", DOCUMENT_CAP),
        ("POST", "/graphs/flow/edit/json/", DOCUMENT_CAP),
        ("POST", "/import/", DOCUMENT_CAP),
        ("POST", "/v1/agents", AGENT_BYTES),
        ("POST", "/agents/", AGENT_BYTES),
        ("POST", "/accounts/login/", SIGN_IN_BYTES),
        ("POST", "/account/password/", SIGN_IN_BYTES),
        ("POST", "/account/tokens/", SIGN_IN_BYTES),
        ("POST", "/account/tokens/12/revoke/", SIGN_IN_BYTES),
        ("POST", "/admin/login/", SIGN_IN_BYTES),
        ("POST", "/healthz", NO_BODY_BYTES),
        ("GET", "/healthz", NO_BODY_BYTES),
        ("GET", "/v1/graphs", NO_BODY_BYTES),
        ("get", "/", NO_BODY_BYTES),
        ("DELETE", "/v1/documents/flow", NO_BODY_BYTES),
    ],
)
def test_each_route_has_its_cap(method: str, path: str, cap: int) -> None:
    assert cap_for(method, path) == cap


def test_an_agent_file_may_be_256_kib_with_its_form_around_it() -> None:
    assert 256 * 1024 < AGENT_BYTES <= 256 * 1024 + 16 * 1024


def test_no_cap_is_over_the_document_cap(settings: Settings) -> None:
    settings.GATEHOUSE_MAX_BODY_BYTES = 100
    assert cap_for("POST", "/v1/agents") == 100
    assert cap_for("POST", "/accounts/login/") == 100
    assert cap_for("POST", "/v1/graphs") == 100
    assert cap_for("GET", "/") == 100


@pytest.mark.parametrize(
    ("headers", "length"),
    [
        ([(b"content-length", b"42")], 42),
        ([(b"Content-Length", b"7")], 7),
        ([(b"content-type", b"text/plain")], 0),
        ([(b"content-length", b"lots")], 0),
        ([(b"content-length", b"-5")], 0),
    ],
)
def test_the_declared_length_is_read_as_django_reads_it(
    headers: list[tuple[bytes, bytes]], length: int
) -> None:
    assert declared_length(headers) == length


def test_a_request_over_its_routes_declared_cap_is_refused() -> None:
    factory = RequestFactory()
    over = factory.post("/accounts/login/", "x" * (SIGN_IN_BYTES + 1), content_type="text/plain")
    within = factory.post("/accounts/login/", "x" * SIGN_IN_BYTES, content_type="text/plain")
    assert refused_cap(over) == SIGN_IN_BYTES
    assert refused_cap(within) is None


def test_a_request_the_handler_marked_is_refused_whatever_it_declares() -> None:
    request = RequestFactory().post("/v1/graphs", "{}", content_type="application/json")
    request.scope = {REFUSED: 1234}  # type: ignore[attr-defined]
    assert refused_cap(request) == 1234
