"""Running management commands in tests: in-process, or in their own process as a user does."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.management import CommandError, call_command

__all__ = ["manage", "run_command"]


def run_command(name: str, *args: str) -> tuple[int, str, str]:
    """Run a command in-process: its exit status, standard output and standard error."""
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        call_command(name, *args, stdout=stdout, stderr=stderr)
    except SystemExit as exit_:
        status = int(exit_.code or 0)
    except CommandError as error:
        status = error.returncode
        stderr.write(str(error))
    else:
        status = 0
    return status, stdout.getvalue(), stderr.getvalue()


def manage(
    *args: str, env: Mapping[str, str] | None = None, text: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[Any]:
    """Run ``manage.py`` with ``args`` as a user does, in its own process."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env=dict(os.environ if env is None else env),
        capture_output=True,
        text=text,
        timeout=timeout,
        check=False,
    )
