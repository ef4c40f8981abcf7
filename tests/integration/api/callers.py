"""Helpers for the ``/v1`` tests: documents to send, callers, the error envelope.

* ``author``: in the *authors* group (may write);
* ``approver``: in the *approvers* group (may read and validate, not write here);
* ``nobody``: signed in, no role.

A :class:`Caller` sends requests as one of them. A session caller enforces CSRF like a
browser and sends the token with its writes unless told not to.
"""

from __future__ import annotations

import json
import secrets
import string
from itertools import pairwise
from typing import Any

from django.contrib.auth.models import Group, User
from django.http import HttpResponse
from django.test import Client

from editor.services.tokens import create_token

#: A small valid graph: research -> approve.
GRAPH = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "research", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "approve", "tool": "echo"}},
    ],
    "edges": [{"from": "research", "to": "approve"}],
}

#: The reference's example of an invalid graph: an edge to a node that does not exist.
DANGLING = {
    "schema_version": 1,
    "nodes": [{"kind": "tool", "payload": {"id": "approve", "tool": "echo"}}],
    "edges": [{"from": "approve", "to": "ghost"}],
}


def graph_with(*ids: str) -> dict[str, Any]:
    """A valid graph: a chain of echo tools with these ids."""
    return {
        "schema_version": 1,
        "nodes": [{"kind": "tool", "payload": {"id": node, "tool": "echo"}} for node in ids],
        "edges": [{"from": a, "to": b} for a, b in pairwise(ids)],
    }


def as_bytes(body: Any) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body).encode("utf-8")


class Caller:
    """Sends requests to ``/v1`` as one user (or as no one)."""

    def __init__(self, client: Client, headers: dict[str, str] | None = None) -> None:
        self.client = client
        self.headers = headers or {}

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> HttpResponse:
        all_headers = {**self.headers, **(headers or {})}
        send = getattr(self.client, method.lower())
        if body is None:
            return send(path, headers=all_headers)
        return send(path, data=as_bytes(body), content_type=content_type, headers=all_headers)

    def get(self, path: str, **kwargs: Any) -> HttpResponse:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, body: Any = b"", **kwargs: Any) -> HttpResponse:
        return self.request("POST", path, body, **kwargs)

    def put(self, path: str, body: Any = b"", **kwargs: Any) -> HttpResponse:
        return self.request("PUT", path, body, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> HttpResponse:
        return self.request("DELETE", path, **kwargs)


def make_user(name: str, group: str | None = None) -> User:
    user = User.objects.create_user(name, password="not-used-by-these-tests")
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


def bearer_caller(user: User) -> Caller:
    _, token = create_token(user, "tests")
    return Caller(Client(), {"Authorization": f"Bearer {token}"})


def session_caller(user: User, *, with_csrf_token: bool = True) -> Caller:
    """A browser: signed in, CSRF enforced, the token sent back as X-CSRFToken."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    secret = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
    client.cookies["csrftoken"] = secret
    return Caller(client, {"X-CSRFToken": secret} if with_csrf_token else {})


def json_of(response: HttpResponse) -> Any:
    """The JSON body of an answer, streamed (a whole list) or not."""
    if response.streaming:
        return json.loads(b"".join(response.streaming_content))
    return response.json()


def error_of(response: HttpResponse) -> dict[str, Any]:
    """The ``error`` object of an envelope, checking the envelope's shape on the way."""
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) <= {"code", "message", "details"}, error
    assert isinstance(error["code"], str)
    assert isinstance(error["message"], str)
    assert error["message"]
    return error
