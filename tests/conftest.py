"""Shared test set-up.

The environment the settings are read from (DEBUG off, a test SECRET_KEY, ALLOWED_HOSTS) is set
by pytest-env from ``[tool.pytest_env]`` in pyproject.toml, before Django reads its settings.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings
from pytest_django import Settings


@pytest.fixture(autouse=True, scope="session")
def _fast_test_settings() -> Iterator[None]:
    """Settings that only make the suite faster or independent of build steps.

    Production serves hashed file names from the manifest `collectstatic` writes; the tests
    do not collect static files, so they use the plain storage and WhiteNoise serves them
    from static/ as it does for the development server. Password hashing is made cheap
    because tests sign in many times.
    """
    with override_settings(
        STORAGES={
            "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
            "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        },
        WHITENOISE_USE_FINDERS=True,
        WHITENOISE_AUTOREFRESH=True,
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
    ):
        yield


@pytest.fixture(autouse=True)
def _fresh_graph_choices() -> None:
    """Each test's inbox offers the graphs it made: a process keeps the graph filter's choices
    for a few seconds (``editor.services.inbox.graphs``), across tests otherwise."""
    from editor.services.inbox import forget_graph_choices

    forget_graph_choices()


@pytest.fixture
def admin_password_file(settings: Settings, tmp_path: Path) -> Path:
    """Keep the first user's password file in a temporary directory, not in var/."""
    path = tmp_path / "var" / "admin-password"
    settings.GATEHOUSE_ADMIN_PASSWORD_FILE = path
    return path


@pytest.fixture
def ensured_admin(db: None, admin_password_file: Path) -> tuple[str, str]:
    """The first user, created as on a first start: its username and password."""
    call_command("ensure_admin", stdout=io.StringIO())
    return "admin", admin_password_file.read_text(encoding="utf-8").strip()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "reference_examples_missing(message): the reference's examples are absent while "
        "GATEHOUSE_TEST_EXPECT_EXAMPLES=1 says they must be here (tests/reference_examples.py)",
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    missing = item.get_closest_marker("reference_examples_missing")
    if missing is not None:
        pytest.fail(missing.args[0], pytrace=False)
