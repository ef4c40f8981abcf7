"""Found (issue 20): a 9,999-node echo chain would store ~33 GB of events in one run."""

import json
from typing import Any

NODES = 9_999
RUN_MAX_BYTES = 4 << 20  # this attack's worker: GATEHOUSE_RUN_MAX_BYTES of 4 MiB
INPUT = "x" * 60_000  # each node records it three times (request, completion, exit)

CHAIN = {
    "schema_version": 1,
    "nodes": [{"kind": "tool", "payload": {"id": f"n{i}", "tool": "echo"}} for i in range(NODES)],
    "edges": [{"from": f"n{i}", "to": f"n{i + 1}"} for i in range(NODES - 1)],
}


def bounded_log(corpus: Any) -> None:
    events = [item["event"] for item in corpus.events()]
    assert events[-1]["kind"] == "RunFailed", events[-1]["kind"]
    # What was recorded before the failure is within the limit, and far short of the chain.
    recorded = sum(len(json.dumps(event["payload"])) for event in events[:-1])
    assert recorded <= RUN_MAX_BYTES * 1.1, recorded
    entered = sum(1 for event in events if event["kind"] == "NodeEntered")
    assert 10 < entered < 100, entered


CASE = {
    "found": [],
    "attack": (
        "A chain of 9,999 echo tools run with a 60 kB input: each node records the value "
        "three times, ~33 GB for the run, with nothing to stop it; now the run fails at "
        "GATEHOUSE_RUN_MAX_BYTES with its reason, its log within the limit"
    ),
    "worker": {"GATEHOUSE_RUN_MAX_BYTES": str(RUN_MAX_BYTES)},
    "bounds": {"seconds": 60},
    "steps": [
        {"do": "store_graph", "graph": CHAIN},
        {"do": "start_run", "input": INPUT},
        {
            "do": "wait_run",
            "expect": {
                "status": {
                    "state": "failed",
                    "code": "limit_exceeded",
                    "error": {
                        "$startswith": f"the run's events would come to more than "
                        f"{RUN_MAX_BYTES} bytes in all (GATEHOUSE_RUN_MAX_BYTES)"
                    },
                }
            },
        },
        {"do": "python", "call": bounded_log},
    ],
}
