"""The scale-out benchmark's tool (``GATEHOUSE_TOOL_MODULES=tests.benchmarks.wait_tools``):
``wait`` waits 20 ms, as a call to another service would, then answers its input."""

from __future__ import annotations

import time
from typing import Any

from editor.engine.ports import ToolContext, ToolSpec

WAIT_SECONDS = 0.020


def wait(value: Any, context: ToolContext) -> Any:
    time.sleep(WAIT_SECONDS)
    return value


def register(registry: Any) -> None:
    registry.register(ToolSpec("wait", "Waits 20 ms, then answers its input.", wait))
