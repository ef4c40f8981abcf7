"""The graphs list: search as you type, **New graph** from a template, **Import JSON**."""

from __future__ import annotations

import json
import re
from pathlib import Path

from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from editor.services import agents, documents
from editor.services.documents import graphs
from tests.functional.browser import htmx_settles


def _valid_text() -> str:
    return json.dumps(
        {
            "schema_version": 1,
            "nodes": [
                {"kind": "tool", "payload": {"id": "start", "tool": "echo"}},
                {"kind": "tool", "payload": {"id": "finish", "tool": "echo"}},
            ],
            "edges": [{"from": "start", "to": "finish"}],
        },
        indent=2,
    )


def test_the_search_box_filters_the_list_as_you_type(author_page: Page, author: User) -> None:
    documents.create_document(author, title="Quarterly report", text=_valid_text())
    documents.create_document(author, title="Onboarding flow", text=_valid_text())
    page = author_page
    page.goto("/")
    rows = page.locator("#graph-rows tbody tr")
    expect(rows).to_have_count(2)

    with htmx_settles(page):
        page.get_by_label("Search").fill("onboard")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Onboarding flow")
    expect(page).to_have_url(re.compile(r"\?q=onboard$"))

    with htmx_settles(page):
        page.get_by_label("Search").fill("nothing like this")
    expect(page.locator("#graph-rows")).to_contain_text("No graph matches “nothing like this”")


def test_importing_an_exported_file_links_the_version_already_frozen(
    author_page: Page, author: User, tmp_path: Path
) -> None:
    documents.create_document(author, title="Original", slug="original", text=_valid_text())
    frozen = documents.freeze(author, "original", expected_revision=1)
    exported = tmp_path / "exported.json"
    exported.write_bytes(graphs.export_graph(frozen.graph))

    page = author_page
    page.goto("/")
    page.get_by_role("link", name="Import JSON").click()
    page.get_by_label("File").set_input_files(exported)
    page.get_by_role("button", name="Import").click()

    result = page.locator("#import-result")
    # Named after the file, without its extension (the graph's entry node has no name).
    expect(page.get_by_role("heading", name="Imported “exported”")).to_be_visible()
    expect(result).to_contain_text("✓ valid")
    expect(result).to_contain_text("This graph is already frozen as")
    link = result.get_by_role("link", name=re.compile(r"Original — version 1"))
    expect(link).to_have_attribute("href", re.compile(frozen.graph.removeprefix("sha256:")))
    imported = documents.read_draft(documents.derive_slug("exported"))
    assert imported.text == exported.read_text(encoding="utf-8")


def test_pasted_text_that_does_not_parse_is_kept_as_an_invalid_draft(author_page: Page) -> None:
    page = author_page
    page.goto("/import/")
    page.get_by_label("Or paste the JSON").fill('{"schema_version": 1, "nodes": [')
    page.get_by_role("button", name="Import").click()

    expect(page.get_by_role("heading", name="Imported “Imported graph”")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("The text does not parse")
    expect(page.locator("#graph-rows")).to_have_count(0)
    page.goto("/")
    expect(page.locator("#graph-rows tbody tr")).to_contain_text("⚠ 1 error")


def test_an_author_makes_a_graph_from_the_approval_gate_template(
    author_page: Page, author: User
) -> None:
    writer = agents.create_agent(author, '{"name": "Writer", "model": "echo", "prompt": "Write."}')
    page = author_page
    page.goto("/")
    page.locator(".page-head").get_by_role("link", name="New graph").click()
    page.get_by_label("Title").fill("Press release")
    page.get_by_label("Approval gate").check()
    page.get_by_label("Writer agent").select_option(value=writer.agent)
    expect(page.get_by_label("Writer agent")).to_contain_text("Writer · " + writer.agent[7:19])
    page.get_by_role("button", name="Create graph").click()

    expect(page).to_have_url(re.compile(r"/graphs/press-release/$"))
    expect(page.get_by_role("heading", name="Press release")).to_be_visible()
    canvas = page.locator("#canvas-panel svg")
    for node in ("write", "review", "decide", "publish", "archive"):
        expect(canvas).to_contain_text(node)
    expect(page.locator("#verdict")).to_have_text("✓ No errors · this graph can be frozen")

    page.get_by_role("link", name="Graphs", exact=True).click()
    row = page.locator("#graph-rows tbody tr")
    expect(row).to_contain_text("Press release")
    expect(row).to_contain_text("✓ valid")
    expect(row).to_contain_text("nothing frozen yet")
