"""Quotas and rates: what one user may keep, and how fast anyone may write.

Quotas bound what a user keeps: the bytes they stored (draft revisions, agent definitions,
frozen graphs), their documents, the aliases their renames reserved, their active API tokens.
Rates bound what happens in a window of time: runs a user starts in a clock hour, write requests
a user and an address send in a clock minute. Each has a setting (:data:`QUOTAS`); an operator
may give one user other limits (``UserUsage.limits``, on the admin's usage page).

Everything is in the database, so every web process on every machine shares it:

* the stored bytes are a running total on the user's ``UserUsage`` row, changed in the same
  transaction as each write that stores and each pruning that removes, and checked by the
  one conditional ``UPDATE`` that adds to it (no sum over a user's revisions on a save);
* the counts (documents, aliases, tokens) are indexed counts, taken with the user's usage row
  locked, so two requests of one user cannot both pass the last free place;
* each rate is a fixed-window counter (``RateCounter``), added to by one upsert that returns
  the new count (``INSERT … ON CONFLICT … DO UPDATE … RETURNING``, on SQLite and PostgreSQL).

A refusal raises :class:`~editor.services.errors.QuotaExceeded` or
:class:`~editor.services.errors.RateLimited`, naming the limit, its setting, what is used and
when it resets; raised inside the write's transaction, nothing of the write is kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Count, F, Sum, Value
from django.db.models.functions import Greatest, Length
from django.utils import timezone

from editor.models import (
    AgentDefinition,
    ApiToken,
    Document,
    DocumentAlias,
    DraftRevision,
    FrozenGraph,
    RateCounter,
    UserUsage,
)
from editor.services.access import ActingUser
from editor.services.errors import QuotaExceeded, RateLimited

#: The model of a user's usage row, for the admin's page of them (``editor.admin``).
UsageRow = UserUsage

__all__ = [
    "ADDRESS_LIMITS",
    "QUOTAS",
    "Usage",
    "UsageRow",
    "agent_size",
    "bytes_by_saver",
    "charge_bytes",
    "check_aliases",
    "check_documents",
    "check_tokens",
    "count_run_start",
    "count_write",
    "forget_old_counters",
    "limit_of",
    "recount_stored_bytes",
    "release_bytes",
    "settle_bytes",
    "usage_listing",
    "usage_of",
    "usage_rows",
]


@dataclass(frozen=True, slots=True)
class Quota:
    setting: str
    #: What a person is told the limit is about.
    words: str
    #: The window of a rate, in seconds; ``None`` for a quota of things kept.
    window: int | None = None


#: Every limit of one user, by its name (the keys of ``UserUsage.limits``).
QUOTAS: dict[str, Quota] = {
    "stored_bytes": Quota("GATEHOUSE_QUOTA_STORED_BYTES", "bytes stored"),
    "documents": Quota("GATEHOUSE_QUOTA_DOCUMENTS", "documents"),
    "aliases": Quota("GATEHOUSE_QUOTA_ALIASES", "old slugs kept by renames"),
    "tokens": Quota("GATEHOUSE_QUOTA_TOKENS", "active API tokens"),
    "runs_per_hour": Quota("GATEHOUSE_RATE_RUNS_PER_HOUR", "runs started", 3600),
    "writes_per_minute": Quota("GATEHOUSE_RATE_WRITES_PER_MINUTE", "write requests", 60),
}
#: The limits of an address: the installation's alone, never one user's (an address is no
#: user's: every user and anonymous client behind it shares its count).
ADDRESS_LIMITS: dict[str, Quota] = {
    "address_writes_per_minute": Quota(
        "GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE", "write requests from your address", 60
    ),
}

_KEPT = (
    "It does not reset with time: it frees up as you delete what you keep, "
    "or an operator may raise it"
)


def _user_id(user: ActingUser | None) -> int | None:
    pk = getattr(user, "pk", None)
    return pk if isinstance(pk, int) else None


def limit_of(name: str, overrides: Mapping[str, Any] | None = None) -> int:
    """The limit ``name`` for a user whose own limits are ``overrides``."""
    value = (overrides or {}).get(name)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    limit: int = getattr(settings, QUOTAS[name].setting)
    return limit


def _usage_row(user_id: int, *, lock: bool = False) -> UserUsage:
    """The user's usage row, created when missing; locked for the transaction with ``lock``."""
    UserUsage.objects.bulk_create([UserUsage(user_id=user_id)], ignore_conflicts=True)
    rows = UserUsage.objects.select_for_update() if lock else UserUsage.objects
    return rows.get(pk=user_id)


def _refuse_kept(name: str, used: int, limit: int, wanted: str) -> QuotaExceeded:
    quota = QUOTAS[name]
    return QuotaExceeded(
        f"quota reached: you have {used:,} {quota.words} of the {limit:,} allowed "
        f"({quota.setting}), so {wanted} was refused and nothing was saved. {_KEPT}",
        limit_name=name,
        setting=quota.setting,
        limit=limit,
        used=used,
    )


# --- stored bytes -----------------------------------------------------------------------------


def charge_bytes(user: ActingUser | None, size: int, what: str = "this save") -> None:
    """Add ``size`` bytes to the user's stored total, or refuse when it would pass the quota.

    Call it inside the transaction of the write: a refusal rolls the write back with it."""
    user_id = _user_id(user)
    if user_id is None or size <= 0:
        return
    overrides = UserUsage.objects.filter(pk=user_id).values_list("limits", flat=True).first()
    if overrides is None:
        _usage_row(user_id)
    limit = limit_of("stored_bytes", overrides)
    added = UserUsage.objects.filter(pk=user_id, stored_bytes__lte=limit - size).update(
        stored_bytes=F("stored_bytes") + size
    )
    if added != 1:
        used = UserUsage.objects.values_list("stored_bytes", flat=True).get(pk=user_id)
        raise _refuse_kept("stored_bytes", used, limit, f"{what} ({size:,} bytes more)")


def release_bytes(sizes: Mapping[int | None, int]) -> None:
    """Take removed bytes off each user's stored total (never below zero). Users in id order,
    as every transaction takes usage rows, and after the write's other rows: no deadlock."""
    for user_id in sorted(key for key in sizes if key is not None):
        if sizes[user_id]:
            UserUsage.objects.filter(pk=user_id).update(
                stored_bytes=Greatest(F("stored_bytes") - sizes[user_id], Value(0))
            )


def bytes_by_saver(revisions: Any) -> Counter[int | None]:
    """What a queryset of draft revisions holds, by who saved them (read before deleting)."""
    totals = revisions.order_by().values("created_by").annotate(total=Sum("size"))
    return Counter({row["created_by"]: row["total"] or 0 for row in totals})


def settle_bytes(user: ActingUser | None, size: int, released: Mapping[int | None, int]) -> None:
    """The end of a draft save: ``size`` bytes more for its saver, ``released`` less for the
    savers of what it removed (a coalesced revision, pruned history); the saver's net is
    checked against their quota. Usage rows are taken in user-id order."""
    saver = _user_id(user)
    net = size - released.get(saver, 0) if saver is not None else 0
    others = {key: value for key, value in released.items() if key != saver}
    if saver is not None and net < 0:
        others[saver] = -net
    for user_id in sorted(key for key in {*others, saver} if key is not None):
        if user_id == saver and net > 0:
            charge_bytes(user, net)
        elif user_id in others:
            release_bytes({user_id: others[user_id]})


def recount_stored_bytes(user_ids: Iterable[int] | None = None) -> int:
    """Set stored totals from what is stored (after a bulk removal, or to check the totals);
    how many users were counted. Slow over many rows: for operators and ``manage.py prune``."""
    users = get_user_model().objects.all()
    if user_ids is not None:
        users = users.filter(pk__in=list(user_ids))
    counted = 0
    for user_id in users.values_list("pk", flat=True).iterator():
        total = _stored_by(user_id)
        with transaction.atomic():
            _usage_row(user_id, lock=True)
            UserUsage.objects.filter(pk=user_id).update(stored_bytes=total)
        counted += 1
    return counted


def _stored_by(user_id: int) -> int:
    revisions = DraftRevision.objects.filter(created_by=user_id).aggregate(total=Sum("size"))
    agents = AgentDefinition.objects.filter(created_by=user_id).values_list("definition", "source")
    agent_bytes = sum(agent_size(definition, source) for definition, source in agents.iterator())
    graphs = FrozenGraph.objects.filter(created_by=user_id)
    graph_bytes = graphs.aggregate(total=Sum(Length("canonical")))["total"] or 0
    return int((revisions["total"] or 0) + agent_bytes + graph_bytes)


def _json_bytes(value: Any) -> bytes:
    import json

    return json.dumps(value, separators=(",", ":")).encode()


def agent_size(definition: Any, source: str) -> int:
    """The bytes an agent definition counts for: its stored JSON and its source text."""
    return len(_json_bytes(definition)) + len(source.encode("utf-8", "surrogatepass"))


# --- counts -----------------------------------------------------------------------------------


def _check_count(
    user: ActingUser | None, name: str, count: Any, wanted: str, *, added: bool = False
) -> None:
    """Refuse when the user already has their limit of ``name`` (with ``added``: the new one is
    written already, and the count may reach the limit, not pass it). The usage row stays
    locked until the caller's transaction ends, so concurrent requests of one user take turns."""
    user_id = _user_id(user)
    if user_id is None:
        return
    row = _usage_row(user_id, lock=True)
    limit = limit_of(name, row.limits)
    used = count(user_id)
    if used - added >= limit:
        raise _refuse_kept(name, used - added, limit, wanted)


def _documents(user_id: int) -> int:
    return Document.objects.filter(created_by=user_id, deleted_at__isnull=True).count()


def _aliases(user_id: int) -> int:
    return DocumentAlias.objects.filter(created_by=user_id).count()


def _tokens(user_id: int) -> int:
    return ApiToken.objects.filter(user=user_id, revoked_at__isnull=True).count()


def check_documents(user: ActingUser | None) -> None:
    """Inside the transaction that creates a document: refuse the user's one too many."""
    _check_count(user, "documents", _documents, "a new document")


def check_aliases(user: ActingUser | None) -> None:
    """At the end of a rename's transaction, its alias written: refuse one old slug too many
    (the usage row is taken last, after the document's)."""
    _check_count(user, "aliases", _aliases, "the rename (it keeps the old slug)", added=True)


def check_tokens(user: ActingUser | None) -> None:
    """Inside the transaction that creates a token: refuse the user's one too many."""
    _check_count(user, "tokens", _tokens, "a new token")


# --- rates ------------------------------------------------------------------------------------


def _hit(key: str, window: int, now: datetime) -> tuple[int, datetime]:
    """Add one to ``key``'s counter in the window holding ``now``: the count so far in that
    window, and when the window ends. One statement: concurrent hits never lose a count."""
    start = int(now.timestamp()) // window * window
    table = connection.ops.quote_name(RateCounter._meta.db_table)
    key_column, start_column, count_column = (
        connection.ops.quote_name(column) for column in ("key", "window_start", "count")
    )
    sql = (
        f"INSERT INTO {table} ({key_column}, {start_column}, {count_column}) VALUES (%s, %s, 1) "
        f"ON CONFLICT ({key_column}) DO UPDATE SET "
        # A hit stamped earlier than the window on record (another machine's clock a little
        # behind) counts in that window; a later one starts the next.
        f"{count_column} = CASE WHEN excluded.{start_column} > {table}.{start_column} "
        f"THEN 1 ELSE {table}.{count_column} + 1 END, "
        f"{start_column} = CASE WHEN excluded.{start_column} > {table}.{start_column} "
        f"THEN excluded.{start_column} ELSE {table}.{start_column} END "
        f"RETURNING {count_column}, {start_column}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [key, start])
        count, recorded_start = cursor.fetchone()
    return int(count), datetime.fromtimestamp(int(recorded_start) + window, UTC)


def _rate(name: str, key: str, limit: int, now: datetime, wanted: str) -> None:
    quota = QUOTAS[name] if name in QUOTAS else ADDRESS_LIMITS[name]
    assert quota.window is not None
    count, resets_at = _hit(key, quota.window, now)
    if count > limit:
        seconds = max(1, int((resets_at - now).total_seconds() + 0.999))
        period = "a minute" if quota.window == 60 else "an hour"
        raise RateLimited(
            f"rate limit reached: at most {limit:,} {quota.words} {period} ({quota.setting}), "
            f"so {wanted} was refused. The count resets at {resets_at:%H:%M:%S} UTC, in "
            f"{seconds} s",
            limit_name=name,
            setting=quota.setting,
            limit=limit,
            used=min(count, limit),
            resets_at=resets_at,
        )


def count_run_start(user: ActingUser | None) -> None:
    """Inside the transaction that creates a run: count it, or refuse one too many this hour
    (refused, the transaction rolls back and the count with it)."""
    user_id = _user_id(user)
    if user_id is None:
        return
    overrides = UserUsage.objects.filter(pk=user_id).values_list("limits", flat=True).first()
    limit = limit_of("runs_per_hour", overrides)
    _rate("runs_per_hour", f"runs:user:{user_id}", limit, timezone.now(), "starting this run")


def count_write(user: ActingUser | None, address: str | None) -> None:
    """Count one write request of ``user`` (or an anonymous one) from ``address``; refuse it
    past either rate. Counted in autocommit: a refused request counts too. The address's rate
    is the installation's whoever sends (no user's own limits change it)."""
    now = timezone.now()
    if address:
        limit = settings.GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE
        _rate(
            "address_writes_per_minute",
            f"writes:address:{address[:150]}",
            limit,
            now,
            "this request",
        )
    user_id = _user_id(user)
    if user_id is not None:
        overrides = UserUsage.objects.filter(pk=user_id).values_list("limits", flat=True).first()
        limit = limit_of("writes_per_minute", overrides)
        _rate("writes_per_minute", f"writes:user:{user_id}", limit, now, "this request")


def forget_old_counters(now: datetime | None = None) -> int:
    """Remove the counters of windows that ended (the longest is an hour); how many."""
    now = now or timezone.now()
    cutoff = int((now - timedelta(hours=1)).timestamp())
    deleted, _ = RateCounter.objects.filter(window_start__lt=cutoff).delete()
    return deleted


# --- for operators ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Usage:
    """One user's use of each limit, beside the limit."""

    user_id: int
    username: str
    stored_bytes: int
    documents: int
    aliases: int
    tokens: int
    runs_this_hour: int
    limits: dict[str, int]


def _runs_this_hour(user_id: int, now: datetime) -> int:
    start = int(now.timestamp()) // 3600 * 3600
    row = RateCounter.objects.filter(key=f"runs:user:{user_id}", window_start=start).first()
    return row.count if row else 0


def usage_rows(users: Any, now: datetime | None = None) -> list[Usage]:
    """The usage of each of ``users`` (a queryset or list of users): indexed counts, and the
    usage rows and this hour's run counters read by key."""
    now = now or timezone.now()
    start = int(now.timestamp()) // 3600 * 3600
    people = list(users)
    ids = [person.pk for person in people]
    kept = {row.pk: row for row in UserUsage.objects.filter(pk__in=ids)}
    runs = dict(
        RateCounter.objects.filter(
            key__in=[f"runs:user:{pk}" for pk in ids], window_start=start
        ).values_list("key", "count")
    )

    def counts(rows: Any, field: str) -> dict[int, int]:
        grouped = rows.filter(**{f"{field}__in": ids}).order_by().values(field)
        return {row[field]: row["n"] for row in grouped.annotate(n=Count("pk"))}

    documents = counts(Document.objects.filter(deleted_at__isnull=True), "created_by")
    aliases = counts(DocumentAlias.objects.all(), "created_by")
    tokens = counts(ApiToken.objects.filter(revoked_at__isnull=True), "user")
    rows = []
    for person in people:
        usage = kept.get(person.pk)
        overrides = usage.limits if usage is not None else {}
        rows.append(
            Usage(
                user_id=person.pk,
                username=person.get_username(),
                stored_bytes=usage.stored_bytes if usage is not None else 0,
                documents=documents.get(person.pk, 0),
                aliases=aliases.get(person.pk, 0),
                tokens=tokens.get(person.pk, 0),
                runs_this_hour=runs.get(f"runs:user:{person.pk}", 0),
                limits={name: limit_of(name, overrides) for name in QUOTAS},
            )
        )
    return rows


def usage_listing(page: int, per_page: int = 100) -> tuple[list[Usage], bool]:
    """A page (from 1) of every user's usage, by username; and whether a next page exists."""
    start = (max(1, page) - 1) * per_page
    users = list(get_user_model().objects.order_by("username")[start : start + per_page + 1])
    return usage_rows(users[:per_page]), len(users) > per_page


def usage_of(user: User) -> Usage:
    """One user's usage (the account page, tests)."""
    return usage_rows(get_user_model().objects.filter(pk=user.pk))[0]
