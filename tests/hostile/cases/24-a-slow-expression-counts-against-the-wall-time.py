"""Expression evaluation counts against the run's wall time (issue 11, *Build* 2): a branch
whose conditions compare two long arrays again and again cannot hold a worker past the wall
time and the watchdog's grace."""

CASES = 40
ITEMS = 120_000
#: 85 comparisons of the two arrays, the last one false, so that `&&` evaluates every one;
#: at most 512 characters, the expression language's limit.
CONDITION = "&&".join(["a==b"] * 84 + ["a!=b"])

SLOW_BRANCH = {
    "schema_version": 1,
    "nodes": [
        {
            "kind": "branch",
            "payload": {
                "id": "route",
                "cases": [
                    {"name": f"c{n}", "when": {"kind": "expression", "value": CONDITION}}
                    for n in range(CASES)
                ],
            },
        },
        *[{"kind": "tool", "payload": {"id": f"t{n}", "tool": "echo"}} for n in range(CASES)],
    ],
    "edges": [{"from": "route", "to": f"t{n}", "label": f"c{n}"} for n in range(CASES)],
}

CASE = {
    "found": [4],
    "attack": (
        f"A branch of {CASES} cases, each comparing two {ITEMS:,}-item arrays 85 times (about "
        "five seconds per case, minutes in all) before it turns out false: the engine cannot "
        "check the wall time in the middle of an expression, so the worker's watchdog ends the "
        "drive (2 s of wall time and 2 s of grace here), and the worker, its drive stuck, exits "
        "for its supervisor to start a fresh one"
    ),
    "worker": {"GATEHOUSE_RUN_WALL_TIME": "2", "GATEHOUSE_AGENT_MAX_STEPS": "100"},
    "bounds": {"seconds": 40},
    "steps": [
        {"do": "store_graph", "graph": SLOW_BRANCH},
        {"do": "start_run", "input": {"a": [0] * ITEMS, "b": [0] * ITEMS}},
        {
            "do": "wait_run",
            "expect": {
                "status": {
                    "state": "failed",
                    "code": "limit_exceeded",
                    "error": "the run has been running for more than 2 s "
                    "(GATEHOUSE_RUN_WALL_TIME) and its drive did not stop: the worker's "
                    "watchdog ended it 2 s later (GATEHOUSE_RUN_WATCHDOG_GRACE)",
                }
            },
        },
        {"do": "worker_exit", "status": 70},
        {
            "do": "log",
            "of": "worker",
            "contains": [
                "run {{run}}: its drive is stuck and does not stop; the worker exits (status 70)",
                "in evaluate_condition",
            ],
        },
    ],
}
