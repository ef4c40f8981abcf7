"""**New graph**: `/new/`."""

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.models import Document
from editor.services import agents, documents
from tests.integration.api.callers import make_user
from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent_hashes(author: User) -> dict[str, str]:
    found = {}
    for name in ("Writer", "Critic", "Synth <b>"):
        definition = {"name": name, "model": "echo", "prompt": f"Be the {name}."}
        found[name] = agents.create_agent(author, json.dumps(definition)).agent
    return found


def test_it_shows_the_form_with_the_four_starting_points(author_client: Client) -> None:
    response = author_client.get("/new/")

    page = response.content.decode()
    assert response.status_code == 200
    for label in ("Blank", "Approval gate", "Critic panel — parallel", "Critic panel — rounds"):
        assert label in page
    assert_no_inline_script(page)


def test_it_links_to_agents_when_there_are_no_agent_definitions(
    author_client: Client,
) -> None:
    page = author_client.get("/new/").content.decode()

    notice = page[page.index('id="no-agents"') :]
    assert 'Create one on <a href="/agents/">Agents</a>' in notice
    assert "POST /v1/agents" in notice


def test_it_offers_agent_definitions_by_name_escaped(
    author_client: Client, agent_hashes: dict[str, str]
) -> None:
    page = author_client.get("/new/").content.decode()

    assert "Synth &lt;b&gt;" in page
    assert f'value="{agent_hashes["Writer"]}"' in page
    assert "POST /v1/agents" not in page


def test_it_answers_htmx_with_the_form_alone(author_client: Client) -> None:
    response = author_client.get("/new/", headers={"HX-Request": "true"})

    page = response.content.decode()
    assert "HX-Request" in response["Vary"]
    assert page.lstrip().startswith('<form id="new-graph-form"')
    assert "<html" not in page


def test_it_creates_a_blank_graph_and_opens_its_editor(author_client: Client) -> None:
    response = author_client.post("/new/", {"title": "My flow", "template": "blank"})

    assert response.status_code == 302
    assert response["Location"] == "/graphs/my-flow/"
    draft = documents.read_draft("my-flow")
    assert json.loads(draft.text) == {"schema_version": 1, "nodes": [], "edges": []}
    assert draft.text.startswith('{\n  "')


def test_it_tells_htmx_to_go_to_the_editor(author_client: Client) -> None:
    response = author_client.post(
        "/new/", {"title": "My flow", "template": "blank"}, headers={"HX-Request": "true"}
    )

    assert response["HX-Redirect"] == "/graphs/my-flow/"


def test_it_gives_a_taken_slug_a_number(author_client: Client, author: User) -> None:
    documents.create_document(author, title="My flow")

    response = author_client.post("/new/", {"title": "My flow", "template": "blank"})

    assert response["Location"] == "/graphs/my-flow-2/"


def test_it_creates_an_approval_gate_with_the_chosen_writer(
    author_client: Client, agent_hashes: dict[str, str]
) -> None:
    writer = agent_hashes["Writer"]

    response = author_client.post(
        "/new/", {"title": "Gate", "template": "approval_gate", "writer": writer}
    )

    assert response.status_code == 302
    draft = documents.read_draft("gate")
    assert draft.validation["valid"]
    nodes = json.loads(draft.text)["nodes"]
    assert [node["payload"]["id"] for node in nodes] == [
        "write",
        "review",
        "decide",
        "publish",
        "archive",
    ]
    assert writer in draft.text


@pytest.mark.parametrize("template", ["parallel", "rounds"])
def test_it_creates_a_critic_panel(
    author_client: Client, agent_hashes: dict[str, str], template: str
) -> None:
    response = author_client.post(
        "/new/",
        {
            "title": "Panel",
            "template": template,
            "critic": agent_hashes["Critic"],
            "synthesizer": agent_hashes["Synth <b>"],
            "personas": "Skeptic\nOptimist\n\nLawyer\n",
            "max_rounds": "2",
        },
    )

    assert response.status_code == 302
    draft = documents.read_draft("panel")
    assert draft.validation["valid"]
    assert "Lawyer" in draft.text


def test_it_shows_errors_beside_their_fields_and_creates_nothing(
    author_client: Client, agent_hashes: dict[str, str]
) -> None:
    response = author_client.post(
        "/new/",
        {"title": "Panel", "template": "rounds", "personas": "Only one", "max_rounds": "9"},
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert page.count("Choose an agent definition.") == 2
    assert "Give 2 to 8 personas, one per line (1 given)." in page
    assert 'id="id_max_rounds_error"' in page
    assert not Document.objects.exists()


def test_it_refuses_an_empty_title(author_client: Client) -> None:
    response = author_client.post("/new/", {"title": "  ", "template": "blank"})

    assert response.status_code == 200
    assert 'id="id_title_error"' in response.content.decode()
    assert not Document.objects.exists()


def test_it_refuses_a_user_without_the_authors_role(client: Client) -> None:
    client.force_login(make_user("noel"))

    assert client.get("/new/").status_code == 403
    response = client.post("/new/", {"title": "Mine", "template": "blank"})

    assert response.status_code == 403
    assert not Document.objects.exists()
