"""Trying a draft from the editor (issue 24): a sample input edited as a form, **Test run**
with it, the run's result in the Test panel while a worker drives it, then a node pinned from
that result, drawn pinned on the canvas, and the next test run skipping it (its output the
pin)."""

from __future__ import annotations

import json

from django.contrib.auth.models import User
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import Page, expect

from editor.models import Run
from editor.services import documents
from editor.services.documents import samples
from tests.functional.accessibility import assert_accessible
from tests.functional.browser import running_worker, wait_for_htmx

#: ask (echo; its input an object with a whole `amount`) → answer (echo).
CHAIN = {
    "schema_version": 1,
    "nodes": [
        {
            "kind": "tool",
            "payload": {
                "id": "ask",
                "tool": "echo",
                "input_schema": {
                    "type": "object",
                    "properties": {"amount": {"type": "integer", "title": "Amount"}},
                },
            },
        },
        {"kind": "tool", "payload": {"id": "answer", "tool": "echo"}},
    ],
    "edges": [{"from": "ask", "to": "answer"}],
}


def test_a_draft_is_tested_with_a_sample_then_a_pinned_node_is_skipped(
    author_page: Page, author: User, shared_database: BaseDatabaseWrapper
) -> None:
    page = author_page
    slug = documents.create_document(
        author, title="Refunds", text=json.dumps(CHAIN), slug="refunds"
    ).slug
    samples.put_samples(
        author,
        slug,
        [
            {"name": "small refund", "input": {"amount": 5}},
            {"name": "large refund", "input": {"amount": 5000}},
        ],
    )
    page.goto(f"/graphs/{slug}/")
    panel = page.locator("#test-panel")
    expect(panel.get_by_role("button", name="Test run")).to_be_visible()
    wait_for_htmx(page)
    assert_accessible(page, include="#test-panel")

    # A sample is a form made from the entry node's input schema.
    page.locator("#test-samples > summary").click()
    large = page.locator("form.sample-form", has_text="large refund")
    expect(large.get_by_label("Amount")).to_have_value("5000")
    assert_accessible(page, include="#test-samples")
    large.get_by_label("Amount").fill("4000")
    large.get_by_role("button", name="Save sample").click()
    expect(panel).to_contain_text("The sample large refund is saved.")
    wait_for_htmx(page)

    page.get_by_label("Sample input").select_option("large refund")
    expect(page.get_by_label("Input (JSON)")).to_have_value('{\n  "amount": 4000\n}')
    panel.get_by_role("button", name="Test run").click()
    expect(panel).to_contain_text("Test run started.")
    first = Run.objects.get()
    assert first.test_revision == 1

    with running_worker(shared_database):
        expect(panel.locator(".test-run").first).to_contain_text("completed", timeout=20_000)
    expect(panel.locator(".test-output").first).to_contain_text('"amount": 4000')
    wait_for_htmx(page)
    assert_accessible(page, include="#test-panel")

    page.get_by_label("Pin the output of").select_option("ask")
    panel.get_by_role("button", name="Pin", exact=True).first.click()
    expect(panel).to_contain_text("Pinned ask")
    expect(page.locator("#pin-list")).to_contain_text("ask")
    expect(page.locator("#canvas-panel svg g.node.pinned")).to_have_count(1)
    expect(page.locator("#canvas-panel svg g.node.pinned")).to_contain_text("ask")

    page.get_by_label("Sample input").select_option("small refund")
    panel.get_by_role("button", name="Test run").click()
    expect(panel).to_contain_text("Test run started.")
    with running_worker(shared_database):
        expect(panel.locator(".test-run").first).to_contain_text("completed", timeout=20_000)
    newest = panel.locator(".test-run").first
    # The pinned node did not run: its output, and so the run's, is the pinned one.
    expect(newest.locator(".pinned-tag")).to_have_text("pinned")
    expect(newest.locator(".test-output")).to_contain_text('"amount": 4000')
    expect(panel.locator(".test-run")).to_have_count(2)
    wait_for_htmx(page)
    assert_accessible(page, include="#test-panel")
