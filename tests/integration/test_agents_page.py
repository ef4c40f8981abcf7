"""``/agents/``: the stored agent definitions, and **New agent** for authors (spec 06)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.models import AgentDefinition
from editor.services import agents
from editor.services.errors import InvalidAgent
from tests.integration.api.callers import make_user
from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def reader_client(client: Client) -> Client:
    client.force_login(make_user("noel"))
    return client


def form(**fields: Any) -> dict[str, Any]:
    return {"name": "Writer", "model": "echo", "prompt": "Write.", **fields}


def test_it_lists_each_definition_with_its_full_hash_tools_and_budget(
    reader_client: Client, author: User
) -> None:
    definition = {
        "name": "Researcher",
        "model": "echo",
        "prompt": "Look it up.",
        "tools": ["echo", "pick"],
        "budget": {"max_steps": 4},
    }
    digest = agents.create_agent(author, json.dumps(definition)).agent

    response = reader_client.get("/agents/")

    page = response.content.decode()
    assert response.status_code == 200
    assert "Researcher" in page
    assert f'<code class="full-hash" id="hash-{digest[7:]}">{digest}</code>' in page
    assert f'data-copy="hash-{digest[7:]}"' in page
    assert "/static/js/copy.js" in page
    assert "<code>echo</code>, <code>pick</code>" in page
    assert "max_steps 4" in page
    assert_no_inline_script(page)


def test_a_reader_sees_the_list_without_the_form(reader_client: Client) -> None:
    page = reader_client.get("/agents/").content.decode()

    assert "New agent" not in page
    assert "Authors create them here." in page


def test_a_reader_cannot_create_an_agent(reader_client: Client) -> None:
    response = reader_client.post("/agents/", form())

    assert response.status_code == 403
    assert not AgentDefinition.objects.exists()


def test_an_author_sees_the_form_with_the_registry_tools(author_client: Client) -> None:
    page = author_client.get("/agents/").content.decode()

    assert "<h2>New agent</h2>" in page
    assert 'name="tools" value="echo"' in page
    assert 'name="tools" value="http_request"' in page
    assert "one reply per line" in page


def test_an_author_creates_an_agent_and_returns_to_the_list(author_client: Client) -> None:
    response = author_client.post(
        "/agents/", form(tools=["echo"], max_steps="3", max_tokens=""), follow=True
    )

    stored = AgentDefinition.objects.get()
    assert stored.name == "Writer"
    assert stored.definition == {
        "model": "echo",
        "prompt": "Write.",
        "tools": ["echo"],
        "options": {},
        "budget": {"max_steps": 3},
    }
    assert response.redirect_chain[-1][0] == f"/agents/#agent-{stored.hash[7:]}"
    assert f"stored as {stored.hash}" in response.content.decode()


def test_through_htmx_it_redirects_the_browser(author_client: Client) -> None:
    response = author_client.post("/agents/", form(), headers=HTMX)

    assert response.status_code == 200
    assert response["HX-Redirect"].startswith("/agents/#agent-")


def test_a_scripted_agent_takes_one_reply_per_line(author_client: Client) -> None:
    author_client.post("/agents/", form(model="scripted", replies="first\n\nsecond\n"))

    assert AgentDefinition.objects.get().definition["options"] == {"replies": ["first", "second"]}


def test_a_scripted_agent_takes_a_json_list_of_replies(author_client: Client) -> None:
    author_client.post("/agents/", form(model="scripted", replies='["one\\ntwo", "three"]'))

    assert AgentDefinition.objects.get().definition["options"] == {"replies": ["one\ntwo", "three"]}


def test_an_openai_agent_names_its_model(author_client: Client) -> None:
    author_client.post("/agents/", form(model="openai", openai_model="gpt-4o-mini"))

    assert AgentDefinition.objects.get().definition["model"] == "openai:gpt-4o-mini"


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"model": "scripted", "replies": ""}, "replies", "at least one reply"),
        ({"model": "scripted", "replies": "[1, 2]"}, "replies", "strings only"),
        ({"model": "scripted", "replies": "[oops"}, "replies", "Not valid JSON"),
        ({"model": "openai", "openai_model": " "}, "openai_model", "Name the OpenAI model"),
        ({"max_steps": "0"}, "max_steps", "greater than or equal to 1"),
        ({"name": ""}, "name", "required"),
    ],
)
def test_mistakes_are_shown_on_their_fields_and_nothing_is_stored(
    author_client: Client, fields: dict[str, Any], field: str, message: str
) -> None:
    response = author_client.post("/agents/", form(**fields), headers=HTMX)

    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<section class="card" id="new-agent">')
    errors = page[page.index(f'id="id_{field}_error"') :]
    assert message in errors[: errors.index("</div>")]
    assert not AgentDefinition.objects.exists()


def test_the_services_refusals_are_shown_on_their_fields(
    author_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(user: Any, data: str) -> None:
        raise InvalidAgent(
            [
                {"code": "x", "message": "no such reply", "field": "options.replies"},
                {"code": "x", "message": "too many tokens", "field": "budget.max_tokens"},
                {"code": "x", "message": "something else", "field": "other"},
            ]
        )

    monkeypatch.setattr(agents, "create_agent", refuse)

    page = author_client.post("/agents/", form(), headers=HTMX).content.decode()

    assert page.index('id="id_replies_error"') < page.index("no such reply")
    assert page.index('id="id_max_tokens_error"') < page.index("too many tokens")
    assert page.index("something else") < page.index("<form")


def test_a_hostile_name_is_shown_as_text(reader_client: Client, author: User) -> None:
    agents.create_agent(author, json.dumps({"name": HOSTILE, "model": "echo", "prompt": ""}))

    page = reader_client.get("/agents/").content.decode()

    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert HOSTILE not in page


def stored_agents(author: User, count: int) -> None:
    for number in range(count):
        definition = {"name": f"agent-{number:03d}", "model": "echo", "prompt": f"{number}"}
        agents.create_agent(author, json.dumps(definition))


def test_the_list_shows_fifty_definitions_a_page_by_name(
    reader_client: Client, author: User
) -> None:
    stored_agents(author, 60)

    first = reader_client.get("/agents/").content.decode()
    assert first.count('class="agent-name"') == 50
    assert "agent-049" in first and "agent-050" not in first
    assert "First definitions" not in first
    more = first.split('href="/agents/?cursor=')[1].split('"')[0]

    second = reader_client.get(f"/agents/?cursor={more}").content.decode()
    assert second.count('class="agent-name"') == 10
    assert "agent-050" in second and "agent-049" not in second
    assert "More definitions" not in second
    assert "First definitions" in second


def test_a_new_agent_opens_the_page_that_starts_with_it(
    author_client: Client, author: User
) -> None:
    stored_agents(author, 60)

    response = author_client.post("/agents/", form(name="zeta"), follow=True)

    stored = AgentDefinition.objects.get(name="zeta")
    target = response.redirect_chain[-1][0]
    assert target.startswith("/agents/?cursor=") and target.endswith(f"#agent-{stored.hash[7:]}")
    page = response.content.decode()
    assert page.count('class="agent-name"') == 1
    assert "zeta" in page


def test_a_cursor_the_server_did_not_hand_out_is_a_400(reader_client: Client) -> None:
    response = reader_client.get("/agents/", {"cursor": "nonsense"})

    assert response.status_code == 400
    assert "cursor" in response.content.decode()
