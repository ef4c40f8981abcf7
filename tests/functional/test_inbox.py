"""The approval inbox in a browser: a run waits at a gate, the count in the navigation bar
rises, an approver answers through the generated form, the receipt replaces the card, the
count falls, and the run goes on to complete.

Runs are driven in the test's own thread by the worker's task function (``drive_run.call``),
on the connection the live server's request threads share (the test database is SQLite in
memory): only while the page is quiet, so one connection never carries two transactions.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import BrowserContext, Page, expect

from editor.models import Run
from editor.services import runs
from editor.services.documents import graphs
from editor.tasks import drive_run
from tests.functional.browser import make_user, sign_in, wait_for_htmx

SCHEMA = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "title": "Approve publishing"},
        "note": {"type": "string", "title": "Note for the writer"},
        "copies": {"type": "integer", "title": "Copies", "maximum": 3},
    },
    "required": ["approved"],
}

#: write (echo) → review (gate) → publish (echo).
GATED = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {
            "kind": "gate",
            "payload": {
                "id": "review",
                "name": "Editor's review",
                "prompt": "Publish this draft?",
                "approval_schema": SCHEMA,
            },
        },
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "review"}, {"from": "review", "to": "publish"}],
}


@pytest.fixture
def approver_page(
    shared_database: BaseDatabaseWrapper, page: Page, context: BrowserContext, live_server: Any
) -> Page:
    sign_in(context, make_user("april", groups=("approvers",)), live_server.url)
    return page


def test_an_approver_resolves_a_waiting_gate_and_the_run_completes(
    approver_page: Page, author: Any
) -> None:
    page = approver_page
    operator = make_user("otto", groups=("operators",))
    digest = graphs.store_graph(author, json.dumps(GATED)).graph

    page.goto("/")
    wait_for_htmx(page)
    count = page.locator("#inbox-count .inbox-count-number")
    expect(count).to_have_text("0")

    run_id = runs.start_run(operator, digest, {"note": "Draft 2 is ready"}).run
    assert drive_run.call(run_id) == "suspended"

    # The page's stream brings the new count: no reload, no polling.
    expect(count).to_have_text("1")

    page.get_by_role("link", name="Inbox").click()
    card = page.locator("article.inbox-card")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("Editor's review")
    expect(card).to_contain_text("Publish this draft?")
    expect(card).to_contain_text('"note": "Draft 2 is ready"')
    note = card.get_by_label("Note for the writer")
    expect(note).to_have_value("Draft 2 is ready")

    # A wrong answer is refused beside its field (the browser knows the maximum too), and
    # nothing is recorded.
    copies = card.get_by_label("Copies")
    copies.fill("5")
    card.get_by_role("button", name="Approve publishing").click()
    expect(copies).to_be_focused()
    assert copies.evaluate("field => field.validity.rangeOverflow")
    wait_for_htmx(page)
    assert Run.objects.get(pk=run_id).state == "suspended"

    copies.fill("2")
    note.fill("Ship it")
    card.get_by_label("Comment").fill("Checked the figures")
    card.get_by_role("button", name="Approve publishing").click()

    receipt = page.locator("article.inbox-card .receipt")
    expect(receipt).to_contain_text("Resolved by april")
    expect(receipt).to_contain_text('"approved": true')
    expect(receipt).to_contain_text('"copies": 2')
    expect(receipt).to_contain_text("Checked the figures")
    expect(count).to_have_text("0")
    wait_for_htmx(page)

    assert drive_run.call(run_id) == "completed"
    page.goto(f"/runs/{run_id}/")
    expect(page.locator(".run-status")).to_contain_text("completed")
    expect(page.locator(".run-status")).to_contain_text('"approved": true')
    wait_for_htmx(page)

    page.goto("/inbox/")
    expect(page.locator(".empty")).to_contain_text("Nothing waits for you to decide")
    page.get_by_role("link", name="Resolved").click()
    decision = page.locator("table.decisions tbody tr")
    expect(decision).to_have_count(1)
    expect(decision).to_contain_text("april")
    expect(decision).to_contain_text("Checked the figures")
    wait_for_htmx(page)
