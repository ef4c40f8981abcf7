"""Decisions in one click, in a browser: the *Approval gate* template approved and
rejected with one click each, refused values that keep the focus on their field and record
nothing, and the inbox pages checked with axe-core.

Runs are driven in the test's own thread by the worker's task function (``drive_run.call``),
on the connection the live server's request threads share, only while the page is quiet.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import BrowserContext, Page, expect

from editor.graph.templates import APPROVAL_SCHEMA
from editor.models import Run, RunEvent, Version
from editor.services import runs
from editor.services.documents import graphs
from editor.services.documents.demo import DEMO_AGENTS
from editor.tasks import drive_run
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import make_user, sign_in, wait_for_htmx
from tests.integration.api.running import park

DRAFT = json.loads(DEMO_AGENTS["writer"]["options"]["replies"][0])["draft"]
SLUG = "demo-approval-gate"


@pytest.fixture
def decider_page(
    shared_database: BaseDatabaseWrapper, page: Page, context: BrowserContext, live_server: Any
) -> Page:
    """Signed in as someone who approves gates and operates runs: every card has its form."""
    sign_in(context, make_user("april", groups=("approvers", "operators")), live_server.url)
    return page


def gated(schema: dict[str, Any], prompt: str = "Publish this draft?") -> dict[str, Any]:
    """write (echo) → review (gate) → publish (echo): the gate sees the run's input."""
    return {
        "schema_version": 1,
        "nodes": [
            {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
            {
                "kind": "gate",
                "payload": {"id": "review", "prompt": prompt, "approval_schema": schema},
            },
            {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
        ],
        "edges": [{"from": "write", "to": "review"}, {"from": "review", "to": "publish"}],
    }


def waiting_run(author: User, graph: dict[str, Any], run_input: Any) -> str:
    digest = graphs.store_graph(author, json.dumps(graph)).graph
    run_id = runs.start_run(make_user_once("otto"), digest, run_input).run
    assert drive_run.call(run_id) == "suspended"
    return run_id


def make_user_once(name: str) -> User:
    return User.objects.filter(username=name).first() or make_user(name, groups=("operators",))


def card_of(page: Page, run_id: str) -> Any:
    return page.locator(f'article.inbox-card[id^="card-{run_id}-"]')


def test_the_approval_gate_template_is_approved_and_rejected_with_one_click_each(
    decider_page: Page, author: User
) -> None:
    page = decider_page
    call_command("load_demo", "--user", author.username)
    digest = Version.objects.get(document__slug=SLUG).graph_id
    operator = make_user_once("otto")
    approved, rejected = (
        runs.start_run(operator, digest, {"subject": subject}, document_slug=SLUG).run
        for subject in ("tea", "coffee")
    )
    assert drive_run.call(approved) == drive_run.call(rejected) == "suspended"

    page.goto("/inbox/")
    wait_for_htmx(page)
    first, second = card_of(page, approved), card_of(page, rejected)
    expect(first.get_by_label("Draft")).to_have_value(DRAFT)
    # The draft first, then the schema's own comment; no built-in comment beside it.
    expect(first.locator("form.approval-form label")).to_have_text(["Draft", "comment"])
    expect(first.locator(".value-view")).to_contain_text(DRAFT)
    assert_accessible(page)

    first.get_by_role("button", name="Approve").click()
    expect(first.locator(".receipt")).to_contain_text("Resolved by april")
    expect(first.locator(".receipt")).to_contain_text('"approved": true')
    second.get_by_label("comment").fill("Too long for the newsletter")
    second.get_by_role("button", name="Reject").click()
    expect(second.locator(".receipt")).to_contain_text('"approved": false')
    expect(second.locator(".receipt")).to_contain_text("Too long for the newsletter")
    wait_for_htmx(page)

    for run_id, branch in ((approved, "publish"), (rejected, "archive")):
        assert drive_run.call(run_id) == "completed"
        entered = RunEvent.objects.filter(run_id=run_id, kind="NodeEntered")
        assert branch in {event.payload["node"] for event in entered}
    resumed = RunEvent.objects.get(run_id=rejected, kind="Resumed").payload
    assert resumed["input"] == {
        "draft": DRAFT,
        "approved": False,
        "comment": "Too long for the newsletter",
    }

    page.get_by_role("link", name="Resolved").click()
    expect(page.locator("table.decisions tbody tr")).to_have_count(2)
    wait_for_htmx(page)
    assert_accessible(page)


def test_a_refused_value_keeps_the_focus_on_its_field_and_nothing_is_recorded(
    decider_page: Page, author: User
) -> None:
    page = decider_page
    schema = {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean", "title": "Approve publishing"},
            "copies": {"type": "integer", "title": "Copies", "minimum": 1, "maximum": 3},
            "code": {"type": "string", "title": "Code", "pattern": "^[A-Z]{3}$"},
        },
        "required": ["approved"],
    }
    in_browser = waiting_run(author, gated(schema), None)
    on_server = waiting_run(author, gated(APPROVAL_SCHEMA), {"draft": "x" * 20001})
    counts = {run_id: Run.objects.get(pk=run_id).event_count for run_id in (in_browser, on_server)}

    page.goto("/inbox/")
    wait_for_htmx(page)
    card = card_of(page, in_browser)
    expect(card.get_by_text("a whole number; 1 to 3")).to_be_visible()
    # Refused by the browser, from the schema's constraints: no request is made.
    posts: list[str] = []
    page.on(
        "request", lambda request: posts.append(request.url) if request.method == "POST" else None
    )
    copies = card.get_by_label("Copies")
    copies.fill("5")
    card.get_by_role("button", name="Approve publishing").click()
    expect(copies).to_be_focused()
    assert copies.evaluate("field => field.validity.rangeOverflow")
    copies.fill("2")
    code = card.get_by_label("Code")
    code.fill("abc")
    card.get_by_role("button", name="Reject publishing").click()
    expect(code).to_be_focused()
    assert "Match the pattern ^[A-Z]{3}$" in code.evaluate("field => field.validationMessage")
    assert posts == []

    # Refused by the server: the over-long draft came from the run, untouched, so the
    # browser let it through; the card comes back with the error and the focus on the draft.
    card = card_of(page, on_server)
    card.get_by_role("button", name="Approve").click()
    expect(card.locator(".field-error")).to_contain_text("is too long")
    expect(card.get_by_label("Draft")).to_be_focused()
    wait_for_htmx(page)
    assert_accessible(page)
    for run_id, count in counts.items():
        assert Run.objects.get(pk=run_id).event_count == count
        assert Run.objects.get(pk=run_id).state == "suspended"


def test_the_inbox_with_every_kind_of_card_and_its_filters_is_accessible(
    decider_page: Page, context: BrowserContext, author: User
) -> None:
    page = decider_page
    value = {"draft": "Line one\nLine two", "notes": {"words": 4, "tags": ["a", "b"]}}
    gate = waiting_run(
        author, gated(APPROVAL_SCHEMA, prompt="# Check\n\nRead the `draft` and the *notes*."), value
    )
    for kind in ("budget", "reconciliation"):
        digest = graphs.store_graph(author, json.dumps(gated(APPROVAL_SCHEMA))).graph
        run_id = runs.start_run(make_user_once("otto"), digest, None).run
        park(run_id, kind)

    page.goto("/inbox/?node=review&q=draft")
    wait_for_htmx(page)
    expect(page.locator("article.inbox-card")).to_have_count(1)
    expect(page.locator(".prompt code")).to_have_text("draft")
    card = card_of(page, gate)
    expect(card.locator(".value-view")).to_contain_text("Line one\nLine two")
    expect(card.get_by_role("group", name="Value at the gate").get_by_text("notes")).to_be_visible()
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    card.get_by_role("button", name="Copy JSON").click()
    expect(card.get_by_role("button", name="Copied")).to_be_visible()
    assert json.loads(page.evaluate("() => navigator.clipboard.readText()")) == value
    page.get_by_role("link", name="Clear filters").click()
    expect(page.locator("article.inbox-card")).to_have_count(3)
    wait_for_htmx(page)
    assert_accessible(page)
