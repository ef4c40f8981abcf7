"""Found in issue 20 (*Reads are unbounded in bytes*): four slow readers of a large run's
**Download log** (``/runs/<id>/log.jsonl``) took the web process to 1.8 GB: each held a slice
of 500 events, whatever their size, while the reader took its time."""

import json
from typing import Any

from tests.hostile.large_runs import seed_steps

READERS = 4


def read_slowly(corpus: Any) -> None:
    """Four downloads at once, each stopped after its first 64 KiB while the others start
    (the server then holds what each has produced and not yet sent), then read to the end:
    every log is whole, one envelope a line, in order."""
    url = f"{corpus.server.url}/runs/{corpus.names['run']}/log.jsonl"
    # The session itself, not ``corpus.request``, which reads every answer to its end.
    browser = corpus.clients["browser_nobody"]
    answers = [browser.get(url, stream=True, timeout=corpus.left()) for _ in range(READERS)]
    parts = []
    for answer in answers:
        assert answer.status_code == 200, answer.text[:500]
        parts.append(answer.raw.read(64 * 1024))
    for part, answer in zip(parts, answers, strict=True):
        text = part + answer.raw.read()
        seqs = [json.loads(line)["seq"] for line in text.decode().splitlines()]
        assert seqs == list(range(corpus.names["events"])), (len(text), seqs[:5], seqs[-5:])


CASE = {
    "found": [],
    "attack": (
        f"{READERS} slow readers of **Download log** of a ~100 MB run, as a user with no role "
        "(issue 20: four slow readers took the web process to 1.8 GB)"
    ),
    "bounds": {"seconds": 240, "server_growth_mib": 64},
    "steps": [*seed_steps(), {"do": "python", "call": read_slowly}],
}
