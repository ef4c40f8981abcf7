"""Tools for the fork tests, registered through ``GATEHOUSE_TOOL_MODULES``; they keep their
state in files named by their input, so a worker in another process shares it with the test.

* ``counted`` (``read``) notes each call (one line: its node) in the file named by ``calls``
  and returns its input;
* ``fails_once`` (``read``) notes its call the same way, then fails the first time it is called
  for a ``marker`` file that does not exist yet (and creates it): a tool that is fixed after
  one failure;
* ``sends`` (``write``) notes its call and returns ``{"sent": true}``.

:func:`calls` reads the notes back: how often each node's tool ran.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from editor.engine.ports import ToolContext, ToolEffect, ToolSpec

SCHEMA = {
    "type": "object",
    "properties": {"calls": {"type": "string"}, "marker": {"type": "string"}},
    "required": ["calls"],
}


def _note(value: dict[str, Any], context: ToolContext) -> None:
    with Path(value["calls"]).open("a", encoding="utf-8") as notes:
        notes.write(context.node + "\n")


def counted(value: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    _note(value, context)
    return value


def fails_once(value: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    _note(value, context)
    marker = Path(value["marker"])
    if not marker.exists():
        marker.write_text("failed once\n", encoding="utf-8")
        raise RuntimeError("the service is not up yet")
    return value


def sends(value: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    _note(value, context)
    return {**value, "sent": True}


def calls(path: Path) -> Counter[str]:
    """How many times each node's tool was called, from the notes in ``path``."""
    if not path.exists():
        return Counter()
    return Counter(line for line in path.read_text(encoding="utf-8").splitlines() if line)


def register(registry: Any) -> None:
    registry.register(ToolSpec("counted", "Notes its call.", counted, input_schema=SCHEMA))
    registry.register(
        ToolSpec("fails_once", "Fails the first time.", fails_once, input_schema=SCHEMA)
    )
    registry.register(
        ToolSpec("sends", "Notes a write.", sends, ToolEffect.WRITE, input_schema=SCHEMA)
    )


#: a (counted) → b (fails_once) → c (counted).
FLAKY = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "a", "tool": "counted"}},
        {"kind": "tool", "payload": {"id": "b", "tool": "fails_once"}},
        {"kind": "tool", "payload": {"id": "c", "tool": "counted"}},
    ],
    "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "c"}],
}

#: a (counted) → send (sends, a write) → after (counted).
WRITING = {
    "schema_version": 1,
    "nodes": [
        {"kind": "tool", "payload": {"id": "a", "tool": "counted"}},
        {"kind": "tool", "payload": {"id": "send", "tool": "sends"}},
        {"kind": "tool", "payload": {"id": "after", "tool": "counted"}},
    ],
    "edges": [{"from": "a", "to": "send"}, {"from": "send", "to": "after"}],
}
