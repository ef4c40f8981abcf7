"""The inbox for a person in a browser (issue 26): a claim another approver sees, five cards
approved with one form, a card escalated after a 2-second due time, and one resolved with the
author's value when its due time passes, each found in the decision log; axe-core finds nothing
on the views, the claimed and escalated cards, the form for several cards and its outcome, and
the decision log with each kind of entry.

Runs are driven in the test's own thread by the worker's task function (``drive_run.call``).
The due times are acted on by a real worker (django-tasks-db's loop, in a thread:
:func:`tests.functional.browser.running_worker`) taking the tasks queued for their instants,
only while the browser's requests are reads (the inbox's and the run page's streams): one
connection is shared by everything here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import BrowserContext, Page, expect

from editor.models import RunEvent
from editor.services import documents, runs
from editor.services.documents import approvals
from editor.tasks import drive_run
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import make_user, running_worker, sign_in, wait_for_htmx
from tests.functional.refund import REFUND, card_of

#: A due time acted on by the worker, then shown by the page's stream.
DEADLINE_TIMEOUT = 20_000


@pytest.fixture
def team(shared_database: BaseDatabaseWrapper, author: User) -> dict[str, User]:
    """The author, otto who starts runs, fay (finance) and dan (desk), both approvers."""
    for name in ("finance", "desk"):
        Group.objects.get_or_create(name=name)
    return {
        "ada": author,
        "otto": make_user("otto", groups=("operators",)),
        "fay": make_user("fay", groups=("approvers", "finance")),
        "dan": make_user("dan", groups=("approvers", "desk")),
    }


def waiting(
    team: dict[str, User], policy: dict[str, Any] | None = None, count: int = 1
) -> list[str]:
    """``count`` runs of a refunds document under ``policy``, each parked at its gate."""
    created = documents.create_document(team["ada"], title="Refunds", text=json.dumps(REFUND))
    digest = documents.freeze(team["ada"], created.slug, expected_revision=1).graph
    if policy is not None:
        approvals.replace_policy(team["ada"], created.slug, {"gates": {"refund_review": policy}})
    made = []
    for n in range(count):
        run_id = runs.start_run(
            team["otto"], digest, {"note": f"refund {n + 1}"}, document_slug=created.slug
        ).run
        assert drive_run.call(run_id) == "suspended"
        made.append(run_id)
    return made


def as_user(page: Page, context: BrowserContext, user: User, url: str, path: str) -> None:
    sign_in(context, user, url)
    page.goto(path)
    wait_for_htmx(page)


def test_a_claim_is_seen_by_another_approver_who_decides_anyway_and_the_log_shows_both(
    team: dict[str, User], page: Page, context: BrowserContext, live_server: Any
) -> None:
    (run_id,) = waiting(team)

    as_user(page, context, team["fay"], live_server.url, "/inbox/")
    expect(page.get_by_role("link", name="Mine")).to_have_attribute("aria-current", "page")
    card = card_of(page, run_id)
    card.get_by_role("button", name="I'm on it").click()
    expect(card.locator(".claim")).to_contain_text("You are on it")
    expect(card.get_by_role("button", name="Release")).to_be_visible()
    wait_for_htmx(page)
    assert_accessible(page)

    as_user(page, context, team["dan"], live_server.url, "/inbox/")
    card = card_of(page, run_id)
    expect(card.locator(".claim")).to_contain_text(
        "fay is on it: you may still decide it, but check with them first"
    )
    expect(card.get_by_role("button", name="I'm on it")).to_have_count(0)
    assert_accessible(page)
    card.get_by_label("Note").fill("Could not wait")
    card.get_by_role("button", name="Approve the refund").click()
    expect(card.locator(".receipt")).to_contain_text("Resolved by dan")
    wait_for_htmx(page)

    page.goto("/inbox/resolved/")
    rows = page.locator("table.decisions tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("dan")
    expect(rows.nth(0)).to_contain_text("Could not wait")
    expect(rows.nth(1)).to_contain_text("fay")
    expect(rows.nth(1)).to_contain_text("claimed")
    wait_for_htmx(page)
    assert_accessible(page)
    page.get_by_label("Kind").select_option("claim")
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("On it until")
    wait_for_htmx(page)
    assert_accessible(page)


def test_five_cards_of_one_gate_are_approved_with_one_form(
    team: dict[str, User], page: Page, context: BrowserContext, live_server: Any
) -> None:
    cards = waiting(team, count=5)

    as_user(page, context, team["fay"], live_server.url, "/inbox/")
    for run_id in cards:
        card_of(page, run_id).get_by_label("Select to decide with other cards").check()
    page.get_by_role("button", name="Decide the selected cards together").click()
    expect(page.get_by_role("heading", name="Refund review: 5 cards")).to_be_visible()
    expect(page.locator(".bulk-form")).to_contain_text(
        "Each card keeps what arrived at it for note"
    )
    wait_for_htmx(page)
    assert_accessible(page)

    page.get_by_label("Comment").fill("Monday's batch")
    page.get_by_role("button", name="Approve the refund").click()
    expect(page.get_by_role("heading", name="5 of 5 cards decided")).to_be_visible()
    expect(page.locator(".bulk-cards.decided li")).to_have_count(5)
    assert_accessible(page)

    page.get_by_role("link", name="See them in the decision log").click()
    rows = page.locator("table.decisions tbody tr")
    expect(rows).to_have_count(5)
    for index in range(5):
        expect(rows.nth(index)).to_contain_text("fay")
        expect(rows.nth(index)).to_contain_text("Monday's batch")
    notes = sorted(
        RunEvent.objects.get(run_id=run_id, kind="Resumed").payload["input"]["note"]
        for run_id in cards
    )
    assert notes == [f"refund {n}" for n in range(1, 6)]


def test_a_card_unanswered_for_its_two_second_due_time_escalates_to_the_desk(
    team: dict[str, User],
    page: Page,
    context: BrowserContext,
    live_server: Any,
    shared_database: BaseDatabaseWrapper,
) -> None:
    as_user(page, context, team["dan"], live_server.url, "/inbox/")
    expect(page.locator("#inbox-cards .empty")).to_have_text("Nothing waits for you to decide.")
    policy = {
        "deciders": {"groups": ["finance"], "users": []},
        "due": "2s",
        "on_expiry": {"escalate_to": {"groups": ["desk"], "users": []}},
    }
    (run_id,) = waiting(team, policy)

    # The worker acts on the due time; dan's count, then his list, follow on the page's stream.
    with running_worker(shared_database):
        card = card_of(page, run_id)
        expect(card).to_be_visible(timeout=DEADLINE_TIMEOUT)
        expect(page.locator("#inbox-count .inbox-count-number")).to_have_text("1")
    expect(card.locator(".badge.overdue")).to_have_text("Overdue")
    expect(card.locator(".deadline")).to_contain_text("escalated from finance at")
    wait_for_htmx(page)
    assert_accessible(page)

    page.reload()
    card = card_of(page, run_id)
    card.get_by_role("button", name="Approve the refund").click()
    expect(card.locator(".receipt")).to_contain_text("Resolved by dan")
    wait_for_htmx(page)

    page.goto("/inbox/resolved/")
    rows = page.locator("table.decisions tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("dan")
    expect(rows.nth(1)).to_contain_text("the deadline")
    expect(rows.nth(1)).to_contain_text("escalated")
    expect(rows.nth(1)).to_contain_text("Escalated to desk")
    expect(rows.nth(1)).to_contain_text("Policy: finance · four eyes · quorum 1 · due 2s")
    wait_for_htmx(page)
    assert_accessible(page)


def test_a_card_unanswered_for_its_due_time_is_resolved_with_the_authors_value(
    team: dict[str, User],
    page: Page,
    context: BrowserContext,
    live_server: Any,
    shared_database: BaseDatabaseWrapper,
) -> None:
    value = {"approved": False, "note": "No answer within the due time"}
    policy = {"due": "2s", "on_expiry": {"resolve_with": value}}
    (run_id,) = waiting(team, policy)

    as_user(page, context, team["fay"], live_server.url, f"/runs/{run_id}/")
    with running_worker(shared_database):
        # The run page follows the run's log: the deadline's resolution, then its end.
        expect(page.locator(".run-status")).to_contain_text("completed", timeout=DEADLINE_TIMEOUT)
    (resumed,) = RunEvent.objects.filter(run_id=run_id, kind="Resumed")
    assert (resumed.payload["by"], resumed.payload["input"]) == ("the deadline", value)

    page.goto("/inbox/")
    expect(card_of(page, run_id)).to_have_count(0)
    page.goto("/inbox/resolved/?kind=deadline")
    rows = page.locator("table.decisions tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("the deadline")
    expect(rows.nth(0)).to_contain_text("decided by the deadline")
    expect(rows.nth(0)).to_contain_text("No answer within the due time")
    wait_for_htmx(page)
    assert_accessible(page)
