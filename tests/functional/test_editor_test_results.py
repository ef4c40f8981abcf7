"""The latest test run on the editor's canvas (issue 24), as an author sees it: a test run
started from the keyboard, drawn over the draft while a worker drives it (each node's state, the
branch's case, the way it went), a node's input and output beside its form (copied whole),
**Execute this node**, **Test from here**, the result greyed once the draft moves on; and two
runs compared from the **Runs** page."""

from __future__ import annotations

import json
import re

from django.contrib.auth.models import User
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import BrowserContext, Page, expect

from editor.services import documents
from editor.services.runs import test_runs
from editor.tasks import drive_run
from editor.templatetags.gatehouse import short_run
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import htmx_settles, running_worker, wait_for_htmx
from tests.integration.api.running import BRANCHING

WORKER_TIMEOUT = 20_000


def canvas_node(page: Page, state: str) -> object:
    return page.locator(f"#canvas-panel svg g.node.test-{state}")


def choose(page: Page, node: str) -> None:
    """Open a node's form from the Nodes list, and wait for its test result beside it."""
    with htmx_settles(page):
        page.locator("#node-list a", has_text=re.compile(f"^{node}$")).click()
    expect(page.locator("#node-heading")).to_contain_text(node)
    expect(page.locator("#node-result-heading")).to_contain_text("Latest test run")
    wait_for_htmx(page)


def test_a_test_run_is_drawn_on_the_canvas_then_a_node_is_run_alone_and_from_there(
    author_page: Page,
    author: User,
    context: BrowserContext,
    shared_database: BaseDatabaseWrapper,
) -> None:
    page = author_page
    slug = documents.create_document(
        author, title="Sizes", text=json.dumps(BRANCHING), slug="sizes"
    ).slug
    page.goto(f"/graphs/{slug}/")
    panel = page.locator("#test-panel")
    expect(panel.get_by_role("button", name="Test run")).to_be_visible()
    wait_for_htmx(page)

    # From the keyboard: the input typed, then Alt+Shift+T from wherever the focus is.
    page.get_by_label("Input (JSON)").fill('{"n": 50}')
    page.keyboard.press("Alt+Shift+T")
    expect(panel).to_contain_text("Test run started.")
    with running_worker(shared_database):
        expect(page.locator("#test-results-summary")).to_contain_text(
            "completed", timeout=WORKER_TIMEOUT
        )
    summary = page.locator("#test-results-summary")
    expect(summary).to_contain_text("3 done · 1 skipped")
    expect(canvas_node(page, "done")).to_have_count(3)
    expect(canvas_node(page, "skipped")).to_have_count(1)
    expect(canvas_node(page, "skipped")).to_contain_text("small")
    # The state is said in words too, and the branch's case.
    expect(page.locator("#canvas-panel svg .test-badge")).to_have_count(4)
    expect(page.locator("#canvas-panel svg .test-badge", has_text="case big")).to_have_text(
        "✓ done · case big"
    )
    expect(page.locator("#canvas-panel svg g.edge.test-walked")).to_have_count(2)
    wait_for_htmx(page)
    assert_accessible(page)

    # The node beside its form: what it received and gave, whole, and copied.
    choose(page, "big")
    result = page.locator("#node-result")
    expect(result.locator("#node-result-output-1")).to_contain_text('"n": 50')
    expect(result.locator("#node-result-input-1")).to_contain_text('"n": 50')
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    result.get_by_role("button", name="Copy output").click()
    expect(result.get_by_role("button", name="Copied")).to_be_visible()
    assert json.loads(page.evaluate("() => navigator.clipboard.readText()")) == {"n": 50}
    assert_accessible(page, include="#node-panel")

    # Execute this node: `big` alone, on the input it received.
    wait_for_htmx(page)
    result.get_by_role("button", name="Execute this node").click()
    status = page.locator("#node-test-status")
    expect(status).to_contain_text("Test run started: big alone.")
    with running_worker(shared_database):
        expect(summary).to_contain_text("big alone", timeout=WORKER_TIMEOUT)
        expect(summary).to_contain_text("completed", timeout=WORKER_TIMEOUT)
    expect(canvas_node(page, "done")).to_have_count(1)
    expect(canvas_node(page, "done")).to_contain_text("big")
    expect(result).to_contain_text("big alone")

    # Test from here: the draft from `big` on, what came before replayed from the run that
    # reached it. (The node's result reloads once more as the run finishes: let it.)
    wait_for_htmx(page)
    with htmx_settles(page):
        result.get_by_role("button", name="Test from here").click()
    expect(status).to_contain_text("Test run started from big.")
    with running_worker(shared_database):
        expect(summary).to_contain_text("from big", timeout=WORKER_TIMEOUT)
        expect(summary).to_contain_text("completed", timeout=WORKER_TIMEOUT)
    expect(canvas_node(page, "done")).to_have_count(3)
    expect(panel.locator(".test-run")).to_have_count(3)
    expect(page.locator("[data-canvas].test-older")).to_have_count(0)

    # The draft moves on: the result is greyed, and says which revision it is from.
    wait_for_htmx(page)
    with htmx_settles(page):
        page.get_by_label("Display name").fill("Big one")
    expect(page.locator("[data-canvas].test-older")).to_have_count(1)
    expect(page.locator("#test-results [data-test-older]")).to_be_visible()
    expect(page.locator("#test-results [data-test-older]")).to_contain_text("from revision 1")
    wait_for_htmx(page)
    assert_accessible(page)


def test_two_runs_are_compared_from_the_runs_list(author_page: Page, author: User) -> None:
    page = author_page
    slug = documents.create_document(
        author, title="Sizes", text=json.dumps(BRANCHING), slug="sizes"
    ).slug
    small = test_runs.start_test_run(author, slug, {"n": 1}).run
    big = test_runs.start_test_run(author, slug, {"n": 50}).run
    for run in (small, big):
        assert drive_run.call(run) == "completed"

    page.goto("/runs/?test=true")
    wait_for_htmx(page)
    page.get_by_label(f"Compare run {short_run(small)}").check()
    page.get_by_label(f"Compare run {short_run(big)}").check()
    assert_accessible(page)
    page.get_by_role("button", name="Compare the two chosen runs").click()

    expect(page.get_by_role("heading", name="Compare two runs")).to_be_visible()
    table = page.locator("#compare-table")
    # One run went the big way, the other the small way: each branch target differs.
    for node in ("big", "small"):
        states = table.locator(f"tr[data-node='{node}'] td")
        expect(states.nth(0)).to_have_text(re.compile("^(exited|skipped)$"))
        assert {states.nth(0).inner_text(), states.nth(1).inner_text()} == {"exited", "skipped"}
    expect(table.locator("tr[data-node='ask']")).to_contain_text(re.compile(r"\$\.n: changed"))
    assert_accessible(page)
