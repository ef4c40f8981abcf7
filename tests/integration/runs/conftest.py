"""Fixtures for the worker tests."""

from __future__ import annotations

import io
import signal
from collections.abc import Callable, Iterator

import pytest
from django.core.management import call_command


@pytest.fixture
def work_the_queue() -> Iterator[Callable[[], str]]:
    """Run ``db_worker`` in batch mode: it sweeps once, works through the queue, and returns
    its output. The worker installs its own signal handlers; the test's are put back after."""
    saved = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}

    def work() -> str:
        output = io.StringIO()
        call_command("db_worker", batch=True, startup_delay=False, reload=False, stdout=output)
        return output.getvalue()

    try:
        yield work
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
