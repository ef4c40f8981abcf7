"""Found in issue 20 (*Reads are unbounded in bytes*): ``GET /v1/runs/{id}/graph`` and
``/replay`` decoded the whole log at once to fold a few fields of each event."""

from typing import Any

from tests.hostile.large_runs import seed_steps

READERS = 3


def fold(corpus: Any) -> None:
    """The graph and the replay of the large run, a few times each: the same answers as for a
    small run of the same graph."""
    run = corpus.names["run"]
    for _ in range(READERS):
        graph = corpus.request("GET", f"/v1/runs/{run}/graph", client="api_nobody")
        assert graph.status_code == 200, graph.text[:500]
        assert graph.json()["nodes"] == [{"node": "t", "state": "exited"}]
        replay = corpus.request("GET", f"/v1/runs/{run}/replay", client="api_nobody")
        assert replay.status_code == 200, replay.text[:500]
        folded = replay.json()
        assert folded["status"]["state"] == "completed"
        assert folded["next_seq"] == corpus.names["events"]
        assert "pending" not in folded


CASE = {
    "found": [],
    "attack": (
        "`GET /v1/runs/{id}/graph` and `/replay` of a ~100 MB run, as a user with no role, "
        "three times each (issue 20: each decoded the whole log at once)"
    ),
    "bounds": {"seconds": 240, "server_growth_mib": 64},
    "steps": [*seed_steps(), {"do": "python", "call": fold}],
}
