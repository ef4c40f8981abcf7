"""Helpers for the browser tests: waiting for htmx, users with a signed-in browser, and a run
worker beside the live server.

The counters read here are kept by the init script the ``context`` fixture adds to every page.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth.models import Group, User
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import Client
from django_tasks_db.management.commands.db_worker import Worker
from playwright.sync_api import BrowserContext, Page

__all__ = [
    "PASSWORD",
    "htmx_settles",
    "make_user",
    "running_worker",
    "sign_in",
    "wait_for_htmx",
]

PASSWORD = "a-browser-test-password-9271"


def wait_for_htmx(page: Page) -> None:
    """Wait until htmx has processed the page (``readyState`` is complete only after
    ``DOMContentLoaded``, where htmx binds its triggers: ``window.htmx`` exists before that, and
    a change made then is lost) and no htmx request is in flight or settling."""
    page.wait_for_function(
        "() => document.readyState === 'complete'"
        " && window.htmx !== undefined && window.__htmxInFlight === 0"
        " && document.querySelectorAll('.htmx-request, .htmx-settling, .htmx-swapping')"
        ".length === 0"
    )


@contextmanager
def htmx_settles(page: Page) -> Iterator[None]:
    """Wait, after the block, for a swap that settled after the block began, then for quiet."""
    before = page.evaluate("() => window.__htmxSettles")
    yield
    page.wait_for_function("(before) => window.__htmxSettles > before", arg=before)
    wait_for_htmx(page)


def make_user(username: str, *, groups: tuple[str, ...] = ()) -> User:
    user = User.objects.create_user(username=username, password=PASSWORD)
    for name in groups:
        user.groups.add(Group.objects.get(name=name))
    return user


def sign_in(context: BrowserContext, user: User, url: str) -> None:
    """Give the browser a session of ``user`` without going through the sign-in form."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"]
    context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": url}])


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


@contextmanager
def running_worker(shared: BaseDatabaseWrapper) -> Iterator[None]:
    """A worker (the loop ``manage.py db_worker`` runs) driving queued runs until the block
    ends, in a thread of this process, on the connection of the ``shared_database`` fixture.

    Start it only while nothing else writes: one shared connection must not carry two writers'
    transactions at once, so the browser's requests meanwhile should be the run page's polls.
    """
    thread = _WorkerThread(shared)
    shared.inc_thread_sharing()
    thread.start()
    try:
        yield
    finally:
        thread.worker.running = False
        thread.join(timeout=30)
        shared.dec_thread_sharing()
