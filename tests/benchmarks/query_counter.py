"""Counts the SQL statements a process sends, for the benchmarks that watch a worker idle.

The sleeping benchmark starts its workers as
``python tests/benchmarks/query_counter.py COUNT_FILE db_worker …``: this installs a
``connection.execute_wrapper`` on every database connection the process opens, then hands over
to ``manage.py``. Every half second, and at exit, the running total is written to
``COUNT_FILE`` (one integer).
"""

from __future__ import annotations

import atexit
import itertools
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

_counter = itertools.count()
_total = [0]


def _count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    _total[0] = next(_counter) + 1
    return execute(sql, params, many, context)


def _install(sender: Any, connection: Any, **kwargs: Any) -> None:
    # Sent on every (re)connection of the same wrapper: install once.
    if _count not in connection.execute_wrappers:
        connection.execute_wrappers.append(_count)


def main() -> None:
    target = Path(sys.argv[1])

    def write() -> None:
        target.write_text(str(_total[0]))

    def every_half_second() -> None:
        stop = threading.Event()
        while not stop.wait(0.5):
            write()

    atexit.register(write)
    threading.Thread(target=every_half_second, daemon=True).start()
    from django.db.backends.signals import connection_created

    connection_created.connect(_install)
    from django.core.management import execute_from_command_line

    execute_from_command_line(["manage.py", *sys.argv[2:]])


if __name__ == "__main__":
    main()
