"""Pages and their streams on connections the browser keeps alive, against the production ASGI
application under uvicorn: hundreds of page loads, each opening the page's stream (``/live/``)
on whatever connection the browser reuses, and not one ``500``.

Each request must run in a thread-sensitive context of its own: a kept-alive connection's
next request used to inherit the previous one's, already closed (once a request had read a
body larger than the server's read buffer, the connection's reads went on in its context),
and the stream opened on it failed (``RuntimeError: ThreadSensitiveContext has exited``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import BrowserContext, Page, Response

from editor.services import runs
from editor.services.documents import graphs
from editor.tasks import drive_run
from tests.functional.asgi_server import serving_asgi
from tests.functional.browser import make_user, sign_in, wait_for_htmx

LOADS = 200
#: A graph of 100 KB (its gate's prompt), stored from the page (the same each time).
LARGE_POST = """async () => {
  const csrf = JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"];
  const graph = {schema_version: 1, edges: [], nodes: [{kind: "gate", payload: {
    id: "g", prompt: "x".repeat(100000), approval_schema: {type: "string"}}}]};
  const answer = await fetch("/v1/graphs", {
    method: "POST",
    body: JSON.stringify(graph),
    headers: {"Content-Type": "application/json", "X-CSRFToken": csrf},
  });
  return answer.status;
}"""
GATE = {
    "schema_version": 1,
    "nodes": [{"kind": "gate", "payload": {"id": "g", "approval_schema": {"type": "string"}}}],
    "edges": [],
}


@pytest.fixture
def asgi_url(shared_database: BaseDatabaseWrapper) -> Iterator[str]:
    with serving_asgi() as url:
        yield url


def test_hundreds_of_page_loads_and_stream_opens_on_kept_alive_connections_never_fail(
    asgi_url: str, page: Page, context: BrowserContext, author: Any
) -> None:
    operator = make_user("otto", groups=("authors", "operators", "approvers"))
    digest = graphs.store_graph(author, json.dumps(GATE)).graph
    run_id = runs.start_run(operator, digest, {}).run
    assert drive_run.call(run_id) == "suspended"
    sign_in(context, operator, asgi_url)
    statuses: Counter[int] = Counter()
    streams_opened: list[int] = []
    failures: list[str] = []

    def seen(response: Response) -> None:
        statuses[response.status] += 1
        if "/live/" in response.url:
            streams_opened.append(response.status)
        if response.status >= 500:
            failures.append(f"{response.status} {response.url}")

    page.on("response", seen)
    paths = ["/", "/inbox/", "/runs/", f"/runs/{run_id}/", "/account/"]
    for number in range(LOADS):
        page.goto(asgi_url + paths[number % len(paths)])
        # The page's stream is open: its first event has swapped the inbox count in.
        page.wait_for_function("() => window.__streamsOpened >= 1")
        wait_for_htmx(page)
        if number % 4 == 0:
            # A large body (an editor's save of a big draft is one): reading it pauses and
            # resumes the connection from inside its request, and the browser reuses it.
            stored = page.evaluate(LARGE_POST)
            assert stored in (200, 201), stored

    assert not failures, failures[:10]
    assert streams_opened == [200] * LOADS, Counter(streams_opened)
    assert sum(statuses.values()) >= LOADS * 3, statuses
