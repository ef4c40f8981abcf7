"""Load test: authors, API clients and approvers at once against a production-like deployment.

On loopback only, bounded in time. It starts (and always stops again):

* a private PostgreSQL server (``initdb`` in a temporary directory, on ``--pg-port``), unless
  ``DATABASE_URL`` names one (``postgres://…``), which is then used as it is;
* ``gunicorn editor.asgi:application`` with ``--web-workers`` uvicorn workers (as in
  production), ``DEBUG=false``, a secret key, ``ALLOWED_HOSTS=127.0.0.1`` and
  ``GATEHOUSE_SECURE_COOKIES=false`` (plain HTTP), static files collected into the temporary
  directory;
* ``--db-workers`` run workers (``manage.py db_worker --no-reload``).

It migrates the database and creates the users with their roles (the *authors*, *operators*
and *approvers* groups), an API token for each client and approver, two agent definitions and
one draft per author. Then, for ``--duration`` seconds, threads drive a mix of traffic:

* **authors** (``--authors``), each signed in with a session and editing its own draft as the
  editor page does: ``POST /graphs/<slug>/edit/node/`` with the node form's fields, the CSRF
  token in ``X-CSRFToken`` (as the page's ``hx-headers`` gives htmx), ``HX-Request: true`` and
  the keys of the canvas and lists shown (``static/js/editor.js``), at the revision the last
  answer carried; each edit renames the draft's first gate, so the canvas is drawn again.
  With ``--authors-per-draft`` above 1 they share drafts: a stale-draft answer is then an
  expected conflict, after which the author loads the newer draft and edits on;
* **API clients** (``--clients``, authors and operators), each storing a new graph
  (``POST /v1/graphs``) and starting a run of it (``POST /v1/graph-runs``), alternately a graph
  with a gate (agent → gate → branch → tool) and one without (agent → tool);
* **approvers** (``--approvers``) reading ``GET /v1/inbox`` and resolving a gate picked at
  random from it (``POST /v1/runs/{id}/resume``). Approvers race each other: ``409
  not_suspended`` (someone resolved it first) is an expected outcome and counted apart.

After the measured phase the approvers go on resolving until every started run has ended
(bounded by ``--drain-timeout``); then every run must be ``completed``, its event log must run
``seq`` 0, 1, 2, … without a gap and match its ``event_count``, every gate must have been
resolved exactly once, every draft must be at revision 1 + the edits saved to it (no saved edit
lost), and the server must hold exactly the runs that were started. Printed per endpoint:
requests, requests/s, p50/p95/p99 latency, expected conflicts and errors (any 5xx, any
unexpected status or answer, any connection error). Exit status 0 only when there was no error
and every run completed; the server logs are printed when something failed. Also printed: the
slowest requests, and where the CPU went (this test's processes by role, and other work on the
machine). Run it with ``make load``.

With ``--streams N`` and ``--attack``, issue 20's measurement runs beside that traffic (open
streams, an attacker of the issue's list, ``/healthz`` sampled every second and every
process's memory every 5 s) and prints one table of its targets at the end; a missed target
fails the run (``load_measure.py``; ``docs/benchmarks.md``). ``--attack`` also sets what its
attacks need of every process (``attack_environment``: ``GATEHOUSE_RUN_MAX_BYTES`` from
``--run-max-mb``, and the names of ``tests/rebinding_dns.py`` for ``http_request``). Without
them nothing changes.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from load_attack_runs import ATTACK_ENVIRONMENT, ATTACKER_USERS
from load_image import image_environment
from load_measure import Measurement, RunCounts, recent_runs
from load_summary import percentile

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
PASSWORD = "load-test-password-not-secret"
REQUEST_TIMEOUT = 60.0
START_TIMEOUT = 60.0
PG_BIN_CANDIDATES = ("/usr/lib/postgresql/15/bin",)
#: The keys of the pieces the editor page shows, posted with each edit (static/js/editor.js).
SHOWN_KEYS = {
    "shown_canvas": re.compile(r'<figure class="canvas" id="canvas" data-canvas data-key="(\w+)"'),
    "shown_structure": re.compile(r'<ul class="node-list" id="node-list" data-key="(\w+)"'),
}
CSRF_HEADER = re.compile(r"hx-headers='\{\"X-CSRFToken\": \"([^\"]+)\"\}'")
REVISION = re.compile(r'<input type="hidden" name="revision" value="(\d+)" class="draft-revision"')
STALE = re.compile(r'<section id="stale" class="stale" role="alert"')
ENDED = {"completed", "failed", "abandoned"}

APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {
        "draft": {"type": "string", "maxLength": 20000, "title": "Draft"},
        "approved": {"type": "boolean", "title": "Approve"},
        "comment": {"type": "string"},
    },
    "required": ["draft", "approved"],
}
WRITER = {
    "name": "load-writer",
    "model": "scripted",
    "prompt": 'Write a short announcement of the subject you are given, as {"draft": …}.',
    "options": {"replies": [json.dumps({"draft": "A short announcement, for approval."})]},
}
SUMMARIZER = {
    "name": "load-summarizer",
    "model": "echo",
    "prompt": "Summarise the subject you are given in one line.",
}


# --- Setting the database up (run in a child process with the server's environment) ----------


def setup_data(spec: dict[str, Any]) -> dict[str, Any]:
    """Users with roles, tokens, agent definitions and one draft per author; their names."""
    import django

    django.setup()
    from django.contrib.auth.models import Group, User

    from editor.services import agents, documents
    from editor.services.tokens import create_token

    sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
    from graph_core import build_document

    from editor.models import Run

    if Run.objects.exists() or User.objects.exists():
        raise SystemExit("the load test needs an empty database: this one has users or runs")
    groups = {group.name: group for group in Group.objects.all()}

    def user(name: str, *roles: str) -> Any:
        created = User.objects.create_user(name, password=PASSWORD)
        created.groups.add(*(groups[role] for role in roles))
        return created

    authors = [user(f"author-{i}", "authors") for i in range(spec["authors"])]
    clients = [user(f"client-{i}", "authors", "operators") for i in range(spec["clients"])]
    approvers = [user(f"approver-{i}", "approvers") for i in range(spec["approvers"])]
    owner = clients[0] if clients else authors[0]
    writer = agents.create_agent(owner, json.dumps(WRITER)).agent
    summarizer = agents.create_agent(owner, json.dumps(SUMMARIZER)).agent
    document = build_document(spec["draft_nodes"])
    gate = next(node["payload"]["id"] for node in document["nodes"] if node["kind"] == "gate")
    text = json.dumps(document, indent=2)
    drafts = []
    for index, author in enumerate(authors):
        slug = f"load-draft-{index // spec['authors_per_draft']}"
        if index % spec["authors_per_draft"] == 0:
            documents.create_document(author, title=slug, slug=slug, text=text)
        drafts.append({"user": author.username, "slug": slug, "gate": gate})
    reader = user("reader")
    made = {
        "drafts": drafts,
        "clients": [create_token(client, "load test")[1] for client in clients],
        "approvers": [create_token(approver, "load test")[1] for approver in approvers],
        # The checks at the end read runs and drafts as a user without a role.
        "reader": create_token(reader, "load test checks")[1],
        "writer": writer,
        "summarizer": summarizer,
    }
    if spec.get("streams") or spec.get("attack"):
        made |= setup_issue20(spec, groups, reader, text)
    return made


def setup_issue20(spec: dict[str, Any], groups: dict[str, Any], reader: Any, text: str) -> Any:
    """The users behind the open streams (two streams each, a session and a token), and the
    attacker's: an author with a document, a user for ``/live/`` floods, one who guesses
    passwords, the reader's session, a large completed run to read, a user with small limits
    of its own for the floods (``hoarder``, with a document to rename), one whose tokens are
    revoked mid-stream, and a run whose log lost its end."""
    from django.contrib.auth.models import User
    from django.test import Client
    from load_attack_runs import HOARDER_LIMITS
    from load_large_run import build_large_run, build_pruned_run

    from editor.models import UserUsage
    from editor.services import documents
    from editor.services.tokens import create_token

    def session_of(person: Any) -> str:
        # Signed in without a password check: hashing a password per user would take minutes.
        browser = Client()
        browser.force_login(person, backend="django.contrib.auth.backends.ModelBackend")
        return browser.cookies["sessionid"].value

    def quick_user(name: str, *roles: str) -> Any:
        created = User(username=name)
        created.set_unusable_password()
        created.save()
        created.groups.add(*(groups[role] for role in roles))
        return created

    viewers = []
    for index in range(-(-spec.get("streams", 0) // 2)):
        person = quick_user(f"viewer-{index}", "approvers")
        viewers.append({"session": session_of(person), "token": create_token(person, "streams")[1]})
    made: dict[str, Any] = {"viewers": viewers}
    if spec.get("attack"):
        mallory = quick_user("mallory", "authors", "operators")
        slug = "mallory-draft"
        documents.create_document(mallory, title=slug, slug=slug, text=text)
        large = build_large_run(mallory, spec["large_run_mb"])
        hoarder = quick_user("hoarder", "authors", "operators")
        UserUsage.objects.update_or_create(user=hoarder, defaults={"limits": HOARDER_LIMITS})
        documents.create_document(hoarder, title="Hoarded", slug="hoarded", text=text)
        made["attacker"] = {
            "author_token": create_token(mallory, "attacks")[1],
            "author_slug": slug,
            "flooder_session": session_of(quick_user("flooder")),
            "guesser_session": session_of(quick_user("guesser")),
            "reader_token": create_token(reader, "attacks")[1],
            "reader_session": session_of(reader),
            "large_run": large["run"],
            "large_run_events": large["events"],
            "large_run_bytes": large["bytes"],
            "hoarder_token": create_token(hoarder, "attacks")[1],
            "hoarder_session": session_of(hoarder),
            "hoarder_slug": "hoarded",
            "revoker_session": session_of(quick_user("revoker")),
            "pruned_run": build_pruned_run(mallory),
        }
    return made


# --- Processes -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        return probe.connect_ex((HOST, port)) == 0


def pg_bin(explicit: str | None) -> Path:
    candidates = [explicit] if explicit else []
    found = shutil.which("pg_config")
    if found:
        result = subprocess.run([found, "--bindir"], capture_output=True, text=True, check=False)
        candidates.append(result.stdout.strip())
    candidates += PG_BIN_CANDIDATES
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").exists():
            return Path(candidate)
    sys.exit("PostgreSQL's initdb was not found: pass --pg-bin DIR, or set DATABASE_URL")


@contextlib.contextmanager
def private_postgres(directory: Path, port: int, bindir: Path) -> Iterator[str]:
    """A PostgreSQL server of our own on ``HOST:port`` in ``directory``; its URL. Stopped and
    its files removed on exit. As root, the server runs as the ``postgres`` user."""
    if port_in_use(port):
        sys.exit(f"port {port} is in use: pass another --pg-port")
    data = directory / "pgdata"
    as_user: list[str] = []
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
        directory.chmod(0o755)
        data.mkdir()
        shutil.chown(data, "postgres", "postgres")
    log = directory / "postgres.log"
    log.touch()
    if as_user:
        shutil.chown(log, "postgres", "postgres")

    def pg(*args: str, timeout: float = 120) -> None:
        result = subprocess.run(
            [*as_user, *args], cwd="/", capture_output=True, text=True, timeout=timeout
        )
        if result.returncode != 0:
            raise RuntimeError(f"{Path(args[0]).name} failed:\n{result.stdout}{result.stderr}")

    pg(
        str(bindir / "initdb"),
        "-D",
        str(data),
        "-U",
        "gatehouse",
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-sync",
        "--no-instructions",
    )
    # Lock waits longer than deadlock_timeout (1 s) are logged: the report counts them.
    options = (
        f"-p {port} -c listen_addresses={HOST} -c unix_socket_directories={data} "
        "-c log_lock_waits=on"
    )
    started = False
    try:
        pg(
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(log),
            "-w",
            "-t",
            "60",
            "start",
        )
        started = True
        pg(str(bindir / "createdb"), "-h", HOST, "-p", str(port), "-U", "gatehouse", "gatehouse")
        yield f"postgres://gatehouse@{HOST}:{port}/gatehouse"
    finally:
        if started:
            with contextlib.suppress(Exception):
                pg(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop", timeout=60)
        shutil.rmtree(data, ignore_errors=True)


def environment(directory: Path, database_url: str) -> dict[str, str]:
    """The server's environment: production-like (the image's memory settings), plain HTTP on
    loopback, static files collected into ``directory`` (a settings module that changes only
    ``STATIC_ROOT``)."""
    settings_dir = directory / "settings"
    settings_dir.mkdir(exist_ok=True)
    (settings_dir / "load_settings.py").write_text(
        "from editor.settings import *  # noqa: F403\n"
        f"STATIC_ROOT = {str(directory / 'static')!r}\n"
    )
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("DATABASE_URL_FILE", "SECRET_KEY_FILE", "DJANGO_SETTINGS_MODULE")
    }
    env.update(
        DEBUG="false",
        SECRET_KEY="load-test-only-secret-key-" + "x" * 40,
        ALLOWED_HOSTS=HOST,
        GATEHOUSE_SECURE_COOKIES="false",
        GATEHOUSE_VAR_DIR=str(directory / "var"),
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="load_settings",
        PYTHONPATH=os.pathsep.join([str(settings_dir), str(ROOT)]),
    )
    env.update(image_environment())  # as the image runs its processes (MALLOC_ARENA_MAX)
    return env


def attack_environment(run_max_mb: int) -> dict[str, str]:
    """What the attacker needs of every process: the names of ``tests/rebinding_dns.py``
    resolving as its DNS answers them (and allowed to ``http_request``), and a run byte limit
    that ends each echo chain after ``run_max_mb`` MiB (each turn of that attack stores that
    much; the default of 256 MiB would fill the disk over a long run)."""
    return {**ATTACK_ENVIRONMENT, "GATEHOUSE_RUN_MAX_BYTES": str(run_max_mb * 1024 * 1024)}


def manage(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {args[0]} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


@dataclass
class Services:
    processes: list[tuple[str, subprocess.Popen[bytes], Path]] = field(default_factory=list)

    def start(self, name: str, command: list[str], env: dict[str, str], log: Path) -> None:
        with log.open("wb") as output:
            process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
            )
        self.processes.append((name, process, log))

    def check_alive(self) -> list[str]:
        return [
            f"{name} exited with {process.returncode}"
            for name, process, _ in self.processes
            if process.poll() is not None
        ]

    def log_problems(self) -> list[str]:
        """Tracebacks and errors the servers logged (a client may never see them), each
        process's first with the 40 lines after it (its traceback: the logs go with the run's
        temporary folder)."""
        found = []
        for name, _, log in self.processes:
            text = log.read_text(errors="replace") if log.exists() else ""
            lines = text.splitlines()
            marked = [
                number
                for number, line in enumerate(lines)
                if any(mark in line for mark in ("Traceback", "ERROR", "CRITICAL"))
            ]
            if marked:
                first = marked[0]
                after = "\n    ".join(line[:300] for line in lines[first + 1 : first + 41])
                found.append(
                    f"{name} logged {len(marked)} errors, the first: {lines[first][:200]}"
                    f"\n    {after}"
                )
        return found

    def stop(self) -> None:
        for _, process, _ in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for _, process, _ in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_until_serving(services: Services, port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if dead := services.check_alive():
            raise RuntimeError("; ".join(dead))
        with contextlib.suppress(OSError, http.client.HTTPException):
            connection = http.client.HTTPConnection(HOST, port, timeout=5)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer /healthz within {START_TIMEOUT:.0f} s")


# --- HTTP and the tally --------------------------------------------------------------------


@dataclass
class Sample:
    endpoint: str
    started: float
    seconds: float
    outcome: str  # "ok", "conflict" (expected) or "error"
    detail: str = ""


class Tally:
    """Every request's endpoint, start time, latency and outcome, from every thread."""

    def __init__(self) -> None:
        self.samples: list[Sample] = []
        self.lock = threading.Lock()

    def add(self, sample: Sample) -> None:
        with self.lock:
            self.samples.append(sample)

    def errors(self) -> list[Sample]:
        with self.lock:
            return [sample for sample in self.samples if sample.outcome == "error"]


@dataclass
class Answer:
    status: int
    body: bytes
    headers: http.client.HTTPMessage | None

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class Caller:
    """One HTTP caller: a session (cookies) or a bearer token; records each request."""

    def __init__(self, port: int, tally: Tally, token: str | None = None) -> None:
        self.port = port
        self.tally = tally
        self.token = token
        self.cookies: dict[str, str] = {}

    def request(
        self,
        endpoint: str,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        expect: tuple[int, ...] = (200,),
        conflict: tuple[int, ...] = (),
        judge: Any = None,
    ) -> Answer | None:
        """The answer, or ``None`` after an error (already recorded). ``judge(answer)`` may
        classify an answer with an expected status: ``("ok" | "conflict" | "error", detail)``."""
        sent = {"Host": f"{HOST}:{self.port}", **(headers or {})}
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        started = time.monotonic()
        try:
            connection = http.client.HTTPConnection(HOST, self.port, timeout=REQUEST_TIMEOUT)
            try:
                connection.request(method, path, body=body, headers=sent)
                response = connection.getresponse()
                answer = Answer(response.status, response.read(), response.headers)
            finally:
                connection.close()
        except (OSError, http.client.HTTPException) as error:
            self.tally.add(
                Sample(endpoint, started, time.monotonic() - started, "error", repr(error))
            )
            return None
        elapsed = time.monotonic() - started
        for header in answer.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        if answer.status in conflict:
            self.tally.add(Sample(endpoint, started, elapsed, "conflict"))
            return answer
        if answer.status not in expect:
            detail = f"{answer.status} {answer.text[:300]!r}"
            self.tally.add(Sample(endpoint, started, elapsed, "error", detail))
            return None
        outcome, detail = judge(answer) if judge is not None else ("ok", "")
        self.tally.add(Sample(endpoint, started, elapsed, outcome, detail))
        return None if outcome == "error" else answer

    def api(self, endpoint: str, method: str, path: str, value: Any = None, **kwargs: Any) -> Any:
        body = None if value is None else json.dumps(value).encode()
        headers = {"Content-Type": "application/json"} if body is not None else {}
        return self.request(endpoint, method, path, body=body, headers=headers, **kwargs)

    def fail(self, endpoint: str, detail: str) -> None:
        """An answer with the expected status but the wrong content: an error too."""
        now = time.monotonic()
        self.tally.add(Sample(endpoint + " (answer)", now, 0.0, "error", detail))


class FormFields(HTMLParser):
    """The fields a form posts, as a browser posts them: inputs (a checkbox or radio only when
    checked), text areas, and selects (the selected option, else the first) inside
    ``<form id=form_id>``."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.fields: dict[str, str] = {}
        self.textarea: str | None = None
        self.select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form" and values.get("id") == self.form_id:
            self.inside = True
        elif not self.inside or (tag != "option" and "name" not in values):
            return
        elif tag == "input":
            kind = values.get("type")
            if kind in ("checkbox", "radio"):
                if "checked" in values:
                    self.fields[values["name"]] = values.get("value", "on")
            elif kind not in ("submit", "button"):
                self.fields[values["name"]] = values.get("value", "")
        elif tag == "textarea":
            self.textarea = values["name"]
            self.fields[self.textarea] = ""
        elif tag == "select":
            self.select = values["name"]
        elif (
            tag == "option"
            and self.select is not None
            and ("selected" in values or self.select not in self.fields)
        ):
            self.fields[self.select] = values.get("value", "")

    def handle_data(self, data: str) -> None:
        if self.textarea is not None:
            self.fields[self.textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self.textarea = None
        elif tag == "select":
            self.select = None
        elif tag == "form":
            self.inside = False


def form_fields(html: str, form_id: str) -> dict[str, str]:
    parser = FormFields(form_id)
    parser.feed(html)
    fields = parser.fields
    # A textarea's first newline is not part of its value (HTML parsing rules).
    return {name: value.removeprefix("\n") for name, value in fields.items()}


# --- The traffic ---------------------------------------------------------------------------

EDIT = "POST /graphs/<slug>/edit/node/"
POST_GRAPH = "POST /v1/graphs"
START_RUN = "POST /v1/graph-runs"
INBOX = "GET /v1/inbox"
RESUME = "POST /v1/runs/{id}/resume"
RELOAD = "GET /graphs/<slug>/?node=… (stale)"


@dataclass
class Shared:
    port: int
    tally: Tally
    stop: threading.Event  # the measured phase is over: authors and clients stop
    drained: threading.Event  # every run has ended: approvers stop
    runs: list[tuple[str, bool]] = field(default_factory=list)  # (run id, gated)
    lock: threading.Lock = field(default_factory=threading.Lock)
    shared_drafts: bool = False  # authors share drafts: a stale answer is expected
    edits_saved: dict[str, int] = field(default_factory=dict)  # slug -> edits saved
    last_edit: dict[str, tuple[int, str]] = field(default_factory=dict)  # slug -> (rev, name)
    ready: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    go: threading.Event = field(default_factory=threading.Event)  # the measured phase begins
    database_log: Path | None = None
    database_pid: int | None = None
    setup_errors: list[str] = field(default_factory=list)
    extra_runs: set[str] = field(default_factory=set)
    #: Who the attacker starts runs as: its runs are counted by the attacker, not here.
    attacker_users: tuple[str, ...] = ()
    logs: list[Path] = field(default_factory=list)  # made by the set-up, not by the clients
    run_counts: RunCounts = field(default_factory=RunCounts)


def sign_in(shared: Shared, username: str) -> Caller | None:
    caller = Caller(shared.port, shared.tally)
    page = caller.request("GET /accounts/login/", "GET", "/accounts/login/")
    if page is None:
        return None
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    if found is None:
        shared.setup_errors.append(f"{username}: the sign-in form has no CSRF token")
        return None
    token = found.group(1)
    body = urlencode(
        {"csrfmiddlewaretoken": token, "username": username, "password": PASSWORD, "next": "/"}
    ).encode()
    answer = caller.request(
        "POST /accounts/login/",
        "POST",
        "/accounts/login/",
        body=body,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": f"http://{HOST}:{shared.port}",
            "Referer": f"http://{HOST}:{shared.port}/accounts/login/",
        },
        expect=(302,),
    )
    if answer is None or "sessionid" not in caller.cookies:
        shared.setup_errors.append(f"{username} could not sign in")
        return None
    return caller


def open_editor(shared: Shared, username: str, slug: str, gate_id: str) -> dict[str, Any] | None:
    """Signs in and opens the draft's first gate in the editor, as a person does; what the
    node form posts, or ``None`` (recorded) when that failed."""
    caller = sign_in(shared, username)
    if caller is None:
        return None
    page_url = f"/graphs/{slug}/?node={quote(gate_id)}"
    page = caller.request("GET /graphs/<slug>/?node=…", "GET", page_url)
    if page is None:
        return None
    html = page.text
    csrf = CSRF_HEADER.search(html)
    fields = form_fields(html, "node-form")
    if csrf is None or "revision" not in fields or "approval_schema-mode" not in fields:
        shared.setup_errors.append(f"{username}: the node form of {gate_id} was not found")
        return None
    shown = {
        name: m.group(1) for name, pattern in SHOWN_KEYS.items() if (m := pattern.search(html))
    }
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-CSRFToken": csrf.group(1),
        "HX-Request": "true",
        "HX-Current-URL": f"http://{HOST}:{shared.port}{page_url}",
        "HX-Trigger": "node-form",
        "HX-Target": "node-form",
        "Origin": f"http://{HOST}:{shared.port}",
        "Referer": f"http://{HOST}:{shared.port}{page_url}",
    }
    return {"caller": caller, "fields": fields, "shown": shown, "headers": headers}


def author(shared: Shared, username: str, slug: str, gate_id: str, think: float) -> None:
    """Signs in and opens the draft's first gate (before the measured phase), then renames the
    gate again and again, each time at the revision the last answer carried."""
    try:
        opened = open_editor(shared, username, slug, gate_id)
    finally:
        shared.ready.release()
    if opened is None:
        return
    caller, fields, shown, headers = (
        opened["caller"],
        opened["fields"],
        opened["shown"],
        opened["headers"],
    )
    shared.go.wait()
    stale = threading.Event()
    edit = 0
    while not shared.stop.is_set():
        edit += 1
        name = f"Review {edit} by {username}"
        posted = {**fields, "name": name, **shown}
        at = int(fields["revision"])

        def judge(answer: Answer, name: str = name, at: int = at) -> tuple[str, str]:
            text = answer.text
            revision = REVISION.search(text)
            if revision is not None:  # a stale answer carries the newer revision too
                fields["revision"] = revision.group(1)
            for key, pattern in SHOWN_KEYS.items():
                if match := pattern.search(text):
                    shown[key] = match.group(1)
            if STALE.search(text):
                if shared.shared_drafts:  # another author saved first: load the newer draft
                    stale.set()
                    return "conflict", ""
                return "error", f"{username}: stale at revision {at}, on a draft of its own"
            if revision is None or int(revision.group(1)) != at + 1:
                return "error", f"{username}: no revision {at + 1} in the answer"
            if name not in text or 'id="problems"' not in text:
                return "error", f"{username}: the answer lacks the new name or the errors"
            with shared.lock:
                shared.edits_saved[slug] = shared.edits_saved.get(slug, 0) + 1
                if at + 1 > shared.last_edit.get(slug, (0, ""))[0]:
                    shared.last_edit[slug] = (at + 1, name)
            return "ok", ""

        stale.clear()
        caller.request(
            EDIT,
            "POST",
            f"/graphs/{slug}/edit/node/",
            body=urlencode(posted).encode(),
            headers=headers,
            judge=judge,
        )
        if stale.is_set():  # as a person does: load the newer draft, then edit on
            page = caller.request(RELOAD, "GET", f"/graphs/{slug}/?node={quote(gate_id)}")
            if page is not None:
                fields.update(form_fields(page.text, "node-form"))
                shown.update(
                    {key: m.group(1) for key, p in SHOWN_KEYS.items() if (m := p.search(page.text))}
                )
        if think:
            shared.stop.wait(think)


def graph_for(
    client: int, number: int, gated: bool, writer: str, summarizer: str
) -> dict[str, Any]:
    """A new graph each time (its display names carry the client and the number)."""
    label = f"client {client} #{number}"
    if gated:
        return {
            "schema_version": 1,
            "nodes": [
                {"kind": "agent", "payload": {"id": "write", "agent_hash": writer}},
                {
                    "kind": "gate",
                    "payload": {
                        "id": "review",
                        "name": f"Review ({label})",
                        "prompt": "Publish this draft?",
                        "approval_schema": APPROVAL_SCHEMA,
                    },
                },
                {
                    "kind": "branch",
                    "payload": {
                        "id": "decide",
                        "cases": [
                            {
                                "name": "approved",
                                "when": {"kind": "expression", "value": "approved == true"},
                            },
                            {
                                "name": "rejected",
                                "when": {"kind": "expression", "value": "!(approved == true)"},
                            },
                        ],
                    },
                },
                {
                    "kind": "tool",
                    "payload": {"id": "publish", "tool": "echo", "input": {"text": "draft"}},
                },
                {"kind": "tool", "payload": {"id": "archive", "tool": "echo"}},
            ],
            "edges": [
                {"from": "write", "to": "review"},
                {"from": "review", "to": "decide"},
                {"from": "decide", "to": "publish", "label": "approved"},
                {"from": "decide", "to": "archive", "label": "rejected"},
            ],
        }
    return {
        "schema_version": 1,
        "nodes": [
            {
                "kind": "agent",
                "payload": {
                    "id": "summarise",
                    "agent_hash": summarizer,
                    "name": f"Summary ({label})",
                },
            },
            {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
        ],
        "edges": [{"from": "summarise", "to": "publish"}],
    }


def client(shared: Shared, index: int, token: str, agents: dict[str, str], think: float) -> None:
    """Stores a new graph and starts a run of it, alternately with a gate and without."""
    caller = Caller(shared.port, shared.tally, token)
    number = 0
    while not shared.stop.is_set():
        number += 1
        gated = number % 2 == 1
        graph = graph_for(index, number, gated, agents["writer"], agents["summarizer"])
        stored = caller.api(POST_GRAPH, "POST", "/v1/graphs", graph, expect=(201,))
        if stored is None:
            continue
        graph_hash = stored.json().get("graph", "")
        if not stored.json().get("created"):
            caller.fail(POST_GRAPH, f"{graph_hash} was not new")
        started = caller.api(
            START_RUN,
            "POST",
            "/v1/graph-runs",
            {
                "graph_hash": graph_hash,
                "input": {"subject": f"release {index}.{number}"},
                "labels": {"load": f"client-{index}"},
            },
            expect=(201,),
        )
        if started is not None:
            with shared.lock:
                shared.runs.append((started.json()["run"], gated))
        if think:
            shared.stop.wait(think)


def approver(shared: Shared, token: str, seed: int, idle: float) -> None:
    """Resolves gates from the inbox until every run has ended; races the others."""
    caller = Caller(shared.port, shared.tally, token)
    chance = random.Random(seed)
    while not shared.drained.is_set():
        answer = caller.api(INBOX, "GET", "/v1/inbox?limit=50")
        items = (
            [item for item in answer.json()["items"] if item["kind"] == "gate"] if answer else []
        )
        if not items:
            shared.drained.wait(idle)
            continue
        item = chance.choice(items)
        value = item.get("value")
        draft = value.get("draft") if isinstance(value, dict) else None
        decision = {
            "input": {"draft": str(draft or ""), "approved": chance.random() < 0.8},
            "comment": "load test",
            "node": item["node"],
        }
        if item.get("scope"):
            decision["scope"] = item["scope"]
        resumed = caller.api(
            RESUME,
            "POST",
            f"/v1/runs/{item['run']}/resume",
            decision,
            expect=(202,),
            conflict=(409,),
        )
        if resumed is not None and resumed.status == 409:
            code = resumed.json().get("error", {}).get("code")
            if code != "not_suspended":
                caller.fail(RESUME, f"409 {code}, not not_suspended")


# --- Checks and the report -----------------------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "


def process_tree(roots: list[int]) -> set[int]:
    """``roots`` and all their descendants now (Linux ``/proc``; empty elsewhere)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in Path("/proc").glob("[0-9]*"):
        fields = _stat_fields(int(entry.name))
        if fields is not None:
            children[int(fields[1])].append(int(entry.name))
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo += children.get(pid, [])
    return found


def cpu_seconds(pids: set[int]) -> dict[int, float]:
    """CPU seconds used by each process so far, with its reaped children (``dot``)."""
    tick = os.sysconf("SC_CLK_TCK")
    used = {}
    for pid in pids:
        fields = _stat_fields(pid)
        if fields is not None:
            used[pid] = sum(int(value) for value in fields[11:15]) / tick
    return used


def machine_busy() -> tuple[float, float]:
    """Seconds of busy and of all CPU time on this machine so far (``/proc/stat``)."""
    try:
        first = Path("/proc/stat").read_text().split("\n")[0]
    except OSError:  # not Linux: no figures
        return 0.0, 0.0
    values = [int(value) for value in first.split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    total = sum(values[:8])
    return (total - values[3] - values[4]) / tick, total / tick


class CpuMeter:
    """Where the CPU went between two moments: this test's processes by role, and the rest."""

    def __init__(self, roles: dict[str, tuple[list[int], bool]]) -> None:
        self.roles = roles  # role -> (its processes, whether their descendants count too)

    def snapshot(self) -> tuple[dict[str, set[int]], dict[int, float], tuple[float, float]]:
        trees = {
            role: process_tree(roots) if descendants else set(roots)
            for role, (roots, descendants) in self.roles.items()
        }
        everything = set().union(*trees.values()) if trees else set()
        return trees, cpu_seconds(everything), machine_busy()

    def describe(self, before: Any, after: Any) -> tuple[float, str]:
        trees, start, (busy0, total0) = before
        _, end, (busy1, total1) = after
        parts = []
        ours = 0.0
        for role, pids in trees.items():
            used = sum(end.get(pid, 0.0) - start.get(pid, 0.0) for pid in pids if pid in end)
            ours += used
            parts.append(f"{role} {used:.1f}")
        busy = busy1 - busy0
        return ours, (
            f"CPU in the measured phase: machine {busy:.1f} of {total1 - total0:.1f} "
            f"CPU-seconds busy; this test {ours:.1f} ({', '.join(parts)}); "
            f"other work on the machine {max(busy - ours, 0.0):.1f}"
        )


def slowest(samples: list[Sample], start: float, count: int = 5) -> None:
    """The slowest requests, and when they started: a cluster in time is a stall."""
    ordered = sorted(samples, key=lambda sample: sample.seconds, reverse=True)[:count]
    shown = ", ".join(
        f"{s.endpoint} {s.seconds * 1000:.0f} ms at +{s.started - start:.1f} s" for s in ordered
    )
    print(f"  slowest: {shown}")


def database_findings(log: Path | None) -> list[str]:
    """Prints what the private server logged under the load; deadlocks are problems."""
    if log is None or not log.exists():
        return []
    lines = log.read_text(errors="replace").splitlines()
    waits = [line for line in lines if "still waiting for" in line]
    errors = [line for line in lines if " ERROR: " in line]
    deadlocks = [line for line in lines if "deadlock detected" in line]
    print(
        f"database log: {len(errors)} statement errors, {len(waits)} lock waits over 1 s, "
        f"{len(deadlocks)} deadlocks"
    )
    for line in (errors + waits)[:10]:
        print(f"  {line[:240]}")
    return [f"PostgreSQL: {line[:240]}" for line in deadlocks]


def report(samples: list[Sample], seconds: float | None, title: str) -> None:
    by_endpoint: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_endpoint[sample.endpoint].append(sample)
    print(title)
    print(
        f"  {'endpoint':<36} {'requests':>8} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'p99 ms':>8} {'max ms':>8} {'conflicts':>9} {'errors':>6}"
    )
    for endpoint in sorted(by_endpoint):
        group = by_endpoint[endpoint]
        latencies = sorted(s.seconds * 1000 for s in group)
        conflicts = sum(1 for s in group if s.outcome == "conflict")
        errors = sum(1 for s in group if s.outcome == "error")
        print(
            f"  {endpoint:<36} {len(group):>8} {rate(len(group), seconds):>7} "
            f"{percentile(latencies, 0.50):>8.1f} {percentile(latencies, 0.95):>8.1f} "
            f"{percentile(latencies, 0.99):>8.1f} {latencies[-1]:>8.1f} {conflicts:>9} {errors:>6}"
        )
    print(f"  {'all':<36} {len(samples):>8} {rate(len(samples), seconds):>7}")


def rate(count: int, seconds: float | None) -> str:
    return "-" if seconds is None else f"{count / seconds:.1f}"


def list_runs(caller: Caller, person: str | None = None) -> dict[str, dict[str, Any]] | None:
    """Every run the server holds (``GET /v1/runs``, all pages; those ``person`` started, when
    given), by id; ``None`` on an error."""
    runs: dict[str, dict[str, Any]] = {}
    cursor: str | None = None
    while True:
        path = "/v1/runs?limit=200" + (f"&person={quote(person)}" if person else "")
        path += f"&cursor={quote(cursor)}" if cursor else ""
        answer = caller.api("GET /v1/runs", "GET", path)
        if answer is None:
            return None
        page = answer.json()
        runs.update((run["run"], run) for run in page["runs"])
        cursor = page["next"]
        if not cursor:
            return runs


def check_runs(shared: Shared, token: str, drain_timeout: float) -> list[str]:
    """Waits (at most ``drain_timeout``) for every started run to end; then every run must be
    completed, with a gap-free event log, every draft must hold every saved edit, and the
    server must hold exactly the runs that were started."""
    caller = Caller(shared.port, Tally(), token)
    began = time.monotonic()
    started = {run for run, _ in shared.runs}
    listed: dict[str, dict[str, Any]] | None = {}
    pending = set(started)
    while time.monotonic() < began + drain_timeout:
        listed = list_runs(caller)
        if listed is not None:
            pending = {
                run
                for run in started
                if run not in listed or listed[run]["status"]["state"] not in ENDED
            }
            if not pending:
                break
        time.sleep(0.5)
    waited = time.monotonic() - began
    shared.drained.set()
    listed = listed or {}
    problems = [f"run {run} did not end within the drain time" for run in sorted(pending)]
    ended = {run: listed[run] for run in sorted(started - pending) if run in listed}
    problems += [
        f"run {run} ended {info['status']['state']}, not completed"
        for run, info in ended.items()
        if info["status"]["state"] != "completed"
    ]
    for run, info in ended.items():
        seqs: list[int] = []
        after: int | None = None
        while True:
            path = f"/v1/runs/{run}/events" + (f"?after={after}" if after is not None else "")
            answer = caller.api("GET /v1/runs/{id}/events", "GET", path)
            if answer is None:
                problems.append(f"run {run}: its events could not be read")
                break
            page = answer.json()
            seqs += [event["seq"] for event in page["events"]]
            if page["next"] is None:
                break
            after = page["next"]
        count = info["event_count"]
        if seqs != list(range(len(seqs))) or len(seqs) != count:
            problems.append(f"run {run}: event seqs {seqs[:5]}… ({len(seqs)}), event_count {count}")
    # The server holds exactly the runs that were started: none lost, none extra.
    shared.run_counts = RunCounts(
        started=len(started),
        completed=sum(1 for info in ended.values() if info["status"]["state"] == "completed"),
        lost=len(started - set(listed)),
        stuck=len(pending & set(listed)),
    )
    # The attacker's runs (those whose start it gave up waiting for included) are its own.
    for person in shared.attacker_users:
        shared.extra_runs |= set(list_runs(caller, person) or {})
    listed = {run: info for run, info in listed.items() if run not in shared.extra_runs}
    if set(listed) != started:
        problems.append(
            f"the server lists {len(listed)} runs, {len(started)} were started: "
            f"missing {sorted(started - set(listed))[:5]}, "
            f"extra {sorted(set(listed) - started)[:5]}"
        )
    # No saved edit was lost: each draft is at revision 1 + its saved edits, with the last name.
    for slug, saved in sorted(shared.edits_saved.items()):
        answer = caller.api("GET /v1/documents/{slug}/draft", "GET", f"/v1/documents/{slug}/draft")
        if answer is None:
            problems.append(f"draft {slug} could not be read")
            continue
        draft = answer.json()
        revision, name = shared.last_edit[slug]
        if draft["revision"] != 1 + saved or revision != 1 + saved or name not in draft["text"]:
            problems.append(
                f"draft {slug}: revision {draft['revision']}, {saved} edits saved, the last "
                f"({name!r}, revision {revision}) {'in' if name in draft['text'] else 'not in'} it"
            )
    problems += [f"check: {s.endpoint}: {s.detail}" for s in caller.tally.errors()]
    completed = sum(1 for info in ended.values() if info["status"]["state"] == "completed")
    print(
        f"runs: {len(started)} started ({sum(1 for _, g in shared.runs if g)} with a gate), "
        f"{completed} completed, {len(pending)} not ended ({waited:.1f} s after the measured "
        f"phase); event logs read: {len(ended)}; drafts read: {len(shared.edits_saved)}"
    )
    return problems


# --- Main ----------------------------------------------------------------------------------


class OverallTimeout(Exception):
    pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=60.0, help="measured seconds (60)")
    parser.add_argument("--authors", type=int, default=4, help="authors editing drafts (4)")
    parser.add_argument("--clients", type=int, default=4, help="API clients starting runs (4)")
    parser.add_argument("--approvers", type=int, default=3, help="approvers resolving gates (3)")
    parser.add_argument("--web-workers", type=int, default=3, help="gunicorn workers (3)")
    parser.add_argument("--db-workers", type=int, default=2, help="db_worker processes (2)")
    parser.add_argument("--draft-nodes", type=int, default=20, help="nodes per author draft (20)")
    parser.add_argument(
        "--authors-per-draft",
        type=int,
        default=1,
        help="authors editing each draft (1); above 1, stale answers are expected conflicts",
    )
    parser.add_argument("--think", type=float, default=0.0, help="pause after each edit/run (0)")
    parser.add_argument("--drain-timeout", type=float, default=180.0, help="seconds (180)")
    parser.add_argument(
        "--timeout",
        type=float,
        help="hard overall limit (900 s, or longer for a long --duration)",
    )
    parser.add_argument("--pg-port", type=int, default=55442, help="private PostgreSQL port")
    parser.add_argument("--pg-bin", help="PostgreSQL's bin directory (found when not given)")
    parser.add_argument("--port", type=int, default=0, help="gunicorn's port (a free one)")
    # Issue 20's measurement (tests/load/load_measure.py): off unless asked for.
    parser.add_argument(
        "--streams", type=int, default=0, help="open streams held throughout, half /live/ (0)"
    )
    parser.add_argument("--attack", action="store_true", help="an attacker beside the traffic")
    parser.add_argument("--attack-rate", type=float, default=2.0, help="attacks a second (2)")
    parser.add_argument(
        "--toml-depth", type=int, default=3000, help="the deep TOML key's levels (3000)"
    )
    parser.add_argument("--flood", type=int, default=200, help="/live/ opens per flood (200)")
    parser.add_argument(
        "--large-run-mb", type=float, default=16.0, help="the large run's event MB (16)"
    )
    parser.add_argument(
        "--run-max-mb",
        type=int,
        default=64,
        help="GATEHOUSE_RUN_MAX_BYTES in MiB with --attack: what each echo chain stores (64)",
    )
    parser.add_argument("--setup-data", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.setup_data:
        print(json.dumps(setup_data(json.loads(sys.stdin.read()))))
        return 0
    if min(args.authors, args.clients, args.approvers) < 0 or args.clients + args.authors == 0:
        parser.error("give at least one author or client")
    if args.authors_per_draft < 1:
        parser.error("--authors-per-draft must be at least 1")
    if args.clients and not args.approvers:
        parser.error("runs with a gate need at least one approver")
    if args.streams < 0 or args.attack_rate <= 0 or args.flood < 1 or args.toml_depth < 1:
        parser.error("--streams, --attack-rate, --flood and --toml-depth must be positive")
    if args.run_max_mb < 1:
        parser.error("--run-max-mb must be at least 1")
    if args.streams and not args.clients:
        parser.error("run event streams need API clients starting runs")
    if args.timeout is None:
        args.timeout = max(900.0, args.duration + args.drain_timeout + 420)

    def on_alarm(signum: int, frame: Any) -> None:
        raise OverallTimeout(f"the load test passed its overall limit of {args.timeout:.0f} s")

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(args.timeout))
    services = Services()
    failed = True
    with (
        tempfile.TemporaryDirectory(prefix="gatehouse-load-") as temporary,
        contextlib.ExitStack() as stack,
    ):
        directory = Path(temporary)
        try:
            database_url = os.environ.get("DATABASE_URL", "")
            database_log = None
            if database_url.startswith(("postgres://", "postgresql://")):
                where = "the server DATABASE_URL names"
            else:
                database_url = stack.enter_context(
                    private_postgres(directory, args.pg_port, pg_bin(args.pg_bin))
                )
                database_log = directory / "postgres.log"
                where = f"a private PostgreSQL server on {HOST}:{args.pg_port}"
            env = environment(directory, database_url)
            if args.attack:
                env |= attack_environment(args.run_max_mb)
            began = time.monotonic()
            manage(env, "migrate", "--no-input", "--verbosity", "0")
            manage(env, "collectstatic", "--no-input", "--verbosity", "0")
            spec = {
                "authors": args.authors,
                "clients": args.clients,
                "approvers": args.approvers,
                "draft_nodes": args.draft_nodes,
                "authors_per_draft": args.authors_per_draft,
                "streams": args.streams,
                "attack": args.attack,
                "large_run_mb": args.large_run_mb,
            }
            made = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--setup-data"],
                cwd=ROOT,
                env=env,
                input=json.dumps(spec),
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if made.returncode != 0:
                raise RuntimeError(f"setting up the data failed:\n{made.stderr}")
            data = json.loads(made.stdout.strip().splitlines()[-1])
            print(f"database: {where}; migrated and set up in {time.monotonic() - began:.1f} s")

            port = args.port or free_port()
            measuring = bool(args.streams or args.attack)
            stack.callback(services.stop)
            services.start(
                "gunicorn",
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "editor.asgi:application",
                    "--worker-class",
                    "editor.server.UvicornWorker",
                    "--workers",
                    str(args.web_workers),
                    "--bind",
                    f"{HOST}:{port}",
                    "--log-level",
                    "warning",
                    # As the image runs it: the attacker checks no token lands in it.
                    *(["--access-logfile", str(directory / "access.log")] if measuring else []),
                ],
                env,
                directory / "gunicorn.log",
            )
            for index in range(args.db_workers):
                services.start(
                    f"db_worker {index}",
                    [sys.executable, "manage.py", "db_worker", "--no-reload"],
                    env,
                    directory / f"db_worker-{index}.log",
                )
            wait_until_serving(services, port)
            print(
                f"serving: gunicorn {args.web_workers} uvicorn workers on {HOST}:{port}, "
                f"{args.db_workers} db_worker processes; DEBUG off, plain HTTP"
            )
            print(
                f"traffic: {args.authors} authors ({args.draft_nodes}-node drafts), "
                f"{args.clients} API clients, {args.approvers} approvers; think {args.think} s; "
                f"measured for {args.duration:.0f} s"
            )
            shared = Shared(port, Tally(), threading.Event(), threading.Event())
            shared.shared_drafts = args.authors_per_draft > 1
            shared.database_log = database_log
            with contextlib.suppress(OSError, ValueError, IndexError):
                pid_file = directory / "pgdata" / "postmaster.pid"
                shared.database_pid = int(pid_file.read_text().split()[0])
            if "attacker" in data:
                shared.extra_runs.add(data["attacker"]["large_run"])
                shared.attacker_users = ATTACKER_USERS
            shared.logs = [directory / "access.log", *(log for _, _, log in services.processes)]
            failed = run_traffic(args, shared, data, services)
        except OverallTimeout as error:
            print(f"FAILED: {error}")
        except RuntimeError as error:
            print(f"FAILED: {error}")
        finally:
            signal.alarm(0)
            if failed:
                for name, _, log in services.processes:
                    text = log.read_text(errors="replace") if log.exists() else ""
                    if text.strip():
                        print(f"--- {name} log (last 60 lines) ---")
                        print("\n".join(text.splitlines()[-60:]))
    return 1 if failed else 0


def guarded(shared: Shared, target: Any) -> Any:
    """``target``, with an exception that ends its thread recorded as a problem."""

    def run(*args: Any) -> None:
        try:
            target(*args)
        except Exception as error:  # a crashed caller must fail the test, not vanish
            shared.setup_errors.append(f"{target.__name__} thread crashed: {error!r}")

    return run


def run_traffic(
    args: argparse.Namespace, shared: Shared, data: dict[str, Any], services: Services
) -> bool:
    """Drives the traffic, drains, checks and reports; ``True`` when something failed."""
    agents = {"writer": data["writer"], "summarizer": data["summarizer"]}
    workers: list[threading.Thread] = []
    for draft in data["drafts"]:
        workers.append(
            threading.Thread(
                target=guarded(shared, author),
                args=(shared, draft["user"], draft["slug"], draft["gate"], args.think),
                daemon=True,
            )
        )
    for index, token in enumerate(data["clients"]):
        workers.append(
            threading.Thread(
                target=guarded(shared, client),
                args=(shared, index, token, agents, args.think),
                daemon=True,
            )
        )
    approvers = [
        threading.Thread(
            target=guarded(shared, approver), args=(shared, token, index, 0.2), daemon=True
        )
        for index, token in enumerate(data["approvers"])
    ]
    authors, others = workers[: len(data["drafts"])], workers[len(data["drafts"]) :]
    for thread in authors:
        thread.start()
    # Sign-ins and opening the editor come first (password hashing is slow on purpose).
    for _ in authors:
        if not shared.ready.acquire(timeout=REQUEST_TIMEOUT * 3):
            shared.setup_errors.append("the authors did not open their drafts in time")
            break
    report(list(shared.tally.samples), None, "before the measured phase: sign-ins, editor pages")
    roles: dict[str, tuple[list[int], bool]] = {
        "gunicorn": ([p.pid for name, p, _ in services.processes if name == "gunicorn"], True),
        "db_workers": (
            [p.pid for name, p, _ in services.processes if name.startswith("db_worker")],
            True,
        ),
        "clients": ([os.getpid()], False),
    }
    if shared.database_pid:
        roles["PostgreSQL"] = ([shared.database_pid], True)
    meter = CpuMeter(roles)
    cpu_before = meter.snapshot()
    load_before = os.getloadavg()
    measurement = None
    if args.streams or args.attack:
        measurement = Measurement(
            args,
            shared.port,
            data,
            shared.stop,
            recent_runs(shared.runs, shared.lock),
            {
                "gunicorn": next(p.pid for name, p, _ in services.processes if name == "gunicorn"),
                "db_workers": roles["db_workers"][0],
                "postgres": shared.database_pid,
            },
        )
    start = time.monotonic()
    shared.go.set()
    for thread in others + approvers:
        thread.start()
    if measurement is not None:
        measurement.start()
    shared.stop.wait(args.duration)
    shared.stop.set()
    end = time.monotonic()
    cpu_after = meter.snapshot()
    if measurement is not None:
        measurement.join()
        if measurement.attacker is not None:
            # Its runs are checked by the attacker (how each ended), not as the traffic's.
            shared.extra_runs |= measurement.attacker.runs
    for thread in workers:
        thread.join(timeout=REQUEST_TIMEOUT + 5)
    load_after = os.getloadavg()
    measured = [s for s in shared.tally.samples if start <= s.started < end]
    # Requests of the sign-in and page opening (before the first edit) are reported apart.
    traffic = {EDIT, POST_GRAPH, START_RUN, INBOX, RESUME, RELOAD}
    print()
    report(
        [s for s in measured if s.endpoint in traffic],
        end - start,
        f"measured phase: {end - start:.1f} s (load average before {load_before[0]:.2f}, "
        f"at the end {load_after[0]:.2f}, {os.cpu_count()} CPUs)",
    )
    slowest(measured, start)
    used, described = meter.describe(cpu_before, cpu_after)
    print(f"  {described}")
    counted = sum(1 for s in measured if s.endpoint in traffic)
    if used > 0:
        print(
            f"  {counted / used:.1f} requests per CPU-second of this test's processes "
            f"({used / counted * 1000:.0f} ms of CPU per request, runs' work included)"
        )
    print(
        f"  draft edits saved: {sum(shared.edits_saved.values())}; runs started: {len(shared.runs)}"
    )
    drain_start = time.monotonic()
    problems = check_runs(shared, data["reader"], args.drain_timeout)
    shared.drained.set()
    for thread in approvers:
        thread.join(timeout=REQUEST_TIMEOUT + 5)
    drained = [s for s in shared.tally.samples if s.started >= end]
    if drained:
        report(
            drained,
            max(time.monotonic() - drain_start, 1e-9),
            "after the measured phase (requests in flight, then the approvers until every run "
            "ended)",
        )
    errors = shared.tally.errors()
    resolved = sum(1 for s in shared.tally.samples if s.endpoint == RESUME and s.outcome == "ok")
    gated = sum(1 for _, with_gate in shared.runs if with_gate)
    print(f"gates resolved: {resolved} (202), for {gated} runs with a gate")
    if resolved != gated:
        problems.append(f"{resolved} gates were resolved, for {gated} runs with a gate")
    problems += shared.setup_errors
    problems += [f"{s.endpoint}: {s.detail}" for s in errors[:20]]
    problems += services.check_alive()
    problems += services.log_problems()
    problems += database_findings(shared.database_log)
    if measurement is not None and measurement.report(
        end - start, errors, shared.run_counts, shared.logs
    ):
        problems.append("a target of issue 20's measurement was missed (the table above)")
    print()
    if errors or problems:
        print(f"FAILED: {len(errors)} request errors; {len(problems)} problems")
        for problem in problems[:40]:
            print(f"  {problem}")
        return True
    print("OK: no errors; every run completed, no event log has a gap")
    return False


if __name__ == "__main__":
    sys.exit(main())
