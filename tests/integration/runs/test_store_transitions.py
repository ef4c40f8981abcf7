"""The ORM store applies the run-state table to every append (spec 04, *Run states*): an append
that would move a run along a transition the table forbids is refused, and nothing is written."""

from __future__ import annotations

import pytest

from editor.engine import Envelope, run_status
from editor.models import Run, RunEvent
from editor.store import OrmRunStore
from tests.integration.runs.starting import ECHO_CHAIN, start, stored
from tests.unit.engine.transition_cases import AT, KINDS, LOGS, PAYLOADS, expected

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def states() -> list[str]:
    return list(LOGS)


def run_in(state: str) -> str:
    """A stored run whose log (written straight to the tables) leaves it in ``state``."""
    run_id = start(ECHO_CHAIN)
    events = [
        Envelope(run_id, 1 + offset, AT, kind, payload)
        for offset, (kind, payload) in enumerate(LOGS[state])
    ]
    RunEvent.objects.bulk_create(
        RunEvent(
            run_id=run_id, seq=e.seq, recorded_at=e.recorded_at, kind=e.kind, payload=e.payload
        )
        for e in events
    )
    status = run_status(OrmRunStore().load_run(run_id).events)
    Run.objects.filter(pk=run_id).update(
        state=status["state"], status=status, event_count=1 + len(events)
    )
    return run_id


@pytest.mark.parametrize("state", list(LOGS))
@pytest.mark.parametrize("kind", KINDS)
def test_every_event_kind_in_every_state_follows_the_table(state: str, kind: str) -> None:
    stored(ECHO_CHAIN)
    run_id = run_in(state)
    store = OrmRunStore()
    log = store.load_run(run_id).events
    envelope = Envelope(run_id, len(log), AT, kind, PAYLOADS.get(kind, {"node": "a"}))
    status = run_status([*log, envelope])
    refusal = expected(state, kind, status["state"])

    if refusal is None:
        store.record(run_id, [envelope], status)
        assert Run.objects.get(pk=run_id).state == status["state"]
        return
    with pytest.raises(refusal) as raised:
        store.record(run_id, [envelope], status)
    run = Run.objects.get(pk=run_id)
    assert (run.state, run.event_count) == (state, len(log))  # nothing written
    assert RunEvent.objects.filter(run_id=run_id).count() == len(log)
    if state not in ("completed", "failed", "abandoned") and kind != "GraphRunStarted":
        assert str(raised.value).startswith(f"a run cannot go from `{state}` to ")
