"""Found 11 (files) and 12: world-readable local state; ``migrate`` on a fresh checkout."""

import stat
from pathlib import Path
from typing import Any


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


def the_installations_own_state_is_private(corpus: Any) -> None:
    """The corpus's own installation was created by ``migrate`` on a fresh ``var/``: on SQLite
    it holds the session keys and token digests, so the folder is 0700 and the files 0600."""
    if corpus.database.engine != "sqlite":
        return  # on PostgreSQL, var/ holds nothing of the database's
    database = corpus.database.sqlite_file
    assert mode(corpus.database.var) == "0o700"
    for path in [database, *database.parent.glob(database.name + "-*")]:
        assert mode(path) == "0o600", path


CASE = {
    "found": [11, 12],
    "attack": (
        "Local state left readable by everyone (the SQLite database and var/ were 0644 and "
        "0755 and hold session keys and token digests), and `manage.py migrate` or `check` on "
        "a fresh checkout, which crashed with *unable to open database file* because var/ did "
        "not exist yet"
    ),
    "steps": [
        {"do": "python", "call": the_installations_own_state_is_private},
        *[
            {
                "do": "command",
                "args": args,
                "unset": ["DATABASE_URL", "GATEHOUSE_LOG_LEVEL"],
                "env": {"GATEHOUSE_VAR_DIR": f"{{{{folder}}}}/fresh-{n}/var"},
                "modes": [
                    f"{{{{folder}}}}/fresh-{n}/var",
                    f"{{{{folder}}}}/fresh-{n}/var/gatehouse.sqlite3",
                ],
                "expect": {
                    "returncode": 0,
                    "modes": {
                        f"{{{{folder}}}}/fresh-{n}/var": "0o700",
                        f"{{{{folder}}}}/fresh-{n}/var/gatehouse.sqlite3": "0o600",
                    },
                },
            }
            for n, args in enumerate([["check"], ["migrate", "--no-input", "--verbosity", "0"]])
        ],
        {
            "do": "command",
            "args": ["migrate", "--no-input"],
            "unset": ["DATABASE_URL", "GATEHOUSE_LOG_LEVEL"],
            "env": {"GATEHOUSE_VAR_DIR": "{{secret_path}}/var"},
            "expect": {
                "returncode": 1,
                "stderr": {
                    "$all": [
                        {"$lines": 1},
                        {"$startswith": "Configuration error: cannot create {{secret_path}}/var "},
                        {"$contains": "mkdir -m 700 {{secret_path}}/var"},
                    ]
                },
            },
        },
    ],
}
