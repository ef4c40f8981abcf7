"""The Content-Security-Policy holds on every kind of page: nothing it blocks is ever needed.

The ``context`` fixture turns each ``securitypolicyviolation`` event and each console error
into a test failure, so loading a page and waiting for it to be fully working is the test.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import Group, User
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import BrowserContext, Page, expect

from editor.graph import wire_value
from editor.graph.edits import format_draft
from editor.graph.templates import approval_gate
from editor.services import agents, documents, runs
from editor.services.documents import graphs
from editor.tasks import drive_run
from tests.functional.browser import make_user, sign_in, wait_for_htmx

#: write (echo) → review (a gate with a form) → publish (echo).
GATED = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {
            "kind": "gate",
            "payload": {
                "id": "review",
                "prompt": "Publish?",
                "approval_schema": {
                    "type": "object",
                    "properties": {"approved": {"type": "boolean", "title": "Approve"}},
                    "required": ["approved"],
                },
            },
        },
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "review"}, {"from": "review", "to": "publish"}],
}


def test_the_sign_in_page_loads_under_the_policy(page: Page, transactional_db: None) -> None:
    response = page.goto("/accounts/login/")
    assert response is not None
    assert "script-src 'self'" in response.headers["content-security-policy"]
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    wait_for_htmx(page)


def test_the_account_page_loads_under_the_policy(author_page: Page) -> None:
    author_page.goto("/account/")
    expect(author_page.get_by_role("heading", name="API tokens")).to_be_visible()
    wait_for_htmx(author_page)


def test_the_admin_loads_under_the_policy(
    page: Page, context: BrowserContext, live_server: object, transactional_db: None
) -> None:
    staff: User = make_user("root")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    sign_in(context, staff, live_server.url)  # type: ignore[attr-defined]

    page.goto("/admin/")
    expect(page.get_by_role("heading", name="Site administration")).to_be_visible()
    page.goto("/admin/auth/user/")
    expect(page.locator("#result_list")).to_contain_text("root")
    # The changelist's own script: "select all" ticks every row and shows the count.
    page.locator("#action-toggle").check()
    expect(page.locator(".action-counter")).to_contain_text("1 of 1 selected")
    page.goto(f"/admin/auth/user/{staff.pk}/change/")
    expect(page.get_by_label("Username:")).to_have_value("root")
    # The date and time widgets are drawn by the admin's scripts.
    expect(page.locator(".datetimeshortcuts").first).to_be_visible()
    page.goto("/admin/auth/user/add/")
    expect(page.get_by_label("Username:")).to_be_visible()
    page.goto(f"/admin/auth/group/{Group.objects.get(name='authors').pk}/change/")
    # The permission picker is built by SelectFilter2.js.
    expect(page.locator(".selector-available").first).to_be_visible()
    page.goto("/admin/axes/accessattempt/")
    expect(page.locator("#content h1")).to_be_visible()


def test_the_api_docs_load_swagger_ui_from_our_static_files(author_page: Page) -> None:
    requests: list[str] = []
    author_page.on("request", lambda request: requests.append(request.url))
    author_page.goto("/v1/docs")
    expect(author_page.locator(".swagger-ui .info .title")).to_contain_text("Gatehouse API")
    expect(author_page.locator(".swagger-ui .opblock").first).to_be_visible()
    base = author_page.url.split("/v1/")[0]
    assert requests, "the docs page made no requests"
    assert all(url.startswith((base, "data:")) for url in requests), requests


def test_the_graph_pages_load_under_the_policy(author_page: Page, author: User) -> None:
    writer = agents.create_agent(author, '{"name": "Writer", "model": "echo", "prompt": "W."}')
    text = format_draft(wire_value(approval_gate(writer.agent)))
    slug = documents.create_document(author, title="Policy check", text=text).slug
    frozen = documents.freeze(author, slug, expected_revision=1)
    hex_digest = frozen.graph.removeprefix("sha256:")
    pages = {
        "/": "#graph-rows",
        "/new/": "#new-graph-form",
        "/import/": "#import-form",
        f"/graphs/{slug}/": "#canvas-panel svg",
        f"/graphs/{slug}/?node=decide": "#node-form",
        f"/graphs/{slug}/versions/": "#version-rows",
        f"/g/{hex_digest}/?document={slug}": "#canvas svg",
        f"/graphs/{slug}/compare/": "#compare-result",
    }
    for path, ready in pages.items():
        author_page.goto(path)
        expect(author_page.locator(ready).first).to_be_visible()
        wait_for_htmx(author_page)


def test_the_run_inbox_agent_and_tool_pages_load_under_the_policy(
    page: Page,
    context: BrowserContext,
    live_server: Any,
    shared_database: BaseDatabaseWrapper,
    author: User,
) -> None:
    everyone = make_user("rita", groups=("authors", "approvers", "operators"))
    sign_in(context, everyone, live_server.url)
    agents.create_agent(author, '{"name": "Writer", "model": "echo", "prompt": "W."}')
    digest = graphs.store_graph(author, json.dumps(GATED)).graph
    run_id = runs.start_run(everyone, digest, {"topic": "tea"}).run
    assert drive_run.call(run_id) == "suspended"
    pages = {
        f"/g/{digest.removeprefix('sha256:')}/": "#start-run",
        "/runs/": "#run-rows",
        f"/runs/{run_id}/": "#run-canvas svg",
        "/inbox/": ".inbox-card form",
        "/inbox/resolved/": "h1",
        "/agents/": "#agent-list tbody tr",
        "/tools/": "h1",
        "/account/": "#tokens",
    }
    for path, ready in pages.items():
        page.goto(path)
        expect(page.locator(ready).first).to_be_visible()
        wait_for_htmx(page)
