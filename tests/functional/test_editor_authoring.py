"""Authoring without JSON in a browser: an approval form of three fields built with the schema
builder and shown by the inbox, a subgraph body built on the canvas, and the small things
around Freeze and Compare."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import BrowserContext, Page, expect

from editor.services import documents, runs
from editor.tasks import drive_run
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import htmx_settles, make_user, sign_in, wait_for_htmx
from tests.functional.test_editor import choose_node, open_editor
from tests.functional.test_editor_direct import canvas_node

ONE_TOOL = {
    "schema_version": 1,
    "nodes": [{"kind": "tool", "payload": {"id": "write", "tool": "echo"}}],
    "edges": [],
}


@pytest.fixture
def everyone(
    shared_database: BaseDatabaseWrapper, context: BrowserContext, live_server: Any
) -> User:
    """One person who authors and operates, signed in."""
    person = make_user("ada", groups=("authors", "operators"))
    sign_in(context, person, live_server.url)
    return person


def test_an_approval_form_of_three_fields_is_built_without_json_and_the_inbox_shows_it(
    page: Page, everyone: User, context: BrowserContext, live_server: Any
) -> None:
    slug = documents.create_document(everyone, title="Payout", text=json.dumps(ONE_TOOL)).slug
    open_editor(page, slug)
    choose_node(page, "write")
    with htmx_settles(page):
        page.locator("[data-palette]", has_text="gate").click()
    expect(page.locator("#node-heading")).to_contain_text("gate")
    # A new gate asks to approve or reject, with a comment.
    builder = page.locator("#sb-approval_schema")
    expect(page.get_by_label("Written as")).to_have_value("fields")
    expect(builder.get_by_label("Name")).to_have_count(2)
    expect(page.locator("#f-approval_schema-0-name")).to_have_value("approved")
    expect(page.locator("#f-approval_schema-1-name")).to_have_value("comment")

    with htmx_settles(page):
        page.get_by_role("button", name="Add field").click()
    name = page.locator("#f-approval_schema-2-name")
    expect(name).to_be_focused()
    with htmx_settles(page):
        name.fill("amount")
    with htmx_settles(page):
        page.locator("#f-approval_schema-2-title").fill("Amount (EUR)")
    with htmx_settles(page):
        page.locator("#f-approval_schema-2-type").select_option("integer")
    # Drawn again for a whole number: its limits, the type keeping the focus.
    expect(page.locator("#f-approval_schema-2-type")).to_have_value("integer")
    with htmx_settles(page):
        page.locator("#f-approval_schema-2-required").check()
    # Required fields come first: now the second.
    expect(page.locator("#f-approval_schema-1-name")).to_have_value("amount")
    page.locator("#sb-approval_schema-1 summary").click()
    with htmx_settles(page):
        page.locator("#f-approval_schema-1-maximum").fill("5000")
    assert_accessible(page)

    schema = json.loads(documents.read_draft(slug).text)["nodes"][1]["payload"]["approval_schema"]
    assert schema == {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean", "title": "Approve"},
            "amount": {"type": "integer", "title": "Amount (EUR)", "maximum": 5000},
            "comment": {"type": "string", "title": "Comment"},
        },
        "required": ["approved", "amount"],
    }

    frozen = documents.freeze(everyone, slug, expected_revision=documents.read_draft(slug).revision)
    # Started by another operator: four eyes keep the starter from deciding.
    operator = make_user("otto", groups=("operators",))
    run_id = runs.start_run(operator, frozen.graph, {"text": "pay"}).run
    assert drive_run.call(run_id) == "suspended"
    sign_in(context, make_user("april", groups=("approvers",)), live_server.url)
    page.goto("/inbox/")
    wait_for_htmx(page)
    card = page.locator(".inbox-card").first
    expect(card.get_by_role("button", name="Approve", exact=True)).to_be_visible()
    expect(card.get_by_role("button", name="Reject", exact=True)).to_be_visible()
    expect(card.get_by_label("Amount (EUR)")).to_have_attribute("max", "5000")
    expect(card.get_by_label("Comment")).to_be_visible()
    assert_accessible(page)
    card.get_by_label("Amount (EUR)").fill("120")
    with htmx_settles(page):
        card.get_by_role("button", name="Approve", exact=True).click()
    # The buttons are gone with the decision: the focus is on what it did.
    expect(page.get_by_role("heading", name="gate: resolved")).to_be_focused()


def test_a_subgraph_body_starts_empty_and_is_built_on_the_canvas(
    author_page: Page, author: User
) -> None:
    page = author_page
    slug = documents.create_document(author, title="Fan out", text=json.dumps(ONE_TOOL)).slug
    open_editor(page, slug)
    choose_node(page, "write")
    with htmx_settles(page):
        page.locator("[data-palette]", has_text="map").click()
    expect(page.locator("#node-heading")).to_contain_text("map")

    with htmx_settles(page):
        page.get_by_label("Body is").select_option("subgraph")
    # No JSON to write, and nothing said against it: an empty body, ready to be built.
    expect(page.locator("#fe-body")).to_be_empty()
    expect(page.locator("#verdict")).to_contain_text("No errors")
    body = json.loads(documents.read_draft(slug).text)["nodes"][1]["payload"]["body"]
    assert body == {"kind": "subgraph", "value": {"schema_version": 1, "nodes": [], "edges": []}}
    assert_accessible(page)

    page.get_by_role("link", name="Build the body on the canvas").click()
    page.wait_for_url("**in=map")
    wait_for_htmx(page)
    expect(page.locator("#nodes-heading")).to_contain_text("in the body of map")
    expect(page.locator("#node-list")).to_contain_text("No nodes yet.")
    with htmx_settles(page):
        page.locator("[data-palette]", has_text="tool").click()
    expect(page.locator("#node-heading")).to_contain_text("tool")
    with htmx_settles(page):
        page.locator("[data-palette]", has_text="tool").click()
    expect(page.locator("#node-heading")).to_contain_text("tool2")
    page.get_by_label("Kind", exact=True).select_option("tool")
    page.get_by_label("New node id").fill("last")
    with htmx_settles(page):
        page.get_by_role("button", name="Add node").click()
    # Connected on the canvas, as at the top level.
    expect(canvas_node(page, "last")).to_be_visible()
    page.get_by_role("button", name="Connect").click()
    canvas_node(page, "tool2").click()
    with htmx_settles(page):
        canvas_node(page, "last").click()
    body = json.loads(documents.read_draft(slug).text)["nodes"][1]["payload"]["body"]["value"]
    assert [node["payload"]["id"] for node in body["nodes"]] == ["tool", "tool2", "last"]
    assert body["edges"] == [{"from": "tool", "to": "tool2"}, {"from": "tool2", "to": "last"}]
    expect(page.locator("#edge-list")).to_contain_text("tool2 → last")
    expect(page.locator("#verdict")).to_contain_text("No errors")
    assert_accessible(page)


#: How far the page scrolls sideways, and the widest elements that stick out of it.
OVERFLOW = """() => {
    const width = document.documentElement.clientWidth;
    const wide = [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > width + 1 && e.offsetParent !== null)
        .slice(0, 5).map((e) => e.tagName + '#' + e.id + '.' + e.className);
    return {scroll: document.documentElement.scrollWidth - width, wide};
}"""


def test_at_1024_pixels_nothing_scrolls_errors_are_marked_and_focus_follows_each_action(
    page: Page, everyone: User
) -> None:
    from tests.functional.test_editor import approval_document

    slug = approval_document(everyone)
    page.set_viewport_size({"width": 1024, "height": 768})
    open_editor(page, slug)
    for node_id in ("write", "review", "decide"):
        choose_node(page, node_id)
        found = page.evaluate(OVERFLOW)
        assert found["scroll"] <= 0, (node_id, found)

    # A field in error says so to assistive technology, and stops saying so once fixed.
    expression = page.get_by_label("Case 1 expression")
    with htmx_settles(page):
        expression.fill("approved ==")
    expect(expression).to_have_attribute("aria-invalid", "true")
    expect(expression).to_have_attribute("aria-describedby", "fe-case-0-value")
    assert_accessible(page)
    with htmx_settles(page):
        expression.fill("approved == true")
    expect(expression).not_to_have_attribute("aria-invalid", "true")

    # Delete: the node's form goes, the focus goes to the notice, whose Undo takes it back.
    choose_node(page, "archive")
    page.locator("#delete-node summary").click()
    with htmx_settles(page):
        page.get_by_role("button", name="Yes, delete archive").click()
    expect(page.locator("#notice-undo")).to_be_focused()
    with htmx_settles(page):
        page.keyboard.press("Enter")
    expect(page.locator("#node-list")).to_contain_text("archive")

    # Freeze: the hash is a link to the version, with Start run and Test run; the Note clears.
    page.get_by_label("Note").fill("First cut")
    with htmx_settles(page):
        page.get_by_role("button", name="Freeze", exact=True).click()
    link = page.locator("#frozen-link")
    expect(link).to_be_focused()
    expect(page.get_by_label("Note")).to_have_value("")
    expect(page.locator("#frozen-test")).to_have_attribute("href", "#test-run-form")
    assert_accessible(page)
    page.locator("#frozen-start").click()
    expect(page.locator("#start-run h2")).to_have_text("Start run")
    assert page.evaluate(OVERFLOW)["scroll"] <= 0
    assert_accessible(page)


def test_compare_reads_older_to_newer_from_a_version_and_from_the_versions_list(
    author_page: Page, author: User
) -> None:
    page = author_page
    value: dict[str, Any] = json.loads(json.dumps(ONE_TOOL))
    slug = documents.create_document(author, title="Grow", text=json.dumps(value)).slug
    first = documents.freeze(author, slug, expected_revision=1).graph
    value["nodes"].append({"kind": "tool", "payload": {"id": "notify", "tool": "echo"}})
    revision = documents.read_draft(slug).revision
    documents.save_draft(author, slug, text=json.dumps(value), expected_revision=revision)
    second = documents.freeze(author, slug, expected_revision=revision + 1).graph

    # From version 2's own page, compared with version 1: still version 1 → version 2.
    page.goto(f"/g/{second.removeprefix('sha256:')}/?document={slug}")
    page.get_by_label("Compare this graph with").select_option(first)
    page.get_by_role("button", name="Compare", exact=True).click()
    lead = page.locator("#compare-result .lead")
    expect(lead).to_contain_text("From version 1")
    expect(lead).to_contain_text("to version 2")
    expect(page.locator("#compare-result ul.added")).to_contain_text("notify")
    expect(page.get_by_label("From", exact=True)).to_have_value(first)
    assert_accessible(page)

    page.goto(f"/graphs/{slug}/versions/")
    page.get_by_role("link", name="Compare with version 1").click()
    expect(page.locator("#compare-result .lead")).to_contain_text("From version 1")
    wait_for_htmx(page)
    # Turned round by hand: the page puts it back older → newer, choices and all.
    with htmx_settles(page):
        page.get_by_label("From", exact=True).select_option("draft")
    expect(page.locator("#compare-result")).to_contain_text("identical")
    expect(page.get_by_label("to", exact=True)).to_have_value("draft")
    assert_accessible(page)


#: The overview's labels: how many, the smallest on screen, whether two overlap, how many lie
#: inside the canvas; and the minimap: its box, and how much of its picture shows in it.
SEEN = """() => {
    const frame = document.querySelector('#canvas-panel .canvas-drawing').getBoundingClientRect();
    const labels = [...document.querySelectorAll('#canvas .overview-labels text')]
        .map((t) => t.getBoundingClientRect());
    let overlap = false;
    labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => {
        if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) {
            overlap = true;
        }
    }));
    const inside = labels.filter((r) => r.left >= frame.left && r.right <= frame.right
        && r.top >= frame.top && r.bottom <= frame.bottom).length;
    const own = document.querySelector('#canvas g.graph g.node text');
    const box = document.querySelector('#canvas .minimap').getBoundingClientRect();
    const picture = document.querySelector('#canvas .minimap image').getBoundingClientRect();
    const seenWidth = Math.min(box.right, picture.right) - Math.max(box.left, picture.left);
    const seenHeight = Math.min(box.bottom, picture.bottom) - Math.max(box.top, picture.top);
    return {
        count: labels.length,
        smallest: Math.min(...labels.map((r) => r.height)),
        overlap, inside,
        ownHidden: getComputedStyle(own).visibility === 'hidden',
        minimap: [box.width, box.height], picture: [seenWidth, seenHeight],
    };
}"""


def test_fit_at_300_nodes_shows_readable_labels_and_a_minimap_to_see_and_drag(
    author_page: Page, author: User
) -> None:
    from tests.functional.test_editor_canvas import chain

    slug = documents.create_document(author, title="Long chain", text=chain(300)).slug
    page = author_page
    open_editor(page, slug)
    page.wait_for_function("() => window.gatehouseCanvas && window.gatehouseCanvas.view('canvas')")
    page.get_by_role("button", name="Fit").click()
    page.wait_for_function("() => document.querySelector('#canvas.overview .overview-labels text')")

    seen = page.evaluate(SEEN)
    assert seen["count"] >= 5, seen
    assert seen["inside"] >= 5, seen
    assert seen["smallest"] >= 10, seen  # pixels on screen, whatever the zoom
    assert not seen["overlap"], seen
    assert seen["ownHidden"], seen
    assert seen["minimap"][0] >= 200 and seen["minimap"][1] >= 50, seen
    assert seen["picture"][0] >= 150 and seen["picture"][1] >= 25, seen  # not a hairline
    assert_accessible(page)

    # A drag across the minimap moves the canvas along with it.
    page.wait_for_function(
        "() => document.querySelector('#canvas .minimap image').getAttribute('href')"
    )
    before = page.evaluate("() => window.gatehouseCanvas.view('canvas').zoom.getPan().x")
    page.locator("#canvas .minimap").scroll_into_view_if_needed()
    box = page.locator("#canvas .minimap").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 20, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] - 20, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    after = page.evaluate("() => window.gatehouseCanvas.view('canvas').zoom.getPan().x")
    assert after < before  # the view went right: the drawing moved left

    # Closer in, the drawing's own labels come back.
    for _ in range(40):
        page.get_by_role("button", name="Zoom in").click()
        if not page.evaluate(
            "() => document.querySelector('#canvas').classList.contains('overview')"
        ):
            break
    expect(page.locator("#canvas")).not_to_have_class(re.compile(r"\boverview\b"))
