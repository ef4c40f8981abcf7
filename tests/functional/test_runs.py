"""Running a graph from the browser: **Start run** on ``/g/<hash>/``, then the run page updates
itself while a worker drives the run, and stops polling once it is finished.

The worker is django-tasks-db's own (the loop ``manage.py db_worker`` runs), in a thread of this
process: the test database is SQLite in memory, which another process cannot open, so the
worker and the live server's request threads share one connection (:func:`shared_database`).
It starts only once the run is queued, so the only requests it overlaps with are the page's
read-only polls (one shared connection must not carry two writers' transactions at once).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django_tasks_db.management.commands.db_worker import Worker
from playwright.sync_api import BrowserContext, Page, expect

from editor.models import Run
from editor.services import graphs
from tests.functional.browser import make_user, sign_in, wait_for_htmx

#: write (echo) → publish (echo): runs to completion on the built-in tools.
ECHO_CHAIN = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
    ],
    "edges": [{"from": "write", "to": "publish"}],
}


class _WorkerThread(threading.Thread):
    """django-tasks-db's worker loop, on the given database connection."""

    def __init__(self, shared: BaseDatabaseWrapper) -> None:
        super().__init__(name="test-db-worker", daemon=True)
        self.shared = shared
        self.worker = Worker(
            queue_names=["default"],
            interval=0.05,
            batch=False,
            backend_name="default",
            startup_delay=False,
            max_tasks=None,
            worker_id="browser-test-worker",
            excluded_queue_names=[],
        )

    def run(self) -> None:
        connections["default"] = self.shared
        self.worker.run()


@pytest.fixture
def shared_database(live_server: Any) -> Iterator[BaseDatabaseWrapper]:
    """One connection to the in-memory test database for the live server's request threads and
    the worker alike.

    Separate connections to a shared-cache SQLite database lock each other's tables and fail
    at once ("database table is locked") instead of waiting; this is what Django does for an
    in-memory database when it starts the live server after the test database exists.
    """
    shared = connections["default"]
    shared.ensure_connection()
    override = live_server.thread.connections_override  # read by every request thread
    # Sharing stays allowed afterwards: request threads of connections the browser kept alive
    # close their (this) connection when they end, which may be after this fixture.
    shared.inc_thread_sharing()
    override["default"] = shared
    try:
        yield shared
    finally:
        override.pop("default", None)


@contextmanager
def running_worker(shared: BaseDatabaseWrapper) -> Iterator[None]:
    """A worker driving queued runs until the block ends."""
    thread = _WorkerThread(shared)
    shared.inc_thread_sharing()
    thread.start()
    try:
        yield
    finally:
        thread.worker.running = False
        thread.join(timeout=30)
        shared.dec_thread_sharing()


@pytest.fixture
def operator_page(
    shared_database: BaseDatabaseWrapper, page: Page, context: BrowserContext, live_server: Any
) -> Page:
    sign_in(context, make_user("otto", groups=("operators",)), live_server.url)
    return page


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
