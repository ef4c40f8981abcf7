"""``manage.py audit_events``: what in the stored log this version does not model."""

from __future__ import annotations

from typing import Any

import pytest

from editor.models import RunEvent
from editor.services.audit import audit_stored_events
from tests.integration.commands import run_command
from tests.integration.runs.starting import ECHO_CHAIN, start

pytestmark = pytest.mark.django_db

AT = "2026-11-30T00:00:00.000000Z"


def stored_as_a_newer_writer_would(run_id: str, *events: tuple[str, dict[str, Any]]) -> None:
    """Events written straight to the table, past the strict append guard."""
    first = RunEvent.objects.filter(run_id=run_id).count()
    RunEvent.objects.bulk_create(
        RunEvent(run_id=run_id, seq=first + offset, recorded_at=AT, kind=kind, payload=payload)
        for offset, (kind, payload) in enumerate(events)
    )


def test_it_reports_a_clean_log_and_exits_0() -> None:
    start(ECHO_CHAIN)

    status, output, _ = run_command("audit_events")

    assert status == 0
    assert "1 events audited: no unknown event kinds, no unmodeled fields." in output


def test_it_counts_unknown_kinds_and_unmodeled_fields_and_exits_1() -> None:
    run_id = start(ECHO_CHAIN)
    stored_as_a_newer_writer_would(
        run_id,
        ("NodeEntered", {"node": "first", "attempt": 2}),
        ("NodeRetried", {"node": "first"}),
        ("NodeEntered", {"node": "second", "attempt": 1}),
        ("NodeRetried", {"node": "second"}),
        ("NodeExited", {"node": "second", "output": 1, "cost": 0.1}),
    )

    status, output, _ = run_command("audit_events")

    assert status == 1
    lines = [line.split() for line in output.splitlines()]
    assert lines[0] == ["finding", "kind", "field", "events"]
    assert ["unknown", "kind", "NodeRetried", "2"] in lines
    assert ["unmodeled", "field", "NodeEntered", "attempt", "2"] in lines
    assert ["unmodeled", "field", "NodeExited", "cost", "1"] in lines
    assert "6 events audited: 2 of an unknown kind, 2 unmodeled field(s)." in output


def test_it_reads_every_event_however_many_chunks_they_take() -> None:
    run_id = start(ECHO_CHAIN)
    stored_as_a_newer_writer_would(run_id, *[("Unknown", {})] * 6)

    report = audit_stored_events(chunk=4)

    assert report.events == 7
    assert report.unknown_kinds == {"Unknown": 6}
