"""``/tools/``: the tool registry with each tool's description, effect and schemas (spec 06)."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.integration.api.callers import make_user
from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader_client(client: Client) -> Client:
    client.force_login(make_user("noel"))
    return client


def test_it_lists_every_registered_tool_with_its_effect_and_state(reader_client: Client) -> None:
    response = reader_client.get("/tools/")

    page = response.content.decode()
    assert response.status_code == 200
    for name in ("echo", "template", "pick", "merge", "score_text", "http_request"):
        assert f"<h2><code>{name}</code>" in page
    assert "Returns its input unchanged." in page
    assert "effect: read" in page
    assert "✓ enabled" in page
    assert_no_inline_script(page)


def test_it_shows_the_schemas_as_indented_escaped_json(reader_client: Client) -> None:
    page = reader_client.get("/tools/").content.decode()

    assert "<h3>Input schema</h3>" in page
    assert "&quot;required&quot;: [\n    &quot;template&quot;\n  ]" in page


def test_the_navigation_links_runs_agents_and_tools(reader_client: Client) -> None:
    page = reader_client.get("/tools/").content.decode()

    assert '<a href="/runs/">Runs</a>' in page
    assert '<a href="/agents/">Agents</a>' in page
    assert '<a href="/tools/" aria-current="page">Tools</a>' in page
