"""The latest test run on the editor's canvas and in its node panel, as pages (issue 24): the
marks the canvas is painted with, the run's event stream followed while it moves (and only
then), a node's input and output whole, a result greyed once the draft has moved on, and
**Execute this node** and **Test from here** said in the node panel."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.models import Run
from editor.services import documents
from editor.services.runs import test_nodes, test_runs
from tests.integration.api.callers import make_user
from tests.integration.api.running import BRANCHING, drive
from tests.integration.runs.fork_tools import WRITING

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture
def fork_tools(settings: Any) -> Any:
    from editor.services.installation import tools

    settings.GATEHOUSE_TOOL_MODULES = ["tests.integration.runs.fork_tools"]
    tools.cache_clear()
    yield
    tools.cache_clear()


def make(author: User, graph: Any = BRANCHING, slug: str = "trial") -> str:
    return documents.create_document(author, title=slug, text=json.dumps(graph), slug=slug).slug


def results_data(page: str) -> Any:
    found = re.search(
        r'<script id="test-results-data" type="application/json">(.*?)</script>', page
    )
    assert found, page
    return json.loads(found[1])


def stream_of(page: str) -> str | None:
    found = re.search(r'<div id="test-live"[^>]*sse-connect="([^"]+)"', page)
    return found[1].replace("&amp;", "&") if found else None


def test_the_panel_carries_the_latest_test_runs_marks_for_the_canvas(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    run = test_runs.start_test_run(author, slug, {"n": 50}).run
    assert drive(run) == "completed"

    panel = author_client.get(f"/graphs/{slug}/test/", headers=HTMX).content.decode()

    data = results_data(panel)
    assert data["run"] == run
    assert data["revision"] == data["draft_revision"] == 1
    states = {mark["node"]: (mark["state"], mark["note"]) for mark in data["marks"]}
    assert states == {
        "ask": ("done", None),
        "pick": ("done", "case big"),
        "big": ("done", None),
        "small": ("skipped", None),
    }
    assert {"in": [], "from": "pick", "to": "big", "label": "big"} in data["walked"]
    assert all(edge["to"] != "small" for edge in data["walked"])
    assert "3 done · 1 skipped" in panel
    # A run at rest is not followed: the panel opens no stream and polls nothing.
    assert stream_of(panel) is None
    assert "every 1s" not in panel


def test_a_moving_test_run_is_followed_on_its_event_stream_until_it_rests(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    run = test_runs.start_test_run(author, slug, {"n": 1}).run

    panel = author_client.get(f"/graphs/{slug}/test/", headers=HTMX).content.decode()

    assert stream_of(panel) == f"/live/?run={run}&seen=1"
    # While the page follows that run, a fetch of the list leaves its stream alone …
    same = author_client.get(
        f"/graphs/{slug}/test/runs/", {"watching": run}, headers=HTMX
    ).content.decode()
    assert 'id="test-live"' not in same
    assert drive(run) == "completed"
    # … and once it rests, the list ends the stream.
    rested = author_client.get(f"/graphs/{slug}/test/runs/", {"watching": run}, headers=HTMX)
    assert "test-results-changed" in json.loads(rested["HX-Trigger"])
    shown = rested.content.decode()
    assert 'id="test-live" hidden hx-swap-oob="true"' in shown
    assert stream_of(shown) is None
    assert results_data(shown)["state"] == "completed"


def test_a_node_shows_its_input_and_output_whole_in_the_latest_test_run(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    long_text = "x" * 40_000  # past the run page's cut
    run = test_runs.start_test_run(author, slug, {"n": 50, "text": long_text}).run
    assert drive(run) == "completed"

    part = author_client.get(f"/graphs/{slug}/test/node/", {"node": "big"}, headers=HTMX)

    shown = part.content.decode()
    assert part.status_code == 200
    assert long_text in shown
    assert "cut:" not in shown
    assert 'id="node-result-input-1"' in shown and 'id="node-result-output-1"' in shown
    assert "Copy output" in shown
    assert "Execute this node" in shown and "Test from here" in shown
    assert "from revision" not in shown
    skipped = author_client.get(f"/graphs/{slug}/test/node/", {"node": "small"}, headers=HTMX)
    assert "skipped" in skipped.content.decode()


def test_a_result_from_an_older_revision_is_greyed_and_says_which(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    run = test_runs.start_test_run(author, slug, {"n": 1}).run
    assert drive(run) == "completed"
    changed = {**BRANCHING, "edges": BRANCHING["edges"][:2]}
    documents.save_draft(author, slug, text=json.dumps(changed), expected_revision=1)

    panel = author_client.get(f"/graphs/{slug}/test/", headers=HTMX).content.decode()
    part = author_client.get(f"/graphs/{slug}/test/node/", {"node": "ask"}, headers=HTMX)

    assert results_data(panel)["revision"] == 1
    assert results_data(panel)["draft_revision"] == 2
    assert "It is from revision 1, older than the draft" in panel
    assert "data-test-older hidden" not in panel
    assert "from revision 1" in part.content.decode()


def test_before_any_test_run_the_node_panel_says_how_to_get_one(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    part = author_client.get(f"/graphs/{slug}/test/node/", {"node": "ask"}, headers=HTMX)
    assert "No test run yet" in part.content.decode()
    page = author_client.get(f"/graphs/{slug}/test/node/", {"node": "ask"})
    assert page.status_code == 200
    assert "<h1>" in page.content.decode()
    assert author_client.get(f"/graphs/{slug}/test/node/", headers=HTMX).status_code == 400


def test_the_node_panel_executes_the_node_and_tells_the_page_the_runs_changed(
    author_client: Client, author: User
) -> None:
    slug = make(author)
    first = test_runs.start_test_run(author, slug, {"n": 50}).run
    assert drive(first) == "completed"

    answer = author_client.post(f"/graphs/{slug}/test/node/run/", {"node": "big"}, headers=HTMX)

    assert answer.status_code == 200
    assert "Test run started: big alone." in answer.content.decode()
    assert "test-runs-changed" in json.loads(answer["HX-Trigger"])
    alone = Run.objects.exclude(pk=first).get()
    assert alone.test_node == "big"
    assert alone.input == {"n": 50}
    refused = author_client.post(
        f"/graphs/{slug}/test/node/run/", {"node": "big", "input": "{nope"}, headers=HTMX
    )
    assert refused.status_code == 200
    assert "The input is not JSON" in refused.content.decode()
    assert "{nope" in refused.content.decode()
    assert "HX-Trigger" not in refused


def test_testing_from_here_lists_the_writes_to_acknowledge_then_starts(
    author_client: Client, author: User, fork_tools: None, tmp_path: Path
) -> None:
    slug = make(author, WRITING)
    notes = {"calls": str(tmp_path / "calls")}
    first = test_runs.start_test_run(author, slug, notes, confirm_writes=["sends"]).run
    assert drive(first) == "completed"

    asked = author_client.post(
        f"/graphs/{slug}/test/node/from-here/", {"node": "send"}, headers=HTMX
    ).content.decode()

    assert "Run these recorded writes again?" in asked
    seq = re.search(r'name="acknowledge_writes" value="(\d+)"', asked)
    assert seq, asked
    assert Run.objects.count() == 1
    started = author_client.post(
        f"/graphs/{slug}/test/node/from-here/",
        {"node": "send", "acknowledge_writes": seq[1]},
        headers=HTMX,
    )
    assert "Test run started from send." in started.content.decode()
    child = Run.objects.exclude(pk=first).get()
    assert str(child.origin_id) == first
    assert child.test_revision == 1


def test_someone_who_is_not_an_author_sees_results_but_no_actions(
    client: Client, author: User
) -> None:
    slug = make(author)
    run = test_runs.start_test_run(author, slug, {"n": 1}).run
    assert drive(run) == "completed"
    client.force_login(make_user("rita"))
    shown = client.get(f"/graphs/{slug}/test/node/", {"node": "ask"}, headers=HTMX)
    assert "Run <a" in shown.content.decode()
    assert "Execute this node" not in shown.content.decode()
    refused = client.post(f"/graphs/{slug}/test/node/run/", {"node": "ask"}, headers=HTMX)
    assert refused.status_code == 403


def test_the_run_page_says_a_node_ran_alone(author_client: Client, author: User) -> None:
    slug = make(author)
    alone = test_nodes.execute_node(author, slug, "ask", {"n": 1}).run

    page = author_client.get(f"/runs/{alone}/").content.decode()

    assert "node <code>ask</code> alone (<strong>Execute this node</strong>)" in page
