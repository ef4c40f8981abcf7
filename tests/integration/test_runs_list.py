"""The runs list's filters, on **Runs** (``/runs/``) and ``GET /v1/runs``: state, graph,
document, label, who started the run and the days it was started, each alone, together, and
kept across pages; a filter that cannot be read is said, naming it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.models import Run
from editor.services import documents, runs
from editor.services.runs.filters import read_run_filter
from tests.integration.api.callers import make_user
from tests.integration.api.running import ECHO_CHAIN, drive
from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def frozen(author: User, title: str) -> tuple[str, str]:
    """A document holding the echo chain, frozen: (slug, graph hash)."""
    made = documents.create_document(author, title=title, text=json.dumps(ECHO_CHAIN))
    return made.slug, documents.freeze(author, made.slug, expected_revision=1).graph


def started(
    who: User,
    digest: str,
    *,
    slug: str | None = None,
    labels: dict[str, str] | None = None,
    day: str | None = None,
) -> str:
    run = runs.start_run(who, digest, None, labels, document_slug=slug).run
    if day is not None:
        moment = datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)
        Run.objects.filter(id=run).update(created_at=moment)
    return run


@pytest.fixture
def world(author: User, operator: User) -> dict[str, str]:
    """Runs of two documents (and one started from a hash), by two people, labelled, on
    three days, one of them completed."""
    other = make_user("olga", "operators")
    notes, digest = frozen(author, "Release notes")
    # The same graph frozen by a second document: runs started from it show that document.
    second = documents.create_document(author, title="Digest", text=json.dumps(ECHO_CHAIN)).slug
    documents.freeze(author, second, expected_revision=1)
    made = {
        "notes-payments": started(
            operator, digest, slug=notes, labels={"team": "payments"}, day="2026-03-01"
        ),
        "notes-search": started(
            other, digest, slug=notes, labels={"team": "search", "env": "prod"}, day="2026-03-02"
        ),
        "digest": started(other, digest, slug=second, labels={"env": "prod"}, day="2026-03-03"),
        "hash-only": started(operator, digest, day="2026-03-03"),
    }
    drive(made["digest"])
    return {**made, "notes": notes, "second": second, "graph": digest}


def listed(client: Client, **params: Any) -> list[str]:
    response = client.get("/v1/runs", {"limit": 50, **params})
    assert response.status_code == 200, response.content
    return [run["run"] for run in response.json()["runs"]]


def shown(client: Client, **params: Any) -> str:
    response = client.get("/runs/", params)
    assert response.status_code == 200, response.content
    return response.content.decode()


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"document": "notes"}, ["notes-search", "notes-payments"]),
        ({"document": "second"}, ["digest"]),
        ({"label": "team=payments"}, ["notes-payments"]),
        ({"label": "env"}, ["digest", "notes-search"]),
        ({"label": ["env=prod", "team=search"]}, ["notes-search"]),
        ({"label": "team=nobody"}, []),
        ({"person": "olga"}, ["digest", "notes-search"]),
        ({"person": "nobody-at-all"}, []),
        ({"from": "2026-03-02"}, ["hash-only", "digest", "notes-search"]),
        ({"to": "2026-03-01"}, ["notes-payments"]),
        ({"from": "2026-03-02", "to": "2026-03-02"}, ["notes-search"]),
        ({"status": "completed"}, ["digest"]),
        ({"status": "queued", "person": "otto", "label": "team"}, ["notes-payments"]),
    ],
)
def test_the_api_keeps_the_runs_each_filter_names(
    client: Client, operator: User, world: dict[str, str], params: dict[str, Any], expected: list
) -> None:
    client.force_login(operator)
    params = {key: world[value] if key == "document" else value for key, value in params.items()}

    ids = listed(client, **params)

    # The two runs started on 2026-03-03: the later-created first.
    assert sorted(ids) == sorted(world[name] for name in expected)
    if "from" not in params:
        assert ids == [world[name] for name in expected]


def test_the_api_keeps_a_graphs_runs_started_from_any_document_or_none(
    client: Client, operator: User, world: dict[str, str]
) -> None:
    client.force_login(operator)

    assert len(listed(client, graph=world["graph"])) == 4
    assert listed(client, graph="sha256:" + "0" * 64) == []
    assert listed(client, graph="not a hash") == []


def test_the_whole_list_streamed_without_paging_keeps_the_filters_too(
    client: Client, operator: User, world: dict[str, str]
) -> None:
    client.force_login(operator)

    response = client.get("/v1/runs", {"label": "env=prod"})

    body = json.loads(b"".join(response.streaming_content))
    assert sorted(run["run"] for run in body["runs"]) == sorted(
        [world["digest"], world["notes-search"]]
    )


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({"status": "dozing"}, "status", "must be one of"),  # sleeping is a state (spec 08)
        ({"label": "=payments"}, "label", "key=value"),
        ({"from": "2026-3-1"}, "from", "YYYY-MM-DD"),
        ({"from": "2026-02-30"}, "from", "not a day"),
        ({"from": "2026-03-03", "to": "2026-03-01"}, "from", "after"),
        ({"person": "x" * 151}, "person", "too long"),
        ({"label": [f"k{n}" for n in range(17)]}, "label", "at most 16"),
    ],
)
def test_a_filter_that_cannot_be_read_is_a_400_naming_it(
    client: Client, operator: User, params: dict[str, Any], field: str, words: str
) -> None:
    client.force_login(operator)

    for query in (params, {**params, "limit": 5}):
        response = client.get("/v1/runs", query)

        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == "bad_request"
        assert error["details"] == {"field": field}
        assert words in error["message"]


def test_the_page_filters_by_every_part_and_says_when_nothing_matches(
    client: Client, operator: User, world: dict[str, str]
) -> None:
    client.force_login(operator)

    page = shown(client, document=world["notes"], person="olga", label="team=search")

    assert world["notes-search"][:8] in page
    for other in ("notes-payments", "digest", "hash-only"):
        assert world[other][:8] not in page
    assert 'value="team=search"' in page
    assert 'value="olga"' in page
    assert "Clear filters" in page
    assert "No run matches these filters." in shown(client, person="nobody-at-all")
    assert_no_inline_script(page)


def test_the_page_shows_each_runs_labels_as_links_that_filter_by_them(
    client: Client, operator: User, world: dict[str, str]
) -> None:
    client.force_login(operator)

    page = shown(client)

    assert 'href="/runs/?label=team%3Dpayments"' in page
    assert "<code>team=payments</code>" in page


def test_the_page_answers_htmx_with_the_rows_alone(
    client: Client, operator: User, world: dict[str, str]
) -> None:
    client.force_login(operator)

    response = client.get("/runs/", {"from": "2026-03-03"}, headers=HTMX)

    page = response.content.decode()
    assert page.lstrip().startswith('<div id="run-rows">')
    assert world["digest"][:8] in page
    assert world["notes-search"][:8] not in page


def test_older_runs_keep_the_filters_and_newest_runs_go_back_to_the_first_page(
    client: Client, author: User, operator: User
) -> None:
    client.force_login(operator)
    _slug, digest = frozen(author, "Paged")
    labelled = [started(operator, digest, labels={"team": "a"}) for _ in range(3)]
    started(operator, digest)

    first = runs.list_runs(read_run_filter({"label": "team=a"}), limit=2)
    page = shown(client, label="team=a", cursor=first.next)

    assert labelled[0][:8] in page
    assert labelled[2][:8] not in page
    assert "Newest runs" in page
    assert 'href="/runs/?label=team%3Da"' in page


def test_a_filter_that_cannot_be_read_is_said_on_the_page(client: Client, operator: User) -> None:
    client.force_login(operator)

    response = client.get("/runs/", {"from": "yesterday"})
    fragment = client.get("/runs/", {"label": "=x"}, headers=HTMX)

    assert response.status_code == 400
    assert "`from` must be a day written YYYY-MM-DD" in response.content.decode()
    assert fragment.status_code == 200  # htmx swaps it in
    assert "key=value" in fragment.content.decode()


def test_a_label_value_is_matched_exactly_spaces_and_all(
    client: Client, author: User, operator: User
) -> None:
    client.force_login(operator)
    _slug, digest = frozen(author, "Spaced")
    spaced = started(operator, digest, labels={"note": " a b "})
    started(operator, digest, labels={"note": "a b"})

    assert listed(client, label="note= a b ") == [spaced]
