"""An agent registered from an agent file with ``[[mcp_servers]]`` calls its tools on the
catalogue's server, driven by a real ``db_worker``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction

from editor.models import Run
from editor.services import agents, installation
from editor.tasks import enqueue_run
from tests.integration.mcp.examples import example_catalogue
from tests.integration.mcp.servers import processes_marked, wait_until
from tests.integration.runs.starting import start
from tests.reference_examples import needs_examples

pytestmark = [
    pytest.mark.django_db(transaction=True),
    needs_examples(),
]

SUMMARY = {"tool_calls": [{"name": "send_summary", "arguments": {"message": "all paid"}}]}
AGENT_FILE = f"""\
name = "summary-writer"
model = "scripted"
system_prompt = "Write the summary."

[options]
replies = [{json.dumps(json.dumps(SUMMARY))}, "The notice went out."]

[[mcp_servers]]
command = "python3"
args = ["examples/payroll/server.py"]
effect_overrides = {{ send_summary = "write" }}
"""


@pytest.fixture
def catalogue(tmp_path: Path, settings: Any) -> Iterator[str]:
    path, marker = example_catalogue(tmp_path)
    settings.GATEHOUSE_MCP_SERVERS = str(path)
    installation.reset()
    try:
        yield marker
    finally:
        installation.reset()


def test_an_agent_files_tool_call_runs_on_the_catalogue_server(
    catalogue: str, author: User, tmp_path: Path, work_the_queue: Callable[[], str]
) -> None:
    agent = agents.create_agent(author, AGENT_FILE, "application/toml").agent
    graph = {
        "schema_version": 1,
        "nodes": [{"kind": "agent", "payload": {"id": "notify", "agent_hash": agent}}],
        "edges": [],
    }
    run_id = start(graph, {"paid": 12})

    with transaction.atomic():
        enqueue_run(run_id)
    work_the_queue()

    run = Run.objects.get(pk=run_id)
    assert run.state == "completed", run.status
    notices = (tmp_path / "payroll-notices.json").read_text().splitlines()
    assert [json.loads(line) for line in notices] == [{"message": "all paid"}]
    # The call ran on this process's session with the catalogue's server, stopped with it.
    assert len(processes_marked(catalogue)) == 1
    installation.reset()
    assert wait_until(lambda: processes_marked(catalogue) == [])
