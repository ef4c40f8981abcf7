"""Fixtures for the worker tests."""

from __future__ import annotations

import io
import signal
from collections.abc import Callable, Iterator
from typing import Any

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


@pytest.fixture
def test_tools(settings: Any) -> Iterator[None]:
    """The worker's installation with the test tools of ``slow_tools`` registered."""
    from editor.services.installation import tools

    settings.GATEHOUSE_TOOL_MODULES = ["tests.integration.runs.slow_tools"]
    tools.cache_clear()
    try:
        yield
    finally:
        tools.cache_clear()
