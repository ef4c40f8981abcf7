"""Found in issue 20 (*Reads are unbounded in bytes*): a node's detail on the run page decoded
the whole log, and wrote every value of every call of the node whole into the page (a node of
120 calls of 800 kB: a page of hundreds of megabytes)."""

from typing import Any

from tests.hostile.large_runs import seed_steps

#: The node's detail, whatever its values weigh: 20 instances of a few calls of 16 KiB values
#: at most (here one instance of 121 calls).
PAGE_BYTES = 8 * 1024 * 1024


def read_the_node(corpus: Any) -> None:
    """The detail of the node that made the calls: each value cut, saying where the whole of
    it is; the counts are the log's."""
    run = corpus.names["run"]
    for client in ("browser_nobody", "browser"):
        detail = corpus.request("GET", f"/runs/{run}/node/", params={"node": "t"}, client=client)
        assert detail.status_code == 200, detail.text[:500]
        assert len(detail.content) < PAGE_BYTES, len(detail.content)
        assert "cut:" in detail.text, detail.text[:2000]
        assert "payload)" in detail.text


CASE = {
    "found": [],
    "attack": (
        "The detail of a node that made 120 tool calls of ~800 KiB each, as a user with no role "
        "and as the owner (issue 20: the page decoded the whole log and wrote every value whole)"
    ),
    "bounds": {"seconds": 240, "server_growth_mib": 80},
    "steps": [*seed_steps(), {"do": "python", "call": read_the_node}],
}
