"""The inbox for a person (``docs/inbox.md``, *The inbox for a person*): the waiting cards
(``editor.card_models.InboxCard``) in three views, sorted by due time.

=========== =======================================================================================
view        keeps
=========== =======================================================================================
``mine``    the cards this person may decide now, each under its run's recorded policy: a gate
            whose deciders (or escalation) name them, their group or the approvers role, that
            four eyes and their own earlier vote leave to them; a budget or a write to
            reconcile, for an operator
``groups``  the cards whose deciders name a group this person belongs to (or them), whoever
            may decide them now: what their team has on its plate (the approvers role is
            everyone's: the cards it alone decides are not a team's)
``all``     every card (operators)
=========== =======================================================================================

Cards are sorted by due time (no due time last), then oldest first, and paged by a cursor on
that order. A page is a constant number of queries however many cards wait: the cards with
what they show of their runs and documents (one query), the person's groups and roles (one),
the versions that label the runs started without a document (only when the page has some),
and (the first time a process meets a graph) its names. The count of **Mine** (the navigation
bar's) is one ``COUNT`` with the same condition, built once a process for the same person.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from django.contrib.auth import get_user_model
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.json import KeyTransform
from django.utils import timezone

from editor.models import InboxCard, InboxCardName, RunEvent, Version
from editor.services.access import ActingUser, can_operate
from editor.services.errors import InvalidCursor, InvalidRequest, NotAllowed
from editor.services.filters import start_of
from editor.services.inbox.filters import NO_FILTER, InboxFilter
from editor.services.inbox.items import InboxItem
from editor.services.inbox.pending import Claim, Label, first_label, graph_titles, items_of
from editor.services.paging import DEFAULT_LIMIT, Page, decode_cursor, page_of
from editor.services.runs.approvals import Decider, decider

__all__ = [
    "VIEWS",
    "Person",
    "cards_of",
    "mine_count",
    "mine_count_of",
    "person_of",
    "read_view",
    "waiting_cards",
]

#: The views, in the order the page offers them.
VIEWS = ("mine", "groups", "all")
#: The view ``all`` is an operator's: the others are a person's own.
OPERATORS_ONLY = frozenset({"all"})
_OPERATOR_KINDS = ("budget", "reconciliation")


@dataclass(frozen=True, slots=True)
class Person:
    """Who asks, as the views read them: their name, groups and roles (read once)."""

    decider: Decider
    operator: bool

    @property
    def pk(self) -> Any:
        return self.decider.pk


def person_of(user: ActingUser) -> Person:
    """``user`` as the views read them: their groups in one query."""
    return Person(decider(user), can_operate(user))


def read_view(value: Any, person: Person, *, default: str = "mine") -> str:
    """The view ``value`` names (blank: ``default``). Raises :class:`InvalidRequest` naming
    ``view`` for any other value, :class:`NotAllowed` for **All** to anyone but an
    operator."""
    text = str(value).strip() if value is not None else ""
    view = text or default
    if view not in VIEWS:
        raise InvalidRequest(f"`view` must be one of {', '.join(VIEWS)}, not {text[:20]!r}", "view")
    if view in OPERATORS_ONLY and not person.operator:
        raise NotAllowed("only operators see every waiting card (`view=all`)")
    return view


def _names(role: str, names: Any) -> QuerySet[InboxCardName, Any]:
    return InboxCardName.objects.filter(card_id=OuterRef("pk"), role=role, name__in=names)


def _naming(person: Person) -> QuerySet[InboxCardName, Any]:
    """The cards whose deciders name this person or one of their groups, as the ids of a
    subquery that does not depend on the card: PostgreSQL hashes it once (correlated, it was
    costed per card, and a count of 10,000 cards went over the cost that starts JIT)."""
    who = person.decider
    named = Q(role="group", name__in=sorted(who.groups)) | Q(role="user", name=who.username)
    return InboxCardName.objects.filter(named).values("card_id")


def _named(person: Person) -> Q:
    """The gates whose deciders name this person, their groups or the approvers role."""
    return Q(role_decides=True) | Q(pk__in=_naming(person))


def _mine(person: Person) -> Q:
    who = person.decider
    mine = Q(pk__in=[])
    if who.approver:
        allowed = Q(kind="gate") & _named(person) & ~Q(Exists(_names("excluded", [who.username])))
        if who.pk is not None:
            allowed &= ~Q(four_eyes=True, starter_id=who.pk)
        mine |= allowed
    if person.operator:
        mine |= Q(kind__in=_OPERATOR_KINDS)
    return mine


def _groups(person: Person) -> Q:
    """The gates whose deciders name a group of this person's, or them: the approvers role is
    everyone's, so the cards it alone decides are not a team's (they are in **All**)."""
    return Q(kind="gate", pk__in=_naming(person))


def _view(person: Person, view: str) -> Q:
    if view == "mine":
        return _mine(person)
    if view == "groups":
        return _groups(person)
    return Q()


def _filtered(cards: QuerySet[InboxCard, Any], filters: InboxFilter) -> QuerySet[InboxCard, Any]:
    if filters.matches_nothing:
        return cards.none()
    cards = cards.filter(filters.on_run("run__"))
    if filters.person is not None:
        cards = cards.filter(run__created_by__username=filters.person)
    if filters.node is not None:
        cards = cards.filter(node=filters.node)
    if filters.since is not None:
        cards = cards.filter(opened_at__gte=start_of(filters.since))
    if filters.until_moment is not None:
        cards = cards.filter(opened_at__lt=filters.until_moment)
    if filters.search is not None:
        prompt = RunEvent.objects.filter(
            run_id=OuterRef("run_id"),
            seq=OuterRef("seq"),
            payload__reason__icontains=filters.search,
        )
        cards = cards.filter(Exists(prompt))
    return cards


def cards_of(
    person: Person, view: str, filters: InboxFilter = NO_FILTER
) -> QuerySet[InboxCard, Any]:
    """The cards of ``view`` for ``person`` that ``filters`` keeps, unordered."""
    cards = _cards_in(person, view).all()  # a copy: the kept queryset is never read itself
    return _filtered(cards, filters) if filters else cards


@functools.lru_cache(maxsize=512)
def _cards_in(person: Person, view: str) -> QuerySet[InboxCard, Any]:
    """The cards of ``view`` for someone of ``person``'s name, groups and roles: their
    condition built once a process (a person's pages each count their **Mine** for the
    navigation bar, and the inbox pages it too). A queryset is read only through its copies,
    like a view's class-level ``queryset``."""
    return InboxCard.objects.filter(_view(person, view))


_ORDER = (F("due_at").asc(nulls_last=True), "opened_at", "id")


def _after(cursor: str) -> Q:
    due, opened, pk = decode_cursor(cursor, (str, str, int))
    try:
        opened_at = datetime.fromisoformat(opened)
        due_at = datetime.fromisoformat(due) if due else None
    except ValueError:
        raise InvalidCursor() from None
    later = Q(opened_at__gt=opened_at) | Q(opened_at=opened_at, id__gt=pk)
    if due_at is None:
        return Q(due_at__isnull=True) & later
    return Q(due_at__gt=due_at) | Q(due_at__isnull=True) | (Q(due_at=due_at) & later)


def _cursor_key(row: Any) -> list[Any]:
    return [row.due_at.isoformat() if row.due_at else "", row.opened_at.isoformat(), row.id]


def waiting_cards(
    user: ActingUser,
    view: str,
    filters: InboxFilter = NO_FILTER,
    *,
    cursor: str | None = None,
    limit: int = DEFAULT_LIMIT,
    person: Person | None = None,
) -> Page[InboxItem]:
    """A page of ``view`` for ``user``, due first (no due time last), then oldest first."""
    person = person or person_of(user)
    cards = cards_of(person, view, filters)
    if cursor is not None:
        cards = cards.filter(_after(cursor))
    rows = list(
        cards.annotate(
            graph=F("run__graph_id"),
            document_id=F("run__document_id"),
            slug=F("run__document__slug"),
            title=F("run__document__title"),
            policy=F("run__approval_policy"),
            run_starter=F("run__created_by_id"),
            claimer=F("claimed_by__username"),
            # Of the run's status, its open items only.
            pending=KeyTransform("pending", "run__status"),
            version_number=_VERSION,
        )
        .order_by(*_ORDER)
        .values_list(*_COLUMNS, named=True)[: limit + 1]
    )
    page = page_of(rows, limit, _cursor_key)
    now = timezone.now()
    graphs = {row.graph for row in page.items if row.document_id is None}
    versions = graph_titles(graphs) if graphs else {}  # a run started without a document
    pairs: list[tuple[_CardRun, dict[str, Any]]] = []
    labels: dict[str, Label] = {}
    claims: dict[tuple[str, int], Claim] = {}
    for row in page.items:
        raw = next(
            (item for item in row.pending or () if int(item.get("seq", -1)) == row.seq), None
        )
        if raw is None:  # never: the card is written with the status it comes from
            continue
        run = _CardRun(str(row.run_id), row.graph, row.policy, row.run_starter)
        pairs.append((run, raw))
        if row.document_id is not None:
            labels[run.id] = (row.slug, row.title, row.version_number)
        else:
            labels[run.id] = first_label(row.graph, versions)
        if row.claimer is not None and row.claim_until is not None and row.claim_until > now:
            claims[(run.id, row.seq)] = (row.claimer, row.claimed_at, row.claim_until)
    return Page(items_of(pairs, claims, now, labels=labels), page.next)


class _CardRun(NamedTuple):
    """What a card's item reads of its run (``pending.RunFacts``), from the page's row."""

    id: str
    graph_id: str
    approval_policy: Any
    created_by_id: Any


#: The page query's columns: the card's, its run's and document's, who claimed it, and the
#: annotations of :func:`waiting_cards`.
_COLUMNS = (
    "id",
    "run_id",
    "seq",
    "due_at",
    "opened_at",
    "claimed_at",
    "claim_until",
    "claimer",
    "graph",
    "document_id",
    "slug",
    "title",
    "version_number",
    "policy",
    "run_starter",
    "pending",
)

#: The first version of a card's run's document that froze the run's graph.
_VERSION = Subquery(
    Version.objects.filter(
        document_id=OuterRef("run__document_id"), graph_id=OuterRef("run__graph_id")
    )
    .order_by("number")
    .values("number")[:1]
)


def mine_count(user: ActingUser, person: Person | None = None) -> int:
    """How many cards ``user`` may decide now (the navigation bar's count): one ``COUNT``
    after reading who they are (unless ``person`` says it, read for the same request)."""
    return cards_of(person or person_of(user), "mine").count()


def mine_count_of(user_id: Any) -> int:
    """:func:`mine_count` of the user of id ``user_id`` (a page's stream knows only the id);
    ``0`` for no one, or a user no longer active."""
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    return mine_count(user) if user is not None else 0
