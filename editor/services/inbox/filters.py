"""The inbox's filters (``docs/inbox.md``), shared by the **Pending** and **Resolved** tabs and
by ``GET /v1/inbox`` and ``GET /v1/inbox/resolved``: they keep what the cards show.

=========== ==================================================================================
parameter   keeps
=========== ==================================================================================
``graph``   one graph (its full hash)
``document`` the items whose card shows this document (its slug): runs started from it, and
            runs started from a graph hash alone whose graph it froze first (the card names
            that document)
``node``    one node id
``person``  Pending: who started the run; Resolved: who decided
``from``    items recorded on or after this day (``YYYY-MM-DD``, UTC)
``to``      items recorded on or before this day (``YYYY-MM-DD``, UTC)
``q``       text in the gate's prompt, or (Resolved) in the decision's comment; any case
``run``     one run (its id): the run page links to its cards this way
=========== ==================================================================================

Reading is strict: a day is ``YYYY-MM-DD`` in ASCII digits, ``from`` cannot be after ``to``,
and every value has a length cap; anything else is :class:`InvalidRequest` naming the
parameter (``400`` in the API, a notice on the page).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from editor.models import Document, Version
from editor.services.errors import InvalidRequest
from editor.services.filters import read_days, start_of
from editor.services.storable import nul_path

__all__ = ["NO_FILTER", "InboxFilter", "document_graphs", "read_filter"]

#: The query parameters, in the order links repeat them.
PARAMETERS = ("graph", "document", "node", "person", "from", "to", "q", "run")
_MAX_LENGTH = {"graph": 80, "document": 64, "node": 200, "person": 150, "q": 200, "run": 36}


@dataclass(frozen=True, slots=True)
class InboxFilter:
    """What the inbox keeps; every part optional (``None``: no condition)."""

    graph: str | None = None
    document: str | None = None
    node: str | None = None
    person: str | None = None
    since: date | None = None
    until: date | None = None
    search: str | None = None
    run: str | None = None

    def __bool__(self) -> bool:
        return any(getattr(self, part.name) is not None for part in fields(self))

    @property
    def matches_nothing(self) -> bool:
        """Whether a part holds a NUL: nothing stored can match it, and PostgreSQL refuses
        a query that holds one, so the filter keeps nothing without asking the database."""
        return (
            nul_path([self.graph, self.document, self.node, self.person, self.search]) is not None
        )

    @property
    def item_level(self) -> bool:
        """Whether the filter looks inside a run's items (not only at the run)."""
        return any(value is not None for value in (self.node, self.since, self.until, self.search))

    @property
    def since_text(self) -> str | None:
        """``from`` as the start of ``recorded_at`` strings (RFC 3339, UTC, fixed width)."""
        return self.since.isoformat() if self.since else None

    @property
    def until_text(self) -> str | None:
        """The day after ``to``: ``recorded_at`` must sort before it."""
        return (self.until + timedelta(days=1)).isoformat() if self.until else None

    @property
    def until_moment(self) -> datetime | None:
        """The start of the day after ``to``, in UTC."""
        if self.until is None:
            return None
        return start_of(self.until + timedelta(days=1))

    def on_run(self, prefix: str = "") -> Q:
        """The parts a run answers itself (one run, its graph, its document), as a condition
        on runs, or with ``prefix`` (``run__``) on their events."""
        condition = Q()
        if self.run is not None:
            condition &= Q(**{f"{prefix}id": self.run})
        if self.graph is not None:
            condition &= Q(**{f"{prefix}graph_id": self.graph})
        if self.document is not None:
            condition &= document_runs(self.document, prefix)
        return condition

    def on_event(self) -> Q:
        """The parts an event answers itself, as a condition on it: its node and when it
        was recorded (the events that opened items, and the resolutions, alike)."""
        condition = Q()
        if self.node is not None:
            condition &= Q(payload__node=self.node)
        if self.since_text is not None:
            condition &= Q(recorded_at__gte=self.since_text)
        if self.until_text is not None:
            condition &= Q(recorded_at__lt=self.until_text)
        return condition

    def params(self) -> dict[str, str]:
        """The filter as query parameters (for links that keep it)."""
        values = {
            "graph": self.graph,
            "document": self.document,
            "node": self.node,
            "person": self.person,
            "from": self.since.isoformat() if self.since else None,
            "to": self.until.isoformat() if self.until else None,
            "q": self.search,
            "run": self.run,
        }
        return {name: value for name, value in values.items() if value is not None}

    def keeps_item(self, node: Any, at: Any, prompt: Any) -> bool:
        """Whether a pending item (its node, ``at`` and prompt) passes the item-level parts."""
        if self.node is not None and node != self.node:
            return False
        at = at if isinstance(at, str) else ""
        if self.since_text is not None and at < self.since_text:
            return False
        if self.until_text is not None and at >= self.until_text:
            return False
        if self.search is not None:
            return isinstance(prompt, str) and self.search.casefold() in prompt.casefold()
        return True


NO_FILTER = InboxFilter()


def read_filter(params: Mapping[str, Any]) -> InboxFilter:
    """The filter in query parameters (a ``QueryDict`` or a dict); blank ones are ignored.
    Raises :class:`InvalidRequest` naming the parameter."""
    values: dict[str, str] = {}
    for name in PARAMETERS:
        raw = params.get(name)
        text = str(raw).strip() if raw is not None else ""
        if not text:
            continue
        if len(text) > _MAX_LENGTH.get(name, 10):
            raise InvalidRequest(f"`{name}` is too long", name)
        values[name] = text
    since, until = read_days(values.get("from"), values.get("to"))
    run = None
    if "run" in values:
        try:
            run = str(uuid.UUID(values["run"]))
        except ValueError:
            raise InvalidRequest(f"`run` must be a run id, not {values['run']!r}", "run") from None
    return InboxFilter(
        graph=values.get("graph"),
        document=values.get("document"),
        node=values.get("node"),
        person=values.get("person"),
        since=since,
        until=until,
        search=values.get("q"),
        run=run,
    )


def document_graphs(slug: str) -> QuerySet[Version, Any]:
    """The graphs whose cards name document ``slug`` when their run has no document: the
    graphs that document froze before any other document did (the card shows the first)."""
    earlier = Version.objects.filter(
        graph_id=OuterRef("graph_id"), document_id__lt=OuterRef("document_id")
    )
    return Version.objects.filter(document__slug=slug).filter(~Exists(earlier)).values("graph_id")


def document_runs(slug: str, prefix: str = "") -> Q:
    """The runs (``prefix``: the path to them, e.g. ``run__``) whose cards show ``slug``.

    The document's id is read first and given as a value, neither a join nor a subquery: with
    a value, PostgreSQL's planner knows how many runs that document has (a subquery made it
    guess a few dozen for one of thousands, and read the whole decision log); the database
    finds its runs through the runs' index on their document."""
    document_id = Document.objects.filter(slug=slug).values_list("id", flat=True).first()
    own = Q(**{f"{prefix}document_id": document_id}) if document_id is not None else Q(pk__in=[])
    return own | Q(
        **{f"{prefix}document__isnull": True, f"{prefix}graph_id__in": document_graphs(slug)}
    )
