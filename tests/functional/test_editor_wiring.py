"""Authoring without blind spots: the data a node receives and gives, the paths each reference
field offers, hints that never block, and the mistakes the editor catches (a duplicate edge, a
case that has its edge, an emptied id, an odd id, held fields on the canvas, the error link's
focus, the one-click fixes of the branch pairing errors)."""

from __future__ import annotations

import json
import re
from typing import Any

from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from editor.graph import wire_value
from editor.graph.edits import format_draft
from editor.graph.templates import approval_gate
from editor.services import agents, documents
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import htmx_settles
from tests.functional.test_editor import (
    BLOCKED,
    FREEZABLE,
    WRITER,
    approval_document,
    choose_node,
    open_editor,
)
from tests.functional.test_editor_direct import canvas_node


def approval_value(author: User) -> dict[str, Any]:
    return wire_value(approval_gate(agents.create_agent(author, WRITER).agent))


def create(author: User, value: dict[str, Any]) -> str:
    return documents.create_document(author, title="Wiring", text=format_draft(value)).slug


def draft(slug: str) -> dict[str, Any]:
    return json.loads(documents.read_draft(slug).text)


def datalist(page: Page, list_id: str) -> list[str]:
    return page.eval_on_selector_all(f"#{list_id} option", "(options) => options.map(o => o.value)")


def test_a_map_reading_items_is_hinted_and_the_fields_offer_what_flows_in(
    author_page: Page, author: User
) -> None:
    page = author_page
    slug = approval_document(author)
    open_editor(page, slug)
    choose_node(page, "review")

    with htmx_settles(page):
        page.get_by_role("button", name="map", exact=True).click()
    expect(page.locator("#node-heading")).to_contain_text("map")
    over = page.locator("#f-over")
    expect(over).to_have_value("items")
    expect(page.locator("#fe-over")).to_contain_text(
        "Hint: `over` reads `items`, which the approval schema of `review` does not describe"
    )
    expect(page.locator("#hints-heading")).to_have_text("ⓘ 1 hint")
    # The verdict counts the new map's missing body, not the hint.
    expect(page.locator("#verdict")).to_have_text(BLOCKED)
    expect(page.locator("#verdict")).to_contain_text("1 error")
    expect(page.locator("#flow-receives")).to_contain_text("From review (gate)")
    expect(page.locator("#flow-receives")).to_contain_text("approved")
    assert sorted(datalist(page, "paths-over")) == ["approved", "comment", "draft"]
    assert over.get_attribute("list") == "paths-over"
    assert_accessible(page)

    # The path offered is typed: the hint goes, and what the map now reads is no list.
    with htmx_settles(page):
        over.fill("draft")
    expect(page.locator("#fe-over")).to_contain_text("describes as a string, not a list")

    # A case's condition completes the path being typed, after what is typed before it.
    choose_node(page, "decide")
    condition = page.get_by_label("Case 1 expression")
    condition.fill("")
    condition.press_sequentially("draft != null && appr")
    assert datalist(page, "paths-case") == ["draft != null && approved"]
    assert_accessible(page)


def test_a_tool_input_gets_a_path_inserted_from_what_flows_in(
    author_page: Page, author: User
) -> None:
    page = author_page
    slug = approval_document(author)
    open_editor(page, slug)
    choose_node(page, "archive")

    page.get_by_label("Path of what flows in").select_option("comment")
    with htmx_settles(page):
        page.get_by_role("button", name="Insert", exact=True).click()
    expect(page.locator("#f-input")).to_have_value('{\n  "comment": "comment"\n}')
    [archive] = [n for n in draft(slug)["nodes"] if n["payload"]["id"] == "archive"]
    assert archive["payload"]["input"] == {"comment": "comment"}
    expect(page.locator("#verdict")).to_have_text(FREEZABLE)
    assert_accessible(page)


def test_connecting_offers_the_unused_case_first_and_refuses_an_edge_that_is_there(
    author_page: Page, author: User
) -> None:
    page = author_page
    value = approval_value(author)
    value["edges"] = [edge for edge in value["edges"] if edge.get("label") != "rejected"]
    slug = create(author, value)
    open_editor(page, slug)

    page.get_by_role("button", name="Connect").click()
    canvas_node(page, "decide").click()
    canvas_node(page, "archive").click()
    dialog = page.locator("#connect-label")
    expect(dialog).to_be_visible()
    case = dialog.get_by_label("Case")
    expect(case).to_have_value("rejected")
    assert case.locator("option").all_text_contents() == [
        "rejected",
        "approved (has an edge already)",
    ]
    assert_accessible(page)
    with htmx_settles(page):
        dialog.get_by_role("button", name="Connect").click()
    expect(page.locator("#connect-status")).to_have_text("Connected decide → archive (rejected).")
    expect(page.locator("#verdict")).to_have_text(FREEZABLE)

    # The same edge again: refused, said where the person looks, nothing saved.
    revision = documents.read_draft(slug).revision
    page.get_by_role("button", name="Connect").click()
    canvas_node(page, "decide").click()
    canvas_node(page, "archive").click()
    case.select_option("rejected")
    with htmx_settles(page):
        dialog.get_by_role("button", name="Connect").click()
    expect(page.locator("#connect-status")).to_contain_text(
        "Not connected: there is already an edge `decide` → `archive` for case `rejected`"
    )
    assert documents.read_draft(slug).revision == revision


def test_an_emptied_id_is_said_held_and_marked_on_the_canvas_and_links_focus_the_field(
    author_page: Page, author: User
) -> None:
    page = author_page
    slug = approval_document(author)
    open_editor(page, slug)
    choose_node(page, "publish")

    with htmx_settles(page):
        page.get_by_label("Id", exact=True).fill("")
    expect(page.locator("#fe-id")).to_contain_text(
        "not saved: it is empty, and every node needs an id"
    )
    expect(page.locator("#verdict")).to_have_text(BLOCKED)
    held = canvas_node(page, "publish")
    expect(held).to_have_class(re.compile(r"\bheld\b"))
    expect(held).to_contain_text("✎ publish")
    expect(held).to_contain_text("tool · not saved")
    assert_accessible(page)

    # The error's link opens the node with the focus on the field in error, not on its id.
    choose_node(page, "decide")
    with htmx_settles(page):
        page.get_by_label("Case 1 expression").fill("approved ==")
    choose_node(page, "write")
    with htmx_settles(page):
        page.locator("#error-list a.error-node", has_text="decide").click()
    expect(page.get_by_label("Case 1 expression")).to_be_focused()
    with htmx_settles(page):
        page.locator("#error-list .held-item a.error-node").click()
    expect(page.get_by_label("Id", exact=True)).to_be_focused()


def test_an_imported_odd_id_and_duplicate_edge_are_hints_the_duplicate_removed_in_a_click(
    author_page: Page, author: User
) -> None:
    page = author_page
    value = approval_value(author)
    value["nodes"][3]["payload"]["id"] = "Bad Id!"
    value["edges"] = [
        {**edge, "to": "Bad Id!"} if edge["to"] == "publish" else edge for edge in value["edges"]
    ]
    value["edges"].append({"from": "write", "to": "review"})
    slug = create(author, value)
    open_editor(page, slug)

    expect(page.locator("#verdict")).to_have_text(FREEZABLE)
    expect(page.locator("#hints-heading")).to_have_text("ⓘ 2 hints")
    expect(page.locator("#hint-list")).to_contain_text("node `Bad Id!`: the id has characters")
    expect(page.locator("#hint-list")).to_contain_text("edge `write` -> `review` is listed twice")
    assert_accessible(page)

    with htmx_settles(page):
        page.locator("#hint-list a.error-node", has_text="Bad Id!").click()
    expect(page.get_by_label("Id", exact=True)).to_be_focused()
    expect(page.locator("#fe-id")).to_contain_text("Hint: The id has characters")

    with htmx_settles(page):
        page.get_by_role("button", name="Remove the duplicate edge").click()
    expect(page.locator("#hints-heading")).to_have_text("ⓘ 1 hint")
    assert draft(slug)["edges"].count({"from": "write", "to": "review"}) == 1
    expect(page.locator("#verdict")).to_have_text(FREEZABLE)


def test_the_branch_pairing_errors_are_fixed_in_one_click_each(
    author_page: Page, author: User
) -> None:
    page = author_page
    value = approval_value(author)
    value["edges"] = [
        {"from": "write", "to": "review"},
        {"from": "review", "to": "decide"},
        {"from": "decide", "to": "publish", "label": "approvd"},
        {"from": "decide", "to": "archive"},
    ]
    slug = create(author, value)
    open_editor(page, slug)
    errors = page.locator("#error-list")
    expect(page.locator("#verdict")).to_contain_text("4 errors")

    relabel = errors.locator("li", has_text="names no case")
    expect(relabel.get_by_label("Relabel it with case")).to_have_value("approved")
    assert_accessible(page)
    with htmx_settles(page):
        relabel.get_by_role("button", name="Relabel it").click()
    assert {"from": "decide", "to": "publish", "label": "approved"} in draft(slug)["edges"]

    with htmx_settles(page):
        errors.get_by_role("button", name="Label it rejected").click()
    expect(page.locator("#verdict")).to_have_text(FREEZABLE)
    assert {"from": "decide", "to": "archive", "label": "rejected"} in draft(slug)["edges"]

    # An unrouted case: routed to the node chosen beside it.
    with htmx_settles(page):
        page.get_by_role("button", name="Delete edge decide to archive").click()
    route = errors.locator("li", has_text="has no outbound edge")
    route.get_by_label("Route case rejected to").select_option("archive")
    assert_accessible(page)
    with htmx_settles(page):
        route.get_by_role("button", name="Route it").click()
    expect(page.locator("#verdict")).to_have_text(FREEZABLE)
    assert {"from": "decide", "to": "archive", "label": "rejected"} in draft(slug)["edges"]
