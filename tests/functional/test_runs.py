"""Running a graph from the browser: **Start run** on ``/g/<hash>/``, then the run page updates
itself while a worker drives the run, and stops polling once it is finished.

The worker is django-tasks-db's own (the loop ``manage.py db_worker`` runs), in a thread of this
process: the test database is SQLite in memory, which another process cannot open, so the
worker and the live server's request threads share one connection (the ``shared_database``
fixture). It starts only once the run is queued, so the only requests it overlaps with are the
page's read-only polls (one shared connection must not carry two writers' transactions at once).
"""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth.models import User
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import Page, expect

from editor.models import Run
from editor.services import graphs
from tests.functional.browser import running_worker, wait_for_htmx

#: write (echo) → publish (echo): runs to completion on the built-in tools.
ECHO_CHAIN = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "publish"}],
}


@pytest.fixture
def echo_chain(author: User) -> str:
    return graphs.store_graph(author, json.dumps(ECHO_CHAIN)).graph.removeprefix("sha256:")


def test_an_operator_starts_a_run_and_watches_it_complete(
    operator_page: Page, echo_chain: str, shared_database: BaseDatabaseWrapper
) -> None:
    page = operator_page
    page.goto(f"/g/{echo_chain}/")
    wait_for_htmx(page)
    field = page.get_by_label("Input (JSON)")
    expect(field).to_have_value("null")

    field.fill('{"topic": ')
    expect(page.locator("#start-run .json-hint")).to_contain_text("Not valid JSON yet")
    page.get_by_role("button", name="Start run").click()
    expect(field).to_have_attribute("aria-invalid", "true")
    assert page.evaluate("() => document.getElementById('id_input').validity.valid") is False
    assert not Run.objects.exists()
    field.fill('{"topic": "tea"}')
    expect(page.locator("#start-run .json-hint")).to_be_empty()
    page.get_by_role("button", name="Start run").click()

    expect(page).to_have_url(re.compile(r"/runs/[0-9a-f-]{36}/$"))
    status = page.locator(".run-status")
    expect(status).to_contain_text("queued")
    expect(page.locator("#run-live[hx-trigger]")).to_have_count(1)

    with running_worker(shared_database):
        expect(status).to_contain_text("completed", timeout=20_000)

    expect(status).to_contain_text('"topic": "tea"')
    expect(page.locator("#run-canvas svg")).to_contain_text("tool · done")
    expect(page.locator("#timeline")).to_contain_text("RunCompleted")
    # The server's last answer carried no trigger: the polling has stopped, and Abandon is gone.
    expect(page.locator("#run-live[hx-trigger]")).to_have_count(0)
    expect(page.get_by_role("button", name="Abandon run")).to_have_count(0)
    wait_for_htmx(page)
