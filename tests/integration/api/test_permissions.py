"""Who may call what (spec 06): three actors, by session and by bearer token.

Authors may write; any signed-in user (an approver, or someone with no role) may read and
validate; nobody else may do anything. A session write must carry the CSRF token; a bearer
request need not.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from editor.models import AgentDefinition, Document, Draft, FrozenGraph, Version
from editor.services import documents
from editor.services.tokens import create_token
from tests.integration.api.callers import (
    GRAPH,
    Caller,
    bearer_caller,
    error_of,
    graph_with,
    session_caller,
)

pytestmark = pytest.mark.django_db

#: Every write: (method, path, body, headers, the author's status).
WRITES: dict[str, tuple[str, str, Any, dict[str, str], int]] = {
    "post-graph": ("POST", "/v1/graphs", GRAPH, {}, 201),
    "create-document": ("POST", "/v1/documents", {"title": "New one"}, {}, 201),
    "save-draft": (
        "PUT",
        "/v1/documents/flow/draft",
        {"text": json.dumps(graph_with("changed"))},
        {"If-Match": '"1"'},
        200,
    ),
    "freeze": ("POST", "/v1/documents/flow/freeze", {"note": "v1"}, {"If-Match": '"1"'}, 201),
    "post-agent": ("POST", "/v1/agents", {"model": "echo", "prompt": "hi"}, {}, 201),
}

READS = [
    "/v1/graphs",
    "/v1/graphs/{graph}",
    "/v1/graphs/{graph}/export",
    "/v1/schema/graph.json",
    "/v1/documents",
    "/v1/documents/flow",
    "/v1/documents/flow/draft",
    "/v1/documents/flow/versions",
    "/v1/documents/flow/diff?from=draft&to={graph}",
    "/v1/agents",
    "/v1/agents/{agent}",
]


@pytest.fixture
def world(author: User) -> dict[str, str]:
    """A document ``flow`` holding a valid draft, a stored graph and an agent."""
    documents.create_document(author, title="Flow", slug="flow", text=json.dumps(GRAPH))
    graph = bearer_caller(author).post("/v1/graphs", GRAPH).json()["graph"]
    agent = bearer_caller(author).post("/v1/agents", {"model": "echo", "prompt": ""}).json()
    return {"graph": graph, "agent": agent["agent"]}


def stored_state() -> tuple[Any, ...]:
    """Everything the writes could change."""
    return (
        FrozenGraph.objects.count(),
        Document.objects.count(),
        list(Draft.objects.values_list("text", "revision")),
        Version.objects.count(),
        list(AgentDefinition.objects.values_list("hash", "name")),
    )


def send(caller: Caller, write: str) -> Any:
    method, path, body, headers, _ = WRITES[write]
    return caller.request(method, path, body, headers=headers)


def actor_of(request: pytest.FixtureRequest, actor: str) -> User:
    return request.getfixturevalue(actor)


def caller_for(user: User, via: str) -> Caller:
    return session_caller(user) if via == "session" else bearer_caller(user)


@pytest.mark.parametrize("via", ["session", "bearer"])
@pytest.mark.parametrize("write", list(WRITES))
def test_an_author_may_write(
    request: pytest.FixtureRequest, world: dict[str, str], write: str, via: str
) -> None:
    caller = caller_for(actor_of(request, "author"), via)

    response = send(caller, write)

    assert response.status_code == WRITES[write][4], response.content


@pytest.mark.parametrize("via", ["session", "bearer"])
@pytest.mark.parametrize("actor", ["approver", "nobody"])
@pytest.mark.parametrize("write", list(WRITES))
def test_a_user_without_the_author_role_may_not_write(
    request: pytest.FixtureRequest, world: dict[str, str], write: str, actor: str, via: str
) -> None:
    caller = caller_for(actor_of(request, actor), via)
    before = stored_state()

    response = send(caller, write)

    assert response.status_code == 403
    assert error_of(response)["code"] == "forbidden"
    assert stored_state() == before


@pytest.mark.parametrize("write", list(WRITES))
def test_without_credentials_every_write_is_401(world: dict[str, str], write: str) -> None:
    before = stored_state()

    response = send(Caller(Client(enforce_csrf_checks=True)), write)

    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert stored_state() == before


@pytest.mark.parametrize("via", ["session", "bearer"])
@pytest.mark.parametrize("actor", ["author", "approver", "nobody"])
def test_any_signed_in_user_may_read_and_validate(
    request: pytest.FixtureRequest, world: dict[str, str], actor: str, via: str
) -> None:
    caller = caller_for(actor_of(request, actor), via)

    for path in READS:
        response = caller.get(path.format(**world))
        assert response.status_code == 200, (path, response.content)
    assert caller.post("/v1/graphs/validate", GRAPH).status_code == 200


@pytest.mark.parametrize("path", [*READS, "/v1/openapi.json"])
def test_without_credentials_every_read_is_401(
    anonymous: Caller, world: dict[str, str], path: str
) -> None:
    response = anonymous.get(path.format(**world))

    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"


def test_without_credentials_validate_is_401(anonymous: Caller) -> None:
    assert anonymous.post("/v1/graphs/validate", GRAPH).status_code == 401


@pytest.mark.parametrize("write", list(WRITES))
def test_a_session_write_without_the_csrf_token_is_403_csrf_failed(
    author: User, world: dict[str, str], write: str
) -> None:
    before = stored_state()

    response = send(session_caller(author, with_csrf_token=False), write)

    assert response.status_code == 403
    assert error_of(response)["code"] == "csrf_failed"
    assert stored_state() == before


def test_a_session_write_with_a_wrong_csrf_token_is_403_csrf_failed(author: User) -> None:
    caller = session_caller(author)
    caller.headers["X-CSRFToken"] = "x" * 32

    response = caller.post("/v1/graphs", GRAPH)

    assert response.status_code == 403
    assert error_of(response)["code"] == "csrf_failed"


def test_a_session_read_needs_no_csrf_token(author: User) -> None:
    response = session_caller(author, with_csrf_token=False).get("/v1/graphs")

    assert response.status_code == 200


def test_a_bearer_write_is_not_subject_to_csrf(author: User) -> None:
    _, token = create_token(author, "script")
    caller = Caller(Client(enforce_csrf_checks=True), {"Authorization": f"Bearer {token}"})

    assert caller.post("/v1/graphs", GRAPH).status_code == 201


@pytest.mark.parametrize(
    "header",
    [
        "Bearer gh_not-a-real-token",
        "Bearer ",
        "Basic YWRhOnNlY3JldA==",
        "gh_abc",
        "Bearer " + "x" * 500,
    ],
)
def test_a_bad_authorization_header_is_401(header: str, db: None) -> None:
    response = Caller(Client(), {"Authorization": header}).get("/v1/graphs")

    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"


def test_a_revoked_token_is_401(author: User) -> None:
    token, raw = create_token(author, "old")
    token.revoked_at = timezone.now()
    token.save()

    response = Caller(Client(), {"Authorization": f"Bearer {raw}"}).get("/v1/graphs")

    assert response.status_code == 401


def test_a_token_of_a_deactivated_user_is_401(author: User) -> None:
    _, raw = create_token(author, "old")
    author.is_active = False
    author.save()

    response = Caller(Client(), {"Authorization": f"Bearer {raw}"}).get("/v1/graphs")

    assert response.status_code == 401


def test_a_superuser_may_write_without_a_role(db: None) -> None:
    admin = User.objects.create_superuser("root", password="not-used")

    assert bearer_caller(admin).post("/v1/graphs", GRAPH).status_code == 201
