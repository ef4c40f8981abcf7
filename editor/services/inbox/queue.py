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
their runs and documents, the person's groups and roles, the versions of the page's graphs,
and (the first time a process meets a graph) its names. The count of **Mine** (the navigation
bar's) is one ``COUNT`` with the same condition.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.json import KeyTransform
from django.utils import timezone

from editor.models import InboxCard, InboxCardName, Run, RunEvent, Version
from editor.services.access import ActingUser, can_operate
from editor.services.errors import InvalidCursor, InvalidRequest, NotAllowed
from editor.services.filters import start_of
from editor.services.inbox.filters import NO_FILTER, InboxFilter
from editor.services.inbox.items import InboxItem
from editor.services.inbox.pending import Claim, items_of
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


def _cursor_key(card: InboxCard) -> list[Any]:
    return [card.due_at.isoformat() if card.due_at else "", card.opened_at.isoformat(), card.pk]


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
        cards.select_related("run", "run__document", "claimed_by")
        .only(
            "id",
            "run_id",
            "seq",
            "due_at",
            "opened_at",
            "claimed_at",
            "claim_until",
            "claimed_by__username",
            "run__id",
            "run__graph",
            "run__document",
            "run__document__slug",
            "run__document__title",
            "run__approval_policy",
            "run__created_by",
        )
        # Of the run's status, its open items only; and the version of its document that froze
        # its graph (the label of a run with no document is read after: items_of).
        .annotate(pending=KeyTransform("pending", "run__status"), version_number=_VERSION)
        .order_by(*_ORDER)[: limit + 1]
    )
    page = page_of(rows, limit, _cursor_key)
    now = timezone.now()
    labels = {
        str(card.run_id): (card.run.document.slug, card.run.document.title, card.version_number)
        for card in page.items
        if card.run.document is not None
    }
    items = items_of(_pairs(page.items), _claims(page.items, now), now, labels=labels)
    return Page(items, page.next)


#: The first version of a card's run's document that froze the run's graph.
_VERSION = Subquery(
    Version.objects.filter(
        document_id=OuterRef("run__document_id"), graph_id=OuterRef("run__graph_id")
    )
    .order_by("number")
    .values("number")[:1]
)


def _pairs(cards: list[InboxCard]) -> list[tuple[Run, dict[str, Any]]]:
    pairs = []
    for card in cards:
        pending = card.pending or []  # type: ignore[attr-defined]  # the annotation
        raw = next((item for item in pending if int(item.get("seq", -1)) == card.seq), None)
        if raw is not None:  # always: the card is written with the status it comes from
            pairs.append((card.run, raw))
    return pairs


def _claims(cards: list[InboxCard], now: datetime) -> dict[tuple[str, int], Claim]:
    return {
        (str(card.run_id), card.seq): (card.claimed_by.username, card.claimed_at, card.claim_until)
        for card in cards
        if card.claimed_by is not None and card.claim_until is not None and card.claim_until > now
    }


def mine_count(user: ActingUser, person: Person | None = None) -> int:
    """How many cards ``user`` may decide now (the navigation bar's count): one ``COUNT``
    after reading who they are (unless ``person`` says it, read for the same request)."""
    return cards_of(person or person_of(user), "mine").count()


def mine_count_of(user_id: Any) -> int:
    """:func:`mine_count` of the user of id ``user_id`` (a page's stream knows only the id);
    ``0`` for no one, or a user no longer active."""
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    return mine_count(user) if user is not None else 0
