"""Tools for the crash tests, registered through ``GATEHOUSE_TOOL_MODULES``.

``hold`` (``idempotent``) and ``hold_write`` (``write``) each note their call in the file named by
``calls`` (one line: the idempotency key), then wait until the file named by ``release`` exists:
a test kills the worker while the call waits, and releases it for the next worker.
``until_renewed`` waits until the worker's heartbeat renews the run's lease. ``count_threads``
notes the most threads the process had while it ran (``ThreadCount.most``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from editor.engine.ports import ToolContext, ToolEffect, ToolSpec

SCHEMA = {
    "type": "object",
    "properties": {"release": {"type": "string"}, "calls": {"type": "string"}},
    "required": ["release", "calls"],
}


def hold(value: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    with Path(value["calls"]).open("a", encoding="utf-8") as calls:
        calls.write(context.idempotency_key + "\n")
    release = Path(value["release"])
    deadline = time.monotonic() + context.timeout
    while not release.exists():
        if time.monotonic() > deadline:
            raise TimeoutError("never released")
        time.sleep(0.05)
    return {"released": True}


def register(registry: Any) -> None:
    registry.register(
        ToolSpec("hold", "Waits for a file.", hold, ToolEffect.IDEMPOTENT, input_schema=SCHEMA)
    )
    registry.register(
        ToolSpec("hold_write", "Waits for a file.", hold, ToolEffect.WRITE, input_schema=SCHEMA)
    )
    registry.register(ToolSpec("until_renewed", "Waits for a lease renewal.", until_renewed))
    registry.register(ToolSpec("count_threads", "Notes the threads alive.", count_threads))


def until_renewed(value: Any, context: ToolContext) -> dict[str, Any]:
    """Waits until the run's lease is renewed while this call runs (only the worker's
    heartbeat can renew it then); whether it was."""
    from django.db import connection

    from editor.models import Run

    try:
        leases = Run.objects.filter(pk=context.run_id).values_list("lease_expires_at", flat=True)
        first = leases.get()
        deadline = time.monotonic() + context.timeout
        while time.monotonic() < deadline:
            if leases.get() > first:
                return {"renewed": True}
            time.sleep(0.05)
        return {"renewed": False}
    finally:
        connection.close()


class ThreadCount:
    """The most threads the worker process had at once while ``count_threads`` calls ran."""

    most = 0


def count_threads(value: Any, context: ToolContext) -> Any:
    import threading

    ThreadCount.most = max(ThreadCount.most, threading.active_count())
    time.sleep(0.005)  # long enough for the items in flight to overlap
    return value
