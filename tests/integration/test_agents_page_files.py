"""``/agents/``: **New agent from an agent file**, the reference's file pasted as it is, its
``[[mcp_servers]]`` matched against the operator's catalogue (docs/registries.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.models import AgentDefinition
from editor.services import installation
from tests.integration.api.callers import make_user
from tests.integration.mcp.examples import EXAMPLES, example_catalogue, hashes_named_by_graphs
from tests.reference_examples import needs_examples

pytestmark = [
    pytest.mark.django_db,
    needs_examples(),
]

HTMX = {"HX-Request": "true"}
NOTIFY = EXAMPLES / "payroll" / "agents" / "notify-summary.toml"


@pytest.fixture
def author_client(client: Client, author: User, settings: Any, tmp_path: Path) -> Iterator[Client]:
    settings.GATEHOUSE_LLM_ENV_ALLOW = ["SALVOR_DEMO_BASE_URL"]
    settings.GATEHOUSE_MCP_SERVERS = str(example_catalogue(tmp_path)[0])
    installation.reset()
    client.force_login(author)
    try:
        yield client
    finally:
        installation.reset()


def test_an_author_registers_an_example_agent_file_under_the_hash_its_graph_names(
    author_client: Client,
) -> None:
    response = author_client.post("/agents/", {"source": NOTIFY.read_text()}, follow=True)

    stored = AgentDefinition.objects.get()
    assert {stored.hash} == hashes_named_by_graphs(NOTIFY.parent.parent)
    assert stored.format == "toml" and stored.name == "notify-summary"
    page = response.content.decode()
    assert f"Agent “notify-summary” stored as {stored.hash}" in page
    assert "<code>pay_employee</code>, <code>pull_roster</code>" in page


def test_a_file_naming_a_server_outside_the_catalogue_is_shown_beside_the_field(
    author_client: Client,
) -> None:
    text = NOTIFY.read_text().replace("examples/payroll/server.py", "/tmp/mine.py")

    response = author_client.post("/agents/", {"source": text}, headers=HTMX)

    assert response.status_code == 200
    fragment = response.content.decode()
    assert fragment.lstrip().startswith('<section class="card" id="agent-file">')
    assert "mcp_servers[0]: `[[mcp_servers]]` entry 1 (`python3 /tmp/mine.py`) matches no" in (
        fragment
    )
    assert "The catalogue has `disputes`, `payroll`" in fragment
    assert not AgentDefinition.objects.exists()


def test_the_page_offers_the_agent_file_form_to_authors_only(
    author_client: Client,
) -> None:
    assert "New agent from an agent file" in author_client.get("/agents/").content.decode()
    author_client.force_login(make_user("noel"))

    assert "New agent from an agent file" not in author_client.get("/agents/").content.decode()
    refused = author_client.post("/agents/", {"source": NOTIFY.read_text()})
    assert refused.status_code == 403
