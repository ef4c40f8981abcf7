"""Running a graph from the browser: **Start run** on ``/g/<hash>/``, then the run page updates
itself from its event stream while a worker drives the run, and stops listening once it is
finished; a page of a run that rests makes no requests at all.

The worker is django-tasks-db's own (the loop ``manage.py db_worker`` runs), in a thread of this
process: the test database is SQLite in memory, which another process cannot open, so the
worker and the live server's request threads share one connection (the ``shared_database``
fixture). It starts only once the run is queued, so the only requests it overlaps with are the
page's read-only stream and fragment reads (one shared connection must not carry two writers'
transactions at once).
"""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth.models import Group, User
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import Page, expect

from editor.models import Run
from editor.services import runs
from editor.services.documents import graphs
from editor.tasks import drive_run
from tests.functional.browser import running_worker, wait_for_htmx

#: write (echo) → publish (echo): runs to completion on the built-in tools.
ECHO_CHAIN = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "publish"}],
}


def event_count(run_id: str) -> int:
    return Run.objects.get(pk=run_id).event_count


@pytest.fixture
def echo_chain(author: User) -> str:
    return graphs.store_graph(author, json.dumps(ECHO_CHAIN)).graph.removeprefix("sha256:")


def test_an_operator_starts_a_run_and_watches_it_complete(
    operator_page: Page, echo_chain: str, shared_database: BaseDatabaseWrapper
) -> None:
    page = operator_page
    page.goto(f"/g/{echo_chain}/")
    wait_for_htmx(page)
    field = page.get_by_label("Input (JSON)")
    expect(field).to_have_value("null")

    field.fill('{"topic": ')
    expect(page.locator("#start-run .json-hint")).to_contain_text("Not valid JSON yet")
    page.get_by_role("button", name="Start run").click()
    expect(field).to_have_attribute("aria-invalid", "true")
    assert page.evaluate("() => document.getElementById('id_input').validity.valid") is False
    assert not Run.objects.exists()
    field.fill('{"topic": "tea"}')
    expect(page.locator("#start-run .json-hint")).to_be_empty()
    page.get_by_role("button", name="Start run").click()

    expect(page).to_have_url(re.compile(r"/runs/[0-9a-f-]{36}/$"))
    status = page.locator(".run-status")
    expect(status).to_contain_text("queued")
    expect(page.locator("#run-updates[hx-trigger]")).to_have_count(1)

    with running_worker(shared_database):
        expect(status).to_contain_text("completed", timeout=20_000)

    expect(status).to_contain_text('"topic": "tea"')
    expect(page.locator("#run-canvas svg")).to_contain_text("tool · done")
    expect(page.locator("#timeline")).to_contain_text("RunCompleted")
    # The server's last answer took the trigger away: the page stops listening for the run, and
    # Abandon is gone.
    expect(page.locator("#run-updates[hx-trigger]")).to_have_count(0)
    expect(page.get_by_role("button", name="Abandon run")).to_have_count(0)
    wait_for_htmx(page)


#: write (echo) → review (gate) → publish (echo).
GATED = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {
            "kind": "gate",
            "payload": {"id": "review", "approval_schema": {"type": "object"}},
        },
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "review"}, {"from": "review", "to": "publish"}],
}


def test_the_page_of_a_resting_run_makes_no_requests_and_hears_the_inbox_from_its_stream(
    operator_page: Page, author: User
) -> None:
    page = operator_page
    operator = User.objects.get(username="otto")
    # An operator who approves too: the gate is theirs to decide, so it counts on their pages.
    operator.groups.add(Group.objects.get(name="approvers"))
    gated = graphs.store_graph(author, json.dumps(GATED)).graph
    resting = runs.start_run(operator, gated, {"draft": 1}).run
    assert drive_run.call(resting) == "suspended"
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))

    page.goto(f"/runs/{resting}/")
    expect(page.locator(".run-status")).to_contain_text("suspended")
    count = page.locator("#inbox-count .inbox-count-number")
    expect(count).to_have_text("1")
    page.wait_for_function("() => window.__streamsOpened >= 1")
    wait_for_htmx(page)
    # Nothing on the page asks the server again on a timer.
    expect(page.locator("[hx-trigger*='every']")).to_have_count(0)
    settled = len(asked)

    # Another run comes to wait for a person: the count changes on the page's stream alone.
    other = runs.start_run(operator, gated, {"draft": 2}).run
    assert drive_run.call(other) == "suspended"
    expect(count).to_have_text("2")

    assert asked[settled:] == []
    assert [url for url in asked if "/live/" in url] == [
        f"{page.url.split('/runs/')[0]}/live/?run={resting}&seen={event_count(resting)}"
    ]
