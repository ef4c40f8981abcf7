"""The canvas, readable at any size and by keyboard: finding a node in a 300-node graph, the
list bringing a node into view, the zoom limits, bodies edited like the top level, and the
keyboard path (skip links, one tab stop on the canvas, arrows along edges, Escape back)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from editor.graph import templates, wire_value
from editor.graph.edits import format_draft
from editor.services import documents
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import htmx_settles, wait_for_htmx
from tests.functional.test_editor import approval_document, choose_node, open_editor

HASH = "sha256:" + "a" * 64


def chain(count: int) -> str:
    """A valid graph of ``count`` echo tools in a row, each with a display name."""
    nodes = [
        {"kind": "tool", "payload": {"id": f"step{i}", "tool": "echo", "name": f"Step {i}"}}
        for i in range(count)
    ]
    edges = [{"from": f"step{i}", "to": f"step{i + 1}"} for i in range(count - 1)]
    return json.dumps({"schema_version": 1, "nodes": nodes, "edges": edges}, indent=2)


@pytest.fixture
def large(author: User) -> str:
    return documents.create_document(author, title="Long chain", text=chain(300)).slug


#: The node marked found shows ``text`` and is drawn inside the visible canvas.
FOUND_IN_VIEW = """(text) => {
    const group = document.querySelector('#canvas-panel svg g.node.found');
    if (!group || !group.textContent.includes(text)) { return false; }
    const frame = document.querySelector('#canvas-panel .canvas-drawing').getBoundingClientRect();
    const box = group.getBoundingClientRect();
    return box.left >= frame.left && box.right <= frame.right
        && box.top >= frame.top && box.bottom <= frame.bottom;
}"""


def test_finding_a_node_in_a_300_node_graph_centres_and_marks_it(
    author_page: Page, large: str
) -> None:
    page = author_page
    open_editor(page, large)
    page.wait_for_function("() => window.gatehouseCanvas && window.gatehouseCanvas.view('canvas')")
    # Too large to read whole: it opens at natural size, with a minimap.
    expect(page.locator("#canvas .minimap")).to_be_visible()
    assert_accessible(page)

    page.locator("#canvas-panel .canvas-drawing").click(position={"x": 5, "y": 5})
    page.keyboard.press("/")
    expect(page.locator("#canvas-find")).to_be_focused()
    page.keyboard.type("step250")
    expect(page.locator("#canvas-find-result")).to_contain_text("1 of 1: step250")
    expect(page.locator("#canvas-panel svg g.node.found")).to_have_count(1)
    expect(page.locator("#canvas-panel svg g.node.found")).to_contain_text("Step 250")
    page.wait_for_function(FOUND_IN_VIEW, arg="Step 250")

    with htmx_settles(page):
        page.locator("#node-list").get_by_role("link", name="step40", exact=True).click()
    page.wait_for_function(FOUND_IN_VIEW, arg="Step 40")
    expect(page.locator("#node-heading")).to_contain_text("step40")


def test_fit_does_not_blow_a_small_graph_up_and_zoom_reaches_readable_labels(
    author_page: Page, author: User
) -> None:
    slug = documents.create_document(author, title="Two", text=chain(2)).slug
    page = author_page
    open_editor(page, slug)
    page.wait_for_function("() => window.gatehouseCanvas && window.gatehouseCanvas.view('canvas')")
    real = page.evaluate("() => window.gatehouseCanvas.view('canvas').zoom.getSizes().realZoom")
    assert real <= 1.0001
    page.get_by_role("button", name="Fit").click()
    real = page.evaluate("() => window.gatehouseCanvas.view('canvas').zoom.getSizes().realZoom")
    assert real <= 1.0001
    for _ in range(30):
        page.get_by_role("button", name="Zoom in").click()
    page.wait_for_function(
        "() => window.gatehouseCanvas.view('canvas').zoom.getSizes().realZoom >= 1.5"
    )


def test_a_node_inside_a_body_opens_its_own_form_and_is_edited_there(
    author_page: Page, author: User
) -> None:
    text = format_draft(wire_value(templates.rounds(HASH, HASH, ["a", "b"], 2)))
    slug = documents.create_document(author, title="Panel", text=text).slug
    page = author_page
    open_editor(page, slug)

    with htmx_settles(page):
        page.evaluate(
            """() => [...document.querySelectorAll('#canvas-panel svg g.node a')]
                .find((a) => a.getAttribute('xlink:title') === 'agent node critic')
                .dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }))"""
        )
    expect(page.locator("#node-heading")).to_contain_text("critic")
    expect(page.locator("#nodes-heading")).to_contain_text("in the body of panel")
    expect(page.locator("#level-trail")).to_contain_text("Top level")
    with htmx_settles(page):
        page.get_by_label("Display name").fill("Sharp critic")
    expect(page.locator("#canvas-panel svg")).to_contain_text("Sharp critic")
    assert "Sharp critic" in documents.read_draft(slug).text

    page.get_by_label("Kind").select_option("tool")
    page.get_by_label("New node id").fill("tidy")
    with htmx_settles(page):
        page.get_by_role("button", name="Add node").click()
    expect(page.locator("#node-list")).to_contain_text("tidy")
    panel = json.loads(documents.read_draft(slug).text)["nodes"][0]
    assert "tidy" in [n["payload"]["id"] for n in panel["payload"]["body"]["value"]["nodes"]]
    assert_accessible(page)


def test_the_keyboard_path_skip_links_arrows_and_escape(author_page: Page, author: User) -> None:
    slug = approval_document(author)
    page = author_page
    open_editor(page, slug)
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to the content")).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to the node form")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#node-panel")).to_be_focused()

    # One tab stop on the canvas: the first node; the arrows follow the edges.
    links = page.locator("#canvas-panel svg g.node a[tabindex='0']")
    expect(links).to_have_count(1)
    links.first.focus()
    page.keyboard.press("ArrowRight")
    focused = page.evaluate("() => document.activeElement.getAttribute('xlink:title')")
    assert focused == "gate node review"
    with htmx_settles(page):
        page.keyboard.press("Enter")
    expect(page.locator("#node-heading")).to_contain_text("review")
    expect(page.get_by_label("Id", exact=True)).to_be_focused()
    page.keyboard.press("Escape")
    focused = page.evaluate("() => document.activeElement.getAttribute('xlink:title')")
    assert focused == "gate node review"
    wait_for_htmx(page)
    assert_accessible(page)


def test_an_edit_of_a_name_puts_only_that_node_in_place_on_the_canvas(
    author_page: Page, author: User
) -> None:
    slug = approval_document(author)
    page = author_page
    open_editor(page, slug)
    page.wait_for_function("() => window.gatehouseCanvas && window.gatehouseCanvas.view('canvas')")
    choose_node(page, "write")
    page.evaluate(
        """() => {
            window.__view = window.gatehouseCanvas.view('canvas');
            document.querySelectorAll('#canvas-panel svg g.node').forEach((g) => { g.__kept = 1; });
        }"""
    )
    key = page.locator("#canvas").get_attribute("data-key")

    with htmx_settles(page):
        page.get_by_label("Display name").fill("Draft the announcement")
    expect(page.locator("#canvas-panel svg")).to_contain_text("Draft the announcement")

    # The other nodes are the very elements shown before, pan and zoom were not set up again,
    # and the canvas names the drawing it shows now (the next edit says so to the server).
    kept = page.evaluate(
        """() => [...document.querySelectorAll('#canvas-panel svg g.node')]
            .map((g) => [g.textContent.trim().split('\\n')[0], g.__kept === 1])"""
    )
    assert [name for name, same in kept if not same] == ["n1"], kept
    assert len(kept) == 5
    assert page.evaluate("() => window.gatehouseCanvas.view('canvas') === window.__view")
    assert page.locator("#canvas").get_attribute("data-key") != key
    expect(page.locator("#canvas-panel svg g.node.selected")).to_contain_text("Draft the")

    # Every form posts the revision the last answer gave: another edit is not stale.
    page.get_by_label("From", exact=True).select_option("archive")
    page.get_by_label("To", exact=True).select_option("write")
    with htmx_settles(page):
        page.get_by_role("button", name="Add edge").click()
    expect(page.locator("#edge-list")).to_contain_text("archive")
    expect(page.locator("#stale")).not_to_contain_text("changed elsewhere")
    assert '"from": "archive"' in documents.read_draft(slug).text
    assert_accessible(page)
