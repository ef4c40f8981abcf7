"""Run pages that explain, in a browser: the status links to the inbox card and the card back;
a failed run marks the node it failed at; **Retry from here** on that node makes a new run
that completes once the tool works, without running the nodes before it again; a retry over a
recorded write needs each write acknowledged; a node's detail opens from the canvas; the
timeline pages back with **Load older** and shows whole payloads; axe-core on each state.

Runs are driven by the worker's task function in the test's thread (``drive_run.call``) while
the page is quiet, or by a worker thread (``running_worker``) on the shared connection. The
tools keep their calls in files (``tests.integration.runs.fork_tools``), so the test counts
how often each node's tool ran.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import Page, expect

from editor.models import Run
from editor.services import runs
from editor.services.documents import graphs
from editor.tasks import drive_run
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import htmx_settles, running_worker, wait_for_htmx
from tests.integration.api.running import record
from tests.integration.runs.fork_tools import FLAKY, WRITING, calls

#: write (echo) → review (gate) → publish (echo).
GATED = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {
            "kind": "gate",
            "payload": {
                "id": "review",
                "name": "Review the draft",
                "prompt": "Publish it?",
                "approval_schema": {"type": "object"},
            },
        },
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "review"}, {"from": "review", "to": "publish"}],
}


@pytest.fixture(autouse=True)
def fork_tools(settings: Any) -> Iterator[None]:
    from editor.services.installation import tools

    settings.GATEHOUSE_TOOL_MODULES = ["tests.integration.runs.fork_tools"]
    tools.cache_clear()
    try:
        yield
    finally:
        tools.cache_clear()


@pytest.fixture
def notes(tmp_path: Path) -> dict[str, str]:
    return {"calls": str(tmp_path / "calls"), "marker": str(tmp_path / "marker")}


def start(author: User, graph: dict[str, Any], value: Any) -> str:
    digest = graphs.store_graph(author, json.dumps(graph)).graph
    return runs.start_run(User.objects.get(username="otto"), digest, value).run


def canvas_node(page: Page, node_id: str, kind: str = "tool") -> Any:
    """The node ``node_id`` on the run's canvas (Graphviz titles each link with it)."""
    return page.locator(f'#run-canvas svg g.node:has(a[*|title="{kind} node {node_id}"])')


def test_the_run_page_links_to_the_card_and_the_card_back(
    operator_page: Page, author: User
) -> None:
    page = operator_page
    run_id = start(author, GATED, {"draft": "tea"})
    assert drive_run.call(run_id) == "suspended"

    page.goto(f"/runs/{run_id}/")
    wait_for_htmx(page)
    expect(canvas_node(page, "review", "gate")).to_contain_text("gate · waiting")
    assert_accessible(page)
    page.locator(".run-status").get_by_role("link", name="Review the draft").click()

    expect(page).to_have_url(re.compile(rf"/inbox/\?run={run_id}#card-{run_id}-\d+$"))
    card = page.locator(f'article.inbox-card[id^="card-{run_id}-"]')
    expect(card).to_be_visible()
    expect(card).to_contain_text("Publish it?")
    expect(page.locator("article.inbox-card")).to_have_count(1)
    card.get_by_role("link", name=f"run {run_id[:8]}").click()

    expect(page).to_have_url(re.compile(rf"/runs/{run_id}/$"))
    expect(page.locator(".run-status")).to_contain_text("suspended")


def test_a_failed_run_marks_its_node_and_its_page_rests(
    operator_page: Page, author: User, notes: dict[str, str]
) -> None:
    page = operator_page
    # An operator who approves too: the gate below is theirs to decide, so their count rises.
    User.objects.get(username="otto").groups.add(Group.objects.get(name="approvers"))
    run_id = start(author, FLAKY, notes)
    assert drive_run.call(run_id) == "failed"
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))

    page.goto(f"/runs/{run_id}/")
    page.wait_for_function("() => window.__streamsOpened >= 1")
    wait_for_htmx(page)

    failed = page.locator("#run-canvas svg g.node.run-failed")
    expect(failed).to_have_count(1)
    expect(failed).to_contain_text("✗ b")
    expect(failed).to_contain_text("tool · failed")
    expect(canvas_node(page, "a")).to_contain_text("tool · done")
    expect(page.locator("#run-canvas svg g.edge.walked")).to_have_count(1)
    status = page.locator(".run-status")
    expect(status).to_contain_text("tool node `b` failed: the service is not up yet")
    expect(status.get_by_role("link", name="b")).to_be_visible()
    assert_accessible(page)

    # A finished run's page asks nothing more: other runs moving reach it on its stream only.
    settled = len(asked)
    other = start(author, GATED, {"draft": "x"})
    assert drive_run.call(other) == "suspended"
    expect(page.locator("#inbox-count .inbox-count-number")).to_have_text("1")
    assert asked[settled:] == []


def test_retry_from_the_failed_tool_node_completes_without_running_the_rest_again(
    operator_page: Page,
    author: User,
    notes: dict[str, str],
    shared_database: BaseDatabaseWrapper,
) -> None:
    page = operator_page
    origin = start(author, FLAKY, notes)
    assert drive_run.call(origin) == "failed"
    assert calls(Path(notes["calls"])) == {"a": 1, "b": 1}

    page.goto(f"/runs/{origin}/")
    wait_for_htmx(page)
    page.locator(".run-status").get_by_role("button", name="Retry from here").click()

    expect(page).not_to_have_url(re.compile(rf"/runs/{origin}/$"))
    expect(page).to_have_url(re.compile(r"/runs/[0-9a-f-]{36}/$"))
    child = page.url.rstrip("/").split("/")[-1]
    expect(page.locator(".fork-origin")).to_contain_text("retried from node b")
    expect(page.locator("#run-updates[hx-trigger]")).to_have_count(1)
    with running_worker(shared_database):
        expect(page.locator(".run-status")).to_contain_text("completed", timeout=20_000)
    wait_for_htmx(page)

    # The tool works now: `b` ran once more and `c` once; `a` was replayed, not run again.
    assert calls(Path(notes["calls"])) == {"a": 1, "b": 2, "c": 1}
    assert Run.objects.get(pk=child).origin_id is not None
    expect(page.locator("#run-updates[hx-trigger]")).to_have_count(0)
    expect(page.locator("#timeline-rows tr").first).to_contain_text("RunCompleted")
    expect(page.locator("#run-canvas svg g.node.run-done")).to_have_count(3)
    assert_accessible(page)

    with htmx_settles(page):
        canvas_node(page, "a").locator("a").click()
    detail = page.locator("#node-detail")
    expect(detail).to_be_focused()
    expect(detail).to_contain_text("replayed")
    expect(detail.get_by_role("link", name="see them there")).to_have_attribute(
        "href", f"/runs/{origin}/node/?node=a"
    )
    assert_accessible(page)

    page.goto(f"/runs/{origin}/")
    expect(page.locator(".fork-list")).to_contain_text(child[:8])


def test_a_retry_over_a_recorded_write_needs_the_acknowledgement(
    operator_page: Page, author: User, notes: dict[str, str]
) -> None:
    page = operator_page
    origin = start(author, WRITING, notes)
    assert drive_run.call(origin) == "completed"
    before = Run.objects.count()

    page.goto(f"/runs/{origin}/")
    wait_for_htmx(page)
    with htmx_settles(page):
        canvas_node(page, "a").locator("a").click()
    detail = page.locator("#node-detail")
    expect(detail.get_by_role("heading", name="a")).to_be_visible()
    expect(detail).to_contain_text('"calls"')  # what `a` received, whole
    with htmx_settles(page):
        detail.get_by_role("button", name="Retry from here").click()

    writes = detail.locator(".fork-writes")
    expect(writes).to_contain_text("runs these recorded writes again")
    acknowledge = writes.get_by_label(re.compile(r"Run sends again"))
    expect(acknowledge).not_to_be_checked()
    assert_accessible(page)
    detail.get_by_role("button", name="Retry from here").click()
    # The browser holds the form back until the write is acknowledged; nothing was made.
    assert (
        page.evaluate("() => document.querySelector('.fork-writes input').validity.valid") is False
    )
    wait_for_htmx(page)
    assert Run.objects.count() == before

    acknowledge.check()
    detail.get_by_role("button", name="Retry from here").click()
    expect(page).not_to_have_url(re.compile(rf"/runs/{origin}/$"))
    expect(page.locator(".fork-origin")).to_contain_text("writes acknowledged to run again")
    assert Run.objects.count() == before + 1


def test_the_timeline_loads_older_events_and_whole_payloads(
    operator_page: Page, author: User
) -> None:
    page = operator_page
    run_id = start(author, GATED, {"draft": "<b>" + "y" * 600})
    record(run_id, ("NodeEntered", {"node": "write"}))
    record(
        run_id,
        *[("ModelCallRequested", {"node": "write", "model": "echo", "call": n}) for n in range(80)],
    )

    page.goto(f"/runs/{run_id}/")
    wait_for_htmx(page)
    rows = page.locator("#timeline tbody tr[id^=event-]")
    expect(rows).to_have_count(50)
    expect(rows.first).to_have_attribute("id", "event-81")
    with htmx_settles(page):
        page.get_by_role("link", name="Load older").click()
    expect(rows).to_have_count(82)
    expect(rows.last).to_have_attribute("id", "event-0")
    expect(page.locator("#event-31")).to_be_focused()
    expect(page.get_by_role("link", name="Load older")).to_have_count(0)

    with htmx_settles(page):
        page.get_by_role("link", name="Whole payload of event 0").click()
    expect(page.locator("#payload-0 pre")).to_contain_text("<b>" + "y" * 600)
    assert_accessible(page)
