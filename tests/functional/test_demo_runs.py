"""The demo content runs end to end from the browser, on the built-in providers and tools.

``manage.py load_demo`` makes one frozen document per template
(:mod:`editor.services.documents.demo`). For each, an operator opens its version from the
graphs list, fills **Start run** with the input the template expects, and watches the run page
while a real worker (django-tasks-db's loop, in a thread:
:func:`tests.functional.browser.running_worker`) drives the run: the approval gate's run
waits at its gate until an approver answers through ``POST /v1/runs/{id}/resume`` (an HTTP call
with an API token), then publishes the draft; the critic panels complete at once.

The worker runs only while the browser's requests are the run page's read-only polls: one
connection is shared by everything here (the ``shared_database`` fixture), and must never carry
two writers' transactions at once.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db.backends.base.base import BaseDatabaseWrapper
from playwright.sync_api import Locator, Page, Playwright, expect

from editor.models import Run, Version
from editor.services import tokens
from editor.services.documents.demo import DEMO_AGENTS, DEMO_DOCUMENTS, PERSONAS, ROUNDS
from tests.functional.browser import make_user, running_worker, wait_for_htmx

#: What the scripted demo writer writes, whatever it is asked.
DRAFT = json.loads(DEMO_AGENTS["writer"]["options"]["replies"][0])["draft"]
SUBJECT = "Gatehouse runs its demo graphs"
TITLES = {demo.slug: demo.title for demo in DEMO_DOCUMENTS}
#: A run may take a few seconds to show its end (the worker, then the page's stream).
RUN_TIMEOUT = 20_000


@pytest.fixture
def demo(author: User, shared_database: BaseDatabaseWrapper) -> dict[str, str]:
    """The demo content, loaded by its command: document slug → its frozen version's hex."""
    call_command("load_demo", "--user", author.username)
    versions = Version.objects.filter(document__slug__in=TITLES).values_list(
        "document__slug", "graph_id"
    )
    return {slug: digest.removeprefix("sha256:") for slug, digest in versions}


def open_demo(page: Page, slug: str, hex_digest: str) -> Locator:
    """Open the document's latest version from the graphs list; returns the run input field."""
    page.goto("/")
    wait_for_htmx(page)
    row = page.get_by_role("row").filter(has_text=TITLES[slug])
    row.get_by_role("link", name=hex_digest[:12]).click()
    expect(page).to_have_url(f"/g/{hex_digest}/?document={slug}")
    expect(page.get_by_role("heading", level=1)).to_contain_text(f"version 1 of “{TITLES[slug]}”")
    wait_for_htmx(page)
    return page.get_by_label("Input (JSON)")


def start_run(page: Page, field: Locator, run_input: Any) -> str:
    """Fill **Start run** with ``run_input``, start it, and return the run id of the page."""
    field.fill(json.dumps(run_input))
    expect(page.locator("#start-run .json-hint")).to_be_empty()
    page.get_by_role("button", name="Start run").click()
    expect(page).to_have_url(re.compile(r"/runs/[0-9a-f-]{36}/$"))
    expect(page.locator(".run-status")).to_contain_text("queued")
    run_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    assert Run.objects.get(pk=run_id).input == run_input
    return run_id


def canvas_node(page: Page, title: str) -> Locator:
    """The node of the run page's canvas whose label (its name, or id) is ``title``."""
    return page.locator("#run-canvas svg g.node").filter(
        has=page.locator("text", has_text=re.compile(rf"^\W*{re.escape(title)}$"))
    )


def expect_nodes(page: Page, states: dict[str, str]) -> None:
    for title, state in states.items():
        expect(canvas_node(page, title)).to_contain_text(f"· {state}")


def expect_finished(page: Page) -> None:
    """The last answer took the trigger away: the page stopped listening, Abandon run is gone."""
    expect(page.locator("#run-updates[hx-trigger]")).to_have_count(0)
    expect(page.get_by_role("button", name="Abandon run")).to_have_count(0)
    wait_for_htmx(page)


def test_the_approval_gate_demo_waits_for_the_api_and_publishes_the_approved_draft(
    operator_page: Page,
    demo: dict[str, str],
    shared_database: BaseDatabaseWrapper,
    playwright: Playwright,
    live_server: Any,
) -> None:
    page = operator_page
    # Made before the run page opens: nothing else writes while the test thread does.
    _, token = tokens.create_token(make_user("april", groups=("approvers",)), "demo test")
    slug = "demo-approval-gate"
    field = open_demo(page, slug, demo[slug])
    expect(field).to_have_value("null")  # the writer declares no input schema
    run_id = start_run(page, field, {"subject": SUBJECT})

    status = page.locator(".run-status")
    with running_worker(shared_database):
        expect(status).to_contain_text("suspended", timeout=RUN_TIMEOUT)
    expect(status).to_contain_text("A decision at the gate review")
    expect_nodes(page, {"write": "done", "review": "waiting"})
    expect(page.locator("#run-updates[hx-trigger]")).to_have_count(1)  # still listening
    expect(page.locator("#timeline")).to_contain_text("Suspended")
    wait_for_htmx(page)

    api = playwright.request.new_context(
        base_url=live_server.url, extra_http_headers={"Authorization": f"Bearer {token}"}
    )
    try:
        # The approval schema needs `approved`: refused, and nothing is recorded.
        refused = api.post(f"/v1/runs/{run_id}/resume", data={"input": {"draft": DRAFT}})
        assert refused.status == 400, refused.text()
        assert "approved" in refused.text()
        assert Run.objects.get(pk=run_id).state == "suspended"

        answer = api.post(
            f"/v1/runs/{run_id}/resume",
            data={"input": {"draft": DRAFT, "approved": True}, "comment": "Ship it"},
        )
        assert answer.status == 202, answer.text()
        assert answer.json()["run"] == run_id
    finally:
        api.dispose()

    with running_worker(shared_database):
        expect(status).to_contain_text("completed", timeout=RUN_TIMEOUT)
    # The run's output: its last nodes' (publish or archive), by node id.
    expect(status).to_contain_text(json.dumps({"text": DRAFT}, indent=2))
    expect_nodes(page, {"write": "done", "review": "done", "decide": "done", "publish": "done"})
    archive = canvas_node(page, "archive")  # the branch's other way: never reached
    expect(archive).to_have_count(1)
    expect(archive).not_to_contain_text("· done")
    expect(page.locator("#timeline")).to_contain_text("Resumed")
    expect(page.locator("#timeline")).to_contain_text("RunCompleted")
    expect_finished(page)
    assert Run.objects.get(pk=run_id).status["output"] == {"text": DRAFT}


@pytest.mark.parametrize(
    ("slug", "top_nodes", "fields"),
    [
        (
            "demo-critic-panel-parallel",
            ["Prompt the critics", "Each critic answers", "Synthesize"],
            True,
        ),
        # Its entry is a fold, which declares no input schema of its own: Start run takes the
        # JSON (filled from the defaults of its body's schema).
        ("demo-critic-panel-rounds", ["Panel rounds", "Synthesize"], False),
    ],
)
def test_a_critic_panel_demo_runs_to_its_synthesis(
    operator_page: Page,
    demo: dict[str, str],
    shared_database: BaseDatabaseWrapper,
    slug: str,
    top_nodes: list[str],
    fields: bool,
) -> None:
    page = operator_page
    field = open_demo(page, slug, demo[slug])
    run_input = {"subject": SUBJECT, "critics": list(PERSONAS)}
    if fields:
        # Start run is a form of the panel's input schema: it proposes the critics (the
        # default the template wrote into the schema), and asks for the subject.
        expect(page.get_by_label("Critics")).to_have_value(json.dumps(list(PERSONAS), indent=2))
        page.get_by_label("Subject").fill(SUBJECT)
        page.get_by_role("button", name="Start run", exact=True).click()
        expect(page).to_have_url(re.compile(r"/runs/[0-9a-f-]{36}/$"))
        run_id = page.url.rstrip("/").rsplit("/", 1)[-1]
        assert Run.objects.get(pk=run_id).input == run_input
    else:
        expect(field).to_have_value(json.dumps({"critics": list(PERSONAS)}, indent=2))
        run_id = start_run(page, field, run_input)

    status = page.locator(".run-status")
    with running_worker(shared_database):
        expect(status).to_contain_text("completed", timeout=RUN_TIMEOUT)
    expect(status).to_contain_text(f'"subject": "{SUBJECT}"')
    expect_nodes(page, dict.fromkeys(top_nodes, "done"))
    expect(page.locator("#timeline")).to_contain_text("RunCompleted")
    expect_finished(page)

    # The echo critics answer the subject (a critique each); in rounds, each answers the others.
    output = Run.objects.get(pk=run_id).status["output"]  # the one last node's: the synthesis
    if slug == "demo-critic-panel-parallel":
        assert [(reply["kind"], reply["recipient"]) for reply in output] == [
            ("critique", persona) for persona in PERSONAS
        ]
    else:
        assert output["round"] == ROUNDS
        assert {message["kind"] for message in output["transcript"]} == {"critique", "rebuttal"}
