"""A stand-in, for the watchdog tests, for a drive stuck in its own thread: registered through
``GATEHOUSE_TOOL_MODULES``, it makes the engine's schema check of one marker value hang.

``{"hang": "blocking"}`` sleeps (a blocking call: other threads run meanwhile);
``{"hang": "interpreter"}`` runs a catastrophic regular expression, which holds Python's
interpreter lock (no other thread of the process runs until it ends, which it never does).
"""

from __future__ import annotations

import re
import time
from typing import Any


def register(registry: Any) -> None:
    import editor.engine.runner as runner

    check = runner.first_violation

    def hangs(schema: Any, value: Any) -> Any:
        if value == {"hang": "blocking"}:
            time.sleep(3600)
        if value == {"hang": "interpreter"}:
            re.fullmatch(r"(a+)+b", "a" * 64)
        return check(schema, value)

    runner.first_violation = hangs
