"""The editor page: live validation, the canvas, the JSON tab and freezing, with no reload."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from unittest import mock

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import BrowserContext, Page, expect

from editor.graph import wire_value
from editor.graph.edits import format_draft
from editor.graph.templates import approval_gate
from editor.services import agents, documents
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import htmx_settles, wait_for_htmx

WRITER = '{"name": "Writer", "model": "echo", "prompt": "Write the draft."}'
BLOCKED = re.compile(r"^⚠ \d+ errors? — freeze is blocked$")
FREEZABLE = "✓ No errors · this graph can be frozen"


def approval_document(author: User) -> str:
    """An *Approval gate* document whose draft is valid: its slug."""
    writer = agents.create_agent(author, WRITER).agent
    text = format_draft(wire_value(approval_gate(writer)))
    return documents.create_document(author, title="Launch review", text=text).slug


@pytest.fixture
def slug(author: User) -> str:
    return approval_document(author)


def open_editor(page: Page, slug: str) -> None:
    page.goto(f"/graphs/{slug}/")
    wait_for_htmx(page)
    # Set on this document only: a reload would lose it.
    page.evaluate("() => { window.__sameDocument = true; }")


def assert_not_reloaded(page: Page) -> None:
    assert page.evaluate("() => window.__sameDocument") is True


def choose_node(page: Page, node_id: str) -> None:
    with htmx_settles(page):
        page.locator("#node-list").get_by_role("link", name=node_id, exact=True).click()
    expect(page.locator("#node-heading")).to_contain_text(node_id)


def test_changing_a_display_name_redraws_the_canvas_in_place(author_page: Page, slug: str) -> None:
    page = author_page
    open_editor(page, slug)
    canvas = page.locator("#canvas-panel svg")
    expect(canvas).to_contain_text("write")
    choose_node(page, "write")

    with htmx_settles(page):
        page.get_by_label("Display name").fill("Draft the announcement")
    expect(canvas).to_contain_text("Draft the announcement")
    expect(page.locator("#verdict")).to_have_text(FREEZABLE)
    assert_not_reloaded(page)
    assert '"name": "Draft the announcement"' in documents.read_draft(slug).text


def test_a_broken_branch_expression_blocks_freezing_until_it_is_fixed(
    author_page: Page, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    expect(page.locator("#verdict")).to_have_text(FREEZABLE)
    choose_node(page, "decide")

    with htmx_settles(page):
        page.get_by_label("Case 1 expression").fill("approved ==")
    expect(page.locator("#verdict")).to_have_text(BLOCKED)
    expect(page.locator("#error-list")).to_contain_text("decide")
    expect(page.locator("#freeze-button")).to_be_disabled()
    assert_not_reloaded(page)

    with htmx_settles(page):
        page.get_by_label("Case 1 expression").fill("approved == true")
    expect(page.locator("#verdict")).to_have_text(FREEZABLE)
    expect(page.locator("#error-list")).to_have_count(0)
    expect(page.locator("#freeze-button")).to_be_enabled()
    assert_not_reloaded(page)


def test_a_dangling_edge_typed_in_the_json_tab_is_listed_then_fixed(
    author_page: Page, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    original = documents.read_draft(slug).text
    broken = json.loads(original)
    broken["edges"].append({"from": "publish", "to": "nowhere"})

    page.get_by_text("JSON", exact=True).click()
    with htmx_settles(page):
        page.get_by_label("The whole draft").fill(json.dumps(broken, indent=2))
    expect(page.locator("#verdict")).to_have_text(BLOCKED)
    expect(page.locator("#error-list")).to_contain_text("nowhere")
    expect(page.locator("#edge-list")).to_contain_text("nowhere")
    assert_not_reloaded(page)

    with htmx_settles(page):
        page.get_by_label("The whole draft").fill(original)
    expect(page.locator("#verdict")).to_have_text(FREEZABLE)
    assert_not_reloaded(page)


def test_a_draft_that_does_not_parse_turns_the_forms_off_and_says_where(
    author_page: Page, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    page.get_by_text("JSON", exact=True).click()
    with htmx_settles(page):
        page.get_by_label("The whole draft").fill('{"schema_version": 1,')
    expect(page.locator("#json-error")).to_contain_text("The JSON has a typo at line 1")
    expect(page.locator("#verdict")).to_have_text(BLOCKED)
    # The last draft that parsed stays on the canvas and in the lists, greyed.
    expect(page.locator("#greyed-notice")).to_be_visible()
    expect(page.locator("#canvas-panel svg")).to_contain_text("review")
    expect(page.locator("#node-list")).to_contain_text("publish")
    expect(page.locator("#forms-off")).to_be_visible()
    # The error can be jumped to: the caret goes to line 1, column 22.
    page.get_by_role("button", name="Go to line 1, column 22").click()
    assert page.evaluate("() => document.activeElement.id") == "json-text"
    assert page.evaluate("() => document.getElementById('json-text').selectionStart") == 21
    expect(page.locator("#json-lines")).to_contain_text("1")
    assert_accessible(page)
    assert_not_reloaded(page)


def test_freezing_shows_the_hash_and_the_download_has_exactly_that_sha256(
    author_page: Page, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    page.get_by_label("Note").fill("first cut")
    with htmx_settles(page):
        page.get_by_role("button", name="Freeze").click()
    frozen = page.locator("#frozen")
    expect(frozen).to_contain_text("Frozen as version 1")
    digest = frozen.locator("code.hash").inner_text()
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    assert_not_reloaded(page)

    page.locator("#freeze-panel").get_by_role("link", name="Versions").click()
    row = page.locator("#version-rows tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("first cut")
    row.get_by_role("link", name=digest[7:19]).click()
    expect(page.locator(".full-hash")).to_have_text(digest)
    expect(page.locator("#canvas svg")).to_contain_text("review")

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download JSON").click()
    download = download_info.value
    assert download.suggested_filename == f"{slug}-{digest[7:19]}.json"
    content = download.path().read_bytes()
    assert "sha256:" + hashlib.sha256(content).hexdigest() == digest


def test_comparing_two_versions_lists_the_changed_fields(
    author_page: Page, author: User, slug: str
) -> None:
    first = documents.freeze(author, slug, expected_revision=1)
    value = json.loads(documents.read_draft(slug).text)
    value["nodes"][0]["payload"]["name"] = "Writer, second take"
    documents.save_draft(author, slug, text=json.dumps(value, indent=2), expected_revision=1)
    second = documents.freeze(author, slug, expected_revision=2)
    assert first.graph != second.graph

    page = author_page
    page.goto(f"/g/{first.graph.removeprefix('sha256:')}/?document={slug}")
    page.locator("#compare").get_by_label("Compare this graph with").select_option(
        value=second.graph
    )
    page.locator("#compare").get_by_role("button", name="Compare").click()

    result = page.locator("#compare-result")
    expect(result).to_contain_text("From")
    changed = result.locator(".changed-node")
    expect(changed).to_have_count(1)
    expect(changed).to_contain_text("write")
    expect(changed).to_contain_text("Writer, second take")
    expect(result.locator("ul.added")).to_have_count(0)
    expect(result.locator("#canvas svg")).to_contain_text("Writer, second take")
    wait_for_htmx(page)

    with htmx_settles(page):
        page.get_by_label("to", exact=True).select_option(value=first.graph)
    expect(result).to_contain_text("= identical")


def test_a_stale_tab_shows_its_rejected_change_and_loads_the_newer_draft(
    author_page: Page, context: BrowserContext, slug: str
) -> None:
    first = author_page
    open_editor(first, slug)
    second = context.new_page()
    open_editor(second, slug)
    choose_node(first, "write")
    choose_node(second, "write")

    with htmx_settles(first):
        first.get_by_label("Display name").fill("Saved in the first tab")
    expect(first.locator("#canvas-panel svg")).to_contain_text("Saved in the first tab")

    with htmx_settles(second):
        second.get_by_label("Display name").fill("Typed in the second tab")
    stale = second.locator("#stale")
    expect(stale.get_by_role("heading", name="This draft changed elsewhere")).to_be_visible()
    expect(stale.get_by_label("Your change (not saved)")).to_have_value(
        re.compile("Typed in the second tab")
    )
    expect(stale.get_by_label("The newer draft")).to_have_value(
        re.compile("Saved in the first tab")
    )
    assert "Typed in the second tab" not in documents.read_draft(slug).text

    with htmx_settles(second):
        stale.get_by_role("link", name="Load newer draft").click()
    expect(second.locator("#canvas-panel svg")).to_contain_text("Saved in the first tab")
    expect(second.locator("#stale")).to_be_empty()


def test_discard_changes_goes_back_to_the_latest_frozen_version(
    author_page: Page, author: User, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    expect(page.locator("#discard-button")).to_be_disabled()
    expect(page.locator("#discard-hint")).to_have_text("nothing frozen yet")

    documents.freeze(author, slug, expected_revision=1)
    open_editor(page, slug)
    choose_node(page, "write")
    with htmx_settles(page):
        page.get_by_label("Display name").fill("A change to throw away")
    expect(page.locator("#canvas-panel svg")).to_contain_text("A change to throw away")

    with htmx_settles(page):
        page.get_by_role("button", name="Discard changes").click()
    expect(page.locator("#canvas-panel svg")).not_to_contain_text("A change to throw away")
    assert "A change to throw away" not in documents.read_draft(slug).text
    assert_not_reloaded(page)


# --- The canvas: the open node, pan and zoom --------------------------------------------------

VIEWPORT = "#canvas-panel svg .svg-pan-zoom_viewport"
MATRIX = re.compile(r"matrix\(([^)]*)\)")


def view_of(page: Page) -> list[float]:
    """The canvas's pan and zoom: the viewport's transform matrix (a, b, c, d, e, f)."""
    transform = page.locator(VIEWPORT).get_attribute("transform") or ""
    match = MATRIX.search(transform)
    assert match, transform
    return [float(number) for number in re.split(r"[ ,]+", match.group(1).strip())]


def test_typing_in_a_field_leaves_the_node_and_edge_lists_in_place(
    author_page: Page, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    choose_node(page, "write")
    # The first answer marks the open node in the lists too (their "selected" fields).
    with htmx_settles(page):
        page.get_by_label("Display name").fill("Draft")
    expect(page.locator("#canvas-panel svg")).to_contain_text("Draft")
    page.evaluate("() => { document.getElementById('edge-list').__before = true; }")

    edit = page.expect_request(lambda request: request.url.endswith("/edit/node/"))
    with edit as sent, htmx_settles(page):
        page.get_by_label("Display name").fill("Draft the announcement")
    expect(page.locator("#canvas-panel svg")).to_contain_text("Draft the announcement")

    assert "shown_structure=" in (sent.value.post_data or "")
    assert page.evaluate("() => document.getElementById('edge-list').__before") is True
    # A rename changes the lists: they come again.
    with htmx_settles(page):
        page.get_by_label("Id", exact=True).fill("writer")
    expect(page.locator("#edge-list")).to_contain_text("writer")
    assert page.evaluate("() => document.getElementById('edge-list').__before") is None


def test_the_canvas_marks_the_node_whose_form_is_open(author_page: Page, slug: str) -> None:
    page = author_page
    open_editor(page, slug)
    selected = page.locator("#canvas-panel svg g.node.selected")
    expect(selected).to_have_count(0)

    choose_node(page, "write")
    expect(selected).to_have_count(1)
    expect(selected).to_contain_text("agent")
    expect(selected.locator("title")).to_have_count(1)

    with htmx_settles(page):
        page.locator("#canvas-panel svg g.node", has_text="review").locator("a").first.click()
    expect(page.locator("#node-heading")).to_contain_text("review")
    expect(selected).to_have_count(1)
    expect(selected).to_contain_text("review")

    with htmx_settles(page):
        page.get_by_label("Display name").fill("Sign-off")
    expect(page.locator("#canvas-panel svg")).to_contain_text("Sign-off")
    expect(selected).to_have_count(1)
    expect(selected).to_contain_text("Sign-off")
    assert_not_reloaded(page)


def node_on_screen(page: Page, text: str) -> tuple[float, float]:
    box = page.locator("#canvas-panel svg g.node", has_text=text).bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_the_canvas_keeps_its_pan_and_zoom_when_an_edit_redraws_it(
    author_page: Page, slug: str
) -> None:
    page = author_page
    open_editor(page, slug)
    choose_node(page, "write")
    expect(page.locator(VIEWPORT)).to_have_attribute("transform", MATRIX)
    fitted = view_of(page)

    page.get_by_role("button", name="Zoom in").click()
    page.get_by_role("button", name="Zoom in").click()
    page.wait_for_function(
        "([selector, fitted]) => {"
        " const m = document.querySelector(selector).transform.baseVal.consolidate().matrix;"
        " return m.a > fitted * 1.5; }",
        arg=[VIEWPORT, fitted[0]],
    )
    zoomed = view_of(page)
    before = node_on_screen(page, "review")

    with htmx_settles(page):
        page.get_by_label("Display name").fill("Draft the announcement")
    expect(page.locator("#canvas-panel svg")).to_contain_text("Draft the announcement")
    # The new drawing opens at the same zoom, and the nodes stay where they were on screen.
    page.wait_for_function(
        "([selector, zoomed]) => {"
        " const m = document.querySelector(selector).transform.baseVal.consolidate().matrix;"
        " return Math.abs(m.a - zoomed[0]) <= 0.01 * zoomed[0]; }",
        arg=[VIEWPORT, zoomed],
    )
    after = node_on_screen(page, "review")
    assert abs(after[0] - before[0]) < 2 and abs(after[1] - before[1]) < 2, (before, after)
    assert_not_reloaded(page)


# --- Times in the browser's time zone ---------------------------------------------------------


@pytest.mark.browser_context_args(timezone_id="Asia/Tokyo")
def test_the_versions_page_shows_when_a_version_was_frozen_in_the_browsers_time_zone(
    author_page: Page, author: User, slug: str
) -> None:
    # Versions are never updated, so the moment is set as the version is made.
    moment = datetime(2026, 1, 2, 23, 4, tzinfo=UTC)
    with mock.patch("django.utils.timezone.now", return_value=moment):
        documents.freeze(author, slug, expected_revision=1, note="first cut")
    page = author_page

    page.goto(f"/graphs/{slug}/versions/")

    when = page.locator("#version-rows time")
    # 23:04 UTC on the 2nd is 08:04 on the 3rd in Tokyo (UTC+9).
    expect(when).to_have_text("2026-01-03 08:04")
    expect(when).to_have_attribute("title", "2026-01-02 23:04 UTC")
    expect(when).to_have_attribute("datetime", "2026-01-02T23:04:00+00:00")
