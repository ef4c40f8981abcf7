"""A document's versions: `/graphs/<slug>/versions/`."""

import html
import json
import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.services import documents
from tests.integration.api.callers import make_user
from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db


@pytest.fixture
def author() -> User:
    return make_user("<i>ada</i>", "authors")


@pytest.fixture
def reader_client(client: Client) -> Client:
    client.force_login(make_user("noel"))
    return client


@pytest.fixture
def frozen(author: User) -> documents.Frozen:
    text = json.dumps(wire_value(approval_gate("sha256:" + "c" * 64)))
    documents.create_document(author, title="Gate <flow>", text=text)
    return documents.freeze(author, "gate-flow", expected_revision=1, note="first <cut>")


def test_it_lists_number_hash_who_when_and_note(
    reader_client: Client, frozen: documents.Frozen
) -> None:
    response = reader_client.get("/graphs/gate-flow/versions/")

    page = response.content.decode()
    assert response.status_code == 200
    hex_digest = frozen.graph.removeprefix("sha256:")
    assert (
        f'<a href="/g/{hex_digest}/?document=gate-flow"><code>{hex_digest[:12]}</code></a>' in page
    )
    assert "<td>1</td>" in page
    assert "&lt;i&gt;ada&lt;/i&gt;" in page
    assert "first &lt;cut&gt;" in page
    assert "Gate &lt;flow&gt;" in page
    assert "<time datetime=" in page
    assert_no_inline_script(page)


def test_it_answers_htmx_with_the_rows_alone(
    reader_client: Client, frozen: documents.Frozen
) -> None:
    response = reader_client.get("/graphs/gate-flow/versions/", headers={"HX-Request": "true"})

    assert "HX-Request" in response["Vary"]
    assert response.content.decode().lstrip().startswith('<div id="version-rows">')


def test_it_says_when_nothing_is_frozen(reader_client: Client, author: User) -> None:
    documents.create_document(author, title="Empty")

    page = reader_client.get("/graphs/empty/versions/").content.decode()

    assert "Nothing frozen yet." in page


def test_it_answers_404_for_an_unknown_document(reader_client: Client) -> None:
    assert reader_client.get("/graphs/nope/versions/").status_code == 404


def freeze_many(author: User, slug: str, count: int, *, first: int = 1) -> None:
    """``count`` more versions of ``slug``, each a graph of its own (the agent's hash differs)."""
    for n in range(first, first + count):
        text = json.dumps(wire_value(approval_gate("sha256:" + f"{n:064x}")))
        revision = documents.read_draft(slug).revision
        saved = documents.save_draft(author, slug, text=text, expected_revision=revision)
        documents.freeze(author, slug, expected_revision=saved.revision)


def numbers_on(page: str) -> list[int]:
    return [int(n) for n in re.findall(r"<tr>\s*<td>(\d+)</td>", page)]


def test_it_shows_fifty_versions_a_page_and_the_older_ones_behind_a_link(
    reader_client: Client, author: User
) -> None:
    documents.create_document(author, title="Busy")
    freeze_many(author, "busy", 53)

    first = reader_client.get("/graphs/busy/versions/").content.decode()

    assert numbers_on(first) == list(range(53, 3, -1))
    link = re.search(r'href="(/graphs/busy/versions/\?cursor=[^"]+)">Older versions</a>', first)
    assert link is not None
    second = reader_client.get(html.unescape(link.group(1))).content.decode()
    assert numbers_on(second) == [3, 2, 1]
    assert "Older versions" not in second
    assert 'href="/graphs/busy/versions/">Newest versions</a>' in second


def test_it_refuses_a_cursor_it_did_not_hand_out(
    reader_client: Client, frozen: documents.Frozen
) -> None:
    response = reader_client.get("/graphs/gate-flow/versions/", {"cursor": "nonsense"})

    assert response.status_code == 400
    assert response.content.decode() == "The cursor is not one this server handed out."


def test_its_pages_and_the_editor_cost_as_many_queries_for_sixty_versions_as_for_one(
    client: Client, author: User
) -> None:
    client.force_login(author)
    documents.create_document(author, title="Busy")
    freeze_many(author, "busy", 1)
    paths = ["/graphs/busy/versions/", "/v1/documents/busy/versions", "/graphs/busy/"]
    for path in paths:
        client.get(path)  # the session, the permissions, the canvas: cached after the first

    def queries() -> dict[str, int]:
        counted = {}
        for path in paths:
            with CaptureQueriesContext(connection) as captured:
                assert client.get(path).status_code == 200
            counted[path] = len(captured)
        return counted

    one = queries()
    freeze_many(author, "busy", 59, first=2)
    assert queries() == one
