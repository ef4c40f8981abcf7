"""Maps on a worker run on a bounded pool (GATEHOUSE_RUN_MAP_CONCURRENCY): a wide map holds a
few threads and database connections, however many items it has or asks for at once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db.backends.signals import connection_created

from editor.models import Run
from editor.tasks import drive_run
from tests.integration.runs.slow_tools import ThreadCount
from tests.integration.runs.starting import start, wide_map

pytestmark = pytest.mark.django_db(transaction=True)

ITEMS = 120


@pytest.fixture
def connections_opened() -> Iterator[Callable[[], int]]:
    """How many database connections were opened (by any thread) since the fixture started."""
    opened: list[int] = []
    lock = threading.Lock()

    def note(**kwargs: Any) -> None:
        with lock:
            opened.append(threading.get_ident())

    connection_created.connect(note)
    try:
        yield lambda: len(opened)
    finally:
        connection_created.disconnect(note)


def test_a_wide_map_runs_on_the_capped_pool_of_threads_and_connections(
    settings: Any, test_tools: None, connections_opened: Callable[[], int]
) -> None:
    """Found: one thread and one database connection per item (a 10,000-item map peaked at
    about 9,500 threads in one worker)."""
    settings.GATEHOUSE_RUN_MAP_CONCURRENCY = 4
    ThreadCount.most = 0
    before = threading.active_count()
    run_id = start(wide_map(ITEMS, tool="count_threads"), {"items": list(range(ITEMS))})

    assert drive_run.call(run_id) == "completed"

    assert Run.objects.get(pk=run_id).status["output"] == list(range(ITEMS))
    # the drive's thread and 3 helpers, each with at most one call thread, and the heartbeat
    assert ThreadCount.most <= before + 2 * 4 + 2
    # the helpers keep their connection from item to item: one each, not one per item
    assert connections_opened() <= 4 + 2
    assert not [t for t in threading.enumerate() if t.name.startswith("gatehouse-map")]
