"""Approval policies in a browser (issue 26): an author asks for two approvals on the document's
**Approvals** page, the run's starter finds the card closed to them by four eyes, two other
approvers decide it, and the decision log shows the policy and both votes; axe-core finds
nothing on the Approvals page, as first shown, with a refused value, and saved.

Runs are driven in the test's own thread by the worker's task function (``drive_run.call``),
on the connection the live server's request threads share, only while the page is quiet.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import User
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import BrowserContext, Page, expect

from editor.models import RunEvent
from editor.services import documents, runs
from editor.tasks import drive_run
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import make_user, sign_in, wait_for_htmx
from tests.functional.refund import REFUND, card_of


def test_a_quorum_of_two_keeps_the_starter_out_and_both_votes_show_in_the_decision_log(
    shared_database: BaseDatabaseWrapper,
    page: Page,
    context: BrowserContext,
    live_server: Any,
    author: User,
) -> None:
    created = documents.create_document(author, title="Refunds", text=json.dumps(REFUND))
    digest = documents.freeze(author, created.slug, expected_revision=1).graph
    sign_in(context, author, live_server.url)

    # The author finds the page from the editor and asks for two approvals.
    page.goto(f"/graphs/{created.slug}/")
    page.get_by_role("link", name="Approvals").click()
    expect(page.get_by_role("heading", name="Approvals of “Refunds”")).to_be_visible()
    gate = page.locator("section.policy-gate")
    expect(gate).to_contain_text("Refund review")
    expect(gate.get_by_label("Four eyes")).to_be_checked()
    wait_for_htmx(page)
    assert_accessible(page)

    quorum = gate.get_by_label("Approvals needed")
    gate.get_by_label("Due after").fill("soon")
    quorum.fill("2")
    gate.get_by_role("button", name="Save the policy of Refund review").click()
    due_error = page.locator("section.policy-gate .field-error")
    expect(due_error).to_contain_text("like `24h` or `90m`")
    expect(page.locator("section.policy-gate").get_by_label("Due after")).to_be_focused()
    wait_for_htmx(page)
    assert_accessible(page)

    gate = page.locator("section.policy-gate")
    gate.get_by_label("Due after").fill("")
    gate.get_by_role("button", name="Save the policy of Refund review").click()
    expect(page.locator("section.policy-gate .saved")).to_contain_text(
        "Saved the policy of Refund review: runs started from now on use it."
    )
    expect(page.locator("section.policy-gate")).to_contain_text("2 different people")
    wait_for_htmx(page)
    assert_accessible(page)

    # Sam starts the run, and may approve gates: four eyes keeps this one from him.
    sam = make_user("sam", groups=("operators", "approvers"))
    run_id = runs.start_run(sam, digest, {"customer": "C-17"}, document_slug=created.slug).run
    assert drive_run.call(run_id) == "suspended"
    sign_in(context, sam, live_server.url)
    page.goto("/inbox/")
    expect(page.locator("#inbox-cards .empty")).to_have_text("Nothing waits for you to decide.")
    page.goto(f"/inbox/?run={run_id}")  # the run page's link: the run's cards, read-only here
    card = card_of(page, run_id)
    expect(card.locator(".refusal")).to_contain_text(
        "Four eyes: you started this run, so another approver decides the gate `refund_review`."
    )
    expect(card.get_by_role("button", name="Approve the refund")).to_have_count(0)
    expect(card).to_contain_text("0 of 2 approvals, needs 2 more.")
    wait_for_htmx(page)

    # Two other approvers decide it: the first approval is a vote, the second resolves.
    for name, note in (("amy", "Receipt checked"), ("ben", "Agreed")):
        sign_in(context, make_user(name, groups=("approvers",)), live_server.url)
        page.goto("/inbox/")
        card = card_of(page, run_id)
        card.get_by_label("Note").fill(note)
        card.get_by_role("button", name="Approve the refund").click()
        receipt = card.locator(".receipt")
        if name == "amy":
            expect(receipt).to_contain_text("Approved by amy")
            expect(receipt).to_contain_text("1 of 2 approvals")
        else:
            expect(receipt).to_contain_text("Resolved by ben")
            expect(receipt).to_contain_text("after the approval of amy")
        wait_for_htmx(page)

    assert drive_run.call(run_id) == "completed"
    assert RunEvent.objects.filter(run_id=run_id, kind="ApprovalVoted").count() == 1

    page.goto("/inbox/resolved/")
    rows = page.locator("table.decisions tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("ben")
    expect(rows.nth(0)).to_contain_text("after the approval of amy")
    expect(rows.nth(0)).to_contain_text("Agreed")
    expect(rows.nth(1)).to_contain_text("amy")
    expect(rows.nth(1)).to_contain_text("approval 1 of 2")
    expect(rows.nth(1)).to_contain_text("Receipt checked")
    for row in (rows.nth(0), rows.nth(1)):
        expect(row).to_contain_text("Policy: approvers · four eyes · quorum 2")
    wait_for_htmx(page)
    assert_accessible(page)
