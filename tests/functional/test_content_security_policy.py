"""The Content-Security-Policy holds on every kind of page: nothing it blocks is ever needed.

The ``context`` fixture turns each ``securitypolicyviolation`` event and each console error
into a test failure, so loading a page and waiting for it to be fully working is the test.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from playwright.sync_api import BrowserContext, Page, expect

from editor.graph import wire_value
from editor.graph.edits import format_draft
from editor.graph.templates import approval_gate
from editor.services import agents, documents
from tests.functional.browser import make_user, sign_in, wait_for_htmx


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
    page.goto(f"/admin/auth/user/{staff.pk}/change/")
    expect(page.get_by_label("Username:")).to_have_value("root")


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
