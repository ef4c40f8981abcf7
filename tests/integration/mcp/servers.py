"""The reference's example MCP servers as this suite's test servers, run from where they are
(``../shared/reference/examples`` beside the checkout), and a way to find their processes."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from tests.reference_examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[3]
PAYROLL = EXAMPLES / "payroll" / "server.py"
PYTHON = sys.executable  # not a PATH lookup: a version-manager shim adds variables of its own


def payroll_catalogue(
    folder: Path,
    *,
    gate: Path | None = None,
    pay_delay_ms: int = 0,
    roster: Path | None = None,
    extra: str = "",
    companion: str = "",
) -> tuple[Path, str]:
    """A catalogue with the payroll server as ``payroll``, its ledger and notices in
    ``folder``; and the marker its processes carry in their environment.

    With ``gate``, the server is started through ``sh`` and only while the file ``gate``
    exists (remove it and the next start fails, saying so on stderr). With ``companion`` (a
    shell command), the server starts that command in the background first: a child of the
    server's own, in its process group."""
    marker = uuid.uuid4().hex
    environment = (
        f'env = {{ GATEHOUSE_TEST_MARK = "{marker}", '
        f'SALVOR_PAYROLL_LEDGER = "{folder / "ledger.txt"}", '
        f'SALVOR_PAYROLL_NOTICES = "{folder / "notices.json"}", '
        f'SALVOR_PAYROLL_PAY_DELAY_MS = "{pay_delay_ms}", '
        + (f'SALVOR_PAYROLL_ROSTER = "{roster}", ' if roster is not None else "")
        + f'SERVER = "{PAYROLL}", GATE = "{gate or ""}" }}'
    )
    if gate is None and not companion:
        command = f'command = "{PYTHON}"\nargs = ["{PAYROLL}"]'
    else:
        script = (
            ('[ -e "$GATE" ] || { echo "the gate file is gone" >&2; exit 3; }; ' if gate else "")
            + (f"{companion} & " if companion else "")
            + f'exec {PYTHON} "$SERVER"'
        )
        command = f'command = "sh"\nargs = ["-c", \'{script}\']'  # a TOML literal string
    path = folder / "mcp-servers.toml"
    path.write_text(
        f"[servers.payroll]\n{command}\n{environment}\n"
        'idempotency_keys = { pay_employee = "id" }\n' + extra,
        encoding="utf-8",
    )
    return path, marker


def processes_marked(marker: str) -> list[int]:
    """The pids of live processes whose environment carries ``marker``."""
    found = []
    needle = f"GATEHOUSE_TEST_MARK={marker}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def wait_until(condition: Callable[[], bool], *, within: float = 10.0) -> bool:
    """Poll ``condition`` until it holds or ``within`` seconds pass; whether it held."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def sleeping(pid: int) -> bool:
    """Whether ``pid`` is in a timed sleep (not waiting on a read, which an EOF would end)."""
    try:
        return "nanosleep" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


def environment_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {key.decode(): value.decode() for key, value in pairs}


__all__ = [
    "EXAMPLES",
    "PAYROLL",
    "environment_of",
    "payroll_catalogue",
    "processes_marked",
    "wait_until",
]
