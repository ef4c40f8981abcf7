"""Found here (issue 20, *also*, and *reads are unbounded in bytes*): the stream of a run whose
log had a gap (a prune stopped between two batches: the last events gone, the run's count
unchanged) asked again and again for the missing events, spinning a core and never ending;
and a stream read 500 envelopes at a time, however large, whether its client read or not."""

import socket
from typing import Any
from urllib.parse import urlsplit

import requests

GATE = {
    "schema_version": 1,
    "nodes": [{"kind": "gate", "payload": {"id": "g", "approval_schema": {"type": "string"}}}],
    "edges": [],
}
#: Envelopes of this many bytes each, added to the run's log: 40 MB in all.
BLOB = 50_000
EVENTS = 800
SLOW_READERS = 3


def _stream(corpus: Any, run: str) -> requests.Response:
    return corpus.request(
        "GET",
        f"/v1/runs/{run}/events",
        headers={"Accept": "text/event-stream"},
        stream=True,
    )


def pruned(corpus: Any) -> None:
    """The run's log loses every event after its first, as ``prune`` does in a batch: its
    stream sends what is left, then ``event: end``, and ends."""
    run = corpus.names["run"]
    corpus.shell(
        "from editor.models import RunEvent\n"
        f"RunEvent.objects.filter(run_id={run!r}, seq__gte=1).delete()\n"
    )
    with _stream(corpus, run) as answer:
        body = b"".join(answer.iter_content(65536))
    assert body.startswith(b"id: 0\n"), body[:200]
    assert b"event: end" in body, body[-300:]


def slow_readers(corpus: Any) -> None:
    """A second run's log holds 40 MB. Three clients open its stream and never read; a fourth
    reads it whole. The web process grows by a few buffers, not by what the streams have not
    sent (the case's ``server_growth_mib``)."""
    run = corpus.names["large"]
    corpus.shell(
        "from editor.models import Run, RunEvent\n"
        f"run = Run.objects.get(pk={run!r})\n"
        "start = run.event_count\n"
        f"blob = 'x' * {BLOB}\n"
        f"for first in range(start, start + {EVENTS}, 100):\n"
        "    RunEvent.objects.bulk_create([RunEvent(run=run, seq=seq, kind='Note',\n"
        "        recorded_at='2026-01-01T00:00:00Z', payload={'blob': blob})\n"
        f"        for seq in range(first, min(first + 100, start + {EVENTS}))])\n"
        f"Run.objects.filter(pk=run.pk).update(event_count=start + {EVENTS})\n"
    )
    address = urlsplit(corpus.server.url)
    request = (
        f"GET /v1/runs/{run}/events HTTP/1.1\r\nHost: {address.hostname}:{address.port}\r\n"
        f"Accept: text/event-stream\r\nAuthorization: Bearer {corpus.names['token']}\r\n\r\n"
    ).encode()
    silent = []
    for _ in range(SLOW_READERS):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((address.hostname, address.port))
        sock.sendall(request)
        silent.append(sock)
    try:
        with _stream(corpus, run) as answer:
            read = sum(len(chunk) for chunk in answer.iter_content(65536))
        assert read > BLOB * EVENTS, read
        # The silent clients' streams are still open, each held at its buffer.
        first = silent[0].recv(64)
        assert first.startswith(b"HTTP/1.1 200"), first
    finally:
        for sock in silent:
            sock.close()


CASE = {
    "found": [],
    "attack": (
        "A run's log with a gap (a prune interrupted between batches): its streams spun a core "
        "asking for the missing events and never ended. Three clients that open a stream of a "
        "40 MB log and never read: each stream read 500 envelopes (25 MB) at a time into memory"
    ),
    "bounds": {"seconds": 60, "server_growth_mib": 40},
    "steps": [
        {"do": "store_graph", "graph": GATE},
        {"do": "start_run", "input": {}},
        {"do": "wait_run", "expect": {"status": {"state": "suspended"}}},
        {"do": "python", "call": pruned},
        {"do": "start_run", "input": {"second": True}, "save_as": "large"},
        {"do": "wait_run", "run": "{{large}}", "expect": {"status": {"state": "suspended"}}},
        {"do": "python", "call": slow_readers},
    ],
}
