"""``ENGINE = "editor.sqlite"``: Django's SQLite backend, with the database file, its folder and
its ``-wal``/``-shm`` files made private before each new connection opens them."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.backends.sqlite3 import base

from editor.local_state import prepare_sqlite_file

__all__ = ["DatabaseWrapper"]


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        prepare_sqlite_file(str(conn_params.get("database", "")), settings.GATEHOUSE_VAR_DIR)
        return super().get_new_connection(conn_params)
