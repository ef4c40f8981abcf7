"""The runs list's filters, shared by **Runs** (``/runs/``) and ``GET /v1/runs``.

============ =================================================================================
parameter    keeps
============ =================================================================================
``state``    runs in one state (``status`` in the API, the reference's name)
``kind``     ``signal``: runs suspended on a signal wait, **Waiting on a system** (spec 08)
``graph``    one graph's runs (its full hash)
``document`` the runs started from this document (its slug): those the list shows it beside
``label``    runs carrying a label: ``key=value`` (split at the first ``=``), or ``key`` for any
             value; given several times, runs carrying all of them
``person``   who started the run (username)
``from``     runs started on or after this day (``YYYY-MM-DD``, UTC)
``to``       runs started on or before this day (``YYYY-MM-DD``, UTC)
============ =================================================================================

Every filter is served by an index (``editor.models.Run``; the PostgreSQL-only test
``tests/integration/test_run_list_indexes.py`` reads the plans), and the list is paged by a cursor
on ``(created_at, id)``, so a page costs the same few queries on any number of runs. Reading is
strict, as the inbox's filters are: anything unreadable is :class:`InvalidRequest` naming the
parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Q, QuerySet, Subquery
from django.db.models.fields.json import KeyTextTransform
from django.db.models.lookups import Exact

from editor.engine.states import RunState
from editor.models import Document, Run
from editor.services.documents.graphs import is_graph_hash
from editor.services.errors import InvalidRequest
from editor.services.filters import read_days, start_of
from editor.services.storable import nul_path

__all__ = ["MAX_LABELS", "NO_RUN_FILTER", "STATES", "RunFilter", "read_run_filter"]

#: Every state a run can be in, in the order the engine defines them.
STATES = tuple(state.value for state in RunState)
#: Labels a filter may name at once (a run carries at most 16).
MAX_LABELS = 16
_MAX_LENGTH = {"graph": 80, "document": 64, "person": 150, "label": 64 + 1 + 256}


@dataclass(frozen=True, slots=True)
class RunFilter:
    """What the runs list keeps; every part optional (``None``, or no labels: no condition)."""

    state: str | None = None
    graph: str | None = None
    document: str | None = None
    #: ``(key, value)`` pairs; a value of ``None`` asks only for the key.
    labels: tuple[tuple[str, str | None], ...] = ()
    person: str | None = None
    since: date | None = None
    until: date | None = None
    #: Test runs of drafts instead of the others: they are listed only when asked for.
    tests: bool = False
    #: ``"signal"``: suspended runs a system owes an input (their status says ``kind``).
    kind: str | None = None

    def __bool__(self) -> bool:
        return self != NO_RUN_FILTER

    def params(self, state_name: str = "state") -> list[tuple[str, str]]:
        """The filter as query parameters, for links that keep it (``status`` in the API)."""
        pairs = [
            (state_name, self.state),
            ("kind", self.kind),
            ("graph", self.graph),
            ("document", self.document),
            *(("label", key if value is None else f"{key}={value}") for key, value in self.labels),
            ("person", self.person),
            ("from", self.since.isoformat() if self.since else None),
            ("to", self.until.isoformat() if self.until else None),
            ("test", "true" if self.tests else None),
        ]
        return [(name, value) for name, value in pairs if value is not None]

    @property
    def matches_nothing(self) -> bool:
        """Whether a part holds a NUL: nothing stored can match it, and PostgreSQL refuses a
        query that holds one, so the filter keeps nothing without asking the database."""
        return nul_path([self.graph, self.document, self.person, self.labels]) is not None

    def apply(self, runs: QuerySet[Run]) -> QuerySet[Run]:
        """``runs`` narrowed to what this filter keeps."""
        if self.matches_nothing:
            return runs.none()
        runs = runs.filter(test_revision__isnull=not self.tests)
        if self.state is not None:
            runs = runs.filter(state=self.state)
        if self.kind is not None:
            # Few runs wait on a system: the state's index narrows them, the status says which.
            runs = runs.filter(state=RunState.SUSPENDED.value)
            runs = runs.filter(Exact(KeyTextTransform("kind", "status"), self.kind))
        if self.graph is not None:
            # Text that is not a graph's hash names none.
            runs = runs.filter(graph_id=self.graph) if is_graph_hash(self.graph) else runs.none()
        # The document's and the person's ids as subqueries of one row, not joins: the
        # database then reads the list's index for that one id in the list's order.
        if self.document is not None:
            document = Document.objects.filter(slug=self.document).order_by().values("id")[:1]
            runs = runs.filter(document_id=Subquery(document))
        if self.person is not None:
            people = get_user_model().objects.order_by()
            person = people.filter(username=self.person).values("id")[:1]
            runs = runs.filter(created_by_id=Subquery(person))
        for key, value in self.labels:
            runs = runs.filter(_label(key, value))
        if self.since is not None:
            runs = runs.filter(created_at__gte=start_of(self.since))
        if self.until is not None:
            runs = runs.filter(created_at__lt=start_of(self.until + timedelta(days=1)))
        return runs


NO_RUN_FILTER = RunFilter()


def _label(key: str, value: str | None) -> Any:
    """A label condition. On PostgreSQL, JSON containment and key existence, which the GIN
    index on ``labels`` serves; elsewhere, the key's text."""
    if value is None:
        return Q(labels__has_key=key)
    if connection.vendor == "postgresql":
        return Q(labels__contains={key: value})
    return Exact(KeyTextTransform(key, "labels"), value)


def _text(params: Mapping[str, Any], name: str, *, strip: bool = True) -> str | None:
    raw = params.get(name)
    text = str(raw) if raw is not None else ""
    if strip:
        text = text.strip()
    if not text.strip():
        return None
    if len(text) > _MAX_LENGTH.get(name, 10):
        raise InvalidRequest(f"`{name}` is too long", name)
    return text


def _labels(values: list[str]) -> tuple[tuple[str, str | None], ...]:
    if len(values) > MAX_LABELS:
        raise InvalidRequest(f"at most {MAX_LABELS} `label` filters at once", "label")
    labels: list[tuple[str, str | None]] = []
    for text in values:
        key, equals, value = text.partition("=")
        if not key:
            raise InvalidRequest("`label` must be key=value, or a key alone", "label")
        labels.append((key, value if equals else None))
    return tuple(labels)


def read_run_filter(params: Any, *, state_name: str = "state") -> RunFilter:
    """The filter in query parameters (a ``QueryDict``, or a dict whose ``label`` may be a
    list); blank ones are ignored. Raises :class:`InvalidRequest` naming the parameter."""
    state = _text(params, state_name)
    if state is not None and state not in STATES:
        raise InvalidRequest(f"`{state_name}` must be one of: {', '.join(STATES)}", state_name)
    raw_labels = params.getlist("label") if hasattr(params, "getlist") else params.get("label")
    if isinstance(raw_labels, str):
        raw_labels = [raw_labels]
    label_texts = [
        # Not stripped: a label's value may begin or end with a space.
        text
        for text in (_text({"label": raw}, "label", strip=False) for raw in raw_labels or ())
        if text
    ]
    kind = _text(params, "kind")
    if kind is not None and kind != "signal":
        raise InvalidRequest("`kind` must be `signal` (runs waiting on a system)", "kind")
    since, until = read_days(_text(params, "from"), _text(params, "to"))
    test = _text(params, "test")
    if test not in (None, "true", "false"):
        raise InvalidRequest("`test` must be `true` or `false`", "test")
    return RunFilter(
        state=state,
        graph=_text(params, "graph"),
        document=_text(params, "document"),
        labels=_labels(label_texts),
        person=_text(params, "person"),
        since=since,
        until=until,
        tests=test == "true",
        kind=kind,
    )
