"""Direct manipulation on the canvas: connect two nodes by clicks or by dragging (the label
asked only for a branch), delete the chosen node with Delete, add a connected node with N."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from editor.services import documents
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import htmx_settles
from tests.functional.test_editor import approval_document, choose_node, open_editor


@pytest.fixture
def slug(author: User) -> str:
    return approval_document(author)


def canvas_node(page: Page, node_id: str):  # type: ignore[no-untyped-def]
    return page.locator(f"#canvas-panel svg g.node:has(a[*|title$=' node {node_id}'])")


def edges(slug: str) -> list[dict[str, str]]:
    return json.loads(documents.read_draft(slug).text)["edges"]


def test_connect_by_clicks_asks_for_the_case_of_a_branch(author_page: Page, slug: str) -> None:
    page = author_page
    open_editor(page, slug)

    page.get_by_role("button", name="Connect").click()
    canvas_node(page, "decide").click()
    expect(page.locator("#connect-status")).to_contain_text("Connect decide to")
    canvas_node(page, "write").click()
    dialog = page.locator("#connect-label")
    expect(dialog).to_be_visible()
    assert_accessible(page)
    dialog.get_by_label("Case").select_option("rejected")
    with htmx_settles(page):
        dialog.get_by_role("button", name="Connect").click()
    assert edges(slug)[-1] == {"from": "decide", "to": "write", "label": "rejected"}
    expect(page.locator("#edge-list")).to_contain_text("[rejected]")


def test_dragging_from_one_node_to_another_connects_them(author_page: Page, slug: str) -> None:
    page = author_page
    open_editor(page, slug)
    source = canvas_node(page, "publish").bounding_box()
    target = canvas_node(page, "archive").bounding_box()
    assert source and target

    with htmx_settles(page):
        page.mouse.move(source["x"] + source["width"] / 2, source["y"] + source["height"] / 2)
        page.mouse.down()
        page.mouse.move(
            target["x"] + target["width"] / 2, target["y"] + target["height"] / 2, steps=8
        )
        page.mouse.up()
    assert edges(slug)[-1] == {"from": "publish", "to": "archive"}
    expect(page.locator("#node-heading")).not_to_contain_text("archive")


def test_delete_removes_the_chosen_node_and_n_adds_one_after_it(
    author_page: Page, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    choose_node(page, "publish")

    page.locator("#canvas-panel .canvas-drawing").focus()
    page.keyboard.press("n")
    expect(page.locator("[data-palette]").first).to_be_focused()
    with htmx_settles(page):
        page.get_by_role("button", name="tool", exact=True).click()
    expect(page.locator("#node-heading")).to_contain_text("tool")
    assert edges(slug)[-1] == {"from": "publish", "to": "tool"}

    page.locator("#canvas-panel .canvas-drawing").focus()
    with htmx_settles(page):
        page.keyboard.press("Delete")
    expect(page.locator("#undo-notice")).to_contain_text("Deleted node tool.")
    assert "tool" not in [
        n["payload"]["id"] for n in json.loads(documents.read_draft(slug).text)["nodes"]
    ]
    assert_accessible(page)


def test_delete_removes_an_edge_chosen_on_the_canvas(author_page: Page, slug: str) -> None:
    page = author_page
    open_editor(page, slug)
    before = edges(slug)
    page.locator("#canvas-panel .canvas-drawing").focus()
    page.evaluate(
        """() => {
            const names = {};
            document.querySelectorAll('#canvas-panel svg g.node').forEach((g) => {
                names[g.querySelector('title').textContent] =
                    g.querySelector('a').getAttribute('xlink:title');
            });
            const edge = [...document.querySelectorAll('#canvas-panel svg g.edge')].find((g) => {
                const [tail, head] = g.querySelector('title').textContent.split('->');
                return names[tail] === 'agent node write' && names[head] === 'gate node review';
            });
            edge.querySelector('path').dispatchEvent(new MouseEvent('click', { bubbles: true }));
        }"""
    )
    expect(page.locator("#connect-status")).to_contain_text("Edge write → review chosen")
    with htmx_settles(page):
        page.keyboard.press("Delete")
    expect(page.locator("#undo-notice")).to_contain_text("Deleted edge write → review.")
    assert {"from": "write", "to": "review"} in before
    assert {"from": "write", "to": "review"} not in edges(slug)
