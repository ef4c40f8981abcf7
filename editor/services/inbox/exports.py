"""The decision log exported whole, as **CSV** or **JSON lines** (``docs/inbox.md``, *The
decision log*), kept by the same filters and kind of entry as the page.

Written a page at a time (:func:`export_page`: at most :data:`PAGE` entries, whose events hold
at most :data:`PAGE_BYTES` of payload, at least one), each page read only once the one before
was sent: an export of any length costs one page of memory, as **Download log** does.

One JSON object a line is an entry as ``GET /v1/inbox/resolved`` gives it. A CSV row has the
same facts in :data:`COLUMNS`, the structured ones (input, votes, policy, detail) as compact
JSON; a cell that a spreadsheet would read as a formula (its first character ``=``, ``+``,
``-``, ``@``, a tab or a carriage return) is written with a leading ``'``.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from editor.services.inbox.entries import Decision
from editor.services.inbox.filters import InboxFilter
from editor.services.inbox.log import decision_log

__all__ = ["COLUMNS", "FORMATS", "PAGE", "PAGE_BYTES", "entry_json", "export_page", "header"]

#: Entries read per page, and the payload bytes their events may hold (at least one event).
PAGE = 200
PAGE_BYTES = 1024 * 1024
#: The formats, by the name ``?format=`` gives them, and their media types.
FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
COLUMNS = (
    "at",
    "entry",
    "kind",
    "run",
    "document",
    "graph_hash",
    "node",
    "scope",
    "by",
    "input",
    "comment",
    "votes",
    "quorum",
    "policy",
    "detail",
    "schema_hash",
)
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def entry_json(entry: Decision) -> dict[str, Any]:
    """An entry as ``GET /v1/inbox/resolved`` gives it (absent fields left out)."""
    found: dict[str, Any] = {
        "entry": entry.entry,
        "kind": entry.kind,
        "run": entry.run,
        "graph_hash": entry.graph_hash,
        "node": entry.node,
        "by": entry.by,
        "at": entry.at,
        "input": entry.input,
    }
    optional = {
        "scope": entry.scope,
        "comment": entry.comment,
        "schema_hash": entry.schema_hash,
        "document": entry.document,
        "vote": True if entry.vote else None,
        "votes": list(entry.votes) or None,
        "quorum": entry.quorum,
        "policy": entry.policy,
        "detail": entry.detail,
    }
    found.update({key: value for key, value in optional.items() if value is not None})
    return found


def _compact(value: Any) -> str:
    # The stored values' own types (a whole number past 64 bits included): the standard
    # library's writer, as the API's.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else _compact(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _csv(rows: list[list[str]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue().encode("utf-8")


def header(format_name: str) -> bytes:
    """What an export starts with: the CSV's header row; nothing for JSON lines."""
    return _csv([list(COLUMNS)]) if format_name == "csv" else b""


def _row(entry: Decision) -> list[str]:
    data = entry_json(entry)
    return [_cell(data.get(column)) for column in COLUMNS]


def export_page(
    format_name: str, filters: InboxFilter, kind: str | None, cursor: str | None
) -> tuple[bytes, str | None]:
    """One page of the export after ``cursor`` (``None``: the first), and the next page's
    cursor (``None``: the last page)."""
    page = decision_log(filters, kind=kind, cursor=cursor, limit=PAGE, max_bytes=PAGE_BYTES)
    if format_name == "csv":
        return _csv([_row(entry) for entry in page.items]), page.next
    lines = "".join(_compact(entry_json(entry)) + "\n" for entry in page.items)
    return lines.encode("utf-8"), page.next
