"""The installation's own tools the corpus's processes register (``GATEHOUSE_TOOL_MODULES``),
as an operator's tool modules would add theirs:

* ``nap`` sleeps ``{"seconds": n}`` (at most its call's timeout) and answers ``{"slept": n}``:
  a slow but honest tool, for an agent that keeps calling it;
* ``not_json`` answers a value that is not JSON (a set): a tool with a bug, which the engine
  cannot record. A drive that meets it must still end the run, with a reason.
"""

from __future__ import annotations

import time
from typing import Any

from editor.engine.ports import ToolContext, ToolSpec

__all__ = ["register"]


def _nap(value: Any, context: ToolContext) -> dict[str, Any]:
    seconds = float(value.get("seconds", 0)) if isinstance(value, dict) else 0.0
    time.sleep(max(0.0, min(seconds, context.timeout)))
    return {"slept": seconds}


def _not_json(value: Any, context: ToolContext) -> Any:
    return {"a", "set"}


def register(registry: Any) -> None:
    registry.register(ToolSpec("nap", "Sleeps `seconds` seconds.", _nap))
    registry.register(ToolSpec("not_json", "Answers a value that is not JSON.", _not_json))
