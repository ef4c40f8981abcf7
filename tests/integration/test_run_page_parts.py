"""The run page that explains (spec 06, *Runs*): links from its status to the inbox cards and
back, the canvas marking the failed node and the path taken, a node's detail, the timeline
paged newest first with whole payloads on demand, **Download log**, and the live update."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.db import connection
from django.test import AsyncClient, Client
from django.test.utils import CaptureQueriesContext

from editor.services import runs
from editor.services.documents import graphs
from editor.streams.hub import shut_down
from tests.integration.api.callers import make_user
from tests.integration.api.running import GATED, drive, record
from tests.integration.api.test_run_streams import in_a_thread_of_its_own

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}

#: start (echo) → decide (branch on `ok`) → publish / archive (echo).
BRANCHING = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "start", "tool": "echo"}},
        {
            "kind": "branch",
            "payload": {
                "id": "decide",
                "cases": [
                    {"name": "approved", "when": {"kind": "expression", "value": "ok == true"}},
                    {"name": "rejected", "when": {"kind": "expression", "value": "!(ok == true)"}},
                ],
            },
        },
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo", "name": "Publish it"}},
        {"kind": "tool", "payload": {"id": "archive", "tool": "echo"}},
    ],
    "edges": [
        {"from": "start", "to": "decide"},
        {"from": "decide", "to": "publish", "label": "approved"},
        {"from": "decide", "to": "archive", "label": "rejected"},
    ],
}

#: A map over `items` whose body is the echo node `each`.
MAPPED = {
    "schema_version": 1,
    "nodes": [
        {
            "kind": "map",
            "payload": {
                "id": "m",
                "over": "items",
                "concurrency": 1,
                "body": {"kind": "node", "value": "each"},
            },
        },
        {"kind": "tool", "payload": {"id": "each", "tool": "echo"}},
    ],
    "edges": [],
}


def stored(author: User, graph: dict[str, Any]) -> str:
    return graphs.store_graph(author, json.dumps(graph)).graph


def started(operator: User, digest: str, value: Any = None, labels: Any = None) -> str:
    return runs.start_run(operator, digest, value, labels).run


@pytest.fixture
def operator_client(client: Client, operator: User) -> Client:
    client.force_login(operator)
    return client


@pytest.fixture
def reader_client(db: None) -> Client:
    client = Client()
    client.force_login(make_user("noel"))
    return client


def page_of(client: Client, run_id: str) -> str:
    response = client.get(f"/runs/{run_id}/")
    assert response.status_code == 200
    return response.content.decode()


def long_run(operator: User, author: User, events: int) -> str:
    """A run of the echo chain whose log holds ``events`` events (a long gate history)."""
    run_id = started(operator, stored(author, GATED), {"draft": "x"})
    record(run_id, ("NodeEntered", {"node": "write"}))
    filler = [
        ("ModelCallRequested", {"node": "write", "model": "echo", "call": n})
        for n in range(events - 2)
    ]
    for start in range(0, len(filler), 500):
        record(run_id, *filler[start : start + 500])
    return run_id


# --- The status box and the inbox -----------------------------------------------------------


def test_the_status_links_each_waiting_item_to_its_card_and_the_card_links_back(
    reader_client: Client, author: User, operator: User
) -> None:
    run_id = started(operator, stored(author, GATED), {"draft": "x"})
    assert drive(run_id) == "suspended"
    seq = runs.get_run(run_id).pending[0]["seq"]

    page = page_of(reader_client, run_id)
    link = f"/inbox/?run={run_id}#card-{run_id}-{seq}"
    assert f'<a href="{link}">review</a>' in page
    inbox = reader_client.get(link.split("#")[0]).content.decode()
    other = started(operator, stored(author, GATED), {"draft": "y"})
    drive(other)
    inbox = reader_client.get(link.split("#")[0]).content.decode()

    assert f'id="card-{run_id}-{seq}"' in inbox
    assert f"card-{other}-" not in inbox  # only that run's cards
    assert f'<a href="/runs/{run_id}/">run <code>{run_id[:8]}</code></a>' in inbox
    assert reader_client.get("/inbox/?run=nope").status_code == 400


# --- The canvas -----------------------------------------------------------------------------


def test_the_canvas_marks_the_path_taken_and_the_case_chosen(
    reader_client: Client, author: User, operator: User
) -> None:
    run_id = started(operator, stored(author, BRANCHING), {"ok": True})
    assert drive(run_id) == "completed"

    page = page_of(reader_client, run_id)

    svg = page[page.index("<svg") : page.index("</svg>")]
    assert svg.count('class="edge walked"') == 2  # start → decide → publish
    assert "branch · done · case approved" in svg
    assert "tool · skipped" in svg  # archive
    assert 'href="node/?node=decide"' in svg


def test_a_failed_run_marks_its_node_and_offers_to_retry_from_it(
    operator_client: Client, reader_client: Client, author: User, operator: User
) -> None:
    run_id = started(operator, stored(author, BRANCHING), {"ok": True})
    record(
        run_id,
        ("NodeEntered", {"node": "start"}),
        ("NodeExited", {"node": "start", "output": {"ok": True}}),
        ("NodeEntered", {"node": "decide"}),
        ("RunFailed", {"error": "the <branch> broke", "node": "decide"}),
    )

    page = page_of(operator_client, run_id)
    read_only = page_of(reader_client, run_id)

    svg = page[page.index("<svg") : page.index("</svg>")]
    assert re.search(r"✗ decide.*?branch · failed", svg, re.DOTALL)
    assert "tool · done" in svg
    assert 'It failed at <a href="node/?node=decide" class="node-link">decide</a>' in page
    assert 'name="from_node" value="decide"' in page
    assert "Retry from here" in page
    assert 'name="from_node"' not in read_only


def test_nodes_inside_a_map_body_are_coloured_and_counted(
    reader_client: Client, author: User, operator: User
) -> None:
    run_id = started(operator, stored(author, MAPPED), {"items": [1, 2, 3]})
    assert drive(run_id) == "completed"
    page = page_of(reader_client, run_id)
    assert "tool · done · ×3" in page


# --- A node's detail ------------------------------------------------------------------------


def test_a_node_shows_what_it_received_and_gave_and_its_calls(
    reader_client: Client, author: User, operator: User
) -> None:
    run_id = started(operator, stored(author, BRANCHING), {"ok": True, "text": "x" * 5000})
    drive(run_id)

    fragment = reader_client.get(f"/runs/{run_id}/node/?node=publish", headers=HTMX)
    whole = reader_client.get(f"/runs/{run_id}/node/?node=publish")

    html = fragment.content.decode()
    assert fragment.status_code == 200
    assert html.lstrip().startswith('<section id="node-detail"')
    assert "Publish it" in html and '<code class="node-id">publish</code>' in html
    assert html.count("x" * 5000) >= 2  # input and output, whole
    assert "tool <code>echo</code> #0" in html
    assert "completed" in html and "Took" in html
    assert whole.status_code == 200 and "<!DOCTYPE html>" in whole.content.decode()
    assert reader_client.get(f"/runs/{run_id}/node/?node=ghost").status_code == 404
    assert reader_client.get(f"/runs/{run_id}/node/").status_code == 400
    skipped = reader_client.get(f"/runs/{run_id}/node/?node=archive", headers=HTMX)
    assert "Skipped: nothing reached it." in skipped.content.decode()


def test_a_body_node_shows_each_item_with_its_element(
    reader_client: Client, author: User, operator: User
) -> None:
    run_id = started(operator, stored(author, MAPPED), {"items": ["tea", "cake"]})
    drive(run_id)
    html = reader_client.get(f"/runs/{run_id}/node/?node=each", headers=HTMX).content.decode()
    assert "Ran</dt><dd>2 times" in html
    assert "In m[0]: done" in html and "In m[1]: done" in html
    assert "&quot;cake&quot;" in html


def test_a_failed_node_shows_the_error(reader_client: Client, author: User, operator: User) -> None:
    run_id = started(operator, stored(author, GATED), {"draft": "x"})
    record(
        run_id,
        ("NodeEntered", {"node": "write"}),
        (
            "ToolCallRequested",
            {"node": "write", "tool": "echo", "input": {}, "effect": "read", "call": 0},
        ),
        ("RunFailed", {"error": "the <tool> broke", "node": "write"}),
    )
    html = reader_client.get(f"/runs/{run_id}/node/?node=write", headers=HTMX).content.decode()
    assert "Error: the &lt;tool&gt; broke" in html
    assert "Run: failed" in html
    assert re.search(r"tool <code>echo</code> #0</td>\s*<td>failed</td>", html)


# --- The timeline ---------------------------------------------------------------------------


def test_the_timeline_pages_newest_first_with_load_older(
    reader_client: Client, author: User, operator: User
) -> None:
    run_id = long_run(operator, author, 120)

    page = page_of(reader_client, run_id)
    first_page = re.findall(r'<tr id="event-(\d+)"', page)
    older = reader_client.get(f"/runs/{run_id}/events/?before=70", headers=HTMX)
    last = reader_client.get(f"/runs/{run_id}/events/?before=20", headers=HTMX)
    plain = reader_client.get(f"/runs/{run_id}/events/?before=70")

    assert [int(seq) for seq in first_page] == list(range(119, 69, -1))
    assert f'hx-get="/runs/{run_id}/events/?before=70"' in page
    rows = re.findall(r'<tr id="event-(\d+)"', older.content.decode())
    assert [int(seq) for seq in rows] == list(range(69, 19, -1))
    assert "?before=20" in older.content.decode()
    assert older.content.decode().lstrip().startswith('<tbody class="timeline-older">')
    assert [int(s) for s in re.findall(r'<tr id="event-(\d+)"', last.content.decode())] == list(
        range(19, -1, -1)
    )
    assert "Load older" not in last.content.decode()
    assert plain.status_code == 200 and "<table" in plain.content.decode()
    assert reader_client.get(f"/runs/{run_id}/events/?before=x").status_code == 400
    assert reader_client.get(f"/runs/{run_id}/events/").status_code == 400
    unknown = "/runs/00000000-0000-0000-0000-000000000000/events/?before=3"
    assert reader_client.get(unknown).status_code == 404


def test_a_page_of_the_timeline_costs_the_same_queries_however_long_the_log(
    reader_client: Client, author: User, operator: User
) -> None:
    short, long = long_run(operator, author, 60), long_run(operator, author, 1200)
    counts = []
    for run_id, before in ((short, 55), (long, 1100)):
        page_of(reader_client, run_id)  # the canvas drawn once: the shared cache then has it
        with CaptureQueriesContext(connection) as older:
            reader_client.get(f"/runs/{run_id}/events/?before={before}", headers=HTMX)
        with CaptureQueriesContext(connection) as whole:
            page_of(reader_client, run_id)
        counts.append((len(older), len(whole)))
    assert counts[0] == counts[1]


def test_a_long_payload_is_cut_and_shown_whole_on_demand(
    reader_client: Client, author: User, operator: User
) -> None:
    run_id = started(operator, stored(author, GATED), {"draft": "<b>" + "y" * 900})
    drive(run_id)
    page = page_of(reader_client, run_id)
    assert re.search(r'<a href="/runs/[^"]+/events/0/" hx-get="[^"]+/events/0/"', page)
    assert "y" * 900 not in page.split('id="timeline"')[1]

    whole = reader_client.get(f"/runs/{run_id}/events/0/", headers=HTMX).content.decode()
    assert whole.lstrip().startswith('<div id="payload-0"')
    assert "&lt;b&gt;" + "y" * 900 in whole
    assert reader_client.get(f"/runs/{run_id}/events/999/").status_code == 404
    assert reader_client.get(f"/runs/{run_id}/events/99999999999/").status_code == 404


def test_download_log_streams_the_events_as_json_lines(
    reader_client: Client, author: User, operator: User
) -> None:
    run_id = long_run(operator, author, 1203)

    response = reader_client.get(f"/runs/{run_id}/log.jsonl")

    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert response["Content-Disposition"] == f'attachment; filename="run-{run_id}.jsonl"'
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == 1203
    pages = [
        json.loads(runs.run_events(run_id, limit=1000)),
        json.loads(runs.run_events(run_id, after=999)),
    ]
    api = pages[0]["events"] + pages[1]["events"]
    assert [json.loads(line) for line in lines] == api
    missing = "/runs/00000000-0000-0000-0000-000000000000/log.jsonl"
    assert reader_client.get(missing).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_under_asgi_the_log_is_written_a_slice_at_a_time(author: User, operator: User) -> None:
    run_id = long_run(operator, author, 1203)

    async def download() -> tuple[Any, list[bytes]]:
        client = AsyncClient()
        await client.aforce_login(operator)
        response = await client.get(f"/runs/{run_id}/log.jsonl")
        parts = [part async for part in response.streaming_content]
        await shut_down()  # as the server does: the hub's threads and connections go
        return response, parts

    response, parts = in_a_thread_of_its_own(async_to_sync(download))

    assert response.status_code == 200
    assert [part.count(b"\n") for part in parts] == [500, 500, 203]
    assert json.loads(parts[-1].splitlines()[-1])["seq"] == 1202


# --- Live -----------------------------------------------------------------------------------


def test_the_live_answer_adds_the_new_events_above_the_timeline(
    reader_client: Client, author: User, operator: User
) -> None:
    run_id = started(operator, stored(author, GATED), {"draft": "x"})
    shown = runs.get_run(run_id).event_count
    drive(run_id)

    fragment = reader_client.get(f"/runs/{run_id}/?seen={shown}", headers=HTMX).content.decode()

    assert fragment.lstrip().startswith('<div id="run-live"')
    squeezed = re.sub(r">\s+<", "><", fragment)
    assert '<template><tbody class="timeline-older" hx-swap-oob="afterbegin:#timeline-rows">' in (
        squeezed
    )
    rows = re.findall(r'<tr id="event-(\d+)"', fragment)
    assert [int(seq) for seq in rows] == list(
        range(runs.get_run(run_id).event_count - 1, shown - 1, -1)
    )
    assert f'name="seen" value="{runs.get_run(run_id).event_count}"' in fragment


def test_a_live_answer_after_many_events_replaces_the_timeline(
    reader_client: Client, author: User, operator: User
) -> None:
    run_id = long_run(operator, author, 200)
    fragment = reader_client.get(f"/runs/{run_id}/?seen=1", headers=HTMX).content.decode()
    assert '<tbody id="timeline-rows" hx-swap-oob="true">' in fragment
    assert '<tbody id="timeline-more" hx-swap-oob="true">' in fragment
    assert len(re.findall(r'<tr id="event-', fragment)) == 50
