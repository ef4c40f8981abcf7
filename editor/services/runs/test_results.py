"""The latest test run drawn over the draft in the editor (issue 24, *Results on the canvas*).

:func:`canvas_results` reads the document's newest test run as the run page reads a run
(``engine.trace`` through :func:`editor.services.runs.pages.run_trace_of`, its marks through
:func:`~editor.services.runs.pages.run_marks`): each reached node's state and note (how many
items, the case a branch took) at every level, and the edges walked. The editor's canvas keeps
its own layout, so the marks travel as data, by node id, and ``static/js/test-panel.js`` paints
them onto the drawing; a node the draft no longer has is left out there.

:func:`node_result` is a node's detail in that run (:func:`editor.services.runs.nodes.node_detail`
with every value whole), for the node panel beside the form.

A result is *older* when its run tested another revision than the draft's (the editor shows it
greyed, "from revision N").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from editor.models import Run
from editor.services.access import can_author
from editor.services.documents.rows import document_row
from editor.services.errors import InvalidRequest
from editor.services.runs.nodes import NodeDetail, node_detail
from editor.services.runs.pages import is_live, run_marks, run_trace_of
from editor.services.runs.rows import RunInfo, info
from editor.services.runs.test_nodes import node_write_tools

__all__ = [
    "CanvasResults",
    "NodePanel",
    "NodeResult",
    "canvas_results",
    "latest_test_run",
    "node_panel",
    "node_result",
]

#: The order a summary names the states in.
_STATE_ORDER = ("failed", "waiting", "running", "stopped", "done", "skipped")


@dataclass(frozen=True, slots=True)
class CanvasResults:
    """The latest test run, as the editor draws it over the draft."""

    run: RunInfo
    #: The draft revision it tested, and the node it ran alone (**Execute this node**).
    revision: int | None
    node: str | None
    #: ``{"in": [owner, …], "node", "state", "note"}`` for each node reached.
    marks: list[dict[str, Any]]
    #: ``{"in": [owner, …], "from", "to", "label"}`` for each edge walked.
    walked: list[dict[str, Any]]

    @property
    def live(self) -> bool:
        """The run can still change: the editor listens to its event stream."""
        return is_live(self.run.state)

    @property
    def forked(self) -> bool:
        return self.run.forked_from is not None

    @property
    def summary(self) -> str:
        """The states in words: ``3 done · 1 failed``."""
        counted = Counter(mark["state"] for mark in self.marks)
        return " · ".join(f"{counted[state]} {state}" for state in _STATE_ORDER if counted[state])

    def older_than(self, revision: int) -> bool:
        return self.revision is not None and self.revision != revision

    def data(self, draft_revision: int) -> dict[str, Any]:
        """What the canvas's painter reads (``json_script``)."""
        return {
            "run": self.run.run,
            "state": self.run.state,
            "revision": self.revision,
            "draft_revision": draft_revision,
            "node": self.node,
            "marks": self.marks,
            "walked": self.walked,
        }


@dataclass(frozen=True, slots=True)
class NodeResult:
    """A node's detail in the latest test run that has one, as the node panel shows it."""

    run: RunInfo
    revision: int | None
    detail: NodeDetail | None
    #: Why there is no detail (the run's graph has no such node, it was added since).
    missing: str | None = None

    def older_than(self, revision: int) -> bool:
        return self.revision is not None and self.revision != revision


def latest_test_run(slug: str) -> RunInfo | None:
    """The document's newest test run, if it has one."""
    row = (
        Run.objects.select_related("document")
        .filter(document=document_row(slug), test_revision__isnull=False)
        .order_by("-created_at", "-id")
        .first()
    )
    return info(row) if row is not None else None


def canvas_results(slug: str) -> CanvasResults | None:
    """The marks of the document's newest test run, or ``None`` before its first."""
    run = latest_test_run(slug)
    if run is None:
        return None
    marks = run_marks(run_trace_of(run))
    return CanvasResults(
        run=run,
        revision=(run.test or {}).get("revision"),
        node=(run.test or {}).get("node"),
        marks=[
            {
                "in": list(level),
                "node": node,
                "state": state,
                "note": marks.notes.get((level, node)),
            }
            for (level, node), state in sorted(marks.states.items())
        ],
        walked=[
            {"in": list(level), "from": source, "to": target, "label": label}
            for level, source, target, label in sorted(
                marks.walked, key=lambda edge: (edge[0], edge[1], edge[2], edge[3] or "")
            )
        ],
    )


def node_result(slug: str, node: str, level: Sequence[str] = ()) -> NodeResult | None:
    """The node's detail in the document's newest test run (every value whole), or ``None``
    before its first test run."""
    run = latest_test_run(slug)
    if run is None:
        return None
    revision = (run.test or {}).get("revision")
    try:
        detail = node_detail(run.run, node, level, value_chars=None)
    except InvalidRequest:
        return NodeResult(run, revision, None, "The latest test run's draft had no such node.")
    return NodeResult(run, revision, detail)


@dataclass(frozen=True, slots=True)
class NodePanel:
    """What the node panel shows of a node beside its form: its result in the newest test run,
    and, for an author and a node at the top, **Execute this node** and **Test from here**."""

    slug: str
    node: str
    level: tuple[str, ...]
    revision: int
    result: NodeResult | None
    can_test: bool
    #: The ``write`` tools executing the node would call (confirmed by name).
    writes: list[str]

    @property
    def at_top(self) -> bool:
        return not self.level

    @property
    def older(self) -> bool:
        return self.result is not None and self.result.older_than(self.revision)


def node_panel(user: Any, slug: str, node: str, level: Sequence[str] = ()) -> NodePanel:
    """The node's part of the editor's test results, for ``user``."""
    document = document_row(slug)
    where = tuple(level)
    can_test = can_author(user) and not where
    return NodePanel(
        slug=document.slug,
        node=node,
        level=where,
        revision=document.draft.revision,
        result=node_result(slug, node, where),
        can_test=can_test,
        writes=node_write_tools(slug, node) if can_test else [],
    )
