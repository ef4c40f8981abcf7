"""The **Runs** page's list (spec 06, *Runs*): a page of runs, newest first, kept by the list's
filters (:mod:`editor.services.runs.filters`), each with its document's title and who started
it, read in the one query of :func:`editor.services.runs.run_rows`."""

from __future__ import annotations

from dataclasses import dataclass

from editor.services.paging import DEFAULT_LIMIT
from editor.services.runs import run_rows
from editor.services.runs.agent_runs import agent_names
from editor.services.runs.filters import NO_RUN_FILTER, RunFilter
from editor.services.runs.rows import RunInfo, info

__all__ = ["RunRow", "RunRows", "list_run_rows"]


@dataclass(frozen=True, slots=True)
class RunRow:
    run: RunInfo
    document_title: str | None
    started_by: str | None
    #: The document was deleted (kept for its frozen versions, without an editor to link).
    document_deleted: bool = False
    #: An agent run's agent name, when the agent has one.
    agent_name: str | None = None


@dataclass(frozen=True, slots=True)
class RunRows:
    rows: list[RunRow]
    next: str | None


def list_run_rows(
    filters: RunFilter = NO_RUN_FILTER, *, cursor: str | None = None, limit: int = DEFAULT_LIMIT
) -> RunRows:
    """A page of the runs list. Raises ``InvalidCursor``."""
    page = run_rows(filters, cursor=cursor, limit=limit)
    # The names of the page's agent runs' agents: one query for the page, not one a row.
    names = agent_names({row.agent for row in page.items if row.agent})
    rows = [
        RunRow(
            info(row),
            row.document.title if row.document is not None else None,
            row.created_by.get_username() if row.created_by is not None else None,
            row.document is not None and row.document.deleted_at is not None,
            names.get(row.agent),
        )
        for row in page.items
    ]
    return RunRows(rows, page.next)
