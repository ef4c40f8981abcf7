"""The open inbox follows the page's stream: a run that comes to wait shows up as a card
without a reload, a card someone else decided goes, and the card an approver is filling in
stays as it is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import BrowserContext, Page, expect

from editor.services import runs
from editor.services.documents import graphs
from editor.services.runs import resolutions
from editor.tasks import drive_run
from tests.functional.browser import make_user, sign_in, wait_for_htmx

GATE = {
    "schema_version": 1,
    "nodes": [
        {
            "kind": "gate",
            "payload": {
                "id": "review",
                "name": "Review",
                "prompt": "Go ahead?",
                "approval_schema": {
                    "type": "object",
                    "properties": {"note": {"type": "string", "title": "Note"}},
                },
            },
        }
    ],
    "edges": [],
}


@pytest.fixture
def approver_page(
    shared_database: BaseDatabaseWrapper, page: Page, context: BrowserContext, live_server: Any
) -> Page:
    sign_in(context, make_user("april", groups=("approvers",)), live_server.url)
    return page


def test_the_open_inbox_adds_a_card_when_a_run_comes_to_wait_and_drops_one_decided_elsewhere(
    approver_page: Page, author: Any
) -> None:
    page = approver_page
    operator = make_user("otto", groups=("operators",))
    digest = graphs.store_graph(author, json.dumps(GATE)).graph
    first = runs.start_run(operator, digest, {"n": 1}).run
    assert drive_run.call(first) == "suspended"

    page.goto("/inbox/")
    wait_for_htmx(page)
    cards = page.locator("article.inbox-card")
    expect(cards).to_have_count(1)
    # The approver starts answering the first card.
    cards.first.get_by_label("Note").fill("half-written")

    second = runs.start_run(operator, digest, {"n": 2}).run
    assert drive_run.call(second) == "suspended"

    # No reload: the stream's count brings the new card in.
    expect(cards).to_have_count(2)
    expect(page.locator("#inbox-count .inbox-count-number")).to_have_text("2")
    wait_for_htmx(page)
    notes = [field.input_value() for field in cards.get_by_label("Note").all()]
    assert sorted(notes) == ["", "half-written"]

    # Someone else decides the second run's gate: its card goes, the one being filled stays.
    bea = make_user("bea", groups=("approvers",))
    resolutions.resume(bea, second, {"node": "review", "input": {"note": "done elsewhere"}})
    expect(page.locator("#inbox-count .inbox-count-number")).to_have_text("1")
    expect(cards).to_have_count(1)
    expect(cards.first.get_by_label("Note")).to_have_value("half-written")
    wait_for_htmx(page)
