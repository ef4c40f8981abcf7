"""A graph whose tool nodes are the payroll example's MCP tools, driven by a real ``db_worker``
(the reference's ``payroll`` graph without its notifying agent)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management.base import CommandError
from django.db import transaction

from editor.models import Run, RunEvent
from editor.services import installation
from editor.services.runs.resolutions import resume
from editor.tasks import enqueue_run
from tests.integration.mcp.servers import EXAMPLES, PAYROLL, payroll_catalogue
from tests.integration.runs.starting import start
from tests.reference_examples import needs_examples

pytestmark = [
    pytest.mark.django_db(transaction=True),
    needs_examples(PAYROLL),
]


def payroll_graph() -> dict[str, Any]:
    graph = json.loads((EXAMPLES / "payroll" / "payroll-run.json").read_text())
    graph["nodes"] = [node for node in graph["nodes"] if node["kind"] != "agent"]
    graph["edges"] = [edge for edge in graph["edges"] if edge["to"] != "notify_summary"]
    return graph


@pytest.fixture
def payroll(tmp_path: Path, settings: Any) -> Iterator[Path]:
    """The payroll server in the catalogue; its ledger's folder."""
    settings.GATEHOUSE_MCP_SERVERS = str(payroll_catalogue(tmp_path)[0])
    installation.reset()
    try:
        yield tmp_path
    finally:
        installation.reset()


def drive(run_id: str, work: Callable[[], str]) -> Run:
    with transaction.atomic():
        enqueue_run(run_id)
    work()
    return Run.objects.get(pk=run_id)


def output_of(run_id: str, node: str) -> Any:
    for event in RunEvent.objects.filter(run_id=run_id, kind="ToolCallCompleted").order_by("seq"):
        if event.payload["node"] == node:
            return event.payload["output"]
    raise AssertionError(f"no completed call of {node}")


def test_the_payroll_graph_routes_on_structured_content_and_pays_the_amended_roster(
    payroll: Path, work_the_queue: Callable[[], str], approver: User
) -> None:
    run_id = start(payroll_graph(), {"pay_period": "2025-11-B"})

    parked = drive(run_id, work_the_queue)

    assert parked.state == "suspended"
    review = output_of(run_id, "flag_exceptions")
    assert set(review) == {"content", "structuredContent", "isError"}
    assert review["isError"] is False
    assert review["structuredContent"]["flagged_count"] == 2
    roster = [
        {**row, "amount_cents": min(row["amount_cents"], 600_000)}
        for row in review["structuredContent"]["roster"]
    ]

    amended = {"structuredContent": {"roster": roster}, "approver": "ops"}
    resume(approver, run_id, {"input": amended})
    done = drive(run_id, work_the_queue)

    assert done.state == "completed", done.status
    ledger = (payroll / "ledger.txt").read_text().splitlines()
    assert len(ledger) == 12
    assert all(str(row["amount_cents"]) in line for row, line in zip(roster, ledger, strict=True))


def test_a_worker_whose_registry_cannot_be_built_stops_at_start_naming_both_servers(
    payroll: Path, settings: Any, work_the_queue: Callable[[], str]
) -> None:
    catalogue = Path(settings.GATEHOUSE_MCP_SERVERS)
    text = catalogue.read_text()
    catalogue.write_text(text + text.replace("[servers.payroll]", "[servers.payroll-2]"))
    installation.reset()

    with pytest.raises(CommandError, match="offered by both MCP servers `payroll` and `payroll-2`"):
        work_the_queue()


def test_a_tool_that_answers_is_error_fails_the_run_with_the_servers_text(
    payroll: Path, work_the_queue: Callable[[], str]
) -> None:
    run_id = start(payroll_graph(), {"pay_period": "1999-01-A"})

    failed = drive(run_id, work_the_queue)

    assert failed.state == "failed"
    assert "no roster for pay period '1999-01-A'" in json.dumps(failed.status)
    assert "MCP server `payroll`" in json.dumps(failed.status)


def test_a_declared_idempotency_key_is_the_calls_recorded_key(
    payroll: Path, work_the_queue: Callable[[], str]
) -> None:
    graph = {
        "schema_version": 1,
        "nodes": [{"kind": "tool", "payload": {"id": "pay", "tool": "pay_employee"}}],
        "edges": [],
    }
    run_id = start(graph, {"id": "E07", "amount_cents": 100, "pay_period": "2025-11-B"})

    assert drive(run_id, work_the_queue).state == "completed"

    requested = RunEvent.objects.get(run_id=run_id, kind="ToolCallRequested")
    assert requested.payload["idempotency_key"] == "pay_employee:E07"
    assert requested.payload["effect"] == "idempotent"


def test_a_call_without_its_declared_key_is_refused_before_it_runs(
    payroll: Path, work_the_queue: Callable[[], str]
) -> None:
    graph = {
        "schema_version": 1,
        "nodes": [{"kind": "tool", "payload": {"id": "pay", "tool": "pay_employee"}}],
        "edges": [],
    }
    run_id = start(graph, {"name": "nobody", "amount_cents": 100})

    failed = drive(run_id, work_the_queue)

    assert failed.state == "failed"
    assert "declares its idempotency key at `id`, but there is no `id` in the input" in (
        json.dumps(failed.status)
    )
    assert not RunEvent.objects.filter(run_id=run_id, kind="ToolCallRequested").exists()
    assert not (payroll / "ledger.txt").exists()


SUMMARY = {
    "schema_version": 1,
    "nodes": [{"kind": "tool", "payload": {"id": "notify", "tool": "send_summary"}}],
    "edges": [],
}


@pytest.fixture
def keyed_summaries(payroll: Path, settings: Any) -> Path:
    """``send_summary`` (a write the server does not collapse) keyed by its message."""
    catalogue = Path(settings.GATEHOUSE_MCP_SERVERS)
    catalogue.write_text(
        catalogue.read_text().replace(
            'idempotency_keys = { pay_employee = "id" }',
            'idempotency_keys = { pay_employee = "id", send_summary = "message" }',
        )
    )
    installation.reset()
    return payroll


def test_a_second_run_of_a_call_with_a_declared_key_copies_the_first_runs_result(
    keyed_summaries: Path, work_the_queue: Callable[[], str]
) -> None:
    first = start(SUMMARY, {"message": "2025-11-B paid"})
    assert drive(first, work_the_queue).state == "completed"
    second = start(SUMMARY, {"message": "2025-11-B paid"})

    assert drive(second, work_the_queue).state == "completed"

    notices = (keyed_summaries / "notices.json").read_text().splitlines()
    assert notices == ['{"message": "2025-11-B paid"}']  # the server was called once
    copied = RunEvent.objects.get(run_id=second, kind="ToolCallCompleted").payload
    assert copied["deduplicated_from"] == first
    assert copied["output"] == output_of(first, "notify")
    requested = RunEvent.objects.get(run_id=second, kind="ToolCallRequested").payload
    assert requested["idempotency_key"] == "send_summary:2025-11-B paid"


def test_a_call_whose_first_run_failed_it_runs_in_the_next_run(
    keyed_summaries: Path, work_the_queue: Callable[[], str]
) -> None:
    graph = {
        "schema_version": 1,
        "nodes": [{"kind": "tool", "payload": {"id": "pay", "tool": "pay_employee"}}],
        "edges": [],
    }
    refused = start(graph, {"id": "E99", "amount_cents": "not a number"})
    assert drive(refused, work_the_queue).state == "failed"

    again = start(graph, {"id": "E99", "amount_cents": 100, "pay_period": "2025-11-B"})

    assert drive(again, work_the_queue).state == "completed"
    assert "deduplicated_from" not in (
        RunEvent.objects.get(run_id=again, kind="ToolCallCompleted").payload
    )
