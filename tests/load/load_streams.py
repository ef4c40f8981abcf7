"""Open streams held for the whole measured phase, as people's pages and API clients hold them:
half ``/live/`` (a signed-in page: the navigation bar's count, and now and then a run's page),
half ``GET /v1/runs/{id}/events`` with ``Accept: text/event-stream`` and a token, on one of the
runs started lately. A stream the server ends (its run ended) or drops is opened again; a
page's stream is closed after 5 to 30 s (the person went to another page) and opened again.

A page opens its stream as a browser does, on a kept-alive connection that has just carried
another request of the page (the inbox count fragment), the case where the server answered
``500`` to one stream in six of a browser session. Every other time both requests are written
at once (pipelined), so that the stream's request arrives while the fragment's is still being
answered: the other side of that race."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from load_wire import close, connect, head, read_head, read_response

LIVE = "stream GET /live/"
EVENTS = "stream GET /v1/runs/{id}/events"
#: Seconds to wait before opening again after a refusal or an error: bounded in rate.
BACK_OFF = 1.0
#: After a run's stream ended (its run ended), a client picks another run a little later.
NEXT_RUN_SECONDS = (2.0, 6.0)
#: How long a person stays on a page before going to the next (which opens its own stream).
PAGE_SECONDS = (5.0, 30.0)
OPEN_TIMEOUT = 30.0


@dataclass
class StreamStats:
    opens: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    frames: Counter[str] = field(default_factory=Counter)
    open_now: int = 0
    most_open: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def opened(self, kind: str, outcome: str) -> None:
        with self.lock:
            self.opens[kind][outcome] += 1

    def holding(self, change: int) -> None:
        with self.lock:
            self.open_now += change
            self.most_open = max(self.most_open, self.open_now)


@dataclass
class Viewer:
    session: str  # the session cookie of a signed-in user
    token: str  # an API token of the same user


def hold(
    port: int,
    viewer: Viewer,
    kind: str,
    recent_run: Callable[[], str | None],
    stats: StreamStats,
    stop: threading.Event,
    seed: int,
) -> None:
    """Keeps one stream of ``kind`` open until ``stop``, opening it again whenever it ends."""
    chance = random.Random(seed)
    while not stop.is_set():
        if kind == LIVE:
            run = recent_run() if chance.random() < 0.25 else None
            path = f"/live/?run={run}&seen=0" if run else "/live/"
            headers = {"Cookie": f"sessionid={viewer.session}"}
        else:
            run = recent_run()
            if run is None:  # no run started yet
                stop.wait(BACK_OFF)
                continue
            path = f"/v1/runs/{run}/events"
            headers = {"Authorization": f"Bearer {viewer.token}"}
        headers |= {"Accept": "text/event-stream", "Connection": "close"}
        before, seconds = (
            ("/inbox/count/", chance.uniform(*PAGE_SECONDS)) if kind == LIVE else (None, None)
        )
        if not held_once(
            port, kind, path, headers, stats, stop, before, seconds, chance.random() < 0.5
        ):
            stop.wait(BACK_OFF)
        elif kind == EVENTS:
            stop.wait(chance.uniform(*NEXT_RUN_SECONDS))


def held_once(
    port: int,
    kind: str,
    path: str,
    headers: dict[str, str],
    stats: StreamStats,
    stop: threading.Event,
    before: str | None = None,
    seconds: float | None = None,
    pipelined: bool = False,
) -> bool:
    """Opens the stream (after a request for ``before`` on the same connection, when given)
    and reads it until the server ends it, ``seconds`` pass, or ``stop``; whether it was
    answered ``200`` (the opening's outcome is counted either way)."""
    try:
        sock = connect(port, timeout=OPEN_TIMEOUT)
    except OSError as error:
        stats.opened(kind, f"connect {type(error).__name__}")
        return False
    try:
        try:
            stream = head("GET", path, port, headers)
            if before is None:
                sock.sendall(stream)
            else:
                fragment = head("GET", before, port, {"Cookie": headers["Cookie"]})
                sock.sendall(fragment + stream if pipelined else fragment)
                fetched = read_response(sock, OPEN_TIMEOUT)
                if fetched != 200:
                    stats.opened(f"{kind}: its page's {before}", str(fetched or "no answer"))
                    return False
                if not pipelined:
                    sock.sendall(stream)
        except OSError as error:
            stats.opened(kind, f"send {type(error).__name__}")
            return False
        status, data = read_head(sock, OPEN_TIMEOUT)
        stats.opened(kind, str(status) if status is not None else "no answer")
        if status != 200:
            return False
        stats.holding(+1)
        try:
            body = data.partition(b"\r\n\r\n")[2]
            frames = body.count(b"\n\n")
            until = time.monotonic() + seconds if seconds is not None else float("inf")
            while not stop.is_set() and time.monotonic() < until:
                sock.settimeout(1.0)
                try:
                    chunk = sock.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    stats.opened(kind, "dropped")
                    break
                if not chunk:
                    break  # the server ended the stream
                frames += chunk.count(b"\n\n")
            with stats.lock:
                stats.frames[kind] += frames
        finally:
            stats.holding(-1)
        return True
    finally:
        close(sock)


def start_streams(
    port: int,
    viewers: list[Viewer],
    count: int,
    recent_run: Callable[[], str | None],
    stop: threading.Event,
) -> tuple[StreamStats, list[threading.Thread]]:
    """``count`` streams, alternately ``/live/`` and run events, two for each viewer; their
    opening is spread over a few seconds, as pages open."""
    stats = StreamStats()
    threads = []
    for index in range(count):
        viewer = viewers[(index // 2) % len(viewers)]
        kind = LIVE if index % 2 == 0 else EVENTS
        thread = threading.Thread(
            target=hold,
            args=(port, viewer, kind, recent_run, stats, stop, index),
            daemon=True,
            name=f"stream-{index}",
        )
        threads.append(thread)
    for thread in threads:
        thread.start()
        time.sleep(0.02)
    return stats, threads
