"""Fixtures for the ``/v1`` tests: the three actors and their callers (see ``callers``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.integration.api.callers import Caller, bearer_caller, make_user


@pytest.fixture
def author(db: None) -> User:
    return make_user("ada", "authors")


@pytest.fixture
def approver(db: None) -> User:
    return make_user("april", "approvers")


@pytest.fixture
def nobody(db: None) -> User:
    return make_user("noel")


@pytest.fixture
def api(author: User) -> Caller:
    """The author, with an API token."""
    return bearer_caller(author)


@pytest.fixture
def reader(nobody: User) -> Caller:
    """A signed-in user with no role, with an API token."""
    return bearer_caller(nobody)


@pytest.fixture
def anonymous(db: None) -> Caller:
    return Caller(Client())


@pytest.fixture
def new_document(api: Caller) -> Callable[..., dict[str, Any]]:
    """Create a document as the author: its JSON object."""

    def create(title: str = "Approval flow", text: Any = "", **fields: Any) -> dict[str, Any]:
        if not isinstance(text, str):
            text = json.dumps(text)
        response = api.post("/v1/documents", {"title": title, "text": text, **fields})
        assert response.status_code == 201, response.content
        return response.json()

    return create
