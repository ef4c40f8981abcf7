"""One error envelope for everything under ``/v1/``, and no 500 for any input.

Framework failures (an unknown route, a wrong method, a body of the wrong shape, a body over
the cap, the database gone) come in the same ``{"error": {"code", "message", "details"?}}``
as the API's own, never as an HTML page or a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import InterfaceError, OperationalError, connection
from pytest_django import Settings

from editor.models import AgentDefinition, Document, Draft, FrozenGraph
from tests.integration.api.callers import GRAPH, Caller, error_of, session_caller

pytestmark = pytest.mark.django_db

CAP = 4096

#: Every operation that takes a body: (method, path, extra headers).
BODY_OPERATIONS = [
    ("POST", "/v1/graphs", {}),
    ("POST", "/v1/graphs/validate", {}),
    ("POST", "/v1/documents", {}),
    ("PUT", "/v1/documents/flow/draft", {"If-Match": '"1"'}),
    ("POST", "/v1/documents/flow/freeze", {"If-Match": '"1"'}),
    ("POST", "/v1/agents", {}),
]

#: Bodies that are not what any operation takes.
HOSTILE_BODIES: dict[str, bytes] = {
    "not-json": b"definitely not json",
    "not-utf8": b"\xff\xfe\xfa",
    "deep-arrays": b"[" * 100_000,
    "deep-objects": b'{"a":' * 50_000,
    "deep-inside-text": b'{"text": ' + b"[" * 10_000 + b"]" * 10_000 + b"}",
    "lone-surrogate": b'{"title": "\\ud800", "text": "\\udfff"}',
    "huge-number": b'{"title": 1e99999, "text": 123456789012345678901234567890}',
    "nan": b'{"title": NaN}',
    "duplicate-keys": b'{"title": "a", "title": "b"}',
    "bom": "\ufeff{}".encode(),
    "null": b"null",
    "array": b"[1, 2, 3]",
    "nul-bytes": b'{"title": "a\\u0000b", "text": "\\u0000", "note": "\\u0000"}',
    "nul-in-ids": json.dumps(
        {"schema_version": 1, "nodes": [{"kind": "tool", "payload": {"id": "a\0", "tool": "t"}}]}
    ).encode(),
    "binary": bytes(range(256)) * 4,
}


@pytest.fixture
def flow(author: User) -> None:
    from editor.services import documents

    documents.create_document(author, title="Flow", slug="flow", text=json.dumps(GRAPH))


@pytest.fixture
def small_cap(settings: Settings) -> int:
    settings.GATEHOUSE_MAX_BODY_BYTES = CAP
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = CAP
    return CAP


# --- Unknown routes and wrong methods -------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/v1/", "/v1/nothing", "/v1/graphs/", "/v1/graphs/a/b/c", "/v1/documents/x/y/z"]
)
@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
def test_an_unknown_route_is_404_not_found(api: Caller, path: str, method: str) -> None:
    response = api.request(method, path)

    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


def test_an_unknown_route_is_404_even_without_credentials(anonymous: Caller) -> None:
    response = anonymous.get("/v1/no/such/thing")

    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/v1/graphs", {"GET", "POST"}),
        ("PUT", "/v1/graphs/validate", {"POST"}),
        ("PATCH", "/v1/documents/flow/draft", {"GET", "PUT"}),
        ("GET", "/v1/documents/flow/freeze", {"POST"}),
        ("DELETE", "/v1/agents", {"GET", "POST"}),
        ("POST", "/v1/schema/graph.json", {"GET"}),
    ],
)
def test_a_wrong_method_is_405_method_not_allowed(
    api: Caller, method: str, path: str, allowed: set[str]
) -> None:
    response = api.request(method, path)

    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"
    assert {item.strip() for item in response["Allow"].split(",")} == allowed


# --- Bodies ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "headers"), BODY_OPERATIONS)
@pytest.mark.parametrize("kind", list(HOSTILE_BODIES))
def test_no_body_makes_any_operation_fail_with_a_500(
    api: Caller, flow: None, method: str, path: str, headers: dict[str, str], kind: str
) -> None:
    response = api.request(method, path, HOSTILE_BODIES[kind], headers=headers)

    assert response.status_code < 500, response.content
    if response.status_code >= 400:
        assert error_of(response)["code"] in {
            "bad_request",
            "invalid_graph",
            "invalid_agent",
            "stale_draft",
        }


@pytest.mark.parametrize(("method", "path", "headers"), BODY_OPERATIONS)
@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/x-www-form-urlencoded", b"title=Flow&text=x"),
        ("multipart/form-data; boundary=xyz", b"--xyz\r\nContent-Disposition: form-data"),
        ("multipart/form-data", b"no boundary at all"),
        ("text/html", b"<h1>hello</h1>"),
        ("application/json; charset=latin-1", b'{"title": "cafe"}'),
    ],
    ids=["form", "multipart", "multipart-no-boundary", "html", "latin-1"],
)
@pytest.mark.parametrize("via", ["bearer", "session"])
def test_a_wrong_content_type_never_makes_a_500(
    api: Caller,
    author: User,
    flow: None,
    method: str,
    path: str,
    headers: dict[str, str],
    content_type: str,
    body: bytes,
    via: str,
) -> None:
    caller = api if via == "bearer" else session_caller(author)

    response = caller.request(method, path, body, content_type=content_type, headers=headers)

    assert response.status_code < 500, response.content
    if response.status_code >= 400:
        error_of(response)


def test_a_body_of_the_wrong_shape_is_400_bad_request_with_the_field_errors(api: Caller) -> None:
    response = api.post("/v1/documents", {"title": ["not", "a", "string"], "slug": 7})

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad_request"
    locations = sorted(tuple(item["loc"]) for item in error["details"]["errors"])
    assert locations == [("body", "slug"), ("body", "title")]
    for item in error["details"]["errors"]:
        assert item["message"]


def test_text_the_database_cannot_store_is_refused_on_every_database(
    api: Caller, flow: None
) -> None:
    document = api.post("/v1/documents", {"title": "ok", "text": "a\0b"})
    draft = api.put("/v1/documents/flow/draft", {"text": "\0"}, headers={"If-Match": '"1"'})
    agent = api.post("/v1/agents", {"model": "echo", "prompt": "\0"})

    assert (document.status_code, draft.status_code, agent.status_code) == (400, 400, 400)
    assert error_of(document)["details"] == {"field": "text"}
    assert error_of(agent)["code"] == "invalid_agent"
    assert Document.objects.count() == 1
    assert Draft.objects.get().revision == 1
    assert not AgentDefinition.objects.exists()


# --- The size cap ----------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "headers"), BODY_OPERATIONS)
def test_a_body_over_the_cap_is_413_before_it_is_read(
    api: Caller,
    small_cap: int,
    flow: None,
    method: str,
    path: str,
    headers: dict[str, str],
) -> None:
    response = api.request(method, path, b"x" * (small_cap + 1), headers=headers)

    assert response.status_code == 413
    error = error_of(response)
    assert error["code"] == "payload_too_large"
    assert error["details"] == {"limit": small_cap}


def test_the_cap_is_checked_before_credentials(anonymous: Caller, small_cap: int) -> None:
    response = anonymous.post("/v1/graphs", b"x" * (small_cap + 1))

    assert response.status_code == 413


def test_a_body_at_the_cap_is_read(api: Caller, small_cap: int) -> None:
    body = json.dumps(GRAPH).encode()
    padded = body + b" " * (small_cap - len(body))

    response = api.post("/v1/graphs/validate", padded)

    assert response.status_code == 200
    assert response.json()["valid"] is True


def test_a_body_over_djangos_own_limit_is_413_too(api: Caller, settings: Settings) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100

    graphs = api.post("/v1/graphs", b" " * 101)
    documents = api.post("/v1/documents", b" " * 101)

    for response in (graphs, documents):
        assert response.status_code == 413
        assert error_of(response)["code"] == "payload_too_large"


def test_a_malformed_content_length_reads_no_body(api: Caller) -> None:
    response = api.client.post(
        "/v1/graphs/validate",
        data=b"{}",
        content_type="application/json",
        headers=api.headers,
        CONTENT_LENGTH="ten",
    )

    assert response.status_code == 200
    assert response.json()["valid"] is False


# --- The database gone -----------------------------------------------------------------------


@pytest.fixture
def database_down() -> Callable[[type[Exception]], Any]:
    """Every query fails as it would with the database server unreachable."""

    def down(error: type[Exception]) -> Any:
        def refuse(*args: Any) -> None:
            raise error("could not connect to server: Connection refused")

        return connection.execute_wrapper(refuse)

    return down


@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
@pytest.mark.parametrize("via", ["bearer", "session"])
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/v1/graphs"), ("POST", "/v1/graphs"), ("GET", "/v1/documents/flow/draft")],
)
def test_the_database_unreachable_is_503_unavailable(
    api: Caller,
    author: User,
    database_down: Callable[[type[Exception]], Any],
    error: type[Exception],
    via: str,
    method: str,
    path: str,
) -> None:
    caller = api if via == "bearer" else session_caller(author)

    with database_down(error):
        response = caller.request(method, path, GRAPH if method == "POST" else None)

    assert response.status_code == 503
    assert error_of(response)["code"] == "unavailable"


def test_the_openapi_document_answers_503_without_the_database(
    api: Caller, database_down: Callable[[type[Exception]], Any]
) -> None:
    with database_down(OperationalError):
        response = api.get("/v1/openapi.json")

    assert response.status_code == 503
    assert error_of(response)["code"] == "unavailable"


# --- Anything else ---------------------------------------------------------------------------


@pytest.fixture
def broken_service(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def fail(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a bug, with a secret in its message")

    monkeypatch.setattr("editor.services.documents.graphs.list_graphs", fail)
    yield


def test_an_unexpected_failure_is_a_500_envelope_without_a_traceback(
    api: Caller, broken_service: None, caplog: pytest.LogCaptureFixture
) -> None:
    response = api.get("/v1/graphs")

    assert response.status_code == 500
    error = error_of(response)
    assert error["code"] == "internal_error"
    assert "secret" not in response.content.decode()
    assert "Traceback" not in response.content.decode()
    assert "a bug" in caplog.text


def test_nothing_under_v1_is_stored_by_a_refused_request(api: Caller) -> None:
    api.post("/v1/graphs", b"[")
    api.post("/v1/agents", b"[")

    assert not FrozenGraph.objects.exists()
    assert not AgentDefinition.objects.exists()
