"""Fixtures shared by the page tests."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.integration.api.callers import make_user


@pytest.fixture
def author(db: None) -> User:
    """A signed-up user in the *authors* group."""
    return make_user("ada", "authors")


@pytest.fixture
def operator(db: None) -> User:
    """A signed-up user in the *operators* group (starts and abandons runs)."""
    return make_user("otto", "operators")


@pytest.fixture
def approver(db: None) -> User:
    """A signed-up user in the *approvers* group (resolves gates)."""
    return make_user("april", "approvers")


@pytest.fixture
def author_client(client: Client, author: User) -> Client:
    """The test client, signed in as :func:`author`."""
    client.force_login(author)
    return client
