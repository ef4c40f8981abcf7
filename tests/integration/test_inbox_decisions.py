"""The inbox pages: the card's one-click decision, the schema's own comment, the
constraints and the focus after a refusal, the prompt and the value at the gate; and the
filters of both tabs."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from editor.graph.templates import APPROVAL_SCHEMA
from editor.models import Run, RunEvent
from editor.services import runs
from tests.integration.api.callers import make_user
from tests.integration.api.running import event_count
from tests.integration.inbox import frozen, gated, waiting

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def seq_of(run_id: str) -> str:
    return str(Run.objects.get(pk=run_id).status["pending"][0]["seq"])


@pytest.fixture
def approver_client(client: Client, approver: User) -> Client:
    client.force_login(approver)
    return client


def test_the_approval_gate_template_is_decided_by_one_click_and_its_comment_is_recorded(
    approver_client: Client, author: User, operator: User
) -> None:
    run_id = waiting(author, operator, gated(schema=APPROVAL_SCHEMA), input={"draft": "Tea."})

    page = approver_client.get("/inbox/").content.decode()
    response = approver_client.post(
        f"/inbox/{run_id}/resolve/",
        {
            "node": "review",
            "seq": seq_of(run_id),
            "field-draft": "Tea.",
            "field-comment": "Short and true",
            "field-approved": "false",
        },
        headers=HTMX,
    )

    # Draft, then the schema's comment (no second, built-in one), then the two buttons.
    assert page.index('name="field-draft"') < page.index('name="field-comment"')
    assert page.index('name="field-comment"') < page.index(">Approve</button>")
    assert 'name="comment"' not in page
    assert 'Comment <span class="muted">(optional)</span>' not in page
    assert 'maxlength="20000"' in page
    assert "at most 20,000 characters" in page
    assert "Resolved by <strong>april</strong>" in response.content.decode()
    resumed = RunEvent.objects.get(run_id=run_id, kind="Resumed")
    assert resumed.payload["input"] == {
        "draft": "Tea.",
        "approved": False,
        "comment": "Short and true",
    }
    assert resumed.payload["comment"] == "Short and true"


def test_a_refused_value_comes_back_with_the_focus_on_its_field_and_nothing_recorded(
    approver_client: Client, author: User, operator: User
) -> None:
    # Prefilled from the run and never edited, an over-long draft passes the browser: the
    # server refuses it.
    run_id = waiting(author, operator, gated(schema=APPROVAL_SCHEMA), input={"draft": "x" * 20001})
    before = event_count(run_id)

    response = approver_client.post(
        f"/inbox/{run_id}/resolve/",
        {
            "node": "review",
            "seq": seq_of(run_id),
            "field-draft": "x" * 20001,
            "field-approved": "true",
        },
        headers=HTMX,
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert "is too long" in body
    (focused,) = re.findall(r"<(?:input|textarea|select|button)[^>]* autofocus[^>]*>", body)
    assert 'name="field-draft"' in focused and 'aria-invalid="true"' in focused
    assert event_count(run_id) == before


def test_the_prompt_is_markdown_and_the_value_a_tree_with_its_json(
    approver_client: Client, author: User, operator: User
) -> None:
    waiting(
        author,
        operator,
        gated(prompt="Check the `draft`:\n\n* facts\n* <b>tone</b>"),
        input={"draft": "Line one\nLine two", "meta": {"words": 4}},
    )

    page = approver_client.get("/inbox/").content.decode()

    assert "<code>draft</code>" in page and "<li>facts</li>" in page
    assert "&lt;b&gt;tone&lt;/b&gt;" in page
    assert (
        '<span class="jt-key">draft</span> <span class="jt-string">Line one\nLine two</span>'
        in page
    )
    assert '<span class="jt-key">meta</span> <span class="muted">{1 key}</span>' in page
    assert re.search(
        r'<button type="button"[^>]*data-copy="card-[^"]+-json" hidden>Copy JSON</button>', page
    )
    # The whole value as formatted JSON (its keys in the order the database keeps them).
    raw = re.search(r'<pre class="json-view" id="card-[^"]+-json" tabindex="0">([^<]*)</pre>', page)
    assert raw is not None
    assert "\n  &quot;draft&quot;: &quot;Line one\\nLine two&quot;" in raw.group(1)


def test_the_pending_tab_filters_by_document_including_runs_started_from_its_hash(
    approver_client: Client, author: User, operator: User
) -> None:
    slug, digest = frozen(author, gated(prompt="From the hash?"), title="Release notes")
    waiting(author, operator, graph_hash=digest)
    waiting(author, operator, gated(prompt="Elsewhere?", publish="ship"))

    page = approver_client.get("/inbox/", {"document": slug}).content.decode()
    fragment = approver_client.get("/inbox/", {"document": slug}, headers=HTMX).content.decode()

    assert "From the hash?" in page and "Elsewhere?" not in page
    assert "Release notes v1" in page  # what the card shows is what the filter matched
    assert f'name="document" value="{slug}"' in page
    assert fragment.lstrip().startswith('<div id="inbox-cards" data-live-list>')


def test_later_items_keep_the_filters(
    approver_client: Client, author: User, operator: User
) -> None:
    digest = Run.objects.get(pk=waiting(author, operator)).graph_id
    for _ in range(50):
        waiting(author, operator, graph_hash=digest)

    page = approver_client.get("/inbox/", {"node": "review", "q": "publish"}).content.decode()

    link = re.search(r'href="/inbox/\?cursor=([^"]+)">Later items', page)
    assert link is not None
    assert "&amp;node=review&amp;q=publish" in link.group(1)


def test_the_resolved_tab_filters_and_searches(
    client: Client, author: User, operator: User, approver: User
) -> None:
    first = waiting(author, operator, gated(prompt="Ship the autumn notes?"))
    second = waiting(author, operator)
    runs.resume(approver, first, {"input": {"approved": True}, "comment": "Checked"})
    runs.resume(make_user("bea", "approvers"), second, {"input": {"approved": False}})
    client.force_login(author)

    by_prompt = client.get("/inbox/resolved/", {"q": "autumn"}).content.decode()
    by_person = client.get("/inbox/resolved/", {"person": "bea"}, headers=HTMX).content.decode()
    none = client.get("/inbox/resolved/", {"person": "nobody"}).content.decode()

    assert first[:8] in by_prompt and second[:8] not in by_prompt
    assert by_person.lstrip().startswith('<div id="inbox-decisions">')
    assert second[:8] in by_person and first[:8] not in by_person
    assert "No entry matches these filters." in none


@pytest.mark.parametrize("path", ["/inbox/", "/inbox/resolved/"])
def test_a_filter_that_cannot_be_read_is_named_on_the_page(
    approver_client: Client, path: str
) -> None:
    response = approver_client.get(path, {"from": "yesterday"})

    assert response.status_code == 400
    assert "`from` must be a day written YYYY-MM-DD" in response.content.decode()


def test_resolving_a_card_reads_the_run_once_and_its_receipt_from_what_it_recorded(
    approver_client: Client, author: User, operator: User
) -> None:
    run_id = waiting(author, operator, gated(schema=APPROVAL_SCHEMA), input={"draft": "Tea."})
    body = {"node": "review", "seq": seq_of(run_id), "field-draft": "Tea."}

    with CaptureQueriesContext(connection) as queries:
        response = approver_client.post(
            f"/inbox/{run_id}/resolve/", {**body, "field-approved": "true"}, headers=HTMX
        )

    assert "Resolved by <strong>april</strong>" in response.content.decode()
    selects = [
        query["sql"] for query in queries.captured_queries if query["sql"].startswith("SELECT")
    ]
    assert len([sql for sql in selects if sql.startswith('SELECT "editor_run".')]) == 1
    # The receipt is the event the resolution wrote, not read back from the log.
    assert not [sql for sql in selects if '"editor_runevent"."kind" IN' in sql]
