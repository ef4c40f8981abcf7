"""The run pages: **Start run** on ``/g/<hex>/``, ``/runs/`` and ``/runs/<id>/`` with its live
fragment, and **Abandon run** (spec 06, *Runs*)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.models import Run, RunEvent
from editor.services import documents, runs
from editor.services.documents import graphs
from editor.services.runs import lists as run_lists
from tests.integration.api.callers import make_user
from tests.integration.api.running import ECHO_CHAIN, GATED, UNKNOWN_TOOLS, drive, record
from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}

#: An echo chain whose entry node proposes an input through its schema's defaults.
WITH_DEFAULTS = {
    "schema_version": 1,
    "nodes": [
        {
            "kind": "tool",
            "payload": {
                "id": "write",
                "tool": "echo",
                "input_schema": {
                    "type": "object",
                    "properties": {"topic": {"type": "string", "default": "tea"}},
                },
            },
        }
    ],
    "edges": [],
}


def stored(author: User, graph: dict[str, Any]) -> str:
    return graphs.store_graph(author, json.dumps(graph)).graph


def started(operator: User, digest: str, value: Any = None) -> str:
    return runs.start_run(operator, digest, value).run


@pytest.fixture
def echo_chain(author: User) -> str:
    return stored(author, ECHO_CHAIN)


@pytest.fixture
def operator_client(client: Client, operator: User) -> Client:
    client.force_login(operator)
    return client


@pytest.fixture
def reader_client(client: Client) -> Client:
    client.force_login(make_user("noel"))
    return client


def nothing_created() -> bool:
    return not Run.objects.exists() and not RunEvent.objects.exists()


# --- Start run -----------------------------------------------------------------------------


def test_an_operator_sees_start_run_filled_with_null(
    operator_client: Client, echo_chain: str
) -> None:
    page = operator_client.get(f"/g/{echo_chain[7:]}/").content.decode()

    assert "<h2>Start run</h2>" in page
    assert f'action="/g/{echo_chain[7:]}/runs/"' in page
    assert "data-json-check" in page
    assert ">null</textarea>" in page
    assert "/static/js/json-check.js" in page
    assert_no_inline_script(page)


def test_start_run_proposes_the_entry_nodes_schema_defaults(
    operator_client: Client, author: User
) -> None:
    digest = stored(author, WITH_DEFAULTS)

    page = operator_client.get(f"/g/{digest[7:]}/").content.decode()

    assert "{\n  &quot;topic&quot;: &quot;tea&quot;\n}</textarea>" in page


def test_a_reader_is_told_that_operators_start_runs(reader_client: Client, echo_chain: str) -> None:
    page = reader_client.get(f"/g/{echo_chain[7:]}/").content.decode()

    assert "Operators start runs" in page
    assert "/runs/" in page
    assert f'action="/g/{echo_chain[7:]}/runs/"' not in page


def test_starting_a_run_redirects_to_its_page(operator_client: Client, echo_chain: str) -> None:
    response = operator_client.post(f"/g/{echo_chain[7:]}/runs/", {"input": '{"topic": "tea"}'})

    run = Run.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/runs/{run.id}/"
    assert run.input == {"topic": "tea"}
    assert run.created_by.username == "otto"


def test_starting_a_run_through_htmx_redirects_the_browser(
    operator_client: Client, echo_chain: str, author: User
) -> None:
    documents.create_document(author, title="Echo", slug="echo", text=json.dumps(ECHO_CHAIN))

    response = operator_client.post(
        f"/g/{echo_chain[7:]}/runs/", {"input": "null", "document": "echo"}, headers=HTMX
    )

    run = Run.objects.get()
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"/runs/{run.id}/"
    assert run.document.slug == "echo"


def test_invalid_json_input_is_refused_on_the_field(
    operator_client: Client, echo_chain: str
) -> None:
    response = operator_client.post(
        f"/g/{echo_chain[7:]}/runs/", {"input": "{topic: tea}"}, headers=HTMX
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<section class="card" id="start-run">')
    assert "Not valid JSON" in page
    assert "{topic: tea}</textarea>" in page
    assert nothing_created()


def test_a_graph_that_cannot_run_here_is_refused_with_every_reason(
    operator_client: Client, author: User
) -> None:
    digest = stored(author, UNKNOWN_TOOLS)

    response = operator_client.post(f"/g/{digest[7:]}/runs/", {"input": "null"})

    page = response.content.decode()
    assert response.status_code == 200
    assert "cannot run on this installation, so nothing was started" in page
    assert page.count("<code>unknown_tool</code>") == 2
    assert "ecko" in page
    assert "no_such_tool" in page
    assert nothing_created()


def test_a_reader_cannot_start_a_run(reader_client: Client, echo_chain: str) -> None:
    response = reader_client.post(f"/g/{echo_chain[7:]}/runs/", {"input": "null"})

    assert response.status_code == 403
    assert nothing_created()


# --- Runs list -----------------------------------------------------------------------------


def test_the_runs_list_shows_runs_newest_first_with_state_graph_and_starter(
    reader_client: Client, operator: User, echo_chain: str
) -> None:
    first = started(operator, echo_chain)
    second = started(operator, echo_chain)
    drive(first)

    response = reader_client.get("/runs/")

    page = response.content.decode()
    assert response.status_code == 200
    assert page.index(second[:8]) < page.index(first[:8])
    assert "✓ completed" in page
    assert "○ queued" in page
    assert f'href="/g/{echo_chain[7:]}/"' in page
    assert "<td>otto</td>" in page
    assert_no_inline_script(page)


def test_the_runs_list_filters_by_state_as_a_fragment(
    reader_client: Client, operator: User, echo_chain: str
) -> None:
    done = started(operator, echo_chain)
    waiting = started(operator, echo_chain)
    drive(done)

    response = reader_client.get("/runs/", {"state": "completed"}, headers=HTMX)

    page = response.content.decode()
    assert "HX-Request" in response["Vary"]
    assert page.lstrip().startswith('<div id="run-rows">')
    assert done[:8] in page
    assert waiting[:8] not in page


def test_the_runs_list_pages_through_older_runs(
    reader_client: Client, operator: User, echo_chain: str
) -> None:
    ids = [started(operator, echo_chain) for _ in range(3)]

    first = run_lists.list_run_rows(limit=2)
    page = reader_client.get("/runs/", {"cursor": first.next}).content.decode()

    assert ids[0][:8] in page
    assert ids[2][:8] not in page


def test_an_unknown_state_or_cursor_is_said_not_crashed_on(reader_client: Client) -> None:
    assert reader_client.get("/runs/", {"state": "dozing"}).status_code == 400
    assert reader_client.get("/runs/", {"state": "sleeping"}).status_code == 200  # spec 08
    response = reader_client.get("/runs/", {"cursor": "nonsense"})

    assert response.status_code == 400
    assert "cursor" in response.content.decode()


# --- Run page ------------------------------------------------------------------------------


def test_a_completed_run_shows_its_output_canvas_and_timeline_and_does_not_poll(
    reader_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain, {"topic": "tea"})
    drive(run_id)

    response = reader_client.get(f"/runs/{run_id}/")

    page = response.content.decode()
    assert response.status_code == 200
    assert "✓ completed" in page
    assert "&quot;topic&quot;: &quot;tea&quot;" in page
    assert "<svg" in page
    assert "tool · done" in page
    assert "GraphRunStarted" in page
    assert "RunCompleted" in page
    assert 'datetime="' in page
    live = re.search(r'<div id="run-live"[^>]*>', page)
    assert live and "hx-trigger" not in live.group(0)  # a finished run's page does not poll
    assert "Abandon run" not in page
    assert_no_inline_script(page)


def test_a_live_run_listens_to_its_stream_and_offers_abandon_to_operators(
    operator_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain)

    page = operator_client.get(f"/runs/{run_id}/").content.decode()

    assert f'sse-connect="/live/?run={run_id}&amp;seen=1"' in page
    assert f'hx-get="/runs/{run_id}/" hx-trigger="sse:run" hx-include="#run-seen"' in page
    assert '<input type="hidden" id="run-seen" name="seen" value="1">' in page
    assert "every 1s" not in page
    assert "Waiting for a worker" in page
    assert f'action="/runs/{run_id}/abandon/"' in page


def test_a_reader_sees_a_live_run_without_abandon(
    reader_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain)

    page = reader_client.get(f"/runs/{run_id}/").content.decode()

    assert 'hx-trigger="sse:run"' in page
    assert "Abandon run" not in page


def test_a_poll_with_nothing_new_is_answered_with_no_content(
    reader_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain)

    response = reader_client.get(f"/runs/{run_id}/", {"seen": "1"}, headers=HTMX)

    assert response.status_code == 204
    assert "HX-Request" in response["Vary"]


def test_the_poll_that_finds_the_run_finished_stops_the_polling(
    reader_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain)
    drive(run_id)

    response = reader_client.get(f"/runs/{run_id}/", {"seen": "1"}, headers=HTMX)

    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<div id="run-live"')
    assert "hx-trigger" not in page
    assert '<div id="abandon" hx-swap-oob="true">' in page
    assert "✓ completed" in page


def test_a_suspended_run_shows_the_gate_waiting(
    reader_client: Client, author: User, operator: User
) -> None:
    run_id = started(operator, stored(author, GATED))
    drive(run_id)

    page = reader_client.get(f"/runs/{run_id}/").content.decode()

    seq = runs.get_run(run_id).pending[0]["seq"]
    assert "suspended" in page
    assert (
        f'A decision at the gate <a href="/inbox/?run={run_id}#card-{run_id}-{seq}">review</a>'
        in page
    )
    assert "gate · waiting" in page
    assert "tool · done" in page


def test_a_failed_run_marks_the_node_it_failed_in(
    reader_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain)
    record(
        run_id,
        ("NodeEntered", {"node": "write"}),
        ("RunFailed", {"error": "the <tool> broke", "code": "tool_failed"}),
    )

    page = reader_client.get(f"/runs/{run_id}/").content.decode()

    assert "✗ failed" in page
    assert "the &lt;tool&gt; broke" in page
    assert "tool · failed" in page


def test_unknown_event_kinds_are_shown_raw_under_their_kind(
    reader_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain)
    record(run_id, ("FutureThing", {"node": "write", "detail": "<b>x</b>"}))

    page = reader_client.get(f"/runs/{run_id}/").content.decode()

    assert '<code>FutureThing</code> <span class="kind-tag">unknown kind, raw</span>' in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page
    assert "<b>x</b>" not in page


def test_an_unknown_run_is_not_found(reader_client: Client) -> None:
    assert reader_client.get("/runs/00000000-0000-0000-0000-000000000000/").status_code == 404


# --- Abandon -------------------------------------------------------------------------------


def test_an_operator_abandons_a_live_run_with_a_reason(
    operator_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain)

    response = operator_client.post(
        f"/runs/{run_id}/abandon/", {"reason": "wrong input"}, headers=HTMX
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<div id="abandon">')
    assert "Run abandoned." in page
    assert runs.get_run(run_id).status == {"state": "abandoned", "reason": "wrong input"}


def test_abandon_without_htmx_returns_to_the_run_page(
    operator_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain)

    response = operator_client.post(f"/runs/{run_id}/abandon/", {"reason": "wrong input"})

    assert response.status_code == 302
    assert response["Location"] == f"/runs/{run_id}/"


def test_abandon_asks_for_a_reason(
    operator_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain)

    response = operator_client.post(f"/runs/{run_id}/abandon/", {"reason": " "}, headers=HTMX)

    assert response.status_code == 200
    assert "Say why the run is abandoned." in response.content.decode()
    assert runs.get_run(run_id).state == "queued"


def test_abandoning_a_finished_run_says_so(
    operator_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain)
    drive(run_id)

    response = operator_client.post(f"/runs/{run_id}/abandon/", {"reason": "late"})
    fragment = operator_client.post(f"/runs/{run_id}/abandon/", {"reason": "late"}, headers=HTMX)

    assert response.status_code == 409
    assert "already finished" in response.content.decode()
    assert fragment.status_code == 200
    assert "already finished" in fragment.content.decode()
    assert runs.get_run(run_id).state == "completed"


def test_a_reader_cannot_abandon_a_run(
    reader_client: Client, operator: User, echo_chain: str
) -> None:
    run_id = started(operator, echo_chain)

    response = reader_client.post(f"/runs/{run_id}/abandon/", {"reason": "no"})

    assert response.status_code == 403
    assert runs.get_run(run_id).state == "queued"


def test_a_hostile_document_title_is_shown_as_text(
    reader_client: Client, author: User, operator: User, echo_chain: str
) -> None:
    hostile = "<img src=x onerror=alert(1)>"
    documents.create_document(author, title=hostile, slug="hostile", text=json.dumps(ECHO_CHAIN))
    run_id = runs.start_run(operator, echo_chain, None, document_slug="hostile").run

    for url in ("/runs/", f"/runs/{run_id}/"):
        page = reader_client.get(url).content.decode()
        assert "&lt;img src=x onerror=alert(1)&gt;" in page
        assert hostile not in page
