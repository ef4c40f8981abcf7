"""Found 6: a burst of views of large graphs held every web worker, and ``/healthz`` waited."""

import threading
from typing import Any

from tests.hostile.documents import dense_graph

READERS = 12
TOO_LARGE = "This graph is too large to draw here"
BUSY = "The server is drawing other graphs right now"


def burst(corpus: Any) -> None:
    """Twelve people open the pages of six slow graphs at once. At most
    GATEHOUSE_GRAPHVIZ_MAX_PROCESSES (2) ``dot`` processes run (the corpus's bound on the web
    process); every page says why it has no drawing (too large, or the server busy drawing
    others: try again), and the health check answers while most of them still wait."""
    digests = [corpus.names[f"graph{n}"].removeprefix("sha256:") for n in range(6)]
    pages: list[str] = []
    lock = threading.Lock()

    def read(digest: str) -> None:
        answer = corpus.request("GET", f"/g/{digest}/", client="browser")
        with lock:
            pages.append(answer.text)

    readers = [
        threading.Thread(target=read, args=(digests[n % len(digests)],), daemon=True)
        for n in range(READERS)
    ]
    started = corpus.dot_started()
    for reader in readers:
        reader.start()
    corpus.wait(lambda: corpus.dot_started() > started, "a reader started dot")

    health = corpus.request("GET", "/healthz", client="anonymous")
    with lock:
        answered_before = len(pages)

    assert health.status_code == 200
    assert answered_before <= READERS // 2, (
        f"/healthz answered only after {answered_before} of {READERS} canvas views"
    )
    for reader in readers:
        reader.join(corpus.left())
        assert not reader.is_alive(), "a canvas view did not answer in time"
    unexplained = [page for page in pages if TOO_LARGE not in page and BUSY not in page]
    assert not unexplained, unexplained[0][:3000]


CASE = {
    "found": 6,
    "attack": (
        "A burst of views of graphs that are slow to lay out (twelve readers, six graphs like "
        "12-…'s): they used to hold every web worker while `dot` ran, with no cap on how many "
        "`dot` processes ran at once, and `/healthz` waited behind them"
    ),
    "bounds": {"seconds": 40},
    "steps": [
        *[
            {"do": "store_graph", "graph": dense_graph(seed=140 + n), "save_as": f"graph{n}"}
            for n in range(6)
        ],
        {"do": "python", "call": burst},
    ],
}
