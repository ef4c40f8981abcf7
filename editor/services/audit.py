"""The audit of the stored event log (spec 04 *Events*, ``manage.py audit_events``).

Reading the log is forward-tolerant: an event kind or payload field that this version does
not model is kept as it is. The audit counts them over every stored event, so an operator can
tell whether a newer writer left anything this version would only show raw.
"""

from __future__ import annotations

from collections.abc import Iterator

from editor.engine.events import Audit, audit
from editor.engine.ports import Envelope
from editor.models import RunEvent

__all__ = ["audit_stored_events", "stored_envelopes"]

CHUNK = 2000


def stored_envelopes(chunk: int = CHUNK) -> Iterator[Envelope]:
    """Every stored event, read ``chunk`` rows at a time in insertion order."""
    after = 0
    columns = ("pk", "run_id", "seq", "recorded_at", "kind", "payload", "schema_version")
    while True:
        rows = list(
            RunEvent.objects.filter(pk__gt=after).order_by("pk").values_list(*columns)[:chunk]
        )
        for _, run_id, seq, recorded_at, kind, payload, schema_version in rows:
            yield Envelope(
                run_id=str(run_id),
                seq=seq,
                recorded_at=recorded_at,
                kind=kind,
                payload=payload if isinstance(payload, dict) else {},
                schema_version=schema_version,
            )
        if len(rows) < chunk:
            return
        after = rows[-1][0]


def audit_stored_events(chunk: int = CHUNK) -> Audit:
    return audit(stored_envelopes(chunk))
