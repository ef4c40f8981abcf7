"""Starts one stdio MCP server so that it cannot outlive the worker that started it.

Run as a script (``python -I launch.py PARENT_PID KEEP COMMAND ARG…``), never imported: it asks
Linux to SIGKILL it when the thread that started it dies (``prctl(PR_SET_PDEATHSIG)``, which
survives ``execve``), checks that its parent did not already die before that took hold, keeps
only the environment variables named in ``KEEP`` (comma-separated: the catalogue entry's ``env``
plus ``PATH``), and replaces itself with the server. A server that cannot be executed prints why
on stderr (which the worker logs under the server's name) and exits 127.
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> int:
    parent, keep, command, *args = argv[1:]
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != int(parent):  # the worker died before the signal was armed
        return 1
    names = {name for name in keep.split(",") if name}
    environment = {name: value for name, value in os.environ.items() if name in names}
    try:
        os.execvpe(command, [command, *args], environment)
    except OSError as error:
        print(f"cannot start `{command}`: {error.strerror or error}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv))
