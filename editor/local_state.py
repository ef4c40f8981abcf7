"""Local state on disk, readable by its owner only.

``GATEHOUSE_VAR_DIR`` (``var/``) holds the default SQLite database — session keys, API token
digests, everything — and the first user's password file. The folder is created mode 0700 and
the database file, with its ``-wal`` and ``-shm`` companions, mode 0600; a folder or a file
found looser is tightened (a checkout from before, or one made under a lax ``umask``). SQLite
gives the ``-wal`` and ``-shm`` files the mode of the database file, so creating that one
0600 before SQLite opens it covers the others.

A folder that cannot be created stops the command with one line saying what to do, instead
of SQLite's *unable to open database file*.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

__all__ = [
    "PRIVATE_DIR",
    "PRIVATE_FILE",
    "prepare_sqlite_file",
    "private_directory",
    "private_file",
    "tighten",
]

logger = logging.getLogger(__name__)

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
#: What SQLite writes beside the database file.
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def tighten(path: Path, mode: int) -> None:
    """Take away what ``mode`` does not grant (group and others' bits) from ``path``, if it
    exists; a file this user does not own is left alone, with a warning."""
    try:
        current = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return
    if current & ~mode:
        try:
            path.chmod(current & mode)
        except PermissionError:
            logger.warning("%s is mode %o and cannot be tightened to %o", path, current, mode)


def private_directory(path: Path, *, what: str) -> Path:
    """Create ``path`` (and its parents) when missing, mode 0700; tighten it when looser.

    Raises :class:`ImproperlyConfigured` naming ``what`` needs it when it cannot be created."""
    if not path.is_dir():
        try:
            path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
        except OSError as error:
            raise ImproperlyConfigured(
                f"cannot create {path} for {what} ({error.strerror or error}): create it "
                f"(mkdir -m 700 {path}) or point GATEHOUSE_VAR_DIR or DATABASE_URL elsewhere"
            ) from None
    tighten(path, PRIVATE_DIR)
    return path


def private_file(path: Path) -> None:
    """Create ``path`` empty, mode 0600, when missing; tighten it when looser."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        tighten(path, PRIVATE_FILE)
    except OSError as error:
        raise ImproperlyConfigured(
            f"cannot create {path} ({error.strerror or error}): make {path.parent} writable "
            "by this user, or point GATEHOUSE_VAR_DIR or DATABASE_URL elsewhere"
        ) from None
    else:
        os.close(descriptor)


def prepare_sqlite_file(name: str, var_dir: Path) -> None:
    """Before SQLite opens ``name``: its folder exists (``var_dir`` private), and the file
    and its companions are private. In-memory databases are left alone."""
    if not name or name == ":memory:" or name.startswith("file:"):
        return
    path = Path(name)
    if path.parent.resolve() == var_dir.resolve() or not path.parent.exists():
        private_directory(path.parent, what="the SQLite database")
    private_file(path)
    for suffix in SQLITE_COMPANIONS:
        tighten(path.with_name(path.name + suffix), PRIVATE_FILE)
