"""Browser tests: Playwright driving Debian's Chromium against pytest-django's live server.

One browser for all of them (started once, for this folder only: see below), a fresh context
and page per test. Every page a test opens is watched: console errors, uncaught exceptions and
Content-Security-Policy violations (reported by a ``securitypolicyviolation`` listener that an
init script adds before any page script runs) fail the test that produced them.

Tests wait for conditions, never for time: :func:`wait_for_htmx` waits until no htmx request
is in flight, and :func:`htmx_settles` waits for the swap a given action causes to settle
(both in :mod:`tests.functional.browser`).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.sqlite3.base import SQLiteCursorWrapper
from django.db.models.sql import compiler as compilers
from django.test import override_settings
from playwright.sync_api import (
    Browser,
    BrowserContext,
    BrowserType,
    ConsoleMessage,
    Page,
    Playwright,
    expect,
    sync_playwright,
)

from tests.functional.browser import make_user, sign_in

CHROMIUM = Path("/usr/bin/chromium")

# Runs in every page before its own scripts: counts htmx requests and swaps, and reports each
# CSP violation as a console error so that the Python side sees it wherever it happened.
_WATCH_PAGE = """
(() => {
  window.__htmxInFlight = 0;
  window.__htmxSettles = 0;
  window.__streamsOpened = 0;
  document.addEventListener('htmx:sseOpen', () => { window.__streamsOpened += 1; });
  document.addEventListener('htmx:beforeRequest', () => { window.__htmxInFlight += 1; });
  document.addEventListener('htmx:afterRequest', () => {
    window.__htmxInFlight = Math.max(0, window.__htmxInFlight - 1);
  });
  document.addEventListener('htmx:afterSettle', () => { window.__htmxSettles += 1; });
  document.addEventListener('securitypolicyviolation', (event) => {
    console.error('CSP violation: ' + event.violatedDirective + ' blocked ' +
      (event.blockedURI || 'inline') + ' in ' + event.documentURI +
      (event.sourceFile ? ' (' + event.sourceFile + ':' + event.lineNumber + ')' : ''));
  });
})();
"""


@pytest.fixture(autouse=True, scope="package")
def _allow_orm_beside_playwright() -> Iterator[None]:
    """Let the tests use the ORM while Playwright's event loop runs in their thread.

    Django refuses ORM calls from a thread with a running loop unless told that it is safe (it
    is: the loop is Playwright's). Only for these tests: the variable must not reach the
    subprocesses other tests start (``manage.py check --deploy`` rejects it).
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(autouse=True, scope="package")
def _streams_outlive_tests() -> Iterator[None]:
    """A page's event stream (``/live/``) is a request that lasts as long as the page: under the
    live server (WSGI) it holds a thread that polls until its next write finds the browser
    gone, which may be after the test has given up the database. Such a stream then ends on the
    refused query; the signals would still check the (shared, in-memory) connection once the
    response closes, which the test database refuses too, so they are not connected here: the
    live server's requests share the test's one connection, and never close it anyway."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    # The streams look at the database twice a second rather than ten times: the worker's map
    # items write through connections of their own, which lock the in-memory database's tables
    # for the live server's shared connection while they write, as before for the pages' polls.
    with override_settings(GATEHOUSE_STREAM_POLL_MS=500):
        try:
            yield
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True, scope="package")
def _statements_wait_for_table_locks() -> Iterator[None]:
    """A statement on the in-memory test database waits for a table lock to pass, as on a
    database file (its busy timeout), where the in-memory one fails at once.

    Connections to a shared-cache SQLite database lock each other's tables: the worker's map
    items write the run's row on connections of their own, one beside another; a page's event
    stream (``/live/``) outlives its test by up to a keep-alive, reading the inbox count on the
    shared connection while the next test's flush deletes. Any of them found the table locked
    and failed at once ("database table is locked"); a database file would have waited.
    """
    originals = {name: getattr(SQLiteCursorWrapper, name) for name in ("execute", "executemany")}

    def patient(original: Callable[..., Any]) -> Callable[..., Any]:
        def run(self: SQLiteCursorWrapper, *args: Any, **kwargs: Any) -> Any:
            deadline = time.monotonic() + 10
            while True:
                try:
                    return original(self, *args, **kwargs)
                except sqlite3.OperationalError as error:
                    if "locked" not in str(error) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)

        return run

    with pytest.MonkeyPatch.context() as patch:
        for name, original in originals.items():
            patch.setattr(SQLiteCursorWrapper, name, patient(original))
        yield


@pytest.fixture(autouse=True, scope="package")
def _one_query_at_a_time_on_a_shared_connection() -> Iterator[None]:
    """The live server's request threads share the test's one in-memory connection (Django's
    live server does so for SQLite in memory, and warns that two threads querying it at once
    "may sometimes randomly cause the tests to fail"): a page's event stream reading the inbox
    count while another request queried gave ``InterfaceError: bad parameter or other API
    misuse`` and rows read half-written. Each query, from its statement to its last row read
    (the compiler's ``execute_sql``), holds its connection's lock; a connection of its own
    (the worker's map items) has a lock of its own, so it never waits for the shared one."""
    locks: dict[int, threading.RLock] = {}
    guard = threading.Lock()

    def lock_of(connection: BaseDatabaseWrapper) -> threading.RLock:
        with guard:
            return locks.setdefault(id(connection), threading.RLock())

    def one_at_a_time(original: Callable[..., Any]) -> Callable[..., Any]:
        def execute_sql(self: Any, *args: Any, **kwargs: Any) -> Any:
            with lock_of(self.connection):
                return original(self, *args, **kwargs)

        return execute_sql

    with pytest.MonkeyPatch.context() as patch:
        for compiler in (
            compilers.SQLCompiler,
            compilers.SQLInsertCompiler,
            compilers.SQLDeleteCompiler,
            compilers.SQLUpdateCompiler,
            compilers.SQLAggregateCompiler,
        ):
            if "execute_sql" in vars(compiler):
                patch.setattr(compiler, "execute_sql", one_at_a_time(vars(compiler)["execute_sql"]))
        yield


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="the browser tests need /usr/bin/chromium (make chromium)")
    here = Path(__file__).parent
    for item in items:
        if not CHROMIUM.exists() and here in Path(item.path).parents:
            item.add_marker(skip)


# Playwright is started for this package only and stopped after it, not kept for the session:
# while it runs, its event loop counts as running in this thread, so every ORM call made meanwhile
# needs DJANGO_ALLOW_ASYNC_UNSAFE (set above), and tests outside this package must not have it.
# Hence these package-scoped versions of pytest-playwright's session fixtures.


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as started:
        yield started


@pytest.fixture(scope="package")
def browser_type(playwright: Playwright, browser_name: str) -> BrowserType:
    return getattr(playwright, browser_name)


@pytest.fixture(scope="package")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {
        **browser_type_launch_args,
        "executable_path": str(CHROMIUM),
        "args": [
            "--no-sandbox",
            "--headless",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    }


@pytest.fixture(scope="package")
def launch_browser(
    browser_type: BrowserType, browser_type_launch_args: dict[str, Any]
) -> Callable[..., Browser]:
    def launch(**kwargs: Any) -> Browser:
        return browser_type.launch(**{**browser_type_launch_args, **kwargs})

    return launch


@pytest.fixture(scope="package")
def browser(launch_browser: Callable[..., Browser]) -> Iterator[Browser]:
    """One browser for all the browser tests."""
    browser = launch_browser()
    yield browser
    browser.close()


@pytest.fixture(scope="package")
def base_url(live_server: Any) -> str:
    """Pages are opened by path: ``page.goto("/account/")`` goes to the live server."""
    return live_server.url


@pytest.fixture(scope="package")
def browser_context_args(base_url: str) -> dict[str, Any]:
    return {"base_url": base_url, "accept_downloads": True, "timezone_id": "UTC"}


@pytest.fixture
def browser_problems() -> list[str]:
    """Console errors, page errors and CSP violations seen during the test."""
    return []


@pytest.fixture
def watch_page(browser_problems: list[str]) -> Callable[[Page], None]:
    """Record the console errors and page errors of a page (once per page)."""
    watched: set[int] = set()

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            where = message.location.get("url", "")
            browser_problems.append(
                f"console error: {message.text}" + (f" ({where})" if where else "")
            )

    def watch(page: Page) -> None:
        if id(page) in watched:
            return
        watched.add(id(page))
        page.on("console", on_console)
        page.on("pageerror", lambda error: browser_problems.append(f"page error: {error}"))

    return watch


@pytest.fixture
def context(
    new_context: Callable[..., BrowserContext], watch_page: Callable[[Page], None]
) -> BrowserContext:
    context = new_context()
    context.set_default_timeout(10_000)
    # The same bound for expect(): a 2-core machine running the whole suite may take more than
    # its 5 s default for a round trip that draws a canvas.
    expect.set_options(timeout=10_000)
    context.add_init_script(_WATCH_PAGE)
    # Chromium asks for /favicon.ico on its own; the app has no icon, and a 404 the page never
    # asked for is not an error of the page.
    context.route("**/favicon.ico", lambda route: route.fulfill(status=204))
    context.on("page", watch_page)
    return context


@pytest.fixture
def page(context: BrowserContext, watch_page: Callable[[Page], None]) -> Page:
    page = context.new_page()
    watch_page(page)
    return page


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Fail a browser test whose pages logged an error or broke the CSP, even if it passed."""
    result = yield
    funcargs = getattr(item, "funcargs", {})
    problems = funcargs.get("browser_problems")
    if problems:
        pytest.fail("the browser reported:\n" + "\n".join(problems), pytrace=False)
    return result


@pytest.fixture
def author(transactional_db: None) -> User:
    """A user in the *authors* group (the groups come back after each flush: post_migrate)."""
    return make_user("ada", groups=("authors",))


@pytest.fixture
def author_page(page: Page, context: BrowserContext, author: User, live_server: Any) -> Page:
    """A page whose browser is signed in as :func:`author`."""
    sign_in(context, author, live_server.url)
    return page


@pytest.fixture
def shared_database(live_server: Any) -> Iterator[BaseDatabaseWrapper]:
    """One connection to the in-memory test database for the test's thread, the live server's
    request threads and a run worker (:func:`tests.functional.browser.running_worker`) alike.

    The test database is SQLite in memory, which another process cannot open, and separate
    connections to a shared-cache SQLite database lock each other's tables and fail at once
    ("database table is locked") instead of waiting; this is what Django does for an in-memory
    database when it starts the live server after the test database exists.
    """
    shared = connections["default"]
    shared.ensure_connection()
    # The worker's map items run on threads with connections of their own; while one of them
    # writes, a read on this connection would fail at once on the table's lock. Reading
    # without those locks, the pages (and their streams) read on through the item's write.
    with shared.cursor() as cursor:
        cursor.execute("PRAGMA read_uncommitted = true")
    override = live_server.thread.connections_override  # read by every request thread
    # Sharing stays allowed afterwards: request threads of connections the browser kept alive
    # close their (this) connection when they end, which may be after this fixture.
    shared.inc_thread_sharing()
    before = override.get("default")
    override["default"] = shared
    try:
        yield shared
    finally:
        # Put back what the live server shares (for the in-memory database, this same
        # connection): a request thread still serving an earlier page's stream must keep
        # reading through it, not open a connection of its own that locks the tables.
        if before is None:
            override.pop("default", None)
        else:
            override["default"] = before
        with shared.cursor() as cursor:
            cursor.execute("PRAGMA read_uncommitted = false")


@pytest.fixture
def operator_page(
    shared_database: BaseDatabaseWrapper, page: Page, context: BrowserContext, live_server: Any
) -> Page:
    """A page whose browser is signed in as an operator (``otto``), on :func:`shared_database`."""
    sign_in(context, make_user("otto", groups=("operators",)), live_server.url)
    return page
