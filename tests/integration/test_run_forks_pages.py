"""**Retry from here** and **Run again** on the run page (spec 06, *Runs*; forks of spec 05)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.models import Run
from editor.services import runs
from editor.services.documents import graphs
from tests.integration.api.callers import make_user
from tests.integration.api.running import drive
from tests.integration.runs.fork_tools import FLAKY, WRITING, calls

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def fork_tools(settings: Any) -> Iterator[None]:
    from editor.services.installation import tools

    settings.GATEHOUSE_TOOL_MODULES = ["tests.integration.runs.fork_tools"]
    tools.cache_clear()
    try:
        yield
    finally:
        tools.cache_clear()


@pytest.fixture
def notes(tmp_path: Path) -> dict[str, str]:
    return {"calls": str(tmp_path / "calls"), "marker": str(tmp_path / "marker")}


@pytest.fixture
def operator_client(client: Client, operator: User) -> Client:
    client.force_login(operator)
    return client


def started(author: User, operator: User, graph: dict[str, Any], value: Any, **kw: Any) -> str:
    digest = graphs.store_graph(author, json.dumps(graph)).graph
    return runs.start_run(operator, digest, value, **kw).run


def test_retry_from_the_failed_node_makes_a_fork_that_completes(
    operator_client: Client, author: User, operator: User, notes: dict[str, str]
) -> None:
    origin = started(author, operator, FLAKY, notes, labels={"team": "tea"})
    assert drive(origin) == "failed"

    response = operator_client.post(f"/runs/{origin}/fork/", {"from_node": "b"})

    assert response.status_code == 302
    child = response["Location"].strip("/").split("/")[-1]
    assert Run.objects.get(pk=child).origin_id is not None
    assert drive(child) == "completed"
    assert calls(Path(notes["calls"])) == {"a": 1, "b": 2, "c": 1}
    page = operator_client.get(f"/runs/{child}/").content.decode()
    assert "Forked from" in page and f'href="/runs/{origin}/"' in page
    assert "retried from node <code>b</code>" in page
    origin_page = operator_client.get(f"/runs/{origin}/").content.decode()
    assert (
        f'<a href="/runs/{child}/"><code>{child[:8]}</code></a> from <code>b</code>' in origin_page
    )
    replayed = operator_client.get(f"/runs/{child}/node/?node=a", headers=HTMX).content.decode()
    assert '<span class="kind-tag">replayed</span>' in replayed
    assert f'href="/runs/{origin}/node/?node=a"' in replayed


def test_retry_through_htmx_sends_the_browser_to_the_new_run(
    operator_client: Client, author: User, operator: User, notes: dict[str, str]
) -> None:
    origin = started(author, operator, FLAKY, notes)
    drive(origin)
    response = operator_client.post(f"/runs/{origin}/fork/", {"from_node": "b"}, headers=HTMX)
    assert response.status_code == 200
    assert response["HX-Redirect"].startswith("/runs/")


def test_retry_over_a_write_asks_for_each_acknowledgement_first(
    operator_client: Client, author: User, operator: User, notes: dict[str, str]
) -> None:
    origin = started(author, operator, WRITING, notes)
    assert drive(origin) == "completed"
    before = Run.objects.count()

    plain = operator_client.post(f"/runs/{origin}/fork/", {"from_node": "a"})
    fragment = operator_client.post(f"/runs/{origin}/fork/", {"from_node": "a"}, headers=HTMX)
    write_seq = next(
        e["seq"]
        for e in json.loads(runs.run_events(origin))["events"]
        if e["event"]["kind"] == "ToolCallRequested" and e["event"]["payload"]["tool"] == "sends"
    )

    assert plain.status_code == 409
    html = fragment.content.decode()
    assert fragment.status_code == 200
    assert html.lstrip().startswith('<form class="retry-form"')
    assert f'name="acknowledge" value="{write_seq}" required' in html
    assert "Run <code>sends</code> again" in html
    assert Run.objects.count() == before

    made = operator_client.post(
        f"/runs/{origin}/fork/", {"from_node": "a", "acknowledge": [str(write_seq)]}
    )
    assert made.status_code == 302
    assert Run.objects.count() == before + 1


def test_retry_refusals_say_why_and_create_nothing(
    operator_client: Client, client: Client, author: User, operator: User, notes: dict[str, str]
) -> None:
    origin = started(author, operator, FLAKY, notes)
    drive(origin)
    before = Run.objects.count()

    never = operator_client.post(f"/runs/{origin}/fork/", {"from_node": "c"})
    bad = operator_client.post(f"/runs/{origin}/fork/", {"from_node": "a", "acknowledge": "x"})
    reader = Client()
    reader.force_login(make_user("noel"))
    refused = reader.post(f"/runs/{origin}/fork/", {"from_node": "b"})

    assert never.status_code == 409 and "never entered node `c`" in never.content.decode()
    assert bad.status_code == 400
    assert refused.status_code == 403
    assert Run.objects.count() == before


def test_run_again_starts_the_same_graph_with_the_same_input_and_labels(
    operator_client: Client, author: User, operator: User, notes: dict[str, str]
) -> None:
    origin = started(author, operator, FLAKY, notes, labels={"team": "tea"})
    drive(origin)

    response = operator_client.post(f"/runs/{origin}/again/")

    assert response.status_code == 302
    again = runs.get_run(response["Location"].strip("/").split("/")[-1])
    assert again.run != origin and again.state == "queued"
    assert again.labels == {"team": "tea"}
    assert again.forked_from is None
    assert Run.objects.get(pk=again.run).input == notes
    reader = Client()
    reader.force_login(make_user("noel"))
    assert reader.post(f"/runs/{origin}/again/").status_code == 403
    assert "Run again" not in reader.get(f"/runs/{origin}/").content.decode()
