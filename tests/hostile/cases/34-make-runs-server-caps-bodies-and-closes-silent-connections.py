"""Found here (issue 20, items 1 and 5): ``make run`` serves with uvicorn alone, not inside
gunicorn; the body cap and the header timeout must hold there too. The server is started with
the Makefile's own command line (without its reloader)."""

import re
import shlex
from typing import Any

import requests

from tests.hostile.processes import HOST, PYTHON, ROOT, free_port, start_process, wait_until
from tests.hostile.raw_http import MIB, closed_by_server, connect, send_chunked

HEADER_TIMEOUT = 2  # the corpus's GATEHOUSE_HEADER_TIMEOUT (conftest.py)
SLACK = 4


def make_run_command(port: int, keep_alive: str) -> list[str]:
    """The uvicorn command of the Makefile's ``run`` target, without ``--reload*``."""
    makefile = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    found = re.search(r"\$\(PY\) -m uvicorn (editor\.asgi:application[^\n]*)", makefile)
    assert found, "the Makefile's run target does not serve editor.asgi:application with uvicorn"
    line = found.group(1).replace("$(PORT)", str(port))
    line = line.replace("$${GATEHOUSE_KEEP_ALIVE_TIMEOUT:-5}", keep_alive)
    words = shlex.split(line)
    kept: list[str] = []
    skip_value = False
    for word in words:
        if skip_value:
            skip_value = False
        elif word in ("--reload-dir", "--reload-include"):
            skip_value = True
        elif word != "--reload":
            kept.append(word)
    assert "--http" in kept, kept
    return [PYTHON, "-m", "uvicorn", *kept]


def the_development_server_holds_too(corpus: Any) -> None:
    port = free_port()
    env = corpus.env
    command = make_run_command(port, env.get("GATEHOUSE_KEEP_ALIVE_TIMEOUT", "5"))
    started = start_process(command, env, corpus.folder / "make-run.log")
    url = f"http://{HOST}:{port}"

    def healthy() -> bool:
        assert started.process.poll() is None, started.output()[-3000:]
        try:
            return requests.get(url + "/healthz", timeout=5).status_code == 200
        except requests.RequestException:
            return False

    try:
        wait_until(healthy, "make run's server answered /healthz", corpus.left())
        answer = send_chunked(url, "/v1/graphs", 64 * MIB, server_pid=lambda: started.pid)
        assert answer.status == 413, answer.text[:500]
        assert answer.sent < 32 * MIB and not answer.took_everything, answer.sent
        assert answer.temporary_files == [], answer.temporary_files
        silent = connect(url)
        assert closed_by_server(silent, HEADER_TIMEOUT + SLACK), "a silent connection was held"
        silent.close()
        assert requests.get(url + "/healthz", timeout=5).status_code == 200
    finally:
        started.stop()


CASE = {
    "found": [],
    "attack": (
        "The attacks of 29 and 31 (a 64 MiB chunked body, a silent connection) against the "
        "server `make run` starts: uvicorn alone, with the Makefile's flags"
    ),
    "bounds": {"seconds": 60},
    "steps": [{"do": "python", "call": the_development_server_holds_too}],
}
