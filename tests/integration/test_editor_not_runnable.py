"""The editor's "not runnable here" notices (spec 02, run-time resolution; spec 06, Editor):
shown apart from the errors, not counted, and freezing stays possible."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.models import Draft
from editor.services import agents, documents
from tests.integration.test_editor_page import HX, node_form_data

pytestmark = pytest.mark.django_db

UNKNOWN_AGENT = "sha256:" + "a" * 64


@pytest.fixture
def flow(author) -> str:
    text = json.dumps(wire_value(approval_gate(UNKNOWN_AGENT)), indent=2) + "\n"
    documents.create_document(author, title="Approval flow", slug="flow", text=text)
    return "flow"


def test_an_unknown_agent_is_a_notice_that_does_not_block_freezing(
    author_client: Client, flow: str
) -> None:
    page = author_client.get("/graphs/flow/").content.decode()

    assert "No errors · this graph can be frozen" in page
    assert "Not runnable here" in page
    assert f"agent node `write`: no agent registered for hash `{UNKNOWN_AGENT}`" in page
    assert 'data-code="unknown_agent"' in page


def test_a_tool_name_this_installation_lacks_appears_as_a_notice_after_an_edit(
    author_client: Client, author, flow: str
) -> None:
    stored = agents.create_agent(author, json.dumps({"model": "echo", "prompt": "write"}))
    draft = Draft.objects.get(document__slug="flow")
    draft.text = draft.text.replace(UNKNOWN_AGENT, stored.agent)
    draft.save()
    assert "Not runnable here" not in author_client.get("/graphs/flow/").content.decode()

    answer = author_client.post(
        "/graphs/flow/edit/node/", node_form_data("publish", tool="eccho"), **HX
    ).content.decode()

    assert "Not runnable here" in answer
    assert "tool node `publish`: no tool registered under the name `eccho`" in answer
    assert "did you mean `echo`?" in answer
    assert "No errors · this graph can be frozen" in answer
