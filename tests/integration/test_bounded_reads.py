"""Reads of a large run are bounded in bytes (issue 20, *Bounded reads*): the events page, the
log's slices, the timeline's rows, one event's payload, the graph, the replay and a node's
detail, whatever the events weigh."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.services import runs
from editor.services.runs import log_reads
from editor.services.runs import nodes as run_nodes
from editor.services.runs import timeline as run_timeline
from tests.integration.api.running import GATED, record
from tests.integration.test_run_page_parts import started, stored

pytestmark = pytest.mark.django_db


#: A value of about ``n`` KiB.
def value_of(kib: int) -> list[str]:
    return [f"{n:08d}" + "x" * 92 for n in range(kib * 1024 // 104)]


def heavy_run(operator: User, author: User, calls: int, kib: int) -> str:
    """A run of the gated chain whose node ``write`` made ``calls`` tool calls, each asking
    and answering with a value of about ``kib`` KiB."""
    run_id = started(operator, stored(author, GATED), {"draft": "x"})
    record(run_id, ("NodeEntered", {"node": "write"}))
    for call in range(1, calls + 1):
        asked = {"node": "write", "call": call, "tool": "echo", "effect": "read",
                 "idempotency_key": f"k{call}", "input": value_of(kib)}  # fmt: skip
        record(
            run_id,
            ("ToolCallRequested", asked),
            ("ToolCallCompleted", {"node": "write", "call": call, "output": value_of(kib)}),
        )
    return run_id


def pages(run_id: str) -> list[dict[str, Any]]:
    found, after = [], None
    while True:
        page = json.loads(runs.run_events(run_id, after=after))
        found.append(page)
        after = page["next"]
        if after is None:
            return found


def test_an_events_page_stops_before_the_event_that_would_pass_its_bytes(
    author: User, operator: User, settings: Any
) -> None:
    run_id = heavy_run(operator, author, 6, 4)  # 2 + 12 events, most of them ~4 KiB
    settings.GATEHOUSE_EVENTS_PAGE_BYTES = 10 * 1024

    found = pages(run_id)

    assert [len(page["events"]) for page in found][1:-1] == [2] * (len(found) - 2)
    seqs = [event["seq"] for page in found for event in page["events"]]
    assert seqs == list(range(14))
    assert [page["next"] for page in found[:-1]] == [
        page["events"][-1]["seq"] for page in found[:-1]
    ]
    for page in found:
        assert len(json.dumps(page)) < 10 * 1024 + 5 * 1024


def test_a_page_holds_one_event_larger_than_its_bound(
    author: User, operator: User, settings: Any
) -> None:
    run_id = heavy_run(operator, author, 2, 8)
    settings.GATEHOUSE_EVENTS_PAGE_BYTES = 1024

    found = pages(run_id)

    assert [len(page["events"]) for page in found] == [2, 1, 1, 1, 1]  # the first two are small
    assert [event["seq"] for page in found for event in page["events"]] == list(range(6))
    whole = json.loads(runs.run_events(run_id, after=1, limit=1))["events"][0]
    assert whole["event"]["payload"]["input"] == value_of(8)


def test_the_log_download_is_written_in_slices_bounded_in_bytes(
    author: User, operator: User
) -> None:
    run_id = heavy_run(operator, author, 4, 100)  # ~800 KiB in 10 events

    slices: list[bytes] = []
    after: int | None = -1
    while after is not None:
        text, after = log_reads.log_chunk(run_id, after)
        slices.append(text)

    assert all(len(text) < log_reads.LOG_SLICE_BYTES + 110 * 1024 for text in slices)
    assert [text.count(b"\n") for text in slices] == [4, 2, 2, 2]
    lines = [json.loads(line) for text in slices for line in text.splitlines()]
    assert lines == [event for page in pages(run_id) for event in page["events"]]


def test_a_timeline_row_of_a_large_payload_shows_the_start_of_it(
    author: User, operator: User
) -> None:
    run_id = heavy_run(operator, author, 1, 40)

    page = runs.get_run(run_id)
    rows = {event.seq: event for event in run_timeline.newest(run_id, page.event_count).events}

    large = rows[3]
    assert large.kind == "ToolCallCompleted" and large.node == "write"
    assert large.cut and large.summary.endswith("…")
    assert len(large.summary) <= run_timeline.EVENT_SUMMARY_CHARS
    assert large.summary.startswith('{"call":1,"output":["00000000xxx')
    assert rows[1].summary == "" and not rows[1].cut  # NodeEntered: no other field


def test_a_large_payload_is_shown_cut_with_a_download_of_the_whole(
    author: User, operator: User, client: Client
) -> None:
    run_id = heavy_run(operator, author, 1, 200)
    client.force_login(operator)

    page = client.get(f"/runs/{run_id}/events/3/")
    whole = client.get(f"/runs/{run_id}/events/3/payload.json")

    assert page.status_code == 200
    assert len(page.content) < 2 * run_timeline.SHOWN_PAYLOAD_BYTES
    text = page.content.decode()
    assert f'href="/runs/{run_id}/events/3/payload.json"' in text
    assert "Download the whole payload" in text
    assert whole.status_code == 200
    assert whole["Content-Type"] == "application/json"
    assert json.loads(whole.content)["output"] == value_of(200)
    small = client.get(f"/runs/{run_id}/events/1/")
    assert "Download the whole payload" not in small.content.decode()
    assert client.get(f"/runs/{run_id}/events/99/payload.json").status_code == 404
    assert client.get(f"/runs/{run_id}/events/x/payload.json").status_code == 404


def test_replay_and_graph_read_in_slices_answer_as_for_the_whole_log(
    author: User, operator: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = heavy_run(operator, author, 3, 20)
    record(run_id, ("ToolCallRequested", {"node": "write", "call": 9, "tool": "echo",
                                          "effect": "read", "idempotency_key": "k9"}))  # fmt: skip
    whole = runs.replay(run_id), runs.run_graph(run_id)

    monkeypatch.setattr(log_reads, "FOLD_SLICE_BYTES", 1)
    monkeypatch.setattr(log_reads.log_envelopes, "__defaults__", (None, 1))
    sliced = runs.replay(run_id), runs.run_graph(run_id)

    assert sliced == whole
    assert sliced[0]["next_seq"] == 9
    assert sliced[0]["pending"]["seq"] == 8
    assert sliced[1]["nodes"][0]["node"] == "write"


def test_a_nodes_detail_cuts_long_values_and_says_where_the_whole_is(
    author: User, operator: User
) -> None:
    run_id = heavy_run(operator, author, 2, 40)

    detail = run_nodes.node_detail(run_id, "write")

    calls = detail.instances[0].calls
    assert [call.number for call in calls] == [1, 2]
    for call in calls:
        assert call.input_text is not None and call.output_text is not None
        assert len(call.output_text) < run_nodes.SHOWN_VALUE_CHARS + 200
        assert "… cut:" in call.output_text
    assert "event #3's payload" in (calls[0].output_text or "")
    assert detail.tool_calls == 2
