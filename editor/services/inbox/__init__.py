"""The approval inbox (spec 05 *Inbox*, spec 06 *Approval inbox*): what waits for a person,
and the decisions people made.

**Pending items** are the open items of the runs parked in ``suspended``, ``budget_exceeded``
or ``needs_reconciliation``: each run's ``status["pending"]`` (the engine's fold, stored with
every append), one item per gate, budget or lost write. Runs are read oldest first by
``parked_at`` — when the run's *oldest* open item was recorded, kept by the store — through
the ``(state, parked_at)`` index, and their items are expanded in ``seq`` order. A page is a
constant number of queries however many items it holds: the runs (with their documents), the
versions of the page's graphs, and — only the first time a process meets a graph — the
graph's canonical bytes, from which the node names are read once and kept (frozen graphs
never change).

**The pending count** in the navigation bar counts *runs* waiting for a person, not items:
one ``COUNT`` on the same index, whatever the number of items. A run waiting at several gates
at once (a map of gates) counts once; its cards all appear in the inbox.

**The decision log** (the resolution events, newest first) is :mod:`editor.services.inbox.log`;
the filters both share are :mod:`editor.services.inbox.filters`.

Resolving goes through :func:`editor.services.runs.resume`, the one place that records a
resolution (exactly once, checked against the recorded schema).

The package by concern: :mod:`.items` (an item as a card shows it), :mod:`.names` (the
node-name cache), :mod:`.pending` (the parked runs, expanded and paged), :mod:`.graphs` (the
filter's graphs: the one raw SQL); the inbox for a person (``docs/inbox.md``): :mod:`.queue`
(the views **Mine**, **My groups** and **All** of the waiting cards, and the count of
**Mine**), :mod:`.cards` (a card and its resolution), :mod:`.claims`, :mod:`.bulk` (several
cards decided at once), :mod:`.deadlines` (a card's reminder and due time, acted on once),
:mod:`.notices`, :mod:`.notifications` and :mod:`.webhooks` (what people are told),
:mod:`.log`, :mod:`.entries` and :mod:`.exports` (the decision log).
"""

from editor.services.inbox.graphs import GRAPH_CHOICES, forget_graph_choices, graph_choices
from editor.services.inbox.items import GraphChoice, InboxItem, suggested_limit, with_claim
from editor.services.inbox.names import forget_node_names, node_names
from editor.services.inbox.pending import (
    graph_titles,
    label_of,
    pending_count,
    pending_item,
    pending_items,
)

__all__ = [
    "GRAPH_CHOICES",
    "GraphChoice",
    "InboxItem",
    "forget_graph_choices",
    "forget_node_names",
    "graph_choices",
    "graph_titles",
    "label_of",
    "node_names",
    "pending_count",
    "pending_item",
    "pending_items",
    "suggested_limit",
    "with_claim",
]
