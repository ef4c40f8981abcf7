"""An installation whose tools cannot be built (a bad ``GATEHOUSE_MCP_SERVERS``): the web server
refuses to start naming what is wrong, and a process already serving answers ``503`` where the
registry is needed, never a ``500`` (docs/operations.md, *MCP servers*)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from editor.apps import settle_start_up
from editor.services import installation
from tests.integration.api.callers import Caller

pytestmark = pytest.mark.django_db

#: A catalogue entry with both transports: refused entry by entry.
BOTH_TRANSPORTS = '[servers.clash]\ncommand = "python3"\nurl = "https://tools.example.com/mcp"\n'


@pytest.fixture
def bad_catalogue(settings: Any, tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "mcp.toml"
    path.write_text(BOTH_TRANSPORTS, encoding="utf-8")
    settings.GATEHOUSE_MCP_SERVERS = str(path)
    installation.reset()
    try:
        yield path
    finally:
        installation.reset()


def test_the_web_server_does_not_start_with_a_catalogue_it_cannot_read(
    bad_catalogue: Path,
) -> None:
    with pytest.raises(ImproperlyConfigured) as refused:
        settle_start_up()

    assert "GATEHOUSE_MCP_SERVERS" in str(refused.value)
    assert "`clash`" in str(refused.value)


def test_the_tools_api_answers_503_naming_no_detail_while_the_catalogue_is_bad(
    reader: Caller, bad_catalogue: Path
) -> None:
    answer = reader.get("/v1/tools")

    assert answer.status_code == 503
    error = answer.json()["error"]
    assert error["code"] == "unavailable"
    assert "misconfigured" in error["message"]
    assert "clash" not in error["message"]


def test_the_tools_page_answers_503_while_the_catalogue_is_bad(
    client: Client, django_user_model: Any, bad_catalogue: Path
) -> None:
    client.raise_request_exception = False
    client.force_login(django_user_model.objects.create_user("reader"))

    answer = client.get("/tools/")

    assert answer.status_code == 503
    assert "misconfigured" in answer.content.decode()
