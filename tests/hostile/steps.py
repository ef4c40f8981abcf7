"""Carrying out an attack's steps against the corpus's processes (README.md, *Steps*).

:class:`Corpus` holds what every step needs: the server's address, the signed-in clients, the
names a step saved (``graph``, ``run``, …) and the places outside the server that nothing may
reach. Every answer of every step is checked for what must never happen, whatever the step
expects: a ``500``, and the outside world's secret in a body.
"""

from __future__ import annotations

import base64
import contextlib
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from tests.hostile.cases import matches, substitute
from tests.hostile.processes import Database, Server, Workers, manage
from tests.outside_world import SECRET, CountingServer

__all__ = ["Corpus", "Users", "run_step", "sign_in"]

#: States a run rests in: parked or finished.
RESTING = {"suspended", "budget_exceeded", "needs_reconciliation", "completed", "failed",
           "abandoned"}  # fmt: skip


@dataclass(frozen=True)
class Users:
    """``mallory`` holds every role (author, operator, approver); ``nobody`` holds none."""

    password: str
    mallory_token: str
    nobody_token: str


def sign_in(url: str, username: str, password: str) -> requests.Session:
    """A browser session signed in through the sign-in page."""
    browser = requests.Session()
    login = url + "/accounts/login/"
    browser.get(login, timeout=30).raise_for_status()
    signed = browser.post(
        login,
        data={"username": username, "password": password,
              "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
        allow_redirects=False,
        timeout=30,
    )  # fmt: skip
    assert signed.status_code == 302, signed.text[:500]
    return browser


def _api(token: str) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    return session


@dataclass
class Corpus:
    """The attacked installation, and the state of the attack in progress."""

    server: Server
    workers: Workers
    database: Database
    env: dict[str, str]
    users: Users
    outside: CountingServer
    secret_file: Path
    folder: Path
    #: One line per ``dot`` process the web server started.
    dot_calls: Path
    clients: dict[str, requests.Session] = field(default_factory=dict)
    names: dict[str, Any] = field(default_factory=dict)
    deadline: float = 0.0
    #: The attack in progress ended the worker, as it expected (``worker_exit``).
    worker_exited: bool = False
    #: What attacks start for the rest of the session (``own_server.limited_server``), and
    #: what stops it when the corpus stops.
    shared: dict[str, Any] = field(default_factory=dict)
    stops: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def __post_init__(self) -> None:
        url, password = self.server.url, self.users.password
        self.clients = {
            "api": _api(self.users.mallory_token),
            "api_nobody": _api(self.users.nobody_token),
            "anonymous": requests.Session(),
            "browser": sign_in(url, "mallory", password),
            "browser_nobody": sign_in(url, "nobody", password),
        }

    def begin(self, seconds: float) -> None:
        """A new attack: its own names, and ``seconds`` to finish in."""
        self.deadline = time.monotonic() + seconds
        self.worker_exited = False
        basic = base64.b64encode(f"mallory:{self.users.password}".encode()).decode()
        self.names = {
            "outside": self.outside.url,
            "secret_file": self.secret_file.as_uri(),
            "secret": SECRET,
            "token": self.users.mallory_token,
            "password": self.users.password,
            "basic": basic,
            "folder": str(self.folder),
            "secret_path": str(self.secret_file),
        }

    def dot_started(self) -> int:
        """How many ``dot`` processes the web server has started so far."""
        return len(self.dot_calls.read_text().split())

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    # --- HTTP -------------------------------------------------------------------------------

    def request(self, method: str, path: str, *, client: str = "api", **kwargs: Any) -> Any:
        """One request as ``client``; checked for a 500 and for the secret, whatever it is."""
        session = self.clients[client]
        headers = dict(kwargs.pop("headers", None) or {})
        if method.upper() != "GET" and "csrftoken" in session.cookies:
            headers.setdefault("X-CSRFToken", session.cookies["csrftoken"])
        kwargs.setdefault("timeout", max(1.0, self.left()))
        try:
            response = session.request(method, self.server.url + path, headers=headers, **kwargs)
        except requests.Timeout:
            raise AssertionError(
                f"{method} {path} did not answer within what was left of the attack's time"
            ) from None
        assert response.status_code < 500, (
            f"{method} {path} answered {response.status_code}: {response.text[:1000]}"
        )
        assert SECRET not in response.text, f"{method} {path} answered the outside's secret"
        return response

    def wait(self, condition: Callable[[], Any], what: str) -> Any:
        """Polls ``condition`` until it is truthy, within what is left of the attack's time."""
        while True:
            value = condition()
            if value:
                return value
            assert time.monotonic() < self.deadline, (
                f"the attack's time ran out waiting until {what}"
            )
            time.sleep(0.05)

    def run_json(self, run: str | None = None) -> dict[str, Any]:
        response = self.request("GET", f"/v1/runs/{run or self.names['run']}")
        assert response.status_code == 200, response.text[:500]
        return response.json()

    def events(self, run: str | None = None) -> list[dict[str, Any]]:
        run = run or self.names["run"]
        found: list[dict[str, Any]] = []
        after = -1
        while True:
            page = self.request("GET", f"/v1/runs/{run}/events", params={"after": after}).json()
            found += page["events"]
            if page.get("next") is None:
                return found
            after = page["next"]

    # --- manage.py --------------------------------------------------------------------------

    def shell(self, code: str) -> str:
        """Runs ``code`` in ``manage.py shell`` with the installation's settings; its output."""
        done = manage("shell", "--no-imports", "-c", code, env=self.env, timeout=self.left())
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout


# --- The steps -----------------------------------------------------------------------------------


def _check(response: Any, expect: dict[str, Any], what: str) -> None:
    problems: list[str] = []
    if "status" in expect and response.status_code != expect["status"]:
        problems.append(f"status {response.status_code}, expected {expect['status']}")
    body = response.text
    for text in expect.get("contains", []):
        if text not in body:
            problems.append(f"the answer lacks {text!r}")
    for text in expect.get("excludes", []):
        if text in body:
            problems.append(f"the answer has {text!r}")
    if "json" in expect:
        try:
            problems += matches(expect["json"], response.json())
        except ValueError:
            problems.append("the answer is not JSON")
    for name, expected in expect.get("headers", {}).items():
        problems += matches(expected, response.headers.get(name), f"header {name}")
    assert not problems, f"{what}: " + "; ".join(problems) + f"\n--- the answer:\n{body[:2000]}"


def _dig(value: Any, path: str) -> Any:
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def _save(corpus: Corpus, response: Any, save: dict[str, str]) -> None:
    for name, path in save.items():
        corpus.names[name] = _dig(response.json(), path)


def _request(corpus: Corpus, step: dict[str, Any]) -> None:
    options: dict[str, Any] = {"headers": step.get("headers"), "params": step.get("params")}
    if "json" in step:
        options["data"] = json.dumps(step["json"]).encode()
        options["headers"] = {"Content-Type": "application/json", **(step.get("headers") or {})}
    elif "body" in step:
        options["data"] = step["body"].encode()
    elif "form" in step:
        options["data"] = step["form"]
    response = corpus.request(
        step.get("method", "GET"), step["path"], client=step.get("as", "api"), **options
    )
    _check(response, step.get("expect", {}), f"{step.get('method', 'GET')} {step['path']}")
    _save(corpus, response, step.get("save", {}))


def _store_graph(corpus: Corpus, step: dict[str, Any]) -> None:
    expect = step.get("expect", {"status": 201})
    response = corpus.request("POST", "/v1/graphs", data=json.dumps(step["graph"]).encode(),
                              client=step.get("as", "api"))  # fmt: skip
    _check(response, expect, "storing the graph")
    if response.status_code in (200, 201):
        corpus.names[step.get("save_as", "graph")] = response.json()["graph"]


def _store_graph_unchecked(corpus: Corpus, step: dict[str, Any]) -> None:
    """Stores a graph as an older release did, parsed but never validated, so that its run
    meets what validation refuses today."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=corpus.folder, delete=False) as file:
        json.dump(step["graph"], file)
    code = (
        "from pathlib import Path\n"
        "from editor.graph import parse_document\n"
        "from editor.services.documents.graphs import save_graph\n"
        f"text = Path({file.name!r}).read_text()\n"
        "print('GRAPH', save_graph(parse_document(text)).graph)\n"
    )
    corpus.names[step.get("save_as", "graph")] = corpus.shell(code).split("GRAPH ")[-1].strip()


def _start_run(corpus: Corpus, step: dict[str, Any]) -> None:
    body = {"graph_hash": step.get("graph", corpus.names.get("graph")), "input": step.get("input")}
    response = corpus.request("POST", "/v1/graph-runs", data=json.dumps(body).encode(),
                              headers={"Content-Type": "application/json"})  # fmt: skip
    _check(response, step.get("expect", {"status": 201}), "starting the run")
    if response.status_code == 201:
        corpus.names[step.get("save_as", "run")] = response.json()["run"]


def _wait_run(corpus: Corpus, step: dict[str, Any]) -> None:
    until = set(step.get("until", RESTING))
    run = step.get("run", corpus.names.get("run"))

    def resting() -> dict[str, Any] | None:
        found = corpus.run_json(run)
        return found if found["status"]["state"] in until else None

    found = corpus.wait(resting, f"run {run} is one of {sorted(until)}")
    problems = matches(step.get("expect", {}), found)
    assert not problems, "the run: " + "; ".join(problems) + f"\n{json.dumps(found)[:2000]}"
    for name, path in step.get("save", {}).items():
        corpus.names[name] = _dig(found, path)


def _resume(corpus: Corpus, step: dict[str, Any]) -> None:
    run = step.get("run", corpus.names.get("run"))
    data = step["raw"].encode() if "raw" in step else json.dumps(step["body"]).encode()
    response = corpus.request("POST", f"/v1/runs/{run}/resume", data=data,
                              headers={"Content-Type": "application/json"},
                              client=step.get("as", "api"))  # fmt: skip
    _check(response, step.get("expect", {"status": 200}), "resuming the run")


def _events(corpus: Corpus, step: dict[str, Any]) -> None:
    events = corpus.events(step.get("run"))
    found = {"kinds": [event["event"]["kind"] for event in events], "events": events}
    problems = matches(step.get("expect", {}), found)
    assert not problems, "the run's events: " + "; ".join(problems) + f"\n{found['kinds']}"


def _log(corpus: Corpus, step: dict[str, Any]) -> None:
    """The server's or the worker's output: ``contains`` each text, ``excludes`` each text,
    and has each text of ``once`` exactly once."""
    text = corpus.server.started.output() if step["of"] == "server" else corpus.workers.logs()
    problems = []
    if "contains" in step:
        problems += matches({"$contains": step["contains"]}, text)
    if "excludes" in step:
        problems += matches({"$excludes": step["excludes"]}, text)
    for once in step.get("once", []):
        if text.count(once) != 1:
            problems.append(f"{once!r} is there {text.count(once)} times, not once")
    assert not problems, f"the {step['of']}'s log: " + "; ".join(problems)


def _command(corpus: Corpus, step: dict[str, Any]) -> None:
    env = {k: v for k, v in corpus.env.items() if k not in step.get("unset", [])}
    env.update(step.get("env", {}))
    done = manage(*step["args"], env=env, timeout=corpus.left())
    found = {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr,
             "modes": {path: oct(Path(path).stat().st_mode & 0o777) if Path(path).exists()
                       else None for path in step.get("modes", [])}}  # fmt: skip
    problems = matches(step.get("expect", {}), found)
    assert not problems, (
        f"manage.py {' '.join(step['args'])}: " + "; ".join(problems) + (f"\n{done.stderr[-2000:]}")
    )


def _worker_exit(corpus: Corpus, step: dict[str, Any]) -> None:
    """The worker exits with ``status`` (a stuck drive: its supervisor starts a fresh one, as
    the next attack's worker is started here)."""
    worker = corpus.workers.current
    assert worker is not None
    corpus.wait(lambda: worker.process.poll() is not None, "the worker exited")
    assert worker.process.returncode == step["status"], worker.output()[-3000:]
    corpus.worker_exited = True


def _python(corpus: Corpus, step: dict[str, Any]) -> None:
    step["call"](corpus)


STEPS: dict[str, Callable[[Corpus, dict[str, Any]], None]] = {
    "request": _request,
    "store_graph": _store_graph,
    "store_graph_unchecked": _store_graph_unchecked,
    "start_run": _start_run,
    "wait_run": _wait_run,
    "resume": _resume,
    "events": _events,
    "log": _log,
    "command": _command,
    "worker_exit": _worker_exit,
    "python": _python,
}


def run_step(corpus: Corpus, step: dict[str, Any]) -> None:
    kind = step["do"]
    assert kind in STEPS, f"unknown step {kind!r} (README.md lists them: {sorted(STEPS)})"
    call = step.get("call")
    resolved = substitute({k: v for k, v in step.items() if k != "call"}, corpus.names)
    if call is not None:
        resolved["call"] = call
    STEPS[kind](corpus, resolved)
