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
def author_client(client: Client, author: User) -> Client:
    """The test client, signed in as :func:`author`."""
    client.force_login(author)
    return client
