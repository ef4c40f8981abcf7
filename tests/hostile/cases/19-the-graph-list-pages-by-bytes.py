"""Found 11: ``GET /v1/graphs`` answered 54 MB for 4 large graphs, even with ``?limit=``."""

import json
from typing import Any

from tests.hostile.documents import wide_graph

GRAPHS = 4
PAGE_MAX_BYTES = 1 << 20  # editor.services.paging: a page stops before 1 MiB of summaries


def page_through(corpus: Any) -> None:
    """Each page stays near 1 MiB whatever ``limit`` asks for, and the cursor leads to every
    graph; the unpaged list keeps the reference's shape (no ``next``)."""
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {"limit": 50, **({"cursor": cursor} if cursor else {})}
        answer = corpus.request("GET", "/v1/graphs", params=params)
        assert answer.status_code == 200, answer.text[:500]
        assert len(answer.content) < PAGE_MAX_BYTES + 64 * 1024, len(answer.content)
        body = answer.json()
        seen += [item["graph"] for item in body["graphs"]]
        pages += 1
        cursor = body.get("next")
        if cursor is None:
            break
    stored = [corpus.names[f"graph{n}"] for n in range(GRAPHS)]
    assert set(stored) <= set(seen)
    assert pages >= GRAPHS  # one wide graph per page
    unpaged = corpus.request("GET", "/v1/graphs").json()
    assert "next" not in unpaged
    assert set(stored) <= {item["graph"] for item in unpaged["graphs"]}
    assert len(json.dumps(unpaged)) > GRAPHS * PAGE_MAX_BYTES / 2


CASE = {
    "found": 11,
    "attack": (
        "Four stored graphs whose summaries are large (3,000 unconnected nodes with 128-"
        "character ids: each lists every id as an entry and a terminal node, ~800 kB), then "
        "`GET /v1/graphs?limit=50`: a page used to hold every one of them"
    ),
    "bounds": {"seconds": 60},
    "steps": [
        *[
            {
                "do": "store_graph",
                "graph": wide_graph(n, nodes=3000, id_length=128),
                "save_as": f"graph{n}",
            }
            for n in range(GRAPHS)
        ],
        {"do": "python", "call": page_through},
    ],
}
