"""Django's SQLite backend, keeping the database file private (``editor.local_state``)."""
