"""The attacker of issue 20's measurement: each attack of the issue's *Why* list, in a loop,
bounded in rate and in what each attempt sends, on loopback only (the attacks on what a user
stores and runs are in ``load_attack_runs.py``).

Answers are counted by status (or by what happened: ``closed``, ``held``, ``timeout``); a
``4xx`` is the fixes working (``413``, ``429``, ``400``) and does not fail the run, a ``5xx``
does. Each request attack loops in a thread of its own, all of them together at most ``rate``
a second (a slow one does not hold the others back); one more thread holds connections open
(slow readers, silent and trickling connections), ``HELD_AT_ONCE`` of each kind at once.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from load_attack_runs import RunAttacks
from load_wire import (
    ATTACKER,
    HOST,
    close,
    connect,
    head,
    read_head,
    send_until_answered,
    status_of,
)

MIB = 1024 * 1024
#: Past the 8 MiB cap of every path, and past the smaller caps the fixes add.
OVER_CAP = 9 * MIB
#: A chunked body that never ends is given up after this much (twice the cap), answered or not.
ENDLESS_LIMIT = 16 * MIB
CHUNK = 64 * 1024
SEND_SECONDS = 30.0
ANSWER_SECONDS = 30.0
#: After a whole body was sent: the wait for an answer that may never come.
BODY_ANSWER_SECONDS = 5.0
#: A held connection (silent, trickling, slow reader) is let go after this.
HOLD_SECONDS = 30.0
HELD_AT_ONCE = 4
SLOW_READ_BYTES_PER_SECOND = 16 * 1024
DRAFT_BYTES = 1_000_000
FLOOD_OPENS = 200
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@dataclass
class Identities:
    """Who the attacker is: an author (token, session, a document of its own), a user who
    floods ``/live/``, one who guesses passwords, a user without a role, a large run; a user
    with small limits of its own who floods (a token, a session, a document to rename), one
    whose tokens are revoked mid-stream (a session), and a run whose log lost its end."""

    author_token: str
    author_slug: str
    flooder_session: str
    guesser_session: str
    reader_token: str
    reader_session: str
    large_run: str
    hoarder_token: str
    hoarder_session: str
    hoarder_slug: str
    revoker_session: str
    pruned_run: str

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Identities:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})


@dataclass
class Tally:
    counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, attack: str, outcome: str, times: int = 1) -> None:
        with self.lock:
            self.counts[attack][outcome] += times


class Attacker(RunAttacks):
    def __init__(
        self,
        port: int,
        who: Identities,
        stop: threading.Event,
        *,
        rate: float,
        toml_depth: int,
        flood: int = FLOOD_OPENS,
    ) -> None:
        self.port = port
        self.who = who
        self.stop = stop
        self.rate = rate
        self.toml_depth = toml_depth
        self.flood = flood
        self.tally = Tally()
        self.draft_revision: str | None = None
        self.prepare_run_attacks()
        attacks = self.attacks()
        every = len(attacks) / rate
        self.threads = [
            threading.Thread(target=self._loop, args=(name, attack, every), daemon=True, name=name)
            for name, attack in attacks
        ]
        self.threads.append(threading.Thread(target=self._holders, daemon=True))

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=HOLD_SECONDS + ANSWER_SECONDS + 10)

    # --- the loops ---------------------------------------------------------------------------

    def attacks(self) -> list[tuple[str, Callable[[], str | Counter[str]]]]:
        return [
            ("agent file: deep dotted key (TOML)", self.deep_toml_key),
            ("agent file: other TOML shapes", self.other_toml_shapes),
            ("over-cap body POST /healthz", lambda: self.over_cap("/healthz")),
            ("over-cap body POST /v1/graphs", lambda: self.over_cap("/v1/graphs")),
            ("chunked endless body POST /healthz", lambda: self.endless("/healthz")),
            ("chunked endless body POST /v1/graphs", lambda: self.endless("/v1/graphs")),
            ("/live/ open flood (one connection each)", self.live_flood),
            ("JSON events page, query holding from_seq=", self.from_seq_in_query),
            ("draft save flood (1 MB a save)", self.draft_save),
            ("events pages of the large run (no role)", self.large_events_pages),
            ("graph of the large run (no role)", self.large_run_graph),
            ("log download of the large run (no role)", self.large_log),
            ("password change guessing", self.password_guess),
            ("?token= in the query", self.token_in_query),
            *self.run_attacks(),
        ]

    def _loop(self, name: str, attack: Callable[[], str | Counter[str]], every: float) -> None:
        """``attack`` again and again, at most once every ``every`` seconds."""
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                outcome = attack()
            except Exception as error:  # an attack that breaks is counted, not fatal
                outcome = f"harness error {type(error).__name__}"
            answers = Counter([outcome]) if isinstance(outcome, str) else outcome
            for each, times in answers.items():
                self.tally.add(name, each, times)
            self.stop.wait(max(0.0, began + every - time.monotonic()))

    def _holders(self) -> None:
        holds: list[tuple[str, Callable[[], str]]] = [
            ("slow reader of the large run's log", self.slow_log_reader),
            ("silent connection", self.silent),
            ("header-trickling connection", self.trickle),
        ]
        while not self.stop.is_set():
            outcomes: list[tuple[str, str]] = []
            threads = [
                threading.Thread(target=_append, args=(outcomes, name, hold), daemon=True)
                for name, hold in holds
                for _ in range(HELD_AT_ONCE)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=HOLD_SECONDS + ANSWER_SECONDS + 5)
            for name, outcome in outcomes:
                self.tally.add(name, outcome)

    # --- plumbing ----------------------------------------------------------------------------

    def call(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        read: bool = True,
    ) -> tuple[str, bytes, http.client.HTTPMessage | None]:
        """One request on a fresh connection: its status (or what went wrong), body, headers."""
        connection = http.client.HTTPConnection(
            HOST, self.port, timeout=ANSWER_SECONDS, source_address=(ATTACKER, 0)
        )
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            data = response.read() if read else b""
            return str(response.status), data, response.headers
        except TimeoutError:
            return "timeout", b"", None
        except (OSError, http.client.HTTPException) as error:
            return f"closed ({type(error).__name__})", b"", None
        finally:
            connection.close()

    def bearer(self, token: str, **more: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}", **more}

    def cookie(self, session: str, **more: str) -> dict[str, str]:
        return {"Cookie": f"sessionid={session}", **more}

    def raw_body(self, path: str, extra: dict[str, str], parts: Iterator[bytes]) -> str:
        """Sends a body on a raw socket until the server answers or the parts run out."""
        try:
            sock = connect(self.port, source=ATTACKER)
        except OSError as error:
            return f"connect {type(error).__name__}"
        try:
            headers = self.bearer(self.who.author_token, **extra)
            sock.sendall(head("POST", path, self.port, headers))
            sent = send_until_answered(sock, parts, SEND_SECONDS)
            status, _ = read_head(
                sock, ANSWER_SECONDS if sent == "answered" else BODY_ANSWER_SECONDS
            )
            if status is not None:
                return str(status)
            return {"sent": "no answer", "answered": "closed", "reset": "closed"}.get(sent, sent)
        except OSError as error:
            return f"closed ({type(error).__name__})"
        finally:
            close(sock)

    # --- the attacks -------------------------------------------------------------------------

    def agent_file(self, text: str) -> str:
        status, _, _ = self.call(
            "POST",
            "/v1/agents",
            body=text.encode(),
            headers=self.bearer(self.who.author_token, **{"Content-Type": "application/toml"}),
        )
        return status

    def deep_toml_key(self) -> str:
        """The issue's: a dotted key thousands of levels deep (``tomllib`` is quadratic in it)."""
        key = ".".join(["a"] * self.toml_depth)
        return self.agent_file(f'name = "deep"\nmodel = "echo"\nprompt = "x"\n{key} = 1\n')

    _shape = 0

    def other_toml_shapes(self) -> str:
        """The six other shapes that answered ``500``, one per turn."""
        base = 'name = "shape"\nmodel = "echo"\nprompt = "x"\n'
        shapes = [
            "options = " + "[" * 2000 + "]" * 2000 + "\n",
            "options = " + "{a = " * 2000 + "1" + "}" * 2000 + "\n",
            "".join(f"[{'.'.join(['t'] * (level + 1))}]\n" for level in range(300)),
            "options = {n = " + "9" * 100_000 + "}\n",
            "options = {n = nan}\n",
            "[output_schema]\ntype = 1979-05-27T07:32:00Z\n",
        ]
        self._shape += 1
        return self.agent_file(base + shapes[self._shape % len(shapes)])

    def over_cap(self, path: str) -> str:
        """A declared ``Content-Length`` past the cap, and the bytes to go with it."""
        parts = (b"x" * CHUNK for _ in range(OVER_CAP // CHUNK))
        headers = {"Content-Type": "application/json", "Content-Length": str(OVER_CAP)}
        return self.raw_body(path, headers, parts)

    def endless(self, path: str) -> str:
        """A chunked body that never ends (given up after ``ENDLESS_LIMIT`` bytes)."""
        chunk = b"%x\r\n" % CHUNK + b"x" * CHUNK + b"\r\n"
        parts = (chunk for _ in range(ENDLESS_LIMIT // CHUNK))
        headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
        return self.raw_body(path, headers, parts)

    def live_flood(self) -> Counter[str]:
        """``flood`` ``/live/`` streams opened at once by one user, then all dropped."""
        opened = []
        outcomes: Counter[str] = Counter()
        request = head("GET", "/live/", self.port, self.cookie(self.who.flooder_session))
        try:
            for _ in range(self.flood):
                if self.stop.is_set():
                    break
                try:
                    sock = connect(self.port, source=ATTACKER)
                    sock.sendall(request)
                    opened.append(sock)
                except OSError as error:
                    outcomes[f"connect {type(error).__name__}"] += 1
            deadline = time.monotonic() + ANSWER_SECONDS  # for all of them together
            for sock in opened:
                status, _ = read_head(sock, max(0.1, deadline - time.monotonic()))
                outcomes[str(status) if status is not None else "no answer"] += 1
        finally:
            for sock in opened:
                close(sock)
        return outcomes

    def from_seq_in_query(self) -> str:
        """A heavy JSON page whose query string merely contains ``from_seq=``."""
        path = f"/v1/runs/{self.who.large_run}/events?limit=1000&note=from_seq=0"
        status, _, headers = self.call("GET", path, headers=self.bearer(self.who.reader_token))
        if headers is not None and "event-stream" in headers.get("Content-Type", ""):
            return f"{status} (a stream)"
        return status

    def draft_save(self) -> str:
        """Saves a 1 MB draft again and again (each save keeps a revision)."""
        slug = self.who.author_slug
        if self.draft_revision is None:
            status, data, _ = self.call(
                "GET", f"/v1/documents/{slug}/draft", headers=self.bearer(self.who.author_token)
            )
            if status != "200":
                return f"read {status}"
            self.draft_revision = str(json.loads(data)["revision"])
        text = json.dumps({"schema_version": 1, "nodes": [], "edges": [], "n": time.time()})
        text += " " * (DRAFT_BYTES - len(text))
        status, data, _ = self.call(
            "PUT",
            f"/v1/documents/{slug}/draft",
            body=json.dumps({"text": text}).encode(),
            headers=self.bearer(
                self.who.author_token,
                **{"Content-Type": "application/json", "If-Match": f'"{self.draft_revision}"'},
            ),
        )
        if status == "200":
            self.draft_revision = str(json.loads(data)["revision"])
        else:
            self.draft_revision = None  # read it again next time
        return status

    def large_events_pages(self) -> str:
        """Every page of the large run's events, as a user without a role."""
        after, status = None, "none"
        for _ in range(50):
            query = "limit=1000" + (f"&after={after}" if after is not None else "")
            status, data, _ = self.call(
                "GET",
                f"/v1/runs/{self.who.large_run}/events?{query}",
                headers=self.bearer(self.who.reader_token),
            )
            if status != "200":
                break
            after = json.loads(data).get("next")
            if after is None or self.stop.is_set():
                break
        return status

    def large_run_graph(self) -> str:
        path = f"/v1/runs/{self.who.large_run}/graph"
        status, _, _ = self.call("GET", path, headers=self.bearer(self.who.reader_token))
        return status

    def large_log(self) -> str:
        status, _, _ = self.call(
            "GET",
            f"/runs/{self.who.large_run}/log.jsonl",
            headers=self.cookie(self.who.reader_session),
        )
        return status

    def password_guess(self) -> str:
        """A wrong current password on the password change form, again and again."""
        status, page, _ = self.call(
            "GET", "/account/", headers=self.cookie(self.who.guesser_session)
        )
        found = CSRF_FIELD.search(page.decode("utf-8", "replace"))
        if status != "200" or found is None:
            return f"account page {status}"
        token = found.group(1)
        body = urlencode(
            {
                "csrfmiddlewaretoken": token,
                "old_password": f"guess-{time.monotonic_ns()}",
                "new_password1": "a-new-password-for-the-load-test",
                "new_password2": "a-new-password-for-the-load-test",
            }
        ).encode()
        status, _, _ = self.call(
            "POST",
            "/account/password/",
            body=body,
            headers=self.cookie(
                f"{self.who.guesser_session}; csrftoken={token}",
                **{
                    "Content-Type": "application/x-www-form-urlencoded",
                    "Origin": f"http://{HOST}:{self.port}",
                    "Referer": f"http://{HOST}:{self.port}/account/",
                },
            ),
        )
        return status

    def token_in_query(self) -> str:
        """A real token in the query string: refused, and it must not reach any log."""
        status, _, _ = self.call("GET", f"/v1/runs?limit=1&token={self.who.author_token}")
        return status

    # --- the holds ---------------------------------------------------------------------------

    def slow_log_reader(self) -> str:
        """Downloads the large run's log at 16 KiB/s, for at most ``HOLD_SECONDS``."""
        try:
            sock = connect(self.port, source=ATTACKER)
        except OSError as error:
            return f"connect {type(error).__name__}"
        try:
            headers = self.cookie(self.who.reader_session, Connection="close")
            sock.sendall(head("GET", f"/runs/{self.who.large_run}/log.jsonl", self.port, headers))
            status, _ = read_head(sock, ANSWER_SECONDS)
            if status != 200:
                return str(status) if status is not None else "no answer"
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            deadline = time.monotonic() + HOLD_SECONDS
            while time.monotonic() < deadline and not self.stop.is_set():
                sock.settimeout(2.0)
                try:
                    if not sock.recv(SLOW_READ_BYTES_PER_SECOND // 4):
                        return "200, read to the end"
                except TimeoutError:
                    continue
                time.sleep(0.25)
            return "200, held to the bound"
        except OSError as error:
            return f"closed ({type(error).__name__})"
        finally:
            close(sock)

    def _held(self, trickle: bool) -> str:
        """A connection that says nothing (or a header byte a second): closed by the server
        (or answered, ``408``), or still open when given up after ``HOLD_SECONDS``."""
        try:
            sock = connect(self.port, source=ATTACKER)
        except OSError as error:
            return f"connect {type(error).__name__}"
        began = time.monotonic()
        try:
            if trickle:
                sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {HOST}:{self.port}\r\n".encode())
            while time.monotonic() - began < HOLD_SECONDS and not self.stop.is_set():
                if trickle:
                    sock.sendall(b"X")
                sock.settimeout(1.0)
                try:
                    data = sock.recv(4096)
                except TimeoutError:
                    continue
                if not data:
                    return "closed by the server"
                status = status_of(data)
                return str(status) if status is not None else "answered"
            return "held to the bound"
        except OSError:
            return "closed by the server"
        finally:
            close(sock)

    def silent(self) -> str:
        return self._held(trickle=False)

    def trickle(self) -> str:
        return self._held(trickle=True)


def _append(outcomes: list[tuple[str, str]], name: str, hold: Callable[[], str]) -> None:
    outcomes.append((name, hold()))
