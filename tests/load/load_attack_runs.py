"""The attacker's attacks on what a user stores and runs (issue 20's list, beside the request
and connection attacks of ``load_attacks.py``), each bounded in what one turn sends and in how
long it waits:

* a 9,999-node echo chain run with a 60 kB input (every node records it three times): it must
  fail at ``GATEHOUSE_RUN_MAX_BYTES``; while it runs, a stream of its events on a fresh token
  that is revoked mid-stream must end with ``credentials_revoked``;
* floods of documents, renames (aliases), API tokens and run starts by a user with small
  limits of its own (``hoarder``, as an operator would set them on the admin's usage rows): the
  first few pass, then ``413`` or ``429``;
* the stream of a run whose log lost its last events (an interrupted prune): it must end;
* agent files whose ``output_schema`` refers outside itself, as JSON and as TOML: ``400``;
* ``http_request`` to names an attacker's DNS answers with IPv6 forms of loopback and
  private addresses (``tests/rebinding_dns.py`` in every process): each run must fail naming
  the refusal.

Runs the attacker starts are noted in ``runs`` (the load test's end check leaves them out of
the runs it compares). The outcome of a run is counted by how it ended, so the summary shows
whether each run was refused for the right reason.
"""

from __future__ import annotations

import itertools
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from load_wire import ATTACKER, HOST, close, connect, head, read_head

CHAIN_NODES = 9_999
CHAIN_INPUT = "x" * 60_000
#: How long one turn waits for a run it started to end (given up early at the end).
RUN_SECONDS = 180.0
#: The outcome of a turn cut short by the end of the measured phase.
CUT_SHORT = "given up at the end of the measured phase"
STREAM_SECONDS = 30.0
ENDED = ("completed", "failed", "abandoned")
#: What the names of ``tests/rebinding_dns.py`` resolve to, for the refusal each run names.
REBINDING = {
    "compatible.rebinding.test": "::7f00:1",
    "nat64.rebinding.test": "64:ff9b::7f00:1",
    "sixtofour.rebinding.test": "2002:7f00:1::",
    "site-local.rebinding.test": "fec0::1",
}
#: The environment every process of the load test gets with ``--attack``: the names above
#: resolve as the attacker's DNS answers, and ``http_request`` allows them.
ATTACK_ENVIRONMENT = {
    "GATEHOUSE_TOOL_MODULES": "tests.rebinding_dns",
    "GATEHOUSE_HTTP_ALLOW": ",".join(REBINDING),
}
#: Who the attacker starts runs as (made by the load test's set-up).
ATTACKER_USERS = ("mallory", "hoarder")
#: The hoarder's own limits: each flood reaches its limit within minutes.
HOARDER_LIMITS = {"documents": 30, "aliases": 20, "tokens": 8, "runs_per_hour": 40}
FLOOD_DOCUMENTS = 10
FLOOD_RENAMES = 5
FLOOD_TOKENS = 4
FLOOD_RUNS = 10
OUTSIDE_REF = "http://127.0.0.1:9/schema.json"
#: What a stream's reader looks for: its end, and the reason a revoked caller is given.
END, REVOKED = b"\nevent: end\n", b'data: {"reason":"credentials_revoked"}'
MARKERS = (END, REVOKED)
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
NEW_TOKEN = re.compile(r'id="new-token-value" class="token-value" type="text" value="([^"]+)"')
NEW_TOKEN_ID = re.compile(r'is-new">.*?action="/account/tokens/(\d+)/revoke/"', re.DOTALL)


def chain_graph() -> dict[str, Any]:
    ids = [f"n{index}" for index in range(CHAIN_NODES)]
    return {
        "schema_version": 1,
        "nodes": [{"kind": "tool", "payload": {"id": id_, "tool": "echo"}} for id_ in ids],
        "edges": [{"from": a, "to": b} for a, b in itertools.pairwise(ids)],
    }


def one_tool(tool: str) -> dict[str, Any]:
    """A graph of one ``tool`` node, given the run's input."""
    node = {"kind": "tool", "payload": {"id": "call", "tool": tool}}
    return {"schema_version": 1, "nodes": [node], "edges": []}


class RunAttacks:
    """Mixed into ``load_attacks.Attacker``, whose plumbing (``call``, ``bearer``, ``cookie``,
    ``tally``, ``who``, ``stop``) these attacks use."""

    port: int
    who: Any
    stop: threading.Event
    tally: Any
    call: Callable[..., tuple[str, bytes, Any]]
    bearer: Callable[..., dict[str, str]]
    cookie: Callable[..., dict[str, str]]

    def prepare_run_attacks(self) -> None:
        #: Every run the attacker started.
        self.runs: set[str] = set()
        self._runs_lock = threading.Lock()
        self._graphs: dict[str, str] = {}
        self._hoarder_slug = self.who.hoarder_slug
        self._numbers = itertools.count(1)

    def run_attacks(self) -> list[tuple[str, Callable[[], str | Counter[str]]]]:
        return [
            ("9,999-node echo chain, 60 kB input (run bytes)", self.echo_chain),
            ("document flood (quota)", self.document_flood),
            ("rename flood (alias quota)", self.rename_flood),
            ("token flood (quota)", self.token_flood),
            ("run-start flood (hourly rate)", self.run_start_flood),
            ("stream of a partly pruned run", self.pruned_stream),
            ("agent output_schema with an outside $ref", self.outside_ref_agent),
            ("http_request to IPv6 forms of private addresses", self.rebinding_fetch),
        ]

    # --- plumbing ----------------------------------------------------------------------------

    def _json(self, method: str, path: str, token: str, value: Any) -> tuple[str, Any]:
        status, data, _ = self.call(
            method,
            path,
            body=json.dumps(value).encode(),
            headers=self.bearer(token, **{"Content-Type": "application/json"}),
        )
        try:
            return status, json.loads(data) if data else None
        except ValueError:
            return status, None

    def _graph(self, name: str, token: str, graph: dict[str, Any]) -> str | None:
        """The hash of ``graph``, stored once by the owner of ``token``."""
        if name not in self._graphs:
            status, answer = self._json("POST", "/v1/graphs", token, graph)
            if status != "201" or not answer:
                return None
            self._graphs[name] = answer["graph"]
        return self._graphs[name]

    def _start(self, token: str, graph: str, value: Any) -> tuple[str, str | None]:
        status, answer = self._json(
            "POST", "/v1/graph-runs", token, {"graph_hash": graph, "input": value}
        )
        if status == "201" and answer:
            with self._runs_lock:
                self.runs.add(answer["run"])
            return status, answer["run"]
        return status, None

    def _ended(self, run: str, seconds: float = RUN_SECONDS) -> dict[str, Any] | None:
        """The run's status once it has ended (``None`` when it did not within ``seconds``,
        or the measured phase ended first)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.stop.is_set():
            status, data, _ = self.call(
                "GET", f"/v1/runs/{run}", headers=self.bearer(self.who.reader_token)
            )
            if status == "200":
                found: dict[str, Any] = json.loads(data)["status"]
                if found["state"] in ENDED:
                    return found
            self.stop.wait(0.5)
        return None

    def _form_post(self, session: str, page: str, path: str, fields: dict[str, str]) -> Any:
        """A form of ``page`` posted as the browser of ``session``: (status, page)."""
        status, html, _ = self.call("GET", page, headers=self.cookie(session))
        found = CSRF_FIELD.search(html.decode("utf-8", "replace"))
        if status != "200" or found is None:
            return f"page {status}", b""
        token = found.group(1)
        origin = f"http://{HOST}:{self.port}"
        status, answer, _ = self.call(
            "POST",
            path,
            body=urlencode({"csrfmiddlewaretoken": token, **fields}).encode(),
            headers=self.cookie(
                f"{session}; csrftoken={token}",
                **{
                    "Content-Type": "application/x-www-form-urlencoded",
                    "Origin": origin,
                    "Referer": origin + page,
                },
            ),
        )
        return status, answer

    def _to_the_end(self, sock: socket.socket, data: bytes) -> tuple[set[bytes], bool]:
        """Reads a stream until the server closes it (``Connection: close``: after its
        ``event: end``), ``STREAM_SECONDS`` pass, or the measured phase ends: which of
        :data:`MARKERS` went by (the frames themselves are not kept: a run's may be large,
        and its ``end`` holds its output), and whether the server closed the stream."""
        seen = {marker for marker in MARKERS if marker in data}
        tail = data[-64:]
        deadline = time.monotonic() + STREAM_SECONDS
        while time.monotonic() < deadline and not self.stop.is_set():
            sock.settimeout(1.0)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                return seen, True
            window = tail + chunk
            seen |= {marker for marker in MARKERS if marker in window}
            tail = window[-64:]
        return seen, False

    # --- the attacks -------------------------------------------------------------------------

    def echo_chain(self) -> str:
        """The chain, one run at a time: its stream with a token revoked mid-way, then how
        the run ended (``failed`` at ``GATEHOUSE_RUN_MAX_BYTES`` is the fix working)."""
        graph = self._graph("chain", self.who.author_token, chain_graph())
        if graph is None:
            return "storing the chain refused"
        status, run = self._start(self.who.author_token, graph, CHAIN_INPUT)
        if run is None:
            return f"start {status}"
        self.tally.add("stream on a token revoked mid-stream", self.revoked_stream(run))
        ended = self._ended(run)
        if ended is None:
            return CUT_SHORT if self.stop.is_set() else "not ended within the bound"
        if ended["state"] == "failed" and "(GATEHOUSE_RUN_MAX_BYTES)" in ended.get("error", ""):
            return "failed at GATEHOUSE_RUN_MAX_BYTES"
        return f"{ended['state']}: {str(ended.get('error', ''))[:60]}"

    def revoked_stream(self, run: str) -> str:
        """A fresh token of ``revoker`` streams ``run``'s events; once the stream flows the
        token is revoked (on the account page): the stream must end, saying why."""
        session = self.who.revoker_session
        status, page = self._form_post(session, "/account/", "/account/tokens/", {"name": "s"})
        text = page.decode("utf-8", "replace")
        raw, token_id = NEW_TOKEN.search(text), NEW_TOKEN_ID.search(text)
        if status != "200" or raw is None or token_id is None:
            return f"new token: {status}"
        try:
            sock = connect(self.port, source=ATTACKER)
        except OSError as error:
            return f"connect {type(error).__name__}"
        try:
            headers = self.bearer(raw.group(1), Accept="text/event-stream", Connection="close")
            sock.sendall(head("GET", f"/v1/runs/{run}/events", self.port, headers))
            opened, data = read_head(sock, STREAM_SECONDS)
            if opened != 200:
                return f"open {opened}"
            revoked, _ = self._form_post(
                session, "/account/", f"/account/tokens/{token_id.group(1)}/revoke/", {}
            )
            if revoked != "302":
                return f"revoke {revoked}"
            seen, closed = self._to_the_end(sock, data)
            if REVOKED in seen:
                return "ended: credentials_revoked"
            if END in seen:
                return "ended: the run ended first"
            if closed:
                return "closed without event: end"
            if self.stop.is_set():
                return CUT_SHORT
            return "still flowing at the bound"
        except OSError as error:
            return f"closed ({type(error).__name__})"
        finally:
            close(sock)

    def document_flood(self) -> Counter[str]:
        answers: Counter[str] = Counter()
        for _ in range(FLOOD_DOCUMENTS):
            title = f"Flood {next(self._numbers)}"
            status, _ = self._json(
                "POST", "/v1/documents", self.who.hoarder_token, {"title": title}
            )
            answers[status] += 1
        return answers

    def rename_flood(self) -> Counter[str]:
        """Renames of one document, each keeping the old slug reserved."""
        answers: Counter[str] = Counter()
        for _ in range(FLOOD_RENAMES):
            new = f"hoarded-{next(self._numbers)}"
            path = f"/v1/documents/{self._hoarder_slug}"
            status, _ = self._json("PATCH", path, self.who.hoarder_token, {"slug": new})
            if status == "200":
                self._hoarder_slug = new
            answers[status] += 1
        return answers

    def token_flood(self) -> Counter[str]:
        answers: Counter[str] = Counter()
        for _ in range(FLOOD_TOKENS):
            status, _ = self._form_post(
                self.who.hoarder_session, "/account/", "/account/tokens/", {"name": "more"}
            )
            answers[status] += 1
        return answers

    def run_start_flood(self) -> Counter[str]:
        graph = self._graph("echo", self.who.hoarder_token, one_tool("echo"))
        if graph is None:
            return Counter(["storing the graph refused"])
        answers: Counter[str] = Counter()
        for number in range(FLOOD_RUNS):
            status, _ = self._start(self.who.hoarder_token, graph, {"n": number})
            answers[status] += 1
        return answers

    def pruned_stream(self) -> str:
        """The stream of a run whose log lost its last events: it must end, not wait."""
        try:
            sock = connect(self.port, source=ATTACKER)
        except OSError as error:
            return f"connect {type(error).__name__}"
        try:
            headers = self.bearer(
                self.who.reader_token, Accept="text/event-stream", Connection="close"
            )
            sock.sendall(head("GET", f"/v1/runs/{self.who.pruned_run}/events", self.port, headers))
            status, data = read_head(sock, STREAM_SECONDS)
            if status != 200:
                return str(status) if status is not None else "no answer"
            seen, closed = self._to_the_end(sock, data)
            if closed:
                return "200, ended" if END in seen else "200, closed without end"
            if self.stop.is_set():
                return CUT_SHORT
            return "200, still open at the bound"
        except OSError as error:
            return f"closed ({type(error).__name__})"
        finally:
            close(sock)

    _as_toml = False

    def outside_ref_agent(self) -> str:
        """An agent whose ``output_schema`` refers outside itself, JSON and TOML in turn."""
        self._as_toml = not self._as_toml
        if self._as_toml:
            text = (
                'name = "outside-ref"\nmodel = "echo"\nprompt = "x"\n'
                f'[output_schema]\n"$ref" = "{OUTSIDE_REF}"\n'
            )
            content_type = "application/toml"
        else:
            text = json.dumps({"name": "outside-ref", "model": "echo", "prompt": "x",
                               "output_schema": {"$ref": OUTSIDE_REF}})  # fmt: skip
            content_type = "application/json"
        status, _, _ = self.call(
            "POST",
            "/v1/agents",
            body=text.encode(),
            headers=self.bearer(self.who.author_token, **{"Content-Type": content_type}),
        )
        return f"{status} ({'TOML' if self._as_toml else 'JSON'})"

    def rebinding_fetch(self) -> Counter[str]:
        """One run per name; each must fail saying its address is not public."""
        graph = self._graph("fetch", self.who.author_token, one_tool("http_request"))
        if graph is None:
            return Counter(["storing the graph refused"])
        started = []
        for name in REBINDING:
            value = {"method": "GET", "url": f"http://{name}/internal"}
            status, run = self._start(self.who.author_token, graph, value)
            started.append((name, status, run))
        answers: Counter[str] = Counter()
        for name, status, run in started:
            if run is None:
                answers[f"start {status}"] += 1
                continue
            ended = self._ended(run, STREAM_SECONDS)
            refusal = f"resolved to {REBINDING[name]}, which is not a public address"
            if ended is None:
                answers[CUT_SHORT if self.stop.is_set() else "not ended within the bound"] += 1
            elif ended["state"] == "failed" and refusal in ended.get("error", ""):
                answers["failed: not a public address"] += 1
            else:
                answers[f"{ended['state']}: {str(ended.get('error', ''))[:60]}"] += 1
        return answers
