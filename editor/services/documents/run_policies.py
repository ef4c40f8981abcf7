"""A document's approval policy as runs meet it: the policy a run records when it starts
(:func:`bound_policy`, read by ``runs.start_run`` and forks), and the waiting cards whose run
recorded another policy than the one in force (:func:`keeping_old`), which the Approvals page
counts. The stored rows are read here as :mod:`.approvals` reads them (``docs/inbox.md``,
*Approval policies*).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from editor.engine.approvals import (
    Expiry,
    GatePolicy,
    RunPolicy,
    default_gate,
    gate_nodes,
    gate_policy_of,
)
from editor.engine.states import PARKED
from editor.graph import Graph, MalformedDocument, parse_document
from editor.graph.model import GateNode
from editor.models import Document, DraftRevision, Run, Version
from editor.models import GatePolicy as GatePolicyRow

__all__ = ["bound_policy", "draft_gates", "keeping_old", "policy_of", "row_values", "rows_of"]

_PARKED = tuple(sorted(state.value for state in PARKED))


def policy_of(row: GatePolicyRow) -> GatePolicy:
    """A stored gate's policy."""
    expiry = None
    if row.on_expiry == "escalate":
        expiry = Expiry(
            "escalate", groups=tuple(row.escalate_groups), users=tuple(row.escalate_users)
        )
    elif row.on_expiry == "resolve":
        expiry = Expiry("resolve", value=row.resolve_with)
    return GatePolicy(
        groups=tuple(row.decider_groups),
        users=tuple(row.decider_users),
        four_eyes=row.four_eyes,
        quorum=row.quorum,
        due=row.due_seconds,
        remind_at=row.remind_percent,
        on_expiry=expiry,
    )


def row_values(policy: GatePolicy) -> dict[str, Any]:
    """A gate's policy as the columns of its row."""
    expiry = policy.on_expiry
    return {
        "decider_groups": list(policy.groups),
        "decider_users": list(policy.users),
        "four_eyes": policy.four_eyes,
        "quorum": policy.quorum,
        "due_seconds": policy.due,
        "remind_percent": policy.remind_at,
        "on_expiry": expiry.action if expiry is not None else "",
        "escalate_groups": list(expiry.groups) if expiry is not None else [],
        "escalate_users": list(expiry.users) if expiry is not None else [],
        "resolve_with": expiry.value if expiry is not None else None,
    }


def rows_of(document: Document) -> dict[str, GatePolicyRow]:
    """The gates a document names, by gate id (one query)."""
    rows = GatePolicyRow.objects.filter(document=document).select_related("updated_by")
    return {row.gate: row for row in rows}


def draft_gates(document: Document) -> dict[str, GateNode] | None:
    """The gates of a document's draft by id; ``None`` when it does not parse."""
    try:
        graph = parse_document(document.draft.text)
    except MalformedDocument:
        return None
    return gate_nodes(graph)


def keeping_old(document: Document, current: Mapping[str, GatePolicy]) -> dict[str, int]:
    """Per gate, the waiting cards whose run recorded another policy than ``current``'s: the
    document's parked runs, and the parked runs started from a graph hash alone that this
    document froze first (whose cards show it, and whose policy is its)."""
    graphs = set(Version.objects.filter(document=document).values_list("graph_id", flat=True))
    firsts: dict[str, int] = {}
    for digest, owner in (
        Version.objects.filter(graph_id__in=graphs)
        .order_by("document_id", "number")
        .values_list("graph_id", "document_id")
    ):
        firsts.setdefault(digest, owner)
    mine = {digest for digest, owner in firsts.items() if owner == document.pk}
    parked = Run.objects.filter(
        parked_at__isnull=False, state__in=_PARKED, test_revision__isnull=True
    )
    runs = parked.filter(document=document) | parked.filter(document__isnull=True, graph__in=mine)
    counts: dict[str, int] = {}
    for recorded, status in runs.values_list("approval_policy", "status"):
        for item in (status or {}).get("pending") or ():
            node = str(item.get("node"))
            if item.get("kind") != "gate" or item.get("wait") == "signal" or node not in current:
                continue
            if gate_policy_of(recorded, node) != current[node]:
                counts[node] = counts.get(node, 0) + 1
    return counts


def _authors(version: Version) -> tuple[str, ...]:
    """Who wrote a frozen version: who froze it, and who saved the draft revision it froze
    (both kept however old: the version's row, the frozen revision's row)."""
    names = []
    if version.frozen_by is not None:
        names.append(version.frozen_by.get_username())
    if version.revision is not None:
        saved = (
            DraftRevision.objects.filter(document_id=version.document_id, number=version.revision)
            .select_related("created_by")
            .first()
        )
        if saved is not None and saved.created_by is not None:
            names.append(saved.created_by.get_username())
    return tuple(dict.fromkeys(names))


def bound_policy(document: Document | None, graph_hash: str, graph: Graph) -> dict[str, Any] | None:
    """The policy a run of ``graph`` records when it starts (``approval_policy``): every gate
    of the graph, as the document names it or by its defaults, and the authors of the
    version. The document is the run's, else the first that froze the graph (the one its
    cards show). ``None`` for a graph without gates, or one no document froze (spec 06's rule
    applies, as before policies)."""
    gates = gate_nodes(graph)
    if not gates:
        return None
    versions = Version.objects.filter(graph_id=graph_hash).select_related("frozen_by", "document")
    if document is not None:
        version = versions.filter(document=document).order_by("number").first()
    else:
        version = versions.order_by("document_id", "number").first()
        document = version.document if version is not None else None
    if document is None:
        return None
    rows = rows_of(document)
    default = default_gate(four_eyes=document.four_eyes_default)
    policy = RunPolicy(
        gates={gate: policy_of(rows[gate]) if gate in rows else default for gate in gates},
        authors=_authors(version) if version is not None else (),
        document=document.slug,
    )
    return policy.as_record()
