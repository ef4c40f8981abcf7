"""Starts one stdio MCP server so that neither it nor anything it starts outlives the worker.

Run as a script (``python -I launch.py PARENT_PID KEEP COMMAND ARG…``), never imported. The MCP
client starts it as the leader of a new process group; on Linux it becomes a small supervisor:

1. It asks Linux to send it SIGUSR1 when the thread that started it dies
   (``prctl(PR_SET_PDEATHSIG)``, which survives ``execve``; the signal blocked until step 3 can
   take it) and checks that its parent did not already die before that took hold.
2. It forks the server: only the variables named in ``KEEP`` (comma-separated: the catalogue
   entry's ``env`` plus ``PATH``), the client's stdin/stdout/stderr, the same process group, and
   a parent-death signal of its own (SIGKILL, should the supervisor die first). A server that
   cannot be executed prints why on stderr (which the worker logs under the server's name) and
   exits 127.
3. It replaces itself with ``launch.py --supervise SERVER_PID`` with an empty environment and
   stdin/stdout/stderr on ``/dev/null`` (so the catalogue's values live only in the server, and
   the client sees end-of-file when the server exits), which waits for the server. SIGUSR1 (the
   worker died, even by ``kill -9``) makes it SIGKILL its whole process group: the server and
   whatever the server started and left in the group. When the server exits, it kills what the
   server left behind in the group and exits with the server's status. SIGTERM (the client
   closing the group) is the server's to answer: the supervisor follows the server's exit.

What escapes: a process the server moves out of the group (``setsid``, a daemon) is the
server's own business. Elsewhere than Linux there is no parent-death signal: the server replaces
this script directly and is stopped only by the client closing its group.
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def _prctl_parent_death(signum: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signum)


def _exec_server(command: str, args: list[str], environment: dict[str, str]) -> int:
    try:
        os.execvpe(command, [command, *args], environment)
    except OSError as error:
        print(f"cannot start `{command}`: {error.strerror or error}", file=sys.stderr, flush=True)
    return 127


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--supervise"]:
        return supervise(int(argv[2]))
    parent, keep, command, *args = argv[1:]
    names = {name for name in keep.split(",") if name}
    environment = {name: value for name, value in os.environ.items() if name in names}
    if not sys.platform.startswith("linux"):
        return _exec_server(command, args, environment)

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    _prctl_parent_death(signal.SIGUSR1)
    if os.getppid() != int(parent):  # the worker died before the signal was armed
        return 1
    supervisor = os.getpid()
    server = os.fork()
    if server == 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        _prctl_parent_death(signal.SIGKILL)
        if os.getppid() != supervisor:
            os._exit(1)
        os._exit(_exec_server(command, args, environment))

    # The supervisor lets go of the client's pipes: only the server holds them now.
    null = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(null, descriptor)
    os.close(null)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # kept across execve
    executable = sys.executable or "python3"
    os.execve(executable, [executable, "-I", __file__, "--supervise", str(server)], {})
    return 1  # not reached


def supervise(server: int) -> int:
    """Wait for ``server``; see the module's docs (step 3)."""
    group = os.getpgrp()

    def worker_died(signum: int, frame: object) -> None:
        os.killpg(group, signal.SIGKILL)

    signal.signal(signal.SIGUSR1, worker_died)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
    _, status = os.waitpid(server, 0)
    _kill_the_rest_of(group)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def _kill_the_rest_of(group: int) -> None:
    """SIGKILL every other process of ``group`` (what the server started and left behind)."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            if int(fields[2]) == group:
                os.kill(int(entry), signal.SIGKILL)
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile, or not ours to signal


if __name__ == "__main__":
    sys.exit(main(sys.argv))
