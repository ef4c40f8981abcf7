"""The editor's hints and a node's data, for a draft: what :mod:`editor.graph.hints` and
:mod:`editor.graph.dataflow` say of its parsed graph.

Hints are made once per draft text (an answer to a keystroke reads them twice: the list under
the verdict and the fields beside which they are shown), and kept for the few drafts this
process answered last. They are never part of the verdict: the draft's errors, what blocks
**Freeze** and the hash are validation's alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from editor.graph.dataflow import DataFlow, Level
from editor.graph.hints import Hint, document_hints
from editor.presentation.wiring import NodeWiring
from editor.recent import Recent
from editor.services.documents.editing import ParsedDraft

__all__ = ["draft_hints", "node_hints", "node_wiring"]

_hints: Recent[str, tuple[Hint, ...]] = Recent(8)


def draft_hints(draft: ParsedDraft) -> tuple[Hint, ...]:
    """Every hint of the draft (none while it does not parse)."""
    if draft.graph is None:
        return ()
    found = _hints.get(draft.text)
    if found is None:
        found = tuple(document_hints(draft.graph))
        _hints.put(draft.text, found)
    return found


def node_hints(draft: ParsedDraft, node_id: str, level: Level = ()) -> list[Hint]:
    """The hints about one node of ``level``."""
    return [
        hint
        for hint in draft_hints(draft)
        if hint.level == level and hint.node == node_id and hint.code != "duplicate_edge"
    ]


def node_wiring(
    draft: ParsedDraft,
    node_id: str,
    level: Level = (),
    *,
    tested: Callable[[], Any] | None = None,
) -> NodeWiring | None:
    """What flows into and out of ``node_id``, and what its reference fields offer; ``tested``
    gives what it received in the latest test run (asked only when a picker is drawn)."""
    if draft.graph is None:
        return None
    return NodeWiring(DataFlow(draft.graph), level, node_id, tested)
