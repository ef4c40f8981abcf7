"""Found (issue 20, *nothing has a quota*): agents and graphs were stored without limit (case 50
floods drafts; these are the other two things an author stores)."""

import json
from typing import Any

from tests.hostile.quota_users import refused, users_with_limits

QUOTA = 1 << 20  # each attacker's own GATEHOUSE_QUOTA_STORED_BYTES: 1 MiB
BIG = 150_000  # bytes of text in each graph and each agent
POSTS = 10


def a_graph(number: int) -> dict[str, Any]:
    """A valid graph of about ``BIG`` bytes, a new one for each ``number``."""
    schema = {"title": f"flood {number}", "description": str(number % 10) * BIG}
    gate = {"kind": "gate", "payload": {"id": "g", "approval_schema": schema}}
    return {"schema_version": 1, "nodes": [gate], "edges": []}


def an_agent(number: int) -> dict[str, Any]:
    return {"name": f"hoard-{number}", "model": "echo", "prompt": str(number % 10) * BIG}


FLOODS = {"graph_hoarder": ("/v1/graphs", a_graph), "agent_hoarder": ("/v1/agents", an_agent)}


def flood(corpus: Any, name: str) -> int:
    """``POSTS`` new things posted as ``name``: the first ones stored, then each refused
    ``413`` naming the quota; how many were stored. Then the first one again: what is stored
    already costs nothing, so it is accepted though the quota is full."""
    path, body = FLOODS[name]
    stored = 0
    for number in range(POSTS):
        answer = corpus.request("POST", path, client=name, json=body(number))
        if answer.status_code == 201:
            assert stored == number, f"{path}: one was stored after the quota refused one"
            stored += 1
            continue
        error = refused(answer, 413, "quota_exceeded", "GATEHOUSE_QUOTA_STORED_BYTES")
        assert error["details"]["limit"] == QUOTA, error
    assert 3 <= stored < POSTS, stored
    again = corpus.request("POST", path, client=name, json=body(0))
    assert again.status_code == 201, again.text[:500]
    return stored


def floods(corpus: Any) -> None:
    users_with_limits(corpus, {name: {"stored_bytes": QUOTA} for name in FLOODS})
    stored = {name: flood(corpus, name) for name in FLOODS}
    code = (
        "import json\n"
        "from editor.models import AgentDefinition, FrozenGraph, UserUsage\n"
        "print('KEPT', json.dumps({name: {\n"
        "    'stored_bytes': UserUsage.objects.get(user__username=name).stored_bytes,\n"
        "    'graphs': FrozenGraph.objects.filter(created_by__username=name).count(),\n"
        "    'agents': AgentDefinition.objects.filter(created_by__username=name).count(),\n"
        f"}} for name in {list(FLOODS)!r}}}))\n"
    )
    kept = json.loads(corpus.shell(code).split("KEPT ")[-1])
    for name, things in (("graph_hoarder", "graphs"), ("agent_hoarder", "agents")):
        # Filled up to the quota, never past it; nothing refused was kept.
        assert QUOTA - 2 * BIG < kept[name]["stored_bytes"] <= QUOTA, kept
        assert kept[name][things] == stored[name], kept


CASE = {
    "found": [],
    "attack": (
        "Two authors store new graphs and new agent definitions of 150 kB in a loop: nothing "
        "bounded what they kept; now each stops at their stored-bytes quota with 413 "
        "quota_exceeded naming GATEHOUSE_QUOTA_STORED_BYTES, and what they keep stays within it"
    ),
    # Most of the time is manage.py shell creating the attackers and reading what they kept.
    "bounds": {"seconds": 30},
    "steps": [{"do": "python", "call": floods}],
}
