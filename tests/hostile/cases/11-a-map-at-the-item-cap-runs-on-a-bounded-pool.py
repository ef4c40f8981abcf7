"""Found 5: unbounded map concurrency."""

ITEMS = 300  # GATEHOUSE_RUN_MAX_MAP_ITEMS of the corpus

WIDE_MAP = {
    "schema_version": 1,
    "nodes": [
        {
            "kind": "map",
            "payload": {
                "id": "m",
                "over": "items",
                "concurrency": ITEMS,
                "body": {"kind": "node", "value": "each"},
            },
        },
        {"kind": "tool", "payload": {"id": "each", "tool": "echo"}},
    ],
    "edges": [],
}

CASE = {
    "found": 5,
    "attack": (
        f"A map that asks for all its items at once (`concurrency` {ITEMS}) over exactly the "
        f"item cap (GATEHOUSE_RUN_MAX_MAP_ITEMS, {ITEMS} here): it used to start one thread and "
        "one database connection per item (a 10,000-item map peaked at ~9,500 threads and "
        "1.7 GB), and a map at the cap could never finish. Then one item more than the cap"
    ),
    # GATEHOUSE_RUN_MAP_CONCURRENCY is 8: the worker's own threads, 8 map threads, their calls.
    "bounds": {"seconds": 60, "worker_threads": 30},
    "steps": [
        {"do": "store_graph", "graph": WIDE_MAP},
        {"do": "start_run", "input": {"items": list(range(ITEMS))}},
        {
            "do": "wait_run",
            "expect": {"status": {"state": "completed", "output": list(range(ITEMS))}},
        },
        {"do": "start_run", "input": {"items": list(range(ITEMS + 1))}},
        {
            "do": "wait_run",
            "expect": {
                "status": {
                    "state": "failed",
                    "error": f"map node `m`: {ITEMS + 1} items is more than {ITEMS} "
                    "(GATEHOUSE_RUN_MAX_MAP_ITEMS)",
                }
            },
        },
    ],
}
